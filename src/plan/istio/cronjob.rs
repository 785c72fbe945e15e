//! A `batch` CronJob's Job template metadata, for `istioctl kube-inject`.
//!
//! The webhook injects the pods the CronJob's Jobs make, and reads the pod template's
//! annotations. `istioctl kube-inject` of the CronJob itself reads
//! `spec.jobTemplate.metadata` as the pod's metadata instead, and writes what it injects
//! back there (istio/istio@86c9f01fd735 `pkg/kube/inject/inject.go` `IntoObject`, the
//! `*batch.CronJob` case; its golden `pkg/kube/inject/testdata/inject/cronjob.yaml.injected`):
//! the native-sidecar annotation and `proxy.istio.io/config` on the pod template are not seen
//! there, so a native CronJob gets `istio-proxy` as a regular container that nothing stops,
//! and a wrapped one a proxy without `EXIT_ON_ZERO_ACTIVE_CONNECTIONS`.
//!
//! So the Istio annotations meshjob writes on a CronJob's pod template are written on its
//! `spec.jobTemplate.metadata` too, and taken out of both together. That is harmless
//! elsewhere: the CronJob controller copies `jobTemplate.metadata` onto each Job it makes
//! (kubernetes/kubernetes `pkg/controller/cronjob/utils.go` `getJobFromTemplate2`), the Job
//! controller gives pods the pod template's metadata only, Istio's webhook sees pods only
//! (its `MutatingWebhookConfiguration` matches `pods`, istio/istio@86c9f01fd735
//! `manifests/charts/istio-control/istio-discovery/templates/mutatingwebhook.yaml`), and
//! `istioctl analyze` checks the annotations of Namespaces, Services, Pods and Deployments
//! only (`pkg/config/analysis/analyzers/annotations/annotations.go`).

use super::proxy_config::Desired;
use super::revert::{self, NativeAnnotation};
use crate::finding::Severity;
use crate::mesh::istio;
use crate::plan::planner::PodCx;

/// What the pod got, to be mirrored on the Job template.
pub(super) enum Mirror {
    /// The native strategy: the native annotation, meshjob's proxy config keys out.
    Native,
    /// The wrapper strategy: meshjob's native annotation out, and `proxy.istio.io/config`
    /// when something in the pod stops the proxy (`wrapped`).
    Wrapper { wrapped: bool },
    /// `none`: meshjob's additions out.
    Remove(NativeAnnotation),
}

/// Mirrors the pod's Istio annotations on its CronJob's Job template, if it has one. Only
/// the errors of that part are kept (they refuse the pod, as they would refuse the
/// injection); its notes would repeat the pod's.
pub(super) fn mirror(cx: &mut PodCx<'_, '_, '_>, d: &Desired, what: Mirror) {
    let Some(jt) = cx.pod.cronjob_job_template() else {
        return;
    };
    // A key written twice in the Job template's metadata: which copy wins is the reader's
    // choice, so the copy is not made there (the pod's own fix still is), and an error says
    // why, as for the pod's own metadata.
    let meta = jt.template.get("metadata");
    let twice = [meta, meta.and_then(|m| m.get("annotations"))]
        .into_iter()
        .flatten()
        .find_map(|n| {
            crate::locate::duplicate_key_finding(n, &cx.pod.object, "spec.jobTemplate.metadata")
        });
    if let Some(f) = twice {
        cx.out.push(f);
        return;
    }
    let mesh = cx.mesh;
    let mut out = Vec::new();
    match what {
        Mirror::Native => revert::plan(cx.ed, &jt, mesh, d, NativeAnnotation::Ensure, &mut out),
        Mirror::Wrapper { wrapped } => {
            let native = (mesh.native_sidecar_annotation, istio::NATIVE_ON);
            let replacement = wrapped.then_some(|| super::annotation::fresh_entry(d));
            let replaced =
                crate::plan::revert::drop_native(cx.ed, &jt, native, replacement, &mut out);
            if wrapped && !replaced {
                super::annotation::plan(cx.ed, &jt, d, &mut out);
            }
        }
        Mirror::Remove(native) => revert::plan(cx.ed, &jt, mesh, d, native, &mut out),
    }
    cx.out
        .extend(out.into_iter().filter(|f| f.severity == Severity::Error));
}
