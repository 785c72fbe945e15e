//! Hand-written fixes: a container whose own `command`/`args` already stop the proxy.
//!
//! meshjob looks at the container's argv as text (a shell script is usually one item of it)
//! and recognises the ways people stop a sidecar by hand. It never edits them.

use crate::mesh::{Mesh, StopEndpoint};

/// How a container already stops the proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// A POST, with any client, to an endpoint that stops a mesh's proxy (`/quitquitquit`
    /// on pilot-agent's status port or Envoy's admin port, Linkerd's `/shutdown`), or to the
    /// port the pod's annotation moves it to.
    Post(StopEndpoint),
    /// `pilot-agent request POST quitquitquit` (only in the proxy image).
    PilotAgentRequest,
    /// `pkill`/`killall`/`kill` of envoy or pilot-agent: needs `shareProcessNamespace: true`.
    Kill,
    /// `linkerd-await --shutdown` (or `-S`).
    LinkerdAwait,
    /// `scuttle` as the program: stops the proxy only when `ENVOY_ADMIN_API` is set.
    Scuttle,
}

impl Stop {
    /// A few words for findings: "curl/wget ... POST /quitquitquit" and so on.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Stop::Post(e) => e.describe,
            Stop::PilotAgentRequest => "`pilot-agent request POST quitquitquit`",
            Stop::Kill => "a kill of envoy or pilot-agent",
            Stop::LinkerdAwait => "`linkerd-await --shutdown`",
            Stop::Scuttle => "scuttle",
        }
    }
}

/// What the argv says about stopping the proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Found {
    /// It stops the proxy itself.
    Stops(Stop),
    /// It calls `/quitquitquit` on a proxy port, but not with POST: pilot-agent and Envoy
    /// answer 405 and keep running.
    QuitNotPost,
    Nothing,
}

/// What stops a proxy: the endpoints that stop it on a POST, and its processes.
#[derive(Clone, Debug, Default)]
pub(crate) struct Targets {
    pub endpoints: Vec<StopEndpoint>,
    pub processes: Vec<&'static str>,
}

impl Targets {
    /// Every mesh's endpoints and processes, and the endpoints of the pod's own mesh
    /// (`mesh`) again at `moved_port`, where the pod's annotation puts them.
    pub(crate) fn of(mesh: &Mesh, moved_port: Option<u16>) -> Targets {
        let mut t = Targets::default();
        for m in crate::mesh::ALL.iter() {
            t.endpoints.extend_from_slice(m.stop_endpoints);
            t.processes.extend_from_slice(m.proxy_processes);
        }
        if let Some(port) = moved_port {
            let moved = (mesh.stop_endpoints.iter()).map(|e| StopEndpoint { port, ..*e });
            t.endpoints.extend(moved);
        }
        t
    }

    /// An endpoint at `path` that this port may be, for a statement that calls it.
    fn endpoint(&self, path: &str, port: Option<Port>) -> Option<StopEndpoint> {
        self.endpoints.iter().copied().find(|e| {
            e.path == path
                && match port {
                    Some(Port::Literal(n)) => n == e.port,
                    Some(Port::Variable) => e.distinctive,
                    None => false,
                }
        })
    }
}

/// Looks at a container's argv (`command` followed by `args`) for what stops a proxy
/// (`targets`).
pub(crate) fn find(argv: &[&str], targets: &Targets) -> Found {
    if !may_stop(argv, targets) {
        return Found::Nothing;
    }
    let mut quit_not_post = false;
    if argv.first().is_some_and(|p| base(p) == "scuttle") {
        return Found::Stops(Stop::Scuttle);
    }
    // Each item on its own (a script is one item), then the argv as one line (a program
    // and its flags are items of their own).
    let joined = argv.join(" ");
    for item in argv.iter().copied().chain([joined.as_str()]) {
        for stmt in statements(item) {
            let words = words(stmt);
            if let Some(stop) = stop_in(stmt, &words, targets) {
                return Found::Stops(stop);
            }
            if calls_stop(stmt, targets).is_some_and(|e| e.distinctive) {
                quit_not_post = true;
            }
        }
    }
    if quit_not_post {
        Found::QuitNotPost
    } else {
        Found::Nothing
    }
}

