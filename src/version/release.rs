//! A mesh release as its tags name it: a stable `MAJOR.MINOR` (Istio's `1.29.1`, Linkerd's
//! `2.18`, `stable-2.14.10`) or a Linkerd edge release (`edge-25.10.2`). An edge tag is a date
//! and a counter, not a minor version: which features it has is decided from the edge itself
//! by the mesh's facts (`mesh::linkerd`), never from a stable number guessed for it.

use super::Version;
use std::fmt;

/// A Linkerd edge release, `edge-YY.M.N`: the N-th edge of month M of 20YY. Ordered by
/// date, then counter, as the project numbers them (linkerd/linkerd2 `bin/compute-edge-version`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Edge {
    pub year: u32,
    pub month: u32,
    pub n: u32,
}

impl Edge {
    pub const fn new(year: u32, month: u32, n: u32) -> Self {
        Edge { year, month, n }
    }

    /// `edge-25.10.2`, or the tag with a `-` suffix (`bin/helm-build` accepts
    /// `edge-([0-9]+\.[0-9]+\.[0-9]+(-.*)?)`).
    fn parse(s: &str) -> Option<Edge> {
        let body = s.strip_prefix("edge-")?;
        let core = body.split_once('-').map_or(body, |(c, _)| c);
        let [y, m, n] = three(core)?;
        (y < 100 && (1..=12).contains(&m)).then_some(Edge::new(y, m, n))
    }

    /// The version of the edge chart `linkerd-control-plane` published with `edge-YY.M.N`:
    /// `20YY.M.N` (`bin/compute-edge-version`, `new_version="$yyyy.$new_mm.$new_xx"`).
    pub(crate) fn from_chart_version(s: &str) -> Option<Edge> {
        let [y, m, n] = three(s)?;
        ((2000..2100).contains(&y) && (1..=12).contains(&m)).then(|| Edge::new(y - 2000, m, n))
    }
}

/// `A.B.C`, all decimal numbers.
fn three(s: &str) -> Option<[u32; 3]> {
    let mut it = s.split('.').map(number);
    let out = [it.next()??, it.next()??, it.next()??];
    it.next().is_none().then_some(out)
}

fn number(p: &str) -> Option<u32> {
    (!p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        .then(|| p.parse().ok())
        .flatten()
}

impl fmt::Display for Edge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "edge-{}.{}.{}", self.year, self.month, self.n)
    }
}

/// A release of a mesh.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Release {
    /// A stable release, by major and minor.
    Stable(Version),
    /// A Linkerd edge release.
    Edge(Edge),
}

impl Release {
    /// A version given by a flag or the config: `MAJOR.MINOR` (as [`Version::parse`] takes
    /// it) or, where `edge` is allowed, a Linkerd edge tag `edge-YY.M.N`.
    pub fn parse(s: &str, edge: bool) -> Result<Release, String> {
        if edge && let Some(e) = Edge::parse(s) {
            return Ok(Release::Edge(e));
        }
        match Version::parse(s) {
            Ok(v) => Ok(Release::Stable(v)),
            Err(m) if edge => Err(format!(
                "{m}, or a Linkerd edge release such as \"edge-25.10.2\""
            )),
            Err(m) => Err(m),
        }
    }

    /// A version or image tag as a manifest writes it: `1.29.1`, `v1.29.1`, `1.12-distroless`,
    /// `1.11.2-asm.17-distroless` (istio/istio `pkg/kube/inject/inject.go` `imageURL`),
    /// `edge-25.10.2`, Linkerd's `stable-2.14.10` and `version-2.18`. Anything else (an empty
    /// value, `latest`, `master`, `${VAR}`, `{{ .Values.tag }}`, a digest) is not a version:
    /// `None`, never a guess.
    pub(crate) fn read(s: &str) -> Option<Release> {
        let s = s.trim();
        if let Some(e) = Edge::parse(s) {
            return Some(Release::Edge(e));
        }
        let s = (s.strip_prefix("stable-"))
            .or_else(|| s.strip_prefix("version-"))
            .unwrap_or(s);
        Version::read(s).map(Release::Stable)
    }

    /// The stable version, for a stable release.
    pub fn stable(self) -> Option<Version> {
        match self {
            Release::Stable(v) => Some(v),
            Release::Edge(_) => None,
        }
    }
}

impl Version {
    /// A version as manifests and image tags write it, leniently: an optional `v`, then
    /// `MAJOR.MINOR`, then optionally `.PATCH`, then optionally a suffix after `-`, `+` or
    /// `_` (`v1.29.3-gke.1093000`, `1.12-distroless`, `v1.37.0-rc.1`). Only major and minor
    /// are kept. `None` for anything else.
    pub(crate) fn read(s: &str) -> Option<Version> {
        let body = s.strip_prefix('v').unwrap_or(s);
        let core = body.find(['-', '+', '_']).map_or(body, |i| &body[..i]);
        if core.len() < body.len() && core.len() + 1 == body.len() {
            return None;
        }
        let mut parts = core.split('.');
        let major = number(parts.next()?)?;
        let minor = number(parts.next()?)?;
        if let Some(patch) = parts.next() {
            number(patch)?;
        }
        parts.next().is_none().then_some(Version::new(major, minor))
    }
}

impl fmt::Display for Release {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Release::Stable(v) => v.fmt(f),
            Release::Edge(e) => e.fmt(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_as_manifests_write_them() {
        let stable = |a, b| Some(Release::Stable(Version::new(a, b)));
        for (s, want) in [
            ("1.29.1", stable(1, 29)),
            ("v1.36.1", stable(1, 36)),
            ("1.12-distroless", stable(1, 12)),
            ("1.11.2-asm.17-distroless", stable(1, 11)),
            ("v1.37.0-rc.1", stable(1, 37)),
            ("v1.30.2+k3s1", stable(1, 30)),
            ("stable-2.14.10", stable(2, 14)),
            ("version-2.18", stable(2, 18)),
            ("edge-25.10.2", Some(Release::Edge(Edge::new(25, 10, 2)))),
            ("edge-26.5.2-rc1", Some(Release::Edge(Edge::new(26, 5, 2)))),
        ] {
            assert_eq!(Release::read(s), want, "{s}");
        }
        for s in [
            "",
            "latest",
            "master",
            "${KUBERNETES_VERSION}",
            "{{ .Values.tag }}",
            "linkerdVersionValue",
            "1",
            "1.",
            "1.29-",
            "edge-25.13.1",
            "sha256:abc",
            "1.x",
        ] {
            assert_eq!(Release::read(s), None, "{s:?}");
        }
    }

    #[test]
    fn flags_take_an_edge_only_where_allowed() {
        assert_eq!(
            Release::parse("edge-25.10.2", true),
            Ok(Release::Edge(Edge::new(25, 10, 2)))
        );
        assert!(Release::parse("edge-25.10.2", false).is_err());
        assert!(Release::parse("1.29", false).is_ok());
        let e = Release::parse("edge", true).expect_err("not a version");
        assert!(e.contains("edge-25.10.2"), "{e}");
    }

    #[test]
    fn edge_charts_are_calendar_versions() {
        assert_eq!(
            Edge::from_chart_version("2026.5.2"),
            Some(Edge::new(26, 5, 2))
        );
        assert_eq!(Edge::from_chart_version("1.16.11"), None);
        assert!(Edge::new(25, 10, 2) < Edge::new(25, 10, 7));
        assert!(Edge::new(25, 12, 1) < Edge::new(26, 1, 1));
        assert_eq!(Edge::new(26, 5, 2).to_string(), "edge-26.5.2");
    }
}
