//! Hostile sizes and shapes end fast, with a clear error or a correct result.
//!
//! - an alias bomb ("billion laughs") is never expanded: aliases stay names;
//! - nesting past 255 levels (granit-parser's limit, which also keeps the tree's recursive
//!   walks shallow) is a clean error, even at 10,000 levels, never a stack overflow;
//! - a 10 MB scalar is handled, and round-trips when it is an argv item;
//! - a stream has no size limit, a document over 32 MiB is refused (a KRM ResourceList, one
//!   document, is refused before it is read);
//! - time grows linearly with the number of documents.
//!
//! These tests check results, not speed: speed is measured by `scripts/big-inputs.sh` (time
//! and peak memory of the release binary) and `bench/`. The one time bound, [`HANG`], only
//! turns an expansion that would run for hours (an alias bomb expanded, a quadratic walk of
//! 10,000 levels) into a failure instead of a hung run; it is far above what a debug build
//! on a loaded machine takes.

mod common;

use common::samples::PI_JOB as JOB;

use meshjob::Settings;
use meshjob::{self as run, Outcome};
use std::process::Command;
use std::time::{Duration, Instant};

/// What a run may take before it counts as hung (see the module's docs).
const HANG: Duration = Duration::from_secs(600);

/// Processes `text`; fails when it takes longer than [`HANG`].
fn processed(text: &str) -> Outcome {
    let start = Instant::now();
    let out = run::edit_text(text, &Settings::default());
    let took = start.elapsed();
    assert!(took < HANG, "took {took:?}: as good as hung");
    out
}

/// Nine levels of nine aliases each: 9^9 (387 million) leaves if anything expanded it.
fn laughs(indent: &str) -> String {
    let mut s = format!("{indent}l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for i in 1..=9 {
        let p = i - 1;
        s.push_str(&format!(
            "{indent}l{i}: &l{i} [*l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}]\n"
        ));
    }
    s
}

#[test]
fn alias_bomb_is_not_expanded() {
    let alone = laughs("");
    let out = processed(&alone);
    assert!(out.fatal.is_none());
    assert_eq!(
        out.text, alone,
        "a document without targets is left as it is"
    );

    // Beside a Job's pod template, in the Job's own metadata: the Job is still fixed.
    let job = JOB.replace(
        "  name: pi\n",
        &format!("  name: pi\n  labels:\n{}", laughs("    ")),
    );
    let out = processed(&job);
    assert!(out.fatal.is_none(), "{:?}", out.fatal);
    assert!(out.text.contains("meshjob-wrapper"), "the Job is wrapped");
    assert!(
        out.text.contains(&laughs("    ")),
        "the aliases are kept as written"
    );
    common::invariants::check(&job).expect("invariants");
}

#[test]
fn alias_bomb_in_the_config_file_ends_fast() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = dir.path().join("bomb.yaml");
    // Under a known key, so that only the expansion can stop it.
    std::fs::write(
        &cfg,
        format!(
            "apiVersion: meshjob.dev/v1alpha1\nkind: MeshJobConfig\nspec:\n  entrypoints:\n{}",
            laughs("    ")
        ),
    )
    .unwrap();
    let input = dir.path().join("job.yaml");
    std::fs::write(&input, JOB).unwrap();
    let start = Instant::now();
    let out = Command::new(common::bin())
        .args(["check", "--config"])
        .arg(&cfg)
        .arg(&input)
        .output()
        .expect("run meshjob");
    assert!(start.elapsed() < HANG, "as good as hung");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "a bad config is a usage error: {stderr}"
    );
    assert_eq!(std::fs::read_to_string(&input).unwrap(), JOB);
}

fn nested_flow(depth: usize) -> String {
    format!("a: {}{}\n", "[".repeat(depth), "]".repeat(depth))
}

fn nested_block(depth: usize) -> String {
    let mut s = String::new();
    for i in 0..depth {
        s.push_str(&" ".repeat(i));
        s.push_str("k:\n");
    }
    s
}

#[test]
fn deep_nesting_is_a_clean_error() {
    // 254 levels under the root mapping are fine; past 255 the parser stops.
    let ok = nested_flow(254);
    assert!(processed(&ok).fatal.is_none());
    for text in [nested_flow(10_000), nested_block(300), nested_block(10_000)] {
        let out = processed(&text);
        let f = out.fatal.expect("a fatal error");
        assert!(
            f.message.contains("nested more than 255 levels"),
            "{}",
            f.message
        );
        assert!(f.offset <= text.len());
        assert_eq!(out.text, text);
    }
    // A deep flow value inside a Job's pod template: refused, never half-edited.
    let job = JOB.replace(
        "      restartPolicy",
        &format!(
            "      x: {}{}\n      restartPolicy",
            "{a: ".repeat(300),
            "}".repeat(300)
        ),
    );
    assert!(processed(&job).fatal.is_some());
}

#[test]
fn deep_nesting_through_the_binary_exits_2() {
    // The binary's main thread, not a test thread: no stack overflow there either.
    let text = nested_flow(10_000);
    let out = common::run_stdin(common::meshjob().args(["fix", "-"]), text.as_bytes());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.starts_with("-:1:"), "{stderr}");
    assert!(stderr.contains("nested more than 255 levels"), "{stderr}");
    assert_eq!(out.stdout, text.as_bytes(), "stdin comes back unchanged");
}

