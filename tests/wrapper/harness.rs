//! The harness shared by the wrapper's runtime tests: real shells, a PATH holding exactly
//! the HTTP clients a case allows, and a way to run `sh -c <script> meshjob <task...>` with a
//! time limit.
#![allow(dead_code)]

use crate::common;
use meshjob::script::{ArgvOrigin, ScriptOptions, parse_quit_url};
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------
// Shells and PATHs

#[derive(Clone)]
pub struct Shell {
    pub name: &'static str,
    pub argv: Vec<OsString>,
}

/// The shells to run every case under; a missing one is skipped loudly.
pub fn shells() -> Vec<Shell> {
    let mut out = Vec::new();
    if let Some(p) = common::require_tool("dash", "runs the wrapper as Debian's /bin/sh") {
        out.push(Shell {
            name: "dash",
            argv: vec![p.into()],
        });
    }
    if let Some(p) = common::require_tool("bash", "runs the wrapper as bash and bash --posix") {
        out.push(Shell {
            name: "bash",
            argv: vec![p.clone().into()],
        });
        out.push(Shell {
            name: "bash --posix",
            argv: vec![p.into(), "--posix".into()],
        });
    }
    if let Some(p) = common::require_tool("busybox", "runs the wrapper as busybox ash") {
        out.push(Shell {
            name: "busybox sh",
            argv: vec![p.into(), "sh".into()],
        });
    }
    out
}

/// Runs `case` once per shell, all at the same time; a failure names the shell.
pub fn for_each_shell(case: impl Fn(&Shell) + Sync) {
    let shells = shells();
    thread::scope(|s| {
        let handles: Vec<_> = shells
            .iter()
            .map(|sh| (sh.name, s.spawn(|| case(sh))))
            .collect();
        let failed: Vec<_> = handles
            .into_iter()
            .filter_map(|(name, h)| h.join().is_err().then_some(name))
            .collect();
        assert!(failed.is_empty(), "failed under: {failed:?}");
    });
}

/// An HTTP client the wrapper may find on PATH.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Client {
    Curl,
    GnuWget,
    BusyboxWget,
    Bash,
}

pub const ALL_CLIENTS: [Client; 4] = [
    Client::Curl,
    Client::GnuWget,
    Client::BusyboxWget,
    Client::Bash,
];

impl Client {
    /// The name on PATH and the file it points to, or None when the host lacks it.
    pub fn resolve(self) -> Option<(&'static str, PathBuf)> {
        let found = match self {
            Client::Curl => common::which("curl"),
            Client::GnuWget => common::which("wget").filter(|p| !is_busybox(p)),
            Client::BusyboxWget => common::which("busybox"),
            Client::Bash => common::which("bash"),
        };
        let name = match self {
            Client::Curl => "curl",
            Client::GnuWget | Client::BusyboxWget => "wget",
            Client::Bash => "bash",
        };
        found.map(|p| (name, p))
    }
}

pub fn is_busybox(p: &Path) -> bool {
    std::fs::canonicalize(p)
        .map(|c| c.file_name().is_some_and(|n| n == "busybox"))
        .unwrap_or(false)
}

/// A directory for PATH holding `sleep` and `cat` plus the given clients. None (skipped
/// loudly, or a failure under MESHJOB_REQUIRE_TOOLS) when the host lacks one of them.
pub fn tool_dir(clients: &[Client]) -> Option<tempfile::TempDir> {
    let dir = tempfile::tempdir().unwrap();
    for base in ["sleep", "cat"] {
        let p = common::which(base).expect("sleep and cat are on the host");
        std::os::unix::fs::symlink(p, dir.path().join(base)).unwrap();
    }
    for &c in clients {
        let Some((name, target)) = c.resolve() else {
            common::skip(&format!(
                "the HTTP client {c:?} is not on this host; the cases that need it are left out"
            ));
            return None;
        };
        std::os::unix::fs::symlink(target, dir.path().join(name)).unwrap();
    }
    Some(dir)
}

/// The host's /bin/sh, by absolute path, for small task helpers.
pub fn host_sh() -> PathBuf {
    common::which("sh").expect("sh on the host")
}

// ---------------------------------------------------------------------------------------
// Running a wrapper

pub fn options(quit_url: &str) -> ScriptOptions {
    ScriptOptions {
        quit: parse_quit_url(quit_url).unwrap(),
        also: Vec::new(),
        stop_proxy_on_failure: true,
        peers: None,
        wait_for_proxy: None,
        origin: ArgvOrigin::Command(1),
        command_style: Default::default(),
    }
}

/// Longest any single wrapper run may take before the test kills it and fails.
pub const RUN_LIMIT: Duration = Duration::from_secs(12);

pub struct Running {
    child: Child,
    started: Instant,
    out: thread::JoinHandle<Vec<u8>>,
    err: thread::JoinHandle<Vec<u8>>,
}

pub struct Done {
    pub status: ExitStatus,
    /// When the wrapper exited.
    pub exited: Instant,
    pub stdout: Vec<u8>,
    pub stderr: String,
    pub elapsed: Duration,
}

impl Done {
    pub fn code(&self) -> i32 {
        self.status
            .code()
            .unwrap_or_else(|| panic!("wrapper died of a signal: {:?}", self.status))
    }
}

/// Starts `sh -c <script> meshjob <task...>` with PATH = `path`, stdin = `stdin` (then EOF).
pub fn spawn(sh: &Shell, script: &str, path: &Path, task: &[OsString], stdin: &[u8]) -> Running {
    spawn_in(sh, script, path, task, stdin, None)
}

