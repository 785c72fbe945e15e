#!/usr/bin/env bash
# The Windows build under Wine: cross-builds meshjob.exe for x86_64-pc-windows-gnu with
# mingw-w64, builds the two helpers in scripts/windows/ (the bcryptprimitives.dll stand-in
# that Debian 12's Wine 8 needs to start a Rust program, and hold.exe, which keeps a file
# open), and runs tests/windows_wine.rs against them, then the unit tests built for Windows,
# under Wine too. Prints how long each part took. Arguments go to the command-line tests (a
# filter, say).
#
# Needs: the rustup target (`rustup target add x86_64-pc-windows-gnu`), Debian's
# gcc-mingw-w64-x86-64 and wine64 (and wine, for the `wine` command). Without them it says so
# loudly and stops with success, or fails when MESHJOB_REQUIRE_TOOLS=1 (as in .ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
target=x86_64-pc-windows-gnu

missing=()
rustup target list --installed 2>/dev/null | grep -qx "$target" || missing+=("rustup target $target")
command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || missing+=("x86_64-w64-mingw32-gcc (gcc-mingw-w64-x86-64)")
wine=$(command -v wine || command -v wine64 || true)
if [ -z "$wine" ] && [ -x /usr/lib/wine/wine64 ]; then wine=/usr/lib/wine/wine64; fi
[ -n "$wine" ] || missing+=("wine (wine64)")
if [ "${#missing[@]}" -gt 0 ]; then
  msg="the Windows tests need: ${missing[*]}"
  if [ -n "${MESHJOB_REQUIRE_TOOLS:-}" ] && [ "${MESHJOB_REQUIRE_TOOLS}" != 0 ]; then
    echo "!!! MESHJOB_REQUIRE_TOOLS is set, so this may not skip: $msg" >&2
    exit 1
  fi
  echo "!!!!!!!! SKIPPED: $msg !!!!!!!!" >&2
  exit 0
fi

build_start=$(date +%s)
cargo build --locked --target "$target"
build_secs=$(($(date +%s) - build_start))

# The executable goes beside the DLL stand-in: Windows looks for a DLL in the program's
# directory first.
out=target/windows-tests
mkdir -p "$out"
x86_64-w64-mingw32-gcc -O2 -Wall -shared -o "$out/bcryptprimitives.dll" \
  scripts/windows/bcryptprimitives.c -ladvapi32
x86_64-w64-mingw32-gcc -O2 -Wall -o "$out/hold.exe" scripts/windows/hold.c
cp "target/$target/debug/meshjob.exe" "$out/meshjob.exe"

# A Wine prefix of our own, made once; its wineserver is started here and stopped on exit.
export WINEPREFIX="$PWD/$out/prefix" WINEDEBUG=-all
if [ ! -f "$WINEPREFIX/system.reg" ]; then
  "$wine" wineboot --init >/dev/null 2>&1 || true
fi
wineserver=$(command -v wineserver || echo /usr/lib/wine/wineserver64)
"$wineserver" -p 2>/dev/null || true # already running: it stays until -k or idle
trap '"$wineserver" -k 2>/dev/null || true' EXIT

export MESHJOB_WINE="$wine" MESHJOB_WINDOWS_EXE="$PWD/$out/meshjob.exe" \
  MESHJOB_WINDOWS_HOLD="$PWD/$out/hold.exe"
"$wine" "$MESHJOB_WINDOWS_EXE" --version
run_start=$(date +%s)
cargo test --locked --test windows_wine -- --ignored "$@"
run_secs=$(($(date +%s) - run_start))

# The unit tests as well, built for Windows and run under Wine by cargo (the DLL stand-in
# goes beside the test executable).
unit_start=$(date +%s)
cargo test --locked --target "$target" --lib --no-run
cp "$out/bcryptprimitives.dll" "target/$target/debug/deps/"
CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER="$wine" cargo test --locked --target "$target" --lib
unit_secs=$(($(date +%s) - unit_start))
echo "windows tests: cross-build ${build_secs}s, command-line tests under wine ${run_secs}s," \
  "unit tests built and run under wine ${unit_secs}s"
