#!/usr/bin/env bash
# Install step of action.yml: puts a meshjob binary on disk and writes its path to the
# step output `bin`. Order: $MESHJOB_BINARY (a binary the workflow already has), a release
# asset for this runner when MESHJOB_VERSION names one, else `cargo install` of the action's
# own source. Says which one it used. Nothing downloaded is ever run as a script.
set -euo pipefail

out_dir="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/meshjob-action"
mkdir -p "$out_dir/bin"

use() {
  echo "bin=$1" >>"$GITHUB_OUTPUT"
  dirname "$1" >>"${GITHUB_PATH:-/dev/null}"
  "$1" --version
}

if [ -n "${MESHJOB_BINARY:-}" ]; then
  if [ ! -x "$MESHJOB_BINARY" ]; then
    echo "::error title=meshjob::MESHJOB_BINARY is not an executable file"
    exit 1
  fi
  echo "meshjob: using the binary given in MESHJOB_BINARY"
  use "$MESHJOB_BINARY"
  exit 0
fi

target=""
case "${MESHJOB_RUNNER_OS:-}/${MESHJOB_RUNNER_ARCH:-}" in
  Linux/X64) target=x86_64-unknown-linux-gnu ;;
  Linux/ARM64) target=aarch64-unknown-linux-gnu ;;
  macOS/X64) target=x86_64-apple-darwin ;;
  macOS/ARM64) target=aarch64-apple-darwin ;;
esac

version="${MESHJOB_VERSION:-}"
version="${version#v}"
if [ -n "$version" ] && [ -n "$target" ] && [ -n "${MESHJOB_REPOSITORY:-}" ]; then
  case "$version" in
    *[!0-9A-Za-z.+-]*)
      echo "::error title=meshjob::version must look like 1.2.3"
      exit 1
      ;;
  esac
  asset="meshjob-v$version-$target.tar.gz"
  base="https://github.com/$MESHJOB_REPOSITORY/releases/download/v$version"
  tmp=$(mktemp -d)
  if curl -fsSL --retry 3 -o "$tmp/$asset" "$base/$asset" &&
    curl -fsSL --retry 3 -o "$tmp/$asset.sha256" "$base/$asset.sha256"; then
    (cd "$tmp" && sha256sum -c "$asset.sha256" >/dev/null) || {
      echo "::error title=meshjob::checksum mismatch for $asset"
      exit 1
    }
    tar -xzf "$tmp/$asset" -C "$out_dir/bin" meshjob
    echo "meshjob: installed the prebuilt release asset $asset"
    use "$out_dir/bin/meshjob"
    exit 0
  fi
  echo "meshjob: no release asset $asset for v$version; building the action's source instead"
elif [ -n "$version" ]; then
  echo "meshjob: no prebuilt binary for ${MESHJOB_RUNNER_OS:-?}/${MESHJOB_RUNNER_ARCH:-?}; building the action's source instead"
fi

echo "meshjob: building from source with cargo install --locked --path \"\$GITHUB_ACTION_PATH\""
cargo install --locked --quiet --root "$out_dir" --path "$GITHUB_ACTION_PATH"
use "$out_dir/bin/meshjob"
