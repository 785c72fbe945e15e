//! The version 1 wrapper, frozen: meshjob no longer writes it, but it must recognise every
//! script it once wrote, so that it replaces those in place and leaves hand-edited ones
//! alone. Do not change the text below; a test pins it.

use super::quote::{
    between, done_name, done_names, sh_quote, sh_unquote, undo_done_name, wrap_words,
};
use super::{Endpoint, MARKER_PREFIX, Peers};

const WRAPPER_VERSION: u32 = 1;

/// The settings a version 1 script was rendered from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct V1Options {
    pub quit: Endpoint,
    pub stop_proxy_on_failure: bool,
    pub peers: Option<Peers>,
    pub wait_for_proxy_seconds: Option<u32>,
}

/// Whether `script` is, byte for byte, a script version 1 rendered (for some settings).
pub(super) fn is_genuine(script: &str) -> bool {
    recover(script).is_some_and(|opts| render(&opts) == script)
}

/// The settings `script` would have been rendered from, if it is a version 1 script.
fn recover(script: &str) -> Option<V1Options> {
    let quit = Endpoint {
        host: sh_unquote(between(script, "\nquit_host=", "\n")?)?,
        port: between(script, "\nquit_port=", "\n")?.parse().ok()?,
        path: sh_unquote(between(script, "\nquit_path=", "\n")?)?,
    };
    let wait_for_proxy_seconds = match between(script, "\n  sleep ", " &\n") {
        Some(n) => Some(n.parse().ok()?),
        None => None,
    };
    let peers = match between(script, "\npeers_dir=", "\n") {
        None => None,
        Some(dir) => Some(Peers {
            dir: sh_unquote(dir)?,
            me: undo_done_name(between(script, "if ! true >\"$peers_dir/", ".done\"")?)?,
            all: done_names(between(script, "\nfor peer in ", "; do\n")?)?,
        }),
    };
    let on_failure = between(script, "\n# restartPolicy OnFailure:", "\n").is_some();
    Some(V1Options {
        quit,
        stop_proxy_on_failure: !on_failure,
        peers,
        wait_for_proxy_seconds,
    })
}

pub fn render(opts: &V1Options) -> String {
    let q = &opts.quit;
    let mut s = format!(
        "{MARKER_PREFIX}{WRAPPER_VERSION}: runs the task, then asks the Istio proxy to quit.\n\
         # Written by meshjob. Run as: sh -c <this script> meshjob <task argv...>\n\
         # It exits with the task's code (128+N when a signal N killed it).\n\
         quit_host={host}\n\
         quit_port={port}\n\
         quit_path={path}\n",
        host = sh_quote(&q.host),
        port = q.port,
        path = sh_quote(&q.path),
    );
    s.push_str(HELPERS);
    s.push_str(SIGNALS);
    if let Some(secs) = opts.wait_for_proxy_seconds {
        s.push_str(&ready_section(secs));
    }
    s.push_str(RUN_TASK);
    if !opts.stop_proxy_on_failure {
        s.push_str(ON_FAILURE);
    }
    if let Some(peers) = &opts.peers {
        s.push_str(&peers_section(peers, opts.stop_proxy_on_failure));
    }
    s.push_str("stop_proxy\nexit \"$status\"\n");
    s
}

const HELPERS: &str = r#"
# Prints one line on stderr.
say() {
  printf 'meshjob: %s\n' "$*" >&2
}

