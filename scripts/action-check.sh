#!/usr/bin/env bash
# Check step of action.yml: runs `meshjob check --format github`, prints the annotations,
# writes the diff to the job summary, and sets the outputs `changed` and `findings`.
#
# The paths, exclude and args inputs are split on whitespace by `read -a`, which neither globs nor
# evaluates anything, so an input can only ever become arguments of meshjob.
set -euo pipefail

max_summary_bytes=${MESHJOB_SUMMARY_LIMIT:-800000}

paths=()
args=()
globs=()
IFS=$' \t\n' read -r -d '' -a paths <<<"${MESHJOB_PATHS:-.}" || true
IFS=$' \t\n' read -r -d '' -a args <<<"${MESHJOB_ARGS:-}" || true
IFS=$' \t\n' read -r -d '' -a globs <<<"${MESHJOB_EXCLUDE:-}" || true
for glob in "${globs[@]}"; do
  args+=(--exclude "$glob")
done
[ "${#paths[@]}" -gt 0 ] || paths=(.)

work=$(mktemp -d)
status=0
"${MESHJOB_BIN:-meshjob}" check --format github --color never "${args[@]}" -- "${paths[@]}" \
  >"$work/diff" 2>"$work/findings" || status=$?

# Findings are workflow commands already escaped by meshjob; other stderr lines are shown.
cat "$work/findings"
findings=$(grep -cE '^::(error|warning|notice) ' "$work/findings" || true)
changed=false
[ -s "$work/diff" ] && changed=true

if [ -s "$work/diff" ]; then
  # The diff holds file content: stop command processing while it is printed.
  token="meshjob-$RANDOM$RANDOM$RANDOM"
  echo "::group::meshjob diff"
  echo "::stop-commands::$token"
  cat "$work/diff"
  echo "::$token::"
  echo "::endgroup::"
fi

{
  echo "changed=$changed"
  echo "findings=$findings"
} >>"$GITHUB_OUTPUT"

if [ "${MESHJOB_SUMMARY:-true}" = "true" ] && [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  {
    echo "### meshjob"
    echo
    if [ "$changed" = true ]; then
      echo "Some Jobs need fixing: run \`meshjob fix\` on them. Findings: $findings."
      # A fence longer than any backtick run in the diff cannot be closed by it.
      longest=$({ grep -o '`*' "$work/diff" || true; } | awk '{ if (length($0) > n) n = length($0) } END { print n + 0 }')
      fence='```'
      while [ "${#fence}" -le "$longest" ]; do fence="$fence\`"; done
      size=$(wc -c <"$work/diff")
      echo
      echo "${fence}diff"
      if [ "$size" -gt "$max_summary_bytes" ]; then
        head -c "$max_summary_bytes" "$work/diff" | sed '$d'
        echo "$fence"
        echo
        echo "_The diff is truncated: it has $size bytes and the summary shows the first $max_summary_bytes. Run \`meshjob diff\` locally for all of it._"
      else
        cat "$work/diff"
        echo "$fence"
      fi
    else
      echo "No changes needed. Findings: $findings."
    fi
  } >>"$GITHUB_STEP_SUMMARY"
fi

case "$status" in
  0) exit 0 ;;
  1)
    if [ "${MESHJOB_FAIL_ON_FINDINGS:-true}" = "true" ]; then
      echo "::error title=meshjob::Jobs need fixing or errors were found; run meshjob fix"
      exit 1
    fi
    exit 0
    ;;
  *)
    echo "::error title=meshjob::meshjob check could not run (exit status $status)"
    exit "$status"
    ;;
esac
