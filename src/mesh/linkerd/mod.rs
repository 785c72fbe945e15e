//! Linkerd facts the output relies on, in one place (see FACTS.md, "Linkerd").
//!
//! Each fact names where it was read in linkerd/linkerd2 (tag `version-2.X`) or
//! linkerd/linkerd2-proxy. [`MESH`] is the summary the stages read through the mesh seam.

mod annotation;
mod injected;
pub(crate) mod plan;
mod pod;
mod values;

use super::{MarkerKey, Mesh, MeshId, Place};
use crate::version::Version;

/// Linkerd as a [`Mesh`].
pub(crate) const MESH: Mesh = Mesh {
    id: MeshId::Linkerd,
    name: "Linkerd",
    proxy_container: PROXY_CONTAINER,
    default_quit_url: DEFAULT_QUIT_URL,
    ready_url: READY_URL,
    pod_config_annotation: SHUTDOWN_ANNOTATION,
    native_sidecar_annotation: NATIVE_SIDECAR_ANNOTATION,
    native_sidecar_annotations: &[
        NATIVE_SIDECAR_ANNOTATION,
        NATIVE_SIDECAR_ANNOTATION_BETA,
        NATIVE_SIDECAR_ANNOTATION_ALPHA,
    ],
    native: super::Native {
        since: NATIVE_SINCE,
        kubernetes_since: NATIVE_KUBERNETES_SINCE,
        too_old: "has no native sidecars",
        key_for: native_annotation,
        on: NATIVE_ON,
        is_on: |v, _| is_go_true(v),
        is_off: |v| !is_go_true(v),
        unknown_version: " (with the alpha annotation, which every Linkerd from 2.15 reads)",
    },
    version_flag: "--linkerd-version",
    version_key: "linkerdVersion",
    version_of: "the injecting Linkerd",
    quit_port_annotation: Some(ADMIN_PORT_ANNOTATION),
    // The admin port (4191, chart value `proxy.ports.admin`) serves `POST /shutdown`.
    stop_endpoints: &[super::StopEndpoint {
        port: 4191,
        path: "/shutdown",
        distinctive: false,
        describe: "a POST to Linkerd's /shutdown",
    }],
    proxy_processes: &[],
    // cr.l5d.io/linkerd/proxy.
    proxy_images: &["linkerd/proxy"],
    pod_markers: &[MarkerKey {
        key: INJECT_ANNOTATION,
        place: Place::Annotation,
        on: &[INJECT_ENABLED, INJECT_INGRESS],
        off: &[INJECT_DISABLED],
        ignore_case: false,
    }],
    namespace_markers: &[MarkerKey {
        key: INJECT_ANNOTATION,
        place: Place::Annotation,
        on: &[INJECT_ENABLED, INJECT_INGRESS],
        off: &[INJECT_DISABLED],
        ignore_case: false,
    }],
    ambient: None,
    injected_note: "so its settings come from injection time and the pod annotation takes \
                    effect only when it is injected again: \
                    LINKERD2_PROXY_SHUTDOWN_ENDPOINT_ENABLED=true goes on its env instead",
    config_kinds: &[],
    is_config_map_name: |_| false,
    opt_out: "the annotation linkerd.io/inject: disabled",
    // linkerd-await, which the proxy image carries with /bin/sleep (linkerd2@b24cd4059841
    // `Dockerfile.proxy`), runs `sleep 0` and then POSTs /shutdown to the proxy's admin port
    // (linkerd/linkerd-await `src/main.rs`: `--shutdown` needs a CMD); Argo Workflows
    // documents the same for linkerd-proxy (argoproj/argo-workflows@f016ad89eb26
    // `docs/sidecar-injection.md`). The endpoint is off unless the pod enables it (FACTS.md).
    argo_kill: super::KillCommand {
        argv: r#"["/usr/lib/linkerd/linkerd-await", "--shutdown", "--", "sleep", "0"]"#,
        needs: &[(SHUTDOWN_ANNOTATION, SHUTDOWN_ENABLED)],
    },
    namespace_annotations,
    port_off: None,
};

/// The injected proxy container (`pkg/k8s/labels.go` `ProxyContainerName`).
pub(crate) const PROXY_CONTAINER: &str = "linkerd-proxy";

/// The proxy admin server's shutdown endpoint on the admin port (4191, chart value
/// `proxy.ports.admin`). linkerd2-proxy `linkerd/app/admin/src/server.rs`: a method other
/// than POST gets 405, a caller off loopback 403, and with the endpoint disabled the answer
/// is 404 "shutdown endpoint is not enabled".
pub(crate) const DEFAULT_QUIT_URL: &str = "http://localhost:4191/shutdown";
/// The admin server's readiness endpoint, which `linkerd-await` polls (GET, 200 when ready).
pub(crate) const READY_URL: &str = "http://localhost:4191/ready";

