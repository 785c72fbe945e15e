#!/usr/bin/env bash
# Install steps of action.yml. `plan` decides where the binary comes from and writes the step
# outputs `mode` (binary, release or source) and, for source, the build cache's `dir`, `key`
# and `restore-key`; `install` then puts the binary on disk and writes its path to `bin`.
#
# Sources, in order: $MESHJOB_BINARY (a binary the workflow already has), the release asset
# for this runner when MESHJOB_VERSION names a release, else a `cargo install` of the action's
# own source, cached between runs. A version that cannot be downloaded is an error, never a
# silent build of some other source. Nothing downloaded is ever run as a script.
set -euo pipefail

out_dir="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/meshjob-action"
version="${MESHJOB_VERSION:-}"
version="${version#v}"

fail() {
  echo "::error title=meshjob::$*"
  exit 1
}

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then sha256sum "$@"; else shasum -a 256 "$@"; fi
}

# The release archive for a runner; .github/workflows/release.yml builds each of them. On
# Linux, the static musl build: it runs in any job container too, whatever its C library. On
# Windows (X64 only), a zip holding meshjob.exe.
target_for() {
  case "$1/$2" in
    Linux/X64) echo x86_64-unknown-linux-musl ;;
    Linux/ARM64) echo aarch64-unknown-linux-musl ;;
    macOS/X64) echo x86_64-apple-darwin ;;
    macOS/ARM64) echo aarch64-apple-darwin ;;
    Windows/X64) echo x86_64-pc-windows-gnu ;;
  esac
}

# The executable's name: meshjob.exe on Windows (the steps run in Git for Windows' bash).
exe=meshjob
if [ "${MESHJOB_RUNNER_OS:-}" = Windows ]; then exe=meshjob.exe; fi

# Everything the build depends on: a change to any of it is a new binary.
source_hash() {
  (
    cd "$GITHUB_ACTION_PATH"
    { echo Cargo.toml; echo Cargo.lock; find src -type f; } | LC_ALL=C sort |
      while IFS= read -r f; do sha256 "$f"; done | sha256 | cut -c1-16
  )
}

plan() {
  if [ -n "${MESHJOB_BINARY:-}" ]; then
    echo "mode=binary" >>"$GITHUB_OUTPUT"
    return
  fi
  if [ -n "$version" ]; then
    echo "mode=release" >>"$GITHUB_OUTPUT"
    return
  fi
  command -v cargo >/dev/null 2>&1 ||
    fail "cargo is not installed, so the action cannot build meshjob from source: set the input \`version\` to a release, or install Rust first"
  local rustc lock crate
  rustc=$(rustc -V | sha256 | cut -c1-8)
  lock=$(sha256 "$GITHUB_ACTION_PATH/Cargo.lock" | cut -c1-16)
  crate=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$GITHUB_ACTION_PATH/Cargo.toml" | head -n 1)
  local prefix="meshjob-build-v1-${MESHJOB_RUNNER_OS:-os}-${MESHJOB_RUNNER_ARCH:-arch}-$rustc-$lock-"
  {
    echo "mode=source"
    echo "dir=$out_dir/build"
    echo "key=$prefix$crate-$(source_hash)"
    echo "restore-key=$prefix"
  } >>"$GITHUB_OUTPUT"
}

use() {
  echo "bin=$1" >>"$GITHUB_OUTPUT"
  dirname "$1" >>"${GITHUB_PATH:-/dev/null}"
  "$1" --version
}

