//! Reads one dump: batches from the engine's reader (`stream::Reader`), with lists cut into
//! their items (`yaml::items`), parsed across cores (`stream::ordered`), and boiled down to
//! what the audit keeps: held pods, counts, owners, kubelets. The dump's text is dropped
//! batch by batch, so memory follows the batches in flight and what is kept, not the dump.

use super::pod::{self, Held, Ref, State};
use crate::kinds::Kinds;
use crate::manifest_versions::Versions;
use crate::mesh::found::Base;
use crate::stream::{Batch, ReadError, Reader, line_col, ordered};
use crate::yaml::items::{Tag, item_text};
use crate::yaml::split::Cutter;
use crate::yaml::tree::Node;
use std::io::Read;
use std::sync::Arc;

/// An object of the dump that may own another: its controlling owner, for the chains.
#[derive(Clone, Debug)]
pub(crate) struct Owner {
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub uid: String,
    pub parent: Option<Ref>,
}

/// A held pod with where it was read and the versions its own object says (its proxy's).
#[derive(Debug)]
pub(crate) struct HeldAt {
    pub pod: Box<Held>,
    pub file: Option<Arc<str>>,
    pub line: usize,
    pub proxy: Versions,
}

/// What a dump (or a part of one) says.
#[derive(Debug, Default)]
pub(crate) struct Dump {
    pub held: Vec<HeldAt>,
    pub counts: [u64; State::ALL.len()],
    pub owners: Vec<Owner>,
    /// The kubelets of its Nodes (and whatever else says a version).
    pub versions: Versions,
    pub newest: Option<i64>,
    /// The Kubernetes objects and lists read (a list's items count too): a dump without
    /// any is not a dump.
    pub objects: u64,
}

impl Dump {
    pub(crate) fn add(&mut self, other: Dump) {
        self.held.extend(other.held);
        for (a, b) in self.counts.iter_mut().zip(other.counts) {
            *a += b;
        }
        self.owners.extend(other.owners);
        self.versions.extend(other.versions);
        self.newest = self.newest.max(other.newest);
        self.objects += other.objects;
    }
}

/// Why a dump could not be read: the message, and its line and column when they are known.
#[derive(Debug)]
pub(crate) struct Unreadable {
    pub at: Option<(usize, usize)>,
    pub message: String,
}

/// Batches waiting to be read in parallel, per thread.
const AHEAD_PER_THREAD: usize = 2;

/// Reads `input`, named `file` in places (`None`: stdin).
pub(crate) fn read<R: Read + Send>(
    input: R,
    file: Option<Arc<str>>,
    kinds: &Kinds,
    sidecars: &[String],
) -> Result<Dump, Unreadable> {
    let mut reader = Reader::with_cutter(input, Cutter::with_items());
    // The tags of a batch's pieces are known once the reader has cut it.
    let source = std::iter::from_fn(|| {
        let b = reader.next_batch()?;
        let tags = match &b {
            Ok(b) => tags(&mut reader, b),
            Err(_) => Vec::new(),
        };
        Some((b, tags))
    });
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut dump = Dump::default();
    let mut failed = None;
    let work = |(b, tags): (Result<Batch, ReadError>, Vec<Option<Tag>>)| match b {
        Ok(b) => batch(&b, &tags, file.as_ref(), kinds, sidecars),
        Err(e) => Err(read_error(e)),
    };
    ordered(
        threads,
        AHEAD_PER_THREAD * threads + 2,
        source,
        work,
        |r: Result<Dump, Unreadable>| match r {
            Ok(d) => {
                dump.add(d);
                true
            }
            Err(e) => {
                failed = Some(e);
                false
            }
        },
    );
    match failed {
        Some(e) => Err(e),
        None if dump.objects == 0 => Err(Unreadable {
            at: None,
            message: format!("holds no Kubernetes object; {EXPECTED}"),
        }),
        None => Ok(dump),
    }
}