/// Whether an item of `argv` spells a word that each way of stopping the proxy needs: the
/// program (`scuttle`, `pilot-agent`, `linkerd-await`), a kill (`pkill`, `killall`, `kill`),
/// or an endpoint's path. Most containers spell none, and are settled without splitting
/// their scripts into statements and words. (The argv joined by spaces holds no other
/// match: none of these words holds a space.)
fn may_stop(argv: &[&str], targets: &Targets) -> bool {
    const PROGRAMS: [&str; 4] = ["scuttle", "kill", "pilot-agent", "linkerd-await"];
    let paths = targets.endpoints.iter().map(|e| e.path);
    let mut words = PROGRAMS.into_iter().chain(paths);
    words.any(|w| argv.iter().any(|item| item.contains(w)))
}

fn stop_in(stmt: &str, words: &[&str], targets: &Targets) -> Option<Stop> {
    let first = words
        .iter()
        .map(|w| base(w))
        .find(|w| !matches!(*w, "exec" | "sudo" | "command" | "then" | "do" | "else"));
    match first {
        Some("scuttle") => return Some(Stop::Scuttle),
        Some("pkill" | "killall" | "kill")
            if words
                .iter()
                .any(|w| targets.processes.iter().any(|p| w.contains(p))) =>
        {
            return Some(Stop::Kill);
        }
        _ => {}
    }
    if words.iter().any(|w| base(w) == "pilot-agent")
        && words.contains(&"request")
        && words.contains(&"POST")
        && words
            .iter()
            .any(|w| w.trim_start_matches('/') == "quitquitquit")
    {
        return Some(Stop::PilotAgentRequest);
    }
    // Its own flags come before `--` or the first word that is not a flag.
    let mut after_await = words
        .iter()
        .skip_while(|w| base(w) != "linkerd-await")
        .skip(1);
    if after_await
        .by_ref()
        .take_while(|w| w.starts_with('-') && **w != "--")
        .any(|w| is_await_shutdown(w))
    {
        return Some(Stop::LinkerdAwait);
    }
    let endpoint = calls_stop(stmt, targets)?;
    is_post(stmt, words).then_some(Stop::Post(endpoint))
}

fn is_await_shutdown(w: &str) -> bool {
    w == "--shutdown" || (w.starts_with('-') && !w.starts_with("--") && w[1..].contains('S'))
}

/// The stop endpoint `stmt` calls: its path right after its port (or, for a path no other
/// program uses, a port written as a variable).
fn calls_stop(stmt: &str, targets: &Targets) -> Option<StopEndpoint> {
    let mut found = None;
    for e in &targets.endpoints {
        if calls(stmt, e.path, |p| targets.endpoint(e.path, p).is_some()) {
            found = Some(*e);
            break;
        }
    }
    let e = found?;
    // The endpoint the port names, when several share a path.
    indices(stmt, e.path).find_map(|i| targets.endpoint(e.path, port_before(&stmt[..i])))
}

