//! The user's own long-running sidecars (`plan::sidecars`: the Cloud SQL Auth Proxy, Vault
//! Agent, the `sidecars` setting) made native sidecars. On Kubernetes 1.29+, under `auto` and
//! `native`, such a container moves from `containers` to `initContainers` with
//! `restartPolicy: Always`: the kubelet starts it before the main containers and stops it
//! after them, so it no longer keeps the pod from finishing. `none`, or a Kubernetes known to
//! be older, moves back what meshjob moved. Its text moves as written (only its indentation
//! changes, `yaml::editor::moves`); the `restartPolicy` line meshjob adds carries a comment
//! with the container's old place, which is what `none` reads to put it back.
//!
//! Kubernetes facts relied on (kubernetes/kubernetes@fbba6b47ad98):
//! - `pkg/features/kube_features.go` `SidecarContainers`: alpha (off) in 1.28, beta and on by
//!   default in 1.29, GA in 1.33. With the gate off the API server drops an init container's
//!   `restartPolicy`, and the container would then hold the pod in its init phase.
//! - `pkg/kubelet/kuberuntime/kuberuntime_container.go` `computeInitContainerActions`: a
//!   running restartable init container lets the next container start only once its
//!   `startupProbe` (if any) has succeeded; its liveness and readiness probes hold nothing
//!   back. An exited one is started again whatever the pod's `restartPolicy`.
//! - the same file, `startContainer`: a container's `postStart` hook runs before the kubelet
//!   goes on to start the next container, in `containers` as in `initContainers`.

use super::sidecars;
use crate::config::{Settings, StrategyChoice};
use crate::finding::{Finding, Rule};
use crate::locate::shared_node;
use crate::mesh::{Mesh, Support};
use crate::pod::{Container, List, Pod};
use crate::version::{Kubelets, Version};
use crate::yaml::editor::{Change, Editor, Gap, Source, Target};
use crate::yaml::tree::{Entry, Node};
use crate::yaml::value::{Value, is_true};

/// The first Kubernetes with restartable init containers on by default.
pub(crate) const KUBERNETES_SINCE: Version = Version::new(1, 29);

/// The comment on the `restartPolicy` line meshjob adds, before the old index and `]`.
const MARK: &str = "# meshjob: moved from containers[";

/// What the run does with the user's sidecars.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Move them to `initContainers`.
    Move,
    /// Move back what meshjob moved (`none`, or a Kubernetes without native sidecars).
    Back,
    /// Neither: the version is unknown, or `wrapper` is chosen on a Kubernetes that has them.
    Leave,
}

/// The oldest kubelet, when known to be too old for native sidecars (`Err`) or new enough
/// (`Ok`); `None` when not known either way.
fn kubelets(support: &Support) -> Option<Result<Version, Version>> {
    match support.kubelets()? {
        Kubelets::Oldest(v) if v < KUBERNETES_SINCE => Some(Err(v)),
        Kubelets::Oldest(v) | Kubelets::AtLeast(v) if v >= KUBERNETES_SINCE => Some(Ok(v)),
        Kubelets::Oldest(_) | Kubelets::AtLeast(_) => None,
    }
}

pub(crate) fn mode(settings: &Settings, support: &Support) -> Mode {
    match (settings.strategy, kubelets(support)) {
        (StrategyChoice::None, _) | (_, Some(Err(_))) => Mode::Back,
        (StrategyChoice::Auto | StrategyChoice::Native, Some(Ok(_))) => Mode::Move,
        _ => Mode::Leave,
    }
}

/// What the step did to one pod.
#[derive(Debug)]
pub(crate) struct Done {
    mode: Mode,
    /// The containers it spoke about (their start offsets): their MJ720 warning is replaced.
    pub handled: Vec<usize>,
    /// The containers it moved, by name.
    pub moved: Vec<String>,
    /// What it says about them.
    findings: Vec<Finding>,
}

