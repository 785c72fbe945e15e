//! `meshjob audit [DUMP...]`: which batch pods of a saved cluster dump are held by a
//! sidecar that outlives their tasks, what holds each, and the fix meshjob would give its
//! workload. It reads what `kubectl get pods,nodes,jobs,cronjobs -A -o yaml|json` saved
//! and never talks to a cluster.
//!
//! Each dump is read in bounded memory ([`read`]); a pod is judged on its own ([`pod`]);
//! owner chains, versions and fixes are put together once every dump is read, since an
//! owner or a Node may come after the pods it concerns; [`report`] writes the result.

mod pod;
mod read;
mod repo;
mod report;
mod time;

use crate::config::{Resolver, Settings};
use crate::decide::{self, Strategy};
use crate::exit;
use crate::kinds::{Fallback, Lookup, Wrapper};
use crate::mesh::{MeshId, Support};
use crate::output::console;
use crate::paths::Spelling;
use crate::source::{self, Origin};
use crate::version::{Release, Sourced};
use pod::{Holder, Ref, State};
use read::HeldAt;
use read::{Dump, Owner};
use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;

/// One run of `meshjob audit`.
#[derive(Clone, Debug)]
pub(crate) struct Request {
    /// Dump files; `-` is stdin. Empty: stdin.
    pub dumps: Vec<String>,
    /// The flags, checked.
    pub settings: Resolver,
    /// `--now`, as given.
    pub now: Option<String>,
    pub json: bool,
    /// `--repo` paths: where the top owners' manifests are looked for.
    pub repo: Vec<String>,
}

/// A held pod, put together: what the report says of it.
#[derive(Debug)]
pub(crate) struct Finding {
    pub namespace: String,
    pub name: String,
    /// `file:line` (or `line N` on stdin) of the pod in its dump.
    pub at: String,
    /// From the pod's owner up to the top one.
    pub owners: Vec<(String, String)>,
    pub holding: Vec<Holder>,
    pub tasks: Vec<(String, i64)>,
    pub held_seconds: Option<i64>,
    pub proxy: Option<Sourced<Release>>,
    pub mesh: Option<MeshId>,
    pub wrapped: bool,
    pub fix: Fix,
    /// The top owner's document in the repository (`--repo`); `None` there when it is in
    /// none of its files, or when no `--repo` was given.
    pub source: Option<repo::Source>,
    /// A repository was searched (`--repo`), so `source: None` means found nowhere.
    pub searched: bool,
}

/// The fix meshjob would write for a held pod's workload.
#[derive(Debug)]
pub(crate) struct Fix {
    /// `native`, `wrapper`, `fallback` (the kind's own, Argo's kill command) or `none`.
    pub strategy: &'static str,
    /// What it writes, in words.
    pub what: String,
    /// Why that fix, with the versions it used and where each came from.
    pub why: String,
    pub support: Option<Support>,
}

