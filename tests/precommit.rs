//! The pre-commit hooks, run by the real `pre-commit try-repo` against a copy of this working
//! tree (committed in a temp repo, so uncommitted changes are what gets tested, and a clean
//! CI checkout works the same).
//!
//! pre-commit builds the hook with `cargo install --bins --path .` in a fresh store on every
//! `try-repo`. To keep that bounded, the builds share one target directory under Cargo's
//! test temp dir and use an unoptimised release profile: the hook's behaviour does not
//! depend on optimisation, and only the first build compiles the dependencies.

mod common;

use common::hosts;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The first build compiles every dependency; later ones only meshjob itself.
const LIMIT: Duration = Duration::from_secs(15 * 60);

const JOB: &str = "\
apiVersion: batch/v1
kind: Job
metadata:
  name: pi
spec:
  template:
    spec:
      containers:
      - name: pi
        image: perl:5.34
        command: [\"perl\", \"-Mbignum=bpi\", \"-wle\", \"print bpi(20)\"]
      restartPolicy: Never
";

/// A Helm template is not YAML; the hooks' default `exclude` keeps them out.
const HELM_TEMPLATE: &str = "\
apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-migrate
{{- if .Values.annotations }}
  annotations: {{ toYaml .Values.annotations | nindent 4 }}
{{- end }}
";

/// Copies the files of this working tree that git would see (tracked and untracked, not
/// ignored, still present) into `to`, and commits them there.
fn hook_repo(to: &Path) {
    let root = common::root();
    let out = hosts::run_bounded(
        Command::new("git").current_dir(root).args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ]),
        b"",
        Duration::from_secs(60),
    );
    assert!(
        out.status.success(),
        "this test needs the project as a git checkout: {}",
        hosts::show(&out)
    );
    for rel in out.stdout.split(|&b| b == 0).filter(|p| !p.is_empty()) {
        let rel = PathBuf::from(String::from_utf8_lossy(rel).into_owned());
        let from = root.join(&rel);
        if !from.is_file() {
            continue;
        }
        let dest = to.join(&rel);
        std::fs::create_dir_all(dest.parent().expect("parent")).expect("mkdir");
        std::fs::copy(&from, &dest).expect("copy");
    }
    hosts::git(to, &["init", "-q"]);
    hosts::git(to, &["add", "-A"]);
    hosts::git(to, &["commit", "-q", "-m", "meshjob under test"]);
}

struct Setup {
    _tmp: tempfile::TempDir,
    hooks: PathBuf,
    work: PathBuf,
    env: Vec<(String, PathBuf)>,
}

fn setup() -> Option<Setup> {
    common::require_tool("pre-commit", "the pre-commit hooks are run by pre-commit")?;
    common::require_tool("git", "pre-commit needs git")?;
    common::require_tool("cargo", "pre-commit builds the hook with cargo")?;
    let tmp = tempfile::tempdir().expect("tempdir");
    let hooks = tmp.path().join("meshjob");
    let work = tmp.path().join("work");
    hook_repo(&hooks);
    std::fs::create_dir_all(work.join("k8s")).expect("mkdir");
    std::fs::create_dir_all(work.join("chart/templates")).expect("mkdir");
    std::fs::write(work.join("k8s/job.yaml"), JOB).expect("write");
    std::fs::write(work.join("chart/templates/job.yaml"), HELM_TEMPLATE).expect("write");
    hosts::git(&work, &["init", "-q"]);
    hosts::git(&work, &["add", "-A"]);
    hosts::git(&work, &["commit", "-q", "-m", "manifests"]);
    let shared = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("precommit-target");
    let env = vec![
        (
            "PRE_COMMIT_HOME".to_string(),
            tmp.path().join("pre-commit-home"),
        ),
        ("TMPDIR".to_string(), tmp.path().to_path_buf()),
        ("CARGO_TARGET_DIR".to_string(), shared),
    ];
    Some(Setup {
        _tmp: tmp,
        hooks,
        work,
        env,
    })
}

fn try_repo(s: &Setup, hook: &str) -> std::process::Output {
    let mut cmd = Command::new("pre-commit");
    cmd.current_dir(&s.work)
        .arg("try-repo")
        .arg(&s.hooks)
        .args([hook, "--all-files", "--color", "never"])
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0")
        .env("CARGO_PROFILE_RELEASE_DEBUG", "false")
        .env("CARGO_PROFILE_RELEASE_INCREMENTAL", "true")
        .env("CARGO_TERM_COLOR", "never")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("PRE_COMMIT_COLOR");
    for (k, v) in &s.env {
        cmd.env(k, v);
    }
    let start = std::time::Instant::now();
    let out = hosts::run_bounded(&mut cmd, b"", LIMIT);
    eprintln!("pre-commit try-repo {hook}: {:?}", start.elapsed());
    out
}

/// What `meshjob fix` makes of `text`.
fn fixed(text: &str) -> String {
    let out = hosts::run_bounded(
        Command::new(common::bin()).args(["fix", "-"]),
        text.as_bytes(),
        Duration::from_secs(60),
    );
    assert!(out.status.success(), "{}", hosts::show(&out));
    String::from_utf8(out.stdout).expect("utf-8")
}

#[test]
fn precommit_hooks_fix_then_pass_and_check_changes_nothing() {
    let Some(s) = setup() else { return };
    let job = s.work.join("k8s/job.yaml");
    let template = s.work.join("chart/templates/job.yaml");
    let read = |p: &Path| std::fs::read_to_string(p).expect("read");
    let want = fixed(JOB);
    assert_ne!(want, JOB, "the fixture must need a fix");

    let first = try_repo(&s, "meshjob");
    let log = hosts::show(&first);
    assert_eq!(
        first.status.code(),
        Some(1),
        "the hook fails when it changed files\n{log}"
    );
    assert!(log.contains("files were modified by this hook"), "{log}");
    assert_eq!(read(&job), want, "the file is left fixed\n{log}");
    assert_eq!(
        read(&template),
        HELM_TEMPLATE,
        "templates/ is excluded\n{log}"
    );

    let second = try_repo(&s, "meshjob");
    assert_eq!(second.status.code(), Some(0), "{}", hosts::show(&second));
    assert_eq!(read(&job), want);

    std::fs::write(&job, JOB).expect("restore");
    let check = try_repo(&s, "meshjob-check");
    let log = hosts::show(&check);
    assert_eq!(check.status.code(), Some(1), "{log}");
    assert_eq!(read(&job), JOB, "meshjob-check changes no file\n{log}");
    assert!(
        log.contains("+++ b/k8s/job.yaml"),
        "the diff is printed\n{log}"
    );
    assert!(
        log.contains("+        - /bin/sh\n"),
        "the diff is printed\n{log}"
    );
}
