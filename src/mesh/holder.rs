//! Holders other than the run's mesh proxy: agents a webhook injects into a pod (Vault
//! Agent, Dapr's `daprd`, Consul's `consul-dataplane`) that run until they are stopped, and
//! so hold a batch pod up after its task. Each is data: how it is recognised on a pod
//! template, its quit endpoint and the annotations that move it, its native-sidecar key, and
//! the annotations its fixes need. What meshjob writes from these facts is `plan::holders`'.
//!
//! A pod can have several holders: the run's mesh proxy (Istio or Linkerd, decided by
//! `decide`) and any of these. A holder with [`Holder::owns_pod`] is a mesh of its own: a pod
//! it injects is its, and the run's mesh does not inject it.
//!
//! Sources (read in each injector's code; each fact below names its file):
//! - vault-k8s: `hashicorp/vault-k8s@fbc5b1f0cd4d1c7dd5a8830e32c8ed636d7318d7` (v1.7.6);
//! - Dapr: `dapr/dapr@d8450742ce3260d93a2346f4398a1e60d019a45b` (master after v1.18.0) and
//!   the tags `v1.17.0`, `v1.18.0-rc.1`, `v1.18.0` of the same repository;
//! - consul-k8s: `hashicorp/consul-k8s@a507b1d1e3061996dbed00cde73bba2bf068379f` (main after
//!   v2.0.3) and the tags `v1.7.4`, `v1.7.5`, `v1.8.1`, `v1.8.2`, `v1.9.0`.

use crate::version::{Semver, Version};

/// Go's `strconv.ParseBool` true values (consul-k8s; vault-k8s reads its annotations with
/// `parseutil.ParseBool`, which takes the same strings).
const GO_TRUE: &[&str] = &["1", "t", "T", "TRUE", "true", "True"];

/// Dapr's `kit/strings.IsTruthy` (case-insensitive).
const DAPR_TRUE: &[&str] = &["y", "yes", "true", "t", "on", "1"];

/// How a value of an annotation is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Truthy {
    pub on: &'static [&'static str],
    pub ignore_case: bool,
}

impl Truthy {
    pub(crate) fn is_on(&self, value: &str) -> bool {
        let v = value.trim();
        self.on.iter().any(|o| {
            if self.ignore_case {
                o.eq_ignore_ascii_case(v)
            } else {
                *o == v
            }
        })
    }
}

const GO: Truthy = Truthy {
    on: GO_TRUE,
    ignore_case: false,
};

const DAPR_TRUTHY: Truthy = Truthy {
    on: DAPR_TRUE,
    ignore_case: true,
};

/// Where a holder is asked to quit.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Quit {
    /// The HTTP method the endpoint takes.
    pub method: &'static str,
    pub host: &'static str,
    pub port: u16,
    pub path: &'static str,
    /// The pod annotation that moves the port, if any.
    pub port_annotation: Option<&'static str>,
    /// The pod annotation that moves the path, if any.
    pub path_annotation: Option<&'static str>,
    /// The versions that serve it, for findings.
    pub needs: &'static str,
}

/// A holder's native-sidecar key: the pod annotation that asks its injector to put it in
/// `initContainers` with `restartPolicy: Always`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct NativeKey {
    pub key: &'static str,
    pub on: &'static str,
    /// The versions that read it, for findings.
    pub since: &'static str,
    /// The first Kubernetes with native sidecars on by default.
    pub kubernetes_since: Version,
}