/// Runs `req`; the exit status: 0 when no pod is held, 1 when some are, 2 when a dump
/// cannot be read.
pub(crate) fn run(req: &Request) -> u8 {
    let spelling = Spelling::current();
    let settings = match crate::commands::versions::settings(&req.settings, &spelling) {
        Ok((s, _)) => s,
        Err(m) => return console::trouble_shown(&m),
    };
    let now = match req.now.as_deref().map(|t| (t, time::parse(t))) {
        Some((t, None)) => {
            return console::trouble(&format!(
                "--now {t:?} is not an RFC 3339 time such as 2024-05-01T12:00:00Z"
            ));
        }
        Some((_, n)) => n,
        None => None,
    };
    let mut dumps = req.dumps.clone();
    if dumps.is_empty() {
        dumps.push("-".into());
    }
    let mut all = Dump::default();
    for name in &dumps {
        let (origin, file) = if name == "-" {
            (Origin::Stdin, None)
        } else {
            let p = std::path::PathBuf::from(name);
            (Origin::File(p), Some(Arc::<str>::from(name.as_str())))
        };
        let shown = file.as_deref().unwrap_or("stdin").to_string();
        let input = match source::open(&origin) {
            Ok(i) => i,
            Err(m) => return console::trouble(&format!("{shown}: {m}")),
        };
        match read::read(input, file, &settings.kinds, &settings.sidecars) {
            Ok(d) => all.add(d),
            Err(e) => {
                let at = e.at.map(|(l, c)| format!(":{l}:{c}")).unwrap_or_default();
                return console::trouble(&format!("{shown}{at}: {}", e.message));
            }
        }
    }
    let now = now.or(all.newest);
    let mut repo = None;
    if !req.repo.is_empty() {
        match repo::Repo::read(&req.repo, &spelling) {
            Ok(r) => repo = Some(r),
            Err(m) => return console::trouble(&m),
        }
    }
    let counts: Vec<(State, u64)> = (State::ALL.iter().copied())
        .zip(all.counts.iter().copied())
        .collect();
    let mut judge = Judge {
        d: &all,
        owners: Owners::new(&all.owners),
        settings: &settings,
        now,
        repo: repo.as_mut(),
    };
    // Each held pod is put together as it is written, never all of them at once: what
    // waits in memory is the dump's small record of each.
    let mut out = console::stdout_writer();
    let written = match req.json {
        true => judge.json(&mut out, &counts),
        false => judge.text(&mut out, &counts),
    }
    .and_then(|()| out.flush());
    drop(out);
    if let Err(e) = written {
        return console::trouble(&console::cannot_write_stdout(&e));
    }
    if let Some(r) = &repo {
        for (name, why) in &r.skipped {
            console::stderr(&format!(
                "meshjob: warning: --repo {name}: skipped: {why}\n"
            ));
        }
        // The text report goes on with the fix of each matched file, as `meshjob diff`
        // prints it; the JSON report names the files (`source`) and stays one document.
        if !req.json
            && !r.files.is_empty()
            && let Some(code) = repo_diff(req, &r.files, &all)
        {
            return code;
        }
    }
    if all.held.is_empty() {
        exit::OK
    } else {
        exit::FINDINGS
    }
}

/// Prints the fix of `files` as `meshjob diff` does, with the audit's settings flags and,
/// where they name no Kubernetes version, the oldest kubelet of the dumps' Nodes (the
/// version the audit's fix was decided with). `Some` exit status when the diff could not
/// be made.
fn repo_diff(req: &Request, files: &[String], all: &Dump) -> Option<u8> {
    use crate::commands::files;
    let mut settings = req.settings.clone();
    if settings.flags().kubernetes_version().is_none() {
        // Only an exact oldest kubelet: a control plane's bound is not a kubelet's version.
        if let Some(crate::version::Kubelets::Oldest(k)) = all.versions.kubelets().map(|k| k.value)
        {
            settings.flags_mut().set_kubernetes_version(k);
        }
    }
    let heading = match files.len() {
        1 => "\nThe fix in the repository (meshjob diff on the matched file):\n".to_string(),
        n => format!("\nThe fix in the repository (meshjob diff on the {n} matched files):\n"),
    };
    if let Err(e) = console::stdout(heading.as_bytes()) {
        return Some(console::trouble(&console::cannot_write_stdout(&e)));
    }
    let diff = files::Request {
        mode: files::Mode::Diff,
        paths: files.iter().map(Into::into).collect(),
        settings,
        exclude: Vec::new(),
        stdin_filename: None,
        force_mesh: false,
        color: console::ColorChoice::Never,
        format: crate::output::report::Format::Human,
        quiet: true,
        less: files::Less::default(),
    };
    match files::run(&diff) {
        exit::OK | exit::FINDINGS => None,
        code => Some(code),
    }
}

/// Owner chains from the owner references and the owners the dumps hold.
struct Owners<'d> {
    by_uid: HashMap<&'d str, &'d Owner>,
    by_name: HashMap<(&'d str, &'d str, &'d str), &'d Owner>,
}

