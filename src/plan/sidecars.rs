//! Long-running sidecars that users put in `containers`: wrapping one would make the proxy
//! wait for a container that never ends.

use crate::yaml::tree::Node;

/// Known sidecar images besides the meshes' own proxies (`Mesh::proxy_images`), by
/// repository (the image reference without registry, tag or digest, matched on its last
/// path components).
const IMAGES: [&str; 2] = [
    "cloud-sql-proxy", // gcr.io/cloud-sql-connectors/cloud-sql-proxy (v2)
    "gce-proxy",       // gcr.io/cloudsql-docker/gce-proxy (v1)
];
/// Container names that mean a long-running sidecar whatever the image, besides the
/// meshes' proxy containers. `vault-agent` is the name Vault's injector gives its agent
/// sidecar (hashicorp/vault-k8s@v1.7.6 `agent-inject/agent/container_sidecar.go`; its init
/// container, which exits after authenticating, is `vault-agent-init`).
const NAMES: [&str; 2] = ["cloud-sql-proxy", "vault-agent"];

/// Vault's image, which is an agent sidecar when it runs `vault agent`.
const VAULT_IMAGE: &str = "hashicorp/vault";

/// The repository part of an image reference: `gcr.io/x/y:1.0@sha256:..` -> `gcr.io/x/y`.
fn repository(image: &str) -> &str {
    let no_digest = image.split('@').next().unwrap_or(image);
    match no_digest.rfind(':') {
        Some(i) if !no_digest[i..].contains('/') => &no_digest[..i],
        _ => no_digest,
    }
}

/// Whether `repo` ends with the path components of `suffix`.
fn ends_with_components(repo: &str, suffix: &str) -> bool {
    repo == suffix || repo.strip_suffix(suffix).is_some_and(|r| r.ends_with('/'))
}

/// The string items of a list node.
fn words(n: Option<&Node>) -> Vec<&str> {
    (n.and_then(Node::items).unwrap_or(&[]).iter())
        .filter_map(Node::as_str)
        .collect()
}

/// A container's `command` then `args`, as written (the string items).
pub(crate) fn argv(c: &Node) -> Vec<&str> {
    let mut all = words(c.get("command"));
    all.extend(words(c.get("args")));
    all
}

/// Whether a container of Vault's image runs the agent, and keeps running: `vault agent`
/// in its `command`/`args` (a word `agent` after `vault`, or in a shell script), or `agent`
/// as the first of `args` with the image's entrypoint, which turns a Vault subcommand into
/// `vault <subcommand>` (hashicorp/vault `.release/docker/docker-entrypoint.sh`: `elif vault
/// --help "$1" ... set -- vault "$@"`). An agent with `-exit-after-auth` exits once it has
/// authenticated (the injector's init container runs so), so it is no sidecar.
fn vault_agent(c: &Node) -> bool {
    let command = words(c.get("command"));
    let args = words(c.get("args"));
    let all = argv(c);
    let is_vault = |w: &str| w == "vault" || w.ends_with("/vault");
    let agent = (command.is_empty() && args.first() == Some(&"agent"))
        || all.windows(2).any(|w| is_vault(w[0]) && w[1] == "agent")
        || all.iter().any(|w| w.contains("vault agent"));
    let once = all.iter().any(|w| {
        let flag = w.trim_start_matches('-');
        w.starts_with('-') && (flag == "exit-after-auth" || flag == "exit-after-auth=true")
    });
    agent && !once
}

/// Why container `c` is a long-running sidecar of the user's own (not a mesh's proxy, which
/// the mesh's native annotation makes native), or None.
pub(crate) fn user_sidecar(c: &Node, configured: &[String]) -> Option<String> {
    let name = c.str("name").unwrap_or_default();
    let repo = c.str("image").map(repository);
    let mesh = crate::mesh::ALL.iter().any(|m| {
        m.proxy_container == name
            || repo.is_some_and(|r| m.proxy_images.iter().any(|i| ends_with_components(r, i)))
    });
    if mesh { None } else { sidecar(c, configured) }
}

/// Why container `c` is taken for a long-running sidecar, or None.
pub(crate) fn sidecar(c: &Node, configured: &[String]) -> Option<String> {
    let name = c.str("name").unwrap_or_default();
    let image = c.str("image");
    if let Some(e) = configured.iter().find(|e| e.as_str() == name) {
        return Some(format!(
            "its name {e:?} is listed under `sidecars` in the config"
        ));
    }
    if let Some(image) = image {
        if let Some(e) = configured
            .iter()
            .find(|e| crate::image::matches(image, e).is_some())
        {
            return Some(format!(
                "its image matches {e:?} under `sidecars` in the config"
            ));
        }
        let repo = repository(image);
        if ends_with_components(repo, VAULT_IMAGE) && vault_agent(c) {
            return Some(format!(
                "its image is {VAULT_IMAGE}, running the Vault agent, which runs until it is \
                 stopped"
            ));
        }
        let mesh_images = crate::mesh::ALL.iter().flat_map(|m| m.proxy_images);
        if let Some(known) =
            (IMAGES.iter().chain(mesh_images)).find(|k| ends_with_components(repo, k))
        {
            return Some(format!(
                "its image is {known}, a proxy that runs until it is stopped"
            ));
        }
    }
    let mesh_names = crate::mesh::ALL.iter().map(|m| &m.proxy_container);
    (NAMES.iter().chain(mesh_names))
        .find(|n| **n == name)
        .map(|n| format!("its name is {n}, a sidecar that runs until it is stopped"))
}