install_release() {
  local target
  target=$(target_for "${MESHJOB_RUNNER_OS:-}" "${MESHJOB_RUNNER_ARCH:-}")
  [ -n "$target" ] ||
    fail "meshjob v$version has no prebuilt binary for ${MESHJOB_RUNNER_OS:-?}/${MESHJOB_RUNNER_ARCH:-?}: releases have Linux and macOS binaries for X64 and ARM64, and a Windows one for X64. Run the job on such a runner, or leave the input \`version\` empty to build the action's own source"
  case "$version" in
    *[!0-9A-Za-z.+-]* | "") fail "version must look like 1.2.3, not \"$MESHJOB_VERSION\"" ;;
  esac
  local asset base tmp
  asset="meshjob-v$version-$target.tar.gz"
  if [ "$exe" = meshjob.exe ]; then asset="meshjob-v$version-$target.zip"; fi
  if [ -n "${MESHJOB_RELEASE_BASE_URL:-}" ]; then
    base="$MESHJOB_RELEASE_BASE_URL/v$version"
  elif [ -n "${MESHJOB_REPOSITORY:-}" ]; then
    base="https://github.com/$MESHJOB_REPOSITORY/releases/download/v$version"
  else
    # `uses: ./` (or any local path) leaves github.action_repository empty.
    fail "version is set to $version, but the action cannot tell which repository's releases to download from: it was not used as \`uses: OWNER/meshjob@REF\` (a local \`uses: ./\` has no repository). Use it that way, or set MESHJOB_RELEASE_BASE_URL in the step's env to the releases' download URL (https://github.com/OWNER/meshjob/releases/download), or leave \`version\` empty to build the action's own source"
  fi
  tmp=$(mktemp -d)
  for f in "$asset" "$asset.sha256"; do
    curl -fsSL --retry 3 --connect-timeout 10 -o "$tmp/$f" "$base/$f" ||
      fail "cannot download $base/$f: is v$version a release of $MESHJOB_REPOSITORY? Set \`version\` to a published release, or leave it empty to build the action's own source"
  done
  (cd "$tmp" && sha256 -c "$asset.sha256" >/dev/null) || fail "checksum mismatch for $asset"
  mkdir -p "$out_dir/bin"
  case "$asset" in
    *.zip) unzip_exe "$tmp/$asset" "$out_dir/bin" ;;
    *) tar -xzf "$tmp/$asset" -C "$out_dir/bin" meshjob ;;
  esac
  echo "meshjob: installed the prebuilt release asset $asset"
  use "$out_dir/bin/$exe"
}

# Takes meshjob.exe out of the zip $1 into the directory $2: with unzip where there is one,
# else with PowerShell's Expand-Archive, which every Windows has (the paths reach it through
# the environment, as Windows paths).
unzip_exe() {
  if command -v unzip >/dev/null 2>&1; then
    unzip -q -o "$1" meshjob.exe -d "$2"
  else
    # PowerShell, not bash, expands $env:... here.
    # shellcheck disable=SC2016
    MESHJOB_ZIP=$(cygpath -w "$1") MESHJOB_DEST=$(cygpath -w "$2") powershell.exe -NoProfile \
      -NonInteractive -Command \
      'Expand-Archive -LiteralPath $env:MESHJOB_ZIP -DestinationPath $env:MESHJOB_DEST -Force'
  fi
  [ -f "$2/meshjob.exe" ] || fail "$(basename "$1") holds no meshjob.exe"
}

install_source() {
  local dir="${MESHJOB_BUILD_DIR:?the plan step sets the build directory}"
  local key="${MESHJOB_BUILD_KEY:?the plan step sets the build key}"
  if [ -x "$dir/bin/$exe" ] && [ "$(cat "$dir/key" 2>/dev/null)" = "$key" ]; then
    echo "meshjob: using the binary cached for this source ($key)"
    use "$dir/bin/$exe"
    return
  fi
  echo "meshjob: building from source with cargo install --locked --path \"\$GITHUB_ACTION_PATH\""
  CARGO_TARGET_DIR="$dir/target" cargo install --locked --quiet --force --root "$dir" \
    --path "$GITHUB_ACTION_PATH"
  echo "$key" >"$dir/key"
  use "$dir/bin/$exe"
}

install() {
  if [ -n "${MESHJOB_BINARY:-}" ]; then
    [ -x "$MESHJOB_BINARY" ] || fail "MESHJOB_BINARY ($MESHJOB_BINARY) is not an executable file"
    echo "meshjob: using the binary given in MESHJOB_BINARY"
    use "$MESHJOB_BINARY"
  elif [ -n "$version" ]; then
    install_release
  else
    install_source
  fi
}

case "${1:-}" in
  plan) plan ;;
  install) install ;;
  *)
    echo "usage: $0 plan|install" >&2
    exit 2
    ;;
esac
