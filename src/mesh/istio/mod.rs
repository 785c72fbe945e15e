//! Istio facts the output relies on, in one place (each with where it was read in istio/istio or istio/api).
//!
//! Field names, annotation keys, defaults and version notes live here so that the
//! locate and plan stages never spell them out themselves; [`MESH`] is the summary the
//! stages read through the mesh seam.

pub(crate) mod documents;
pub(crate) mod versions;

use super::facts::{
    Ambient, ConfigKind, ConfigRole, KillCommand, MarkerKey, MarkerPlace, Mesh, Native, PortOff,
    SidecarLabel, StopEndpoint,
};
use super::found::NativeMode;
use crate::config::MeshId;

/// Istio as a [`Mesh`].
pub(crate) const MESH: Mesh = Mesh {
    id: MeshId::Istio,
    name: "Istio",
    proxy_container: PROXY_CONTAINER,
    default_quit_url: DEFAULT_QUIT_URL,
    ready_url: READY_URL,
    pod_config_annotation: PROXY_CONFIG_ANNOTATION,
    native_sidecar_annotation: NATIVE_SIDECAR_ANNOTATION,
    native_sidecar_annotations: &[NATIVE_SIDECAR_ANNOTATION],
    native: Native {
        since: NATIVE_ANNOTATION_SINCE,
        kubernetes_since: NATIVE_KUBERNETES_SINCE,
        too_old: "does not read the pod annotation",
        key_for: |v| match v.and_then(Release::stable) {
            Some(v) if v < NATIVE_ANNOTATION_SINCE => None,
            _ => Some(NATIVE_SIDECAR_ANNOTATION),
        },
        reads: |key, v| {
            key == NATIVE_SIDECAR_ANNOTATION
                && v.and_then(Release::stable)
                    .is_none_or(|v| v >= NATIVE_ANNOTATION_SINCE)
        },
        // `native-side` is how the 1.27.0 release note spells the annotation
        // (releasenotes/notes/native-sidecar-annotation.yaml); istio/api
        // `annotation/annotations.yaml` has only `sidecar.istio.io/nativeSidecar`.
        lookalikes: &[
            "sidecar.istio.io/native-side",
            "sidecar.istio.io/nativeSidecars",
        ],
        on: NATIVE_ON,
        is_on: |value, v| native_annotation_on(value, v.and_then(Release::stable)),
        is_off: |v| v == NATIVE_OFF,
        unknown_version: "",
        global: global_native,
        by_default: "istiod's `auto`, from 1.27, when every kubelet is 1.33 or newer",
    },
    version_flag: "--istio-version",
    version_key: "istioVersion",
    version_of: "the injecting Istio",
    quit_port_annotation: Some(STATUS_PORT_ANNOTATION),
    // pilot-agent applies the mesh's `defaultConfig` (as the injector put it in
    // `PROXY_CONFIG`), then the pod's `proxy.istio.io/config`, then the
    // `status.sidecar.istio.io/port` annotation (istio/istio
    // `pilot/cmd/pilot-agent/config/config.go` `ConstructProxyConfig`, `getMeshConfig`,
    // `applyAnnotations`); the YAML is read as protobuf JSON, which takes the proto's own
    // field name too (`status_port`).
    quit_port_config_keys: &["statusPort", "status_port"],
    // Ports on which `/quitquitquit` stops the proxy: pilot-agent's status port (default
    // 15020: istio/istio `pkg/config/mesh/mesh.go` `StatusPort`; the handler:
    // `pilot/cmd/pilot-agent/status/server.go` `quitPath`) and Envoy's admin port (15000).
    stop_endpoints: &[
        StopEndpoint {
            port: 15020,
            path: "/quitquitquit",
            distinctive: true,
            describe: "a POST to /quitquitquit",
        },
        StopEndpoint {
            port: 15000,
            path: "/quitquitquit",
            distinctive: true,
            describe: "a POST to /quitquitquit",
        },
    ],
    proxy_processes: &["envoy", "pilot-agent"],
    // docker.io/istio/proxyv2, gcr.io/istio-release/proxyv2.
    proxy_images: &["istio/proxyv2", "istio-release/proxyv2"],
    // `istio-init`, or `istio-validation` with the CNI plugin (istio/istio
    // `manifests/charts/istio-control/istio-discovery/files/injection-template.yaml`).
    init_containers: &["istio-init", "istio-validation"],
    // The webhook selects on labels (istio/istio `manifests/charts/istio-control/istio-discovery/templates/mutatingwebhook.yaml`, `namespaceSelector` and `objectSelector`); the deprecated
    // annotation of the same name still counts when there is no label.
    pod_markers: &[
        MarkerKey {
            key: INJECT_KEY,
            place: MarkerPlace::LabelThenAnnotation,
            on: &["true"],
            off: &["false"],
            ignore_case: true,
        },
        REVISION_MARKER,
        AMBIENT_MARKER,
    ],
    namespace_markers: &[
        MarkerKey {
            key: NAMESPACE_INJECTION_LABEL,
            place: MarkerPlace::Label,
            on: &["enabled"],
            off: &["disabled"],
            ignore_case: false,
        },
        REVISION_MARKER,
        AMBIENT_MARKER,
    ],
    // pkg/config/analysis/analyzers/util/in_mesh.go `NamespaceInAmbientMode` and
    // cni/pkg/util/enablement_selector.go `Matches` at 1.27.0: a namespace with
    // `istio-injection: enabled` or a non-empty `istio.io/rev` is sidecar mode, and a pod
    // that asks for a sidecar is never enrolled.
    ambient: Some(Ambient {
        label: DATAPLANE_MODE_LABEL,
        value: DATAPLANE_MODE_AMBIENT,
        pod_sidecar: &[
            SidecarLabel {
                key: INJECT_KEY,
                value: Some("true"),
            },
            SidecarLabel {
                key: REVISION_LABEL,
                value: None,
            },
        ],
        namespace_sidecar: &[
            SidecarLabel {
                key: NAMESPACE_INJECTION_LABEL,
                value: Some("enabled"),
            },
            SidecarLabel {
                key: REVISION_LABEL,
                value: None,
            },
        ],
    }),
    injected_note: "so the pod annotation would mostly have no effect: \
                    EXIT_ON_ZERO_ACTIVE_CONNECTIONS and terminationDrainDuration (in PROXY_CONFIG) \
                    go on its env instead; injecting again lets meshjob use the annotation, or a \
                    native sidecar",
    config_kinds: &[
        ConfigKind {
            group: ISTIO_OPERATOR_GROUP,
            kind: ISTIO_OPERATOR_KIND,
            role: ConfigRole::Operator,
        },
        ConfigKind {
            group: SAIL_GROUP,
            kind: SAIL_ISTIO_KIND,
            role: ConfigRole::Values,
        },
        ConfigKind {
            group: SAIL_GROUP,
            kind: SAIL_REVISION_KIND,
            role: ConfigRole::Generated,
        },
        ConfigKind {
            group: "",
            kind: "ConfigMap",
            role: ConfigRole::ConfigMap,
        },
    ],
    is_config_map_name: is_mesh_configmap_name,
    read_versions: versions::read,
    age: versions::age,
    opt_out: "the label sidecar.istio.io/inject: \"false\", or ambient mode",
    // The command Argo Workflows documents for istio-proxy (argoproj/argo-workflows@
    // f016ad89eb26 `docs/sidecar-injection.md`): `pilot-agent request` POSTs to Envoy's admin
    // port (15000 by default; istio@86c9f01fd735 `pilot/cmd/pilot-agent/app/request.go`),
    // whose /quitquitquit stops Envoy (Envoy's admin API, `source/server/admin/admin.cc`), and pilot-agent with it: its agent returns
    // once Envoy has exited (`pkg/envoy/agent.go` `Run`).
    argo_kill: KillCommand {
        argv: r#"["pilot-agent", "request", "POST", "quitquitquit"]"#,
        needs: &[],
    },
    // The injector reads a Namespace's labels only (istio/istio `manifests/charts/istio-control/istio-discovery/templates/mutatingwebhook.yaml`, `namespaceSelector` and `objectSelector`).
    namespace_annotations: |_| &[],
    port_off: Some(PortOff {
        quit_url: ENVOY_ADMIN_QUIT_URL,
        ready_url: ENVOY_ADMIN_READY_URL,
        served_by: "Envoy's admin server",
        moved_by: &["proxyAdminPort", "proxy_admin_port"],
    }),
};

