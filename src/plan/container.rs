//! The entrypoint wrapper: each regular container's `command` becomes
//! `[/bin/sh, -c, <script>, meshjob]` and its original argv moves, verbatim, to `args`.

use super::endpoint::pod_endpoint;
use super::own_fixes;
use super::peers::{ensure_named_item, peers_conflict};
use super::script::{
    self, ARG0, ArgvOrigin, CommandStyle, FlowLayout, Peers, ReadyWait, SHELL, ScriptOptions,
};
use super::wrapped::{How, PEERS_MOUNT, PEERS_VOLUME, Wrap, item_out, wrapper_script};
use crate::config::Settings;
use crate::finding::describe;
use crate::finding::{Finding, ObjectRef, Rule};
use crate::kinds::RestartPolicy;
use crate::locate::{duplicate_key_finding, object_error as err, shared_node, shared_node_finding};
use crate::mesh::{Mesh, Support};
use crate::pod::{List, Pod};
use crate::yaml::editor::Editor;
use crate::yaml::emit::Out;
use crate::yaml::path::{Seg, child};
use crate::yaml::tree::{Entry, Kind, Node};
use crate::yaml::value::{ScalarType, resolve};
use std::sync::Arc;

/// The hint for a `command` or `args` that meshjob will not rewrite because it is shared.
const SPELL_OUT: &str = "write the list out in each container (expand the anchor or alias by \
                         hand), then run again";

/// Why `n` (the value of `command` or `args`) is not a list of strings that meshjob can
/// move, with what to do about it; `None` when it is one. Kubernetes itself refuses a
/// `command` or `args` that is not a list of strings.
fn not_argv(n: &Node) -> Option<String> {
    let shared = |what: String| Some(format!("{what}; {SPELL_OUT}"));
    if let Some(why) = shared_node(n) {
        return shared(why.to_string());
    }
    let Some(items) = n.items() else {
        let what = match &n.kind {
            Kind::Map(_) => "a mapping",
            Kind::Scalar { value, style }
                if resolve(value, *style, n.tag.as_deref(), n.empty) == ScalarType::Str =>
            {
                "a single string"
            }
            _ => "a single value",
        };
        return Some(format!(
            "is {what}, but Kubernetes takes a list of strings; write it as a list such as \
             [sh, -c, \"...\"], then run again"
        ));
    };
    for (i, item) in items.iter().enumerate() {
        if let Some(why) = shared_node(item) {
            return shared(format!("item {i} {why}"));
        }
        let ty = match &item.kind {
            Kind::Scalar { value, style } => {
                resolve(value, *style, item.tag.as_deref(), item.empty)
            }
            _ => {
                return Some(format!(
                    "item {i} is not a string, and Kubernetes takes only strings; write it as \
                     one, then run again"
                ));
            }
        };
        let what = match ty {
            ScalarType::Str => continue,
            ScalarType::Null => {
                return Some(format!(
                    "item {i} is null, not a string, and Kubernetes takes only strings; write \
                     \"\" for an empty word or remove the item, then run again"
                ));
            }
            ScalarType::Bool => "a boolean",
            ScalarType::Int | ScalarType::Float => "a number",
            ScalarType::Tagged => "a tagged value",
        };
        return Some(format!(
            "item {i} (`{}`) is {what}, not a string, and Kubernetes takes only strings; quote \
             it, then run again",
            item.as_str().unwrap_or_default()
        ));
    }
    None
}

fn wrapper_out(script: Arc<str>) -> Out {
    Out::Seq(vec![
        Out::Str(SHELL.into()),
        Out::Str("-c".into()),
        Out::Literal(script),
        Out::Str(ARG0.into()),
    ])
}

/// The endpoints one pod's wrapper calls: the mesh proxy's (when `mesh` is set: its fix is
/// the wrapper), then the other holders' (`plan::holders`), each once.
pub(crate) struct Stops<'a> {
    pub mesh: bool,
    pub holders: &'a [script::Endpoint],
}

