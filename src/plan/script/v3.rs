//! The version 3 wrapper, frozen: meshjob no longer writes it, but it must recognise every
//! script it once wrote, so that it replaces those in place and leaves hand-edited ones
//! alone. Do not change the text below. Version 4 (text.rs) reuses the sections that it
//! kept unchanged.
//!
//! What version 4 changed: it stops every holder of the pod (the mesh proxy, and injected
//! agents such as Vault Agent), each endpoint once, in one loop, and is two lines shorter.

use super::ScriptOptions;
use super::marker::marker_line;
use super::quote::{between, sh_word};
use super::v2::{self, authority};

const WRAPPER_VERSION: u32 = 3;

pub fn render(opts: &ScriptOptions) -> String {
    let mut s = marker_line(WRAPPER_VERSION, opts.origin, &opts.command_style);
    s.push_str(v2::POINTER);
    s.push_str(SAVE);
    s.push_str(v2::CLIENT);
    if let Some(w) = &opts.wait_for_proxy {
        s.push_str(&v2::ready_wait(w));
    }
    s.push_str(v2::STDIN_TO_FD3);
    s.push_str(START_TASK);
    s.push_str(v2::WAIT_FOR_TASK);
    if !opts.stop_proxy_on_failure {
        s.push_str(v2::ON_FAILURE);
    }
    if let Some(peers) = &opts.peers {
        s.push_str(&v2::peers_section(peers));
    }
    s.push_str(&format!(
        "{QUIT_HEAD}{} u={}\n",
        sh_word(&authority(&opts.quit)),
        sh_word(&opts.quit.path)
    ));
    s.push_str(v2::QUIT);
    s
}

/// Whether `script` is, byte for byte, a version 3 script (for some settings).
pub(super) fn is_genuine(script: &str) -> bool {
    let line = between(script, &format!("\n{QUIT_HEAD}"), "\n");
    let (hostport, path) = line.and_then(|l| l.split_once(" u=")).unzip();
    match v2::endpoint(hostport, path) {
        Some(quit) => v2::rendered_by(script, quit, render),
        None => false,
    }
}

/// The variables the script sets before the task starts, and the values they came with:
/// `"=value"` for one that was set (from the container's environment, so exported), `""` for
/// one that was not. The task's subshell gives them those values back before it runs the
/// task (see [`START_TASK`]), so that the task's environment is the container's.
pub(super) const SAVE: &str = r#"set -- "${g+=$g}" "${T+=$T}" "${s+=$s}" "${t+=$t}" "${w+=$w}" "${k+=$k}" "$@"
t='' s='' g='' T=''
"#;

/// Starts the task in a subshell (then [`v2::WAIT_FOR_TASK`] waits for it): the subshell stops at once with a signal's code when one came during
/// the wait for the proxy (`s`), gives the saved variables their values back (`k` last: it
/// is the loop variable, and the loop does not assign it again after its last turn), then
/// `exec`s the task as the kubelet would: a program found on PATH, never one of the
/// script's functions or a shell builtin. A missing program still exits 127, one that
/// cannot run 126.
pub(super) const START_TASK: &str = r#"( [ -z "$s" ] || exit "$s"; for k in g T s t w k; do
  case $1 in =*) eval "$k=\${1#=}" ;; esac; shift; done; exec "$@" ) <&3 3<&- & t=$! e=''
"#;

/// The task has been reaped; the quit endpoint's `host:port` and path follow.
const QUIT_HEAD: &str = "t='' r=none q=";
