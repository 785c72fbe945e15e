//! Findings about a pod that do not change its fix: values the target mesh reads otherwise
//! than the pod's author meant. Each lint reads the pod and the versions of the run, and
//! says where and what to write instead.

use super::RunContext;
use crate::config::Settings;
use crate::finding::{Finding, Rule};
use crate::mesh::{self, Marker, MarkerPlace, Reading};
use crate::pod::Pod;
use crate::yaml::tree::Entry;

/// Every lint's findings for one pod (none for a pod `meshjob.dev/ignore` leaves out).
pub(crate) fn lints(pod: &Pod<'_>, settings: &Settings, ctx: &RunContext) -> Vec<Finding> {
    let mut out = Vec::new();
    if super::pin::ignored(pod).is_some() {
        return out;
    }
    injection_values(pod, settings, ctx, &mut out);
    out
}

/// The pod's injection label or annotation (of the mesh's marker keys whose reading
/// changed between releases) whose value the target release ignores, or, with the release
/// unknown, reads otherwise than older releases did.
fn injection_values(pod: &Pod<'_>, settings: &Settings, ctx: &RunContext, out: &mut Vec<Finding>) {
    for m in mesh::ALL.iter() {
        let support = ctx.versions.support(m, settings);
        for k in m.pod_markers.iter().filter(|k| k.older.is_some()) {
            let entry = |place: &str| -> Option<(&'static str, &Entry)> {
                let e = pod.metadata()?.get(place)?.entry(k.key)?;
                Some((
                    if place == "labels" {
                        "label"
                    } else {
                        "annotation"
                    },
                    e,
                ))
            };
            let hit = match k.place {
                MarkerPlace::Label => entry("labels"),
                MarkerPlace::Annotation => entry("annotations"),
                MarkerPlace::LabelThenAnnotation => {
                    entry("labels").or_else(|| entry("annotations"))
                }
            };
            let Some((place, e)) = hit else { continue };
            let Some(value) = e.value.as_str() else {
                continue;
            };
            let means = |then: Marker| match then {
                Marker::On => "an opt-in",
                Marker::Off => "an opt-out",
            };
            let write = |then: Marker| match (then, k.on.first(), k.off.first()) {
                (Marker::On, Some(v), _) | (Marker::Off, _, Some(v)) => format!("\"{v}\""),
                _ => "a value it reads".to_string(),
            };
            let who = pod.describe();
            let message = match k.reading(value, support.release()) {
                Reading::Is(_) => continue,
                Reading::Ignored { at, older, then } => {
                    let at = at.map_or_else(String::new, |v| format!(" {v}"));
                    let origin = (support.mesh_version.as_ref())
                        .map_or_else(String::new, |s| format!(" (from {})", s.origin));
                    format!(
                        "{who}: {place} {}: \"{value}\" is not read by {}{at}{origin}, which \
                         reads only {}: it falls back to the namespace's injection default, so \
                         the pod is injected wherever its namespace is, and meshjob fixes it \
                         as such; {} before {} read it as {}: write {}",
                        k.key,
                        m.name,
                        allowed(k.on, k.off),
                        m.name,
                        older.before,
                        means(then),
                        write(then)
                    )
                }
                Reading::Disagree { older, then } => format!(
                    "{who}: {place} {}: \"{value}\" is {} to {} before {} and not read from {} \
                     on (only {} count there: the namespace's injection default decides); the \
                     {} version is unknown, so meshjob fixes the pod as if it were injected: \
                     write {}, or give {}",
                    k.key,
                    means(then),
                    m.name,
                    older.before,
                    older.before,
                    allowed(k.on, k.off),
                    m.name,
                    write(then),
                    m.version_flag
                ),
            };
            out.push(
                Finding::warning(Rule::InjectValueNotRead, e.key.start, message)
                    .with_object(Some(pod.object.clone())),
            );
        }
    }
}

/// `"true" and "false"`: the values a marker key's current reading accepts.
fn allowed(on: &[&str], off: &[&str]) -> String {
    let all: Vec<String> = on.iter().chain(off).map(|v| format!("\"{v}\"")).collect();
    match all.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}
