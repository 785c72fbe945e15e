//! The entrypoint wrapper script.
//!
//! meshjob moves a container's original argv into `args` and sets `command` to
//! `["/bin/sh", "-c", <script>, "meshjob"]`, so the shell sees `$0` = `meshjob` and `"$@"` =
//! the task's argv. The script runs the task, passes on SIGTERM/SIGINT, keeps the task's exit
//! code, and then asks the Istio proxy to quit (`POST /quitquitquit`), so the pod can finish.
//!
//! The text must survive two outside rules, checked by the tests below:
//! - Kubernetes expands `$(VAR)` in `command`/`args` and turns `$$` into `$`, so the script
//!   contains neither (no command substitution, no arithmetic expansion).
//! - It is embedded as a YAML literal block scalar: no tabs, no control characters, no
//!   whitespace-only lines, no trailing whitespace, and the first line is the marker comment.
//!
//! It is plain POSIX sh (dash, bash, `bash --posix`, busybox ash).

mod text;

/// Bumped whenever the generated script changes behaviour, so that meshjob can tell an
/// up-to-date wrapper from one it should rewrite.
pub const WRAPPER_VERSION: u32 = 1;

/// First line of every script: "# meshjob-wrapper v<N>: ..." (some short human text after).
pub const MARKER_PREFIX: &str = "# meshjob-wrapper v";

/// Where the proxy's quit endpoint listens (pilot-agent: `localhost:15020/quitquitquit`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuitEndpoint {
    pub host: String,
    pub port: u16,
    pub path: String,
}

/// Parses `http://host[:port]/path` (http only; default port 80; path default "/").
///
/// The host is a DNS name or an IPv4 address; the path may carry a query. Anything that
/// could not be baked safely into the script (spaces, quotes, control characters, ...) is
/// refused with a message that names the problem.
pub fn parse_quit_url(url: &str) -> Result<QuitEndpoint, String> {
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
    Ok(QuitEndpoint {
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
    pub quit: QuitEndpoint,
    /// false for `restartPolicy: OnFailure`: a failed task is rerun in the same pod, so the
    /// proxy is left running after a failure.
    pub stop_proxy_on_failure: bool,
    pub peers: Option<Peers>,
    /// Poll `http://localhost:15021/healthz/ready` up to this many seconds before the task.
    pub wait_for_proxy_seconds: Option<u32>,
}

/// The full script text, ending in '\n'. Its first line starts with MARKER_PREFIX + version.
///
/// # Panics
/// If a baked-in value (quit host or path, peers dir) contains a control character; such a
/// value cannot be written into a YAML block scalar. `parse_quit_url` never returns one.
pub fn render(opts: &ScriptOptions) -> String {
    text::render(opts)
}

/// The wrapper version of a script written by `render`, or None if `script` is not ours.
pub fn marker_version(script: &str) -> Option<u32> {
    let first = script.lines().next()?;
    let rest = first.strip_prefix(MARKER_PREFIX)?;
    let digits_end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let (digits, after) = rest.split_at(digits_end);
    if digits.is_empty() || !(after.is_empty() || after.starts_with(':')) {
        return None;
    }
    digits.parse().ok()
}

#[cfg(test)]
mod tests;