impl<'d> Owners<'d> {
    fn new(owners: &'d [Owner]) -> Self {
        let mut by_uid = HashMap::new();
        let mut by_name = HashMap::new();
        for o in owners {
            by_uid.insert(o.uid.as_str(), o);
            by_name.insert((o.namespace.as_str(), o.kind.as_str(), o.name.as_str()), o);
        }
        Owners { by_uid, by_name }
    }

    /// The chain from `first` (an owner of an object of `namespace`) up: each owner's
    /// reference, as far as the dumps hold the owners.
    fn chain(&self, first: &Ref, namespace: &str) -> Vec<Ref> {
        let mut out = vec![first.clone()];
        while out.len() < 16 {
            let Some(last) = out.last() else { break };
            let found = (self
                .by_uid
                .get(last.uid.as_str())
                .filter(|_| !last.uid.is_empty()))
            .or_else(|| {
                let key = (namespace, last.kind.as_str(), last.name.as_str());
                self.by_name.get(&key)
            });
            let Some(parent) = found.and_then(|o| o.parent.clone()) else {
                break;
            };
            if out
                .iter()
                .any(|r| r.uid == parent.uid && r.name == parent.name)
            {
                break;
            }
            out.push(parent);
        }
        out
    }
}

/// What puts a held pod together: the dumps, their owners, the settings, the time held
/// pods are measured against, and the repository (`--repo`).
struct Judge<'d> {
    d: &'d Dump,
    owners: Owners<'d>,
    settings: &'d Settings,
    now: Option<i64>,
    repo: Option<&'d mut repo::Repo>,
}

impl Judge<'_> {
    /// The owner chain of a held pod, from its owner up.
    fn chain(&self, h: &HeldAt) -> Vec<Ref> {
        match &h.pod.owner {
            Some(o) => self.owners.chain(o, &h.pod.namespace),
            None => Vec::new(),
        }
    }

    /// The held pod `h`, put together.
    fn finding(&mut self, h: &HeldAt) -> Finding {
        let p = &h.pod;
        let chain = self.chain(h);
        let mesh = p.holding.iter().find_map(|x| match x {
            Holder::Proxy { mesh, .. } => Some(*mesh),
            Holder::Sidecar { .. } | Holder::Agent { .. } => None,
        });
        let proxy = mesh.and_then(|m| h.proxy.proxy(m.mesh()));
        let agent = p.holding.iter().find_map(|x| match x {
            Holder::Agent { holder, .. } => Some(*holder),
            _ => None,
        });
        let fix = match (mesh, agent) {
            (None, Some(holder)) => agent_fix(holder, self.settings),
            _ => fix(mesh, proxy.as_ref(), chain.last(), self.d, self.settings),
        };
        let at = match &h.file {
            Some(f) => format!("{f}:{}", h.line),
            None => format!("line {}", h.line),
        };
        let (kind, name) = match chain.last() {
            Some(r) => (r.kind.as_str(), r.name.as_str()),
            None => ("Pod", p.name.as_str()),
        };
        let source = (self.repo.as_mut()).and_then(|r| r.find(kind, name, &p.namespace));
        Finding {
            namespace: p.namespace.clone(),
            name: p.name.clone(),
            at,
            owners: chain.into_iter().map(|r| (r.kind, r.name)).collect(),
            holding: p.holding.clone(),
            tasks: p.tasks.clone(),
            held_seconds: self.now.zip(p.last_finished).map(|(n, f)| (n - f).max(0)),
            proxy,
            mesh,
            wrapped: p.wrapped,
            fix,
            source,
            searched: self.repo.is_some(),
        }
    }

    /// The text report: the held pods grouped by top owner (`CronJob/b in ns`, or the pod
    /// itself), the groups in the order of their first pod in the dumps; a summary line.
    fn text(&mut self, out: &mut impl Write, counts: &[(State, u64)]) -> std::io::Result<()> {
        let d = self.d;
        let mut index: HashMap<(String, String), usize> = HashMap::new();
        let mut groups: Vec<((String, String), Vec<usize>)> = Vec::new();
        for (i, h) in d.held.iter().enumerate() {
            let top = match self.chain(h).pop() {
                Some(r) => format!("{}/{}", r.kind, r.name),
                None => format!("Pod/{}", h.pod.name),
            };
            let key = (top, h.pod.namespace.clone());
            match index.get(&key) {
                Some(&g) => groups[g].1.push(i),
                None => {
                    index.insert(key.clone(), groups.len());
                    groups.push((key, vec![i]));
                }
            }
        }
        drop(index);
        let mut t = String::new();
        for ((owner, ns), pods) in &groups {
            for (n, &i) in pods.iter().enumerate() {
                let f = self.finding(&d.held[i]);
                if n == 0 {
                    report::text_owner(&mut t, (owner, ns), pods.len(), &f);
                }
                report::text_pod(&mut t, &f);
                out.write_all(t.as_bytes())?;
                t.clear();
            }
        }
        out.write_all(report::text_summary(d.held.len(), counts, self.now).as_bytes())
    }

    /// The JSON report: one entry per held pod, in dump order.
    fn json(&mut self, out: &mut impl Write, counts: &[(State, u64)]) -> std::io::Result<()> {
        let d = self.d;
        out.write_all(report::JSON_HEAD.as_bytes())?;
        for (i, h) in d.held.iter().enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            let f = self.finding(h);
            out.write_all(report::json_entry(&f).as_bytes())?;
        }
        let searched = self.repo.is_some();
        let tail = report::json_tail(d.held.len(), counts, self.now, searched);
        out.write_all(tail.as_bytes())
    }
}

