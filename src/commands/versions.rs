//! `meshjob versions [PATH...]`: what the manifests say about the versions a run targets,
//! where each was read, and what `auto` does with them, as text or JSON. Nothing is edited.
//!
//! The settings are those of the working directory (`--config`, else the nearest
//! `.meshjob.yaml`, then the flags), as `meshjob config` shows them; what the paths, the
//! config's `versionsFrom` and `--versions-from` say comes after the flags and the config.

use crate::config::{self, Resolver, Settings};
use crate::decide;
use crate::exit;
use crate::manifest_versions::Versions;
use crate::mesh::found::{Found, What};
use crate::mesh::{self, Support};
use crate::output::console;
use crate::output::report::Format;
use crate::paths::Spelling;
use crate::source::{self, Origin};
use crate::stream;
use crate::version::{Kubelets, Sourced};
use std::fmt::Write as _;
use std::path::Path;

/// One run of `meshjob versions`.
#[derive(Clone, Debug)]
pub(crate) struct Request {
    /// Files or directories; `-` is stdin. Empty: the working directory.
    pub paths: Vec<String>,
    /// The flags, checked.
    pub settings: Resolver,
    pub format: Format,
}

/// Runs `req`; the exit status.
pub(crate) fn run(req: &Request) -> u8 {
    let spelling = Spelling::current();
    let (settings, config_dir) = match settings(&req.settings, &spelling) {
        Ok(s) => s,
        Err(m) => return console::trouble_shown(&m),
    };
    let versions = match read(req, &settings, config_dir.as_deref(), &spelling) {
        Ok(v) => v,
        Err(m) => return console::trouble(&m),
    };
    let report = Report::new(&versions, &settings);
    let text = match req.format {
        Format::Json => {
            let mut t = serde_json::to_string_pretty(&report.json()).unwrap_or_default();
            t.push('\n');
            t
        }
        Format::Human | Format::Github | Format::Sarif => {
            let warnings: String = (report.conflicts.iter())
                .map(|c| format!("{}\n", crate::output::report::plain(&c.finding(0))))
                .collect();
            console::stderr(&warnings);
            report.text()
        }
    };
    match console::stdout(text.as_bytes()) {
        Ok(()) => exit::OK,
        Err(e) => console::trouble(&console::cannot_write_stdout(&e)),
    }
}

/// The settings of the working directory, and the directory of the config file they come
/// from.
pub(crate) fn settings(
    resolver: &Resolver,
    spelling: &Spelling,
) -> Result<(Settings, Option<std::path::PathBuf>), String> {
    let file = resolver.config_file(None, spelling);
    let config = (file.as_deref())
        .map(|abs| config::load(Path::new(&spelling.display(abs))))
        .transpose()
        .map_err(|e| e.to_string())?;
    let s = resolver
        .settings(config.as_ref())
        .map_err(|e| e.to_string())?;
    let dir = file
        .as_deref()
        .and_then(Path::parent)
        .map(Path::to_path_buf);
    Ok((s, dir))
}

/// What the paths, the config's `versionsFrom` and `--versions-from` say.
fn read(
    req: &Request,
    settings: &Settings,
    config_dir: Option<&Path>,
    spelling: &Spelling,
) -> Result<Versions, String> {
    let mut paths = req.paths.clone();
    if paths.is_empty() {
        paths.push(".".into());
    }
    let e = source::expand(&paths, spelling, None, &mut |_, _| None);
    if let Some((name, m)) = e.errors.first() {
        return Err(format!("{name}: {m}"));
    }
    let mut versions = Versions::default();
    for input in &e.inputs {
        let reader = source::open(&input.origin).map_err(|m| format!("{}: {m}", input.name))?;
        let name = match input.origin {
            Origin::File(_) => Some(input.name.as_str().into()),
            Origin::Stdin => None,
        };
        versions.extend(stream::first_pass(stream::Reader::new(reader), name).versions);
    }
    if !settings.versions_from.is_empty() {
        let v = super::versions_from::read(
            &settings.versions_from,
            config_dir,
            spelling,
            "versionsFrom",
        )?;
        versions.extend(v);
    }
    let v = super::versions_from::read(
        &req.settings.flags().versions_from,
        None,
        spelling,
        "--versions-from",
    )?;
    versions.extend(v);
    Ok(versions)
}

/// What `auto` does with a pod of a mesh that nothing else decides.
struct Auto {
    strategy: decide::Strategy,
    why: decide::Why,
}

