//! The pre-commit hooks, run by the real `pre-commit run` as a user runs them: a work
//! repository whose `.pre-commit-config.yaml` names a copy of this working tree (committed in
//! a temp repo, so uncommitted changes are what gets tested, and a clean CI checkout works
//! the same) and its commit as `rev`, with a fresh pre-commit store.
//!
//! The python hooks (`meshjob`, `meshjob-check`) are installed by pre-commit's own
//! `pip install .`, which installs setup.py's placeholder and, through it, the meshjob wheel
//! of this version: pip finds the wheel built from this tree in `$MESHJOB_WHEEL_DIR` (set by
//! `.ci/run`, which builds the release wheel) or, without it, one that this test builds with
//! maturin. cargo is taken off PATH for that run, so a source build cannot stand in, and the
//! binary pre-commit installed is compared with the wheel's.
//!
//! The rust hooks (`meshjob-src`, `meshjob-check-src`) are built by pre-commit with
//! `cargo install --bins --path .`. To keep that bounded, the build uses a target directory
//! under Cargo's test temp dir, kept between test runs, and an unoptimised release profile
//! without LTO: the hook's behaviour does not depend on optimisation.
//!
//! Each test reports its hook's first-run time (installing the hook into the fresh store,
//! then running it) on stderr, past the test harness's capture.

mod common;

use common::hosts;

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

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

/// The release profile the rust hooks and the test's own wheel are built with: unoptimised,
/// no LTO, so that a build takes seconds once the dependencies are compiled.
const FAST_RELEASE: [(&str, &str); 5] = [
    ("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0"),
    ("CARGO_PROFILE_RELEASE_DEBUG", "false"),
    ("CARGO_PROFILE_RELEASE_INCREMENTAL", "true"),
    ("CARGO_PROFILE_RELEASE_LTO", "off"),
    ("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "16"),
];

/// The target directory the rust hooks' builds and the test's wheel build share.
fn shared_target() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("precommit-target")
}

struct Setup {
    tmp: tempfile::TempDir,
    work: PathBuf,
    env: Vec<(String, OsString)>,
}

/// A copy of this tree as the hook repository, and a work repository of manifests whose
/// `.pre-commit-config.yaml` names it, at its commit, with every hook.
fn setup() -> Option<Setup> {
    common::require_tool("pre-commit", "the pre-commit hooks are run by pre-commit")?;
    common::require_tool("git", "pre-commit needs git")?;
    let tmp = tempfile::tempdir().expect("tempdir");
    let hooks = tmp.path().join("meshjob");
    let work = tmp.path().join("work");
    hook_repo(&hooks);
    let rev = hosts::run_bounded(
        Command::new("git")
            .current_dir(&hooks)
            .args(["rev-parse", "HEAD"]),
        b"",
        Duration::from_secs(60),
    );
    assert!(rev.status.success(), "{}", hosts::show(&rev));
    let config = format!(
        "repos:\n  - repo: {}\n    rev: {}\n    hooks:\n{}",
        hooks.display(),
        String::from_utf8_lossy(&rev.stdout).trim(),
        [
            "meshjob",
            "meshjob-check",
            "meshjob-src",
            "meshjob-check-src"
        ]
        .map(|id| format!("      - id: {id}\n"))
        .concat()
    );
    std::fs::create_dir_all(work.join("k8s")).expect("mkdir");
    std::fs::create_dir_all(work.join("chart/templates")).expect("mkdir");
    std::fs::write(work.join(".pre-commit-config.yaml"), config).expect("write");
    std::fs::write(work.join("k8s/job.yaml"), JOB).expect("write");
    std::fs::write(work.join("chart/templates/job.yaml"), HELM_TEMPLATE).expect("write");
    hosts::git(&work, &["init", "-q"]);
    hosts::git(&work, &["add", "-A"]);
    hosts::git(&work, &["commit", "-q", "-m", "manifests"]);
    let env = vec![
        ("PRE_COMMIT_HOME".to_string(), store(tmp.path()).into()),
        ("TMPDIR".to_string(), tmp.path().into()),
    ];
    Some(Setup { tmp, work, env })
}

/// The pre-commit store of the setup in `tmp`.
fn store(tmp: &Path) -> PathBuf {
    tmp.join("pre-commit-home")
}

