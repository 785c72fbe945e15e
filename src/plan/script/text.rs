//! The version 4 script text, section by section. Each section is a fixed piece of shell
//! with a few values baked in, emitted only when the pod needs it. The sections that did not
//! change since versions 2 and 3 are those versions' own (v2.rs, v3.rs). docs/wrapper.md
//! explains every line; keep the two in step.

use super::marker::marker_line;
use super::quote::{between, sh_unquote, sh_word};
use super::v2::{self, authority};
use super::v3::{SAVE, START_TASK};
use super::{Endpoint, ScriptOptions, WRAPPER_VERSION};

pub(super) fn render(opts: &ScriptOptions) -> String {
    let mut s = marker_line(WRAPPER_VERSION, opts.origin, &opts.command_style);
    s.push_str(POINTER);
    s.push_str(SAVE);
    s.push_str(v2::CLIENT);
    if let Some(w) = &opts.wait_for_proxy {
        s.push_str(&v2::ready_wait(w));
    }
    s.push_str(v2::STDIN_TO_FD3);
    s.push_str(START_TASK);
    s.push_str(WAIT_FOR_TASK);
    if !opts.stop_proxy_on_failure {
        s.push_str(v2::ON_FAILURE);
    }
    if let Some(peers) = &opts.peers {
        s.push_str(&v2::peers_section(peers));
    }
    let words: Vec<String> = std::iter::once(&opts.quit)
        .chain(&opts.also)
        .map(|e| sh_word(&format!("{}{}", authority(e), e.path)))
        .collect();
    s.push_str(&format!(
        "{QUIT_HEAD}{}{QUIT_TAIL}",
        super::quote::wrap_words(&words, QUIT_HEAD.len())
    ));
    s.push_str(QUIT);
    s
}

/// Whether `script` is, byte for byte, a version 4 script (for some settings).
pub(super) fn is_genuine(script: &str) -> bool {
    let Some(list) = between(script, &format!("\n{QUIT_HEAD}"), QUIT_TAIL) else {
        return false;
    };
    let Some(mut ends) = endpoints(list) else {
        return false;
    };
    if ends.is_empty() {
        return false;
    }
    let quit = ends.remove(0);
    let also = ends;
    v2::rendered_by_with(script, quit, &|opts| {
        render(&ScriptOptions {
            also: also.clone(),
            ..opts.clone()
        })
    })
}

/// The endpoints of the quit loop's word list, in order.
fn endpoints(list: &str) -> Option<Vec<Endpoint>> {
    super::quote::split_words(list)?
        .iter()
        .map(|w| {
            let word = sh_unquote(w)?;
            let (hostport, path) = word.split_at(word.find('/')?);
            let (host, port) = hostport.rsplit_once(':')?;
            Some(Endpoint {
                host: host.to_string(),
                port: port.parse().ok()?,
                path: path.to_string(),
            })
        })
        .collect()
}

/// The pointer to the docs, under the marker line.
const POINTER: &str = "\n# Runs the task (\"$@\"), then stops the sidecars. \
meshjob's docs/wrapper.md explains each line.\n";

/// Closes fd 3, passes on a signal that came before `t` was set, and waits for the task;
/// once it has been reaped, `t` is emptied (the traps have no task left to pass a signal on
/// to).
const WAIT_FOR_TASK: &str = r#"exec 3<&-; [ -z "$s" ] || kill "$t" 2>/dev/null
while s=; wait "$t"; x=$?
  case $x:$e in 127:?*) ;; *) e=$x ;; esac
  [ -n "$s" ] && [ "$x" -gt 128 ]
do :; done; t=''
"#;

/// The quit loop: one word per sidecar to stop, `host:port/path`.
const QUIT_HEAD: &str = "for q in ";
const QUIT_TAIL: &str = "; do\n  u=/${q#*/} q=${q%%/*} r=none\n";

/// Asks each sidecar to quit at `http://$q$u` (POST), then exits with the task's code.
const QUIT: &str = r#"  [ -z "$k" ] || for i in 1 2 3; do
    r=`ask POST "$q" "$u" </dev/null`
    case $r in 5??|'') [ "$i" = 3 ] || sleep 1 ;; *) break ;; esac
  done
  case $r in 2??) ;; none) say 'cannot stop the sidecars: none of curl, wget, bash is installed'
  break ;; '') say "the sidecar did not answer at http://$q$u" ;;
  *) say "the sidecar did not stop: http://$q$u answered HTTP $r" ;; esac
done
exit "$e"
"#;
