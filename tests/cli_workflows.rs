//! The command line as CI, pre-commit and people use it, driven through the built binary:
//! what no PATH means, the summary line, excludes and Helm chart templates, one finding per
//! pod that would change, path spelling, the JSON report, escaping of control characters,
//! the config file looked up per file, `--stdin-filename`, and the edges of `config`,
//! `kustomize install` and `failOn`.
//!
//! Every case builds its own tree in a temporary directory, so each reads on its own.

mod common;
mod hosts;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

/// A Job whose container `pi` would be wrapped. The container item is on line 10.
fn job(name: &str) -> String {
    format!(
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {name}\nspec:\n  template:\n    \
         spec:\n      restartPolicy: Never\n      containers:\n      - name: pi\n        \
         image: perl\n        command: [perl, -e, print 1]\n"
    )
}

const CONTAINER_LINE: usize = 10;

const CONFIGMAP: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: b\n";

/// A Job with `args` but no `command`: an error that `fix` cannot repair.
const ARGS_ONLY: &str = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: args-only\nspec:\n  \
                         template:\n    spec:\n      restartPolicy: Never\n      containers:\n      \
                         - name: main\n        image: registry.example/tool:2.0\n        \
                         args: [--once]\n";

/// A Job with a wrappable container beside the args-only one: `fix` changes it, and the
/// args-only container stays an error.
const HALF_WRAPPABLE: &str = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: args-only\nspec:\n  \
                              template:\n    spec:\n      restartPolicy: Never\n      containers:\n      \
                              - name: task\n        image: alpine\n        command: [\"true\"]\n      \
                              - name: main\n        image: registry.example/tool:2.0\n        \
                              args: [--once]\n";

/// A Job whose pod keeps a user value that contradicts meshjob's: `fix` wraps it and warns.
const CONTRADICTS: &str = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: contradicts\n\
                           spec:\n  template:\n    metadata:\n      annotations:\n        \
                           proxy.istio.io/config: |\n          \
                           holdApplicationUntilProxyStarts: false\n    spec:\n      \
                           containers:\n      - name: main\n        image: alpine\n        \
                           command: [sleep, \"1\"]\n      restartPolicy: Never\n";

fn config(spec: &str) -> String {
    format!("apiVersion: meshjob.dev/v1alpha1\nkind: MeshJobConfig\nspec:\n{spec}")
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn show(&self) -> String {
        format!(
            "status {}\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }

    /// The last line on stderr: the summary.
    fn summary(&self) -> &str {
        self.stderr.lines().last().unwrap_or("")
    }

    /// Finding lines (`path:line:col: severity: ...`) on stderr.
    fn findings(&self) -> Vec<Finding> {
        self.stderr.lines().filter_map(Finding::parse).collect()
    }
}

#[derive(Debug)]
struct Finding {
    path: String,
    line: usize,
    severity: String,
    rest: String,
}

impl Finding {
    fn parse(l: &str) -> Option<Finding> {
        for sev in ["error", "warning", "info"] {
            let Some((head, rest)) = l.split_once(&format!(": {sev}: ")) else {
                continue;
            };
            let mut parts = head.rsplitn(3, ':');
            let _col: usize = parts.next()?.parse().ok()?;
            let line: usize = parts.next()?.parse().ok()?;
            let path = parts.next()?.to_string();
            return Some(Finding {
                path,
                line,
                severity: sev.to_string(),
                rest: rest.to_string(),
            });
        }
        None
    }
}

/// Whether `s` holds a rule code: `MJ` and three or more digits.
fn has_rule_code(s: &str) -> bool {
    s.match_indices("MJ").any(|(i, _)| {
        let digits = s[i + 2..].bytes().take_while(u8::is_ascii_digit).count();
        digits >= 3
    })
}

fn mj_cmd(program: &Path, dir: &Path, args: &[&str], stdin: &[u8]) -> Run {
    let out = hosts::run_bounded(
        Command::new(program)
            .current_dir(dir)
            .args(args)
            .env_remove("NO_COLOR")
            .env_remove("CLICOLOR_FORCE")
            .env_remove("MESHJOB_TEST_WRITE_HOOK")
            .env_remove("GITHUB_ACTIONS"),
        stdin,
        LIMIT,
    );
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs meshjob in `dir` with a piped (never a terminal) stdin.
fn mj(dir: &Path, args: &[&str], stdin: &[u8]) -> Run {
    mj_cmd(&common::bin(), dir, args, stdin)
}

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).expect("mkdir");
    }
    std::fs::write(p, text).expect("write");
}

fn read(dir: &Path, rel: &str) -> String {
    std::fs::read_to_string(dir.join(rel)).expect("read")
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().expect("tempdir")
}

/// `--- a/PATH` headers of a diff, in order.
fn diff_headers(diff: &str) -> Vec<&str> {
    diff.lines()
        .filter_map(|l| l.strip_prefix("--- a/"))
        .collect()
}

// ---------------------------------------------------------------------------------------
// No PATH

#[test]
fn no_path_means_the_working_directory_even_with_stdin_piped() {
    let t = tmp();
    write(t.path(), "k8s/job.yaml", &job("pi"));
    // CI gives every step a stdin that is not a terminal; it must not be read.
    let check = mj(t.path(), &["check"], b"");
    assert_eq!(check.code, 1, "{}", check.show());
    assert_eq!(
        diff_headers(&check.stdout),
        ["k8s/job.yaml"],
        "{}",
        check.show()
    );

    let diff = mj(t.path(), &["diff"], b"not: [yaml");
    assert_eq!(diff.code, 0, "{}", diff.show());
    assert_eq!(diff_headers(&diff.stdout), ["k8s/job.yaml"]);

    let fix = mj(t.path(), &["fix"], &[]);
    assert_eq!(fix.code, 0, "{}", fix.show());
    assert!(
        fix.stdout.is_empty(),
        "fix of files writes nothing on stdout: {}",
        fix.show()
    );
    assert!(read(t.path(), "k8s/job.yaml").contains("meshjob-wrapper"));
}

#[test]
fn dash_still_reads_stdin_and_a_bare_run_is_the_krm_function() {
    let t = tmp();
    write(t.path(), "k8s/job.yaml", &job("on-disk"));
    let check = mj(t.path(), &["check", "-"], job("piped").as_bytes());
    assert_eq!(check.code, 1, "{}", check.show());
    assert_eq!(diff_headers(&check.stdout), ["-"], "{}", check.show());

    let fix = mj(t.path(), &["fix", "-"], job("piped").as_bytes());
    assert_eq!(fix.code, 0, "{}", fix.show());
    assert!(fix.stdout.contains("meshjob-wrapper") && fix.stdout.contains("name: piped"));
    assert!(!read(t.path(), "k8s/job.yaml").contains("meshjob-wrapper"));

    let list = format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {}",
        job("krm").replace('\n', "\n  ").trim_end()
    );
    let krm = mj(t.path(), &[], list.as_bytes());
    assert_eq!(krm.code, 0, "{}", krm.show());
    assert!(krm.stdout.contains("kind: ResourceList") && krm.stdout.contains("meshjob-wrapper"));
}

// ---------------------------------------------------------------------------------------
// Summary

#[test]
fn check_and_fix_end_with_a_summary_line_on_stderr() {
    let t = tmp();
    write(t.path(), "a.yaml", &job("a"));
    write(t.path(), "b.yaml", &job("b"));
    write(t.path(), "c.yaml", CONFIGMAP);

    let check = mj(t.path(), &["check", "."], b"");
    assert_eq!(check.code, 1, "{}", check.show());
    assert_eq!(
        check.summary(),
        "2 files would be changed, 1 unchanged; 2 errors (2 fixable)",
        "{}",
        check.show()
    );
    let diff = mj(t.path(), &["diff", "."], b"");
    assert_eq!(diff.summary(), check.summary(), "{}", diff.show());

    let fix = mj(t.path(), &["fix", "."], b"");
    assert_eq!(fix.code, 0, "{}", fix.show());
    let lines: Vec<&str> = fix.stderr.lines().collect();
    assert_eq!(
        lines,
        ["fixed a.yaml", "fixed b.yaml", "fixed 2 files, 1 unchanged"],
        "{}",
        fix.show()
    );

    let again = mj(t.path(), &["check", "."], b"");
    assert_eq!(again.code, 0, "{}", again.show());
    assert_eq!(again.stderr, "3 files unchanged\n", "{}", again.show());
}

#[test]
fn summary_counts_what_fix_leaves_and_what_could_not_be_read() {
    let t = tmp();
    write(t.path(), "args-only.yaml", HALF_WRAPPABLE);
    write(t.path(), "broken.yaml", "a: [b\n");
    let check = mj(t.path(), &["check", "."], b"");
    assert_eq!(check.code, 2, "{}", check.show());
    assert_eq!(
        check.summary(),
        "1 file would be changed, 1 could not be checked; 3 errors (1 fixable)",
        "{}",
        check.show()
    );
    let fix = mj(t.path(), &["fix", "."], b"");
    assert_eq!(fix.code, 2, "{}", fix.show());
    assert_eq!(
        fix.summary(),
        "fixed 1 file, 1 could not be fixed; 2 errors left",
        "{}",
        fix.show()
    );
    std::fs::remove_file(t.path().join("broken.yaml")).expect("rm");
    let fix = mj(t.path(), &["fix", "."], b"");
    assert_eq!(fix.code, 1, "{}", fix.show());
    assert_eq!(
        fix.summary(),
        "1 file unchanged; 1 error left",
        "{}",
        fix.show()
    );
}

#[test]
fn quiet_hides_the_summary_and_the_fixed_lines_but_not_errors() {
    let t = tmp();
    write(t.path(), "a.yaml", &job("a"));
    let fix = mj(t.path(), &["fix", "-q", "."], b"");
    assert_eq!(fix.code, 0, "{}", fix.show());
    assert!(fix.stderr.is_empty(), "{}", fix.show());
    let clean = mj(t.path(), &["check", "--quiet", "."], b"");
    assert_eq!(clean.code, 0, "{}", clean.show());
    assert!(clean.stderr.is_empty(), "{}", clean.show());

    write(t.path(), "args-only.yaml", ARGS_ONLY);
    let check = mj(t.path(), &["check", "-q", "."], b"");
    assert_eq!(check.code, 1, "{}", check.show());
    let f = check.findings();
    assert!(f.iter().any(|f| f.severity == "error"), "{}", check.show());
    assert!(
        check.stderr.lines().all(|l| Finding::parse(l).is_some()),
        "only findings under -q: {}",
        check.show()
    );
}

#[test]
fn a_directory_without_yaml_files_says_so() {
    let t = tmp();
    write(t.path(), "README.md", "# nothing here\n");
    write(t.path(), "docs/index.md", "# nor here\n");
    let check = mj(t.path(), &["check"], b"");
    assert_eq!(check.code, 0, "{}", check.show());
    assert!(
        check
            .stderr
            .contains("meshjob: warning: no YAML files (*.yaml, *.yml) found under `.`"),
        "{}",
        check.show()
    );
    let named = mj(t.path(), &["check", "docs", "-q"], b"");
    assert!(
        named
            .stderr
            .contains("no YAML files (*.yaml, *.yml) found under `docs`"),
        "a warning, shown under -q: {}",
        named.show()
    );
}

#[test]
fn a_directory_whose_yaml_files_are_all_excluded_says_which_patterns() {
    let t = tmp();
    write(t.path(), "k8s/a.yaml", &job("a"));
    write(t.path(), "k8s/b.yml", &job("b"));
    write(t.path(), "k8s/gen/c.yaml", &job("c"));
    write(t.path(), "k8s/README.md", "# docs\n");
    let check = mj(
        t.path(),
        &[
            "check",
            "-q",
            "--exclude",
            "k8s/*.y*ml",
            "--exclude",
            "gen",
            "k8s",
        ],
        b"",
    );
    assert_eq!(check.code, 0, "{}", check.show());
    assert_eq!(
        check.stderr,
        "meshjob: warning: every YAML file under `k8s` is excluded (2 files by `k8s/*.y*ml`, \
         1 directory by `gen`); nothing under it was checked [MJ008]\n",
        "{}",
        check.show()
    );
    // One file left in: no warning.
    let some = mj(t.path(), &["check", "-q", "--exclude", "gen", "k8s"], b"");
    assert!(!some.stderr.contains("MJ008"), "{}", some.show());
}

// ---------------------------------------------------------------------------------------
// Excludes and Helm chart templates

fn chart_repo(dir: &Path) {
    write(dir, "k8s/job.yaml", &job("pi"));
    write(
        dir,
        "charts/app/Chart.yaml",
        "apiVersion: v2\nname: app\nversion: 0.1.0\n",
    );
    write(dir, "charts/app/values.yaml", "image: perl\n");
    write(
        dir,
        "charts/app/templates/job.yaml",
        "{{- if .Values.enabled }}\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {{ \
         .Release.Name }}\n{{- end }}\n",
    );
    write(
        dir,
        "charts/app/charts/sub/Chart.yaml",
        "apiVersion: v2\nname: sub\nversion: 0.1.0\n",
    );
    write(
        dir,
        "charts/app/charts/sub/templates/cm.yaml",
        "{{ include \"x\" . }}\n",
    );
}

#[test]
fn chart_templates_are_skipped_in_a_walk_with_one_note() {
    let t = tmp();
    chart_repo(t.path());
    let check = mj(t.path(), &["check", "."], b"");
    assert_eq!(
        check.code,
        1,
        "the chart must not make the run fail: {}",
        check.show()
    );
    assert_eq!(diff_headers(&check.stdout), ["k8s/job.yaml"]);
    let notes: Vec<&str> = check
        .stderr
        .lines()
        .filter(|l| l.contains("templates"))
        .collect();
    assert_eq!(notes.len(), 1, "one note: {}", check.show());
    assert!(
        notes[0].starts_with("meshjob: info: skipped 2 Helm chart templates/ directories")
            && notes[0].contains("charts/app/templates")
            && notes[0].contains("helm template"),
        "{}",
        notes[0]
    );
    let quiet = mj(t.path(), &["check", "-q", "."], b"");
    assert!(!quiet.stderr.contains("templates"), "{}", quiet.show());

    // A templates/ directory with no Chart.yaml beside it is ordinary YAML.
    write(t.path(), "base/templates/job.yaml", &job("base"));
    let check = mj(t.path(), &["check", "."], b"");
    assert_eq!(
        diff_headers(&check.stdout),
        ["base/templates/job.yaml", "k8s/job.yaml"],
        "{}",
        check.show()
    );
}

#[test]
fn a_template_given_by_name_is_explained() {
    let t = tmp();
    chart_repo(t.path());
    let check = mj(t.path(), &["check", "charts/app/templates/job.yaml"], b"");
    assert_eq!(check.code, 2, "{}", check.show());
    let f = check.findings();
    assert_eq!(f.len(), 1, "{}", check.show());
    assert_eq!(f[0].path, "charts/app/templates/job.yaml");
    assert_eq!(f[0].severity, "error");
    assert!(
        f[0].rest.contains("template") && f[0].rest.contains("helm template"),
        "{}",
        check.show()
    );
    assert!(!f[0].rest.contains("fix the syntax"), "{}", check.show());

    // Broken YAML without `{{` still gets the syntax advice.
    write(t.path(), "broken.yaml", "a: [b\n");
    let check = mj(t.path(), &["check", "broken.yaml"], b"");
    assert!(check.stderr.contains("fix the syntax"), "{}", check.show());
}

#[test]
fn exclude_flag_globs() {
    let t = tmp();
    write(t.path(), "k8s/job.yaml", &job("pi"));
    write(t.path(), "k8s/skip-me.yaml", "a: [b\n");
    write(t.path(), "legacy/deep/old.yaml", "a: [b\n");
    write(t.path(), "other/legacy/old.yml", "a: [b\n");
    let check = mj(
        t.path(),
        &[
            "check",
            "--exclude",
            "k8s/skip-*.yaml",
            "--exclude",
            "legacy",
            ".",
        ],
        b"",
    );
    // `legacy` has no slash: it matches a directory of that name at any depth.
    assert_eq!(check.code, 1, "{}", check.show());
    assert_eq!(diff_headers(&check.stdout), ["k8s/job.yaml"]);
    assert!(
        !check.stderr.contains("error: invalid YAML"),
        "{}",
        check.show()
    );

    // A pattern with a slash is anchored at the working directory.
    let anchored = mj(
        t.path(),
        &[
            "check",
            "--exclude",
            "skip-*.yaml",
            "--exclude",
            "legacy/**",
            ".",
        ],
        b"",
    );
    assert_eq!(
        anchored.code,
        2,
        "other/legacy is not excluded: {}",
        anchored.show()
    );
    assert!(
        anchored.stderr.contains("other/legacy/old.yml"),
        "{}",
        anchored.show()
    );
    assert!(
        !anchored.stderr.contains("legacy/deep"),
        "{}",
        anchored.show()
    );

    // A file given by name is excluded too (pre-commit names every file), with a note.
    let named = mj(
        t.path(),
        &["check", "--exclude", "legacy", "legacy/deep/old.yaml"],
        b"",
    );
    assert_eq!(named.code, 0, "{}", named.show());
    assert!(
        named
            .stderr
            .contains("legacy/deep/old.yaml: info: excluded by `legacy`; not checked"),
        "{}",
        named.show()
    );
}

#[test]
fn exclude_in_the_config_file_is_relative_to_it() {
    let t = tmp();
    write(
        t.path(),
        "team/.meshjob.yaml",
        &config("  exclude: [generated, \"old/*.yaml\"]\n"),
    );
    write(t.path(), "team/job.yaml", &job("pi"));
    write(t.path(), "team/generated/x.yaml", "a: [b\n");
    write(t.path(), "team/old/x.yaml", "a: [b\n");
    write(t.path(), "old/x.yaml", &job("outside"));
    let check = mj(t.path(), &["check", "."], b"");
    assert_eq!(check.code, 1, "{}", check.show());
    assert_eq!(
        diff_headers(&check.stdout),
        ["old/x.yaml", "team/job.yaml"],
        "{}",
        check.show()
    );
}

// ---------------------------------------------------------------------------------------
// One finding for each pod template that would change

#[test]
fn every_pod_that_would_change_gets_a_finding_with_a_rule_code() {
    let t = tmp();
    write(t.path(), "k8s/job.yaml", &job("pi"));
    let check = mj(t.path(), &["check", "."], b"");
    // Besides the notes on the strategy chosen (info), one finding for the pod.
    let f: Vec<_> = (check.findings().into_iter())
        .filter(|f| f.severity != "info")
        .collect();
    assert_eq!(f.len(), 1, "{}", check.show());
    assert_eq!(f[0].path, "k8s/job.yaml");
    assert_eq!(f[0].line, CONTAINER_LINE, "{}", check.show());
    assert_eq!(f[0].severity, "error");
    assert!(has_rule_code(&f[0].rest), "{}", check.show());
    assert!(
        f[0].rest.contains("container `pi` would be wrapped"),
        "{}",
        check.show()
    );

    let gh = mj(t.path(), &["check", "--format", "github", "."], b"");
    let ann: Vec<&str> = (gh.stderr.lines())
        .filter(|l| l.starts_with("::error") || l.starts_with("::warning"))
        .collect();
    assert_eq!(ann.len(), 1, "{}", gh.show());
    assert!(
        ann[0].starts_with(&format!("::error file=k8s/job.yaml,line={CONTAINER_LINE},")),
        "{}",
        ann[0]
    );
    assert!(has_rule_code(ann[0]), "{}", ann[0]);

    // `fix` reports the file it wrote instead of each pod.
    let fix = mj(t.path(), &["fix", "."], b"");
    assert!(fix.findings().is_empty(), "{}", fix.show());
    assert!(
        fix.stderr.contains("fixed k8s/job.yaml\n"),
        "{}",
        fix.show()
    );

    // A pod whose only change is its proxy.istio.io/config annotation gets a finding too,
    // at that annotation.
    let check = mj(
        t.path(),
        &["check", "--exit-on-zero-active-connections", "true", "."],
        b"",
    );
    assert_eq!(check.code, 0, "{}", check.show());
    let fixed = mj(
        t.path(),
        &["fix", "--exit-on-zero-active-connections", "false", "-"],
        job("x").as_bytes(),
    );
    write(t.path(), "k8s/job.yaml", &fixed.stdout);
    let check = mj(t.path(), &["check", "."], b"");
    assert_eq!(check.code, 1, "{}", check.show());
    let f: Vec<_> = (check.findings().into_iter())
        .filter(|f| f.severity != "info")
        .collect();
    assert_eq!(f.len(), 1, "{}", check.show());
    let annotation_line = fixed
        .stdout
        .lines()
        .position(|l| l.trim_start().starts_with("proxy.istio.io/config:"))
        .expect("annotation line")
        + 1;
    assert_eq!(f[0].line, annotation_line, "{}", check.show());
    assert!(f[0].rest.contains("proxy.istio.io/config") && has_rule_code(&f[0].rest));
}

// ---------------------------------------------------------------------------------------
// Paths

#[test]
fn one_spelling_of_a_path_relative_to_the_working_directory() {
    let t = tmp();
    write(t.path(), "k8s/job.yaml", &job("pi"));
    write(t.path(), "k8s/args.yaml", HALF_WRAPPABLE);
    let abs = t.path().join("k8s").display().to_string();
    for arg in [".", "./k8s", "k8s/", abs.as_str(), "./k8s/../k8s"] {
        let check = mj(t.path(), &["check", arg], b"");
        assert_eq!(
            diff_headers(&check.stdout),
            ["k8s/args.yaml", "k8s/job.yaml"],
            "{arg}: {}",
            check.show()
        );
        assert!(check.stdout.contains("+++ b/k8s/job.yaml\n"), "{arg}");
        let paths: Vec<String> = check.findings().into_iter().map(|f| f.path).collect();
        assert!(!paths.is_empty());
        assert!(
            paths
                .iter()
                .all(|p| p == "k8s/job.yaml" || p == "k8s/args.yaml"),
            "{arg}: {}",
            check.show()
        );
    }
}

#[test]
fn overlapping_paths_are_checked_once() {
    let t = tmp();
    write(t.path(), "k8s/job.yaml", &job("pi"));
    std::os::unix::fs::symlink("job.yaml", t.path().join("k8s/link.yml")).expect("symlink");
    let abs = t.path().join("k8s/job.yaml").display().to_string();
    let diff = mj(
        t.path(),
        &["diff", "k8s", "k8s/job.yaml", "./k8s/job.yaml", &abs, "."],
        b"",
    );
    assert_eq!(diff.code, 0, "{}", diff.show());
    assert_eq!(
        diff_headers(&diff.stdout),
        ["k8s/job.yaml"],
        "{}",
        diff.show()
    );
    assert_eq!(
        diff.summary(),
        "1 file would be changed; 1 error (1 fixable)"
    );
}

#[test]
fn a_file_outside_the_working_directory_keeps_its_absolute_path_and_a_usable_diff() {
    let t = tmp();
    write(t.path(), "repo/k8s/job.yaml", &job("pi"));
    std::fs::create_dir_all(t.path().join("elsewhere")).expect("mkdir");
    let abs = std::fs::canonicalize(t.path().join("repo/k8s/job.yaml")).expect("canonical");
    let abs = abs.to_str().expect("utf-8 path");
    let check = mj(&t.path().join("elsewhere"), &["check", abs], b"");
    assert_eq!(check.code, 1, "{}", check.show());
    assert!(
        check.findings().iter().all(|f| f.path == abs),
        "{}",
        check.show()
    );
    let rel = abs.trim_start_matches('/');
    assert_eq!(diff_headers(&check.stdout), [rel], "{}", check.show());
    assert!(!check.stdout.contains("a//"), "{}", check.show());
    // The diff applies with `patch -p1` from the root directory.
    if let Some(patch) = common::require_tool("patch", "applies the printed diff") {
        let out = Command::new(patch)
            .current_dir("/")
            .args(["-p1", "--dry-run", "--batch"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                use std::io::Write;
                c.stdin
                    .take()
                    .expect("stdin")
                    .write_all(check.stdout.as_bytes())?;
                c.wait_with_output()
            })
            .expect("run patch");
        assert!(
            out.status.success(),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

// ---------------------------------------------------------------------------------------
// JSON report

#[test]
fn json_report_is_the_only_thing_on_stdout() {
    let t = tmp();
    write(t.path(), "k8s/job.yaml", &job("pi"));
    write(t.path(), "k8s/cm.yaml", CONFIGMAP);
    let check = mj(t.path(), &["check", "--format", "json", "."], b"");
    assert_eq!(check.code, 1, "{}", check.show());
    assert!(check.stderr.is_empty(), "{}", check.show());
    let v: serde_json::Value = serde_json::from_str(&check.stdout).expect("stdout is JSON");
    let changed = v["changed"].as_array().expect("changed");
    assert_eq!(changed.len(), 1, "{v:#}");
    assert_eq!(changed[0]["path"], "k8s/job.yaml");
    let diff = changed[0]["diff"].as_str().expect("diff");
    assert!(
        diff.starts_with("--- a/k8s/job.yaml\n+++ b/k8s/job.yaml\n@@ "),
        "{diff}"
    );
    let findings: Vec<&serde_json::Value> = (v["findings"].as_array().expect("findings"))
        .iter()
        .filter(|f| f["severity"] != "info")
        .collect();
    assert_eq!(findings.len(), 1, "{v:#}");
    assert_eq!(findings[0]["path"], "k8s/job.yaml");
    assert_eq!(findings[0]["line"], CONTAINER_LINE);
    assert!(
        has_rule_code(findings[0]["code"].as_str().expect("code")),
        "{v:#}"
    );
    assert_eq!(v["summary"]["files"], 2, "{v:#}");
    assert_eq!(v["summary"]["changed"], 1, "{v:#}");

    // diff prints the same report.
    let diff = mj(t.path(), &["diff", "--format", "json", "."], b"");
    assert_eq!(diff.code, 0);
    let d: serde_json::Value = serde_json::from_str(&diff.stdout).expect("JSON");
    assert_eq!(d["changed"], v["changed"]);

    // fix reports what it wrote.
    let fix = mj(t.path(), &["fix", "--format", "json", "."], b"");
    assert_eq!(fix.code, 0, "{}", fix.show());
    let f: serde_json::Value = serde_json::from_str(&fix.stdout).expect("JSON");
    assert_eq!(f["changed"][0]["path"], "k8s/job.yaml");

    // fix of stdin writes the fixed stream to stdout, which a report cannot share.
    let stdin = mj(
        t.path(),
        &["fix", "--format", "json", "-"],
        job("x").as_bytes(),
    );
    assert_eq!(stdin.code, 2, "{}", stdin.show());
    assert!(stdin.stdout.is_empty());
    assert!(stdin.stderr.contains("--format json"), "{}", stdin.show());
}

// ---------------------------------------------------------------------------------------
// Control characters

const EVIL_NAME: &str = "x\\n::error file=evil::injected\\e[31mred";

#[test]
fn control_characters_in_names_are_escaped() {
    let t = tmp();
    let evil = ARGS_ONLY.replace("name: args-only", &format!("name: \"{EVIL_NAME}\""));
    write(t.path(), "job.yaml", &evil);
    for format in ["human", "github"] {
        let check = mj(t.path(), &["check", "--format", format, "."], b"");
        assert_eq!(check.code, 1, "{}", check.show());
        assert!(!check.stderr.contains('\x1b'), "{format}: {}", check.show());
        for l in check.stderr.lines() {
            assert!(
                !l.starts_with("::") || l.contains("file=job.yaml,"),
                "{format}: injected line {l:?}"
            );
        }
        assert!(
            check.stderr.contains("injected"),
            "{format}: {}",
            check.show()
        );
    }
    let human = mj(t.path(), &["check", "."], b"");
    assert!(
        human
            .stderr
            .contains("x\\n::error file=evil::injected\\u{1b}[31mred"),
        "{}",
        human.show()
    );

    // The kustomize plugin prints findings on stderr too.
    let plugin_dir = t.path().join("plugin");
    std::fs::create_dir_all(&plugin_dir).expect("mkdir");
    let plugin = plugin_dir.join("MeshJobConfig");
    std::os::unix::fs::symlink(common::bin(), &plugin).expect("symlink");
    write(t.path(), "plugin-config.yaml", &config("  {}\n"));
    let out = hosts::run_bounded(
        Command::new(&plugin).arg(t.path().join("plugin-config.yaml")),
        evil.as_bytes(),
        LIMIT,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains('\x1b'), "{err}");
    assert!(err.lines().all(|l| !l.starts_with("::")), "{err}");
}

#[test]
fn control_characters_in_file_names_are_escaped() {
    let t = tmp();
    let name = "evil\n::error file=x::y\x1b[0m.yaml";
    write(t.path(), name, &job("evil"));
    let check = mj(t.path(), &["check", "."], b"");
    assert_eq!(check.code, 1, "{}", check.show());
    assert!(
        !check.stderr.contains('\x1b') && !check.stdout.contains('\x1b'),
        "{}",
        check.show()
    );
    for l in check.stderr.lines().chain(check.stdout.lines()) {
        assert!(!l.starts_with("::"), "injected line {l:?}");
    }
    assert!(check.stderr.contains("evil\\n::error"), "{}", check.show());
    // git's quoting keeps the diff header on one line and applicable.
    assert!(
        check
            .stdout
            .starts_with("--- \"a/evil\\n::error file=x::y\\033[0m.yaml\"\n"),
        "{}",
        check.show()
    );
    if let Some(git) = common::require_tool("git", "applies a diff with a quoted name") {
        std::fs::write(t.path().join("p.diff"), &check.stdout).expect("write diff");
        let out = Command::new(git)
            .current_dir(t.path())
            .args(["apply", "--check", "p.diff"])
            .output()
            .expect("run git");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

// ---------------------------------------------------------------------------------------
// Config per file, --stdin-filename

fn monorepo(dir: &Path) {
    write(dir, ".meshjob.yaml", &config("  drainDuration: 7s\n"));
    write(
        dir,
        "team-a/.meshjob.yaml",
        &config("  drainDuration: 10s\n"),
    );
    write(dir, "team-a/k8s/job.yaml", &job("a"));
    write(
        dir,
        "team-b/.meshjob.yaml",
        &config("  drainDuration: 20s\n"),
    );
    write(dir, "team-b/job.yaml", &job("b"));
    write(dir, "shared/job.yaml", &job("s"));
}

/// The drain duration each file's diff sets, by file.
fn drains(diff: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut file = String::new();
    for l in diff.lines() {
        if let Some(p) = l.strip_prefix("--- a/") {
            file = p.to_string();
        } else if let Some(d) = l.strip_prefix('+')
            && let Some(v) = d.trim_start().strip_prefix("terminationDrainDuration: ")
        {
            out.push((file.clone(), v.to_string()));
        }
    }
    out
}

#[test]
fn the_nearest_config_file_of_each_file_wins() {
    let t = tmp();
    monorepo(t.path());
    let diff = mj(t.path(), &["diff", "."], b"");
    assert_eq!(diff.code, 0, "{}", diff.show());
    let want = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    };
    assert_eq!(
        drains(&diff.stdout),
        want(&[
            ("shared/job.yaml", "7s"),
            ("team-a/k8s/job.yaml", "10s"),
            ("team-b/job.yaml", "20s")
        ]),
        "{}",
        diff.show()
    );
    // From elsewhere, by absolute path: still the file's own config.
    std::fs::create_dir_all(t.path().join("elsewhere")).expect("mkdir");
    let abs = t.path().join("team-b/job.yaml");
    let out = mj(
        &t.path().join("elsewhere"),
        &["diff", abs.to_str().expect("utf-8")],
        b"",
    );
    assert_eq!(drains(&out.stdout).len(), 1, "{}", out.show());
    assert_eq!(drains(&out.stdout)[0].1, "20s", "{}", out.show());
    // --config names one file for all of them; flags win over every file.
    write(t.path(), "ci.yaml", &config("  drainDuration: 3s\n"));
    let out = mj(
        t.path(),
        &["diff", "--config", "ci.yaml", "team-a", "team-b"],
        b"",
    );
    assert!(
        drains(&out.stdout).iter().all(|(_, d)| d == "3s"),
        "{}",
        out.show()
    );
    let out = mj(t.path(), &["diff", "--drain-duration", "1s", "."], b"");
    assert!(
        drains(&out.stdout).iter().all(|(_, d)| d == "1s"),
        "{}",
        out.show()
    );
}

#[test]
fn a_broken_config_stops_only_the_files_it_governs() {
    let t = tmp();
    monorepo(t.path());
    write(
        t.path(),
        "team-b/.meshjob.yaml",
        &config("  drainDuraton: 20s\n"),
    );
    let check = mj(t.path(), &["check", "."], b"");
    assert_eq!(check.code, 2, "{}", check.show());
    assert_eq!(
        diff_headers(&check.stdout),
        ["shared/job.yaml", "team-a/k8s/job.yaml"],
        "{}",
        check.show()
    );
    let config_errors: Vec<&str> = check
        .stderr
        .lines()
        .filter(|l| l.contains("drainDuraton"))
        .collect();
    assert_eq!(config_errors.len(), 1, "reported once: {}", check.show());
    assert!(
        config_errors[0].starts_with("team-b/.meshjob.yaml:4:3: error:"),
        "{}",
        check.show()
    );
}

#[test]
fn stdin_filename_names_stdin_for_config_and_messages() {
    let t = tmp();
    monorepo(t.path());
    let out = mj(
        t.path(),
        &["check", "--stdin-filename", "team-b/piped.yaml", "-"],
        job("p").as_bytes(),
    );
    assert_eq!(out.code, 1, "{}", out.show());
    assert_eq!(
        drains(&out.stdout),
        [("team-b/piped.yaml".to_string(), "20s".to_string())]
    );
    assert!(
        out.findings().iter().all(|f| f.path == "team-b/piped.yaml"),
        "{}",
        out.show()
    );
    // With no PATH, --stdin-filename reads stdin (there is nothing else it could name).
    let fix = mj(
        t.path(),
        &["fix", "--stdin-filename", "team-a/x.yaml"],
        job("p").as_bytes(),
    );
    assert_eq!(fix.code, 0, "{}", fix.show());
    assert!(
        fix.stdout.contains("terminationDrainDuration: 10s"),
        "{}",
        fix.show()
    );
    assert!(
        !t.path().join("team-a/x.yaml").exists(),
        "stdin is written to stdout"
    );
    // It names stdin only: with PATHs and no `-` it is a usage error.
    let bad = mj(
        t.path(),
        &["check", "--stdin-filename", "x.yaml", "team-a"],
        b"",
    );
    assert_eq!(bad.code, 2, "{}", bad.show());
    assert!(bad.stderr.contains("--stdin-filename"), "{}", bad.show());
}

// ---------------------------------------------------------------------------------------
// config, kustomize install, failOn

#[test]
fn config_rejects_options_it_would_ignore() {
    let t = tmp();
    for args in [
        &["config", "--format", "json"][..],
        &["config", "job.yaml"],
        &["config", "--color", "always"],
        &["config", "-q"],
        &["config", "--mesh-config"],
        &["config", "--exclude", "x"],
        &["config", "--stdin-filename", "x.yaml"],
    ] {
        let out = mj(t.path(), args, b"");
        assert_eq!(out.code, 2, "{args:?}: {}", out.show());
        assert!(out.stdout.is_empty(), "{args:?}: {}", out.show());
    }
    let ok = mj(
        t.path(),
        &["config", "--drain-duration", "9s", "--fail-on", "warning"],
        b"",
    );
    assert_eq!(ok.code, 0, "{}", ok.show());
    assert!(ok.stdout.contains("drainDuration: 9s"), "{}", ok.show());
    assert!(ok.stdout.contains("failOn: warning"), "{}", ok.show());
}

#[test]
fn kustomize_install_refuses_to_replace_a_file_without_force() {
    let t = tmp();
    let home = t.path().join("plugins");
    let target = home.join("meshjob.dev/v1alpha1/meshjobconfig/MeshJobConfig");
    std::fs::create_dir_all(target.parent().expect("parent")).expect("mkdir");
    std::fs::write(&target, "#!/bin/sh\necho someone else's plugin\n").expect("write");
    let home_arg = home.to_str().expect("utf-8");
    let out = mj(t.path(), &["kustomize", "install", "--dir", home_arg], b"");
    assert_eq!(out.code, 2, "{}", out.show());
    assert!(
        out.stderr.contains("already exists") && out.stderr.contains("--force"),
        "{}",
        out.show()
    );
    assert_eq!(
        std::fs::read_to_string(&target).expect("kept"),
        "#!/bin/sh\necho someone else's plugin\n"
    );
    let out = mj(
        t.path(),
        &["kustomize", "install", "--force", "--dir", home_arg],
        b"",
    );
    assert_eq!(out.code, 0, "{}", out.show());
    assert!(
        std::fs::symlink_metadata(&target)
            .expect("installed")
            .file_type()
            .is_symlink()
    );
    // Installing the same binary again is not a replacement.
    let out = mj(t.path(), &["kustomize", "install", "--dir", home_arg], b"");
    assert_eq!(out.code, 0, "{}", out.show());
    assert!(out.stdout.contains("already installed"), "{}", out.show());
}

/// A fixed Job that still carries a warning (a contradicting user value).
fn warning_only(dir: &Path) {
    let fixed = mj(dir, &["fix", "-"], CONTRADICTS.as_bytes());
    assert_eq!(fixed.code, 0, "{}", fixed.show());
    write(dir, "job.yaml", &fixed.stdout);
}

#[test]
fn fail_on_warning_makes_warnings_fail_check_and_fix() {
    let t = tmp();
    warning_only(t.path());
    let check = mj(t.path(), &["check", "."], b"");
    assert_eq!(check.code, 0, "{}", check.show());
    assert!(
        check.findings().iter().any(|f| f.severity == "warning"),
        "{}",
        check.show()
    );
    for mode in ["check", "fix"] {
        let out = mj(t.path(), &[mode, "--fail-on", "warning", "."], b"");
        assert_eq!(out.code, 1, "{mode}: {}", out.show());
        let out = mj(t.path(), &[mode, "--fail-on", "error", "."], b"");
        assert_eq!(out.code, 0, "{mode}: {}", out.show());
    }
    write(t.path(), ".meshjob.yaml", &config("  failOn: warning\n"));
    let out = mj(t.path(), &["check", "."], b"");
    assert_eq!(out.code, 1, "{}", out.show());
    // The flag wins over the file.
    let out = mj(t.path(), &["check", "--fail-on", "error", "."], b"");
    assert_eq!(out.code, 0, "{}", out.show());
    let bad = mj(t.path(), &["check", "--fail-on", "info", "."], b"");
    assert_eq!(bad.code, 2, "{}", bad.show());
}

#[test]
fn fail_on_warning_fails_the_kustomize_build() {
    let t = tmp();
    let plugin = t.path().join("MeshJobConfig");
    std::os::unix::fs::symlink(common::bin(), &plugin).expect("symlink");
    write(t.path(), "plain.yaml", &config("  {}\n"));
    write(t.path(), "strict.yaml", &config("  failOn: warning\n"));
    let plain = hosts::run_bounded(
        Command::new(&plugin).arg(t.path().join("plain.yaml")),
        CONTRADICTS.as_bytes(),
        LIMIT,
    );
    assert_eq!(plain.status.code(), Some(0), "{}", hosts::show(&plain));
    let strict = hosts::run_bounded(
        Command::new(&plugin).arg(t.path().join("strict.yaml")),
        CONTRADICTS.as_bytes(),
        LIMIT,
    );
    assert_eq!(strict.status.code(), Some(1), "{}", hosts::show(&strict));
    assert!(String::from_utf8_lossy(&strict.stderr).contains("warning"));

    // The KRM function too.
    let list = |spec: &str| {
        format!(
            "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig:\n  \
             apiVersion: meshjob.dev/v1alpha1\n  kind: MeshJobConfig\n  spec:\n{spec}items:\n- {}",
            CONTRADICTS.replace('\n', "\n  ").trim_end()
        )
    };
    let krm = mj(t.path(), &["krm"], list("    {}\n").as_bytes());
    assert_eq!(krm.code, 0, "{}", krm.show());
    let krm = mj(t.path(), &["krm"], list("    failOn: warning\n").as_bytes());
    assert_eq!(krm.code, 1, "{}", krm.show());
    assert!(
        krm.stdout.contains("kind: ResourceList"),
        "results still written: {}",
        krm.show()
    );
}
