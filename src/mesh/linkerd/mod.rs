//! Linkerd facts the output relies on, in one place (each with where it was read upstream).
//!
//! Each fact names where it was read in linkerd/linkerd2 (tag `version-2.X`) or
//! linkerd/linkerd2-proxy. [`MESH`] is the summary the stages read through the mesh seam.

pub(crate) mod documents;
pub(crate) mod versions;

use super::facts::{KillCommand, MarkerKey, MarkerPlace, Mesh, Native, StopEndpoint};
use super::found::NativeMode;
use crate::config::MeshId;
use crate::version::{Edge, Kubelets, Release, Version};

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
    native: Native {
        since: NATIVE_SINCE,
        kubernetes_since: NATIVE_KUBERNETES_SINCE,
        too_old: "has no native sidecars",
        key_for: native_annotation,
        reads: reads_native_key,
        lookalikes: &[
            "config.linkerd.io/proxy-native-sidecar",
            "config.beta.linkerd.io/proxy-native-sidecar",
            "config.alpha.linkerd.io/proxy-native-sidecar",
        ],
        on: NATIVE_ON,
        is_on: |v, _| is_go_true(v),
        is_off: |v| !is_go_true(v),
        unknown_version: " (with the alpha annotation, which every Linkerd from 2.15 reads)",
        global: global_native,
        by_default: "the chart's `proxy.nativeSidecar: true`, from 2.20 and edge-26.5.2",
    },
    version_flag: "--linkerd-version",
    version_key: "linkerdVersion",
    version_of: "the injecting Linkerd",
    quit_port_annotation: Some(ADMIN_PORT_ANNOTATION),
    quit_port_config_keys: &[],
    // The admin port (4191, chart value `proxy.ports.admin`) serves `POST /shutdown`.
    stop_endpoints: &[StopEndpoint {
        port: 4191,
        path: "/shutdown",
        distinctive: false,
        describe: "a POST to Linkerd's /shutdown",
    }],
    proxy_processes: &[],
    // cr.l5d.io/linkerd/proxy.
    proxy_images: &["linkerd/proxy"],
    // linkerd/linkerd2 `charts/partials/templates/_proxy-init.tpl`, `_network-validator.tpl`.
    init_containers: &["linkerd-init", "linkerd-network-validator"],
    pod_markers: &[MarkerKey {
        key: INJECT_ANNOTATION,
        place: MarkerPlace::Annotation,
        on: &[INJECT_ENABLED, INJECT_INGRESS],
        off: &[INJECT_DISABLED],
        ignore_case: false,
    }],
    namespace_markers: &[MarkerKey {
        key: INJECT_ANNOTATION,
        place: MarkerPlace::Annotation,
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
    read_versions: versions::read,
    age,
    opt_out: "the annotation linkerd.io/inject: disabled",
    // linkerd-await, which the proxy image carries with /bin/sleep (linkerd2@b24cd4059841
    // `Dockerfile.proxy`), runs `sleep 0` and then POSTs /shutdown to the proxy's admin port
    // (linkerd/linkerd-await `src/main.rs`: `--shutdown` needs a CMD); Argo Workflows
    // documents the same for linkerd-proxy (argoproj/argo-workflows@f016ad89eb26
    // `docs/sidecar-injection.md`). The endpoint is off unless the pod enables it
    // ([`SHUTDOWN_ANNOTATION`], which says where that is read).
    argo_kill: KillCommand {
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

/// The first edge release with each native-sidecar annotation, from the commit that added it
/// (`git tag --contains`): alpha in `edge-23.11.4` (1b37e1989f4d, #11465), beta in
/// `edge-25.10.2` (d3788f6a66d7, #14587; there `ProxyEnableNativeSidecarAnnotation` still
/// names the alpha key, so the GA spelling is not read), GA with the chart default
/// `proxy.nativeSidecar: true` in `edge-26.5.2` (009a25fa3288, #15267).
pub(crate) const EDGE_ALPHA: Edge = Edge::new(23, 11, 4);
pub(crate) const EDGE_BETA: Edge = Edge::new(25, 10, 2);
pub(crate) const EDGE_GA: Edge = Edge::new(26, 5, 2);

/// Each stable marker tag and the edge release of the same commit: `version-2.15` is
/// `edge-24.2.4`, ..., `version-2.19` is `edge-25.10.7`; `version-2.20` was tagged after
/// `edge-26.6.3` and is first contained in `edge-26.7.1` (`true`: just after that edge).
const STABLE_EDGES: &[(u32, Edge, bool)] = &[
    (15, Edge::new(24, 2, 4), false),
    (16, Edge::new(24, 8, 2), false),
    (17, Edge::new(24, 11, 8), false),
    (18, Edge::new(25, 4, 4), false),
    (19, Edge::new(25, 10, 7), false),
    (20, Edge::new(26, 6, 3), true),
];

/// Which native-sidecar annotations a release reads: 0 none, 1 alpha, 2 alpha and beta, 3 all
/// three. Decided from an edge release itself, not from a stable number guessed for it.
fn native_generation(r: Release) -> u8 {
    match r {
        Release::Stable(v) if v.major == 2 => match v.minor {
            20.. => 3,
            19 => 2,
            15..=18 => 1,
            _ => 0,
        },
        Release::Stable(_) => 0,
        Release::Edge(e) if e >= EDGE_GA => 3,
        Release::Edge(e) if e >= EDGE_BETA => 2,
        Release::Edge(e) if e >= EDGE_ALPHA => 1,
        Release::Edge(_) => 0,
    }
}

/// The native-sidecar annotations, oldest first.
const NATIVE_KEYS: [&str; 3] = [
    NATIVE_SIDECAR_ANNOTATION_ALPHA,
    NATIVE_SIDECAR_ANNOTATION_BETA,
    NATIVE_SIDECAR_ANNOTATION,
];

/// The native-sidecar annotation for a Linkerd release: the newest it reads, or, unknown, the
/// alpha one every version reads; `None` when the release has none.
pub(crate) fn native_annotation(r: Option<Release>) -> Option<&'static str> {
    match r {
        None => Some(NATIVE_SIDECAR_ANNOTATION_ALPHA),
        Some(r) => match native_generation(r) {
            0 => None,
            g => Some(NATIVE_KEYS[usize::from(g) - 1]),
        },
    }
}

/// Whether a release reads native-sidecar annotation `key` (unknown: it may).
fn reads_native_key(key: &str, r: Option<Release>) -> bool {
    let Some(k) = NATIVE_KEYS.iter().position(|n| *n == key) else {
        return false;
    };
    r.is_none_or(|r| k < usize::from(native_generation(r)))
}

/// Whether injected proxies are native sidecars without an annotation: what the values say
/// (`proxy.nativeSidecar`), else the chart's default for the release (true from 2.20 and
/// `edge-26.5.2`).
fn global_native(
    mode: Option<NativeMode>,
    r: Option<Release>,
    _: Option<Kubelets>,
) -> Option<bool> {
    match mode {
        Some(NativeMode::On) => Some(true),
        Some(NativeMode::Off) => Some(false),
        Some(NativeMode::Auto) => None,
        None => r.map(|r| native_generation(r) == 3),
    }
}

/// The sort key of a Linkerd release: edges by date, a stable release at the edge of its
/// marker tag ([`STABLE_EDGES`]); stable releases older than 2.15 before every edge, newer
/// than 2.20 after.
pub(crate) fn age(r: Release) -> [u32; 4] {
    match r {
        Release::Edge(e) => [e.year, e.month, e.n, 0],
        Release::Stable(v) if v.major != 2 => [0; 4],
        Release::Stable(v) => match STABLE_EDGES.iter().find(|(m, _, _)| *m == v.minor) {
            Some((_, e, after)) => [e.year, e.month, e.n, u32::from(*after)],
            None if v.minor < 15 => [0, 0, 0, v.minor],
            None => [100 + v.minor, 0, 0, 0],
        },
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
pub(crate) fn namespace_annotations(r: Option<Release>) -> &'static [&'static str] {
    const ALL: &[&str] = &[
        ADMIN_PORT_ANNOTATION,
        SHUTDOWN_ANNOTATION,
        NATIVE_SIDECAR_ANNOTATION,
        NATIVE_SIDECAR_ANNOTATION_BETA,
        NATIVE_SIDECAR_ANNOTATION_ALPHA,
    ];
    const GA: &[&str] = &[
        ADMIN_PORT_ANNOTATION,
        SHUTDOWN_ANNOTATION,
        NATIVE_SIDECAR_ANNOTATION,
        NATIVE_SIDECAR_ANNOTATION_ALPHA,
    ];
    const BETA: &[&str] = &[
        ADMIN_PORT_ANNOTATION,
        SHUTDOWN_ANNOTATION,
        NATIVE_SIDECAR_ANNOTATION_BETA,
        NATIVE_SIDECAR_ANNOTATION_ALPHA,
    ];
    const SHUTDOWN: &[&str] = &[
        ADMIN_PORT_ANNOTATION,
        SHUTDOWN_ANNOTATION,
        NATIVE_SIDECAR_ANNOTATION_ALPHA,
    ];
    const ALPHA: &[&str] = &[ADMIN_PORT_ANNOTATION, NATIVE_SIDECAR_ANNOTATION_ALPHA];
    match r {
        None => ALL,
        Some(Release::Stable(v)) => match (v.major == 2).then_some(v.minor) {
            Some(20..) => GA,
            Some(19) => BETA,
            Some(16..=18) => SHUTDOWN,
            Some(15) => ALPHA,
            _ => &[ADMIN_PORT_ANNOTATION],
        },
        // The edges decide from their own contents: `ProxyAnnotations` and
        // `ProxyAlphaConfigAnnotations` of `pkg/inject/inject.go` at `edge-25.10.2`,
        // `edge-26.5.1` and `edge-26.5.2`; the shutdown annotation joins the list in
        // `edge-24.6.2` (`git tag --contains` of the commit that adds it there).
        Some(r @ Release::Edge(e)) => match native_generation(r) {
            3 => GA,
            2 => BETA,
            1 if e >= SHUTDOWN_EDGE => SHUTDOWN,
            1 => ALPHA,
            _ => &[ADMIN_PORT_ANNOTATION],
        },
    }
}

/// The first edge release whose injector copies the shutdown annotation from a Namespace.
const SHUTDOWN_EDGE: Edge = Edge::new(24, 6, 2);

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
        let v = |minor| Some(Release::Stable(Version::new(2, minor)));
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
        let stable = |m| Some(Release::Stable(Version::new(2, m)));
        assert_eq!(native_annotation(stable(14)), None);
        assert_eq!(
            native_annotation(stable(15)),
            Some(NATIVE_SIDECAR_ANNOTATION_ALPHA)
        );
        assert_eq!(
            native_annotation(stable(18)),
            Some(NATIVE_SIDECAR_ANNOTATION_ALPHA)
        );
        assert_eq!(
            native_annotation(stable(19)),
            Some(NATIVE_SIDECAR_ANNOTATION_BETA)
        );
        assert_eq!(
            native_annotation(stable(20)),
            Some(NATIVE_SIDECAR_ANNOTATION)
        );
        assert_eq!(
            native_annotation(stable(23)),
            Some(NATIVE_SIDECAR_ANNOTATION)
        );
        assert_eq!(
            native_annotation(None),
            Some(NATIVE_SIDECAR_ANNOTATION_ALPHA)
        );
    }

    #[test]
    fn edges_decide_from_their_own_contents() {
        let edge = |y, m, n| Some(Release::Edge(Edge::new(y, m, n)));
        assert_eq!(native_annotation(edge(23, 11, 3)), None);
        assert_eq!(
            native_annotation(edge(23, 11, 4)),
            Some(NATIVE_SIDECAR_ANNOTATION_ALPHA)
        );
        assert_eq!(
            native_annotation(edge(25, 10, 1)),
            Some(NATIVE_SIDECAR_ANNOTATION_ALPHA)
        );
        assert_eq!(
            native_annotation(edge(25, 10, 2)),
            Some(NATIVE_SIDECAR_ANNOTATION_BETA)
        );
        assert_eq!(
            native_annotation(edge(26, 5, 1)),
            Some(NATIVE_SIDECAR_ANNOTATION_BETA)
        );
        assert_eq!(
            native_annotation(edge(26, 5, 2)),
            Some(NATIVE_SIDECAR_ANNOTATION)
        );
        assert!(!reads_native_key(NATIVE_SIDECAR_ANNOTATION, edge(26, 5, 1)));
        assert!(reads_native_key(
            NATIVE_SIDECAR_ANNOTATION_ALPHA,
            edge(26, 5, 2)
        ));
        assert!(reads_native_key(NATIVE_SIDECAR_ANNOTATION, None));
        let stable = |m| Some(Release::Stable(Version::new(2, m)));
        assert!(!reads_native_key(
            NATIVE_SIDECAR_ANNOTATION_BETA,
            stable(18)
        ));
        assert!(reads_native_key(NATIVE_SIDECAR_ANNOTATION_BETA, stable(19)));
        assert_eq!(global_native(None, edge(26, 5, 2), None), Some(true));
        assert_eq!(global_native(None, stable(19), None), Some(false));
        assert_eq!(
            global_native(Some(NativeMode::Off), stable(20), None),
            Some(false)
        );
        assert_eq!(global_native(None, None, None), None);
    }

    #[test]
    fn stable_releases_sit_at_their_edges() {
        let s = |m| age(Release::Stable(Version::new(2, m)));
        let e = |y, m, n| age(Release::Edge(Edge::new(y, m, n)));
        assert_eq!(s(19), e(25, 10, 7));
        assert!(e(25, 10, 2) < s(19));
        assert!(s(18) < e(25, 10, 2));
        assert!(e(26, 6, 3) < s(20) && s(20) < e(26, 7, 1));
        assert!(s(14) < e(23, 11, 4));
    }

    #[test]
    fn key_lists_are_sorted_and_consistent() {
        assert!(PROXY_KEYS.windows(2).all(|w| w[0] < w[1]));
        for k in DISTINCT_PROXY_KEYS.iter().chain(PROXY_BOOL_KEYS) {
            assert!(PROXY_KEYS.contains(k), "{k}");
        }
    }
}