impl Done {
    /// Puts its findings among the pod's: they replace the MJ720 warnings of the containers
    /// it spoke about; the others get what would move them.
    pub(crate) fn settle(
        &mut self,
        out: &mut Vec<Finding>,
        settings: &Settings,
        support: &Support,
    ) {
        out.retain(|f| f.rule != Rule::LongRunningSidecar || !self.handled.contains(&f.offset));
        // Worded only for a pod that has such a sidecar (most have none).
        if out.iter().any(|f| f.rule == Rule::LongRunningSidecar) {
            let hint = self.hint(settings, support);
            for f in out
                .iter_mut()
                .filter(|f| f.rule == Rule::LongRunningSidecar)
            {
                if !hint.is_empty() {
                    f.message.push_str(". ");
                    f.message.push_str(&hint);
                }
            }
        }
        out.append(&mut self.findings);
    }

    /// What would move the pod's long-running sidecars.
    fn hint(&self, settings: &Settings, support: &Support) -> String {
        let moves = "meshjob moves it to `initContainers` with `restartPolicy: Always`, which \
                     Kubernetes stops after the task";
        let since = KUBERNETES_SINCE;
        match kubelets(support) {
            Some(Err(k)) => format!(
                "Kubernetes {k} has no native sidecars on by default; from Kubernetes {since} \
                 on, {moves}"
            ),
            Some(Ok(_)) if self.mode == Mode::Leave => format!(
                "{} has native sidecars: under --strategy auto or native, {moves}",
                support.kubernetes_text()
            ),
            _ if settings.strategy == StrategyChoice::None => String::new(),
            _ => format!("On Kubernetes {since}+ (pass --kubernetes-version), {moves}"),
        }
    }
}

/// Moves the pod's user sidecar, or moves it back, as the settings say.
pub(crate) fn plan(
    ed: &mut Editor<'_>,
    pod: &Pod<'_>,
    mesh: &Mesh,
    settings: &Settings,
    support: &Support,
) -> Done {
    let mut done = Done {
        mode: mode(settings, support),
        handled: Vec::new(),
        moved: Vec::new(),
        findings: Vec::new(),
    };
    let Some(spec) = pod
        .spec()
        .filter(|s| s.entries().is_some() && shared_node(s).is_none())
    else {
        return done;
    };
    let cx = Cx {
        pod,
        spec,
        settings,
        support,
        mesh,
    };
    let mut out = Vec::new();
    match done.mode {
        Mode::Move => cx.forward(ed, &mut out, &mut done),
        Mode::Back => cx.back(ed, &mut out, &mut done),
        Mode::Leave => {}
    }
    done.findings = out;
    done
}

/// The "would change" finding of a pod whose only change is the move.
pub(crate) fn would_change(pod: &Pod<'_>, done: &Done) -> Finding {
    let names: Vec<String> = done.moved.iter().map(|n| format!("`{n}`")).collect();
    let names = names.join(", ");
    let message = if done.mode == Mode::Move {
        format!(
            "{}: container {names} would move to `initContainers` as a native sidecar: its pod \
             would keep running after the task, because that container does not stop",
            pod.describe()
        )
    } else {
        format!(
            "{}: container {names} would move back from `initContainers` to `containers`",
            pod.describe()
        )
    };
    Finding::error(Rule::WouldChange, pod.template.start, message)
        .with_object(Some(pod.object.clone()))
        .fixed()
}

struct Cx<'a, 'd> {
    pod: &'a Pod<'d>,
    spec: &'d Node,
    settings: &'a Settings,
    support: &'a Support,
    mesh: &'a Mesh,
}

