//! The Windows build (`x86_64-pc-windows-gnu`) run under Wine: the golden cases through
//! `fix -`, `check` on a tree, `fix` in place, the diff with Windows paths, a read-only file,
//! a file another program holds open, a `\\?\` long path, and what cannot exist there.
//!
//! Every test is ignored in a plain `cargo test`: `scripts/windows-tests.sh` cross-builds
//! `meshjob.exe`, builds its helpers and runs them with `-- --ignored`, naming what they need:
//! `MESHJOB_WINE` (the wine program), `MESHJOB_WINDOWS_EXE` (meshjob.exe, beside the
//! `bcryptprimitives.dll` stand-in Wine 8 needs) and `MESHJOB_WINDOWS_HOLD` (hold.exe, which
//! keeps a file open the way a locking editor does). Run by hand without them, a test fails
//! and says so. The Linux build of the same checkout is the reference: the Windows one must
//! print the same, with `\` between the names of a path it prints for a person and `/` where
//! git reads it (diff headers).

mod common;

use common::Run;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const WHY: &str = "run by scripts/windows-tests.sh, which cross-builds meshjob.exe";

/// A path the test environment must name.
fn env_path(var: &str) -> PathBuf {
    let p = std::env::var_os(var)
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("{var} is not set ({WHY})"));
    assert!(p.exists(), "{var}={} does not exist", p.display());
    p
}

/// A Windows program under Wine, run in `dir` (Wine gives it `dir` as `Z:\...`).
fn wine(exe: &Path, dir: &Path) -> Command {
    let mut cmd = Command::new(env_path("MESHJOB_WINE"));
    cmd.arg(exe)
        .current_dir(dir)
        .env("WINEDEBUG", "-all")
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE");
    cmd
}

