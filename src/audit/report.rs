//! The audit's report: text grouped by top owner, or one JSON document. It names only
//! kinds, names, containers, versions, states and exit codes, in meshjob's own words: never
//! a value of the dump that a secret could be in.

use super::pod::{Holder, State};
use super::{Finding, time};
use crate::version::{Kubelets, Origin};
use std::fmt::Write as _;

/// Why a pod is held, one sentence per holding container, in the mesh's words.
pub(crate) fn causes(f: &Finding) -> Vec<String> {
    f.holding
        .iter()
        .map(|h| match h {
            Holder::Proxy { container, mesh } if f.wrapped => {
                let m = mesh.mesh();
                let port = m
                    .quit_port_annotation
                    .map(|a| format!(" (the pod annotation `{a}` moves it)"))
                    .unwrap_or_default();
                format!(
                    "{container} still runs though the tasks run meshjob's wrapper: the quit did \
                     not reach the {} proxy: check the quit port{port}, the quit URL, and a \
                     wrapper older than this proxy (run `meshjob fix` again)",
                    m.name
                )
            }
            Holder::Proxy { container, mesh } => format!(
                "a classic {} sidecar ({container}) that nothing stops: the proxy runs on after \
                 the tasks end",
                mesh.mesh().name
            ),
            Holder::Sidecar { container, why } => {
                format!("a long-running sidecar, {container}: {why}")
            }
        })
        .collect()
}

/// `Job/a -> CronJob/b`, or `no owner`.
fn chain(f: &Finding) -> String {
    if f.owners.is_empty() {
        return "no owner".into();
    }
    (f.owners.iter())
        .map(|(k, n)| format!("{k}/{n}"))
        .collect::<Vec<_>>()
        .join(" -> ")
}

/// The top owner a pod is grouped under: `CronJob/b`, or the pod itself.
fn top(f: &Finding) -> (String, String) {
    match f.owners.last() {
        Some((k, n)) => (format!("{k}/{n}"), f.namespace.clone()),
        None => (format!("Pod/{}", f.name), f.namespace.clone()),
    }
}

/// `oldest kubelet 1.29.4 (dump.yaml:120 (Node/n1 status.nodeInfo.kubeletVersion))`...
fn versions(f: &Finding) -> Vec<String> {
    let Some(s) = f.fix.support.as_ref() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(v) = &s.mesh_version {
        out.push(format!("{} {} from {}", s.mesh.name, v.value, v.origin));
    }
    match &s.kubernetes {
        Some(k) => {
            let v = match k.value {
                Kubelets::Oldest(v) => v.to_string(),
                Kubelets::AtLeast(v) => format!("{v}+"),
            };
            out.push(format!("oldest kubelet {v} from {}", k.origin));
        }
        None => out.push("oldest kubelet unknown (no Node in the dumps)".into()),
    }
    out
}

fn summary(counts: &[(State, u64)]) -> String {
    let total: u64 = counts.iter().map(|(_, n)| n).sum();
    let parts: Vec<String> = (counts.iter())
        .filter(|(_, n)| *n > 0)
        .map(|(s, n)| format!("{n} {}", s.word()))
        .collect();
    match parts.is_empty() {
        true => "0 pods".into(),
        false if total == 1 => format!("1 pod: {}", parts.join(", ")),
        false => format!("{total} pods: {}", parts.join(", ")),
    }
}

/// Where the top owner is in the repository (`--repo`), or that it is in none of its files.
fn source(f: &Finding) -> String {
    match &f.source {
        Some(s) => {
            let note = s
                .note
                .as_ref()
                .map(|n| format!(" ({n})"))
                .unwrap_or_default();
            format!("{}:{}{note}", s.path, s.line)
        }
        None => "not in the repository: the workload comes from a chart or an operator, so \
                 its fix goes there (or in the values that render it)"
            .into(),
    }
}

