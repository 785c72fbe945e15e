//! Argo Workflows' kill command, the fallback where native sidecars are impossible and the
//! wrapper would break the artifact upload: the pod annotation
//! `workflows.argoproj.io/kill-cmd-<proxy container>` (the kind's [`Fallback`]) holds the
//! command the workflow controller runs in the proxy container once the main containers
//! end (the mesh's `argo_kill`), with the annotations that command needs. A native
//! annotation meshjob wrote comes out; when a later run picks another fix, meshjob's kill
//! command comes out ([`take_out`], from each mesh's planner).

use super::annotation;
use super::planner::PodCx;
use super::revert::drop_native;
use crate::finding::{Finding, Rule, describe};
use crate::kinds::Fallback;
use crate::mesh::Mesh;
use crate::pod::Pod;
use crate::yaml::emit::Out;
use crate::yaml::tree::Node;
use crate::yaml::value::Value;

/// The kill-command annotation of `mesh` for a pod, with meshjob's value, when the pod's
/// kind has that fallback.
fn kill_annotation(t: &Pod<'_>, mesh: &Mesh) -> Option<(String, &'static str)> {
    match t.fallback? {
        Fallback::KillCommand { prefix } => Some((
            format!("{prefix}{}", mesh.proxy_container),
            mesh.argo_kill.argv,
        )),
    }
}

/// An annotation value: single-quoted when it can be, as Argo's docs write the JSON argv
/// (`'["pilot-agent", ...]'`), rather than double-quoted with every `"` escaped.
fn text(v: &str) -> Out {
    if v.contains(['\'', '\n']) || !v.starts_with('[') {
        return Out::Str(v.to_string());
    }
    Out::Raw {
        text: format!("'{v}'"),
        value: Value::str(v.to_string()),
        flow_safe: true,
    }
}

/// Plans the fallback for one pod.
pub(crate) fn plan(cx: &mut PodCx<'_, '_, '_>) {
    let (pod, mesh) = (cx.pod, cx.mesh);
    let Some((key, argv)) = kill_annotation(pod, mesh) else {
        return;
    };
    let mut wanted: Vec<(&str, &str)> = vec![(key.as_str(), argv)];
    wanted.extend(mesh.argo_kill.needs.iter().copied());
    // meshjob's native annotations (an earlier run with other versions) come out, when
    // they are what makes the pod native; the kill command may take the place of one.
    let effective = (mesh.native_sidecar_annotations.iter()).find_map(|k| pod.annotation(k));
    let mut replaced = false;
    if effective == Some(mesh.native.on) {
        for native_key in mesh.native_sidecar_annotations {
            let replacement = (!replaced).then_some(|| (key.as_str(), text(argv)));
            replaced |= drop_native(
                cx.ed,
                pod,
                (native_key, mesh.native.on),
                replacement,
                cx.out,
            );
        }
    }
    let rest = &wanted[usize::from(replaced)..];
    let keys: Vec<&str> = rest.iter().map(|(k, _)| *k).collect();
    let value = |i: usize, _| text(rest[i].1);
    let existing = annotation::ensure_all(cx.ed, pod, &keys, &value, cx.out);
    let anns = pod.annotations();
    for ((k, v), e) in rest.iter().zip(existing) {
        let (Some(e), Some(anns)) = (e, anns) else {
            continue;
        };
        let written = e.value.as_str();
        if written == Some(*v) {
            continue;
        }
        if cx.settings.force {
            let apath = pod.annotations_path();
            cx.ed
                .replace_value(anns, &e.key, &e.value, &apath, k, &text(v));
            continue;
        }
        cx.out.push(
            Finding::warning(
                Rule::KeptUserValue,
                e.value.start,
                format!(
                    "{}: keeping `{k}: {}`: the fallback needs {v} (use --force to set it)",
                    describe(&pod.object),
                    written.unwrap_or("(not a string)")
                ),
            )
            .with_object(Some(pod.object.clone())),
        );
    }
}

/// The keys of meshjob's kill command in annotations `anns` of a pod, when it holds
/// meshjob's value, to take out (with a note) by a planner that picked another fix. The
/// annotations it needs are each mesh's own and come out with the mesh's other settings.
pub(crate) fn take_out<'n>(
    t: &Pod<'_>,
    mesh: &Mesh,
    anns: &'n Node,
    out: &mut Vec<Finding>,
) -> Option<&'n str> {
    let (key, argv) = kill_annotation(t, mesh)?;
    let e = anns.entry(&key)?;
    if e.value.as_str() != Some(argv) {
        return None;
    }
    out.push(
        Finding::info(
            Rule::SettingRemoved,
            e.key.start,
            format!("{}: {key} taken out", describe(&t.object)),
        )
        .with_object(Some(t.object.clone())),
    );
    e.key.as_str()
}