/// pilot-agent's quit endpoint (status server, Istio 1.3+); loopback only, POST only
/// (istio/istio `pilot/cmd/pilot-agent/status/server.go`, `quitPath` and `handleQuit`).
pub(crate) const DEFAULT_QUIT_URL: &str = "http://localhost:15020/quitquitquit";
/// The proxy's readiness endpoint polled by `pilot-agent wait` (istio/istio `pilot/cmd/pilot-agent/app/wait.go`, its `--url` default). The wrapper
/// script still spells out its port (15021) itself.
pub(crate) const READY_URL: &str = "http://localhost:15021/healthz/ready";

/// The pod-template annotation holding a ProxyConfig as YAML or JSON text.
pub(crate) const PROXY_CONFIG_ANNOTATION: &str = "proxy.istio.io/config";
/// Label (preferred) or deprecated annotation that opts a pod in or out of injection.
pub(crate) const INJECT_KEY: &str = "sidecar.istio.io/inject";
/// Per-pod native-sidecar switch (Istio 1.24+).
pub(crate) const NATIVE_SIDECAR_ANNOTATION: &str = "sidecar.istio.io/nativeSidecar";
/// Per-pod override of the status port (15020), which serves `/quitquitquit`. `"0"` turns
/// pilot-agent's status server off: pilot-agent starts it only for a port above 0
/// (istio/istio@007a950 pilot/cmd/pilot-agent/app/cmd.go, `if proxyConfig.StatusPort > 0`),
/// and the injection template then writes no readiness probe (istio/istio@0134e00
/// manifests/charts/istio-control/istio-discovery/files/injection-template.yaml). The
/// 15021 readiness listener forwards to that server, so it goes too.
pub(crate) const STATUS_PORT_ANNOTATION: &str = "status.sidecar.istio.io/port";
/// Envoy's admin server, which stays when the status server is off: pilot-agent's bootstrap
/// binds it to localhost on ProxyConfig `proxyAdminPort` (istio/istio@002dd6f
/// tools/packaging/common/envoy_bootstrap.json, `admin.address`), 15000 by default (istio/api
/// ProxyConfig `proxy_admin_port`). Its `POST /quitquitquit` stops Envoy, answering HTTP/1.1
/// only: an HTTP/1.0 request gets 426, as Envoy's HTTP/1 codec answers without
/// `accept_http_10` (envoyproxy/envoy `source/common/http/http1/codec_impl.cc`; a real Envoy
/// does so in tests/wrapper_real_proxies.rs); its `GET /ready` answers 200 once Envoy is live.
pub(crate) const ENVOY_ADMIN_QUIT_URL: &str = "http://localhost:15000/quitquitquit";
pub(crate) const ENVOY_ADMIN_READY_URL: &str = "http://localhost:15000/ready";
/// The injected proxy container.
pub(crate) const PROXY_CONTAINER: &str = "istio-proxy";

