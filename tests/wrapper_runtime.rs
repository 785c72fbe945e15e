//! Runs generated wrapper scripts under real shells (dash, bash, `bash --posix`, busybox sh)
//! against a loopback HTTP listener that stands in for the proxy's quit endpoint.
//!
//! Every wrapper runs with a PATH made of symlinks to exactly the tools a test allows, so
//! the HTTP client the script picks is known. Shells and clients are required tools (skipped
//! loudly, or failed under MESHJOB_REQUIRE_TOOLS).

mod common;
#[path = "wrapper/harness.rs"]
mod harness;

use harness::*;

use meshjob::script::{Endpoint as Url, Peers, ReadyWait, ScriptOptions, render, v2};
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------
// The stand-in endpoint

#[derive(Debug, Clone)]
struct Request {
    method: String,
    path: String,
    /// "HTTP/1.1" from the request line.
    version: String,
    user_agent: Option<String>,
    /// Every header, name in lower case, in the order sent.
    headers: Vec<(String, String)>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A loopback HTTP listener that records each request and answers `200 OK` (or the
/// status it was started with, for the quit). GET `/healthz/ready` is answered 503 for the
/// first `not_ready_for` requests.
struct Endpoint {
    port: u16,
    log: Arc<Mutex<Vec<Request>>>,
}

impl Endpoint {
    fn start() -> Endpoint {
        Endpoint::start_ready_after(0)
    }

    fn start_ready_after(not_ready_for: usize) -> Endpoint {
        Endpoint::start_with(not_ready_for, "200 OK")
    }

    /// Answers every quit with `status`, e.g. "426 Upgrade Required".
    fn start_answering(status: &'static str) -> Endpoint {
        Endpoint::start_with(0, status)
    }

    fn start_with(not_ready_for: usize, quit_status: &'static str) -> Endpoint {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let port = listener.local_addr().unwrap().port();
        let log = Arc::new(Mutex::new(Vec::new()));
        let shared = Arc::clone(&log);
        thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let log = Arc::clone(&shared);
                thread::spawn(move || serve(conn, &log, not_ready_for, quit_status));
            }
        });
        Endpoint { port, log }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/quitquitquit", self.port)
    }

    fn requests(&self) -> Vec<Request> {
        self.log.lock().unwrap().clone()
    }

    fn quits(&self) -> Vec<Request> {
        self.requests()
            .into_iter()
            .filter(|r| r.path == "/quitquitquit")
            .collect()
    }
}

fn serve(
    conn: TcpStream,
    log: &Mutex<Vec<Request>>,
    not_ready_for: usize,
    quit_status: &'static str,
) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(5)));
    let mut reader = BufReader::new(&conn);
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_string();
    let path = parts.next().unwrap_or_default().to_string();
    let version = parts.next().unwrap_or_default().to_string();
    let mut user_agent = None;
    let mut headers = Vec::new();
    let mut length = 0usize;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 {
            break;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((name, value)) = h.split_once(':') {
            let value = value.trim();
            headers.push((name.to_ascii_lowercase(), value.to_string()));
            if name.eq_ignore_ascii_case("user-agent") {
                user_agent = Some(value.to_string());
            } else if name.eq_ignore_ascii_case("content-length") {
                length = value.parse().unwrap_or(0);
            }
        }
    }
    let mut body = vec![0; length.min(1 << 16)];
    let _ = reader.read_exact(&mut body);
    let status = {
        let mut log = log.lock().unwrap();
        let gets_so_far = log.iter().filter(|r| r.path == "/healthz/ready").count();
        let status = if path == "/healthz/ready" && gets_so_far < not_ready_for {
            "503 Service Unavailable"
        } else if path == "/quitquitquit" {
            quit_status
        } else {
            "200 OK"
        };
        log.push(Request {
            method,
            path,
            version,
            user_agent,
            headers,
        });
        status
    };
    let reply = format!("HTTP/1.1 {status}\r\nContent-Length: 2\r\nConnection: close\r\n\r\nOK");
    let mut conn = conn;
    let _ = conn.write_all(reply.as_bytes());
    let _ = conn.shutdown(std::net::Shutdown::Both);
}

/// A port on 127.0.0.1 where nothing listens. It lies below the kernel's range for
/// ephemeral ports, so no listener of another test (all bind port 0) can take it later.
fn closed_port() -> u16 {
    static NEXT: std::sync::atomic::AtomicU16 = std::sync::atomic::AtomicU16::new(0);
    let range =
        std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").unwrap_or_default();
    let low: u16 = range
        .split_whitespace()
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or(32768);
    let span = low.saturating_sub(10_000).max(1);
    let start = 10_000 + (std::process::id() % u32::from(span)) as u16;
    for _ in 0..span {
        let step = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let port = 10_000 + (start - 10_000 + step) % span;
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        let refused = matches!(
            TcpStream::connect_timeout(&addr, Duration::from_secs(1)),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused
        );
        if refused {
            return port;
        }
    }
    panic!("no closed port below {low} on 127.0.0.1");
}