/// `pre-commit run HOOK --all-files` in the work repository.
fn run_hook(s: &Setup, hook: &str) -> std::process::Output {
    let mut cmd = Command::new("pre-commit");
    cmd.current_dir(&s.work)
        .args(["run", hook, "--all-files", "--color", "never"])
        .envs(FAST_RELEASE)
        .env("CARGO_TERM_COLOR", "never")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
        .env_remove("PRE_COMMIT_COLOR");
    for (k, v) in &s.env {
        cmd.env(k, v);
    }
    hosts::run_bounded(&mut cmd, b"", LIMIT)
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

/// A line in the test run's output, past the harness's capture of `eprintln!`.
fn report(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// The fix hook fixes the Job and fails, then passes; the check hook prints the diff, fails
/// and changes nothing; templates/ is left alone. Returns the fix hook's first run time.
fn fix_then_pass_then_check(s: &Setup, fix: &str, check: &str) -> Duration {
    let job = s.work.join("k8s/job.yaml");
    let template = s.work.join("chart/templates/job.yaml");
    let read = |p: &Path| std::fs::read_to_string(p).expect("read");
    let want = fixed(JOB);
    assert_ne!(want, JOB, "the fixture must need a fix");

    let start = Instant::now();
    let first = run_hook(s, fix);
    let first_run = start.elapsed();
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

    let second = run_hook(s, fix);
    assert_eq!(second.status.code(), Some(0), "{}", hosts::show(&second));
    assert_eq!(read(&job), want);

    std::fs::write(&job, JOB).expect("restore");
    let checked = run_hook(s, check);
    let log = hosts::show(&checked);
    assert_eq!(checked.status.code(), Some(1), "{log}");
    assert_eq!(read(&job), JOB, "{check} changes no file\n{log}");
    assert!(
        log.contains("+++ b/k8s/job.yaml"),
        "the diff is printed\n{log}"
    );
    assert!(
        log.contains("+        - /bin/sh\n"),
        "the diff is printed\n{log}"
    );
    first_run
}

/// The crate version, which setup.py pins the wheel to.
fn crate_version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// The meshjob wheel of this version in `dir`, if there is one.
fn wheel_in(dir: &Path) -> Option<PathBuf> {
    let prefix = format!("meshjob-{}-", crate_version());
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".whl"))
        })
}

/// The directory pip finds the wheel in: `$MESHJOB_WHEEL_DIR`, or one this test fills with
/// maturin (the fast release profile, in the target directory the rust hooks use).
fn wheel_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("MESHJOB_WHEEL_DIR").map(PathBuf::from) {
        assert!(
            wheel_in(&dir).is_some(),
            "MESHJOB_WHEEL_DIR ({}) holds no meshjob-{}-*.whl",
            dir.display(),
            crate_version()
        );
        return Some(dir);
    }
    let maturin = common::require_tool("maturin", "it builds the wheel the python hooks install")?;
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("precommit-wheel");
    let _ = std::fs::remove_dir_all(&dir);
    let out = hosts::run_bounded(
        Command::new(maturin)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["build", "--release", "--locked", "--out"])
            .arg(&dir)
            .envs(FAST_RELEASE)
            .env("CARGO_TARGET_DIR", shared_target()),
        b"",
        LIMIT,
    );
    assert!(out.status.success(), "maturin build: {}", hosts::show(&out));
    assert!(wheel_in(&dir).is_some(), "{}", hosts::show(&out));
    Some(dir)
}

/// PATH without the directories that hold cargo, so that no hook can build from source.
fn path_without_cargo() -> OsString {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let kept: Vec<PathBuf> = std::env::split_paths(&path)
        .filter(|d| !d.join("cargo").exists() && !d.join("rustc").exists())
        .collect();
    std::env::join_paths(kept).expect("PATH")
}

/// The bytes of the `meshjob` script a wheel installs, read with Python's zipfile (pre-commit
/// needs Python, so it is there).
fn binary_in_wheel(wheel: &Path) -> Vec<u8> {
    let script = "import sys, zipfile\n\
        z = zipfile.ZipFile(sys.argv[1])\n\
        name, = [n for n in z.namelist() if n.endswith('.data/scripts/meshjob')]\n\
        sys.stdout.buffer.write(z.read(name))\n";
    let out = hosts::run_bounded(
        Command::new("python3").arg("-c").arg(script).arg(wheel),
        b"",
        Duration::from_secs(60),
    );
    assert!(out.status.success(), "{}", hosts::show(&out));
    out.stdout
}