/// One holder's facts.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Holder {
    /// Human name, for messages.
    pub name: &'static str,
    /// The container that runs until stopped.
    pub container: &'static str,
    /// The pod annotation that asks for injection, and how its value is read.
    pub trigger: &'static str,
    pub truthy: Truthy,
    /// A pod annotation that, when on, means nothing of this holder keeps running.
    pub released_by: Option<&'static str>,
    /// A mesh of its own: a pod it injects is not the run's mesh's.
    pub owns_pod: bool,
    pub quit: Quit,
    /// Pod annotations the wrapper fix needs besides the call (turning the endpoint on).
    pub wrapper_needs: &'static [(&'static str, &'static str)],
    /// Pod annotations every fix needs (a linger turned off).
    pub always: &'static [(&'static str, &'static str)],
    /// The native-sidecar key, where the injector has one.
    pub native: Option<NativeKey>,
    /// The config key and flag of the injector's version, and what that version is.
    pub version_key: &'static str,
    pub version_flag: &'static str,
    pub version_of: &'static str,
    /// The first release of each line that serves the quit endpoint.
    pub quit_since: &'static [Semver],
    /// The first release of each line that reads the native key (empty: none does).
    pub native_since: &'static [Semver],
    /// A pod annotation under which the app cannot call the quit endpoint, and why.
    pub wrapper_blocked_by: Option<(&'static str, &'static str)>,
}

impl Holder {
    /// Every annotation a fix of this holder may write, with its value.
    pub(crate) fn written(&self) -> impl Iterator<Item = (&'static str, &'static str)> + '_ {
        (self.wrapper_needs.iter().copied())
            .chain(self.always.iter().copied())
            .chain(self.native.as_ref().map(|n| (n.key, n.on)))
            .chain(self.released_by.map(|k| (k, "true")))
    }
}

/// vault-k8s' Agent Injector.
pub(crate) static VAULT: Holder = Holder {
    name: "Vault Agent",
    // agent-inject/agent/container_sidecar.go: `Name: "vault-agent"`.
    container: "vault-agent",
    // agent-inject/agent/annotations.go `AnnotationAgentInject`; agent.go `ShouldInject`
    // reads it with `parseutil.ParseBool`, and no annotation means no injection.
    trigger: "vault.hashicorp.com/agent-inject",
    truthy: GO,
    // annotations.go `AnnotationAgentPrePopulateOnly`; agent.go injects the sidecar only
    // `if !a.PrePopulateOnly`.
    released_by: Some("vault.hashicorp.com/agent-pre-populate-only"),
    owns_pod: false,
    quit: Quit {
        method: "POST",
        // config.go `makeCacheListener`: `127.0.0.1:<port>`, `tls_disable`; `enable_quit`
        // is set on that listener when the pod asks for it.
        host: "127.0.0.1",
        // agent.go `DefaultAgentCacheListenerPort = "8200"`.
        port: 8200,
        // Vault agent's `agent_api { enable_quit = true }` serves `/agent/v1/quit`
        // (hashicorp/vault, Vault 1.10 on).
        path: "/agent/v1/quit",
        // annotations.go `AnnotationAgentCacheListenerPort`.
        port_annotation: Some("vault.hashicorp.com/agent-cache-listener-port"),
        path_annotation: None,
        needs: "vault-k8s 0.16.0 or later and a Vault agent 1.10 or later",
    },
    // annotations.go `AnnotationAgentEnableQuit` (default false, `DefaultEnableQuit`).
    wrapper_needs: &[("vault.hashicorp.com/agent-enable-quit", "true")],
    always: &[],
    // No `RestartPolicy` anywhere in agent-inject/ at v1.7.6: the agent is never native.
    native: None,
    wrapper_blocked_by: None,
    version_key: "vaultK8sVersion",
    version_flag: "--vault-k8s-version",
    version_of: "vault-k8s",
    // `AnnotationAgentEnableQuit` first in tag v0.16.0 (`git tag --contains` of the commit
    // that added it to agent-inject/agent/annotations.go).
    quit_since: &[Semver::new(0, 16, 0)],
    native_since: &[],
};