fn assert_one_quit(ep: &Endpoint, what: &str) {
    let quits = ep.quits();
    assert_eq!(quits.len(), 1, "{what}: quits {quits:?}");
    assert_eq!(quits[0].method, "POST", "{what}");
}

// ---------------------------------------------------------------------------------------
// Exit codes

#[test]
fn exit_codes_pass_through_and_the_proxy_is_stopped() {
    for_each_shell(|sh| {
        let tools = tool_dir(&[Client::Curl])
            .or_else(|| tool_dir(&[Client::Bash]))
            .unwrap();
        let not_exec = tools.path().join("not-executable");
        std::fs::write(&not_exec, "#!/bin/sh\nexit 0\n").unwrap();
        let cases: Vec<(Vec<OsString>, i32)> = vec![
            (sh_task("exit 0", &[]), 0),
            (sh_task("exit 1", &[]), 1),
            (sh_task("exit 42", &[]), 42),
            (sh_task("exit 255", &[]), 255),
            (args(&["meshjob-no-such-command"]), 127),
            (vec![not_exec.clone().into()], 126),
        ];
        for (task, want) in cases {
            let ep = Endpoint::start();
            let done = run(sh, &render(&options(&ep.url())), tools.path(), &task);
            let what = format!("{}: {task:?}", sh.name);
            assert_eq!(done.code(), want, "{what}; stderr {}", done.stderr);
            assert_one_quit(&ep, &what);
        }
    });
}

#[test]
fn a_task_killed_by_sigkill_gives_137() {
    for_each_shell(|sh| {
        let tools = tool_dir(&[Client::Bash]).unwrap();
        let ep = Endpoint::start();
        // The helper shell kills itself: `$$` is fine here, it is not in the wrapper.
        let task = sh_task("kill -9 $$", &[]);
        let done = run(sh, &render(&options(&ep.url())), tools.path(), &task);
        assert_eq!(done.code(), 137, "{}: {}", sh.name, done.stderr);
        assert_one_quit(&ep, sh.name);
    });
}

// ---------------------------------------------------------------------------------------
// Signals

/// Starts a wrapper whose task writes `started` and then sleeps; returns once it started.
fn start_sleeping_task(sh: &Shell, script: &str, tools: &Path, task_code: &str) -> Running {
    let work = tools.join("started");
    let task = sh_task(task_code, &[work.to_str().unwrap()]);
    let running = spawn(sh, script, tools, &task, b"");
    assert!(
        eventually(Duration::from_secs(5), || work.exists()),
        "{}: the task never started",
        sh.name
    );
    running
}

#[test]
fn sigterm_reaches_the_task_and_the_wrapper_exits_143() {
    for_each_shell(|sh| {
        let tools = tool_dir(&[Client::Curl])
            .or_else(|| tool_dir(&[Client::Bash]))
            .unwrap();
        let ep = Endpoint::start();
        let got = tools.path().join("got-term");
        let code = format!(
            "trap 'echo term >{}; exit 143' TERM; : >\"$1\"; while :; do sleep 1 <&- >&- 2>&- & wait $!; done",
            got.display()
        );
        let running = start_sleeping_task(sh, &render(&options(&ep.url())), tools.path(), &code);
        let sent = Instant::now();
        send_signal(running.pid(), "TERM");
        let done = running.finish();
        assert_eq!(done.code(), 143, "{}: {}", sh.name, done.stderr);
        // Quickly, not after a grace period: about 0.1s on an idle host.
        let took = done.exited - sent;
        assert!(took < Duration::from_secs(5), "{}: {took:?}", sh.name);
        assert!(got.exists(), "{}: the task did not get SIGTERM", sh.name);
        assert_one_quit(&ep, sh.name);
    });
}

#[test]
fn sigterm_stops_a_plain_sleep_quickly() {
    for_each_shell(|sh| {
        let tools = tool_dir(&[Client::Bash]).unwrap();
        let ep = Endpoint::start();
        let code = ": >\"$1\"; exec sleep 30";
        let running = start_sleeping_task(sh, &render(&options(&ep.url())), tools.path(), code);
        let sent = Instant::now();
        send_signal(running.pid(), "TERM");
        let done = running.finish();
        assert_eq!(done.code(), 143, "{}: {}", sh.name, done.stderr);
        // Quickly, not after a grace period: about 0.1s on an idle host.
        let took = done.exited - sent;
        assert!(took < Duration::from_secs(5), "{}: {took:?}", sh.name);
        assert_one_quit(&ep, sh.name);
    });
}

#[test]
fn sigint_is_passed_on_as_sigterm() {
    for_each_shell(|sh| {
        let tools = tool_dir(&[Client::Bash]).unwrap();
        let ep = Endpoint::start();
        let code = ": >\"$1\"; exec sleep 30";
        let running = start_sleeping_task(sh, &render(&options(&ep.url())), tools.path(), code);
        send_signal(running.pid(), "INT");
        let done = running.finish();
        assert_eq!(done.code(), 143, "{}: {}", sh.name, done.stderr);
        // Well before the task's 30 s sleep would end, with room for a loaded machine.
        assert!(done.elapsed < Duration::from_secs(20), "{}", sh.name);
        assert_one_quit(&ep, sh.name);
    });
}