/// Plans the wrapper edits of one pod template. Returns whether the pod needs the per-pod
/// proxy configuration: a container is wrapped, or already stops the proxy itself. A pod
/// in which nothing stops the proxy gets none, so that its diff does not look like a fix.
pub(crate) fn plan(
    ed: &mut Editor<'_>,
    t: &Pod<'_>,
    mesh: &'static Mesh,
    settings: &Settings,
    support: &Support,
    stops_what: &Stops<'_>,
    out: &mut Vec<Finding>,
) -> bool {
    let oref = &t.object;
    let tpl = t.template;
    let Some(spec) = t.spec().filter(|s| s.entries().is_some()) else {
        out.push(err(
            Rule::NoContainers,
            oref,
            tpl.start,
            "the pod template has no spec",
        ));
        return false;
    };
    let spath = t.spec_path();
    if let Some(f) = shared_node_finding(spec, oref) {
        out.push(f);
        return false;
    }
    let Some(containers) = spec.get("containers") else {
        out.push(err(
            Rule::NoContainers,
            oref,
            spec.start,
            "the pod spec has no containers",
        ));
        return false;
    };
    if let Some(f) = shared_node_finding(containers, oref) {
        out.push(f);
        return false;
    }
    let Some(_items) = containers.items() else {
        out.push(err(
            Rule::NoContainers,
            oref,
            containers.start,
            "`containers` is not a list",
        ));
        return false;
    };
    let (quit, also) = if stops_what.mesh {
        match pod_endpoint(mesh, settings.quit_url.as_ref(), t, support) {
            Ok(q) => (q, stops_what.holders.to_vec()),
            Err(m) => {
                out.push(err(Rule::QuitUrl, oref, tpl.start, m));
                return false;
            }
        }
    } else {
        match stops_what.holders.split_first() {
            Some((first, rest)) => (first.clone(), rest.to_vec()),
            None => return false,
        }
    };
    let on_failure = t.restart_policy() == RestartPolicy::OnFailure;
    let wait_seconds = settings.wait_for_proxy_seconds.filter(|_| stops_what.mesh);
    let wait_for_proxy = match wait_seconds.map(|seconds| {
        script::parse_quit_url(mesh.ready_url)
            .and_then(|r| pod_endpoint(mesh, Some(&r), t, support))
            .map(|ready| ReadyWait { seconds, ready })
    }) {
        Some(Err(m)) => {
            out.push(err(Rule::QuitUrl, oref, tpl.start, m));
            return false;
        }
        Some(Ok(w)) => Some(w),
        None => None,
    };

    let targets = super::stops::Targets::of(mesh, own_fixes::status_port(mesh, t, support));
    let shared_pid = spec
        .get("shareProcessNamespace")
        .is_some_and(crate::yaml::value::is_true);
    let mut wraps = Vec::new();
    let mut stops = false;
    for container in t.containers() {
        let (c, index) = (container.node, container.index);
        if let Some(w) = classify(c, index, mesh, settings, oref, out) {
            if own_fixes::own_stop(&w, &targets, shared_pid, false, oref, out) {
                stops = true;
                // An earlier meshjob wrapped a container that stops the proxy itself: unwrap.
                if let (How::Existing { .. }, Some(e)) = (&w.how, c.entry("command"))
                    && super::revert::unwrap(ed, c, &t.container_path(&container), e)
                {
                    out.push(
                        Finding::info(
                            Rule::WrapperRemoved,
                            e.value.start,
                            format!(
                                "{}: container {:?}: meshjob's wrapper taken out, since the \
                                 container stops the proxy itself",
                                describe(oref),
                                w.name
                            ),
                        )
                        .with_object(Some(oref.clone())),
                    );
                }
            } else {
                wraps.push(w);
            }
        }
    }
    if wraps.is_empty() && !stops {
        own_fixes::note_unfixed(support, oref, out);
        return false;
    }
    let names: Vec<String> = wraps.iter().map(|w| w.name.clone()).collect();
    let peers = names.len() >= 2;
    if peers && let Some(f) = peers_conflict(spec, &wraps, oref) {
        out.push(f);
        return false;
    }

    for w in &wraps {
        let opts = ScriptOptions {
            quit: quit.clone(),
            also: also.clone(),
            stop_proxy_on_failure: !on_failure,
            peers: peers.then(|| Peers {
                dir: PEERS_MOUNT.to_string(),
                me: w.name.clone(),
                all: names.clone(),
            }),
            wait_for_proxy: wait_for_proxy.clone(),
            origin: origin(w),
            command_style: command_style(w, ed.src),
        };
        let script = script::render_shared(&opts);
        let mut path = t.list_path(List::Containers);
        path.push(Seg::Index(w.index));
        apply(ed, w, &path, script, oref, out);
        if peers {
            ensure_named_item(
                ed,
                w.node,
                &path,
                "volumeMounts",
                Out::Map(vec![
                    ("name".into(), Out::Str(PEERS_VOLUME.into())),
                    ("mountPath".into(), Out::Str(PEERS_MOUNT.into())),
                ]),
            );
        }
    }
    if peers {
        ensure_named_item(
            ed,
            spec,
            &spath,
            "volumes",
            Out::Map(vec![
                ("name".into(), Out::Str(PEERS_VOLUME.into())),
                ("emptyDir".into(), Out::Map(vec![])),
            ]),
        );
    }
    true
}