/// Dapr's sidecar injector.
pub(crate) static DAPR: Holder = Holder {
    name: "Dapr",
    // pkg/injector/consts/consts.go `SidecarContainerName = "daprd"`.
    container: "daprd",
    // pkg/injector/annotations/annotations.go `KeyEnabled`; read with `IsTruthy`.
    trigger: "dapr.io/enabled",
    truthy: DAPR_TRUTHY,
    released_by: None,
    owns_pod: false,
    quit: Quit {
        // pkg/api/http/shutdown.go: `Methods: []string{http.MethodPost}`, route `shutdown`,
        // version v1.0.
        method: "POST",
        // pkg/injector/patcher/sidecar.go `SidecarListenAddresses` default
        // `[::1],127.0.0.1`.
        host: "127.0.0.1",
        // pkg/injector/patcher/sidecar.go `SidecarHTTPPort int32 default:"3500"`: not an
        // annotation, so no pod moves it.
        port: 3500,
        path: "/v1.0/shutdown",
        port_annotation: None,
        path_annotation: None,
        needs: "Dapr 1.1.1 or later",
    },
    wrapper_needs: &[],
    always: &[],
    // pkg/injector/annotations/annotations.go `KeyEnableNativeSidecar`: in tag v1.18.0, in
    // neither v1.17.0 nor v1.18.0-rc.1.
    native: Some(NativeKey {
        key: "dapr.io/enable-native-sidecar",
        on: "true",
        since: "Dapr 1.18.0 or later",
        kubernetes_since: Version::new(1, 29),
    }),
    // annotations.go `KeyAPITokenSecret`: with it, every route but the health checks needs
    // the `dapr-api-token` header, and only `daprd` gets the token.
    wrapper_blocked_by: Some((
        "dapr.io/api-token-secret",
        "Dapr then wants the `dapr-api-token` header on /v1.0/shutdown, and the injector gives \
         the token to daprd alone, not to the task",
    )),
    version_key: "daprVersion",
    version_flag: "--dapr-version",
    version_of: "Dapr",
    // pkg/http/api.go `constructShutdownEndpoints`: GET only in tag v1.1.0, GET and POST
    // from v1.1.1 (POST only at the commit above).
    quit_since: &[Semver::new(1, 1, 1)],
    native_since: &[Semver::new(1, 18, 0)],
};

/// Consul's connect injector (consul-k8s), whose `consul-dataplane` runs Envoy.
pub(crate) static CONSUL: Holder = Holder {
    name: "Consul",
    // control-plane/connect-inject/webhook/consul_dataplane_sidecar.go: the sidecar is
    // `consul-dataplane`.
    container: "consul-dataplane",
    // control-plane/connect-inject/constants/annotations_and_labels.go `AnnotationInject`;
    // webhook/mesh_webhook.go `shouldInject` reads it with `strconv.ParseBool`.
    trigger: "consul.hashicorp.com/connect-inject",
    truthy: GO,
    released_by: None,
    owns_pod: true,
    quit: Quit {
        // The dataplane's graceful-shutdown handler takes any method (hashicorp/consul-dataplane
        // pkg/consuldp/lifecycle.go); POST, as Consul's own Job tests call it.
        method: "POST",
        // consul_dataplane_sidecar.go: `-graceful-addr=` 127.0.0.1 (::1 on IPv6-only).
        host: "127.0.0.1",
        // constants/constants.go `DefaultGracefulPort = 20600`,
        // `DefaultGracefulShutdownPath = "/graceful_shutdown"`.
        port: 20600,
        path: "/graceful_shutdown",
        // annotations_and_labels.go `AnnotationSidecarProxyLifecycleGracefulPort`,
        // `AnnotationSidecarProxyLifecycleGracefulShutdownPath`.
        port_annotation: Some("consul.hashicorp.com/sidecar-proxy-lifecycle-graceful-port"),
        path_annotation: Some(
            "consul.hashicorp.com/sidecar-proxy-lifecycle-graceful-shutdown-path",
        ),
        needs: "consul-k8s 1.0.8, 1.1.3, 1.2.1 or later",
    },
    wrapper_needs: &[],
    // annotations_and_labels.go
    // `AnnotationSidecarProxyLifecycleShutdownGracePeriodSeconds`; the chart's default grace
    // period is 30 s (charts/consul/values.yaml), which the proxy lingers after the call or
    // the kubelet's SIGTERM.
    always: &[(
        "consul.hashicorp.com/sidecar-proxy-lifecycle-shutdown-grace-period-seconds",
        "0",
    )],
    // annotations_and_labels.go `AnnotationEnableConsulDataplaneAsSidecar`: in tags v1.7.5,
    // v1.8.2 and v1.9.0, in neither v1.7.4 nor v1.8.1.
    native: Some(NativeKey {
        key: "consul.hashicorp.com/enable-consul-dataplane-as-sidecar",
        on: "true",
        since: "consul-k8s 1.7.5, 1.8.2, 1.9.0 or later",
        kubernetes_since: Version::new(1, 29),
    }),
    wrapper_blocked_by: None,
    version_key: "consulK8sVersion",
    version_flag: "--consul-k8s-version",
    version_of: "consul-k8s",
    // webhook/consul_dataplane_sidecar.go passes `-graceful-port` to the dataplane in tags
    // v1.0.8, v1.1.3 and v1.2.1, and not in v1.0.7, v1.1.2 or v1.2.0. On an IPv6-only
    // cluster the dataplane listens on ::1 (`Getv4orv6Str`), which the wrapper cannot reach.
    quit_since: &[
        Semver::new(1, 0, 8),
        Semver::new(1, 1, 3),
        Semver::new(1, 2, 1),
    ],
    native_since: &[
        Semver::new(1, 7, 5),
        Semver::new(1, 8, 2),
        Semver::new(1, 9, 0),
    ],
};