# Succeeds when a line read from stdin is of kind $1: "status" (an HTTP status line), "ok"
# (a 2xx status line), "tries" or "timeout" (wget --help shows that option).
saw() {
  while read -r line || [ -n "$line" ]; do
    case $1:$line in
    status:HTTP/* | ok:HTTP/?.?\ 2??* | tries:*--tries* | timeout:*-T[\ ,]*) return 0 ;;
    esac
  done
  return 1
}

# The HTTP client: the first of curl, wget, bash (for its /dev/tcp), python3, perl.
client=
for c in curl wget bash python3 perl; do
  if command -v "$c" >/dev/null 2>&1; then
    client=$c
    break
  fi
done
# GNU wget retries 20 times unless told not to; busybox wget has -T only in some builds.
wget_gnu=
wget_t=
if [ "$client" = wget ]; then
  wget --help 2>&1 | saw tries && wget_gnu=1
  wget --help 2>&1 | saw timeout && wget_t=1
fi

# Sends one request ($1 method, $2 host, $3 port, $4 path, $5 seconds allowed) and prints
# the response's status line ("HTTP/1.1 200 OK"), or nothing when no response came.
# No client may use an HTTP proxy from the environment: the endpoint is on this host.
http_status() {
  case $client in
  curl)
    curl -s -o /dev/null -D - --noproxy '*' --connect-timeout 2 -m "$5" -X "$1" \
      -H 'Content-Length: 0' "http://$2:$3$4"
    ;;
  wget)
    h_url="http://$2:$3$4"
    h_method=$1
    h_secs=$5
    set -- -S -O /dev/null
    if [ "$h_method" = POST ]; then set -- "$@" --post-data=; fi
    if [ -n "$wget_gnu" ]; then set -- "$@" -t 1 --no-proxy; else set -- "$@" -Y off; fi
    if [ -n "$wget_t" ]; then set -- "$@" -T "$h_secs"; fi
    # -S prints the status line on stderr.
    wget "$@" "$h_url" 2>&1
    ;;
  bash)
    bash -c 'exec 3<>"/dev/tcp/$2/$3" &&
      printf "%s %s HTTP/1.0\r\nHost: %s\r\nContent-Length: 0\r\n\r\n" "$1" "$4" "$2" >&3 &&
      read -r -t "$5" line <&3 && printf "%s\n" "$line"' meshjob "$@" 2>/dev/null
    ;;
  python3)
    python3 -c 'import sys, http.client
a = sys.argv
c = http.client.HTTPConnection(a[2], int(a[3]), timeout=int(a[5]))
c.request(a[1], a[4], body=b"")
print("HTTP/1.1 %d" % c.getresponse().status)' "$@" 2>/dev/null
    ;;
  perl)
    perl -MIO::Socket::INET -e 'alarm $ARGV[4];
      my $s = IO::Socket::INET->new(PeerAddr => "$ARGV[1]:$ARGV[2]", Timeout => 2) or exit 1;
      print $s "$ARGV[0] $ARGV[3] HTTP/1.0\r\nHost: $ARGV[1]\r\nContent-Length: 0\r\n\r\n";
      my $l = <$s>;
      print $l if defined $l;' "$@" 2>/dev/null
    ;;
  esac
}

# Asks the proxy to quit: POST to the quit URL, up to 3 tries. Any HTTP answer counts (a
# retry would get the same one). A failure here never changes the exit code.
stop_proxy() {
  if [ -z "$client" ]; then
    say "cannot stop the Istio proxy: none of curl, wget, bash, python3, perl is installed"
    return
  fi
  for try in 1 2 3; do
    if http_status POST "$quit_host" "$quit_port" "$quit_path" 4 </dev/null |
      saw status; then
      return
    fi
    if [ "$try" != 3 ]; then sleep 1; fi
  done
  say "the Istio proxy did not answer at http://$quit_host:$quit_port$quit_path"
}
"#;

const SIGNALS: &str = r#"
# As PID 1 this shell ignores SIGTERM and SIGINT unless it traps them. Pass them on as
# SIGTERM: POSIX makes a background job ignore SIGINT, so only SIGTERM stops the task.
task=
signalled=
caught=
trap 'signalled=143 caught=1; [ -z "$task" ] || kill -s TERM "$task" 2>/dev/null' TERM
trap 'signalled=130 caught=1; [ -z "$task" ] || kill -s TERM "$task" 2>/dev/null' INT
"#;

fn ready_section(secs: u32) -> String {
    format!(
        r#"
# Wait up to {secs}s for the proxy to be ready, so that the task's first connections work.
# The task runs anyway when the proxy does not get ready in time.
ready_port=15021
wait_for_proxy() {{
  if [ -z "$client" ]; then
    say "cannot wait for the Istio proxy: none of curl, wget, bash, python3, perl is installed"
    return
  fi
  sleep {secs} &
  timer=$!
  while [ -z "$signalled" ] && kill -0 "$timer" 2>/dev/null; do
    if http_status GET localhost "$ready_port" /healthz/ready 1 </dev/null |
      saw ok; then
      kill "$timer" 2>/dev/null
      return
    fi
    sleep 1
  done
  kill "$timer" 2>/dev/null
  if [ -z "$signalled" ]; then
    say "the Istio proxy was not ready after {secs}s; starting the task anyway"
  fi
}}
wait_for_proxy
"#
    )
}

const RUN_TASK: &str = r#"
if [ -n "$signalled" ]; then
  # Stopped before the task started.
  status=$signalled
else
  # A background job gets /dev/null as stdin unless told otherwise: hand it ours via fd 3.
  { command exec 3<&0; } 2>/dev/null || exec 3</dev/null
  "$@" <&3 3<&- &
  task=$!
  exec 3<&-
  # A signal that came before $task was set still has to reach the task.
  if [ -n "$signalled" ]; then kill -s TERM "$task" 2>/dev/null; fi
  # A trapped signal makes wait return early (status > 128): then wait again. If the task
  # had in fact ended, some shells answer the second wait with 127: keep the first status.
  status=
  while :; do
    caught=
    wait "$task"
    rc=$?
    if [ "$rc" = 127 ] && [ -n "$status" ]; then break; fi
    status=$rc
    if [ -z "$caught" ] || [ "$rc" -le 128 ]; then break; fi
  done
fi
"#;

const ON_FAILURE: &str = r#"
# restartPolicy OnFailure: the kubelet reruns a failed task in this same pod, and the rerun
# needs the proxy. So only a success stops it.
if [ "$status" != 0 ]; then exit "$status"; fi
"#;

fn peers_section(peers: &Peers, stop_on_failure: bool) -> String {
    let mut names: Vec<String> = peers.all.iter().map(|n| done_name(n)).collect();
    let me = done_name(&peers.me);
    if !names.contains(&me) {
        names.push(me.clone());
    }
    let failed_note = if stop_on_failure {
        "# A failed task counts as done: restartPolicy Never does not rerun it in this pod."
    } else {
        "# A failed task never gets here (see above): it will be rerun, so it is not done."
    };
    format!(
        r#"
# Several containers of this pod run this wrapper; the last one done stops the proxy.
# Each marks itself done (creating a file is atomic), then looks for all marks. Of two that
# finish at the same moment, both mark before they look, so the later look sees both: the
# proxy is stopped at least once (a second quit is harmless).
{failed_note}
peers_dir={dir}
if ! true >"$peers_dir/{me}.done"; then
  say "cannot write $peers_dir/{me}.done; the proxy stays up (the pod may keep running)"
  exit "$status"
fi
for peer in {names}; do
  if [ ! -e "$peers_dir/$peer.done" ]; then exit "$status"; fi
done
"#,
        dir = sh_quote(&peers.dir),
        names = wrap_words(&names, "for peer in ".len()),
    )
}
