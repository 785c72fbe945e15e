//! The audit's report: text grouped by top owner, or one JSON document. It names only
//! kinds, names, containers, versions, states and exit codes, in meshjob's own words: never
//! a value of the dump that a secret could be in.

use super::pod::{Holder, State};
use super::{Finding, time};
use crate::version::{Kubelets, VersionOrigin};
use std::fmt::Write as _;

/// Why a pod is held, one sentence per holding container, in the mesh's words.
pub(crate) fn causes(f: &Finding) -> Vec<String> {
    f.holding
        .iter()
        .map(|h| match h {
            Holder::Proxy { container, mesh } if f.wrapped => {
                let m = mesh.mesh();
                let config = (m.quit_port_config_keys.first())
                    .map(|k| {
                        format!(
                            ", or `{k}` in {} or the mesh's config,",
                            m.pod_config_annotation
                        )
                    })
                    .unwrap_or_default();
                let port = m
                    .quit_port_annotation
                    .map(|a| format!(" (the pod annotation `{a}`{config} moves it)"))
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
            Holder::Agent { container, holder } => {
                let q = &holder.quit;
                let native = holder.native.as_ref().map_or_else(String::new, |n| {
                    format!(
                        " ({}: `{}: \"{}\"` makes it a native sidecar)",
                        n.since, n.key, n.on
                    )
                });
                let asked = if f.wrapped {
                    "though the tasks run meshjob's wrapper: the quit did not reach it (a \
                     wrapper older than meshjob's holders? run `meshjob fix` again)"
                } else {
                    "that nothing stops"
                };
                format!(
                    "{}'s {container} {asked}: it runs on after the tasks end; `meshjob fix` \
                     has the wrapper {} http://{}:{}{} ({}){native}",
                    holder.name, q.method, q.host, q.port, q.path, q.needs
                )
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

/// `oldest kubelet 1.29.4 (dump.yaml:120 (Node/n1 status.nodeInfo.kubeletVersion))`...
fn versions(f: &Finding) -> Vec<String> {
    let Some(s) = f.fix.support.as_ref() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(v) = &s.mesh_version {
        let shown = full_version(&v.value.to_string(), &v.origin);
        out.push(format!("{} {shown} from {}", s.mesh.name, v.origin));
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

/// The version as the place it was read writes it, when that says more than the minor
/// meshjob decides by: an injected proxy's image `.../proxyv2:1.26.2` gives `1.26.2`, its
/// annotation `stable-2.14.10` gives `2.14.10`; else `minor` (`1.26`).
fn full_version(minor: &str, origin: &VersionOrigin) -> String {
    let Some(place) = origin.place() else {
        return minor.to_string();
    };
    let text = place.text.as_str();
    let tag = crate::mesh::found::image_tag(text).map_or(text, |(_, tag)| tag);
    // The first run of digits and dots that begins with the minor, followed by a patch.
    let at = (0..tag.len())
        .filter(|&i| tag.is_char_boundary(i))
        .find(|&i| {
            tag[i..].starts_with(minor)
                && (i == 0 || !tag.as_bytes()[i - 1].is_ascii_digit())
                && tag[i + minor.len()..].starts_with('.')
        });
    let Some(at) = at else {
        return minor.to_string();
    };
    let rest = &tag[at + minor.len() + 1..];
    let patch: &str = &rest[..rest.bytes().take_while(u8::is_ascii_digit).count()];
    if patch.is_empty() {
        minor.to_string()
    } else {
        format!("{minor}.{patch}")
    }
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

/// The line of a top owner in the text report (`owner`: `CronJob/b`, or the pod itself),
/// with its `source:` line under `--repo` (`searched`), taken from its first pod.
pub(crate) fn text_owner(t: &mut String, (owner, ns): (&str, &str), n: usize, first: &Finding) {
    let s = if n == 1 { "" } else { "s" };
    let _ = writeln!(t, "{owner} in {ns}: {n} held pod{s}");
    if first.searched {
        let _ = writeln!(t, "  source:  {}", source(first));
    }
}

/// A held pod in the text report, under its owner's line.
pub(crate) fn text_pod(t: &mut String, f: &Finding) {
    let held = f.held_seconds.map_or("for an unknown time".into(), |h| {
        format!("for {}", time::human(h))
    });
    let _ = writeln!(t, "  {}/{} held {held} ({})", f.namespace, f.name, f.at);
    let _ = writeln!(t, "    owners:  {}", chain(f));
    let holding: Vec<String> = (f.holding.iter())
        .map(|h| match (h, &f.proxy) {
            (Holder::Proxy { .. }, Some(p)) => format!("{} (proxy {})", h.container(), p.value),
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

/// The text report's last line: how many pods are held, the count per state, and `now`.
pub(crate) fn text_summary(held: usize, counts: &[(State, u64)], now: Option<i64>) -> String {
    let at = now.map_or("unknown".into(), time::format);
    let s = if held == 1 { "" } else { "s" };
    format!("{held} held pod{s} ({}; now {at})\n", summary(counts))
}

fn origin(o: &VersionOrigin) -> serde_json::Value {
    o.json()
}

/// The JSON report, one document written in parts so that no held pod waits in memory as
/// JSON: [`JSON_HEAD`], each entry ([`json_entry`], after a `,` from the second on), then
/// [`json_tail`]. Keys are in serde_json's order (sorted), as a whole document would have
/// them: `held`, `now`, `repositorySearched`, `summary`.
pub(crate) const JSON_HEAD: &str = "{\n  \"held\": [";

/// A held pod's entry: `\n` and the object, indented as an item of `held`.
pub(crate) fn json_entry(f: &Finding) -> String {
    let s = f.fix.support.as_ref();
    let mesh_version = s.and_then(|s| s.mesh_version.as_ref()).map(
        |v| serde_json::json!({ "version": v.value.to_string(), "source": origin(&v.origin) }),
    );
    let kubelet = s.and_then(|s| s.kubernetes.as_ref()).map(|k| {
        let (v, exact) = match k.value {
            Kubelets::Oldest(v) => (v, true),
            Kubelets::AtLeast(v) => (v, false),
        };
        serde_json::json!({
            "version": v.to_string(), "exact": exact, "source": origin(&k.origin)
        })
    });
    let v = serde_json::json!({
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
    });
    let pretty = serde_json::to_string_pretty(&v).unwrap_or_default();
    // A string's line breaks are escaped in JSON, so each line is a line of the layout.
    let mut out = String::with_capacity(pretty.len() + pretty.len() / 8);
    for line in pretty.lines() {
        out.push_str("\n    ");
        out.push_str(line);
    }
    out
}

/// The end of the JSON report, after `n` entries: the `held` array closed, `now`,
/// `repositorySearched` (`--repo` was given, so a null `source` means found nowhere) and
/// `summary` (the count of pods per state).
pub(crate) fn json_tail(
    n: usize,
    counts: &[(State, u64)],
    now: Option<i64>,
    searched: bool,
) -> String {
    let mut summary = serde_json::Map::new();
    for (s, n) in counts {
        summary.insert(s.word().replace(' ', "_"), serde_json::json!(n));
    }
    let doc = serde_json::json!({
        "held": [],
        "repositorySearched": searched,
        "summary": summary,
        "now": now.map(time::format),
    });
    let whole = serde_json::to_string_pretty(&doc).unwrap_or_default();
    // The rest of the document after its empty `held`, as serde_json lays it out.
    let rest = whole.split_once("[]").map_or("", |(_, r)| r);
    let close = if n == 0 { "]" } else { "\n  ]" };
    format!("{close}{rest}\n")
}

#[cfg(test)]
mod tests {
    use super::full_version;
    use crate::version::{ManifestPlace, VersionOrigin};
    use std::sync::Arc;

    #[test]
    fn the_full_version_the_place_writes() {
        let read = |text: &str| {
            VersionOrigin::Read(Arc::new(ManifestPlace {
                file: None,
                offset: 0,
                line: 1,
                col: 1,
                object: String::new(),
                field: String::new(),
                text: text.to_string(),
            }))
        };
        let f = |minor, text| full_version(minor, &read(text));
        assert_eq!(f("1.26", "docker.io/istio/proxyv2:1.26.2"), "1.26.2");
        assert_eq!(
            f("1.26", "gcr.io/istio-release/proxyv2:1.26.2-distroless"),
            "1.26.2"
        );
        assert_eq!(
            f("1.22", "localhost:5000/istio/proxyv2:1.22.3@sha256:ab"),
            "1.22.3"
        );
        assert_eq!(f("2.14", "stable-2.14.10"), "2.14.10");
        assert_eq!(f("1.26", "docker.io/istio/proxyv2:1.26"), "1.26");
        assert_eq!(f("1.2", "istio/proxyv2:11.2.5"), "1.2");
        assert_eq!(
            full_version("1.26", &VersionOrigin::Flag("--istio-version")),
            "1.26"
        );
    }
}