/// Every holder meshjob fixes besides the run's mesh proxy, in the order the wrapper stops
/// them (after that proxy).
pub(crate) static ALL: [&Holder; 3] = [&VAULT, &DAPR, &CONSUL];

/// Whether a pod with these annotations (`get`) asks `h`'s injector to inject it.
pub(crate) fn injects<'a>(h: &Holder, get: &dyn Fn(&str) -> Option<&'a str>) -> bool {
    get(h.trigger).is_some_and(|v| h.truthy.is_on(v))
}

/// Whether such a pod gets none of `h` that keeps running (Vault's pre-populate-only).
pub(crate) fn released<'a>(h: &Holder, get: &dyn Fn(&str) -> Option<&'a str>) -> bool {
    (h.released_by.and_then(get)).is_some_and(|v| h.truthy.is_on(v))
}

/// An injector whose sidecar meshjob recognises on a pod template and leaves alone: it stops
/// by itself on the versions named, or the pod is another mesh's that meshjob cannot fix.
#[derive(Debug)]
pub(crate) struct Recognised {
    pub name: &'static str,
    /// The pod key that asks for injection, and where it is read.
    pub key: &'static str,
    pub label: bool,
    /// The values that inject (empty: any value, even `"false"`).
    pub on: &'static [&'static str],
    /// A mesh of its own: the run's mesh writes nothing on its pods.
    pub owns_pod: bool,
    /// Said as a warning (the pod may still hang), else as a note.
    pub warning: bool,
    /// The first Kubernetes on which it goes native by itself, if it does.
    pub native_from: Option<Version>,
    /// Why meshjob leaves it alone, after "`<key>`: ".
    pub why: &'static str,
}

/// Kuma / Kong Mesh: `kumahq/kuma@348b6528bc234b3c4bd7f22ad7c5bf950d6149fc`.
pub(crate) static KUMA: Recognised = Recognised {
    name: "Kuma",
    // pkg/plugins/runtime/k8s/webhooks/injector/precheck.go reads it from the pod's labels
    // (`metadata.Annotations(pod.Labels).GetEnabled(KumaSidecarInjectionAnnotation)`).
    key: "kuma.io/sidecar-injection",
    label: true,
    on: &["enabled", "true"],
    owns_pod: true,
    warning: false,
    native_from: None,
    // pkg/plugins/runtime/k8s/controllers/pod_status_controller.go: `PostQuit` to the
    // proxy's Envoy admin once the pod's other containers have ended.
    why: "Kuma's control plane asks kuma-sidecar to quit once the pod's other containers have \
          ended (Kuma 1.1+, any owner kind from 1.6), so meshjob changes nothing on this pod",
};