/// The text report: one line per top owner, then its held pods; a summary line last.
/// `searched`: a repository was searched for the top owners (`--repo`).
pub(crate) fn text(
    found: &[Finding],
    counts: &[(State, u64)],
    now: Option<i64>,
    searched: bool,
) -> String {
    let mut t = String::new();
    let mut groups: Vec<((String, String), Vec<&Finding>)> = Vec::new();
    for f in found {
        let key = top(f);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(f),
            None => groups.push((key, vec![f])),
        }
    }
    for ((owner, ns), pods) in &groups {
        let n = pods.len();
        let s = if n == 1 { "" } else { "s" };
        let _ = writeln!(t, "{owner} in {ns}: {n} held pod{s}");
        if let (true, Some(f)) = (searched, pods.first()) {
            let _ = writeln!(t, "  source:  {}", source(f));
        }
        for f in pods {
            let held = f.held_seconds.map_or("for an unknown time".into(), |h| {
                format!("for {}", time::human(h))
            });
            let _ = writeln!(t, "  {}/{} held {held} ({})", f.namespace, f.name, f.at);
            let _ = writeln!(t, "    owners:  {}", chain(f));
            let holding: Vec<String> = (f.holding.iter())
                .map(|h| match (h, &f.proxy) {
                    (Holder::Proxy { .. }, Some(p)) => {
                        format!("{} (proxy {})", h.container(), p.value)
                    }
                    _ => h.container().to_string(),
                })
                .collect();
            let _ = writeln!(t, "    holding: {}", holding.join(", "));
            let tasks: Vec<String> = (f.tasks.iter())
                .map(|(n, c)| format!("{n} exited {c}"))
                .collect();
            let _ = writeln!(t, "    tasks:   {}", tasks.join(", "));
            for c in causes(f) {
                let _ = writeln!(t, "    cause:   {c}");
            }
            let _ = writeln!(t, "    fix:     {}", f.fix.what);
            let _ = writeln!(t, "    because: {}", f.fix.why);
            for v in versions(f) {
                let _ = writeln!(t, "    version: {v}");
            }
        }
    }
    let at = now.map_or("unknown".into(), time::format);
    let _ = writeln!(
        t,
        "{} held pod{} ({}; now {at})",
        found.len(),
        if found.len() == 1 { "" } else { "s" },
        summary(counts)
    );
    t
}

fn origin(o: &Origin) -> serde_json::Value {
    o.json()
}

/// The JSON report: `held` (one entry per held pod), `summary`, `now`. `source` is the top
/// owner's document in the repository, or null (always null without `--repo`: `searched`).
pub(crate) fn json(
    found: &[Finding],
    counts: &[(State, u64)],
    now: Option<i64>,
    searched: bool,
) -> String {
    let held: Vec<serde_json::Value> = (found.iter())
        .map(|f| {
            let s = f.fix.support.as_ref();
            let mesh_version = s.and_then(|s| s.mesh_version.as_ref()).map(|v| {
                serde_json::json!({ "version": v.value.to_string(), "source": origin(&v.origin) })
            });
            let kubelet = s.and_then(|s| s.kubernetes.as_ref()).map(|k| {
                let (v, exact) = match k.value {
                    Kubelets::Oldest(v) => (v, true),
                    Kubelets::AtLeast(v) => (v, false),
                };
                serde_json::json!({
                    "version": v.to_string(), "exact": exact, "source": origin(&k.origin)
                })
            });
            serde_json::json!({
                "namespace": f.namespace,
                "name": f.name,
                "at": f.at,
                "owners": f.owners.iter().map(|(k, n)| serde_json::json!({"kind": k, "name": n})).collect::<Vec<_>>(),
                "holding": f.holding.iter().map(Holder::container).collect::<Vec<_>>(),
                "exitCodes": f.tasks.iter().map(|(n, c)| serde_json::json!({"container": n, "exitCode": c})).collect::<Vec<_>>(),
                "heldSeconds": f.held_seconds,
                "mesh": f.mesh.map(|m| m.mesh().name),
                "proxyVersion": f.proxy.as_ref().map(|p| p.value.to_string()),
                "causes": causes(f),
                "fix": {
                    "strategy": f.fix.strategy,
                    "what": f.fix.what,
                    "why": f.fix.why,
                    "meshVersion": mesh_version,
                    "oldestKubelet": kubelet,
                },
                "source": f.source.as_ref().map(|s| serde_json::json!({
                    "path": s.path, "line": s.line, "note": s.note,
                })),
            })
        })
        .collect();
    let mut summary = serde_json::Map::new();
    for (s, n) in counts {
        summary.insert(s.word().replace(' ', "_"), serde_json::json!(n));
    }
    let doc = serde_json::json!({
        "repositorySearched": searched,
        "held": held,
        "summary": summary,
        "now": now.map(time::format),
    });
    let mut t = serde_json::to_string_pretty(&doc).unwrap_or_default();
    t.push('\n');
    t
}