/// Pod or Namespace annotation that turns injection on (`enabled`, `ingress`) or off
/// (`disabled`); values are compared exactly (`pkg/inject/report.go`,
/// `ValidInjectAnnotationValues`, `disabledByAnnotation`: the pod's value wins over the
/// namespace's). Linkerd reads annotations only, never labels.
pub(crate) const INJECT_ANNOTATION: &str = "linkerd.io/inject";
pub(crate) const INJECT_ENABLED: &str = "enabled";
pub(crate) const INJECT_INGRESS: &str = "ingress";
pub(crate) const INJECT_DISABLED: &str = "disabled";

/// Per-pod switch of the proxy's `/shutdown` endpoint (`pkg/k8s/labels.go`
/// `ProxyAdminShutdownAnnotation`, added in 2.16). Only `enabled` and `disabled` are read;
/// any other value is ignored with a log warning (`pkg/inject/inject.go`), leaving the chart
/// default. It sets the proxy env `LINKERD2_PROXY_SHUTDOWN_ENDPOINT_ENABLED`
/// (`charts/partials/templates/_proxy.tpl`; linkerd2-proxy `linkerd/app/src/env.rs`).
pub(crate) const SHUTDOWN_ANNOTATION: &str = "config.linkerd.io/proxy-admin-shutdown";
pub(crate) const SHUTDOWN_ENABLED: &str = "enabled";
pub(crate) const SHUTDOWN_DISABLED: &str = "disabled";

/// Per-pod admin port (`pkg/k8s/labels.go` `ProxyAdminPortAnnotation`): it moves both
/// `/shutdown` and `/ready`.
pub(crate) const ADMIN_PORT_ANNOTATION: &str = "config.linkerd.io/admin-port";

/// Native-sidecar annotations, each parsed with Go's `strconv.ParseBool`; the GA one wins
/// over beta, beta over alpha (`pkg/inject/inject.go`). Alpha since 2.15, beta since 2.19,
/// GA since 2.20 (`pkg/k8s/labels.go` at `version-2.15`, `version-2.19`, `version-2.20`).
pub(crate) const NATIVE_SIDECAR_ANNOTATION_ALPHA: &str =
    "config.alpha.linkerd.io/proxy-enable-native-sidecar";
pub(crate) const NATIVE_SIDECAR_ANNOTATION_BETA: &str =
    "config.beta.linkerd.io/proxy-enable-native-sidecar";
pub(crate) const NATIVE_SIDECAR_ANNOTATION: &str = "config.linkerd.io/proxy-enable-native-sidecar";

/// The first Linkerd with native sidecars (the alpha annotation, `version-2.15`).
pub(crate) const NATIVE_SINCE: Version = Version::new(2, 15);
/// Native sidecars need Kubernetes 1.29 (the chart's comment on `proxy.nativeSidecar`).
pub(crate) const NATIVE_KUBERNETES_SINCE: Version = Version::new(1, 29);
/// The value meshjob writes into a native-sidecar annotation (read by Go's ParseBool).
pub(crate) const NATIVE_ON: &str = "true";

/// The native-sidecar annotation that Linkerd `2.minor` reads, the newest it has: GA from
/// 2.20, beta in 2.19, alpha in 2.15 to 2.18; none before 2.15. Every later version still
/// reads the older spellings (`pkg/inject/inject.go` at `version-2.20`), so the alpha one
/// is what every version reads.
pub(crate) fn native_sidecar_annotation_for(minor: u32) -> Option<&'static str> {
    match minor {
        20.. => Some(NATIVE_SIDECAR_ANNOTATION),
        19 => Some(NATIVE_SIDECAR_ANNOTATION_BETA),
        15..=18 => Some(NATIVE_SIDECAR_ANNOTATION_ALPHA),
        _ => None,
    }
}

/// The native-sidecar annotation for a Linkerd version: that version's, or, unknown, the
/// alpha one every version reads; `None` when the version has none.
pub(crate) fn native_annotation(v: Option<Version>) -> Option<&'static str> {
    match v {
        Some(v) if v.major == 2 => native_sidecar_annotation_for(v.minor),
        Some(_) => None,
        None => Some(NATIVE_SIDECAR_ANNOTATION_ALPHA),
    }
}