/// What a dump is, for the errors about what is not one.
const EXPECTED: &str = "a dump is what `kubectl get pods,nodes,jobs,cronjobs -A -o yaml` (or \
                        `-o json`) saves: a List of objects, or objects with apiVersion and \
                        kind (a cluster with none of them gives a List with no items)";

/// Why a document whose root is text (the document `text`) is not part of a dump.
fn not_an_object(text: &str) -> String {
    let first = text.lines().map(str::trim).find(|l| !l.is_empty());
    if text.contains("No resources found") {
        format!(
            "\"No resources found\" is what kubectl tells a person when it finds nothing, not \
             a dump; {EXPECTED}"
        )
    } else if first.is_some_and(is_table_header) {
        format!(
            "this is the table `kubectl get` prints for a person (its header: {:?}), not a \
             dump: add `-o yaml` or `-o json`; {EXPECTED}",
            first.unwrap_or_default()
        )
    } else {
        format!("a document that is text, not a Kubernetes object; {EXPECTED}")
    }
}

/// Whether `line` is the header line of kubectl's table: upper-case column names (`NAME`
/// among them) apart by spaces (kubectl's table printer upper-cases each column's name
/// before its `printHeader`: kubernetes/kubernetes
/// `staging/src/k8s.io/cli-runtime/pkg/printers/tableprinter.go`).
fn is_table_header(line: &str) -> bool {
    let mut words = line.split_whitespace();
    line.split_whitespace()
        .any(|w| w == "NAME" || w == "NAMESPACE")
        && words.all(|w| {
            w.chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || "-()/_.".contains(c))
        })
}

/// The tags of `b`'s pieces, as the reader's cutter recorded them.
fn tags<R: Read>(reader: &mut Reader<R>, b: &Batch) -> Vec<Option<Tag>> {
    let Some(items) = reader.cutter_mut().items_mut() else {
        return vec![None; b.pieces.len()];
    };
    (b.pieces.iter())
        .map(|r| items.take(b.offset + r.start as u64))
        .collect()
}

fn read_error(e: ReadError) -> Unreadable {
    match e {
        ReadError::Io(e) => Unreadable {
            at: None,
            message: format!("cannot read: {e}"),
        },
        ReadError::TooBig { line, .. } => Unreadable {
            at: Some((line as usize + 1, 1)),
            message: format!(
                "a document larger than {} MiB that is not a list meshjob can read item by \
                 item (a `List` as `kubectl get -o yaml` or `-o json` writes it)",
                crate::stream::MAX_DOCUMENT_BYTES >> 20
            ),
        },
    }
}

