#!/usr/bin/env bash
# Peak memory and time of `meshjob check` on a long stream in which every document needs the
# rewrite (CronJobs, made by `bench/gen.py --jobs`): so every document gives findings and a
# diff, in each of the ways a person or CI runs it.
#
#   bench/check.sh                                 # about 100 MB of CronJobs
#   MESHJOB_BENCH_CHECK_BYTES=200000000 bench/check.sh
#   MESHJOB_BENCH_BIN=/path/to/meshjob bench/check.sh   # a binary built beforehand (another
#                                                       # version, to compare)
#
# Without MESHJOB_BENCH_BIN the release binary is built first (`cargo build --release
# --locked`). GNU time (/usr/bin/time, Debian's package `time`) measures each run; when it is
# missing it is installed with apt-get (through sudo unless root), and the script says so.
#
# Rows: `check -` with stdin a file (`< jobs.yaml`) and a pipe (from `cat`), `check
# FILE`, `check --format json -`, `check --format sarif -`, `check --statistics -`, and `fix
# -` for reference. Stdout goes to /dev/null, stderr to a file whose size is shown. Peak RSS
# is GNU time's maximum resident set size of the meshjob process alone; MB = 10^6 bytes.
# The input is written to a temporary directory, removed on exit. Progress goes to stderr;
# stdout gets only the table.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bytes=${MESHJOB_BENCH_CHECK_BYTES:-100000000}

say() { printf '==> %s\n' "$*" >&2; }
die() {
  printf 'bench/check.sh: %s\n' "$*" >&2
  exit 1
}

# Runs a command as root: directly when we are root, else through sudo.
as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    die "need root or sudo to run: $*"
  fi
}

if [ ! -x /usr/bin/time ]; then
  say "GNU time (/usr/bin/time) is missing: installing Debian's package \`time\` with apt-get"
  as_root apt-get update -qq >&2
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >&2
fi
command -v python3 >/dev/null 2>&1 || die "python3 is needed to generate the input"

if [ -n "${MESHJOB_BENCH_BIN:-}" ]; then
  bin=$MESHJOB_BENCH_BIN
else
  say "building the release binary"
  (cd "$root" && cargo build --release --locked >&2)
  target_dir=${CARGO_TARGET_DIR:-target}
  case $target_dir in
  /*) ;;
  *) target_dir=$root/$target_dir ;;
  esac
  bin=$target_dir/release/meshjob
fi
[ -x "$bin" ] || die "no meshjob binary at $bin"

work=$(mktemp -d "${TMPDIR:-/tmp}/meshjob-check-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
# No config file of an ancestor directory may change what is measured.
dir=$work
while :; do
  [ ! -e "$dir/.meshjob.yaml" ] || die "$dir/.meshjob.yaml would configure the runs; move it away"
  [ "$dir" != / ] || break
  dir=$(dirname "$dir")
done
cd "$work"

say "generating about $bytes bytes of CronJobs"
python3 "$root/bench/gen.py" --jobs "$bytes" >jobs.yaml 2>jobs.tsv
docs=$(cut -f1 jobs.tsv)
size=$(wc -c <jobs.yaml)

rows=()
# One run under GNU time: $1 label, then the shell command line (meshjob as "$bin", its
# input as jobs.yaml). GNU time wraps meshjob alone, also after a pipe.
measure() {
  local label=$1 cmd=$2 rc=0
  say "$label"
  bash -c "$cmd" >/dev/null 2>"$work/err" || rc=$?
  local rss wall
  rss=$(awk -F': ' '/Maximum resident set size/ { printf "%.1f", $2 * 1024 / 1e6 }' "$work/time")
  wall=$(awk '/Elapsed \(wall clock\)/ {
      n = split($NF, p, ":"); s = 0
      for (i = 1; i <= n; i++) s = s * 60 + p[i]
      printf "%.1f", s
    }' "$work/time")
  rows+=("$label|$rc|$wall|$rss|$(wc -c <"$work/err")")
}

t="/usr/bin/time -v -o $(printf '%q' "$work/time") $(printf '%q' "$bin")"
measure "check - < jobs.yaml" "$t check - < jobs.yaml"
measure "check - (stdin a pipe from cat)" "cat jobs.yaml | $t check -"
measure "check jobs.yaml" "$t check jobs.yaml"
measure "check --format json - < jobs.yaml" "$t check --format json - < jobs.yaml"
measure "check --format sarif - < jobs.yaml" "$t check --format sarif - < jobs.yaml"
measure "check --statistics - < jobs.yaml" "$t check --statistics - < jobs.yaml"
measure "fix - < jobs.yaml" "$t fix - < jobs.yaml"

echo "meshjob $("$bin" --version | awk '{ print $NF }'): $docs CronJobs, $(awk -v b="$size" \
  'BEGIN { printf "%.1f", b / 1e6 }') MB, $(nproc) cores"
{
  echo "command|exit|seconds|peak RSS MB|stderr bytes"
  echo "---|---|---|---|---"
  printf '%s\n' "${rows[@]}"
} | awk -F'|' '
  { for (i = 1; i <= NF; i++) { cell[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) } }
  END {
    for (r = 1; r <= NR; r++) {
      line = "|"
      for (i = 1; i <= NF; i++) {
        c = cell[r, i]
        if (r == 2) { c = ""; while (length(c) < w[i]) c = c "-" }
        line = line sprintf(i == 1 ? " %-*s |" : " %*s |", w[i], c)
      }
      print line
    }
  }'
