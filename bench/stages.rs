//! Micro-benchmarks of the pipeline stages (divan; `bench/run.sh` is the end-to-end
//! benchmark of the binary), so that a regression shows which stage it
//! comes from: parse, locate, plan, apply (splice + verify), and the whole `process`.
//!
//! Every stage runs on two streams built from the repo's own testdata, at 1, 100 and 1000
//! documents:
//! - `jobs`: the CronJob of `jobs/cronjob-block-style-command`, repeated with unique names; every
//!   document is edited.
//! - `mixed`: mostly documents that are not Jobs (look-alikes, a ConfigMap, a Service, an
//!   Argo Workflow), with one real Job in six, from `jobs/look-alike-kinds-are-untouched` and
//!   `jobs/helm-multi-document-stream`.
//!
//! Throughput is in bytes of the input stream. Run with `cargo bench --bench stages`, or one
//! stage with e.g. `cargo bench --bench stages -- parse`.

use divan::counter::BytesCount;
use divan::{Bencher, black_box};
use meshjob::Settings;
use meshjob::{Doc, parse_stream};
use meshjob::{Edit, Intended, apply};

fn main() {
    divan::main();
}

/// Document counts of every benchmark.
const SIZES: &[usize] = &[1, 100, 1000];

const CRONJOB: &str = include_str!("../testdata/jobs/cronjob-block-style-command/input.yaml");
const LOOK_ALIKES: &str =
    include_str!("../testdata/jobs/look-alike-kinds-are-untouched/input.yaml");
const HELM: &str = include_str!("../testdata/jobs/helm-multi-document-stream/input.yaml");

/// Splits a stream on its `---` lines, dropping empty documents.
fn split_docs(stream: &str) -> Vec<String> {
    let mut docs = Vec::new();
    let mut cur = String::new();
    for line in stream.split_inclusive('\n') {
        if line.trim_end() == "---" {
            docs.push(std::mem::take(&mut cur));
        } else {
            cur.push_str(line);
        }
    }
    docs.push(cur);
    docs.retain(|d| !d.trim().is_empty());
    for d in &mut docs {
        if !d.ends_with('\n') {
            d.push('\n');
        }
    }
    docs
}

/// `doc` with `-{i}` appended to its `metadata.name` (quoted or plain).
fn renamed(doc: &str, i: usize) -> String {
    const KEY: &str = "metadata:\n  name: ";
    let at = doc
        .find(KEY)
        .expect("every sample document has metadata.name")
        + KEY.len();
    let end = at + doc[at..].find('\n').unwrap_or(doc.len() - at);
    let name = doc[at..end].trim_matches('"');
    format!("{}\"{name}-{i}\"{}", &doc[..at], &doc[end..])
}

/// A stream of `n` documents cycling through `pool`, each with a unique name.
fn stream(pool: &[String], n: usize) -> String {
    let mut out = String::new();
    for i in 0..n {
        if i > 0 {
            out.push_str("---\n");
        }
        out.push_str(&renamed(&pool[i % pool.len()], i));
    }
    out
}

/// Checks that `text` holds `n` documents of which `targets` are pods to edit, so that
/// a change to testdata or to the engine cannot quietly change what is measured.
fn checked(text: String, n: usize, targets: usize) -> String {
    let docs = parsed(&text);
    assert_eq!(docs.len(), n, "document count");
    let found: usize = docs
        .iter()
        .map(|d| {
            meshjob::locate(&d.root, meshjob::Kinds::builtin())
                .pods
                .len()
        })
        .sum();
    assert_eq!(found, targets, "pod targets");
    let outcome = meshjob::edit_text(&text, &Settings::default());
    assert!(outcome.fatal.is_none(), "{:?}", outcome.fatal);
    assert_eq!(
        outcome.changed(&text),
        targets > 0,
        "whether the text changes"
    );
    text
}

/// `n` copies of the CronJob: every document is a target.
fn jobs(n: usize) -> String {
    checked(stream(&split_docs(CRONJOB), n), n, n)
}

/// `n` documents, one Job in six, the rest not Jobs.
fn mixed(n: usize) -> String {
    let helm = split_docs(HELM); // ConfigMap, Job, Service
    let look = split_docs(LOOK_ALIKES); // volcano Job, Argo Workflow, Deployment
    assert_eq!((helm.len(), look.len()), (3, 3), "testdata changed shape");
    let pool = [
        helm[0].clone(),
        look[0].clone(),
        helm[2].clone(),
        look[1].clone(),
        look[2].clone(),
        helm[1].clone(),
    ];
    // The Job is the sixth of every six.
    checked(stream(&pool, n), n, (n + 1) / 6)
}

fn parsed(text: &str) -> Vec<Doc> {
    parse_stream(text).expect("the bench input parses")
}

/// The edits and intended values `process` would apply to `text`.
fn planned(text: &str, docs: &[Doc], settings: &Settings) -> (Vec<Edit>, Vec<Intended>) {
    let mut edits = Vec::new();
    let mut intended = Vec::new();
    for doc in docs {
        let mut p = meshjob::plan_doc(text, doc, settings, false);
        intended.push(Intended {
            value: p.editor.take_intended(),
            edited: !p.editor.edits().is_empty(),
        });
        edits.extend(p.editor.take_edits());
    }
    (edits, intended)
}

fn bench_parse(bencher: Bencher<'_, '_>, text: &str) {
    bencher
        .counter(BytesCount::of_str(text))
        .bench(|| parse_stream(black_box(text)));
}

fn bench_locate(bencher: Bencher<'_, '_>, text: &str) {
    let docs = parsed(text);
    bencher.counter(BytesCount::of_str(text)).bench(|| {
        black_box(&docs)
            .iter()
            .map(|d| meshjob::locate(&d.root, meshjob::Kinds::builtin()))
            .collect::<Vec<_>>()
    });
}

fn bench_plan(bencher: Bencher<'_, '_>, text: &str) {
    let docs = parsed(text);
    let settings = Settings::default();
    bencher.counter(BytesCount::of_str(text)).bench(|| {
        black_box(&docs)
            .iter()
            .map(|d| meshjob::plan_doc(text, d, &settings, false))
            .collect::<Vec<_>>()
    });
}

fn bench_apply(bencher: Bencher<'_, '_>, text: &str) {
    let docs = parsed(text);
    let (edits, intended) = planned(text, &docs, &Settings::default());
    bencher.counter(BytesCount::of_str(text)).bench(|| {
        apply(black_box(text), &docs, black_box(&edits), &intended)
            .expect("the edits splice and verify")
    });
}

fn bench_process(bencher: Bencher<'_, '_>, text: &str) {
    let settings = Settings::default();
    bencher
        .counter(BytesCount::of_str(text))
        .bench(|| meshjob::edit_text(black_box(text), &settings));
}

/// One module per stage, with a `jobs` and a `mixed` benchmark each.
macro_rules! stage {
    ($name:ident, $bench:ident) => {
        mod $name {
            use divan::Bencher;

            #[divan::bench(args = super::SIZES)]
            fn jobs(bencher: Bencher<'_, '_>, n: usize) {
                super::$bench(bencher, &super::jobs(n));
            }

            #[divan::bench(args = super::SIZES)]
            fn mixed(bencher: Bencher<'_, '_>, n: usize) {
                super::$bench(bencher, &super::mixed(n));
            }
        }
    };
}

stage!(parse, bench_parse);
stage!(locate, bench_locate);
stage!(plan, bench_plan);
stage!(apply, bench_apply);
stage!(process, bench_process);
