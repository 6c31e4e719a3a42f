#!/usr/bin/env bash
# wine_exec.sh PROGRAM.exe [ARGS...]: runs a Windows program under Wine, for ctest (the mingw
# toolchain's CMAKE_CROSSCOMPILING_EMULATOR, which also lists the tests) and for ci/wine_leg.sh.
#
# Wine's output goes to files first and is copied to this script's stdout and stderr when the
# program has exited, CR LF turned into LF. So no Wine process ever holds the caller's pipe: where
# the persistent wineserver of ci/wine_leg.sh is not running (or has gone), the server that wine
# starts in its place inherits only these files, never ctest's pipe (a server holding that pipe
# makes ctest wait on it until the test times out). Exit status: the program's.
set -u
export WINEDEBUG="${WINEDEBUG:--all}"
export WINEDLLOVERRIDES="${WINEDLLOVERRIDES:-mscoree,mshtml=}"
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
# Wine's own client/server link can drop ("wine client error:...: recvmsg: Connection reset by
# peer") before the program ran: that is Wine failing, not the test, so such a run is repeated
# (twice at most, with a note). A program's own failure is never repeated.
# A launch that failed and printed nothing at all, on stdout or stderr, is repeated the same way.
# No program run here fails without a word: GoogleTest's main prints its first line before any
# test, a failed check prints its assertion, readyport-stress prints its error. Under Wine on a
# loaded 2-core machine about 1 launch in 5,000 ends so, with status 1 within 0.03 s (the
# whole suite 20 times, 4 tests at once: 3 of 15,140 launches; the cause, inside Wine, is not
# found: with strace following the launches it did not happen in 5,299). Each repeat is said on
# stderr, so it is in the test's log, and ci/flake.sh counts them; a listing of the tests
# (--gtest_list_tests, which ctest runs before any test under DISCOVERY_MODE PRE_TEST) is
# repeated the same way (a discovery that fails stops ctest before its first test).
for attempt in 1 2 3; do
  wine "$@" </dev/null >"$out" 2>"$err"
  status=$?
  if [ "$status" -eq 0 ] || [ "$attempt" -eq 3 ]; then break; fi
  if grep -q '^wine client error' "$err"; then
    echo "wine_exec: Wine's client/server link failed (attempt $attempt); running it again" >&2
  elif [ ! -s "$out" ] && [ ! -s "$err" ]; then
    echo "wine_exec: $1 exited with status $status and printed nothing at all (attempt" \
      "$attempt): no verdict, the program never spoke; running it again" >&2
  else
    break
  fi
done
tr -d '\r' <"$out"
tr -d '\r' <"$err" >&2
# The last attempt too: say how it ended, so that the log of such a launch is not empty
# (WINEDEBUG=-all keeps Wine's own messages out of the tests' output).
if [ "$status" -ne 0 ] && [ ! -s "$out" ] && [ ! -s "$err" ]; then
  echo "wine_exec: $1 exited with status $status and printed nothing at all (attempt" \
    "$attempt, the last)" >&2
fi
exit "$status"
