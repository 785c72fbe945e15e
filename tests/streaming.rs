//! Inputs larger than one batch, through the binary: written in order as they are processed,
//! the same bytes as processing them whole, never half-written where the docs promise it,
//! and errors at the same place as the whole-text parse puts them.

mod common;

use common::samples::PI_JOB as JOB;

use meshjob as run;
use meshjob::Settings;
use meshjob::unified_diff;
use std::path::Path;
use std::process::{Command, Output};

const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  key: value\n";

/// About `bytes` of ConfigMaps with a Job every `every` documents (none when 0).
fn stream(bytes: usize, every: usize) -> String {
    let mut s = String::new();
    let mut i = 0;
    while s.len() < bytes {
        if i > 0 {
            s.push_str("---\n");
        }
        s.push_str(if every > 0 && i % every == every - 1 {
            JOB
        } else {
            CM
        });
        i += 1;
    }
    s
}

fn meshjob(args: &[&str], dir: &Path) -> Command {
    let mut c = Command::new(common::bin());
    c.args(args).current_dir(dir);
    c
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// What the whole-text pipeline says (library, one text).
fn whole(text: &str) -> run::Outcome {
    run::edit_whole(text, &Settings::default(), run::EditOptions::default())
}

#[test]
fn a_multi_batch_stream_comes_out_as_the_whole_text_would() {
    let text = stream(1 << 20, 97);
    let want = whole(&text);
    assert!(want.fatal.is_none());
    assert!(want.text != text);
    let dir = tempfile::tempdir().unwrap();
    let out = common::run_stdin(&mut meshjob(&["fix", "-"], dir.path()), text.as_bytes());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        out.stdout == want.text.as_bytes(),
        "fix - writes the whole-text result"
    );

    // In place: the first change is past the first batch, so the unchanged start is copied
    // from the file.
    let path = dir.path().join("big.yaml");
    let late = format!("{}---\n{JOB}", stream(600 << 10, 0));
    std::fs::write(&path, &late).unwrap();
    let out = meshjob(&["fix", "big.yaml"], dir.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), whole(&late).text);

    // The diff, built document by document, is the change: applied to the input, it gives
    // the output. (On a stream this repetitive, the whole-text diff may pair equal lines
    // otherwise; where the changes are apart it is the same, see tests/stream_cuts.rs.)
    std::fs::write(&path, &text).unwrap();
    let out = meshjob(&["diff", "big.yaml"], dir.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let d = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        common::patch::apply(&text, &d).as_deref(),
        Ok(want.text.as_str())
    );
    let sparse = stream(1 << 20, 997);
    std::fs::write(&path, &sparse).unwrap();
    let out = meshjob(&["diff", "big.yaml"], dir.path()).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        unified_diff("big.yaml", &sparse, &whole(&sparse).text)
    );
}

#[test]
fn an_error_deep_in_a_stream_is_where_the_whole_parse_puts_it() {
    // An unclosed quote, then more documents: the whole parse stops at the next `---`.
    let text = format!(
        "{}---\nbad: \"open\n{}",
        stream(600 << 10, 50),
        stream(300 << 10, 0)
    );
    let want = whole(&text).fatal.expect("invalid");
    let (line, col) = meshjob::line_col(&text, want.offset);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.yaml");
    std::fs::write(&path, &text).unwrap();
    for mode in ["check", "fix"] {
        // `-q`: the error alone, without the summary line.
        let out = meshjob(&[mode, "-q", "bad.yaml"], dir.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert_eq!(
            stderr(&out),
            format!(
                "bad.yaml:{line}:{col}: error: {}; file left untouched [{}]\n",
                want.message, want.rule
            )
        );
        assert!(
            out.stdout.is_empty(),
            "{mode}: nothing printed for a file that failed"
        );
    }
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "untouched");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(left.len(), 1, "no temporary file left");

    // `fix -` under the hold-back size: the input comes back unchanged.
    let out = common::run_stdin(&mut meshjob(&["fix", "-"], dir.path()), text.as_bytes());
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout == text.as_bytes(), "written back unchanged");
}