/// The `meshjob` binaries pre-commit installed into its python environments.
fn installed_binaries(home: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for repo in std::fs::read_dir(home).into_iter().flatten().flatten() {
        for env in std::fs::read_dir(repo.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let bin = env.path().join("bin/meshjob");
            if env.file_name().to_string_lossy().starts_with("py_env-") && bin.is_file() {
                found.push(bin);
            }
        }
    }
    found
}

#[test]
fn setup_py_pins_the_wheel_of_the_crate_version() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let hooks = std::fs::read_to_string(root.join(".pre-commit-hooks.yaml")).expect("hooks");
    let hooks: serde_json::Value = serde_saphyr::from_str(&hooks).expect("hooks parse");
    let languages: Vec<(&str, &str)> = hooks
        .as_array()
        .expect("a list of hooks")
        .iter()
        .map(|h| {
            (
                h["id"].as_str().expect("id"),
                h["language"].as_str().expect("language"),
            )
        })
        .collect();
    assert_eq!(
        languages,
        [
            ("meshjob", "python"),
            ("meshjob-check", "python"),
            ("meshjob-src", "rust"),
            ("meshjob-check-src", "rust"),
        ]
    );
    // setup.py reads the version from Cargo.toml; this is what it reads.
    let Some(python) = common::require_tool("python3", "it runs setup.py") else {
        return;
    };
    let out = hosts::run_bounded(
        Command::new(python)
            .current_dir(root)
            .args(["setup.py", "--quiet", "--version"]),
        b"",
        Duration::from_secs(60),
    );
    if !out.status.success() && String::from_utf8_lossy(&out.stderr).contains("setuptools") {
        common::skip("python3 has no setuptools to read setup.py with");
        return;
    }
    assert!(out.status.success(), "{}", hosts::show(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        crate_version(),
        "{}",
        hosts::show(&out)
    );
}

#[test]
fn python_hooks_install_the_wheel_fix_then_pass_and_check_changes_nothing() {
    let Some(mut s) = setup() else { return };
    let Some(wheels) = wheel_dir() else { return };
    s.env
        .push(("PIP_FIND_LINKS".to_string(), wheels.clone().into()));
    s.env.push(("PATH".to_string(), path_without_cargo()));
    let first = fix_then_pass_then_check(&s, "meshjob", "meshjob-check");
    report(&format!(
        "pre-commit first run of the python hook `meshjob` (pip installs the wheel): {first:.1?}"
    ));
    let home = store(s.tmp.path());
    let installed = installed_binaries(&home);
    assert!(!installed.is_empty(), "no meshjob under {}", home.display());
    let want = binary_in_wheel(&wheel_in(&wheels).expect("the wheel"));
    for bin in installed {
        assert!(
            std::fs::read(&bin).expect("read") == want,
            "{} is not the wheel's binary",
            bin.display()
        );
    }
}

#[test]
fn rust_hooks_build_fix_then_pass_and_check_changes_nothing() {
    let Some(mut s) = setup() else { return };
    if common::require_tool("cargo", "the -src hooks build with cargo").is_none() {
        return;
    }
    let target = shared_target();
    let warm = target.join("release").is_dir();
    s.env
        .push(("CARGO_TARGET_DIR".to_string(), target.clone().into()));
    let first = fix_then_pass_then_check(&s, "meshjob-src", "meshjob-check-src");
    report(&format!(
        "pre-commit first run of the rust hook `meshjob-src` (cargo install, opt-level 0, \
         dependencies {}): {first:.1?}",
        if warm {
            "already compiled in the shared target directory"
        } else {
            "compiled from scratch"
        }
    ));
}

/// The files of a repository whose Job's fix depends on the other files: a Namespace that puts
/// `payments` in Linkerd, an IstioOperator (Istio 1.29) and a node list (kubelets 1.33).
const PROJECT: [(&str, &str); 3] = [
    (
        "platform/namespaces.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: payments\n  annotations:\n    \
         linkerd.io/inject: enabled\n",
    ),
    (
        "platform/istio.yaml",
        "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nmetadata:\n  name: \
         control-plane\n  namespace: istio-system\nspec:\n  tag: 1.29.1\n",
    ),
    (
        "platform/nodes.yaml",
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata:\n    \
         name: n1\n  status:\n    nodeInfo:\n      kubeletVersion: v1.33.1\n",
    ),
];

