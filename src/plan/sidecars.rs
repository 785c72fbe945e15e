//! Long-running sidecars that users put in `containers`: wrapping one would make the proxy
//! wait for a container that never ends.

/// Known sidecar images besides the meshes' own proxies (`Mesh::proxy_images`), by
/// repository (the image reference without registry, tag or digest, matched on its last
/// path components).
const IMAGES: [&str; 2] = [
    "cloud-sql-proxy", // gcr.io/cloud-sql-connectors/cloud-sql-proxy (v2)
    "gce-proxy",       // gcr.io/cloudsql-docker/gce-proxy (v1)
];
/// Container names that mean a proxy whatever the image, besides the meshes' proxy
/// containers.
const NAMES: [&str; 1] = ["cloud-sql-proxy"];

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

/// Why a container is taken for a long-running sidecar, or None.
pub(crate) fn sidecar(name: &str, image: Option<&str>, configured: &[String]) -> Option<String> {
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
        .map(|n| format!("its name is {n}, a proxy that runs until it is stopped"))
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
            assert!(sidecar(name, Some(image), &[]).is_some(), "{name} {image}");
        }
        for (name, image) in [
            ("task", "registry.example/proxy:1"),
            ("task", "registry.example/my-cloud-sql-proxy-tool:1"),
            ("task", "envoyproxy/envoy:v1.30"),
        ] {
            assert!(sidecar(name, Some(image), &[]).is_none(), "{name} {image}");
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
        assert!(sidecar("m", Some("registry.example/metrics-agent:4.1"), &cfg).is_some());
        assert!(sidecar("vault-agent", Some("hashicorp/vault:1.17"), &cfg).is_some());
        assert!(sidecar("m", Some("registry.example/metrics-agent-v2:1"), &cfg).is_none());
        assert!(sidecar("vault", Some("hashicorp/vault:1.17"), &cfg).is_none());
        // Entries and images are compared as Docker normalises them.
        let cfg = vec![
            "docker.io/library/redis".to_string(),
            "acme/agent".to_string(),
        ];
        assert!(sidecar("r", Some("redis:7"), &cfg).is_some());
        assert!(sidecar("a", Some("index.docker.io/acme/agent"), &cfg).is_some());
        assert!(sidecar("r", Some("registry.example/redis:7"), &cfg).is_none());
    }
}