/// Reads the pieces of one batch.
fn batch(
    b: &Batch,
    tags: &[Option<Tag>],
    file: Option<&Arc<str>>,
    kinds: &Kinds,
    sidecars: &[String],
) -> Result<Dump, Unreadable> {
    let mut dump = Dump::default();
    let mut lines = crate::decide::Lines::default();
    if b.offset == 0
        && let Some(wide) = crate::source::wide_encoding(&b.bytes)
    {
        return Err(Unreadable {
            at: Some((1, 1)),
            message: wide.advice(),
        });
    }
    for (r, tag) in b.pieces.iter().zip(tags) {
        match tag {
            // A list's head: the list is an object of the dump.
            Some(Tag::Head) => {
                dump.objects += 1;
                continue;
            }
            Some(Tag::Tail) => continue,
            _ => {}
        }
        let at = |off: usize| Some(line_col(b.line, &b.bytes, r.start + off));
        let bytes = &b.bytes[r.clone()];
        let piece = std::str::from_utf8(bytes).map_err(|e| Unreadable {
            at: at(e.valid_up_to()),
            message: "not UTF-8 text".into(),
        })?;
        let text = match tag {
            Some(t) => item_text(piece, *t),
            None => std::borrow::Cow::Borrowed(piece),
        };
        let docs = crate::yaml::tree::parse_stream(&text).map_err(|e| {
            let message = match tag {
                // Each item is read alone (so that a dump of any size is read in bounded
                // memory): an alias of an anchor in another item is not found.
                Some(Tag::Item { .. }) if e.message.contains("unknown anchor") => {
                    "an alias here names an anchor of another item: the items of this List \
                     share YAML anchors, which kubectl never writes; meshjob reads a List item \
                     by item, so that a dump of any size fits in memory, and cannot follow the \
                     alias: expand the aliases first (for example with yq's `explode(.)`), or \
                     save the dump again with kubectl"
                        .to_string()
                }
                None if b.offset == 0 && r.start == 0 => {
                    let first = piece.lines().map(str::trim).find(|l| !l.is_empty());
                    match first.is_some_and(is_table_header) {
                        true => not_an_object(piece),
                        false => e.message,
                    }
                }
                _ => e.message,
            };
            Unreadable {
                at: at(e.offset.min(piece.len())),
                message,
            }
        })?;
        let base = Base {
            file: file.cloned(),
            offset: b.offset as usize + r.start,
            line: b.line as usize + lines.before(&b.bytes, r.start),
        };
        for doc in &docs {
            if tag.is_none() && !doc.root.is_null() && doc.root.as_str().is_some() {
                return Err(Unreadable {
                    at: at(doc.root.start.min(piece.len())),
                    message: not_an_object(piece),
                });
            }
            let objects: Vec<&Node> = match tag {
                Some(_) => doc.root.items().unwrap_or(&[]).iter().collect(),
                None => {
                    dump.objects += u64::from(doc.root.str("kind").is_some());
                    objects(&doc.root)
                }
            };
            if tag.is_some() {
                dump.objects += objects.len() as u64;
            }
            for obj in objects {
                object(obj, &text, &base, kinds, sidecars, &mut dump);
            }
        }
    }
    Ok(dump)
}

/// The objects of a whole document: the items of a list (`List`, `PodList`, ...), or the
/// document itself.
fn objects(root: &Node) -> Vec<&Node> {
    let is_list = root.str("kind").is_some_and(|k| k.ends_with("List"));
    match root.get("items").and_then(Node::items) {
        Some(items) if is_list => items.iter().collect(),
        _ if root.entries().is_some() => vec![root],
        _ => Vec::new(),
    }
}

/// Reads one object: a pod, a node, or a possible owner.
fn object(obj: &Node, src: &str, base: &Base, kinds: &Kinds, sidecars: &[String], d: &mut Dump) {
    let api = obj.str("apiVersion").unwrap_or_default();
    match obj.str("kind").unwrap_or_default() {
        "Pod" if api == "v1" => {
            let seen = pod::read(obj, kinds, sidecars);
            d.newest = d.newest.max(seen.newest);
            if let Some(i) = State::ALL.iter().position(|s| *s == seen.state) {
                d.counts[i] += 1;
            }
            if let Some(held) = seen.held {
                let mut proxy = Versions::default();
                proxy.read_objects(src, [obj], base);
                let (line, _) = crate::yaml::text::line_col(src, held.offset);
                d.held.push(HeldAt {
                    pod: held,
                    file: base.file.clone(),
                    line: base.line + line,
                    proxy,
                });
            }
        }
        "Node" if api == "v1" => {
            d.versions.read_objects(src, [obj], base);
        }
        kind => {
            let meta = |k: &str| obj.path(&["metadata", k]).and_then(Node::as_str);
            let (Some(name), Some(uid)) = (meta("name"), meta("uid")) else {
                return;
            };
            d.owners.push(Owner {
                kind: kind.to_string(),
                namespace: meta("namespace").unwrap_or_default().to_string(),
                name: name.to_string(),
                uid: uid.to_string(),
                parent: pod::controller(obj),
            });
        }
    }
}