#[test]
fn a_task_that_handles_sigterm_keeps_its_own_exit_code() {
    for_each_shell(|sh| {
        let tools = tool_dir(&[Client::Bash]).unwrap();
        let ep = Endpoint::start();
        let code =
            "trap 'exit 7' TERM; : >\"$1\"; while :; do sleep 1 <&- >&- 2>&- & wait $!; done";
        let running = start_sleeping_task(sh, &render(&options(&ep.url())), tools.path(), code);
        send_signal(running.pid(), "TERM");
        let done = running.finish();
        assert_eq!(done.code(), 7, "{}: {}", sh.name, done.stderr);
        assert_one_quit(&ep, sh.name);
    });
}

// ---------------------------------------------------------------------------------------
// stdin, argv

#[test]
fn stdin_reaches_the_task() {
    for_each_shell(|sh| {
        let tools = tool_dir(&[Client::Bash]).unwrap();
        let ep = Endpoint::start();
        let script = render(&options(&ep.url()));
        let data = b"first line\nsecond \x01 line\n".repeat(5000);
        let done = spawn(sh, &script, tools.path(), &args(&["cat"]), &data).finish();
        assert_eq!(done.code(), 0, "{}: {}", sh.name, done.stderr);
        assert!(done.stdout == data, "{}: cat got other bytes", sh.name);

        let out = tools.path().join("read");
        let task = sh_task(
            "read -r line && printf '%s' \"$line\" >\"$1\"",
            &[out.to_str().unwrap()],
        );
        let done = spawn(sh, &script, tools.path(), &task, b"hello stdin\n").finish();
        assert_eq!(done.code(), 0, "{}: {}", sh.name, done.stderr);
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            "hello stdin",
            "{}",
            sh.name
        );
    });
}

#[test]
fn argv_arrives_byte_for_byte() {
    let awkward = [
        "plain",
        "with space",
        "  leading and trailing  ",
        "it's \"quoted\"",
        "$HOME $(id) ${PATH} $$ $1",
        "`echo backticks`",
        "*",
        "[a-z]?",
        "line one\nline two",
        "",
        "tab\there",
        "-n",
        "--",
        "back\\slash",
        "caf\u{e9} \u{1f600}",
    ];
    for_each_shell(|sh| {
        let tools = tool_dir(&[Client::Bash]).unwrap();
        let ep = Endpoint::start();
        let task = sh_task("printf '%s\\0' \"$@\"", &awkward);
        let done = run(sh, &render(&options(&ep.url())), tools.path(), &task);
        assert_eq!(done.code(), 0, "{}: {}", sh.name, done.stderr);
        let want: Vec<u8> = awkward
            .iter()
            .flat_map(|a| [a.as_bytes(), b"\0"].concat())
            .collect();
        assert_eq!(
            String::from_utf8_lossy(&done.stdout),
            String::from_utf8_lossy(&want),
            "{}",
            sh.name
        );
    });
}

/// The task is the program its argv names, found on PATH, as the kubelet runs it: never one
/// of the script's functions (`ask`, `say`) or a shell builtin (`echo` under dash prints
/// `-e`). Version 2 ran `"$@"` and got exactly that wrong; the same case shows it.
#[test]
fn the_task_is_the_program_on_path_never_a_function_or_builtin() {
    for_each_shell(|sh| {
        let tools = tool_dir(&[Client::Bash]).unwrap();
        for name in SHELL_NAMES {
            program(tools.path(), name, 23);
        }
        let check = |script_of: &dyn Fn(&str) -> String, fixed: bool| {
            for name in SHELL_NAMES {
                let ep = Endpoint::start();
                let done = run(
                    sh,
                    &script_of(&ep.url()),
                    tools.path(),
                    &args(&[name, "-e", "a\\tb"]),
                );
                let what = format!("{}: task {name}", sh.name);
                let ran = done.code() == 23
                    && done.stdout == format!("program {name} -e a\\tb\n").into_bytes();
                assert_eq!(
                    ran,
                    fixed,
                    "{what}: exit {}, stdout {:?}, stderr {}",
                    done.code(),
                    String::from_utf8_lossy(&done.stdout),
                    done.stderr
                );
                if fixed {
                    assert_one_quit(&ep, &what);
                }
            }
        };
        check(&|url| render(&options(url)), true);
        check(&|url| v2::render(&options(url)), false);

        // Not on PATH: 127, as the kubelet's start would fail, even for a name the script
        // defines.
        for name in ["ask", "say"] {
            std::fs::remove_file(tools.path().join(name)).unwrap();
            let ep = Endpoint::start();
            let done = run(
                sh,
                &render(&options(&ep.url())),
                tools.path(),
                &args(&[name]),
            );
            assert_eq!(done.code(), 127, "{}: {name}: {}", sh.name, done.stderr);
            assert_one_quit(&ep, sh.name);
        }
    });
}