#[test]
fn within_the_hold_back_size_fix_stdin_gives_the_input_back() {
    // 6 MiB in, 6 MiB out: the output held and the input kept are each under 8 MiB (they
    // were once counted together, and the input came back only under about 4 MiB).
    let text = format!("{}---\nbad: [\n", stream(6 << 20, 0));
    let dir = tempfile::tempdir().unwrap();
    let out = common::run_stdin(&mut meshjob(&["fix", "-"], dir.path()), text.as_bytes());
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout == text.as_bytes(), "written back unchanged");
    assert!(
        stderr(&out).contains("; stdin written back unchanged [MJ001]"),
        "{}",
        stderr(&out)
    );
    assert!(
        !stderr(&out).contains("file left untouched"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn fix_stdin_under_a_broken_config_gives_the_whole_input_back() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join(".meshjob.yaml"),
        "apiVersion: meshjob.dev/v1alpha1\nkind: MeshJobConfig\nspec:\n  nope: 1\n",
    )
    .unwrap();
    let text = stream(300 << 10, 7);
    let out = common::run_stdin(&mut meshjob(&["fix", "-"], dir.path()), text.as_bytes());
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("nope"), "{}", stderr(&out));
    assert!(
        out.stdout == text.as_bytes(),
        "the input read ahead comes back too"
    );
}

#[test]
fn past_the_hold_back_size_fix_stdin_stops_at_the_error() {
    let good = stream(meshjob::HOLD_BYTES + (2 << 20), 0);
    let text = format!("{good}---\nbad: [\n");
    let dir = tempfile::tempdir().unwrap();
    let out = common::run_stdin(&mut meshjob(&["fix", "-"], dir.path()), text.as_bytes());
    assert_eq!(
        out.status.code(),
        Some(2),
        "a failure, whatever was written"
    );
    assert!(stderr(&out).contains("invalid YAML"), "{}", stderr(&out));
    assert!(
        !out.stdout.is_empty() && text.as_bytes().starts_with(&out.stdout),
        "what was written is the unchanged start of the stream"
    );
    assert!(
        out.stdout.len() < text.len(),
        "and not the failing document"
    );
    assert!(
        stderr(&out).contains("; the output stops before it [MJ001]"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_tree_of_files_is_reported_in_walk_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut names = Vec::new();
    for d in 0..5 {
        let sub = dir.path().join(format!("d{d}"));
        std::fs::create_dir(&sub).unwrap();
        for f in 0..40 {
            let name = format!("d{d}/f{f:02}.yaml");
            let body = if (d + f) % 3 == 0 { JOB } else { CM };
            std::fs::write(dir.path().join(&name), body).unwrap();
            names.push(name);
        }
    }
    let all = meshjob(&["check", "."], dir.path()).output().unwrap();
    assert_eq!(all.status.code(), Some(1));
    let mut one_by_one = Vec::new();
    for n in &names {
        let o = meshjob(&["check", n], dir.path()).output().unwrap();
        one_by_one.extend(o.stdout);
    }
    assert!(all.stdout == one_by_one, "the diffs in walk order");
    let json = meshjob(&["check", "--format", "json", "."], dir.path())
        .output()
        .unwrap();
    assert_eq!(json.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let changed: Vec<String> = report["changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["path"].as_str().unwrap().to_string())
        .collect();
    let want: Vec<String> = names
        .iter()
        .enumerate()
        .filter(|(i, _)| (i / 40 + i % 40) % 3 == 0)
        .map(|(_, n)| n.clone())
        .collect();
    assert_eq!(changed, want);
}

const AMBIENT: &str = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: batch\n  labels:\n    istio.io/dataplane-mode: ambient\n";

/// A Job in namespace `batch`, after `docs` ConfigMaps (several batches of them).
fn ambient_stream(namespace_first: bool, docs: usize) -> String {
    let job = JOB.replace("  name: pi\n", "  name: pi\n  namespace: batch\n");
    let mut parts: Vec<String> = Vec::new();
    if namespace_first {
        parts.push(AMBIENT.into());
    }
    parts.extend(std::iter::repeat_n(CM.to_string(), docs));
    parts.push(job);
    if !namespace_first {
        parts.push(AMBIENT.into());
    }
    parts.join("---\n")
}

fn check(args: &[&str], dir: &Path, stdin: Option<&str>) -> Output {
    use std::io::Write;
    let mut c = meshjob(args, dir);
    c.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        input.write_all(text.as_bytes()).unwrap();
    }
    drop(input);
    child.wait_with_output().unwrap()
}

#[test]
fn a_file_is_decided_with_its_namespaces_wherever_they_stand() {
    let dir = tempfile::tempdir().unwrap();
    for (first, docs) in [(true, 0), (false, 0), (true, 3000), (false, 3000)] {
        let text = ambient_stream(first, docs);
        std::fs::write(dir.path().join("s.yaml"), &text).unwrap();
        let o = check(&["check", "s.yaml"], dir.path(), None);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(o.stdout.is_empty());
        assert!(stderr(&o).contains("MJ106"), "{}", stderr(&o));
        // The library (one text in memory) decides the same way.
        assert!(
            whole(&text)
                .findings
                .iter()
                .any(|f| f.message.contains("ambient mode"))
        );
        let r = run::edit_text(&text, &Settings::default());
        assert_eq!(r.text, text);
    }
}

#[test]
fn stdin_is_decided_with_its_namespaces_wherever_they_stand() {
    // Within the read-ahead (any chart or kustomization of ordinary size), on a pipe: the
    // Namespace after its Job counts, as in a file. kustomize hands a legacy plugin its
    // resources in `resources:` order, and Helm post-renders templates in file-name order.
    let dir = tempfile::tempdir().unwrap();
    for docs in [0, 3000] {
        for first in [true, false] {
            let text = ambient_stream(first, docs);
            let o = check(&["check", "-"], dir.path(), Some(&text));
            assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
            assert!(stderr(&o).contains("MJ106"), "{}", stderr(&o));
            assert!(o.stdout.is_empty(), "nothing to change");
            let o = common::run_stdin(&mut meshjob(&["fix", "-"], dir.path()), text.as_bytes());
            assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
            assert!(
                o.stdout == text.as_bytes(),
                "an ambient Job is left as it is"
            );
        }
    }
}

#[test]
fn past_the_read_ahead_a_namespace_after_its_pods_stops_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let filler = stream(meshjob::HOLD_BYTES + (1 << 20), 0);
    let job = JOB.replace("  name: pi\n", "  name: pi\n  namespace: batch\n");
    // Past the read-ahead, the Namespace after its Job: a pipe cannot go back to the Job.
    let late = format!("{job}---\n{filler}---\n{LINKERD}");
    let o = common::run_stdin(&mut meshjob(&["fix", "-"], dir.path()), late.as_bytes());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("[MJ012]"), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("Namespace batch comes after a pod in it (line 1)"),
        "{}",
        stderr(&o)
    );
    assert!(o.stdout.len() < late.len(), "the output stops before it");
    // The same stream as a file, or with stdin redirected from the file, is decided whole.
    let path = dir.path().join("late.yaml");
    std::fs::write(&path, &late).unwrap();
    let from_file = meshjob(&["fix", "-"], dir.path())
        .stdin(std::fs::File::open(&path).unwrap())
        .output()
        .unwrap();
    assert_eq!(from_file.status.code(), Some(0), "{}", stderr(&from_file));
    let linkerd = String::from_utf8_lossy(&from_file.stdout);
    assert!(
        linkerd.contains("for q in localhost:4191/shutdown;"),
        "Linkerd's wrapper"
    );
    // A Namespace past the read-ahead still places the pods that come after it, and a
    // Namespace that places no pod before it is no error.
    let after = format!("{filler}---\n{LINKERD}---\n{job}");
    let o = common::run_stdin(&mut meshjob(&["fix", "-"], dir.path()), after.as_bytes());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("for q in localhost:4191/shutdown;"));
    // The same Namespace again past the read-ahead says nothing new: no error.
    let again = format!("{LINKERD}---\n{job}---\n{filler}---\n{LINKERD}");
    let o = common::run_stdin(&mut meshjob(&["fix", "-"], dir.path()), again.as_bytes());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Within the read-ahead, the Namespace after its Job counts, whatever follows.
    let early = format!("{job}---\n{LINKERD}---\n{filler}");
    let o = common::run_stdin(&mut meshjob(&["fix", "-"], dir.path()), early.as_bytes());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("for q in localhost:4191/shutdown;"));
}

