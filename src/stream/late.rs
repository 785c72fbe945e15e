//! Stdin past its read-ahead: the context documents (`Namespace` documents, and documents
//! that say something about versions) that come after the first pass stopped.
//!
//! Such a document applies to the documents after it ([`Growing`], the pipeline's
//! `Context` for a batch); a batch decided with less than the batches before it said is
//! decided again ([`Contexts::check`]); a `Namespace` that comes after a pod it would have
//! placed stops the stream ([`late_namespace`], [`Rule::LateNamespace`]), and a version read
//! after pods is a warning ([`read_late`], [`Rule::VersionsReadLate`]). Everything here is
//! stdin's alone: a file, a text in memory, and stdin read whole ahead are decided with what
//! the whole stream says ([`Namespaces::Whole`]).

use super::{Batch, Done, Failure, line_col, stdin};
use crate::config::Settings;
use crate::decide::{Lines, RunContext};
use crate::finding::{Finding, Rule};
use crate::mesh::found::Base;
use crate::pipeline::Context;
use crate::yaml::quick;
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::{Arc, Mutex};

/// Where the stream's context (its `Namespace` documents and its versions, which decide some
/// pods' strategy) comes from.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Namespaces<'a> {
    /// Read before the stream is edited (a file is read twice: `first_pass` first; a text in
    /// memory; stdin read to its end ahead, see [`stdin`]): they apply to every document.
    Whole(&'a RunContext),
    /// Stdin on a pipe that is longer than its read-ahead ([`stdin`]): `ctx` holds what the
    /// documents before offset `from` say (with what the run's other inputs say). A
    /// `Namespace` document, or one that says something about versions, from there on
    /// applies to the documents after it.
    From { ctx: &'a RunContext, from: u64 },
}

impl Namespaces<'_> {
    /// The context of a text that starts at `start` in the stream, decided with `ctx` (what
    /// the stream said before it).
    pub(super) fn context<'c>(
        self,
        ctx: &'c RunContext,
        start: Start,
        settings: &'c Settings,
    ) -> Growing<'c> {
        Growing {
            ctx,
            grown: None,
            from: match self {
                Namespaces::Whole(_) => None,
                Namespaces::From { from, .. } => Some(from),
            },
            start,
            settings,
            proxies: None,
            lines: Lines::default(),
            said: None,
            late: Late::default(),
        }
    }
}

/// Where a text starts in its stream: byte offset and line breaks before it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Start {
    pub offset: u64,
    pub line: u64,
}

/// What the pieces of a batch past the first pass said, under [`Namespaces::From`]. Offsets
/// are in the stream.
#[derive(Debug, Default)]
pub(crate) struct Late {
    /// What they added to the context, in order, when anything.
    pub adds: Option<RunContext>,
    /// Where the first piece that decided a pod starts, and where the first that said
    /// something about versions does.
    pub first_pod: Option<u64>,
    pub first_versions: Option<u64>,
    /// Per piece, in order, the namespaces of its pods and the namespaces its own
    /// `Namespace` documents say something new about, for the check that no Namespace
    /// comes after a pod it would have placed.
    pub grown: Vec<Grown>,
}

/// What one piece says about namespaces.
#[derive(Debug, Default)]
pub(crate) struct Grown {
    /// Where the piece starts in the stream.
    pub at: u64,
    /// The `metadata.namespace` of each of its pods' objects (when not empty).
    pub pods: Vec<String>,
    /// The namespaces its `Namespace` documents say something new about (mesh markers,
    /// ambient mode, annotations the injectors copy).
    pub marks: Vec<String>,
}

/// The pipeline's context for one text of the stream: a fixed one under
/// [`Namespaces::Whole`]; under [`Namespaces::From`], one that grows with what the text's
/// pieces from `from` on say, which applies from the piece after on.
pub(crate) struct Growing<'a> {
    ctx: &'a RunContext,
    /// `ctx` with what the text's pieces added.
    grown: Option<RunContext>,
    /// Where the first pass stopped (`None`: it read the whole stream).
    from: Option<u64>,
    start: Start,
    settings: &'a Settings,
    /// The text spells a word of the injected proxies: they are looked for in documents of
    /// any kind only then.
    proxies: Option<bool>,
    lines: Lines,
    /// The piece being decided.
    said: Option<Grown>,
    pub(super) late: Late,
}

impl Context for Growing<'_> {
    fn before(
        &mut self,
        text: &str,
        range: Range<usize>,
        head: Option<&quick::Head<'_>>,
        out: &mut Vec<Finding>,
    ) -> &RunContext {
        let Some(from) = self.from else {
            return self.ctx;
        };
        let at = self.start.offset + range.start as u64;
        let said = self.said.insert(Grown {
            at,
            ..Grown::default()
        });
        let proxies = *(self.proxies)
            .get_or_insert_with(|| memchr::memmem::find(text.as_bytes(), b"proxy").is_some());
        let piece = &text[range.clone()];
        if at >= from && self.ctx.wants(piece, head, proxies) {
            let base = Base {
                file: None,
                offset: at as usize,
                line: self.start.line as usize + self.lines.before(text.as_bytes(), range.start),
            };
            let mut here = RunContext::default();
            if here.add_wanted(piece, &base) {
                let before = self.grown.as_ref().unwrap_or(self.ctx);
                said.marks = before.news(&here);
                if !here.versions.is_empty() {
                    self.late.first_versions.get_or_insert(at);
                    let news = before.versions.new_conflicts(&here.versions, self.settings);
                    let span = at as usize..(self.start.offset as usize + range.end);
                    out.extend(
                        news.iter()
                            .map(|c| c.finding(c.offset_in(&span).unwrap_or(at as usize))),
                    );
                }
                (self.late.adds.get_or_insert_with(RunContext::default)).extend(here.clone());
                (self.grown.get_or_insert_with(|| self.ctx.clone())).extend(here);
            }
        }
        self.grown.as_ref().unwrap_or(self.ctx)
    }

    fn grows(&self) -> bool {
        self.from.is_some()
    }

    fn after(&mut self, pods: bool, namespaces: Vec<String>) {
        let Some(mut said) = self.said.take() else {
            return;
        };
        if pods {
            self.late.first_pod.get_or_insert(said.at);
        }
        said.pods = namespaces;
        if !said.pods.is_empty() || !said.marks.is_empty() {
            self.late.grown.push(said);
        }
    }
}

