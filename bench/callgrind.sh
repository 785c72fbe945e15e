#!/usr/bin/env bash
# Instruction counts of meshjob per input and per stage, under valgrind's callgrind: the same
# count on every run whatever else the machine is doing, so that a change in CPU work shows
# without timing noise (bench/run.sh times the real thing).
#
#   bench/callgrind.sh             # every input below
#   bench/callgrind.sh cron nonjob # the inputs whose names contain one of these words
#
# Builds `cargo build --profile profiling` (the release build with line tables), generates
# the inputs with bench/gen.py into a temporary directory ($MESHJOB_CALLGRIND_INPUTS names a
# folder that gen.py already filled, to skip that) and runs `meshjob fix -` on each, stdout
# and stderr to /dev/null. Inputs (cut from gen.py's files at a document boundary, so that a
# run takes seconds under valgrind):
#   cron-2000      2,000 CronJobs, every one edited
#   mixed-2mb      the first 2 MB of mixed-100000 (5% CronJobs)
#   rendered-5mb   the first 5 MB of rendered-100000 (2% CronJobs)
#   nonjob-5mb     the first 5 MB of nonjob (nothing to edit)
# Columns: instructions in all (Ir), per document, per input byte, then the inclusive count
# of each stage's functions (summed where a stage names several, `a+b`): `quick` the quick
# scanner (quick::Scanner: the bitmaps of a batch, then each document), `cut` reading and
# cutting into batches (Reader::next_batch), `parse` every full parse (tree::parse_stream:
# the document's, the edited output's and an annotation's YAML text), `plan`
# (plan::plan_doc_in), `verify` (yaml::apply::verify: its parse, then the comparison with the
# intended value). A stage that the compiler inlined shows "-". $MESHJOB_CALLGRIND_KEEP names
# a folder to keep the callgrind.out files in, for `callgrind_annotate` (line by line:
# `callgrind_annotate --auto=yes FILE`). $MESHJOB_CALLGRIND_BIN names a meshjob binary to
# measure instead of building one (an older build, to compare). Counts vary by about 0.2%
# from run to run (the threads' hand-offs), far less than timings.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
die() {
  printf 'bench/callgrind.sh: %s\n' "$*" >&2
  exit 1
}
command -v valgrind >/dev/null 2>&1 || die "valgrind is needed (apt-get install valgrind)"
command -v callgrind_annotate >/dev/null 2>&1 || die "callgrind_annotate is needed (valgrind)"

bin=${MESHJOB_CALLGRIND_BIN:-}
if [ -z "$bin" ]; then
  printf '==> building the profiling binary\n' >&2
  (cd "$root" && cargo build --quiet --profile profiling) >&2
  target_dir=$(cd "$root" && cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
  bin=$target_dir/profiling/meshjob
fi
[ -x "$bin" ] || die "no meshjob binary at $bin"

work=$(mktemp -d "${TMPDIR:-/tmp}/meshjob-callgrind.XXXXXX")
trap 'rm -rf "$work"' EXIT
# meshjob reads .meshjob.yaml from the current directory up: run where there is none.
cd "$work"

inputs=${MESHJOB_CALLGRIND_INPUTS:-}
if [ -z "$inputs" ]; then
  printf '==> generating the inputs (bench/gen.py)\n' >&2
  inputs=$work/gen
  python3 "$root/bench/gen.py" "$inputs" 2>/dev/null
fi

# The first $2 bytes of file $1, to the last document boundary past them.
cut_at() {
  awk -v max="$2" '/^---$/ && n > max { exit } { n += length($0) + 1; print }' "$1"
}

declare -A source=(
  [cron-2000]="cron-2000.yaml"
  [mixed-2mb]="mixed-100000.yaml 2000000"
  [rendered-5mb]="rendered-100000.yaml 5000000"
  [nonjob-5mb]="nonjob.yaml 5000000"
)
order=(cron-2000 mixed-2mb rendered-5mb nonjob-5mb)
stages=(
  "quick meshjob::yaml::quick::Scanner::new+meshjob::yaml::quick::Scanner::head"
  "cut meshjob::stream::read::Reader<R>::next_batch"
  "parse meshjob::yaml::tree::parse_stream"
  "plan meshjob::plan::plan_doc_in"
  "verify meshjob::yaml::apply::verify"
)

selected=()
for name in "${order[@]}"; do
  if [ "$#" -eq 0 ]; then
    selected+=("$name")
    continue
  fi
  for word in "$@"; do
    case $name in *"$word"*)
      selected+=("$name")
      break
      ;;
    esac
  done
done
[ "${#selected[@]}" -gt 0 ] || die "no input matches: $*"

header="%-13s %7s %6s %14s %9s %7s"
row=$header
for s in "${stages[@]}"; do
  header+=" %14s"
  row+=" %14s"
done
# shellcheck disable=SC2059 # the format is built above
printf "$header\n" input docs MB Ir Ir/doc Ir/B "${stages[@]%% *}"
for name in "${selected[@]}"; do
  read -r file bytes <<<"${source[$name]}"
  [ -f "$inputs/$file" ] || die "$inputs/$file is missing"
  input=$work/$name.yaml
  if [ -n "${bytes:-}" ]; then
    cut_at "$inputs/$file" "$bytes" >"$input"
  else
    cp "$inputs/$file" "$input"
  fi
  docs=$(grep -c '^---$' "$input" || true)
  docs=$((docs + 1))
  size=$(wc -c <"$input")
  out=$work/$name.callgrind.out
  printf '==> %s: callgrind\n' "$name" >&2
  valgrind --tool=callgrind --callgrind-out-file="$out" "$bin" fix - <"$input" \
    >/dev/null 2>"$work/$name.stderr" || true
  grep -q 'Collected' "$work/$name.stderr" ||
    die "valgrind failed on $name: $(tail -5 "$work/$name.stderr")"
  callgrind_annotate --inclusive=yes --threshold=100 "$out" >"$work/$name.annotate" 2>/dev/null
  total=$(awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }' "$work/$name.annotate")
  values=()
  for s in "${stages[@]}"; do
    # Each symbol's own line (inlined copies elsewhere are other lines), its count; a stage
    # whose symbols are all missing shows "-".
    v=$(FNS="${s#* }" awk '
      BEGIN { n = split(ENVIRON["FNS"], fns, "+") }
      {
        for (i = 1; i <= n; i++) {
          if (!(i in seen) && index($0, ":" fns[i] " [")) {
            seen[i] = 1; c = $1; gsub(",", "", c); sum += c; found = 1
          }
        }
      }
      END { if (found) print sum }
    ' "$work/$name.annotate")
    values+=("${v:--}")
  done
  # shellcheck disable=SC2059
  printf "$row\n" "$name" "$docs" "$(awk -v b="$size" 'BEGIN { printf "%.2f", b / 1e6 }')" \
    "$total" "$((total / docs))" "$((total / size))" "${values[@]}"
  if [ -n "${MESHJOB_CALLGRIND_KEEP:-}" ]; then
    mkdir -p "$MESHJOB_CALLGRIND_KEEP"
    cp "$out" "$MESHJOB_CALLGRIND_KEEP/$name.callgrind.out"
  fi
done