/// What `meshjob versions` says.
struct Report<'v> {
    versions: &'v Versions,
    /// Per other holder (`mesh::holder`): its injector's version as given, where, and what
    /// `auto` does.
    holders: Vec<HolderRow>,
    /// Per mesh: the versions that decide, the proxy read, and what `auto` does.
    meshes: Vec<(Support, Option<Sourced<crate::version::Release>>, Auto)>,
    conflicts: Vec<crate::manifest_versions::Conflict>,
}

impl<'v> Report<'v> {
    fn new(versions: &'v Versions, settings: &Settings) -> Self {
        let meshes: Vec<_> = (mesh::ALL.iter())
            .map(|m| {
                let s = versions.support(m, settings);
                let (strategy, why) = decide::by_versions(&s);
                (s, versions.proxy(m), Auto { strategy, why })
            })
            .collect();
        Report {
            versions,
            holders: holder_rows(settings, &meshes),
            meshes,
            conflicts: versions.conflicts(settings),
        }
    }

    fn text(&self) -> String {
        let mut t = String::new();
        let line = |t: &mut String, what: &str, value: String, from: Option<String>| {
            let _ = match from {
                Some(from) => writeln!(t, "  {what:<16} {value:<8} {from}"),
                None => writeln!(t, "  {what:<16} {value}"),
            };
        };
        for (s, proxy, why) in &self.meshes {
            let _ = writeln!(t, "{}", s.mesh.name);
            let shown = |v: Option<(String, String)>| v.unzip();
            let (v, from) = shown(
                s.mesh_version
                    .as_ref()
                    .map(|x| (x.value.to_string(), x.origin.to_string())),
            );
            line(
                &mut t,
                "injector:",
                v.unwrap_or_else(|| "unknown".into()),
                from,
            );
            let (v, from) = shown(
                proxy
                    .as_ref()
                    .map(|x| (x.value.to_string(), x.origin.to_string())),
            );
            line(
                &mut t,
                "proxy:",
                v.unwrap_or_else(|| "unknown".into()),
                from,
            );
            let global = match s.global_native() {
                Some(true) => "on",
                Some(false) => "off",
                None => "unknown",
            };
            let from = (s.native.as_ref())
                .map(|n| format!("setting `{}` at {}", n.value.as_str(), n.origin));
            line(&mut t, "native (mesh):", global.into(), from);
            line(&mut t, "auto:", why.why.reason(), None);
        }
        for h in &self.holders {
            let _ = writeln!(t, "{}", h.name);
            let (v, from) = match &h.version {
                Some((v, from)) => (v.clone(), Some(from.clone())),
                None => (
                    "unknown".into(),
                    Some(format!("(the {}: pass {})", h.of, h.flag)),
                ),
            };
            line(&mut t, "injector:", v, from);
            line(&mut t, "auto:", h.auto.clone(), None);
        }
        let _ = writeln!(t, "Kubernetes");
        let k = self
            .meshes
            .first()
            .and_then(|(s, _, _)| s.kubernetes.as_ref());
        let (v, from) = match k {
            Some(Sourced {
                value: Kubelets::Oldest(v),
                origin,
            }) => (v.to_string(), Some(origin.to_string())),
            Some(Sourced {
                value: Kubelets::AtLeast(v),
                origin,
            }) => (
                format!("{v}+"),
                Some(format!(
                    "the skew policy's bound for the control plane at {origin}"
                )),
            ),
            None => ("unknown".into(), None),
        };
        line(&mut t, "oldest kubelet:", v, from);
        let found = self.versions.found();
        let _ = writeln!(t, "\nRead ({}):", found.len());
        for f in found {
            let p = &f.place;
            let _ = writeln!(t, "  {:<24} {:<8} {p} {:?}", what(f), f.shown(), p.text);
        }
        t
    }