/// The context each batch is decided with: with [`Namespaces::From`], what the batches
/// before it said, as far as the sink has taken them (the worker adds its own batch's, piece
/// by piece). A batch decided with less than what came before it, whose decisions it
/// changes, is decided again before the sink takes it ([`Contexts::check`]).
pub(super) struct Contexts {
    grow: bool,
    current: Arc<Mutex<Arc<RunContext>>>,
}

impl Contexts {
    pub(super) fn new(ns: Namespaces<'_>) -> Self {
        let (grow, c) = match ns {
            Namespaces::Whole(c) => (false, c),
            Namespaces::From { ctx, .. } => (true, ctx),
        };
        Contexts {
            grow,
            current: Arc::new(Mutex::new(Arc::new(c.clone()))),
        }
    }

    /// What is known so far.
    fn known(&self) -> Arc<RunContext> {
        self.current
            .lock()
            .map(|c| c.clone())
            .unwrap_or_else(|e| e.into_inner().clone())
    }

    pub(super) fn tag<E>(&self, b: Result<Batch, E>) -> Result<(Batch, Arc<RunContext>), E> {
        Ok((b?, self.known()))
    }

    /// Before the sink takes `done`: decides it again when it was decided with less than what
    /// the batches before it said and that matters (it has pods, or says something itself),
    /// then adds what it says. Returns the batch to take.
    pub(super) fn check(&self, done: Done, redo: impl Fn(Batch, Arc<RunContext>) -> Done) -> Done {
        if !self.grow {
            return done;
        }
        let known = self.known();
        let stale = !Arc::ptr_eq(&done.ctx, &known);
        let matters = done.late.first_pod.is_some() || done.late.adds.is_some();
        let done = if stale && matters {
            redo(done.batch, known.clone())
        } else {
            done
        };
        if let Some(adds) = &done.late.adds {
            let mut next = (*known).clone();
            next.extend(adds.clone());
            if let Ok(mut c) = self.current.lock() {
                *c = Arc::new(next);
            }
        }
        done
    }
}

/// What the stream's batches said so far, for the checks of the batches after.
#[derive(Default)]
pub(super) struct Seen {
    /// Pods were decided before the batch being taken.
    pods_before: bool,
    /// The namespaces of the pods so far, each with the line of its first pod.
    pods: BTreeMap<String, usize>,
}

impl Seen {
    /// Before the sink takes `done`: the warning for a document that says which versions run
    /// after pods that it would have decided.
    pub(super) fn versions(&mut self, done: &mut Done) {
        let late = &done.late;
        if let Some(v) = late.first_versions
            && (self.pods_before || late.first_pod.is_some_and(|p| p < v))
        {
            done.result.findings.push(read_late(v as usize));
        }
        self.pods_before |= late.first_pod.is_some();
    }

    /// The failure when a piece of `done` places a namespace in a mesh (or in ambient mode)
    /// after a pod in that namespace was decided without it; adds the namespaces of the
    /// batch's pods to those seen.
    pub(super) fn namespaces(&mut self, done: &Done) -> Option<Failure> {
        late_namespace(done, &mut self.pods)
    }
}

/// The warning for a document on stdin that says something about versions after pods that
/// it would have decided (`at`: its offset in the stream).
fn read_late(at: usize) -> Finding {
    Finding::warning(
        Rule::VersionsReadLate,
        at,
        "this document says which versions the pods target, but stdin is read once and pods \
         before it were decided without it: put it before them (kustomize and Helm write \
         their kinds in a fixed order), give the file as a path, pass it with \
         --versions-from, or give the versions in the config",
    )
}

/// See [`Seen::namespaces`].
fn late_namespace(done: &Done, pods: &mut BTreeMap<String, usize>) -> Option<Failure> {
    let b = &done.batch;
    for g in &done.late.grown {
        let (line, col) = line_col(b.line, &b.bytes, (g.at - b.offset) as usize);
        if let Some((name, pod_line)) = g.marks.iter().find_map(|m| pods.get_key_value(m.as_str()))
        {
            return Some(Failure {
                line,
                col,
                finding: Finding::error(
                    Rule::LateNamespace,
                    g.at as usize,
                    format!(
                        "Namespace {name} comes after a pod in it (line {pod_line}), past the \
                         first {} MiB of stdin that meshjob reads ahead: that pod was decided \
                         without this Namespace, so the output would be wrong; give the stream \
                         as a file (or redirect stdin from one), or put its Namespaces first",
                        stdin::HOLD_BYTES >> 20
                    ),
                ),
                decode: false,
                window_first_edit: None,
            });
        }
        for p in &g.pods {
            pods.entry(p.clone()).or_insert(line);
        }
    }
    None
}