/// The Namespace annotations meshjob reads that the proxy injector copies onto a pod lacking
/// them: `inject.AppendNamespaceAnnotations` copies every key of `ProxyAnnotations` and
/// `ProxyAlphaConfigAnnotations` (`pkg/inject/inject.go`; the webhook calls it in
/// `controller/proxy-injector/webhook.go`; the pod's own value wins, `GetConfigOverride`).
/// Those lists hold the admin port in every version, the shutdown switch from 2.16, the
/// alpha native key from 2.15, the beta one in 2.19 only and the GA one from 2.20
/// (`version-2.15` f0d861e, `version-2.16` 332c4ef, `version-2.19` 0ebd74b, `version-2.20`
/// eadc1ac). Unknown version: all of them, as the pod's own native keys are all read.
pub(crate) fn namespace_annotations(v: Option<Version>) -> &'static [&'static str] {
    const ALL: &[&str] = &[
        ADMIN_PORT_ANNOTATION,
        SHUTDOWN_ANNOTATION,
        NATIVE_SIDECAR_ANNOTATION,
        NATIVE_SIDECAR_ANNOTATION_BETA,
        NATIVE_SIDECAR_ANNOTATION_ALPHA,
    ];
    match v.filter(|v| v.major == 2).map(|v| v.minor) {
        None => ALL,
        Some(20..) => &[
            ADMIN_PORT_ANNOTATION,
            SHUTDOWN_ANNOTATION,
            NATIVE_SIDECAR_ANNOTATION,
            NATIVE_SIDECAR_ANNOTATION_ALPHA,
        ],
        Some(19) => &[
            ADMIN_PORT_ANNOTATION,
            SHUTDOWN_ANNOTATION,
            NATIVE_SIDECAR_ANNOTATION_BETA,
            NATIVE_SIDECAR_ANNOTATION_ALPHA,
        ],
        Some(16..=18) => &[
            ADMIN_PORT_ANNOTATION,
            SHUTDOWN_ANNOTATION,
            NATIVE_SIDECAR_ANNOTATION_ALPHA,
        ],
        Some(15) => &[ADMIN_PORT_ANNOTATION, NATIVE_SIDECAR_ANNOTATION_ALPHA],
        Some(_) => &[ADMIN_PORT_ANNOTATION],
    }
}

/// Whether Go's `strconv.ParseBool` reads `v` as true.
pub(crate) fn is_go_true(v: &str) -> bool {
    matches!(v, "1" | "t" | "T" | "true" | "TRUE" | "True")
}

/// The control-plane chart's key holding the proxy's settings
/// (`charts/linkerd-control-plane/values.yaml`).
pub(crate) const VALUES_PROXY: &str = "proxy";
/// `proxy.enableShutdownEndpoint` (2.16+, default false): turns `/shutdown` on for every
/// injected pod.
pub(crate) const VALUES_SHUTDOWN: &str = "enableShutdownEndpoint";
/// `proxy.nativeSidecar` (2.15+; default false until 2.19, true from 2.20).
pub(crate) const VALUES_NATIVE_SIDECAR: &str = "nativeSidecar";
/// The placeholder the chart's own values.yaml carries in `linkerdVersion` in the source
/// tree (`bin/helm-build` swaps it for the release while packaging).
pub(crate) const VALUES_VERSION_PLACEHOLDER: &str = "linkerdVersionValue";

/// Top-level keys only the linkerd-control-plane chart has: one of them, or a `proxy`
/// mapping with one of [`DISTINCT_PROXY_KEYS`], makes an untyped document Linkerd values.
pub(crate) const DISTINCT_TOP_KEYS: &[&str] = &[
    "identityTrustAnchorsPEM",
    "identityTrustDomain",
    "linkerdVersion",
    "proxyInit",
    "proxyInjector",
    "controllerImage",
    "policyController",
    "destinationController",
    "profileValidator",
    "policyValidator",
    "spValidator",
    "networkValidator",
];

/// Keys every copy of the chart's own values.yaml has (2.15 to 2.20, checked at each tag,
/// source tree and packaged). A document with all of them is the chart's defaults, which
/// meshjob leaves alone.
pub(crate) const CHART_DEFAULTS_KEYS: &[&str] = &[
    "linkerdVersion",
    "controllerImage",
    "proxyInit",
    "proxyInjector",
    "policyController",
    "debugContainer",
    "identity",
    "networkValidator",
    "profileValidator",
    "podMonitor",
];

/// `proxy.*` keys that other charts do not use.
pub(crate) const DISTINCT_PROXY_KEYS: &[&str] = &[
    "enableShutdownEndpoint",
    "nativeSidecar",
    "await",
    "waitBeforeExitSeconds",
    "requireIdentityOnInboundPorts",
    "opaquePorts",
    "defaultInboundPolicy",
    "outboundConnectTimeout",
    "inboundConnectTimeout",
    "enableExternalProfiles",
    "outboundTransportMode",
];

