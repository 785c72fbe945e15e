//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::thread::JoinHandle;

/// Set by `.ci/run`: every test that would skip for a missing outside program fails instead.
pub const REQUIRE_ENV: &str = "MESHJOB_REQUIRE_TOOLS";

/// Finds `name` on PATH. When it is missing, prints a loud skip message and returns `None`,
/// or panics when [`REQUIRE_ENV`] is set, so CI never skips silently.
pub fn require_tool(name: &str, why: &str) -> Option<PathBuf> {
    if let Some(p) = which(name) {
        return Some(p);
    }
    skip(&format!("`{name}` is not installed ({why})"));
    None
}

/// Reports a skipped test loudly, or fails it when [`REQUIRE_ENV`] is set.
///
/// The message is written to the process's stderr itself, not through `eprintln!`: the test
/// harness captures what the print macros write (and shows it only for a failing test), but
/// not writes to the stderr handle, so a plain `cargo test` shows every skip next to its
/// test's result line.
pub fn skip(reason: &str) {
    if std::env::var_os(REQUIRE_ENV).is_some_and(|v| !v.is_empty() && v != "0") {
        panic!("{REQUIRE_ENV} is set, so this test may not skip: {reason}");
    }
    let test = std::thread::current()
        .name()
        .map_or(String::new(), |n| format!(" {n}:"));
    let line = format!("\n!!!!!!!! SKIPPED{test} {reason} !!!!!!!!\n");
    // One write, so that tests on other threads do not cut into the line.
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// Names the directory of the test peers (the real Istio, Helm, kustomize... programs that
/// `scripts/peers.sh` builds from the Go module proxy); `scripts/peers.sh --print-env` prints it.
pub const PEERS_ENV: &str = "MESHJOB_PEERS_BIN";

/// Finds the test peer `name` (a binary `scripts/peers.sh PEER` builds) in [`PEERS_ENV`], then
/// on PATH. When it is missing, skips loudly, or fails under [`REQUIRE_ENV`], as
/// [`require_tool`] does.
pub fn require_peer(name: &str, peer: &str, why: &str) -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(PEERS_ENV).filter(|d| !d.is_empty()) {
        let p = Path::new(&dir).join(name);
        if is_executable(&p) {
            return Some(p);
        }
    }
    if let Some(p) = which(name) {
        return Some(p);
    }
    skip(&format!(
        "`{name}` is not built ({why}): run `scripts/peers.sh {peer}` and set \
         {PEERS_ENV} to the directory `scripts/peers.sh --print-env` names"
    ));
    None
}

pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// The project root, where Cargo.toml is: every path the tests read is relative to it.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared` beside the project root, where the third-party corpus and the YAML test suite
/// live. `None` (with a loud message) on a user's clone, where it is absent.
pub fn shared_dir() -> Option<PathBuf> {
    let dir = root().join("../shared");
    if dir.join("corpus").is_dir() {
        Some(dir)
    } else {
        skip("../shared (corpus and yaml-test-suite) is absent beside the project root");
        None
    }
}

/// The groups of golden cases in `testdata/`: each holds case folders with `input.yaml`.
pub const GOLDEN_GROUPS: [&str; 7] = [
    "holders",
    "jobs",
    "kinds",
    "linkerd",
    "mesh",
    "strategies",
    "versions",
];

/// Every golden case folder (`testdata/<group>/<case>/`), sorted.
/// A golden case's extra flags: its `args` file, one per line (blank lines and `#` comments
/// left out); none without the file.
pub fn case_args(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("args"))
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect()
}

pub fn golden_cases() -> Vec<PathBuf> {
    let testdata = root().join("testdata");
    let mut v: Vec<PathBuf> = GOLDEN_GROUPS
        .iter()
        .flat_map(|g| {
            std::fs::read_dir(testdata.join(g))
                .unwrap_or_else(|e| panic!("testdata/{g}/: {e}"))
                .filter_map(|e| e.ok().map(|e| e.path()))
        })
        .filter(|p| p.join("input.yaml").is_file())
        .collect();
    v.sort();
    v
}

/// The path of the built `meshjob` binary.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_meshjob"))
}

/// A command for the built binary, with the colour switches of the environment removed so
/// that output does not depend on who runs the tests.
pub fn meshjob() -> Command {
    let mut cmd = Command::new(bin());
    cmd.env_remove("NO_COLOR").env_remove("CLICOLOR_FORCE");
    cmd
}

/// Starts `cmd` with its three streams piped and `input` written to stdin from a thread, so
/// a program that answers before it has read everything cannot dead-lock against a full
/// pipe; a program that stops reading (an input cap) is not an error here. Join the thread
/// once the child is done.
pub fn spawn_with_stdin(cmd: &mut Command, input: &[u8]) -> (Child, JoinHandle<()>) {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let data = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&data);
    });
    (child, writer)
}

