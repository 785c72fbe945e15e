/* A stand-in for Windows' bcryptprimitives.dll, for running meshjob.exe under Wine only.

   Rust's std (1.78 and later) takes its random keys from ProcessPrng in bcryptprimitives.dll
   (rust-lang/rust#121337), which every Windows that Rust supports has, but which the Wine of
   Debian 12 (8.0) lacks: the program does not start. scripts/windows-tests.sh builds this DLL with
   mingw-w64 and puts it beside the executable, where Windows looks for a DLL first. It is
   never shipped: a release runs on Windows, which has the real one.

   ProcessPrng fills the buffer and always returns TRUE (Microsoft's documentation of
   ProcessPrng); here it is RtlGenRandom (advapi32's SystemFunction036), which Wine has. */
#include <windows.h>
#include <ntsecapi.h>

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
  while (len > 0) {
    ULONG n = len > 0x10000000 ? 0x10000000 : (ULONG)len;
    if (!RtlGenRandom(data, n)) {
      return FALSE;
    }
    data += n;
    len -= n;
  }
  return TRUE;
}
