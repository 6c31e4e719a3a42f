# shellcheck shell=bash
# ci/wine_env.sh: the Wine environment of the mingw tests, sourced by ci/wine_leg.sh and
# ci/flake.sh (never run on its own). It sets the WINE* variables for the prefix build/wine-prefix
# (relative to the current directory: the checkout) and defines
#
#   wine_start   stops a server left by an interrupted run, starts one persistent wineserver with
#                every descriptor detached, boots the prefix (creating it the first time: 15-25 s),
#                and sets an EXIT trap that stops the server again; prints one line
#   wine_stop    stops the server (wineserver -k), detached
#
# Never pipe a Wine process's output while a persistent server runs whose descriptors are not
# detached: whoever reads the pipe hangs (the server inherits it). So every Wine process started
# here has its standard descriptors on /dev/null and every other descriptor closed.

export WINEDEBUG=-all
export WINEPREFIX="$PWD/build/wine-prefix"
export WINEDLLOVERRIDES="mscoree,mshtml="
export WINEARCH=win64

# run_detached CMD...: runs CMD with stdin, stdout and stderr on /dev/null and every other
# descriptor of this shell closed, so that no Wine process (nor the server it may start) holds a
# descriptor that someone reads or waits on.
run_detached() {
  (
    for fd_path in /proc/"$BASHPID"/fd/*; do
      fd="${fd_path##*/}"
      if [ "$fd" -gt 2 ] 2>/dev/null; then eval "exec $fd>&-" 2>/dev/null || true; fi
    done
    exec "$@" </dev/null >/dev/null 2>&1
  )
}

wine_stop() { run_detached wineserver -k || true; }

wine_start() {
  local boot_start version_log="build/logs/wine.version.txt"
  trap wine_stop EXIT
  wine_stop  # a server left by an interrupted run would hold old descriptors
  boot_start=$(date +%s)
  run_detached wineserver -p  # forks into the background; -p: persistent
  if [ -f "$WINEPREFIX/system.reg" ]; then
    run_detached wine wineboot
  else
    run_detached wine wineboot -i  # creates the prefix: 15-25 s once
  fi
  mkdir -p build/logs
  wine --version </dev/null >"$version_log" 2>&1 || true  # the loader only, no server
  echo "     wine ready in $(($(date +%s) - boot_start)) s ($(cat "$version_log"))"
}