/// [`spawn`], with an environment of exactly PATH and `env` when `env` is given (else this
/// process's environment without its HTTP proxy settings).
pub fn spawn_in(
    sh: &Shell,
    script: &str,
    path: &Path,
    task: &[OsString],
    stdin: &[u8],
    env: Option<&[(String, String)]>,
) -> Running {
    // A container's PID 1 starts with every signal at its default; a test run from a shell's
    // background job inherits SIGINT ignored, and POSIX lets no shell trap a signal ignored on
    // entry. GNU env's --default-signal (coreutils 8.31+) gives the wrapper the container's
    // start; env execs the shell, so the child's PID is the shell's.
    let mut cmd = Command::new("/usr/bin/env");
    cmd.arg("--default-signal=INT,TERM,HUP,QUIT")
        .args(&sh.argv)
        .arg("-c")
        .arg(script)
        .arg("meshjob")
        .args(task)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(env) = env {
        cmd.env_clear().envs(env.iter().map(|(k, v)| (k, v)));
    } else {
        for v in [
            "http_proxy",
            "HTTP_PROXY",
            "https_proxy",
            "all_proxy",
            "ALL_PROXY",
        ] {
            cmd.env_remove(v);
        }
    }
    cmd.env("PATH", path);
    // Taken before the spawn, so that `elapsed` is never shorter than the run.
    let started = Instant::now();
    let mut child = cmd.spawn().expect("spawn the shell");
    let mut input = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    Running {
        child,
        started,
        out: thread::spawn(move || {
            let mut v = Vec::new();
            let _ = so.read_to_end(&mut v);
            v
        }),
        err: thread::spawn(move || {
            let mut v = Vec::new();
            let _ = se.read_to_end(&mut v);
            v
        }),
    }
}

impl Running {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn finish(mut self) -> Done {
        let status = loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                break st;
            }
            if self.started.elapsed() > RUN_LIMIT {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("wrapper still running after {RUN_LIMIT:?}");
            }
            thread::sleep(Duration::from_millis(10));
        };
        let exited = Instant::now();
        let elapsed = exited - self.started;
        let stdout = self.out.join().unwrap();
        let stderr = String::from_utf8_lossy(&self.err.join().unwrap()).into_owned();
        Done {
            status,
            exited,
            stdout,
            stderr,
            elapsed,
        }
    }
}

pub fn run(sh: &Shell, script: &str, path: &Path, task: &[OsString]) -> Done {
    spawn(sh, script, path, task, b"").finish()
}

pub fn args(list: &[&str]) -> Vec<OsString> {
    list.iter().map(OsString::from).collect()
}

/// A task that runs `code` in the host's sh, with `$1...` = `rest`.
pub fn sh_task(code: &str, rest: &[&str]) -> Vec<OsString> {
    let mut v: Vec<OsString> = vec![host_sh().into(), "-c".into(), code.into(), "task".into()];
    v.extend(rest.iter().map(OsString::from));
    v
}

pub fn send_signal(pid: u32, sig: &str) {
    let ok = Command::new(host_sh())
        .args(["-c", &format!("kill -s {sig} {pid}")])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -s {sig} {pid}");
}

/// Polls until `cond` holds; false after `limit`.
pub fn eventually(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if cond() {
            return true;
        }
        thread::sleep(Duration::from_millis(10));
    }
    cond()
}

// ---------------------------------------------------------------------------------------
// What the task gets

/// Names the wrapper script uses for its own functions, or that are shell builtins: a task
/// named so must still run the program of that name on PATH, as the kubelet would.
pub const SHELL_NAMES: [&str; 7] = ["ask", "say", "echo", "true", "kill", "exit", "printf"];

/// Writes an executable `dir/name` that prints `program NAME ARGS...` and exits `code`.
pub fn program(dir: &Path, name: &str, code: i32) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    let text = format!(
        "#!{}\nprintf 'program %s' {name}\nprintf ' %s' \"$@\"\nprintf '\\n'\nexit {code}\n",
        host_sh().display()
    );
    std::fs::write(&p, text).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// An environment for the wrapper: PATH plus every one-letter variable, each with a value
/// that quoting could get wrong (one is set but empty).
pub fn letter_env(path: &Path) -> Vec<(String, String)> {
    let mut env = vec![("PATH".to_string(), path.display().to_string())];
    for c in ('a'..='z').chain('A'..='Z') {
        let value = if c == 'g' {
            String::new()
        } else {
            format!("{c} it's \"odd\" $x `y` \\ =1\nsecond line")
        };
        env.push((c.to_string(), value));
    }
    env
}

/// Variables a shell itself adds to the environment of what it runs; not the wrapper's.
pub const SHELL_ADDED: [&str; 4] = ["PWD", "OLDPWD", "SHLVL", "_"];

/// The environment `env -0` printed, without [`SHELL_ADDED`].
pub fn printed_env(stdout: &[u8]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = stdout
        .split(|&b| b == 0)
        .filter(|e| !e.is_empty())
        .map(|e| {
            let e = String::from_utf8_lossy(e);
            let (k, v) = e.split_once('=').unwrap_or((&e, ""));
            (k.to_string(), v.to_string())
        })
        .filter(|(k, _)| !SHELL_ADDED.contains(&k.as_str()))
        .collect();
    out.sort();
    out
}

/// A task that prints its environment, NUL-separated.
pub fn env_task() -> Vec<OsString> {
    let env = common::which("env").expect("env on the host");
    vec![env.into(), "-0".into()]
}