/// The task gets the container's environment unchanged: a variable that the script also
/// uses (any one-letter name) keeps the value it came with, and none of the script's own
/// appear. Version 2 gave the task its own values for `q u t s e g T` and `k`.
#[test]
fn the_task_gets_the_containers_environment() {
    for_each_shell(|sh| {
        for wait in [false, true] {
            let tools = tool_dir(&[Client::Bash]).unwrap();
            let env = letter_env(tools.path());
            let mut want = env.clone();
            want.sort();
            let check = |render: fn(&ScriptOptions) -> String| {
                let ep = Endpoint::start();
                let mut opts = options(&ep.url());
                if wait {
                    opts.wait_for_proxy = wait_on(ep.port, 5);
                }
                let done = spawn_in(
                    sh,
                    &render(&opts),
                    tools.path(),
                    &env_task(),
                    b"",
                    Some(&env),
                )
                .finish();
                let what = format!("{}, waiting {wait}", sh.name);
                assert_eq!(done.code(), 0, "{what}: {}", done.stderr);
                assert!(done.stderr.is_empty(), "{what}: {}", done.stderr);
                assert_one_quit(&ep, &what);
                printed_env(&done.stdout)
            };
            assert_eq!(check(render), want, "{}, waiting {wait}", sh.name);
            assert_ne!(
                check(v2::render),
                want,
                "{}: version 2 leaked nothing?",
                sh.name
            );
        }
    });
}

// ---------------------------------------------------------------------------------------
// HTTP clients

#[test]
fn every_client_delivers_the_quit() {
    for_each_shell(|sh| {
        for client in ALL_CLIENTS {
            let Some(tools) = tool_dir(&[client]) else {
                continue;
            };
            let ep = Endpoint::start();
            let done = run(
                sh,
                &render(&options(&ep.url())),
                tools.path(),
                &sh_task("exit 5", &[]),
            );
            let what = format!("{} with {client:?}", sh.name);
            assert_eq!(done.code(), 5, "{what}: {}", done.stderr);
            assert!(done.stderr.is_empty(), "{what}: stderr {:?}", done.stderr);
            assert_one_quit(&ep, &what);
            // HTTP/1.1, as Envoy's admin requires, with an empty body and no keep-alive.
            let quit = &ep.quits()[0];
            assert_eq!(quit.version, "HTTP/1.1", "{what}");
            assert_eq!(quit.header("content-length"), Some("0"), "{what}: {quit:?}");
            assert_eq!(quit.header("connection"), Some("close"), "{what}: {quit:?}");
            assert!(quit.header("host").is_some(), "{what}: {quit:?}");
            let ua = quit.user_agent.clone().unwrap_or_default();
            match client {
                Client::Curl => assert!(ua.starts_with("curl/"), "{what}: {ua}"),
                Client::GnuWget | Client::BusyboxWget => {
                    assert!(ua.to_ascii_lowercase().starts_with("wget"), "{what}: {ua}")
                }
                _ => assert!(ua.is_empty(), "{what}: {ua}"),
            }
        }
    });
}

/// The quit endpoints of the holders meshjob knows (`src/mesh/holder.rs`): each gets a
/// loopback server of its own, on its own port.
const HOLDER_PATHS: [&str; 4] = [
    "/quitquitquit",
    "/agent/v1/quit",
    "/v1.0/shutdown",
    "/graceful_shutdown",
];

fn holder_url(ep: &Endpoint, path: &str) -> Url {
    meshjob::script::parse_quit_url(&format!("http://127.0.0.1:{}{path}", ep.port)).unwrap()
}

/// A pod with a mesh proxy and three injected agents: one wrapper calls each endpoint once,
/// with POST, in order, with every client, and exits with the task's code.
#[test]
fn every_holder_of_the_pod_is_stopped_once_and_the_code_kept() {
    for_each_shell(|sh| {
        for client in ALL_CLIENTS {
            let Some(tools) = tool_dir(&[client]) else {
                continue;
            };
            let eps: Vec<Endpoint> = HOLDER_PATHS.iter().map(|_| Endpoint::start()).collect();
            let mut opts = options(&eps[0].url());
            opts.also = (eps.iter().zip(HOLDER_PATHS).skip(1))
                .map(|(ep, path)| holder_url(ep, path))
                .collect();
            let script = render(&opts);
            let done = run(sh, &script, tools.path(), &sh_task("exit 7", &[]));
            let what = format!("{} with {client:?}", sh.name);
            assert_eq!(done.code(), 7, "{what}: {}", done.stderr);
            assert!(done.stderr.is_empty(), "{what}: stderr {:?}", done.stderr);
            for (ep, path) in eps.iter().zip(HOLDER_PATHS) {
                let reqs = ep.requests();
                assert_eq!(reqs.len(), 1, "{what}: {path}: {reqs:?}");
                assert_eq!(reqs[0].method, "POST", "{what}: {path}");
                assert_eq!(reqs[0].path, path, "{what}");
            }
        }
    });
}

