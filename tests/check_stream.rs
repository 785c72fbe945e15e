//! `check` of a long stream reports as it goes: its findings reach stderr, and its diff
//! stdout, while stdin is still open; the JSON and SARIF reports, kept in temporary files
//! meanwhile, have the shape they have for a small input, with the same diff and findings
//! as the human format. An input that fails within its first 8 MiB shows only its error, as
//! it always did; past them, what it reported stays.

mod common;

use common::samples::PI_JOB as JOB;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// A ConfigMap, which no run changes (and which costs little to go through).
const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  key: value\n";

/// About `bytes` of ConfigMaps with a Job every 500 documents, from the first.
fn jobs(bytes: usize) -> String {
    let mut s = String::new();
    let mut i = 0;
    while s.len() < bytes {
        if i > 0 {
            s.push_str("---\n");
        }
        s.push_str(if i % 500 == 0 { JOB } else { CM });
        i += 1;
    }
    s
}

/// What a reader of one of the child's streams saw: its first line, and whether stdin was
/// closed when it came.
struct First {
    line: String,
    stdin_closed: bool,
}

/// Reads `stream`'s first line, tells `seen` (with whether stdin is closed by then), then
/// reads the rest.
fn first_line(
    stream: impl Read + Send + 'static,
    closed: Arc<AtomicBool>,
    seen: mpsc::Sender<First>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut r = BufReader::new(stream);
        let mut line = String::new();
        let _ = r.read_line(&mut line);
        let stdin_closed = closed.load(Ordering::SeqCst);
        let _ = seen.send(First { line, stdin_closed });
        let _ = std::io::copy(&mut r, &mut std::io::sink());
    })
}

#[test]
fn findings_and_the_diff_come_out_while_stdin_is_still_open() {
    // Past the read-ahead of stdin and the findings held at the start of an input (8 MiB
    // each, see `output::hold`).
    let input = jobs(12 << 20);
    let mut child = common::meshjob()
        .args(["check", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("meshjob runs");
    let mut stdin = child.stdin.take().expect("stdin");
    let closed = Arc::new(AtomicBool::new(false));
    let (seen, firsts) = mpsc::channel();
    let out = first_line(
        child.stdout.take().expect("stdout"),
        closed.clone(),
        seen.clone(),
    );
    let err = first_line(child.stderr.take().expect("stderr"), closed.clone(), seen);
    // The whole input is written, and stdin held open until both streams have said
    // something (a bound on the wait only keeps a broken build from hanging the suite).
    let writer = {
        let closed = closed.clone();
        std::thread::spawn(move || {
            let _ = stdin.write_all(input.as_bytes());
            let _ = stdin.flush();
            let mut got = Vec::new();
            while got.len() < 2 {
                match firsts.recv_timeout(Duration::from_secs(300)) {
                    Ok(f) => got.push(f),
                    Err(_) => break,
                }
            }
            closed.store(true, Ordering::SeqCst);
            drop(stdin);
            got.extend(firsts.try_iter());
            got
        })
    };
    let status = child.wait().expect("meshjob ends");
    let got = writer.join().expect("writer");
    let _ = (out.join(), err.join());
    assert_eq!(status.code(), Some(1), "check fails: the Jobs would change");
    assert_eq!(got.len(), 2, "both stdout and stderr said something");
    for f in &got {
        assert!(
            !f.stdin_closed,
            "`{}` came only once stdin was closed",
            f.line.trim_end()
        );
    }
    let lines: Vec<&str> = got.iter().map(|f| f.line.as_str()).collect();
    assert!(lines.contains(&"--- a/-\n"), "the diff: {lines:?}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("-:") && l.contains("[MJ")),
        "a finding: {lines:?}"
    );
}

/// Runs `meshjob ARGS` on `input`; stdout and stderr.
fn check(args: &[&str], input: &str) -> (String, String) {
    let o = common::run_stdin(common::meshjob().args(args), input.as_bytes());
    assert!(o.status.code() != Some(2), "{args:?}: {o:?}");
    (
        String::from_utf8(o.stdout).expect("utf-8"),
        String::from_utf8(o.stderr).expect("utf-8"),
    )
}

#[test]
fn the_reports_of_a_long_stream_say_what_the_human_format_says() {
    // Past the findings held at the start of an input, so that its findings and its diff go
    // into the report as they come.
    let input = jobs(9 << 20);
    let (diff, human) = check(&["check", "-"], &input);
    let finding_lines: Vec<&str> = human.lines().filter(|l| l.starts_with("-:")).collect();
    assert!(!finding_lines.is_empty());

    let (json, _) = check(&["check", "--format", "json", "-"], &input);
    let report: serde_json::Value = serde_json::from_str(&json).expect("one JSON document");
    let keys: Vec<&String> = report.as_object().expect("an object").keys().collect();
    assert_eq!(keys, ["changed", "findings", "summary"]);
    let changed = report["changed"].as_array().expect("changed");
    assert_eq!(changed.len(), 1);
    assert_eq!(changed[0]["path"], "-");
    assert!(
        changed[0]["diff"] == diff.as_str(),
        "the diff `check -` prints"
    );
    let findings = report["findings"].as_array().expect("findings");
    assert_eq!(findings.len(), finding_lines.len());
    assert_eq!(report["summary"]["files"], 1);
    assert_eq!(report["summary"]["changed"], 1);
    // Printed as serde_json prints the whole document.
    let again = serde_json::to_string_pretty(&report).expect("json") + "\n";
    assert!(again == json, "printed as serde_json prints it");

    let (sarif, _) = check(&["check", "--format", "sarif", "-"], &input);
    let log: serde_json::Value = serde_json::from_str(&sarif).expect("one SARIF log");
    let run = &log["runs"][0];
    assert_eq!(
        run["results"].as_array().expect("results").len(),
        findings.len()
    );
    assert!(
        !run["tool"]["driver"]["rules"]
            .as_array()
            .expect("rules")
            .is_empty()
    );
    let again = serde_json::to_string_pretty(&log).expect("json") + "\n";
    assert!(again == sarif, "printed as serde_json prints it");
}

#[test]
fn an_input_that_fails_past_its_start_keeps_what_it_reported() {
    let bad = "---\nkey: [unclosed\n";
    // Within the start held back, only the error is shown, as for any small input.
    let small = format!("{JOB}{bad}");
    let o = common::run_stdin(common::meshjob().args(["check", "-"]), small.as_bytes());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(o.stdout.is_empty(), "no diff of an input that failed");
    assert!(
        !err.contains("[MJ701]"),
        "no finding of an input that failed: {err}"
    );
    assert!(err.contains("error: invalid YAML"), "{err}");
    // Past it, what was reported stays, and the error comes after it.
    let long = format!("{}{bad}", jobs(9 << 20));
    let o = common::run_stdin(common::meshjob().args(["check", "-"]), long.as_bytes());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(o.stdout.starts_with(b"--- a/-\n"), "the diff so far");
    let (found, failed) = (err.find("[MJ701]"), err.find("error: invalid YAML"));
    assert!(
        matches!((found, failed), (Some(f), Some(e)) if f < e),
        "findings, then the error: {err}"
    );
}
