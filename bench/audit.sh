#!/usr/bin/env bash
# Benchmark of `meshjob audit` on a dump of N pods (default 100,000) in one `List`, as
# `kubectl get pods -A -o yaml` (or `-o json`) writes it: time and peak RSS of the release
# binary, for docs/performance.md.
#
#   bench/audit.sh            # YAML and JSON dumps of 100,000 pods, a tenth of them held
#   MESHJOB_AUDIT_PODS=20000 bench/audit.sh
#
# The dumps are made by bench/audit_dump.py (needs PyYAML) in a temporary directory under
# /tmp, removed on exit. Peak RSS is GNU time's maximum resident set size.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
pods=${MESHJOB_AUDIT_PODS:-100000}
command -v /usr/bin/time >/dev/null || { echo "bench/audit.sh: needs GNU time (apt-get install time)" >&2; exit 1; }
dir=$(mktemp -d /tmp/meshjob-audit-bench.XXXXXX)
trap 'rm -rf "$dir"' EXIT
cargo build --release --locked --manifest-path "$root/Cargo.toml" >&2
bin=$root/target/release/meshjob
printf '| dump | pods | MB | held | seconds | MB/s | peak RSS MB |\n| --- | --- | --- | --- | --- | --- | --- |\n'
for fmt in yaml json; do
  f=$dir/pods.$fmt
  python3 "$root/bench/audit_dump.py" bench "$fmt" "$pods" >"$f"
  mb=$(awk -v b="$(stat -c %s "$f")" 'BEGIN { printf "%.1f", b / 1e6 }')
  set +e
  /usr/bin/time -f '%e %M' -o "$dir/time" "$bin" audit --format json "$f" >"$dir/out"
  status=$?
  set -e
  [ "$status" -le 1 ] || { echo "bench/audit.sh: audit exited $status" >&2; exit 1; }
  # GNU time puts "Command exited with non-zero status 1" first when pods are held.
  read -r secs kb < <(tail -n 1 "$dir/time")
  held=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["held"]))' "$dir/out")
  awk -v f="pods.$fmt" -v n="$pods" -v mb="$mb" -v h="$held" -v s="$secs" -v kb="$kb" \
    'BEGIN { printf "| %s | %d | %s | %d | %.2f | %.0f | %.1f |\n", f, n, mb, h, s, mb / s, kb / 1024 }'
  rm -f "$f" "$dir/out"
done