/// Two holders, the first one down: the second is still called, one line on stderr names
/// the first, and the task's code is kept.
#[test]
fn a_holder_that_does_not_answer_does_not_keep_the_next_from_being_stopped() {
    for_each_shell(|sh| {
        let tools = tool_dir(&[Client::Curl])
            .or_else(|| tool_dir(&[Client::Bash]))
            .unwrap();
        let vault = Endpoint::start();
        let mut opts = options(&format!("http://127.0.0.1:{}/quitquitquit", closed_port()));
        opts.also = vec![holder_url(&vault, "/agent/v1/quit")];
        let done = run(sh, &render(&opts), tools.path(), &sh_task("exit 3", &[]));
        let what = sh.name.to_string();
        assert_eq!(done.code(), 3, "{what}: {}", done.stderr);
        assert_eq!(done.stderr.lines().count(), 1, "{what}: {:?}", done.stderr);
        assert!(
            done.stderr.contains("did not answer"),
            "{what}: {:?}",
            done.stderr
        );
        let reqs = vault.requests();
        assert_eq!(reqs.len(), 1, "{what}: {reqs:?}");
        assert_eq!(
            (reqs[0].method.as_str(), reqs[0].path.as_str()),
            ("POST", "/agent/v1/quit")
        );
    });
}

#[test]
fn without_curl_busybox_wget_is_used() {
    for_each_shell(|sh| {
        // bash is there too, but wget comes first.
        let Some(tools) = tool_dir(&[Client::BusyboxWget, Client::Bash]) else {
            return;
        };
        let ep = Endpoint::start();
        let done = run(
            sh,
            &render(&options(&ep.url())),
            tools.path(),
            &sh_task("exit 0", &[]),
        );
        assert_eq!(done.code(), 0, "{}: {}", sh.name, done.stderr);
        assert_one_quit(&ep, sh.name);
        let ua = ep.quits()[0].user_agent.clone().unwrap_or_default();
        assert!(
            ua.to_ascii_lowercase().starts_with("wget"),
            "{}: {ua}",
            sh.name
        );
    });
}

#[test]
fn without_curl_and_wget_bash_dev_tcp_is_used() {
    for_each_shell(|sh| {
        let tools = tool_dir(&[Client::Bash]).unwrap();
        let ep = Endpoint::start();
        let done = run(
            sh,
            &render(&options(&ep.url())),
            tools.path(),
            &sh_task("exit 3", &[]),
        );
        assert_eq!(done.code(), 3, "{}: {}", sh.name, done.stderr);
        assert_one_quit(&ep, sh.name);
        assert_eq!(ep.quits()[0].user_agent, None, "{}", sh.name);
    });
}

#[test]
fn without_any_client_one_line_on_stderr_and_the_code_is_kept() {
    for_each_shell(|sh| {
        let tools = tool_dir(&[]).unwrap();
        let ep = Endpoint::start();
        let done = run(
            sh,
            &render(&options(&ep.url())),
            tools.path(),
            &sh_task("exit 9", &[]),
        );
        assert_eq!(done.code(), 9, "{}", sh.name);
        assert_eq!(
            done.stderr.lines().count(),
            1,
            "{}: {:?}",
            sh.name,
            done.stderr
        );
        assert!(
            done.stderr.contains("cannot stop the sidecars"),
            "{}",
            sh.name
        );
        assert!(ep.requests().is_empty(), "{}", sh.name);
    });
}

/// An answer other than 2xx means the proxy did not stop: one line on stderr names it. A
/// 5xx is tried three times (a busy proxy may recover); a 4xx once (the same request would
/// get the same answer). The task's code is kept either way.
fn check_refusal(sh: &Shell, client: Client, status: &'static str, tries: usize) {
    let Some(tools) = tool_dir(&[client]) else {
        return;
    };
    let ep = Endpoint::start_answering(status);
    let done = run(
        sh,
        &render(&options(&ep.url())),
        tools.path(),
        &sh_task("exit 3", &[]),
    );
    let what = format!("{} with {client:?}, {status}", sh.name);
    assert_eq!(done.code(), 3, "{what}: {}", done.stderr);
    assert_eq!(ep.quits().len(), tries, "{what}");
    let code = &status[..3];
    assert_eq!(done.stderr.lines().count(), 1, "{what}: {:?}", done.stderr);
    assert!(
        done.stderr
            .contains(&format!("did not stop: {} answered HTTP {code}", ep.url())),
        "{what}: {}",
        done.stderr
    );
}

#[test]
fn a_refusal_is_reported_and_retried_only_when_that_can_help() {
    let answers = [
        ("426 Upgrade Required", 1),
        ("404 Not Found", 1),
        ("403 Forbidden", 1),
        ("405 Method Not Allowed", 1),
        ("503 Service Unavailable", 3),
        ("500 Internal Server Error", 3),
    ];
    for_each_shell(|sh| {
        thread::scope(|s| {
            for client in ALL_CLIENTS {
                for (status, tries) in answers {
                    s.spawn(move || check_refusal(sh, client, status, tries));
                }
            }
        });
    });
}

