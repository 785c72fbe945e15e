//! The entrypoint wrapper script.
//!
//! meshjob moves a container's original argv into `args` and sets `command` to
//! `["/bin/sh", "-c", <script>, "meshjob"]`, so the shell sees `$0` = `meshjob` and `"$@"` =
//! the task's argv. The script runs the task, passes on SIGTERM/SIGINT, keeps the task's exit
//! code, and then asks each holder of the pod (the mesh proxy, injected agents) to quit (an
//! HTTP/1.1 `POST` to each), so the pod can finish.
//! docs/wrapper.md explains the script line by line.
//!
//! The text must survive two outside rules, checked by the tests:
//! - Kubernetes expands `$(VAR)` in `command`/`args` and turns `$$` into `$`, so the script
//!   contains neither (no `$(...)` command substitution, no arithmetic expansion).
//! - It is embedded as a YAML literal block scalar: no tabs, no control characters, no
//!   whitespace-only lines, no trailing whitespace, and the first line is the marker comment.
//!
//! It is plain POSIX sh (dash, bash, `bash --posix`, busybox ash).

use std::sync::Arc;

mod marker;
mod quote;
mod text;
pub mod v1;
pub mod v2;
pub mod v3;

pub use marker::{
    ArgvOrigin, CommandStyle, FlowLayout, Marker, Original, marker, marker_version, original_argv,
};

/// Bumped whenever the generated script changes behaviour, so that meshjob can tell an
/// up-to-date wrapper from one it should rewrite.
pub const WRAPPER_VERSION: u32 = 4;

/// First line of every script: `# meshjob-wrapper v<N>: ...` (some short human text after).
pub const MARKER_PREFIX: &str = "# meshjob-wrapper v";

/// The shell every wrapper command starts, and its `$0`: `[SHELL, -c, <script>, ARG0]`.
pub const SHELL: &str = "/bin/sh";
pub const ARG0: &str = "meshjob";

/// An HTTP endpoint on the proxy (`http://host:port/path`), parsed by the one quit-URL
/// parser, which accepts only what this script can use.
pub use crate::config::quit_url::{QuitUrl as Endpoint, parse as parse_quit_url};

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
    /// Where the proxy is asked to quit (POST): the first holder of the pod to stop.
    pub quit: Endpoint,
    /// The other holders' quit endpoints (POST), each called once, in order, after `quit`
    /// (version 4 on; earlier versions stop one proxy).
    pub also: Vec<Endpoint>,
    /// false for `restartPolicy: OnFailure`: a failed task is rerun in the same pod, so the
    /// proxy is left running after a failure.
    pub stop_proxy_on_failure: bool,
    pub peers: Option<Peers>,
    /// Wait for the proxy to be ready before the task starts.
    pub wait_for_proxy: Option<ReadyWait>,
    /// Which part of the argv was the container's `command`, written into the marker line.
    pub origin: ArgvOrigin,
    /// How that `command` was written, also in the marker line (version 3 on).
    pub command_style: CommandStyle,
}

/// Poll `ready` (GET, until a 2xx answer) for up to `seconds` before the task starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadyWait {
    pub seconds: u32,
    pub ready: Endpoint,
}

/// The full script text, ending in '\n'. Its first line is the marker (see [`marker()`]).
/// The text is a function of the options alone, and a run wraps container after container
/// with the same options: the last few texts are kept (per thread).
///
/// # Panics
/// If a baked-in value (quit host or path, peers dir) contains a control character; such a
/// value cannot be written into a YAML block scalar. `parse_quit_url` never returns one.
pub fn render(opts: &ScriptOptions) -> String {
    render_shared(opts).to_string()
}

/// [`render`], shared with every other container wrapped with the same options.
pub(crate) fn render_shared(opts: &ScriptOptions) -> Arc<str> {
    thread_local! {
        static RENDERED: std::cell::RefCell<crate::memo::Recent<ScriptOptions, Arc<str>, 4>> =
            const { std::cell::RefCell::new(crate::memo::Recent::new()) };
    }
    RENDERED.with_borrow_mut(|rendered| {
        let render = || (opts.clone(), Arc::from(text::render(opts)));
        Arc::clone(rendered.find_or(|o| o == opts, render))
    })
}

/// Whether `script` is a wrapper body meshjob wrote, byte for byte, in any version it knows
/// (for some settings). A hand-edited body is not: meshjob leaves it alone. Telling renders
/// the script again; a run over fixed manifests meets the same few scripts in every pod, so
/// the last answers are kept (per thread).
pub fn is_genuine(script: &str) -> bool {
    thread_local! {
        static SEEN: std::cell::RefCell<crate::memo::Recent<String, bool, 8>> =
            const { std::cell::RefCell::new(crate::memo::Recent::new()) };
    }
    SEEN.with_borrow_mut(|seen| seen.get(script, is_genuine_uncached))
}

fn is_genuine_uncached(script: &str) -> bool {
    match marker(script).map(|m| m.version) {
        Some(1) => v1::is_genuine(script),
        Some(2) => v2::is_genuine(script),
        Some(3) => v3::is_genuine(script),
        Some(WRAPPER_VERSION) => text::is_genuine(script),
        _ => false,
    }
}

#[cfg(test)]
mod tests;
