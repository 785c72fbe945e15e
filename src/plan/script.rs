//! The entrypoint wrapper script (minimal version; hardened in the wrapper-runtime work).

pub const WRAPPER_VERSION: u32 = 1;
pub const MARKER_PREFIX: &str = "# meshjob-wrapper v";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuitEndpoint {
    pub host: String,
    pub port: u16,
    pub path: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Peers {
    pub dir: String,
    pub me: String,
    pub all: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptOptions {
    pub quit: QuitEndpoint,
    pub stop_proxy_on_failure: bool,
    pub peers: Option<Peers>,
    pub wait_for_proxy_seconds: Option<u32>,
}

pub fn parse_quit_url(url: &str) -> Result<QuitEndpoint, String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| format!("quit URL {url:?} must start with http://"))?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) => (
            h,
            p.parse::<u16>()
                .map_err(|_| format!("quit URL {url:?} has a bad port {p:?}"))?,
        ),
        None => (authority, 80),
    };
    if host.is_empty() {
        return Err(format!("quit URL {url:?} has no host"));
    }
    Ok(QuitEndpoint {
        host: host.to_string(),
        port,
        path: path.to_string(),
    })
}

pub fn render(opts: &ScriptOptions) -> String {
    let url = format!(
        "http://{}:{}{}",
        opts.quit.host, opts.quit.port, opts.quit.path
    );
    let mut s =
        format!("{MARKER_PREFIX}{WRAPPER_VERSION}: run the task, then stop the Istio proxy\n");
    s.push_str("\"$@\"\nrc=$?\n");
    if !opts.stop_proxy_on_failure {
        s.push_str("[ \"$rc\" -ne 0 ] && exit \"$rc\"\n");
    }
    s.push_str(&format!(
        "curl -fsS -m 5 -X POST '{url}' >/dev/null 2>&1 || wget -q -T 5 -O /dev/null --post-data= '{url}' >/dev/null 2>&1\n"
    ));
    s.push_str("exit \"$rc\"\n");
    s
}

pub fn marker_version(script: &str) -> Option<u32> {
    let first = script.lines().next()?;
    let rest = first.strip_prefix(MARKER_PREFIX)?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}