/// A wrapper whose quit endpoint is a closed port: the task's code stays, three tries are
/// made, and the run ends well within the bound. Each try is refused at once, so the run
/// takes the two 1s pauses plus the client's start-up; the upper limit leaves room for a
/// slow, busy host.
fn check_down_endpoint(sh: &Shell, client: Client) {
    let Some(tools) = tool_dir(&[client]) else {
        return;
    };
    let url = format!("http://127.0.0.1:{}/quitquitquit", closed_port());
    let done = run(
        sh,
        &render(&options(&url)),
        tools.path(),
        &sh_task("exit 4", &[]),
    );
    let what = format!("{} with {client:?}", sh.name);
    assert_eq!(done.code(), 4, "{what}: {}", done.stderr);
    assert!(
        done.elapsed < Duration::from_secs(10),
        "{what}: {:?}",
        done.elapsed
    );
    assert!(
        done.elapsed >= Duration::from_secs(2),
        "{what}: no retries?"
    );
    assert_eq!(done.stderr.lines().count(), 1, "{what}: {:?}", done.stderr);
    assert!(
        done.stderr.contains("did not answer"),
        "{what}: {}",
        done.stderr
    );
}

#[test]
fn a_down_endpoint_keeps_the_exit_code_and_time_is_bounded() {
    for_each_shell(|sh| check_down_endpoint(sh, Client::Bash));
}

#[test]
fn a_down_endpoint_is_given_up_on_by_every_client() {
    let Some(sh) = shells().into_iter().next() else {
        return;
    };
    thread::scope(|s| {
        for client in ALL_CLIENTS {
            let sh = &sh;
            s.spawn(move || check_down_endpoint(sh, client));
        }
    });
}

// ---------------------------------------------------------------------------------------
// restartPolicy OnFailure

#[test]
fn on_failure_policy_stops_the_proxy_only_after_success() {
    for_each_shell(|sh| {
        let tools = tool_dir(&[Client::Bash]).unwrap();
        for (code, want_quits) in [("exit 1", 0), ("exit 0", 1), ("kill -9 $$", 0)] {
            let ep = Endpoint::start();
            let mut opts = options(&ep.url());
            opts.stop_proxy_on_failure = false;
            let done = run(sh, &render(&opts), tools.path(), &sh_task(code, &[]));
            let what = format!("{}: {code}", sh.name);
            // (A shell reports "Killed" on stderr: that line is the shell's, not ours.)
            assert!(
                !done.stderr.contains("meshjob: the"),
                "{what}: {}",
                done.stderr
            );
            assert_eq!(ep.quits().len(), want_quits, "{what}");
        }
    });
}

// ---------------------------------------------------------------------------------------
// Several wrapped containers

fn peer_options(url: &str, dir: &Path, me: &str, stop_on_failure: bool) -> ScriptOptions {
    ScriptOptions {
        also: Vec::new(),
        stop_proxy_on_failure: stop_on_failure,
        peers: Some(Peers {
            dir: dir.to_str().unwrap().to_string(),
            me: me.to_string(),
            all: vec!["main".to_string(), "side-car_2".to_string()],
        }),
        ..options(url)
    }
}

/// A task that waits until the file `$1` exists, then exits `$2`.
const WAIT_FOR_GO: &str = "while [ ! -e \"$1\" ]; do sleep 0.02; done; exit \"$2\"";

#[test]
fn two_containers_stop_the_proxy_after_the_second_one() {
    for_each_shell(|sh| {
        let tools = tool_dir(&[Client::Bash]).unwrap();
        let peers = tempfile::tempdir().unwrap();
        let go = tools.path().join("go");
        let go = go.to_str().unwrap();
        let ep = Endpoint::start();
        let side = render(&peer_options(&ep.url(), peers.path(), "side-car_2", true));
        let main = render(&peer_options(&ep.url(), peers.path(), "main", true));

        let slow = spawn(
            sh,
            &side,
            tools.path(),
            &sh_task(WAIT_FOR_GO, &[go, "0"]),
            b"",
        );
        let done = run(sh, &main, tools.path(), &sh_task("exit 0", &[]));
        assert_eq!(done.code(), 0, "{}: {}", sh.name, done.stderr);
        assert!(
            ep.quits().is_empty(),
            "{}: quit before the second finished",
            sh.name
        );

        std::fs::write(go, "").unwrap();
        let done = slow.finish();
        assert_eq!(done.code(), 0, "{}: {}", sh.name, done.stderr);
        assert_one_quit(&ep, sh.name);
    });
}

#[test]
fn a_failed_container_counts_as_done_under_restart_policy_never() {
    for_each_shell(|sh| {
        let tools = tool_dir(&[Client::Bash]).unwrap();
        let peers = tempfile::tempdir().unwrap();
        let ep = Endpoint::start();
        let main = render(&peer_options(&ep.url(), peers.path(), "main", true));
        let side = render(&peer_options(&ep.url(), peers.path(), "side-car_2", true));
        assert_eq!(
            run(sh, &main, tools.path(), &sh_task("exit 2", &[])).code(),
            2
        );
        assert!(ep.quits().is_empty(), "{}", sh.name);
        assert_eq!(
            run(sh, &side, tools.path(), &sh_task("exit 0", &[])).code(),
            0
        );
        assert_one_quit(&ep, sh.name);
    });
}