/// Where `needle` starts in `hay`, left to right, without overlaps. The statements are short
/// and most hold no path at all: a one-shot search per match costs less here than setting up
/// `str::match_indices`'s searcher for every statement and endpoint.
fn indices<'h>(hay: &'h str, needle: &'h str) -> impl Iterator<Item = usize> + 'h {
    let mut from = 0;
    std::iter::from_fn(move || {
        let i = from + memchr::memmem::find(hay.as_bytes().get(from..)?, needle.as_bytes())?;
        from = i + needle.len().max(1);
        Some(i)
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Port {
    Literal(u16),
    /// `:$PORT/`, `:${PORT}/`: the script's own variable; meshjob cannot tell its value.
    Variable,
}

/// Whether `stmt` has `path` right after a `:port` that `ok` accepts. A path with no port
/// before it goes to port 80, which is not the proxy.
fn calls(stmt: &str, path: &str, ok: impl Fn(Option<Port>) -> bool) -> bool {
    indices(stmt, path).any(|i| {
        let after = &stmt[i + path.len()..];
        if after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return false;
        }
        ok(port_before(&stmt[..i]))
    })
}

fn port_before(head: &str) -> Option<Port> {
    let digits = head.bytes().rev().take_while(u8::is_ascii_digit).count();
    let (rest, num) = head.split_at(head.len() - digits);
    if digits > 0 {
        return rest
            .ends_with(':')
            .then(|| num.parse().ok().map(Port::Literal))
            .flatten();
    }
    // `:$PORT`, `:${PORT}`, `:$(PORT)` (the Kubernetes form) or a template `:{port}`.
    let var_end = rest.trim_end_matches(|c: char| c.is_ascii_alphanumeric() || c == '_');
    let var_end = var_end
        .strip_suffix('{')
        .or_else(|| var_end.strip_suffix('('))
        .unwrap_or(var_end);
    let head = if rest.ends_with(['}', ')']) {
        let open = rest.rfind(['{', '(']);
        open.map(|i| &rest[..i]).unwrap_or(rest)
    } else {
        var_end
    };
    let head = head.strip_suffix('$').unwrap_or(head);
    (head.ends_with(':') && head.len() < rest.len()).then_some(Port::Variable)
}

/// Whether a statement sends a POST: an explicit method (`-X POST`, `--request POST`,
/// `--method=POST`, `method="POST"`, `http POST`), a client that posts (`requests.post(`),
/// or a flag that sends a body and so implies POST (curl `-d`, `--data*`, `-F`, `--form`,
/// `--json`; wget `--post-data`, `--post-file`).
fn is_post(stmt: &str, words: &[&str]) -> bool {
    stmt.contains("POST")
        || stmt.contains(".post(")
        || words.iter().any(|w| {
            *w == "-d"
                || *w == "-F"
                || w.starts_with("-d'")
                || w.starts_with("-d\"")
                || ["--data", "--post-data", "--post-file", "--form", "--json"]
                    .iter()
                    .any(|f| w.starts_with(f))
        })
}

/// Splits a script into simple statements: at newlines (not after a backslash), `;`, `&&`
/// and `||`. Good enough to keep a client and its URL together; not a shell parser.
fn statements(script: &str) -> Vec<&str> {
    let bytes = script.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let cut = match bytes[i] {
            b'\n' if i == 0 || bytes[i - 1] != b'\\' => 1,
            b';' => 1,
            b'&' | b'|' if bytes.get(i + 1) == Some(&bytes[i]) => 2,
            _ => 0,
        };
        if cut > 0 {
            out.push(&script[start..i]);
            start = i + cut;
            i += cut;
        } else {
            i += 1;
        }
    }
    out.push(&script[start..]);
    out
}

/// Words of a statement, with shell quotes and brackets as separators.
fn words(stmt: &str) -> Vec<&str> {
    stmt.split(|c: char| c.is_whitespace() || "\"'`()[],\\".contains(c))
        .filter(|w| !w.is_empty())
        .collect()
}

/// The last path component of a program name: `/usr/local/bin/scuttle` -> `scuttle`.
fn base(w: &str) -> &str {
    w.rsplit('/').next().unwrap_or(w)
}

#[cfg(test)]
mod tests {
    use super::{Found, Stop, StopEndpoint, Targets};
    use crate::mesh::{istio, linkerd};

    #[test]
    fn indices_are_every_match_left_to_right_as_match_indices_gives_them() {
        for (hay, needle) in [
            (
                "curl :15020/quitquitquit; wget :15000/quitquitquit",
                "/quitquitquit",
            ),
            ("aaaa", "aa"),
            ("", "/x"),
            ("/x", "/x"),
            ("é/shutdown é/shutdown", "/shutdown"),
        ] {
            let want: Vec<usize> = hay.match_indices(needle).map(|(i, _)| i).collect();
            assert_eq!(
                super::indices(hay, needle).collect::<Vec<_>>(),
                want,
                "{hay:?}"
            );
        }
    }

    /// What `find` says, with the port of an endpoint left out (`posts` names none).
    fn find(argv: &[&str], moved: Option<u16>) -> Found {
        match super::find(argv, &Targets::of(&istio::MESH, moved)) {
            Found::Stops(Stop::Post(e)) => Found::Stops(Stop::Post(StopEndpoint { port: 0, ..e })),
            other => other,
        }
    }

    fn sh(script: &str) -> Found {
        find(&["/bin/sh", "-c", script], None)
    }

    fn posts(what: &str) -> Found {
        let mut all = istio::MESH
            .stop_endpoints
            .iter()
            .chain(linkerd::MESH.stop_endpoints);
        let e = all.find(|e| e.describe == what);
        Found::Stops(Stop::Post(StopEndpoint {
            port: 0,
            ..*e.unwrap()
        }))
    }

    #[test]
    fn quitquitquit_posts_with_any_client() {
        for s in [
            "./run; curl -fsS -X POST http://localhost:15020/quitquitquit",
            "./run && curl -XPOST 127.0.0.1:15020/quitquitquit",
            "./run; curl -s --request POST localhost:15000/quitquitquit",
            "./run; curl -s -d \"\" http://localhost:15020/quitquitquit",
            "./run; curl -sf --data '' http://localhost:15020/quitquitquit || true",
            "./run.sh; wget -q -O- --post-data= http://127.0.0.1:15020/quitquitquit",
            "wget --method=POST -O /dev/null http://localhost:15020/quitquitquit",
            "./run\ncurl -X POST \\\n  http://localhost:15020/quitquitquit\n",
            "urllib.request.urlopen(urllib.request.Request(\"http://localhost:15020/quitquitquit\", method=\"POST\"))",
            "requests.post('http://localhost:15020/quitquitquit')",
            "http POST :15020/quitquitquit",
            "curl -X POST http://localhost:$STATUS_PORT/quitquitquit",
            "curl -X POST http://localhost:${STATUS_PORT}/quitquitquit",
            "curl -X POST http://localhost:$(STATUS_PORT)/quitquitquit",
        ] {
            assert_eq!(sh(s), posts("a POST to /quitquitquit"), "{s}");
        }
    }

    #[test]
    fn quitquitquit_elsewhere_is_not_a_stop() {
        for s in [
            "echo see quitquitquit docs; ./task",
            "curl -X POST http://localhost:8080/quitquitquit",
            "curl -X POST http://localhost/quitquitquit",
            "curl -X POST http://localhost:15020/quitquitquitter",
            "./task --quitquitquit",
        ] {
            assert_eq!(sh(s), Found::Nothing, "{s}");
        }
    }

    #[test]
    fn status_port_annotation_counts() {
        let s = "./t; curl -X POST localhost:15030/quitquitquit";
        assert_eq!(
            find(&["sh", "-c", s], Some(15030)),
            posts("a POST to /quitquitquit")
        );
        assert_eq!(find(&["sh", "-c", s], None), Found::Nothing);
    }

    #[test]
    fn a_get_is_not_a_stop() {
        assert_eq!(
            sh("./task; curl -s http://localhost:15020/quitquitquit"),
            Found::QuitNotPost
        );
        assert_eq!(
            sh("./task; wget -qO- localhost:15000/quitquitquit"),
            Found::QuitNotPost
        );
        // A POST elsewhere in the script does not make the quit a POST.
        assert_eq!(
            sh("curl -X POST http://api/x\ncurl http://localhost:15020/quitquitquit"),
            Found::QuitNotPost
        );
    }

    #[test]
    fn pilot_agent_request() {
        assert_eq!(
            sh("./t; pilot-agent request POST quitquitquit"),
            Found::Stops(Stop::PilotAgentRequest)
        );
        assert_eq!(
            find(
                &[
                    "/usr/local/bin/pilot-agent",
                    "request",
                    "POST",
                    "quitquitquit"
                ],
                None
            ),
            Found::Stops(Stop::PilotAgentRequest)
        );
    }

    #[test]
    fn kills() {
        for s in [
            "./t; pkill -f envoy",
            "./t; pkill pilot-agent",
            "./t && killall envoy",
            "./t; kill -TERM $(pidof envoy)",
            "./t; sudo pkill -INT pilot-agent",
        ] {
            assert_eq!(sh(s), Found::Stops(Stop::Kill), "{s}");
        }
        assert_eq!(sh("./t; pkill -f myapp"), Found::Nothing);
        assert_eq!(sh("echo envoy; kill 1"), Found::Nothing);
    }

    #[test]
    fn linkerd() {
        assert_eq!(
            sh("./t; curl -X POST http://localhost:4191/shutdown"),
            posts("a POST to Linkerd's /shutdown")
        );
        assert_eq!(
            sh("./t; curl http://localhost:4191/shutdown"),
            Found::Nothing
        );
        assert_eq!(
            sh("./t; curl -X POST http://localhost:8080/shutdown"),
            Found::Nothing
        );
        assert_eq!(
            find(&["linkerd-await", "--shutdown", "--", "./task"], None),
            Found::Stops(Stop::LinkerdAwait)
        );
        assert_eq!(
            find(&["/usr/bin/linkerd-await", "-S", "--", "./task"], None),
            Found::Stops(Stop::LinkerdAwait)
        );
        assert_eq!(
            find(&["linkerd-await", "--", "./task", "--shutdown"], None),
            Found::Nothing
        );
        assert_eq!(
            find(&["linkerd-await", "--", "./task"], None),
            Found::Nothing
        );
        assert_eq!(
            sh("linkerd-await --shutdown -- ./task"),
            Found::Stops(Stop::LinkerdAwait)
        );
    }

    #[test]
    fn scuttle() {
        assert_eq!(
            find(&["scuttle", "python", "job.py"], None),
            Found::Stops(Stop::Scuttle)
        );
        assert_eq!(
            find(&["/usr/local/bin/scuttle", "python", "job.py"], None),
            Found::Stops(Stop::Scuttle)
        );
        assert_eq!(sh("exec scuttle ./job"), Found::Stops(Stop::Scuttle));
        assert_eq!(find(&["python", "scuttle.py"], None), Found::Nothing);
    }
}