/// Decides how to wrap one container, or reports why it cannot be.
fn classify<'d>(
    c: &'d Node,
    index: usize,
    mesh: &Mesh,
    settings: &Settings,
    oref: &ObjectRef,
    out: &mut Vec<Finding>,
) -> Option<Wrap<'d>> {
    c.entries()?;
    let name = c.str("name").unwrap_or_default().to_string();
    if name == mesh.proxy_container {
        out.push(
            Finding::info(
                Rule::ProxyInjected,
                c.start,
                format!(
                    "{}: {} is already injected, {}",
                    describe(oref),
                    mesh.proxy_container,
                    mesh.injected_note
                ),
            )
            .with_object(Some(oref.clone())),
        );
        return None;
    }
    if let Some(f) = shared_node_finding(c, oref) {
        out.push(f);
        return None;
    }
    if let Some(f) = own_fixes::sidecar_finding(c, &name, settings, oref) {
        out.push(f);
        return None;
    }
    if c.duplicate_key().is_some()
        && let Some(f) = duplicate_key_finding(c, oref, &format!("container {name:?}"))
    {
        out.push(f);
        return None;
    }
    let image = c.str("image").unwrap_or_default();
    // A null `args` is no args; a null or empty `command` is no command (Kubernetes runs
    // the image's ENTRYPOINT then).
    let args = c.entry("args");
    if let Some(why) = args
        .filter(|a| !a.value.is_null())
        .and_then(|a| not_argv(&a.value))
    {
        let at = args.map_or(c.start, |a| a.value.props_start);
        out.push(err(
            Rule::ArgsNotList,
            oref,
            at,
            format!("container {name:?}: `args` {why}"),
        ));
        return None;
    }
    let cmd = c.entry("command");
    let unset =
        |n: &Node| n.is_null() || (n.items().is_some_and(<[Node]>::is_empty) && n.anchor.is_none());
    let written = cmd.filter(|e| !unset(&e.value));
    let how = match written {
        Some(e) if wrapper_script(&e.value).is_some() => How::Existing { cmd: &e.value },
        Some(e) => match not_argv(&e.value) {
            None => How::Command { cmd: e, args },
            Some(why) => {
                out.push(err(
                    Rule::CommandNotList,
                    oref,
                    e.value.props_start,
                    format!("container {name:?}: `command` {why}"),
                ));
                return None;
            }
        },
        None => match settings.entrypoint_for(image) {
            Some(argv) => How::Entrypoint {
                argv: argv.to_vec(),
                cmd,
                args,
            },
            None => {
                let has_args = args.is_some_and(|a| {
                    !a.value.is_null() && !a.value.items().is_some_and(<[Node]>::is_empty)
                });
                let what = match (cmd.is_some(), has_args) {
                    (true, true) => "has args and an empty command",
                    (true, false) => "has an empty command and no args",
                    (false, true) => "has args but no command",
                    (false, false) => "has neither command nor args",
                };
                out.push(err(
                    Rule::UnknownEntrypoint,
                    oref,
                    c.start,
                    format!(
                        "container {name:?} (image {image:?}) {what}: its entrypoint comes from \
                         the image, which meshjob cannot see offline, so it cannot be wrapped. \
                         Write the entrypoint as `command:` explicitly, or map the image in \
                         .meshjob.yaml under `entrypoints:` (image or prefix -> argv)"
                    ),
                ));
                return None;
            }
        },
    };
    Some(Wrap {
        node: c,
        index,
        name,
        how,
    })
}

/// What the marker line records about where the wrapped argv came from.
fn origin(w: &Wrap<'_>) -> ArgvOrigin {
    match &w.how {
        How::Command { cmd, .. } => ArgvOrigin::Command(cmd.value.items().map_or(0, <[_]>::len)),
        How::Entrypoint { argv, .. } => ArgvOrigin::Entrypoint(argv.len()),
        How::Existing { cmd } => {
            let current = wrapper_script(cmd).unwrap_or_default();
            match script::marker(current).map(|m| m.origin) {
                // Version 1 moved the whole argv into `args`.
                Some(ArgvOrigin::WholeArgv) | None => ArgvOrigin::Command(
                    w.node
                        .get("args")
                        .and_then(Node::items)
                        .map_or(0, <[_]>::len),
                ),
                Some(o) => o,
            }
        }
    }
}