/// AWS App Mesh: `aws/aws-app-mesh-controller-for-k8s@7588d122c3c45e1f873d7d016a30922f049764bf`.
pub(crate) static APP_MESH: Recognised = Recognised {
    name: "AWS App Mesh",
    // pkg/inject/constants.go `AppMeshSidecarInjectAnnotation`; pkg/inject/inject.go reads
    // the pod's annotation over its Namespace's label.
    key: "appmesh.k8s.aws/sidecarInjectorWebhook",
    label: false,
    on: &["enabled"],
    owns_pod: true,
    warning: true,
    native_from: None,
    why: "AWS App Mesh injects this pod (support ends 2026-09-30); its webhook drops \
          `restartPolicy: Always` from init containers (aws/aws-app-mesh-controller-for-k8s#774), \
          which would block a native sidecar at start, so meshjob writes no native fix and does \
          not stop App Mesh's Envoy: its pod keeps running after the task",
};

/// The OpenTelemetry operator's collector sidecar:
/// `open-telemetry/opentelemetry-operator@be8944414a876f17fcdeb5a59b86b8866fb5c88e`.
pub(crate) static OTEL: Recognised = Recognised {
    name: "OpenTelemetry collector",
    // pkg/sidecar/annotation.go `Annotation` (pod or Namespace).
    key: "sidecar.opentelemetry.io/inject",
    label: false,
    on: &[],
    owns_pod: false,
    warning: false,
    // pkg/sidecar/pod.go: `restartPolicy: Always` when `NativeSidecarSupport`, which
    // internal/autodetect/main.go grants from Kubernetes 1.29.0.
    native_from: Some(Version::new(1, 29)),
    why: "the OpenTelemetry operator makes otc-container a native sidecar where Kubernetes is \
          1.29+ (operator 0.132.0 on); on older operators or clusters it keeps the pod running: \
          set it to \"false\" on batch pods there",
};

/// Azure Workload Identity's proxy:
/// `Azure/azure-workload-identity@04d01a2fc7f5024290a38f6ccaf69561cf70455d` (v1.6.0).
pub(crate) static AZURE_WI: Recognised = Recognised {
    name: "Azure Workload Identity proxy",
    // pkg/webhook/consts.go `InjectProxySidecarAnnotation`; pkg/webhook/webhook.go
    // `shouldInjectProxySidecar`: the key's presence alone injects, whatever its value.
    key: "azure.workload.identity/inject-proxy-sidecar",
    label: false,
    on: &[],
    owns_pod: false,
    warning: false,
    // pkg/webhook/webhook.go: `useNativeSidecar` when the API server is 1.32 or newer.
    native_from: Some(Version::new(1, 32)),
    why: "azure-workload-identity 1.5.0+ makes azwi-proxy a native sidecar where the API \
          server is 1.32+; older versions keep the pod running",
};

/// GKE's Cloud Storage FUSE CSI driver:
/// `GoogleCloudPlatform/gcs-fuse-csi-driver@5fcdc04a02d23b051fe89eeaa72a8235a2d3869c`.
pub(crate) static GCS_FUSE: Recognised = Recognised {
    name: "Cloud Storage FUSE",
    // pkg/webhook/mutatingwebhook.go `GcsFuseVolumeEnableAnnotation`.
    key: "gke-gcsfuse/volumes",
    label: false,
    on: &["true"],
    owns_pod: false,
    warning: false,
    // pkg/webhook/parsers.go `minimumSupportedVersion` 1.29.0 for native sidecars, unless
    // `gke-gcsfuse/enable-native-sidecar: "false"`.
    native_from: Some(Version::new(1, 29)),
    why: "the GKE driver makes gke-gcsfuse-sidecar a native sidecar on nodes 1.29+, and on \
          older nodes stops it itself when the task ends",
};

/// Every injector meshjob recognises and leaves alone.
pub(crate) static RECOGNISED: [&Recognised; 5] = [&KUMA, &APP_MESH, &OTEL, &AZURE_WI, &GCS_FUSE];