    fn json(&self) -> serde_json::Value {
        let sourced = |v: String, o: &crate::version::VersionOrigin| serde_json::json!({ "version": v, "source": o.json() });
        let meshes: Vec<serde_json::Value> = (self.meshes.iter())
            .map(|(s, proxy, why)| {
                serde_json::json!({
                    "mesh": s.mesh.name,
                    "injector": s.mesh_version.as_ref().map(|x| sourced(x.value.to_string(), &x.origin)),
                    "proxy": proxy.as_ref().map(|x| sourced(x.value.to_string(), &x.origin)),
                    "native": {
                        "on": s.global_native(),
                        "setting": s.native.as_ref().map(|n| sourced(n.value.as_str().into(), &n.origin)),
                    },
                    "auto": {
                        "strategy": match why.strategy {
                            decide::Strategy::Native => "native",
                            _ => "wrapper",
                        },
                        "why": why.why.reason(),
                    },
                })
            })
            .collect();
        let k = self
            .meshes
            .first()
            .and_then(|(s, _, _)| s.kubernetes.as_ref());
        let kubernetes = k.map(|k| match k.value {
            Kubelets::Oldest(v) => serde_json::json!({
                "oldestKubelet": v.to_string(), "exact": true, "source": k.origin.json()
            }),
            Kubelets::AtLeast(v) => serde_json::json!({
                "oldestKubelet": v.to_string(), "exact": false, "source": k.origin.json()
            }),
        });
        let found: Vec<serde_json::Value> = (self.versions.found().iter())
            .map(|f| {
                serde_json::json!({
                    "of": what(f),
                    "version": f.value.map(|_| f.shown()),
                    "source": crate::version::VersionOrigin::Read(f.place.clone()).json(),
                })
            })
            .collect();
        let warnings: Vec<serde_json::Value> = (self.conflicts.iter())
            .map(|c| {
                let f = c.finding(0);
                serde_json::json!({ "code": f.rule.code(), "message": f.message })
            })
            .collect();
        let holders: Vec<serde_json::Value> = (self.holders.iter())
            .map(|h| {
                serde_json::json!({
                    "holder": h.name,
                    "injector": h.version.as_ref().map(|(v, _)| serde_json::json!({
                        "version": v, "source": h.origin.as_ref().map(crate::version::VersionOrigin::json),
                    })),
                    "auto": { "strategy": if h.native { "native" } else { "wrapper" }, "why": h.auto },
                })
            })
            .collect();
        serde_json::json!({
            "meshes": meshes,
            "holders": holders,
            "kubernetes": kubernetes,
            "found": found,
            "warnings": warnings,
        })
    }
}

/// `Istio injector`, `Kubernetes kubelet`, ...
fn what(f: &Found) -> String {
    match f.what {
        What::Injector(m) => format!("{} injector", m.mesh().name),
        What::Proxy(m) => format!("{} proxy", m.mesh().name),
        What::Native(m) => format!("{} native (mesh)", m.mesh().name),
        What::QuitPort(m) => format!("{} quit port (mesh)", m.mesh().name),
        What::Kubelet => "Kubernetes kubelet".into(),
        What::ControlPlane => "Kubernetes control plane".into(),
    }
}

/// One holder other than the mesh proxies, as `meshjob versions` shows it.
struct HolderRow {
    name: &'static str,
    of: &'static str,
    flag: &'static str,
    /// Its injector's version and where it was given.
    version: Option<(String, String)>,
    origin: Option<crate::version::VersionOrigin>,
    native: bool,
    auto: String,
}

/// What the settings say of each holder's injector, and what `auto` does with its pods.
fn holder_rows(
    settings: &Settings,
    meshes: &[(Support, Option<Sourced<crate::version::Release>>, Auto)],
) -> Vec<HolderRow> {
    let kubelets = meshes.first().and_then(|(s, _, _)| s.kubelets());
    (mesh::holder::ALL.iter())
        .map(|h| {
            let v = settings.holder_versions.get(h.version_key).copied();
            let origin = settings.given.holders.get(h.version_key).cloned();
            let new_kubelets = |since| match kubelets {
                Some(Kubelets::Oldest(k) | Kubelets::AtLeast(k)) => k >= since,
                None => false,
            };
            let (native, auto) = match (&h.native, v) {
                (None, _) => (
                    false,
                    format!("the wrapper: no {} release runs a native sidecar", h.name),
                ),
                (Some(n), Some(v)) if v.at_least_any(h.native_since) => {
                    if new_kubelets(n.kubernetes_since) {
                        (true, format!("native sidecar (`{}`)", n.key))
                    } else {
                        (
                            false,
                            format!(
                                "the wrapper, unless every kubelet is {}+",
                                n.kubernetes_since
                            ),
                        )
                    }
                }
                (Some(n), Some(_)) => {
                    (false, format!("the wrapper: `{}` needs {}", n.key, n.since))
                }
                (Some(n), None) => (
                    false,
                    format!(
                        "the wrapper: the version is unknown (`{}` needs {})",
                        n.key, n.since
                    ),
                ),
            };
            HolderRow {
                name: h.name,
                of: h.version_of,
                flag: h.version_flag,
                version: v.map(|v| {
                    (
                        v.to_string(),
                        origin
                            .as_ref()
                            .map_or_else(String::new, ToString::to_string),
                    )
                }),
                origin,
                native,
                auto,
            }
        })
        .collect()
}