/// Runs `cmd` with `input` on stdin and collects its output.
pub fn run_stdin(cmd: &mut Command, input: &[u8]) -> Output {
    let (child, writer) = spawn_with_stdin(cmd, input);
    let out = child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("cannot wait for {cmd:?}: {e}"));
    let _ = writer.join();
    out
}

/// What a run of a program gave: its exit code (-1 when a signal ended it) and its output.
pub struct Run {
    pub code: i32,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

impl Run {
    /// stdout as text; a program of ours that prints anything else is a bug.
    pub fn stdout(&self) -> &str {
        std::str::from_utf8(&self.stdout).unwrap_or_else(|e| panic!("stdout is not UTF-8: {e}"))
    }

    /// stderr as text, as [`Run::stdout`].
    pub fn stderr(&self) -> &str {
        std::str::from_utf8(&self.stderr).unwrap_or_else(|e| panic!("stderr is not UTF-8: {e}"))
    }

    /// The exit code and both streams, for assertion messages.
    pub fn show(&self) -> String {
        format!(
            "status {}\n--- stdout\n{}\n--- stderr\n{}",
            self.code,
            String::from_utf8_lossy(&self.stdout),
            String::from_utf8_lossy(&self.stderr)
        )
    }
}

impl From<Output> for Run {
    fn from(out: Output) -> Run {
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: out.stdout,
            stderr: out.stderr,
        }
    }
}

/// Runs `cmd` with `stdin` piped in, or with no stdin at all when it is `None`.
pub fn run(cmd: &mut Command, stdin: Option<&[u8]>) -> Run {
    match stdin {
        Some(input) => run_stdin(cmd, input).into(),
        None => cmd
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"))
            .into(),
    }
}

/// The files below `dir` whose names pass `name_ok`, in sorted order, appended to `out`.
pub fn walk(dir: &Path, name_ok: &dyn Fn(&str) -> bool, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, name_ok, out);
        } else if p.file_name().and_then(|n| n.to_str()).is_some_and(name_ok) {
            out.push(p);
        }
    }
}

/// Where a YAML input comes from. testdata and the YAML test suite are made of corner cases
/// on purpose (CRLF, explicit keys, JSON, every feature of YAML); the corpus of real
/// manifests says how common a case is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    Testdata,
    Corpus,
    Suite,
}

/// Every YAML text the property tests read, as (label, text, origin): `testdata/**/*.yaml`
/// always; the corpus and the YAML test suite's `in.yaml` files from `../shared/` when it is
/// there, else a loud skip message. Files that are not UTF-8 are left out.
pub fn yaml_inputs() -> Vec<(String, String, Origin)> {
    let mut sets = vec![(Origin::Testdata, Vec::new())];
    walk(
        &root().join("testdata"),
        &|n| n.ends_with(".yaml"),
        &mut sets[0].1,
    );
    match shared_dir() {
        Some(shared) => {
            let (mut corpus, mut suite) = (Vec::new(), Vec::new());
            walk(
                &shared.join("corpus"),
                &|n| !n.ends_with(".md"),
                &mut corpus,
            );
            walk(
                &shared.join("yaml-test-suite"),
                &|n| n == "in.yaml",
                &mut suite,
            );
            sets.push((Origin::Corpus, corpus));
            sets.push((Origin::Suite, suite));
        }
        None => eprintln!("SKIPPING the corpus and the YAML test suite: ../shared is absent"),
    }
    sets.into_iter()
        .flat_map(|(origin, paths)| {
            paths.into_iter().filter_map(move |p| {
                let text = String::from_utf8(std::fs::read(&p).ok()?).ok()?;
                Some((p.display().to_string(), text, origin))
            })
        })
        .collect()
}

/// [`yaml_inputs`] as (label, text).
pub fn yaml_texts() -> Vec<(String, String)> {
    (yaml_inputs().into_iter())
        .map(|(label, text, _)| (label, text))
        .collect()
}

pub mod golden;
pub mod hosts;
pub mod invariants;
pub mod patch;
pub mod samples;

/// The settings a golden case runs with: its `args` and `.meshjob.yaml`, as the golden
/// test passes them (so that `--mesh linkerd` cases validate their Linkerd output); the
/// defaults for other inputs.
pub fn case_settings(input: &Path) -> meshjob::Settings {
    let dir = input.parent().unwrap_or(Path::new("."));
    let mut argv = vec!["meshjob".to_string(), "diff".to_string()];
    argv.extend(
        std::fs::read_to_string(dir.join("args"))
            .unwrap_or_default()
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(String::from),
    );
    let config = dir.join(".meshjob.yaml");
    if config.is_file() {
        argv.extend(["--config".to_string(), config.display().to_string()]);
    }
    let cli = <meshjob::Cli as clap::Parser>::try_parse_from(&argv)
        .unwrap_or_else(|e| panic!("{}: args: {e}", dir.display()));
    let meshjob::Command::Diff(args) = cli.command else {
        unreachable!("parsed as diff");
    };
    meshjob::settings_here(&args.settings).unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
}
