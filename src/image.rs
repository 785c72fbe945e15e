//! Image references as the container runtime reads them, so that the config's `entrypoints`
//! and `sidecars` entries match a container's `image` however either is spelled: `python`,
//! `python:3.12`, `docker.io/library/python` and `index.docker.io/library/python` name the
//! same repository.
//!
//! The rules are Docker's reference normalisation, which the kubelet's runtimes use too
//! (distribution/reference@v0.6.0, normalize.go: `splitDockerDomain`, `ParseNormalizedNamed`,
//! `ParseDockerRef`/`TagNameOnly`):
//! - the first path component is a registry when it is `localhost`, holds a `.` or a `:`, or
//!   has an upper-case letter; otherwise the reference is on Docker Hub, `docker.io`;
//! - `index.docker.io` (the legacy name of Docker Hub) is `docker.io`;
//! - a Docker Hub repository of one component is an official image, under `library/`;
//! - a reference with neither tag nor digest has the tag `latest`. (`ParseDockerRef` also
//!   drops the tag of a reference that has a digest too, since the digest alone is pulled;
//!   both are kept here, so that an entry with that tag still matches.)

/// Docker Hub's registry name in a normalised reference.
const DEFAULT_DOMAIN: &str = "docker.io";
/// Docker Hub's legacy name, the same registry.
const LEGACY_DEFAULT_DOMAIN: &str = "index.docker.io";
/// The namespace of Docker Hub's official images.
const OFFICIAL_PREFIX: &str = "library/";
/// Always a registry, though it has neither `.` nor `:`.
const LOCALHOST: &str = "localhost";
/// The tag of a reference that names none.
const DEFAULT_TAG: &str = "latest";

/// `reference` in Docker's normalised form: `python:3.12` -> `docker.io/library/python:3.12`.
/// With `default_tag`, a reference without tag or digest gets `:latest` (a container's
/// `image`); without, it is left tagless (a config entry, which may be a prefix). Text that
/// is not a valid reference is normalised by the same rules, never refused: the runtime
/// refuses it later, and matching only needs both sides spelled alike.
pub(crate) fn normalise(reference: &str, default_tag: bool) -> String {
    let (name, digest) = match reference.split_once('@') {
        Some((n, d)) => (n, Some(d)),
        None => (reference, None),
    };
    let (domain, remote) = match name.split_once('/') {
        None => (DEFAULT_DOMAIN, format!("{OFFICIAL_PREFIX}{name}")),
        Some((first, rest)) if first == LEGACY_DEFAULT_DOMAIN => (DEFAULT_DOMAIN, rest.to_string()),
        Some((first, rest))
            if first == LOCALHOST
                || first.contains(['.', ':'])
                || first.chars().any(|c| c.is_ascii_uppercase()) =>
        {
            (first, rest.to_string())
        }
        Some(_) => (DEFAULT_DOMAIN, name.to_string()),
    };
    // A prefix entry such as `docker.io/` names every Docker Hub repository, not `library/`.
    let remote = if domain == DEFAULT_DOMAIN && !remote.contains('/') && !remote.is_empty() {
        format!("{OFFICIAL_PREFIX}{remote}")
    } else {
        remote
    };
    let mut out = format!("{domain}/{remote}");
    let last = remote.rsplit('/').next().unwrap_or_default();
    match digest {
        Some(d) => {
            out.push('@');
            out.push_str(d);
        }
        None if default_tag && !last.contains(':') && !last.is_empty() => {
            out.push(':');
            out.push_str(DEFAULT_TAG);
        }
        None => {}
    }
    out
}

/// Whether a container's `image` is the config entry `entry`, or lies under it: the entry is
/// the image's start, ending at a component boundary (`/`, `:` or `@`) or with a `/`. Both
/// sides are normalised first. Returns the length of the normalised entry (the longest entry
/// wins) when it matches.
pub(crate) fn matches(image: &str, entry: &str) -> Option<usize> {
    let image = normalise(image, true);
    let entry = normalise(entry, false);
    let under = image.strip_prefix(entry.as_str()).is_some_and(|rest| {
        rest.is_empty() || rest.starts_with(['/', ':', '@']) || entry.ends_with('/')
    });
    under.then_some(entry.len())
}

#[cfg(test)]
mod tests {
    use super::{matches, normalise};

    /// The pairs of distribution/reference's own tests (normalize_test.go,
    /// `TestParseNormalizedNamed` and `TestParseDockerRef`) that apply to matching.
    #[test]
    fn normalises_as_docker_does() {
        for (input, want) in [
            ("ubuntu", "docker.io/library/ubuntu:latest"),
            ("ubuntu:20.04", "docker.io/library/ubuntu:20.04"),
            ("docker.io/ubuntu", "docker.io/library/ubuntu:latest"),
            ("index.docker.io/ubuntu", "docker.io/library/ubuntu:latest"),
            (
                "index.docker.io/library/ubuntu:1",
                "docker.io/library/ubuntu:1",
            ),
            ("dmcgowan/myapp", "docker.io/dmcgowan/myapp:latest"),
            ("dmcgowan/myapp/x:2", "docker.io/dmcgowan/myapp/x:2"),
            ("localhost/x", "localhost/x:latest"),
            ("localhost:5000/x:1", "localhost:5000/x:1"),
            ("example.com/x", "example.com/x:latest"),
            ("Foo/bar", "Foo/bar:latest"),
            ("gcr.io/a/b:1@sha256:ab", "gcr.io/a/b:1@sha256:ab"),
            ("busybox@sha256:ab", "docker.io/library/busybox@sha256:ab"),
            (
                "docker.io/library/python:3.12",
                "docker.io/library/python:3.12",
            ),
        ] {
            assert_eq!(normalise(input, true), want, "{input}");
        }
        assert_eq!(normalise("python", false), "docker.io/library/python");
        assert_eq!(normalise("docker.io/", false), "docker.io/");
        assert_eq!(normalise("index.docker.io/", false), "docker.io/");
        assert_eq!(normalise("acme/", false), "docker.io/acme/");
    }

    #[test]
    fn both_sides_are_normalised() {
        let hit = |image, entry| matches(image, entry).is_some();
        assert!(hit("python:3.12", "docker.io/library/python"));
        assert!(hit("docker.io/library/python:3.12", "python"));
        assert!(hit("index.docker.io/library/python", "python:latest"));
        assert!(hit("python", "python:latest"));
        assert!(hit("library/python:3", "docker.io/library/python"));
        assert!(hit("acme/tool:1", "docker.io/acme/"));
        assert!(hit("acme/tool:1", "docker.io/"));
        assert!(hit("ghcr.io/acme/migrate:1.4.2", "ghcr.io/acme/"));
        assert!(hit(
            "ghcr.io/acme/migrate@sha256:ab",
            "ghcr.io/acme/migrate"
        ));
        assert!(!hit("python:3.12", "python:3"));
        assert!(!hit("pythonista:1", "python"));
        assert!(!hit("ghcr.io/acme/migrate-v2:1", "ghcr.io/acme/migrate"));
        assert!(!hit("ghcr.io/library/python:3", "python"));
        assert!(!hit("registry.example/python:3", "python"));
    }
}