const LINKERD: &str = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: batch\n  annotations:\n    linkerd.io/inject: enabled\n";

/// `ambient_stream` with a Namespace that places the pods in Linkerd.
fn linkerd_stream(namespace_first: bool, docs: usize) -> String {
    ambient_stream(namespace_first, docs).replace(AMBIENT, LINKERD)
}

/// The diff of `args`, and whether its Job went to Linkerd (else Istio).
fn linkerd_diff(args: &[&str], dir: &Path, stdin: Option<&str>) -> bool {
    let o = check(args, dir, stdin);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let diff = String::from_utf8_lossy(&o.stdout);
    let linkerd = diff.contains("for q in localhost:4191/shutdown;");
    assert!(
        linkerd != diff.contains("for q in localhost:15020/quitquitquit;"),
        "{diff}"
    );
    linkerd
}

#[test]
fn linkerd_namespaces_of_the_whole_run_place_the_pods() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["diff", "--color", "never"];
    for docs in [0, 3000] {
        for first in [true, false] {
            // A file: its Namespace counts wherever it stands.
            std::fs::write(dir.path().join("s.yaml"), linkerd_stream(first, docs)).unwrap();
            assert!(linkerd_diff(
                &[&args[..], &["s.yaml"]].concat(),
                dir.path(),
                None
            ));
            // Stdin: the same, whether the Namespace comes first or last.
            let text = linkerd_stream(first, docs);
            assert!(linkerd_diff(
                &[&args[..], &["-"]].concat(),
                dir.path(),
                Some(&text)
            ));
        }
    }
    // A Namespace in another file of the run counts, for a file and for stdin.
    let job = JOB.replace("  name: pi\n", "  name: pi\n  namespace: batch\n");
    std::fs::write(dir.path().join("ns.yaml"), LINKERD).unwrap();
    std::fs::write(dir.path().join("job.yaml"), &job).unwrap();
    assert!(linkerd_diff(
        &[&args[..], &["job.yaml", "ns.yaml"]].concat(),
        dir.path(),
        None
    ));
    assert!(linkerd_diff(
        &[&args[..], &["-", "ns.yaml"]].concat(),
        dir.path(),
        Some(&job)
    ));
    assert!(!linkerd_diff(
        &[&args[..], &["-"]].concat(),
        dir.path(),
        Some(&job)
    ));
    // And a Namespace on stdin counts for a file of the run.
    assert!(linkerd_diff(
        &[&args[..], &["job.yaml", "-"]].concat(),
        dir.path(),
        Some(LINKERD)
    ));
}

