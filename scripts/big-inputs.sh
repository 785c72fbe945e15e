#!/usr/bin/env bash
# Time and peak memory of the release binary on large streams (31 MiB of Jobs, 31 MiB of
# ConfigMaps, a 100 MB file), which are processed as they are read.
# Measured on the 2-core CI machine while another job shared it: 31 MiB of Jobs (the worst
# case: every document is edited, 416 MB of output) takes ~13 s and peaks at 17 MB (1.4 GB
# before streaming); 31 MiB of ConfigMaps peaks at 7 MB, the 100 MB file at 8 MB. Not part of
# `cargo test` (a release build and ~1 minute).
#
#   scripts/big-inputs.sh
#
# Fails when a bound is broken: peak RSS over MAX_RSS_MB (default 4096) on a 31 MiB stream
# of Jobs, more than MAX_SECONDS (default 120) for it, or over 100 MB on the 100 MB file.
set -euo pipefail
cd "$(dirname "$0")/.."
max_rss_mb="${MAX_RSS_MB:-4096}"
max_seconds="${MAX_SECONDS:-120}"
[ -x /usr/bin/time ] || { echo "needs GNU time at /usr/bin/time (apt-get install time)"; exit 1; }

cargo build --locked --release --quiet
bin=target/release/meshjob
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

job='apiVersion: batch/v1
kind: Job
metadata:
  name: pi
spec:
  template:
    spec:
      containers:
      - name: pi
        image: perl
        command: ["perl", "-e", "print 1"]
      restartPolicy: Never'
cm='apiVersion: v1
kind: ConfigMap
metadata:
  name: cm
data:
  key: value'

# $1 name, $2 document, $3 target size in MiB
make() {
  python3 - "$work/$1" "$2" "$3" <<'PY'
import sys
path, doc, mib = sys.argv[1], sys.argv[2], int(sys.argv[3])
chunk = ("---\n" + doc + "\n") * 1000
with open(path, "w") as f:
    size = 0
    while size + len(chunk) < mib << 20:
        f.write(chunk)
        size += len(chunk)
PY
}

# $1 label, then the command; prints seconds and peak RSS, checks the bounds.
measure() {
  local label=$1
  shift
  local rc=0 size
  size=$(du -m "${@: -1}" | cut -f1)
  /usr/bin/time -v -o "$work/time.txt" "$@" >/dev/null 2>"$work/stderr.txt" || rc=$?
  local rss secs
  rss=$(awk -F': ' '/Maximum resident set size/ {print int($2 / 1024)}' "$work/time.txt")
  secs=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$work/time.txt")
  echo "$label: ${size} MB in, exit $rc, ${secs} wall, peak RSS ${rss} MB"
  if [ "$rss" -gt "$max_rss_mb" ]; then
    echo "FAIL: peak RSS ${rss} MB is over ${max_rss_mb} MB"
    exit 1
  fi
  last_rc=$rc
  last_rss=$rss
}

make jobs.yaml "$job" 31
make configmaps.yaml "$cm" 31
start=$(date +%s)
measure "31 MiB of Jobs, fix" "$bin" fix "$work/jobs.yaml"
[ "$last_rc" -eq 0 ] || { cat "$work/stderr.txt"; exit 1; }
took=$(( $(date +%s) - start ))
[ "$took" -le "$max_seconds" ] || { echo "FAIL: ${took}s is over ${max_seconds}s"; exit 1; }
measure "31 MiB of ConfigMaps, check" "$bin" check "$work/configmaps.yaml"
[ "$last_rc" -eq 0 ] || { cat "$work/stderr.txt"; exit 1; }

make huge.yaml "$cm" 100
measure "100 MB file of ConfigMaps, fix (streamed)" "$bin" fix "$work/huge.yaml"
[ "$last_rc" -eq 0 ] || { cat "$work/stderr.txt"; exit 1; }
[ "$last_rss" -le 100 ] || { echo "FAIL: peak RSS ${last_rss} MB on a stream is over 100 MB"; exit 1; }

echo "==> the ignored large-input tests, release build"
cargo test --locked --release --quiet --test resource_limits -- --ignored
echo "big inputs: all bounds kept (peak RSS <= ${max_rss_mb} MB)"