/// Every `proxy.*` key the chart reads, 2.15 to 2.20 (`git grep Values.proxy.` in
/// `charts/`, and the `Proxy` struct of `pkg/charts/linkerd2/values.go`). Any other key is
/// ignored by the chart; one close to a known key is reported as misspelled.
pub(crate) const PROXY_KEYS: &[&str] = &[
    "accessLog",
    "additionalEnv",
    "await",
    "capabilities",
    "component",
    "control",
    "cores",
    "defaultInboundPolicy",
    "disableInboundProtocolDetectTimeout",
    "disableOutboundProtocolDetectTimeout",
    "enableExternalProfiles",
    "enableShutdownEndpoint",
    "experimentalEnv",
    "gid",
    "image",
    "inbound",
    "inboundConnectTimeout",
    "inboundDiscoveryCacheUnusedTimeout",
    "isGateway",
    "isIngress",
    "livenessProbe",
    "loadTrustBundleFromConfigMap",
    "logFormat",
    "logHTTPHeaders",
    "logLevel",
    "metrics",
    "nativeSidecar",
    "opaquePorts",
    "outbound",
    "outboundConnectTimeout",
    "outboundDiscoveryCacheUnusedTimeout",
    "outboundTransportMode",
    "podInboundPorts",
    "ports",
    "readinessProbe",
    "requireIdentityOnInboundPorts",
    "requireTLSOnInboundPorts",
    "resources",
    "runtime",
    "saMountPath",
    "securityContext",
    "shutdownGracePeriod",
    "startupProbe",
    "tracing",
    "uid",
    "waitBeforeExitSeconds",
];

/// `proxy.*` keys that hold booleans and are read with `{{ if }}`, where a quoted
/// `"false"` is a non-empty string and so counts as true.
pub(crate) const PROXY_BOOL_KEYS: &[&str] = &[VALUES_SHUTDOWN, VALUES_NATIVE_SIDECAR, "await"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_bools() {
        for t in ["1", "t", "T", "true", "TRUE", "True"] {
            assert!(is_go_true(t), "{t}");
        }
        for f in ["", "yes", "on", "tRUE", "0", "false", "enabled"] {
            assert!(!is_go_true(f), "{f}");
        }
    }

    /// The keys the injector of each version copies from a Namespace (its
    /// `ProxyAnnotations` and `ProxyAlphaConfigAnnotations` lists).
    #[test]
    fn namespace_annotations_by_version() {
        let v = |minor| Some(Version::new(2, minor));
        let copies = |minor, key| namespace_annotations(v(minor)).contains(&key);
        assert!(copies(14, ADMIN_PORT_ANNOTATION));
        assert!(!copies(15, SHUTDOWN_ANNOTATION));
        assert!(copies(16, SHUTDOWN_ANNOTATION));
        assert!(copies(15, NATIVE_SIDECAR_ANNOTATION_ALPHA));
        assert!(copies(20, NATIVE_SIDECAR_ANNOTATION_ALPHA));
        assert!(!copies(18, NATIVE_SIDECAR_ANNOTATION_BETA));
        assert!(copies(19, NATIVE_SIDECAR_ANNOTATION_BETA));
        assert!(!copies(20, NATIVE_SIDECAR_ANNOTATION_BETA));
        assert!(!copies(19, NATIVE_SIDECAR_ANNOTATION));
        assert!(copies(20, NATIVE_SIDECAR_ANNOTATION));
        assert_eq!(namespace_annotations(None).len(), 5);
    }

    #[test]
    fn native_annotation_by_version() {
        assert_eq!(native_sidecar_annotation_for(14), None);
        assert_eq!(
            native_sidecar_annotation_for(15),
            Some(NATIVE_SIDECAR_ANNOTATION_ALPHA)
        );
        assert_eq!(
            native_sidecar_annotation_for(18),
            Some(NATIVE_SIDECAR_ANNOTATION_ALPHA)
        );
        assert_eq!(
            native_sidecar_annotation_for(19),
            Some(NATIVE_SIDECAR_ANNOTATION_BETA)
        );
        assert_eq!(
            native_sidecar_annotation_for(20),
            Some(NATIVE_SIDECAR_ANNOTATION)
        );
        assert_eq!(
            native_sidecar_annotation_for(23),
            Some(NATIVE_SIDECAR_ANNOTATION)
        );
    }

    #[test]
    fn key_lists_are_sorted_and_consistent() {
        assert!(PROXY_KEYS.windows(2).all(|w| w[0] < w[1]));
        for k in DISTINCT_PROXY_KEYS.iter().chain(PROXY_BOOL_KEYS) {
            assert!(PROXY_KEYS.contains(k), "{k}");
        }
    }
}