/// The fix meshjob would write for a workload whose top owner is `top`, decided by the
/// versions (`decide::by_versions`: the oldest kubelet of the dumps' Nodes, the mesh's
/// release from the pod's own proxy, or the flags and the config), then held to what the
/// top owner's kind allows (the kinds table).
/// The fix of a pod held by an injected agent alone (`mesh::holder`): what `meshjob fix`
/// writes for it, from the versions the settings give.
fn agent_fix(h: &'static crate::mesh::holder::Holder, settings: &Settings) -> Fix {
    let version = settings.holder_versions.get(h.version_key);
    let native = h
        .native
        .as_ref()
        .filter(|_| version.is_some_and(|v| v.at_least_any(h.native_since)));
    let q = &h.quit;
    let (strategy, what) = match native {
        Some(n) => (
            "native",
            format!("the pod annotation `{}: \"{}\"`", n.key, n.on),
        ),
        None => (
            "wrapper",
            format!(
                "the wrapper: each task container's entrypoint is wrapped to {} \
                 http://{}:{}{} when the task ends{}",
                q.method,
                q.host,
                q.port,
                q.path,
                h.wrapper_needs
                    .iter()
                    .map(|(k, v)| format!(", with `{k}: \"{v}\"`"))
                    .collect::<String>()
            ),
        ),
    };
    let why = match version {
        Some(v) => format!("{} {v} (from {})", h.version_of, h.version_flag),
        None => format!(
            "the {} version is unknown (pass {}): the wrapper needs {}",
            h.version_of, h.version_flag, q.needs
        ),
    };
    Fix {
        strategy,
        what: format!("{what} (`meshjob fix` on the workload's manifest)"),
        why,
        support: None,
    }
}

