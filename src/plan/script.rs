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

/// Where the proxy's quit endpoint listens (pilot-agent: `localhost:15020/quitquitquit`);
/// parsed by the one quit-URL parser, which accepts only what this script can use.
pub use crate::config::quit_url::{QuitUrl as QuitEndpoint, parse as parse_quit_url};

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