/// A revision label selects that revision's injector, on a pod or a namespace.
const REVISION_MARKER: MarkerKey = MarkerKey {
    key: REVISION_LABEL,
    place: MarkerPlace::Label,
    on: &[],
    off: &[],
    ignore_case: true,
};
/// Ambient mode is Istio's too: the pod or namespace has no sidecar, and the strategies
/// take meshjob's fix out.
const AMBIENT_MARKER: MarkerKey = MarkerKey {
    key: DATAPLANE_MODE_LABEL,
    place: MarkerPlace::Label,
    on: &[DATAPLANE_MODE_AMBIENT],
    off: &[],
    ignore_case: false,
};

/// ProxyConfig keys meshjob sets.
pub(crate) const HOLD_APPLICATION: &str = "holdApplicationUntilProxyStarts";
pub(crate) const TERMINATION_DRAIN_DURATION: &str = "terminationDrainDuration";
pub(crate) const PROXY_METADATA: &str = "proxyMetadata";
pub(crate) const EXIT_ON_ZERO_ACTIVE_CONNECTIONS: &str = "EXIT_ON_ZERO_ACTIVE_CONNECTIONS";
/// A field people write that Istio does not have; the real one is [`HOLD_APPLICATION`].
pub(crate) const MISSPELLED_HOLD_APPLICATION: &str = "holdApplicationUntilProxyReceivesConfig";

