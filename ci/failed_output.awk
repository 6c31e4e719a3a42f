# ci/failed_output.awk: prints, from a ctest log, the output ctest kept (--output-on-failure, the
# test presets' setting) of every failed, timed-out or crashed test, each under its result line.
# A test's output longer than lines_max lines is cut in the middle (the first third and the end
# are kept); at most tests_max tests are shown. Used by ci/test.sh and ci/wine_leg.sh:
#   awk -v lines_max=400 -v tests_max=30 -v log_file=LOG -f ci/failed_output.awk LOG
function flush(   i, head) {
  if (!show) return
  if (n <= lines_max) {
    for (i = 1; i <= n; i++) print buf[i]
  } else {
    head = int(lines_max / 3)
    for (i = 1; i <= head; i++) print buf[i]
    print "     [... " (n - lines_max) " lines left out here; the whole output is in " log_file " ...]"
    for (i = n - (lines_max - head) + 1; i <= n; i++) print buf[i]
  }
  show = 0; n = 0
}
/^ *[0-9]+\/[0-9]+ Test +#/ {
  flush()
  if ($0 ~ /\*\*\*(Failed|Timeout|Exception|Not Run)/ && $0 !~ /Disabled/) {
    shown++
    if (shown <= tests_max) { show = 1; print "==== output of" substr($0, index($0, ":") + 1) }
  }
  next
}
/^ *Start +[0-9]+: / || /^[0-9]+% tests passed, / { flush(); next }
show { buf[++n] = $0 }
END {
  flush()
  if (shown > tests_max) print "     [" (shown - tests_max) " more failed tests: their output is in " log_file "]"
}