/// The mesh whose proxy image `image` is (`Mesh::proxy_images`), whatever its container is
/// called.
pub(crate) fn proxy_image_mesh(image: &str) -> Option<crate::mesh::MeshId> {
    let repo = repository(image);
    (crate::mesh::ALL.iter())
        .find(|m| m.proxy_images.iter().any(|k| ends_with_components(repo, k)))
        .map(|m| m.id)
}

#[cfg(test)]
mod tests {
    use super::{repository, sidecar};
    use crate::yaml::tree::{Node, parse_stream};

    fn container(name: &str, image: &str, argv: &str) -> Node {
        let src = format!("name: {name}\nimage: {image}\n{argv}\n");
        parse_stream(&src).unwrap().remove(0).root
    }

    fn is(name: &str, image: &str, cfg: &[String]) -> bool {
        sidecar(&container(name, image, ""), cfg).is_some()
    }

    #[test]
    fn repositories() {
        assert_eq!(
            repository("gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.11.0"),
            "gcr.io/cloud-sql-connectors/cloud-sql-proxy"
        );
        assert_eq!(
            repository("localhost:5000/x/cloud-sql-proxy"),
            "localhost:5000/x/cloud-sql-proxy"
        );
        assert_eq!(
            repository("cr.l5d.io/linkerd/proxy:stable-2.14@sha256:abc"),
            "cr.l5d.io/linkerd/proxy"
        );
    }

    #[test]
    fn known_images_and_names() {
        for (name, image) in [
            ("sql", "gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.11.0"),
            ("sql", "gcr.io/cloudsql-docker/gce-proxy:1.33.2"),
            ("p", "cr.l5d.io/linkerd/proxy:edge-24.1.1"),
            ("p", "docker.io/istio/proxyv2:1.22.3"),
            ("p", "istio/proxyv2"),
            ("p", "gcr.io/istio-release/proxyv2:1.24.0"),
            ("cloud-sql-proxy", "registry.example/mirror/sqlproxy:2"),
            ("linkerd-proxy", "registry.example/l5d:1"),
        ] {
            assert!(is(name, image, &[]), "{name} {image}");
        }
        for (name, image) in [
            ("task", "registry.example/proxy:1"),
            ("task", "registry.example/my-cloud-sql-proxy-tool:1"),
            ("task", "envoyproxy/envoy:v1.30"),
        ] {
            assert!(!is(name, image, &[]), "{name} {image}");
        }
    }

    #[test]
    fn proxy_images_name_their_mesh() {
        use super::proxy_image_mesh;
        use crate::mesh::MeshId;
        let istio = proxy_image_mesh("docker.io/istio/proxyv2:1.22.3@sha256:ab");
        assert_eq!(istio, Some(MeshId::Istio));
        let linkerd = proxy_image_mesh("cr.l5d.io/linkerd/proxy:edge-24.1.1");
        assert_eq!(linkerd, Some(MeshId::Linkerd));
        assert_eq!(
            proxy_image_mesh("gcr.io/cloud-sql-connectors/cloud-sql-proxy:2"),
            None
        );
    }

    #[test]
    fn configured_entries() {
        let cfg = vec![
            "registry.example/metrics-agent".to_string(),
            "vault-agent".to_string(),
        ];
        assert!(is("m", "registry.example/metrics-agent:4.1", &cfg));
        assert!(is("vault-agent", "hashicorp/vault:1.17", &cfg));
        assert!(!is("m", "registry.example/metrics-agent-v2:1", &cfg));
        assert!(!is("vault", "hashicorp/vault:1.17", &cfg));
        // Entries and images are compared as Docker normalises them.
        let cfg = vec![
            "docker.io/library/redis".to_string(),
            "acme/agent".to_string(),
        ];
        assert!(is("r", "redis:7", &cfg));
        assert!(is("a", "index.docker.io/acme/agent", &cfg));
        assert!(!is("r", "registry.example/redis:7", &cfg));
    }

    #[test]
    fn vault_agents() {
        for (name, argv, want) in [
            ("v", "args: [agent, -config=/etc/vault/agent.hcl]", true),
            ("v", "command: [vault, agent, -config=/c.hcl]", true),
            ("v", "command: [/bin/vault, agent]", true),
            (
                "v",
                "command: [sh, -ec]\nargs: [\"echo x && vault agent -config=/c\"]",
                true,
            ),
            ("v", "args: [agent, -exit-after-auth, -config=/c]", false),
            (
                "v",
                "command: [vault, agent, --exit-after-auth=true]",
                false,
            ),
            ("v", "args: [server, -dev]", false),
            ("v", "command: [agent]", false),
            ("vault-agent", "args: [agent, -exit-after-auth]", true),
        ] {
            let c = container(name, "docker.io/hashicorp/vault:1.17", argv);
            assert_eq!(sidecar(&c, &[]).is_some(), want, "{argv}");
        }
        let c = container("v", "registry.example/vault:1", "args: [agent]");
        assert!(sidecar(&c, &[]).is_none());
    }
}