/// ProxyConfig fields in their JSON (camelCase) spelling, from istio/api
/// `mesh/v1alpha1/proxy.proto`. Istio drops any other key silently.
pub(crate) const PROXY_CONFIG_FIELDS: &[&str] = &[
    "configPath",
    "binaryPath",
    "serviceCluster",
    "tracingServiceName",
    "drainDuration",
    "parentShutdownDuration",
    "discoveryAddress",
    "discoveryRefreshDelay",
    "zipkinAddress",
    "statsdUdpAddress",
    "envoyMetricsServiceAddress",
    "proxyAdminPort",
    "availabilityZone",
    "controlPlaneAuthPolicy",
    "customConfigFile",
    "statNameLength",
    "concurrency",
    "proxyBootstrapTemplatePath",
    "interceptionMode",
    "tracing",
    "sds",
    "envoyAccessLogService",
    "envoyMetricsService",
    "proxyMetadata",
    "runtimeValues",
    "statusPort",
    "extraStatTags",
    "gatewayTopology",
    "terminationDrainDuration",
    "meshId",
    "readinessProbe",
    "proxyStatsMatcher",
    "holdApplicationUntilProxyStarts",
    "caCertificatesPem",
    "image",
    "privateKeyProvider",
    "proxyHeaders",
    "fileFlushInterval",
    "fileFlushMinSizeKb",
];

/// ProxyConfig fields that are `google.protobuf.Duration`: Go duration strings.
pub(crate) const DURATION_FIELDS: &[&str] = &[
    "terminationDrainDuration",
    "drainDuration",
    "parentShutdownDuration",
];

/// Whether `key` names a ProxyConfig field (camelCase or the snake_case Istio also reads).
pub(crate) fn is_proxy_config_field(key: &str) -> bool {
    let camel = snake_to_camel(key);
    PROXY_CONFIG_FIELDS.contains(&camel.as_str())
}

