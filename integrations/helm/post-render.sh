#!/bin/sh
# meshjob as Helm 4's post-renderer on Linux (plugin.yaml): `meshjob fix -` with the
# --post-renderer-args, its stderr sent to Helm's own stderr.
#
# Helm 4 gives a post-renderer plugin a stderr buffer that it never shows
# (internal/plugin/runtime_subprocess.go, runPostrenderer, helm v4.3.2): a refusal would
# read only `plugin "meshjob" exited with error`. Helm runs this script directly, so $PPID
# is Helm, and /proc/$PPID/fd/2 its stderr (the terminal, a CI log, a file: appended to).
# Where it cannot be opened (a socket, another kernel), meshjob's stderr stays Helm's buffer.
if ( : 2>>"/proc/$PPID/fd/2" ) 2>/dev/null; then
  exec meshjob fix - "$@" 2>>"/proc/$PPID/fd/2"
fi
exec meshjob fix - "$@"