/// meshjob.exe with `args`, in `dir`.
fn win(dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> Run {
    common::run(
        wine(&env_path("MESHJOB_WINDOWS_EXE"), dir).args(args),
        stdin,
    )
}

/// The Linux build with `args`, in `dir`: the reference.
fn linux(dir: &Path, args: &[&str]) -> Run {
    common::run(common::meshjob().current_dir(dir).args(args), None)
}

/// `p` (absolute, on this machine) as Wine's Windows programs see it: on drive `Z:`.
fn windows_path(p: &Path) -> String {
    format!("Z:{}", p.display()).replace('/', "\\")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A tree of manifests: an Istio Job, a Linkerd CronJob one level down, and the Job again with
/// CRLF line ends, as git checks it out on Windows with `core.autocrlf`.
fn tree(root: &Path) -> Vec<&'static str> {
    let docs = common::root().join("testdata/docs");
    std::fs::create_dir_all(root.join("k8s/batch")).unwrap();
    let job = std::fs::read_to_string(docs.join("job.yaml")).unwrap();
    std::fs::write(root.join("k8s/job.yaml"), &job).unwrap();
    std::fs::copy(
        docs.join("linkerd-cronjob.yaml"),
        root.join("k8s/batch/cron.yaml"),
    )
    .unwrap();
    std::fs::write(root.join("k8s/crlf.yaml"), job.replace('\n', "\r\n")).unwrap();
    vec!["k8s/batch/cron.yaml", "k8s/crlf.yaml", "k8s/job.yaml"]
}

/// Linux output with each of `names` spelled as Windows prints it.
fn with_backslashes(out: &str, names: &[&str]) -> String {
    names.iter().fold(out.to_string(), |o, n| {
        o.replace(&format!("{n}:"), &format!("{}:", n.replace('/', "\\")))
    })
}

#[test]
#[ignore = "runs meshjob.exe under Wine: scripts/windows-tests.sh"]
fn golden_cases_through_fix_stdin() {
    let mut failures = Vec::new();
    let cases = common::golden_cases();
    assert!(cases.len() >= 20, "expected the golden cases in testdata/");
    for dir in &cases {
        let extra = common::case_args(dir);
        let mut args = vec!["fix", "--color", "never", "-"];
        args.extend(extra.iter().map(String::as_str));
        let input = std::fs::read(dir.join("input.yaml")).unwrap();
        let want = std::fs::read(dir.join("expected.yaml")).unwrap();
        let mut fix = win(dir, &args, Some(&input));
        if fix.stdout != want && fix.stdout.is_empty() {
            // Wine on a loaded machine has once ended a run with no output at all (a golden
            // case that passes alone, and on Linux). That is Wine's, not meshjob's: the case
            // runs once more, and the first run is shown so that a pattern can be seen. A
            // run that printed anything is never run again.
            eprintln!(
                "!!! {}: no output from meshjob.exe under Wine; running it once more. The first \
                 run: {}",
                dir.display(),
                fix.show()
            );
            fix = win(dir, &args, Some(&input));
        }
        if fix.stdout != want {
            failures.push(format!(
                "{}\n{}",
                common::golden::mismatch(
                    &format!("{}: fix - under Wine", dir.display()),
                    &want,
                    &fix.stdout,
                ),
                fix.show()
            ));
        }
    }
    common::golden::assert_none(&failures);
    eprintln!("{} golden cases through `fix -` under Wine", cases.len());
}

#[test]
#[ignore = "runs meshjob.exe under Wine: scripts/windows-tests.sh"]
fn check_on_a_tree_prints_what_linux_does_with_windows_names() {
    let dir = tempfile::tempdir().unwrap();
    let names = tree(dir.path());
    // `k8s\batch\cron.yaml` is also inside `k8s`: one input, found by its file ID.
    let w = win(
        dir.path(),
        &["check", "--color", "never", "k8s", r"k8s\batch\cron.yaml"],
        None,
    );
    let l = linux(
        dir.path(),
        &["check", "--color", "never", "k8s", "k8s/batch/cron.yaml"],
    );
    assert_eq!(w.code, l.code, "exit status\n{}", text(&w.stderr));
    assert_eq!(l.code, 1, "the tree has findings\n{}", text(&l.stderr));
    // The diff is for git: the same bytes, `/` in its headers.
    assert_eq!(text(&w.stdout), text(&l.stdout));
    assert!(text(&w.stdout).contains("--- a/k8s/batch/cron.yaml\n"));
    let stderr = text(&w.stderr);
    assert_eq!(stderr, with_backslashes(&text(&l.stderr), &names));
    assert!(stderr.contains(r"k8s\batch\cron.yaml:"), "{stderr}");
    assert!(stderr.contains("3 files would be changed"), "{stderr}");
    // GitHub annotations and SARIF name the file as the repository has it, with `/`.
    let gh = win(dir.path(), &["check", "--format", "github", "k8s"], None);
    let gh_l = linux(dir.path(), &["check", "--format", "github", "k8s"]);
    assert_eq!(text(&gh.stderr), text(&gh_l.stderr));
    assert!(text(&gh.stderr).contains("file=k8s/batch/cron.yaml,"));
    let sarif = win(dir.path(), &["check", "--format", "sarif", "k8s"], None);
    let sarif_l = linux(dir.path(), &["check", "--format", "sarif", "k8s"]);
    assert_eq!(text(&sarif.stdout), text(&sarif_l.stdout));
    assert!(text(&sarif.stdout).contains(r#""uri": "k8s/batch/cron.yaml""#));
}

#[test]
#[ignore = "runs meshjob.exe under Wine: scripts/windows-tests.sh"]
fn fix_in_place_writes_what_linux_writes_and_keeps_crlf() {
    let (w_dir, l_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let names = tree(w_dir.path());
    tree(l_dir.path());
    let w = win(w_dir.path(), &["fix", "--color", "never", "k8s"], None);
    let l = linux(l_dir.path(), &["fix", "--color", "never", "k8s"]);
    assert_eq!(w.code, l.code, "exit status\n{}", text(&w.stderr));
    for n in &names {
        let (wb, lb) = (
            std::fs::read(w_dir.path().join(n)).unwrap(),
            std::fs::read(l_dir.path().join(n)).unwrap(),
        );
        assert_eq!(text(&wb), text(&lb), "{n}");
    }
    let crlf = std::fs::read_to_string(w_dir.path().join("k8s/crlf.yaml")).unwrap();
    assert!(
        crlf.contains("holdApplicationUntilProxyStarts"),
        "not fixed: {crlf}"
    );
    assert_eq!(
        crlf.matches('\n').count(),
        crlf.matches("\r\n").count(),
        "a line of the CRLF file lost its CR:\n{crlf}"
    );
    // Fixed: a second check finds nothing to change.
    let again = win(w_dir.path(), &["check", "--color", "never", "k8s"], None);
    assert!(again.stdout.is_empty(), "{}", text(&again.stdout));
}

#[test]
#[ignore = "runs meshjob.exe under Wine: scripts/windows-tests.sh"]
fn the_diff_of_a_windows_path_applies_with_git() {
    let Some(git) = common::require_tool("git", "applies the diff") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path());
    let before = std::fs::read(dir.path().join("k8s/batch/cron.yaml")).unwrap();
    let w = win(
        dir.path(),
        &["diff", "--color", "never", r"k8s\batch\cron.yaml"],
        None,
    );
    let diff = text(&w.stdout);
    assert!(
        diff.starts_with("--- a/k8s/batch/cron.yaml\n+++ b/k8s/batch/cron.yaml\n"),
        "{diff}"
    );
    // An absolute Windows path is printed as typed, and is as good for `diff`.
    let abs = windows_path(&dir.path().join("k8s/batch/cron.yaml"));
    let by_abs = win(dir.path(), &["diff", "--color", "never", &abs], None);
    assert_eq!(text(&by_abs.stdout), diff);
    let patch = dir.path().join("cron.patch");
    std::fs::write(&patch, &w.stdout).unwrap();
    let applied = Command::new(git)
        .args(["apply", "--verbose", "cron.patch"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(applied.status.success(), "{}", text(&applied.stderr));
    let after = std::fs::read(dir.path().join("k8s/batch/cron.yaml")).unwrap();
    assert_ne!(after, before);
    let fixed = linux(dir.path(), &["check", "k8s/batch/cron.yaml"]);
    assert!(fixed.stdout.is_empty(), "{}", text(&fixed.stdout));
}

#[test]
#[ignore = "runs meshjob.exe under Wine: scripts/windows-tests.sh"]
fn a_read_only_file_is_refused_and_stays_read_only() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path());
    let file = dir.path().join("k8s/job.yaml");
    let before = std::fs::read(&file).unwrap();
    // The attribute as a Windows user sets it.
    let attrib = common::run(
        wine(Path::new("attrib"), dir.path()).args(["+r", r"k8s\job.yaml"]),
        None,
    );
    assert_eq!(attrib.code, 0, "attrib +r: {}", text(&attrib.stderr));
    let w = win(dir.path(), &["fix", "--color", "never", "k8s"], None);
    let stderr = text(&w.stderr);
    assert_eq!(w.code, 2, "{stderr}");
    assert!(
        stderr.contains(r"k8s\job.yaml:1:1: error: cannot write: the file is read-only (its read-only attribute is set)"),
        "{stderr}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), before);
    assert!(std::fs::metadata(&file).unwrap().permissions().readonly());
    // The other files were fixed.
    let rest = win(dir.path(), &["check", "--color", "never", "k8s"], None);
    assert!(
        text(&rest.stdout).starts_with("--- a/k8s/job.yaml\n"),
        "{}",
        text(&rest.stdout)
    );
    assert!(text(&rest.stderr).contains("1 file would be changed"));
}

/// Runs `fix k8s` while hold.exe keeps `k8s\job.yaml` open (`exclusive`: shared for nothing),
/// and returns the run; the file is closed again when it returns.
fn fix_while_held(dir: &Path, exclusive: bool) -> Run {
    let mut holder = wine(&env_path("MESHJOB_WINDOWS_HOLD"), dir)
        .arg(r"k8s\job.yaml")
        .args(exclusive.then_some("exclusive"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(holder.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim_end(), "held");
    let w = win(dir, &["fix", "--color", "never", "k8s"], None);
    drop(holder.stdin.take());
    assert!(holder.wait().unwrap().success());
    w
}

#[test]
#[ignore = "runs meshjob.exe under Wine: scripts/windows-tests.sh"]
fn a_file_open_in_another_program_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path());
    let file = dir.path().join("k8s/job.yaml");
    let before = std::fs::read(&file).unwrap();
    // Shared for reading: read, but not replaced.
    let w = fix_while_held(dir.path(), false);
    let stderr = text(&w.stderr);
    assert_eq!(w.code, 2, "{stderr}");
    assert!(
        stderr.contains(r"k8s\job.yaml:1:1: error: cannot write: cannot replace the file")
            && stderr.contains("Another program may have it open"),
        "{stderr}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), before);
    // Shared for nothing: not even read, and said so.
    let w = fix_while_held(dir.path(), true);
    let stderr = text(&w.stderr);
    assert_eq!(w.code, 2, "{stderr}");
    assert!(stderr.contains(r"k8s\job.yaml:"), "{stderr}");
    assert!(
        stderr.contains("(os error 32)"),
        "a sharing violation: {stderr}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), before);
    // Closed, it is written.
    let again = win(dir.path(), &["fix", "--color", "never", "k8s"], None);
    assert_eq!(again.code, 0, "{}", text(&again.stderr));
    assert_ne!(std::fs::read(&file).unwrap(), before);
}

/// A directory below `root` whose file `name` has a Windows path of exactly `len` characters.
fn deep_dir(root: &Path, name: &str, len: usize) -> PathBuf {
    let base = windows_path(&root.join(name)).len();
    let pad = len - base;
    // Names of at most 50 characters, each with its separator.
    let mut dir = PathBuf::new();
    let mut left = pad;
    while left > 0 {
        let n = left.min(51);
        let part = if n == 1 {
            None
        } else {
            Some("d".repeat(n - 1))
        };
        match part {
            Some(p) => dir.push(p),
            None => {
                // One character left: lengthen the last name instead.
                let last = dir.file_name().unwrap().to_string_lossy().into_owned();
                dir.set_file_name(format!("{last}d"));
            }
        }
        left -= n;
    }
    std::fs::create_dir_all(root.join(&dir)).unwrap();
    assert_eq!(windows_path(&root.join(&dir).join(name)).len(), len);
    dir
}

#[test]
#[ignore = "runs meshjob.exe under Wine: scripts/windows-tests.sh"]
fn a_long_path_is_read_as_a_verbatim_path_and_a_plain_one() {
    let dir = tempfile::tempdir().unwrap();
    let job = common::root().join("testdata/docs/job.yaml");
    // Far past MAX_PATH (260): read by `diff`, given as typed and as a `\\?\` path.
    let deep = deep_dir(dir.path(), "job.yaml", 400);
    let file = dir.path().join(&deep).join("job.yaml");
    std::fs::copy(&job, &file).unwrap();
    let rel = format!(r"{}\job.yaml", deep.display()).replace('/', "\\");
    let verbatim = format!(r"\\?\{}", windows_path(&file));
    let plain = win(dir.path(), &["diff", "--color", "never", &rel], None);
    let by_verbatim = win(dir.path(), &["diff", "--color", "never", &verbatim], None);
    assert_eq!(plain.code, 0, "{}", text(&plain.stderr));
    // Named below the working directory either way, with `/` for git.
    let header = format!("--- a/{}/job.yaml\n", deep.display());
    assert!(
        text(&plain.stdout).starts_with(&header),
        "{}",
        text(&plain.stdout)
    );
    assert_eq!(text(&by_verbatim.stdout), text(&plain.stdout));
    assert_eq!(text(&by_verbatim.stderr), text(&plain.stderr));
    assert!(!text(&by_verbatim.stderr).contains(r"\\?\"));
}

#[test]
#[ignore = "runs meshjob.exe under Wine: scripts/windows-tests.sh"]
fn a_path_past_max_path_is_fixed_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let job = common::root().join("testdata/docs/job.yaml");
    // 262 characters: past MAX_PATH, but not past what Wine 8 can resolve. `fix` resolves
    // the path it replaces (`fs::canonicalize`, to replace a link's target), which Windows
    // does with GetFinalPathNameByHandleW; Wine 8's copies the name through a buffer of
    // MAX_PATH + 1 characters and fails beyond (ERROR_MORE_DATA), where Windows returns the
    // size it needs.
    let deep = deep_dir(dir.path(), "job.yaml", 262);
    let file = dir.path().join(&deep).join("job.yaml");
    std::fs::copy(&job, &file).unwrap();
    let verbatim = format!(r"\\?\{}", windows_path(&file));
    let w = win(dir.path(), &["fix", "--color", "never", &verbatim], None);
    let stderr = text(&w.stderr);
    assert_eq!(w.code, 0, "{stderr}");
    let rel = format!(r"{}\job.yaml", deep.display()).replace('/', "\\");
    assert!(stderr.contains(&format!("fixed {rel}\n")), "{stderr}");
    let l_dir = tempfile::tempdir().unwrap();
    std::fs::copy(&job, l_dir.path().join("job.yaml")).unwrap();
    linux(l_dir.path(), &["fix", "job.yaml"]);
    let want = std::fs::read(l_dir.path().join("job.yaml")).unwrap();
    assert_eq!(text(&std::fs::read(&file).unwrap()), text(&want));
}

#[test]
#[ignore = "runs meshjob.exe under Wine: scripts/windows-tests.sh"]
fn a_utf16_file_is_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let job = std::fs::read_to_string(common::root().join("testdata/docs/job.yaml")).unwrap();
    // As Windows PowerShell 5's `>` writes a file: UTF-16LE with a byte order mark.
    let mut bytes = vec![0xff, 0xfe];
    bytes.extend(job.encode_utf16().flat_map(u16::to_le_bytes));
    std::fs::create_dir_all(dir.path().join("k8s")).unwrap();
    std::fs::write(dir.path().join("k8s/utf16.yaml"), &bytes).unwrap();
    let w = win(dir.path(), &["fix", "--color", "never", "k8s"], None);
    let l = linux(dir.path(), &["fix", "--color", "never", "k8s"]);
    let stderr = text(&w.stderr);
    assert_eq!(w.code, l.code, "{stderr}");
    assert_eq!(
        stderr,
        with_backslashes(&text(&l.stderr), &["k8s/utf16.yaml"])
    );
    assert!(
        stderr.contains(r"k8s\utf16.yaml:") && stderr.contains("UTF-16"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(dir.path().join("k8s/utf16.yaml")).unwrap(),
        bytes
    );
}

#[test]
#[ignore = "runs meshjob.exe under Wine: scripts/windows-tests.sh"]
fn the_kustomize_plugin_link_says_why_it_cannot_exist() {
    let dir = tempfile::tempdir().unwrap();
    let w = win(
        dir.path(),
        &["kustomize", "install", "--dir", "plugins"],
        None,
    );
    let stderr = text(&w.stderr);
    assert_ne!(w.code, 0, "{stderr}");
    assert!(
        stderr.contains("cannot be installed on Windows") && stderr.contains("KRM exec function"),
        "{stderr}"
    );
    assert!(!dir.path().join("plugins").exists());
}

#[test]
#[ignore = "runs meshjob.exe under Wine: scripts/windows-tests.sh"]
fn a_pipe_on_stdin_without_a_path_is_not_taken_for_the_tree() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path());
    let input = std::fs::read(common::root().join("testdata/docs/job.yaml")).unwrap();
    let w = win(dir.path(), &["fix", "--color", "never"], Some(&input));
    let stderr = text(&w.stderr);
    assert_eq!(w.code, 2, "{stderr}");
    assert!(
        stderr.contains("stdin is a pipe, but no PATH was given"),
        "{stderr}"
    );
    // Nothing in the tree was touched.
    let check = win(dir.path(), &["check", "--color", "never", "k8s"], None);
    assert!(text(&check.stderr).contains("3 files would be changed"));
}