fn snake_to_camel(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut up = false;
    for c in s.chars() {
        if c == '_' {
            up = true;
        } else if up {
            out.extend(c.to_uppercase());
            up = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// API group of the IstioOperator CR; its MeshConfig is `spec.meshConfig`.
pub(crate) const ISTIO_OPERATOR_GROUP: &str = "install.istio.io";
pub(crate) const ISTIO_OPERATOR_KIND: &str = "IstioOperator";
/// API group of the Sail operator; its `Istio` CR holds istiod Helm values in `spec.values`.
pub(crate) const SAIL_GROUP: &str = "sailoperator.io";
pub(crate) const SAIL_ISTIO_KIND: &str = "Istio";
/// Written by the Sail operator from the `Istio` CR; edits to it are reverted.
pub(crate) const SAIL_REVISION_KIND: &str = "IstioRevision";
/// The Helm values key (istiod chart) and IstioOperator field holding MeshConfig.
pub(crate) const MESH_CONFIG: &str = "meshConfig";
/// The MeshConfig field holding the mesh-wide ProxyConfig.
pub(crate) const DEFAULT_CONFIG: &str = "defaultConfig";
/// The key of the mesh ConfigMap holding MeshConfig as YAML text.
pub(crate) const MESH_CONFIGMAP_KEY: &str = "mesh";
/// Its sibling key, which meshjob leaves alone.
pub(crate) const MESH_NETWORKS_KEY: &str = "meshNetworks";
/// Where the istiod chart's own values.yaml keeps its defaults; users set their values
/// beside it, in their own file.
pub(crate) const HELM_INTERNAL_DEFAULTS: &str = "_internal_defaults_do_not_set";

/// Whether a ConfigMap name is the mesh ConfigMap's: `istio`, or `istio-<revision>`.
pub(crate) fn is_mesh_configmap_name(name: &str) -> bool {
    name == "istio"
        || name
            .strip_prefix("istio-")
            .is_some_and(|rev| !rev.is_empty())
}

/// MeshConfig fields (JSON spelling) from istio/api `mesh/v1alpha1/config.proto`, including
/// fields older releases had (Mixer, SDS), so that old bare mesh files are recognised. Used
/// to tell a bare MeshConfig file from other YAML without apiVersion/kind.
pub(crate) const MESH_CONFIG_FIELDS: &[&str] = &[
    "proxyListenPort",
    "proxyInboundListenPort",
    "proxyHttpPort",
    "connectTimeout",
    "protocolDetectionTimeout",
    "tcpKeepalive",
    "ingressClass",
    "ingressService",
    "ingressControllerMode",
    "ingressSelector",
    "enableTracing",
    "accessLogFile",
    "accessLogFormat",
    "accessLogEncoding",
    "enableEnvoyAccessLogService",
    "disableEnvoyListenerLog",
    "defaultConfig",
    "outboundTrafficPolicy",
    "inboundTrafficPolicy",
    "configSources",
    "enableAutoMtls",
    "trustDomain",
    "trustDomainAliases",
    "caCertificates",
    "defaultServiceExportTo",
    "defaultVirtualServiceExportTo",
    "defaultDestinationRuleExportTo",
    "rootNamespace",
    "localityLbSetting",
    "dnsRefreshRate",
    "h2UpgradePolicy",
    "inboundClusterStatName",
    "outboundClusterStatName",
    "certificates",
    "thriftConfig",
    "serviceSettings",
    "enablePrometheusMerge",
    "verifyCertificateAtClient",
    "ca",
    "extensionProviders",
    "defaultProviders",
    "discoverySelectors",
    "pathNormalization",
    "defaultHttpRetryPolicy",
    "meshMTLS",
    "tlsDefaults",
    "serviceScopeConfigs",
    // Removed fields, still found in old files.
    "mixerCheckServer",
    "mixerReportServer",
    "disablePolicyChecks",
    "disableMixerHttpReports",
    "policyCheckFailOpen",
    "sidecarToTelemetrySessionAffinity",
    "reportBatchMaxEntries",
    "reportBatchMaxTime",
    "sdsUdsPath",
    "sdsRefreshDelay",
    "enableSdsTokenMount",
    "sdsUseK8sSaJwt",
    "authPolicy",
    "rdsRefreshDelay",
    "mixerAddress",
];

/// Whether `key` names a MeshConfig field (camelCase or snake_case).
pub(crate) fn is_mesh_config_field(key: &str) -> bool {
    let camel = snake_to_camel(key);
    MESH_CONFIG_FIELDS.contains(&camel.as_str())
}

/// What each setting costs or does, said once per run (istio/istio `pkg/envoy/agent.go`, `exitOnZeroActiveConnections`).
pub(crate) const DRAIN_INTERACTION_NOTE: &str = "with EXIT_ON_ZERO_ACTIVE_CONNECTIONS on, pilot-agent \
ignores terminationDrainDuration: after SIGTERM it waits MINIMUM_DRAIN_DURATION (default 5s), \
then exits once no connection is active; on Istio 1.26+ a POST to /quitquitquit skips the drain \
entirely";

// --- Native sidecars and ambient: what decides the strategy (docs/strategies.md). ---
//
// Read in istio/istio at the tags named:
// - manifests/charts/istio-control/istio-discovery/files/injection-template.yaml, line 27
//   at 1.24.0: `$nativeSidecar := or (and (not (isset ...nativeSidecar)) (eq (env
//   "ENABLE_NATIVE_SIDECARS") "true")) (eq (index .ObjectMeta.Annotations
//   "sidecar.istio.io/nativeSidecar") "true")`: from 1.24 the pod annotation "true" turns
//   native on for that pod whatever istiod says; at 1.23.0 only the istiod env does. At
//   1.27.0 (line 29) any non-empty value but "false" enables, "true" in every version.
// - pkg/kube/inject/webhook.go `DetectNativeSidecar` at 1.27.0: istiod's default `auto`
//   is native only when every node's kubelet is 1.33+ (a Job pod has no nodeName yet).
// - The same template, native branch: `istio-proxy` becomes an init container with
//   `restartPolicy: Always`, which needs Kubernetes' SidecarContainers (beta and on by
//   default in 1.29, KEP-753). `$holdProxy` is `and (...) (not $nativeSidecar)`, so
//   holdApplicationUntilProxyStarts is ignored (a startupProbe orders start-up), and the
//   proxy gets a preStop `pilot-agent request POST drain`.
// - pkg/envoy/agent.go at 1.24.0: `DrainNow` sets `skipDrain`, and `terminate` then exits
//   at once on SIGTERM; so neither terminationDrainDuration nor
//   EXIT_ON_ZERO_ACTIVE_CONNECTIONS is used by a native sidecar's shutdown (`/drain` is in
//   pilot/cmd/pilot-agent/status/server.go since 1.21.0).
// - pkg/config/analysis/analyzers/util/in_mesh.go `NamespaceInAmbientMode` and
//   cni/pkg/util/enablement_selector.go `Matches` at 1.27.0: ambient is the label
//   `istio.io/dataplane-mode: ambient`; a namespace with `istio-injection: enabled` or a
//   non-empty `istio.io/rev` is sidecar mode, and a pod with a sidecar is never enrolled.

use crate::version::{Kubelets, Release, Version};

/// The first Istio whose injector reads the pod annotation `sidecar.istio.io/nativeSidecar`.
pub(crate) const NATIVE_ANNOTATION_SINCE: Version = Version::new(1, 24);
/// The first Kubernetes with native sidecars (restartable init containers) on by default.
pub(crate) const NATIVE_KUBERNETES_SINCE: Version = Version::new(1, 29);
/// The value of [`NATIVE_SIDECAR_ANNOTATION`] meshjob writes; every version from 1.24 reads
/// it as on.
pub(crate) const NATIVE_ON: &str = "true";
/// The value that turns native sidecars off for a pod.
pub(crate) const NATIVE_OFF: &str = "false";

/// Pod or namespace label that puts workloads in ambient mode (no sidecar).
pub(crate) const DATAPLANE_MODE_LABEL: &str = "istio.io/dataplane-mode";
pub(crate) const DATAPLANE_MODE_AMBIENT: &str = "ambient";
/// Namespace label of sidecar injection (`enabled`), and the revision label that also
/// selects sidecar injection, on a namespace or a pod.
pub(crate) const NAMESPACE_INJECTION_LABEL: &str = "istio-injection";
pub(crate) const REVISION_LABEL: &str = "istio.io/rev";

/// The first Istio whose `ENABLE_NATIVE_SIDECARS` defaults to `auto`
/// (`pilot/pkg/features/pilot.go` at 1.27.0; a boolean defaulting to false at 1.26.0).
pub(crate) const NATIVE_AUTO_SINCE: Version = Version::new(1, 27);
/// `auto` is on only when every node's kubelet is at least this minor
/// (`pkg/kube/inject/webhook.go` `DetectNativeSidecar`, `minVersion := 33`; it compares minor
/// numbers only, and a kubelet version it cannot parse counts as old).
pub(crate) const NATIVE_AUTO_KUBELET: Version = Version::new(1, 33);

/// Whether istiod makes every proxy a native sidecar by itself: `ENABLE_NATIVE_SIDECARS`
/// `"true"` does on any Istio that has it (1.19+); `"false"` never; `auto` (the default from
/// 1.27) when every kubelet is 1.33 or newer, which a Job pod, injected before it has a node,
/// is judged by. Before 1.27 the default was off.
fn global_native(
    mode: Option<NativeMode>,
    r: Option<Release>,
    k: Option<Kubelets>,
) -> Option<bool> {
    let auto = || match k {
        Some(k) if k.at_least() >= NATIVE_AUTO_KUBELET => Some(true),
        Some(Kubelets::Oldest(_)) => Some(false),
        _ => None,
    };
    let version = r.and_then(Release::stable);
    match mode {
        Some(NativeMode::On) => Some(true),
        Some(NativeMode::Off) => Some(false),
        Some(NativeMode::Auto) if version.is_some_and(|v| v < NATIVE_AUTO_SINCE) => Some(false),
        Some(NativeMode::Auto) => auto(),
        None => match version {
            Some(v) if v >= NATIVE_AUTO_SINCE => auto(),
            Some(_) => Some(false),
            None => None,
        },
    }
}

/// Whether an annotation value turns native sidecars on for a pod, as the given Istio reads
/// it (unknown: only what every version reads as on).
pub(crate) fn native_annotation_on(value: &str, istio: Option<Version>) -> bool {
    match istio {
        Some(v) if v < NATIVE_ANNOTATION_SINCE => false,
        Some(v) if v >= Version::new(1, 27) => !value.is_empty() && value != NATIVE_OFF,
        _ => value == NATIVE_ON,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mesh_names_and_fields() {
        assert!(is_mesh_configmap_name("istio"));
        assert!(is_mesh_configmap_name("istio-1-22"));
        assert!(!is_mesh_configmap_name("istio-"));
        assert!(!is_mesh_configmap_name("istiod"));
        assert!(is_mesh_config_field("defaultConfig"));
        assert!(is_mesh_config_field("access_log_file"));
        assert!(!is_mesh_config_field("resources"));
    }
}
