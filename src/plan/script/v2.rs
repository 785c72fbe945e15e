//! The version 2 wrapper, frozen: meshjob no longer writes it, but it must recognise every
//! script it once wrote, so that it replaces those in place and leaves hand-edited ones
//! alone. Do not change the text below; a test pins it. Version 3 (text.rs) reuses the
//! sections that it kept unchanged.
//!
//! What version 3 fixed: the task ran as `"$@"`, so a task named like one of the script's
//! functions (`ask`, `say`) or a shell builtin (`echo`) ran that instead of the program; and
//! the script's variables, assigned before the task started, reached the task's environment
//! when the container's environment had a variable of the same name.

use super::marker::{marker, marker_line};
use super::quote::{between, done_name, sh_unquote, sh_word, undo_done_name};
use super::{Endpoint, Peers, ReadyWait, ScriptOptions};

const WRAPPER_VERSION: u32 = 2;

pub fn render(opts: &ScriptOptions) -> String {
    let mut s = marker_line(WRAPPER_VERSION, opts.origin, &opts.command_style);
    s.push_str(POINTER);
    s.push_str(&format!(
        "q={} u={} t='' s='' e='' g='' T=''\n",
        sh_word(&authority(&opts.quit)),
        sh_word(&opts.quit.path)
    ));
    s.push_str(CLIENT);
    if let Some(w) = &opts.wait_for_proxy {
        s.push_str(&ready_wait(w));
        s.push_str(READY_SIGNALLED);
    }
    s.push_str(STDIN_TO_FD3);
    s.push_str(START_TASK);
    s.push_str(WAIT_FOR_TASK);
    if !opts.stop_proxy_on_failure {
        s.push_str(ON_FAILURE);
    }
    if let Some(peers) = &opts.peers {
        s.push_str(&peers_section(peers));
    }
    s.push_str(QUIT_HEAD);
    s.push_str(QUIT);
    s
}

/// Whether `script` is, byte for byte, a version 2 script (for some settings).
pub(super) fn is_genuine(script: &str) -> bool {
    let Some(quit) = endpoint(
        between(script, "\nq=", " u="),
        between(script, " u=", " t='' s=''"),
    ) else {
        return false;
    };
    rendered_by(script, quit, render)
}

/// Whether `render` gives `script` back from the settings read out of it (with `quit`, read
/// by the caller, and either value of `stop_proxy_on_failure`). Versions 2 and 3 write the
/// other settings the same way.
pub(super) fn rendered_by(
    script: &str,
    quit: Endpoint,
    render: fn(&ScriptOptions) -> String,
) -> bool {
    rendered_by_with(script, quit, &render)
}

/// [`rendered_by`] with any renderer (one that adds what it read out of the script itself).
pub(super) fn rendered_by_with(
    script: &str,
    quit: Endpoint,
    render: &dyn Fn(&ScriptOptions) -> String,
) -> bool {
    let Some(opts) = recover(script, quit) else {
        return false;
    };
    [true, false].into_iter().any(|stop_proxy_on_failure| {
        let opts = ScriptOptions {
            stop_proxy_on_failure,
            ..opts.clone()
        };
        render(&opts) == script
    })
}

/// The settings `script` would have been rendered from, if it is a version 2 or 3 script
/// with this `quit` endpoint (the caller tries both values of `stop_proxy_on_failure`).
fn recover(script: &str, quit: Endpoint) -> Option<ScriptOptions> {
    let m = marker(script)?;
    let wait_for_proxy = match between(script, "\nsleep ", " & w=") {
        None => None,
        Some(n) => {
            let target = between(script, "ask GET ", " </dev/null")?;
            let (hostport, path) = target.split_once(' ')?;
            Some(ReadyWait {
                seconds: n.parse().ok()?,
                ready: endpoint(Some(hostport), Some(path))?,
            })
        }
    };
    let peers = match between(script, "\nd=", "\n") {
        None => None,
        Some(dir) => Some(Peers {
            dir: sh_unquote(dir)?,
            me: undo_done_name(between(script, ": >\"$d/", ".done\"")?)?,
            all: super::quote::done_names(between(script, "\nfor p in ", "; do\n")?)?,
        }),
    };
    Some(ScriptOptions {
        quit,
        also: Vec::new(),
        stop_proxy_on_failure: true,
        peers,
        wait_for_proxy,
        origin: m.origin,
        command_style: m.style.unwrap_or_default(),
    })
}

/// An endpoint from its two baked words, `host:port` and the path, when both were found.
pub(super) fn endpoint(hostport: Option<&str>, path: Option<&str>) -> Option<Endpoint> {
    let (hostport, path) = (hostport?, path?);
    let (host, port) = sh_unquote(hostport)?
        .rsplit_once(':')
        .map(|(h, p)| (h.to_string(), p.parse().ok()))?;
    Some(Endpoint {
        host,
        port: port?,
        path: sh_unquote(path)?,
    })
}