/// The two Jobs staged one at a time: one in the Linkerd namespace, one left to Istio.
const STAGED: [(&str, &str); 2] = [
    (
        "jobs/report.yaml",
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: report\n  namespace: payments\n\
         spec:\n  template:\n    spec:\n      containers:\n      - name: report\n        \
         image: perl:5.34.0\n        command: [\"perl\", \"-e\", \"print 1\"]\n      \
         restartPolicy: Never\n",
    ),
    (
        "jobs/pi.yaml",
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: pi\nspec:\n  template:\n    \
         spec:\n      containers:\n      - name: pi\n        image: perl:5.34.0\n        \
         command: [\"perl\", \"-e\", \"print 2\"]\n      restartPolicy: Never\n",
    ),
];

/// pre-commit hands the hook only the staged Job; the hook reads the rest of the repository
/// for its context, so the staged file ends as `meshjob fix .` of the whole repository leaves
/// it: Linkerd's wrapper in `payments`, the native annotation for the Istio Job (by the
/// IstioOperator and the nodes). The hook is this build's binary as a local `system` hook.
#[test]
fn a_staged_job_gets_the_fix_that_fix_of_the_whole_repository_gives_it() {
    if common::require_tool("pre-commit", "the hook is run by pre-commit").is_none()
        || common::require_tool("git", "pre-commit needs git").is_none()
    {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    for (staged, text) in STAGED {
        let work = tmp
            .path()
            .join(format!("work-{}", staged.replace('/', "-")));
        let whole = tmp
            .path()
            .join(format!("whole-{}", staged.replace('/', "-")));
        for dir in [&work, &whole] {
            for (name, text) in PROJECT {
                let p = dir.join(name);
                std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
                std::fs::write(p, text).expect("write");
            }
        }
        let config = format!(
            "repos:\n  - repo: local\n    hooks:\n      - id: meshjob\n        name: meshjob\n        \
             entry: {} fix\n        language: system\n        files: \\.ya?ml$\n",
            common::bin().display()
        );
        std::fs::write(work.join(".pre-commit-config.yaml"), config).expect("write");
        hosts::git(&work, &["init", "-q"]);
        hosts::git(&work, &["add", "-A"]);
        hosts::git(&work, &["commit", "-q", "-m", "platform"]);
        for dir in [&work, &whole] {
            let p = dir.join(staged);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(p, text).expect("write");
        }
        hosts::git(&work, &["add", staged]);

        let mut cmd = Command::new("pre-commit");
        cmd.current_dir(&work)
            .args(["run", "--color", "never"])
            .env("PRE_COMMIT_HOME", tmp.path().join("pre-commit-home"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env_remove("PRE_COMMIT_COLOR");
        let hook = hosts::run_bounded(&mut cmd, b"", Duration::from_secs(300));
        let log = hosts::show(&hook);
        assert_eq!(
            hook.status.code(),
            Some(1),
            "the hook fixed {staged}\n{log}"
        );
        assert!(log.contains("files were modified by this hook"), "{log}");

        let fix = hosts::run_bounded(
            Command::new(common::bin())
                .current_dir(&whole)
                .args(["fix", "."]),
            b"",
            Duration::from_secs(60),
        );
        assert!(fix.status.code() == Some(0), "{}", hosts::show(&fix));
        let by_hook = std::fs::read_to_string(work.join(staged)).expect("read");
        let by_fix = std::fs::read_to_string(whole.join(staged)).expect("read");
        assert_eq!(
            by_hook, by_fix,
            "{staged}: the hook and `fix .` agree\n{log}"
        );
        let want = match staged {
            "jobs/report.yaml" => "for q in localhost:4191/shutdown;",
            _ => "sidecar.istio.io/nativeSidecar: \"true\"",
        };
        assert!(by_hook.contains(want), "{staged} has {want}:\n{by_hook}");
        // The other files are the context: read, never changed by the hook.
        for (name, text) in PROJECT {
            let now = std::fs::read_to_string(work.join(name)).expect("read");
            assert_eq!(now, text, "{name} is left alone by the hook");
        }
    }
}