/// How the container's `command` was written, for the marker, when its words go in front of
/// its `args`: so that taking the wrapper off can write that `command` again byte for byte.
fn command_style(w: &Wrap<'_>, src: &str) -> CommandStyle {
    match &w.how {
        How::Command { cmd, args: Some(_) } if cmd.value.flow => {
            let items = cmd.value.items().unwrap_or(&[]);
            // The words keep their own text in `args` only when it is one plain line.
            let raw = items
                .iter()
                .all(|n| matches!(item_out(src, n, true), Out::Raw { .. }));
            let at = cmd.value.start;
            let text = &src[at..cmd.value.end];
            let spans: Vec<_> = items
                .iter()
                .map(|n| n.props_start.saturating_sub(at)..n.end.saturating_sub(at))
                .collect();
            CommandStyle::Flow(
                raw.then(|| FlowLayout::of(text, &spans))
                    .flatten()
                    .filter(|_| !text.contains('\n')),
            )
        }
        How::Existing { cmd } => {
            let current = wrapper_script(cmd).unwrap_or_default();
            match script::marker(current).and_then(|m| m.style) {
                Some(style) => style,
                // Versions 1 and 2 gave the command back in the style of `args`.
                None if w.node.get("args").is_some_and(|a| a.flow) => CommandStyle::Flow(None),
                None => CommandStyle::Block,
            }
        }
        _ => CommandStyle::Block,
    }
}

/// Makes the edits for one container.
fn apply(
    ed: &mut Editor<'_>,
    w: &Wrap<'_>,
    path: &[Seg],
    script: Arc<str>,
    oref: &ObjectRef,
    out: &mut Vec<Finding>,
) {
    let c = w.node;
    let src = ed.src;
    match &w.how {
        How::Existing { cmd } => {
            let current = wrapper_script(cmd).unwrap_or_default();
            match script::marker_version(current) {
                Some(v) if v > script::WRAPPER_VERSION => out.push(
                    Finding::warning(
                        Rule::NewerWrapper,
                        cmd.start,
                        format!(
                            "{}: container {:?} has a wrapper of version {v}, newer than this \
                             meshjob's ({}); left alone",
                            describe(oref),
                            w.name,
                            script::WRAPPER_VERSION
                        ),
                    )
                    .with_object(Some(oref.clone())),
                ),
                _ if !script::is_genuine(current) => out.push(
                    Finding::warning(
                        Rule::EditedWrapper,
                        cmd.start,
                        format!(
                            "{}: container {:?} has a wrapper script that meshjob did not \
                             write as it stands (edited by hand?); left alone. To get the \
                             current wrapper, restore the original `command`/`args` and run \
                             again",
                            describe(oref),
                            w.name,
                        ),
                    )
                    .with_object(Some(oref.clone())),
                ),
                _ if current != &*script => {
                    ed.replace_item(cmd, &child(path, "command"), 2, &Out::Literal(script));
                }
                _ => {}
            }
        }
        How::Command { cmd, args } => {
            let from_flow = cmd.value.flow;
            let words = || -> Vec<Out> {
                (cmd.value.items().unwrap_or(&[]).iter())
                    .map(|n| item_out(src, n, from_flow))
                    .collect()
            };
            match args {
                None => {
                    // The command's own text becomes `args`, byte for byte.
                    ed.rename_key(path, &cmd.key, "command", "args");
                    ed.insert_entry(c, path, Some(&cmd.key), "command", &wrapper_out(script));
                }
                Some(a) => {
                    ed.replace_value(
                        c,
                        &cmd.key,
                        &cmd.value,
                        path,
                        "command",
                        &wrapper_out(script),
                    );
                    put_args(ed, c, path, a, words());
                }
            }
        }
        How::Entrypoint { argv, cmd, args } => {
            let words: Vec<Out> = argv.iter().map(|s| Out::Str(unexpanded(s))).collect();
            match cmd {
                Some(e) => {
                    ed.replace_value(c, &e.key, &e.value, path, "command", &wrapper_out(script))
                }
                None => {
                    let before = args.map(|a| &a.key);
                    ed.insert_entry(c, path, before, "command", &wrapper_out(script));
                }
            }
            match args {
                Some(a) => put_args(ed, c, path, a, words),
                None => ed.insert_entry(c, path, None, "args", &Out::Seq(words)),
            }
        }
    }
}

/// `word` written so that it reaches the program as it is from `args`: each `$` doubled.
/// The kubelet expands `$(NAME)` in `command` and `args` and turns `$$` into `$`, but never
/// touches an image's ENTRYPOINT, whose words the config gives (kubernetes/kubernetes@02604f7,
/// third_party/forked/golang/expansion/expand.go: `Expand` reads `$$` as one `$` and goes on
/// after it, so a doubled `$` can never start a reference). Taking the wrapper off drops
/// these words again (the marker counts them), so nothing has to undo the doubling.
fn unexpanded(word: &str) -> String {
    word.replace('$', "$$")
}

/// Puts `words` in front of the existing `args` entry `a` of container `c`: a null value
/// becomes the list of `words`.
fn put_args(ed: &mut Editor<'_>, c: &Node, path: &[Seg], a: &Entry, words: Vec<Out>) {
    if a.value.is_null() {
        ed.replace_value(c, &a.key, &a.value, path, "args", &Out::Seq(words));
    } else {
        ed.prepend_items(&a.value, &child(path, "args"), &words);
    }
}