#[test]
fn ten_megabyte_scalar() {
    let big = "x".repeat(10 << 20);
    let cm = format!("apiVersion: v1\nkind: ConfigMap\ndata:\n  blob: \"{big}\"\n");
    let out = processed(&cm);
    assert!(out.fatal.is_none());
    assert_eq!(out.text, cm);

    // As an argv item of a Job: wrapped, and the item is in `args` intact.
    let job = JOB.replace("\"print 1\"", &format!("\"{big}\""));
    let out = processed(&job);
    assert!(out.fatal.is_none(), "{:?}", out.fatal);
    let docs = meshjob::parse_stream(&out.text).unwrap();
    let v = meshjob::Value::from_node(&docs[0].root);
    let args = v
        .get("spec")
        .and_then(|s| s.get("template"))
        .and_then(|t| t.get("spec"))
        .and_then(|s| s.get("containers"))
        .and_then(|c| match c {
            meshjob::Value::Seq(items) => items.first(),
            _ => None,
        })
        .and_then(|c| c.get("args"));
    match args {
        Some(meshjob::Value::Seq(items)) => {
            assert_eq!(items.len(), 3);
            assert_eq!(items[2].as_str(), Some(big.as_str()));
        }
        other => panic!("no args: {other:?}"),
    }
}

/// Slow in a debug build: `scripts/big-inputs.sh` runs it on the release build.
#[test]
#[ignore = "slow in a debug build; scripts/big-inputs.sh runs it"]
fn a_stream_past_the_old_cap_is_processed() {
    // 40 MB of ConfigMaps: more than one document may hold, any number of documents may
    // follow each other.
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("many.yaml");
    let cm = "---\napiVersion: v1\nkind: ConfigMap\ndata: {a: b}\n";
    let text = cm.repeat(40_000_000 / cm.len() + 1);
    std::fs::write(&path, &text).unwrap();
    let out = Command::new(common::bin())
        .arg("check")
        .arg(&path)
        .output()
        .expect("run meshjob");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(out.stdout.is_empty(), "nothing to change");
    let out = common::run_stdin(
        Command::new(common::bin()).args(["fix", "-"]),
        text.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout == text.as_bytes(), "written back as it was");
}

#[test]
fn a_document_over_32_mib_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("huge.yaml");
    let before = format!(
        "apiVersion: v1\nkind: ConfigMap\ndata:\n  a: b\n---\napiVersion: v1\nkind: ConfigMap\ndata:\n  blob: {}\n",
        "x".repeat(33 << 20)
    );
    std::fs::write(&path, &before).unwrap();
    for args in [vec!["fix"], vec!["check"]] {
        let out = Command::new(common::bin())
            .args(&args)
            .arg(&path)
            .output()
            .expect("run meshjob");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(":5:1: error: a document larger than 32 MiB"),
            "{stderr}"
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    assert!(
        std::fs::read(&path).unwrap() == before.as_bytes(),
        "left untouched"
    );

    // On stdin, for every host: the stream's document for `fix -` and the kustomize plugin,
    // the whole ResourceList for the KRM function.
    let plugin = dir.path().join("MeshJobConfig");
    std::os::unix::fs::symlink(common::bin(), &plugin).unwrap();
    let config = dir.path().join("plugin-config.yaml");
    std::fs::write(
        &config,
        "apiVersion: meshjob.dev/v1alpha1\nkind: MeshJobConfig\nmetadata:\n  name: m\n",
    )
    .unwrap();
    let mut plugin_cmd = Command::new(&plugin);
    plugin_cmd.arg(&config);
    let mut diff_cmd = Command::new(common::bin());
    diff_cmd.args(["diff", "-"]);
    let mut krm_cmd = Command::new(common::bin());
    krm_cmd.arg("krm");
    for cmd in [&mut diff_cmd, &mut krm_cmd, &mut plugin_cmd] {
        let out = common::run_stdin(cmd, before.as_bytes());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cmd:?}: {stderr}");
        assert!(stderr.contains("larger than 32 MiB"), "{cmd:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{cmd:?}");
    }
    // `fix -` gives its input back, the document too big to edit included, and does not
    // speak of a file.
    let out = common::run_stdin(
        Command::new(common::bin()).args(["fix", "-"]),
        before.as_bytes(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("-:5:1: error: a document larger than 32 MiB")
            && stderr.contains("; stdin written back unchanged [MJ002]")
            && !stderr.contains("file left untouched"),
        "{stderr}"
    );
    assert!(out.stdout == before.as_bytes(), "the input comes back");
}

/// The largest accepted input, all Jobs: run by `scripts/big-inputs.sh` on the release
/// binary, which also measures peak memory.
#[test]
#[ignore = "slow in a debug build; scripts/big-inputs.sh runs it"]
fn largest_accepted_input_is_fixed() {
    let mut text = String::new();
    let mut i = 0;
    while text.len() + JOB.len() + 20 < meshjob::MAX_DOCUMENT_BYTES {
        text.push_str("---\n");
        text.push_str(&JOB.replace("name: pi\n", &format!("name: pi-{i}\n")));
        i += 1;
    }
    let out = run::edit_text(&text, &Settings::default());
    assert!(out.fatal.is_none());
    assert!(out.text.len() > text.len());
}