/// An IstioOperator that turns native sidecars on for every proxy of Istio 1.29.
const OPERATOR: &str = "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nspec:\n  tag: 1.29.1\n  components:\n    pilot:\n      k8s:\n        env:\n        - name: ENABLE_NATIVE_SIDECARS\n          value: \"true\"\n";

/// How many pods of a rewritten stream got the native annotation, and how many the wrapper.
fn strategies(out: &[u8]) -> (usize, usize) {
    let text = String::from_utf8_lossy(out);
    (
        text.matches("sidecar.istio.io/nativeSidecar: \"true\"")
            .count(),
        text.matches("# meshjob-wrapper v").count(),
    )
}

#[test]
fn versions_read_on_stdin_decide_every_later_batch() {
    let dir = tempfile::tempdir().unwrap();
    let body = stream(1 << 20, 97);
    let jobs = body.matches("kind: Job").count();
    assert!(jobs > 50);
    // First: every Job of every batch, however the threads share them, is native; the same
    // as the file, which is read whole first.
    let first = format!("{OPERATOR}---\n{body}");
    let piped = common::run_stdin(&mut meshjob(&["fix", "-"], dir.path()), first.as_bytes());
    assert_eq!(piped.status.code(), Some(0), "{}", stderr(&piped));
    assert_eq!(strategies(&piped.stdout), (jobs, 0));
    std::fs::write(dir.path().join("s.yaml"), &first).unwrap();
    let o = meshjob(&["fix", "s.yaml"], dir.path()).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(dir.path().join("s.yaml")).unwrap(),
        piped.stdout
    );
    // In the middle of a stream that stdin's read-ahead holds whole: decided as the file is.
    let half = body.len() / 2;
    let cut = half + body[half..].find("---\n").unwrap() + 4;
    let middle = format!("{}{OPERATOR}---\n{}", &body[..cut], &body[cut..]);
    let o = common::run_stdin(&mut meshjob(&["fix", "-"], dir.path()), middle.as_bytes());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(strategies(&o.stdout), (jobs, 0));
    // Past the read-ahead of a longer pipe: the Jobs before it get the wrapper, those after
    // it a native sidecar, and one warning says that it came late.
    let long = stream(meshjob::HOLD_BYTES + (1 << 20), 97);
    let all = long.matches("kind: Job").count();
    let at = meshjob::HOLD_BYTES + (1 << 19);
    let cut = at + long[at..].find("---\n").unwrap() + 4;
    let late = format!("{}{OPERATOR}---\n{}", &long[..cut], &long[cut..]);
    let before = long[..cut].matches("kind: Job").count();
    let o = common::run_stdin(&mut meshjob(&["fix", "-"], dir.path()), late.as_bytes());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(strategies(&o.stdout), (all - before, before));
    let c = common::run_stdin(&mut meshjob(&["check", "-"], dir.path()), late.as_bytes());
    assert_eq!(stderr(&c).matches("[MJ124]").count(), 1, "{}", stderr(&c));
}