#[test]
fn a_failed_container_is_not_done_under_restart_policy_on_failure() {
    for_each_shell(|sh| {
        let tools = tool_dir(&[Client::Bash]).unwrap();
        let peers = tempfile::tempdir().unwrap();
        let ep = Endpoint::start();
        let main = render(&peer_options(&ep.url(), peers.path(), "main", false));
        let side = render(&peer_options(&ep.url(), peers.path(), "side-car_2", false));
        // main fails (the kubelet would rerun it), side succeeds: the proxy must stay.
        assert_eq!(
            run(sh, &main, tools.path(), &sh_task("exit 2", &[])).code(),
            2
        );
        assert_eq!(
            run(sh, &side, tools.path(), &sh_task("exit 0", &[])).code(),
            0
        );
        assert!(ep.quits().is_empty(), "{}", sh.name);
        // The rerun of main succeeds: now both are done.
        assert_eq!(
            run(sh, &main, tools.path(), &sh_task("exit 0", &[])).code(),
            0
        );
        assert_one_quit(&ep, sh.name);
    });
}

#[test]
fn two_containers_finishing_together_stop_the_proxy_at_least_once() {
    for_each_shell(|sh| {
        let tools = tool_dir(&[Client::Bash]).unwrap();
        for round in 0..8 {
            let peers = tempfile::tempdir().unwrap();
            let go = peers.path().join("go");
            let go = go.to_str().unwrap();
            let ep = Endpoint::start();
            let a = render(&peer_options(&ep.url(), peers.path(), "main", true));
            let b = render(&peer_options(&ep.url(), peers.path(), "side-car_2", true));
            let ra = spawn(sh, &a, tools.path(), &sh_task(WAIT_FOR_GO, &[go, "0"]), b"");
            let rb = spawn(sh, &b, tools.path(), &sh_task(WAIT_FOR_GO, &[go, "1"]), b"");
            std::fs::write(go, "").unwrap();
            assert_eq!(ra.finish().code(), 0);
            assert_eq!(rb.finish().code(), 1);
            let n = ep.quits().len();
            assert!((1..=2).contains(&n), "{} round {round}: {n} quits", sh.name);
        }
    });
}

// ---------------------------------------------------------------------------------------
// Waiting for the proxy to be ready

/// Waits up to `seconds` for the readiness endpoint on `port` (the proxy's is 15021).
fn wait_on(port: u16, seconds: u32) -> Option<ReadyWait> {
    Some(ReadyWait {
        seconds,
        ready: Url {
            host: "127.0.0.1".into(),
            port,
            path: "/healthz/ready".into(),
        },
    })
}

#[test]
fn the_task_starts_after_the_proxy_is_ready() {
    for_each_shell(|sh| {
        let tools = tool_dir(&[Client::Bash]).unwrap();
        let ep = Endpoint::start_ready_after(2);
        let mut opts = options(&ep.url());
        opts.wait_for_proxy = wait_on(ep.port, 8);
        let script = render(&opts);
        let mark = tools.path().join("ran");
        let task = sh_task(": >\"$1\"", &[mark.to_str().unwrap()]);
        let done = run(sh, &script, tools.path(), &task);
        assert_eq!(done.code(), 0, "{}: {}", sh.name, done.stderr);
        assert!(done.stderr.is_empty(), "{}: {}", sh.name, done.stderr);
        assert!(mark.exists(), "{}", sh.name);
        let paths: Vec<_> = ep
            .requests()
            .into_iter()
            .map(|r| (r.method, r.path))
            .collect();
        // Polls until the third answer (the first 2xx), then the task, then the quit. (A
        // slow host may time out a poll and make one more.)
        let (last, polls) = paths.split_last().unwrap();
        assert_eq!(
            last,
            &("POST".into(), "/quitquitquit".into()),
            "{}",
            sh.name
        );
        assert!(polls.len() >= 3, "{}: {paths:?}", sh.name);
        for p in polls {
            assert_eq!(p, &("GET".into(), "/healthz/ready".into()), "{}", sh.name);
        }
    });
}

#[test]
fn a_proxy_that_never_gets_ready_is_given_up_on() {
    for_each_shell(|sh| {
        let tools = tool_dir(&[Client::Bash]).unwrap();
        let ep = Endpoint::start();
        let mut opts = options(&ep.url());
        opts.wait_for_proxy = wait_on(closed_port(), 2);
        let script = render(&opts);
        let done = run(sh, &script, tools.path(), &sh_task("exit 6", &[]));
        assert_eq!(done.code(), 6, "{}: {}", sh.name, done.stderr);
        assert!(
            done.stderr.contains("not ready after 2s"),
            "{}: {}",
            sh.name,
            done.stderr
        );
        assert!(
            done.elapsed >= Duration::from_secs(2),
            "{}: {:?}",
            sh.name,
            done.elapsed
        );
        assert!(
            done.elapsed < Duration::from_secs(9),
            "{}: {:?}",
            sh.name,
            done.elapsed
        );
        assert_one_quit(&ep, sh.name);
    });
}