pub(super) fn authority(e: &Endpoint) -> String {
    format!("{}:{}", e.host, e.port)
}

pub(super) const POINTER: &str = "\n# Runs the task (\"$@\"), then stops the mesh proxy. \
meshjob's docs/wrapper.md explains each line.\n";

pub(super) const CLIENT: &str = r#"say() { printf 'meshjob: %s\n' "$*" >&2; }
for k in curl wget bash ''; do command -v "$k" >/dev/null 2>&1 && break; done
[ "$k" != wget ] || case `wget --help 2>&1` in *--tries*) g=1 T=1 ;; *-T\ *) T=1 ;; esac
ask() {
  case $k in
  curl) curl -s -o /dev/null -D - --noproxy '*' -m 4 -X "$1" -H 'Content-Length: 0' \
    -H 'Connection: close' "http://$2$3" ;;
  wget) case $1 in POST) o=--post-data= ;; *) o=-S ;; esac
    wget -S -O /dev/null -Y off ${g:+"-t1"} ${T:+"-T4"} "$o" \
      --header='Connection: close' "http://$2$3" 2>&1 ;;
  bash) bash -c 'exec 3<>"/dev/tcp/${1%:*}/${1##*:}" &&
    printf "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n" \
      "$0" "$2" "$1" >&3 && read -r -t 4 l <&3 && echo "$l"' "$@" 2>/dev/null ;;
  esac | while read -r a b _; do case $a in HTTP/*) echo "$b"; break ;; esac; done
}
trap 's=143; [ -z "$t" ] || kill "$t" 2>/dev/null' TERM
trap 's=130; [ -z "$t" ] || kill "$t" 2>/dev/null' INT
"#;

/// Waits for the proxy to be ready; a signal during the wait leaves `s` set.
pub(super) fn ready_wait(w: &ReadyWait) -> String {
    format!(
        r#"sleep {secs} & w=$!
while [ -n "$k" ] && [ -z "$s" ]; do
  case `ask GET {hostport} {path} </dev/null` in 2??) break ;; esac
  kill -0 "$w" 2>/dev/null || {{ say "the proxy was not ready after {secs}s"; break; }}
  sleep 1
done
kill "$w" 2>/dev/null
"#,
        secs = w.seconds,
        hostport = sh_word(&authority(&w.ready)),
        path = sh_word(&w.ready.path),
    )
}

/// A signal during the wait replaces the task with `exit "$s"`.
const READY_SIGNALLED: &str = "[ -z \"$s\" ] || { set -- exit \"$s\"; s=; }\n";

/// The wrapper's stdin as fd 3, for the task started in the background.
pub(super) const STDIN_TO_FD3: &str = "{ command exec 3<&0; } 2>/dev/null || exec 3</dev/null\n";

const START_TASK: &str = "\"$@\" <&3 3<&- & t=$!\n";

/// Closes fd 3, passes on a signal that came before `t` was set, and waits for the task.
pub(super) const WAIT_FOR_TASK: &str = r#"exec 3<&-
[ -z "$s" ] || kill "$t" 2>/dev/null
while s=; wait "$t"; x=$?
  case $x:$e in 127:?*) ;; *) e=$x ;; esac
  [ -n "$s" ] && [ "$x" -gt 128 ]
do :; done
"#;

pub(super) const ON_FAILURE: &str = "[ \"$e\" = 0 ] || exit \"$e\"\n";

pub(super) fn peers_section(peers: &Peers) -> String {
    let mut names: Vec<String> = peers.all.iter().map(|n| done_name(n)).collect();
    let me = done_name(&peers.me);
    if !names.contains(&me) {
        names.push(me.clone());
    }
    format!(
        r#"d={dir}
: >"$d/{me}.done" || {{ say "cannot write $d/{me}.done"; exit "$e"; }}
for p in {names}; do
  [ -e "$d/$p.done" ] || exit "$e"
done
"#,
        dir = sh_word(&peers.dir),
        names = super::quote::wrap_words(&names, "for p in ".len()),
    )
}

const QUIT_HEAD: &str = "t='' r=none\n";

/// Asks the proxy to quit at `http://$q$u` and exits with the task's code.
pub(super) const QUIT: &str = r#"[ -z "$k" ] || for i in 1 2 3; do
  r=`ask POST "$q" "$u" </dev/null`
  case $r in 5??|'') [ "$i" = 3 ] || sleep 1 ;; *) break ;; esac
done
case $r in
2??) ;;
none) say 'cannot stop the proxy: none of curl, wget, bash is installed' ;;
'') say "the proxy did not answer at http://$q$u" ;;
*) say "the proxy did not stop: http://$q$u answered HTTP $r" ;;
esac
exit "$e"
"#;