impl<'d> Cx<'_, 'd> {
    fn finding(&self, rule: Rule, c: &Container<'_>, text: String) -> Finding {
        let name = c.name();
        let message = format!("{}: container {name:?} {text}", self.pod.describe());
        let f = match rule {
            Rule::SidecarMoved => Finding::info(rule, c.node.start, message),
            _ => Finding::warning(rule, c.node.start, message),
        };
        f.with_object(Some(self.pod.object.clone()))
    }

    fn forward(&self, ed: &mut Editor<'_>, out: &mut Vec<Finding>, done: &mut Done) {
        let found: Vec<(Container<'d>, String)> = (self.pod.containers())
            .filter_map(|c| sidecars::user_sidecar(c.node, &self.settings.sidecars).map(|w| (c, w)))
            .collect();
        let several = found.len() > 1;
        for (c, why) in &found {
            done.handled.push(c.node.start);
            let refused = if several {
                Err(
                    "the pod has more than one long-running sidecar, and meshjob moves only a \
                     pod's only one; move them by hand, in the order they need"
                        .to_string(),
                )
            } else {
                self.move_one(ed, c)
            };
            match refused {
                Ok(p) => {
                    done.moved.push(c.name().to_string());
                    let k = self.support.kubernetes_text();
                    out.push(self.finding(
                        Rule::SidecarMoved,
                        c,
                        format!(
                            "is a long-running sidecar ({why}): moved to `initContainers` \
                             (item {p}) with `restartPolicy: Always`, so that the kubelet \
                             starts it before the main containers and stops it after them \
                             ({k})"
                        ),
                    ));
                }
                Err(reason) => out.push(self.finding(
                    Rule::SidecarNotMoved,
                    c,
                    format!(
                        "is a long-running sidecar ({why}) that keeps the pod from finishing; \
                         not moved to `initContainers`: {reason}"
                    ),
                )),
            }
        }
    }

    /// Moves container `c`; the index it got among the init containers, or why not.
    fn move_one(&self, ed: &mut Editor<'_>, c: &Container<'d>) -> Result<usize, String> {
        let what = |s: &str| Err(s.to_string());
        if self.pod.containers().count() < 2 {
            return what("it is the pod's only container");
        }
        if c.entry("restartPolicy").is_some() {
            return what(
                "it has a `restartPolicy` of its own; set `restartPolicy: Always` and move it \
                 by hand if that is what it needs",
            );
        }
        if c.get("startupProbe").is_some() {
            return what(
                "its startupProbe would hold back the main containers, which the kubelet \
                 starts only once a native sidecar's startupProbe has passed (in `containers` \
                 it holds back nothing); take the probe out, or move it by hand if the task \
                 should wait for it",
            );
        }
        if c.index > 0
            && c.get("lifecycle")
                .and_then(|l| l.get("postStart"))
                .is_some()
        {
            return what(
                "its postStart hook would hold back the main containers listed before it, \
                 which the kubelet starts only after the hook returns; list it first, or \
                 move it by hand",
            );
        }
        if let Some(why) = shared_node(c.node) {
            return Err(format!("it {why}"));
        }
        let p = self.place(c)?;
        let containers = self.spec.entry("containers").ok_or("no `containers`")?;
        let cpath = self.pod.list_path(List::Containers);
        // The lines before it (comments about it, most often) go with it, and it lands
        // right after the init container before it, ahead of that one's trailing lines.
        let gap = Gap::Before;
        let from = Source::Item {
            entry: containers,
            path: &cpath,
            index: c.index,
            gap,
        };
        let ipath = self.pod.list_path(List::InitContainers);
        let spath = self.pod.spec_path();
        let to = match self.spec.entry("initContainers") {
            Some(init) if init.value.items().is_some_and(|i| !i.is_empty()) => Target::Item {
                entry: init,
                path: &ipath,
                index: p,
            },
            Some(_) => return what("`initContainers` is empty or not a list"),
            None => Target::NewKey {
                map: self.spec,
                path: &spath,
                key: List::InitContainers.key(),
                before: containers,
            },
        };
        let line = format!("restartPolicy: Always {MARK}{}]", c.index);
        let change = Change::Add {
            line: &line,
            key: "restartPolicy",
            value: Value::str("Always"),
        };
        ed.move_item(&from, &to, &change)
            .map_err(|why| format!("{why}; move it by hand"))?;
        Ok(p)
    }

    /// Where `c` goes among the init containers: after the last one it must start after
    /// (a mesh's, or one that writes a volume it mounts), so before the others, which may
    /// then use it. Refused when one of those before it needs it running.
    fn place(&self, c: &Container<'d>) -> Result<usize, String> {
        let init: Vec<Container<'d>> = self.pod.init_containers().collect();
        let after = init.iter().rposition(|x| self.must_precede(x, c).is_some());
        let p = after.map_or(0, |i| i + 1);
        let ports = ports(c.node);
        for x in &init[..p] {
            if let Some(url) = needs(x.node, &ports) {
                let (last, why) = after
                    .and_then(|i| Some((&init[i], self.must_precede(&init[i], c)?)))
                    .map(|(l, w)| (l.name(), w))
                    .unwrap_or_default();
                return Err(format!(
                    "init container {:?} connects to {url}, so it needs the sidecar running, \
                     but comes before init container {last:?}, which must run before the \
                     sidecar ({why}); order the init containers so that those the sidecar \
                     needs come first, then run again",
                    x.name()
                ));
            }
        }
        Ok(p)
    }

    /// Why init container `x` must start before sidecar `c`, if it must.
    fn must_precede(&self, x: &Container<'_>, c: &Container<'_>) -> Option<String> {
        let name = x.name();
        // The meshes' init containers (`Mesh::init_containers`) set up the pod's network; the
        // meshes' proxies, injected as native sidecars, come before it too.
        let mesh_init = crate::mesh::ALL
            .iter()
            .any(|m| m.init_containers.contains(&name));
        if mesh_init || name == self.mesh.proxy_container {
            return Some(format!("{name} is the mesh's own"));
        }
        let theirs = mounts(c.node);
        mounts(x.node)
            .into_iter()
            .filter(|(_, read_only)| !read_only)
            .find(|(v, _)| theirs.iter().any(|(t, _)| t == v) && !self.read_only_volume(v))
            .map(|(v, _)| format!("it writes volume {v:?}, which the sidecar mounts"))
    }

    /// Whether the pod's volume `name` is of a kind that containers cannot write.
    fn read_only_volume(&self, name: &str) -> bool {
        let volumes = self
            .spec
            .get("volumes")
            .and_then(Node::items)
            .unwrap_or(&[]);
        (volumes.iter().find(|v| v.str("name") == Some(name))).is_some_and(|v| {
            ["secret", "configMap", "projected", "downwardAPI"]
                .iter()
                .any(|k| v.get(k).is_some())
        })
    }

    fn back(&self, ed: &mut Editor<'_>, out: &mut Vec<Finding>, done: &mut Done) {
        let marked: Vec<(Container<'d>, usize)> = (self.pod.init_containers())
            .filter_map(|c| Some((c, moved_from(ed.src, c.entry("restartPolicy")?)?)))
            .collect();
        let several = marked.len() > 1;
        for (c, n) in &marked {
            done.handled.push(c.node.start);
            let result = if several {
                Err("more than one container was moved; move them back by hand".to_string())
            } else {
                self.back_one(ed, c, *n)
            };
            let text = match result {
                Ok(()) => {
                    done.moved.push(c.name().to_string());
                    let rule = Rule::SidecarMoved;
                    let why = match kubelets(self.support) {
                        Some(Err(k)) => format!(
                            "; Kubernetes {k} has no native sidecars on by default, so it keeps \
                             the pod from finishing again"
                        ),
                        _ => String::new(),
                    };
                    let text = format!(
                        "moved back from `initContainers` to `containers` (item {n}), where \
                         meshjob found it{why}"
                    );
                    out.push(self.finding(rule, c, text));
                    continue;
                }
                Err(reason) => {
                    format!("was moved to `initContainers` by meshjob; not moved back: {reason}")
                }
            };
            out.push(self.finding(Rule::SidecarNotMoved, c, text));
        }
    }

    fn back_one(&self, ed: &mut Editor<'_>, c: &Container<'d>, n: usize) -> Result<(), String> {
        let init = self
            .spec
            .entry("initContainers")
            .ok_or("no `initContainers`")?;
        let containers = self.spec.entry("containers").ok_or("no `containers`")?;
        let len = containers.value.items().map_or(0, <[Node]>::len);
        let gap = Gap::Before;
        let ipath = self.pod.list_path(List::InitContainers);
        let spath = self.pod.spec_path();
        let cpath = self.pod.list_path(List::Containers);
        let entries = self.spec.entries().unwrap_or(&[]);
        let next = entries
            .iter()
            .position(|e| e.key.as_str() == Some(List::InitContainers.key()))
            .and_then(|i| entries.get(i + 1));
        let from = match (init.value.items().map_or(0, <[Node]>::len), next) {
            (1, Some(next)) => Source::Only {
                map: self.spec,
                path: &spath,
                key: List::InitContainers.key(),
                next,
                gap,
            },
            (1, None) => {
                return Err("`initContainers` is the pod spec's last key; move it by hand".into());
            }
            _ => Source::Item {
                entry: init,
                path: &ipath,
                index: c.index,
                gap,
            },
        };
        let to = Target::Item {
            entry: containers,
            path: &cpath,
            index: n.min(len),
        };
        ed.move_item(
            &from,
            &to,
            &Change::Remove {
                key: "restartPolicy",
            },
        )
        .map_err(|why| format!("{why}; move it by hand"))
    }
}

/// The old index written on a `restartPolicy: Always` line meshjob added.
fn moved_from(src: &str, e: &Entry) -> Option<usize> {
    if e.value.as_str() != Some("Always") {
        return None;
    }
    let rest = &src[e.value.end..];
    let line = &rest[..rest.find('\n').unwrap_or(rest.len())];
    let rest = line.trim_start_matches([' ', '\t']).strip_prefix(MARK)?;
    let (digits, tail) = rest.split_once(']')?;
    if !tail.trim_end().is_empty() {
        return None;
    }
    digits.parse().ok()
}

/// The volumes a container mounts, with whether read-only.
fn mounts(c: &Node) -> Vec<(&str, bool)> {
    let items = c.get("volumeMounts").and_then(Node::items).unwrap_or(&[]);
    items
        .iter()
        .filter_map(|m| Some((m.str("name")?, m.get("readOnly").is_some_and(is_true))))
        .collect()
}

/// The ports a sidecar listens on, as far as its manifest says: its `ports`, and port
/// numbers in its `args` or `command` (`--port=5432`, `--port 5432`, the Cloud SQL
/// Auth Proxy's `?port=5432` (v2) and `=tcp:5432` (v1)).
fn ports(c: &Node) -> Vec<u16> {
    let mut found: Vec<u16> = (c.get("ports").and_then(Node::items).unwrap_or(&[]).iter())
        .filter_map(|p| p.get("containerPort")?.as_str()?.parse().ok())
        .collect();
    let words = sidecars::argv(c);
    let number = |s: &str| -> Option<u16> {
        let end = s.find(|ch: char| !ch.is_ascii_digit()).unwrap_or(s.len());
        s[..end].parse().ok()
    };
    for (i, w) in words.iter().enumerate() {
        for marker in ["port=", "tcp:"] {
            found.extend(
                w.match_indices(marker)
                    .filter_map(|(at, m)| number(&w[at + m.len()..])),
            );
        }
        if (*w == "--port" || *w == "-port" || *w == "-p")
            && let Some(n) = words.get(i + 1).and_then(|n| number(n))
        {
            found.push(n);
        }
    }
    found
}

/// `localhost:PORT` or `127.0.0.1:PORT` in a container's command, args or env values, for
/// one of `ports`.
fn needs(x: &Node, ports: &[u16]) -> Option<String> {
    let mut texts = sidecars::argv(x);
    let env = x.get("env").and_then(Node::items).unwrap_or(&[]);
    texts.extend(env.iter().filter_map(|e| e.str("value")));
    for port in ports {
        for host in ["localhost", "127.0.0.1"] {
            let url = format!("{host}:{port}");
            let hit = texts.iter().any(|t| {
                t.match_indices(&url)
                    .any(|(at, m)| !t[at + m.len()..].starts_with(|ch: char| ch.is_ascii_digit()))
            });
            if hit {
                return Some(url);
            }
        }
    }
    None
}