fn fix(
    mesh: Option<MeshId>,
    proxy: Option<&Sourced<Release>>,
    top: Option<&Ref>,
    d: &Dump,
    settings: &Settings,
) -> Fix {
    let Some(mesh) = mesh.map(MeshId::mesh) else {
        return user_sidecar_fix(d, settings);
    };
    let mut support = d.versions.support(mesh, settings);
    if support.mesh_version.is_none() {
        support.mesh_version = proxy.cloned();
    }
    let (mut strategy, why) = decide::by_versions(&support);
    let row = top.and_then(|t| match settings.kinds.lookup(&t.api_version, &t.kind) {
        Lookup::Row(r) | Lookup::UnknownVersion(r) => Some(r),
        Lookup::None => None,
    });
    let mut why = why.reason();
    if let Some(r) = row {
        if strategy == Strategy::Native && !r.fixes.native {
            strategy = Strategy::Wrapper;
            why = format!("{}s allow only the wrapper", r.kind);
        }
        let never = match r.fixes.wrapper {
            Wrapper::Never(w) => Some(w),
            _ => None,
        };
        let fallback = r.templates.iter().find_map(|t| t.fallback);
        if let (Strategy::Wrapper, Some(_), Some(Fallback::KillCommand { prefix })) =
            (strategy, never, fallback)
        {
            return Fix {
                strategy: "fallback",
                what: format!(
                    "the kill command: the pod metadata gets the annotation `{prefix}{}`, a \
                     command the controller runs in the proxy to stop it once the main \
                     containers end",
                    mesh.proxy_container
                ),
                why,
                support: Some(support),
            };
        }
        if let (Strategy::Wrapper, Some(w)) = (strategy, never) {
            return Fix {
                strategy: "none",
                what: format!(
                    "none that meshjob writes: a {} takes no wrapper ({w}), and native sidecars \
                     need newer versions or versions meshjob knows",
                    r.kind
                ),
                why,
                support: Some(support),
            };
        }
    }
    let what = match strategy {
        Strategy::Native => format!(
            "native sidecars: the pod template gets the annotation `{}: \"{}\"`, and the \
             kubelet stops {} after the tasks",
            mesh.native_key(support.release()),
            mesh.native.on,
            mesh.proxy_container
        ),
        _ => format!(
            "the wrapper: each task container's entrypoint is wrapped to stop {} when the task \
             ends (`meshjob fix` on the workload's manifest)",
            mesh.proxy_container
        ),
    };
    Fix {
        strategy: match strategy {
            Strategy::Native => "native",
            _ => "wrapper",
        },
        what,
        why,
        support: Some(support),
    }
}

/// The fix for a pod that one of the user's own sidecars holds (no mesh proxy): on Kubernetes
/// 1.29+ meshjob moves the sidecar to `initContainers` as a native sidecar
/// (`plan::sidecar_moves`, decided by the same `mode`); otherwise it writes nothing for it.
fn user_sidecar_fix(d: &Dump, settings: &Settings) -> Fix {
    use crate::plan::sidecar_moves::{self, KUBERNETES_SINCE, Mode};
    // The kubelets do not depend on the mesh: any mesh's Support carries them.
    let mut support = d.versions.support(MeshId::Istio.mesh(), settings);
    support.mesh_version = None;
    let kubelets = support.kubernetes.as_ref().map(|k| {
        let v = match k.value {
            crate::version::Kubelets::Oldest(v) => v.to_string(),
            crate::version::Kubelets::AtLeast(v) => format!("{v}+"),
        };
        format!("the oldest kubelet is {v} (from {})", k.origin)
    });
    if sidecar_moves::mode(settings, &support) == Mode::Move {
        return Fix {
            strategy: "native",
            what: "a native sidecar: meshjob moves the sidecar from `containers` to \
                   `initContainers` with `restartPolicy: Always`, and the kubelet stops it \
                   after the tasks (`meshjob fix` on the workload's manifest)"
                .into(),
            why: format!(
                "{}: Kubernetes {KUBERNETES_SINCE} and later run native sidecars",
                kubelets.unwrap_or_default()
            ),
            support: Some(support),
        };
    }
    Fix {
        strategy: "none",
        what: "none from meshjob: a sidecar that is no mesh's proxy holds the pod; stop it from \
               the task, or run Kubernetes 1.29+ (a native sidecar, which meshjob writes)"
            .into(),
        why: match kubelets {
            Some(k) => format!(
                "meshjob's wrapper stops the mesh's proxy only, and {k}: native sidecars need \
                 Kubernetes {KUBERNETES_SINCE}"
            ),
            None => format!(
                "meshjob's wrapper stops the mesh's proxy only, and no Node in the dumps (nor \
                 --kubernetes-version) says the kubelets run Kubernetes {KUBERNETES_SINCE}+, \
                 which native sidecars need"
            ),
        },
        support: None,
    }
}
