#!/usr/bin/env bash
# A bounded fuzz run over the whole pipeline (not part of `cargo test`).
#
#   scripts/fuzz.sh [SECONDS]      default 60 seconds per fuzzer
#
# 1. The stable-toolchain runner (tests/fuzz_smoke.rs): seeded YAML-aware mutations of the
#    seed corpus, always run. MESHJOB_FUZZ_SEED picks the seed (default: the date, so each
#    day explores something new; the seed is printed for a replay).
# 2. libFuzzer through `cargo fuzz` (fuzz/), when cargo-fuzz is installed. cargo fuzz passes
#    -Z flags (sanitizers), which only a nightly rustc accepts: the run uses the nightly
#    toolchain when rustup has one, and otherwise sets RUSTC_BOOTSTRAP=1 to let stable rustc
#    take them. MESHJOB_FUZZ_LIBFUZZER=0 skips it (.ci/run does: CI runs the stable runner).
#
# A crash leaves its input in target/fuzz-smoke-crashes/ or fuzz/artifacts/pipeline/;
# once fixed, copy it into testdata/regressions/ (tests/regressions.rs runs those).
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-60}"
seed="${MESHJOB_FUZZ_SEED:-$(date +%Y%m%d)}"

echo "==> stable runner: ${secs}s, seed ${seed}"
MESHJOB_FUZZ_SECONDS="$secs" MESHJOB_FUZZ_SEED="$seed" \
  cargo test --locked --release --test fuzz_smoke -- --ignored --nocapture

if [ "${MESHJOB_FUZZ_LIBFUZZER:-1}" = "0" ]; then
  echo "==> libFuzzer: skipped (MESHJOB_FUZZ_LIBFUZZER=0)"
  exit 0
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "==> libFuzzer: SKIPPED, cargo-fuzz is not installed (cargo install cargo-fuzz --locked)"
  exit 0
fi

echo "==> libFuzzer (cargo fuzz): ${secs}s"
corpus=fuzz/corpus/pipeline
mkdir -p "$corpus"
# Seed corpus: every input in testdata/, plus the shared corpus when it is beside the repo.
find testdata -name '*.yaml' -print0 | while IFS= read -r -d '' f; do
  cp "$f" "$corpus/$(echo "$f" | tr '/' '_')"
done
if [ -d ../shared/corpus ]; then
  find ../shared/corpus -name '*.y*ml' -exec cp {} "$corpus/" \;
fi
cd fuzz
toolchain=()
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  toolchain=(+nightly)
else
  export RUSTC_BOOTSTRAP=1
fi
cargo "${toolchain[@]}" fuzz run -O pipeline "corpus/pipeline" -- \
  -dict=yaml.dict -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048
