//! The entrypoint wrapper script.
//!
//! meshjob moves a container's original argv into `args` and sets `command` to
//! `["/bin/sh", "-c", <script>, "meshjob"]`, so the shell sees `$0` = `meshjob` and `"$@"` =
//! the task's argv. The script runs the task, passes on SIGTERM/SIGINT, keeps the task's exit
//! code, and then asks the mesh proxy to quit (an HTTP/1.1 `POST`), so the pod can finish.
//! docs/wrapper.md explains the script line by line.
//!
//! The text must survive two outside rules, checked by the tests:
//! - Kubernetes expands `$(VAR)` in `command`/`args` and turns `$$` into `$`, so the script
//!   contains neither (no `$(...)` command substitution, no arithmetic expansion).
//! - It is embedded as a YAML literal block scalar: no tabs, no control characters, no
//!   whitespace-only lines, no trailing whitespace, and the first line is the marker comment.
//!
//! It is plain POSIX sh (dash, bash, `bash --posix`, busybox ash).

mod marker;
mod quote;
mod text;
pub mod v1;

pub use marker::{ArgvOrigin, Marker, Original, marker, marker_version, original_argv};

/// Bumped whenever the generated script changes behaviour, so that meshjob can tell an
/// up-to-date wrapper from one it should rewrite.
pub const WRAPPER_VERSION: u32 = 2;

/// First line of every script: "# meshjob-wrapper v<N>: ..." (some short human text after).
pub const MARKER_PREFIX: &str = "# meshjob-wrapper v";

/// The shell every wrapper command starts, and its `$0`: `[SHELL, -c, <script>, ARG0]`.
pub const SHELL: &str = "/bin/sh";
pub const ARG0: &str = "meshjob";

/// An HTTP endpoint on the proxy: `http://host:port/path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub host: String,
    pub port: u16,
    pub path: String,
}

/// Parses `http://host[:port]/path` (http only; default port 80; path default "/").
///
/// The host is a DNS name or an IPv4 address; the path may carry a query. Anything that
/// could not be baked safely into the script (spaces, quotes, control characters, ...) is
/// refused with a message that names the problem.
pub fn parse_quit_url(url: &str) -> Result<Endpoint, String> {
    let scheme_end = url
        .find("://")
        .ok_or_else(|| format!("quit URL {url:?} has no scheme: expected http://host:port/path"))?;
    let scheme = &url[..scheme_end];
    if !scheme.eq_ignore_ascii_case("http") {
        return Err(format!(
            "quit URL {url:?} uses scheme {scheme:?}: only http is supported \
             (the proxy's status port speaks plain HTTP on localhost)"
        ));
    }
    let rest = &url[scheme_end + 3..];
    let (authority, path) = match rest.find(['/', '?', '#']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    if authority.contains('@') {
        return Err(format!("quit URL {url:?} has user info: not supported"));
    }
    if authority.starts_with('[') {
        return Err(format!(
            "quit URL {url:?} has an IPv6 literal host: not supported (use localhost)"
        ));
    }
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) => (h, parse_port(url, p)?),
        None => (authority, 80),
    };
    if host.is_empty() {
        return Err(format!("quit URL {url:?} has no host"));
    }
    if let Some(c) = host
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '.' || *c == '-'))
    {
        return Err(format!(
            "quit URL {url:?} has {c:?} in its host: only letters, digits, '.' and '-' are allowed"
        ));
    }
    if path.contains('#') {
        return Err(format!(
            "quit URL {url:?} has a fragment ('#'): not allowed"
        ));
    }
    let path = if path.is_empty() {
        "/".to_string()
    } else if path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_string()
    };
    check_path(url, &path)?;
    Ok(Endpoint {
        host: host.to_string(),
        port,
        path,
    })
}

fn parse_port(url: &str, p: &str) -> Result<u16, String> {
    if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "quit URL {url:?} has port {p:?}: expected a number from 1 to 65535"
        ));
    }
    match p.parse::<u16>() {
        Ok(0) | Err(_) => Err(format!(
            "quit URL {url:?} has port {p}: expected a number from 1 to 65535"
        )),
        Ok(n) => Ok(n),
    }
}

/// Path characters of RFC 3986 (unreserved, sub-delims, ':', '@', '/', '?', '%') except the
/// quote, which the script does not need.
fn check_path(url: &str, path: &str) -> Result<(), String> {
    let bytes = path.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        let ok = b.is_ascii_alphanumeric() || b"-._~!$&()*+,;=:@/?%".contains(&b);
        if !ok {
            return Err(format!(
                "quit URL {url:?} has {:?} in its path: not allowed in a URL path",
                path[i..].chars().next().unwrap_or('?')
            ));
        }
        if b == b'%' {
            let hex = bytes.get(i + 1..i + 3);
            if !hex.is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) {
                return Err(format!(
                    "quit URL {url:?} has a '%' not followed by two hex digits"
                ));
            }
        }
    }
    Ok(())
}

/// Several wrapped containers in one pod: the last one to finish stops the proxy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Peers {
    /// Mount path of the shared emptyDir, e.g. "/var/run/meshjob". Chosen by meshjob; it must
    /// not contain control characters.
    pub dir: String,
    /// This container's name.
    pub me: String,
    /// Names of all wrapped containers in the pod.
    pub all: Vec<String>,
}

/// What the generated script does besides running the task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptOptions {
    /// Where the proxy is asked to quit (POST).
    pub quit: Endpoint,
    /// false for `restartPolicy: OnFailure`: a failed task is rerun in the same pod, so the
    /// proxy is left running after a failure.
    pub stop_proxy_on_failure: bool,
    pub peers: Option<Peers>,
    /// Wait for the proxy to be ready before the task starts.
    pub wait_for_proxy: Option<ReadyWait>,
    /// Which part of the argv was the container's `command`, written into the marker line.
    pub origin: ArgvOrigin,
}

/// Poll `ready` (GET, until a 2xx answer) for up to `seconds` before the task starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadyWait {
    pub seconds: u32,
    pub ready: Endpoint,
}

/// The full script text, ending in '\n'. Its first line is the marker (see [`marker`]).
///
/// # Panics
/// If a baked-in value (quit host or path, peers dir) contains a control character; such a
/// value cannot be written into a YAML block scalar. `parse_quit_url` never returns one.
pub fn render(opts: &ScriptOptions) -> String {
    text::render(opts)
}

/// Whether `script` is a wrapper body meshjob wrote, byte for byte, in any version it knows
/// (for some settings). A hand-edited body is not: meshjob leaves it alone.
pub fn is_genuine(script: &str) -> bool {
    match marker(script).map(|m| m.version) {
        Some(1) => v1::is_genuine(script),
        Some(WRAPPER_VERSION) => text::is_genuine(script),
        _ => false,
    }
}

#[cfg(test)]
mod tests;