#[test]
fn sigterm_while_waiting_for_the_proxy_skips_the_task() {
    for_each_shell(|sh| {
        let tools = tool_dir(&[Client::Bash]).unwrap();
        let ep = Endpoint::start_ready_after(usize::MAX);
        let mut opts = options(&ep.url());
        opts.wait_for_proxy = wait_on(ep.port, 10);
        let script = render(&opts);
        let mark = tools.path().join("ran");
        let task = sh_task(": >\"$1\"", &[mark.to_str().unwrap()]);
        let running = spawn(sh, &script, tools.path(), &task, b"");
        // The first poll shows that the trap is set.
        assert!(eventually(Duration::from_secs(5), || !ep
            .requests()
            .is_empty()));
        let sent = Instant::now();
        send_signal(running.pid(), "TERM");
        let done = running.finish();
        assert_eq!(done.code(), 143, "{}: {}", sh.name, done.stderr);
        // The trap runs once the current poll or pause (1s at most) is over.
        let took = done.exited - sent;
        assert!(took < Duration::from_secs(5), "{}: {took:?}", sh.name);
        assert!(!mark.exists(), "{}: the task ran", sh.name);
        assert_one_quit(&ep, sh.name);
    });
}

// ---------------------------------------------------------------------------------------
// shellcheck

#[test]
fn shellcheck_finds_nothing() {
    let Some(shellcheck) = common::require_tool("shellcheck", "lints the generated script") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for stop_proxy_on_failure in [true, false] {
        for with_peers in [false, true] {
            for wait in [None, Some(20)] {
                let mut opts = peer_options(
                    "http://localhost:15020/quitquitquit",
                    dir.path(),
                    "main",
                    stop_proxy_on_failure,
                );
                if !with_peers {
                    opts.peers = None;
                }
                opts.wait_for_proxy = wait.and_then(|s| wait_on(15021, s));
                if wait.is_some() {
                    opts.also = vec![
                        meshjob::script::parse_quit_url("http://127.0.0.1:8200/agent/v1/quit")
                            .unwrap(),
                    ];
                }
                let script = render(&opts);
                // SC2006 prefers `$(...)` to backticks; the wrapper must not contain `$(`,
                // which Kubernetes expands in command/args. SC2030/SC2031 say that the
                // task's subshell changes variables only for itself: that is its purpose
                // (it gives them back the values they came with, then execs the task).
                // SC2043 says the quit loop runs once: it runs once per holder of the pod,
                // and a pod with one holder has one.
                let mut child = Command::new(&shellcheck)
                    .args(["-s", "sh", "-e", "SC2006,SC2030,SC2031,SC2043", "-"])
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap();
                child
                    .stdin
                    .take()
                    .unwrap()
                    .write_all(script.as_bytes())
                    .unwrap();
                let out = child.wait_with_output().unwrap();
                assert!(
                    out.status.success() && out.stdout.is_empty(),
                    "shellcheck on {opts:?}:\n{}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// As PID 1, the way a container runs it

/// `unshare` arguments that start a command as PID 1 of a new PID namespace here, if any.
fn pid_namespace_prefix() -> Option<Vec<OsString>> {
    let unshare = common::which("unshare")?;
    let tries: [&[&str]; 2] = [
        &["--pid", "--fork"],
        &["--user", "--map-root-user", "--pid", "--fork"],
    ];
    tries.into_iter().find_map(|t| {
        let ok = Command::new(&unshare)
            .args(t)
            .arg("true")
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| {
            let mut v = vec![unshare.clone().into_os_string()];
            v.extend(t.iter().map(OsString::from));
            v
        })
    })
}

#[test]
fn as_pid_1_sigterm_still_stops_the_task() {
    let Some(prefix) = pid_namespace_prefix() else {
        eprintln!("note: cannot make a PID namespace here (unshare); the PID 1 case is left out");
        return;
    };
    for_each_shell(|sh| {
        let as_pid1 = Shell {
            name: sh.name,
            argv: prefix.iter().chain(&sh.argv).cloned().collect(),
        };
        let tools = tool_dir(&[Client::Bash]).unwrap();
        let ep = Endpoint::start();
        let code = ": >\"$1\"; exec sleep 30";
        let running =
            start_sleeping_task(&as_pid1, &render(&options(&ep.url())), tools.path(), code);
        // The wrapper is unshare's child; inside its namespace it is PID 1.
        let children = format!("/proc/{0}/task/{0}/children", running.pid());
        let wrapper: u32 = std::fs::read_to_string(&children)
            .unwrap()
            .split_whitespace()
            .next()
            .expect("unshare has a child")
            .parse()
            .unwrap();
        let status = std::fs::read_to_string(format!("/proc/{wrapper}/status")).unwrap();
        assert!(
            status
                .lines()
                .any(|l| l.starts_with("NSpid:") && l.ends_with("\t1")),
            "{}: not PID 1 in its namespace:\n{status}",
            sh.name
        );
        let sent = Instant::now();
        send_signal(wrapper, "TERM");
        let done = running.finish();
        assert_eq!(done.code(), 143, "{}: {}", sh.name, done.stderr);
        let took = done.exited - sent;
        assert!(took < Duration::from_secs(5), "{}: {took:?}", sh.name);
        assert_one_quit(&ep, sh.name);
    });
}
