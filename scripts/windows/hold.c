/* hold FILE [exclusive]: opens FILE the way an editor that locks what it edits does (read
   access, shared for reading only: no FILE_SHARE_WRITE, no FILE_SHARE_DELETE), or with
   `exclusive` shared for nothing at all, prints "held", and keeps it open until its stdin
   ends. tests/windows_wine.rs runs it under Wine beside meshjob.exe to check that `fix`
   reports such a file as not written. Built by scripts/windows-tests.sh. */
#include <stdio.h>
#include <string.h>
#include <windows.h>

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "exclusive") != 0)) {
    fprintf(stderr, "usage: hold FILE [exclusive]\n");
    return 2;
  }
  DWORD share = argc == 3 ? 0 : FILE_SHARE_READ;
  HANDLE h = CreateFileA(argv[1], GENERIC_READ, share, NULL, OPEN_EXISTING,
                         FILE_ATTRIBUTE_NORMAL, NULL);
  if (h == INVALID_HANDLE_VALUE) {
    fprintf(stderr, "hold: cannot open %s: error %lu\n", argv[1], GetLastError());
    return 1;
  }
  printf("held\n");
  fflush(stdout);
  char buf[256];
  DWORD n;
  while (ReadFile(GetStdHandle(STD_INPUT_HANDLE), buf, sizeof buf, &n, NULL) && n > 0) {
  }
  CloseHandle(h);
  return 0;
}
