# ctest fuzz.<name>: one fuzz target over its committed corpus, then a fixed burst of mutations.
#
#   cmake -DFUZZER=<binary> -DCORPUS=<dir> -DDICT=<file> -DWORK=<dir> -DRUNS=<n> -DSEED=<s>
#         -DMAX_LEN=<bytes> -P fuzz_test.cmake
#
# Every file of CORPUS runs first (the regressions of fixed bugs among them), then RUNS mutations
# from libFuzzer's -seed SEED: a fixed number of runs from a fixed seed, never a time, so the test
# runs the same inputs every time. New inputs go to WORK/new (emptied first), never into the
# source tree; a crash, leak, timeout or out-of-memory input to WORK/ (-artifact_prefix), and the
# test fails with libFuzzer's report and the command that replays the input. Prints what it ran:
# the corpus, the runs, the executions, the coverage (cov: edges, ft: features) and the peak RSS.
# The fuzzer runs without address-space randomisation (setarch -R) where the system allows it: the
# comparisons libFuzzer records include pointers, and with them the mutations would differ from
# run to run.
foreach(variable FUZZER CORPUS DICT WORK RUNS SEED MAX_LEN)
  if(NOT DEFINED ${variable})
    message(FATAL_ERROR "fuzz_test.cmake: -D${variable}=... is required")
  endif()
endforeach()
get_filename_component(name "${FUZZER}" NAME)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/new")
file(GLOB inputs LIST_DIRECTORIES false "${CORPUS}/*")
list(LENGTH inputs corpus_count)
# libFuzzer counts the corpus's runs among -runs: the burst comes after them.
math(EXPR runs_total "${corpus_count} + ${RUNS}")
set(command "${FUZZER}" -seed=${SEED} -runs=${runs_total} -max_len=${MAX_LEN} -timeout=10
            -rss_limit_mb=2048 -reload=0 -print_final_stats=1 "-dict=${DICT}"
            "-artifact_prefix=${WORK}/" "${WORK}/new" "${CORPUS}")
set(prefix "")
find_program(setarch setarch)
find_program(uname uname)
if(setarch AND uname)
  execute_process(COMMAND "${uname}" -m OUTPUT_VARIABLE arch OUTPUT_STRIP_TRAILING_WHITESPACE)
  execute_process(COMMAND "${setarch}" "${arch}" -R true RESULT_VARIABLE setarch_rc
                  OUTPUT_QUIET ERROR_QUIET)
  if(setarch_rc EQUAL 0)
    set(prefix "${setarch}" "${arch}" -R)
  endif()
endif()
if(prefix)
  message(STATUS "address-space randomisation off (setarch -R): the same mutations every run")
else()
  message(STATUS "setarch -R unavailable: the mutations may differ from run to run")
endif()
list(PREPEND command ${prefix})
list(JOIN command " " shown)
message(STATUS "${name}: ${corpus_count} corpus inputs, then ${RUNS} mutations from seed ${SEED}")
message(STATUS "running: ${shown}")
execute_process(COMMAND ${command} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(log "${out}${err}")

# The figures libFuzzer prints: the final status line and its final stats.
set(figures "")
foreach(pattern "#[0-9]+[ \t]+DONE [^\n]*" "stat::number_of_executed_units: *[0-9]+"
                "stat::peak_rss_mb: *[0-9]+" "Done [0-9]+ runs in [0-9]+ second")
  string(REGEX MATCH "${pattern}" found "${log}")
  if(found)
    string(APPEND figures "\n  ${found}")
  endif()
endforeach()
if(NOT rc EQUAL 0)
  string(REGEX MATCH "[^\n]*(Test unit written to|artifact_prefix)[^\n]*" artifact "${log}")
  string(LENGTH "${log}" length)
  set(tail "${log}")
  if(length GREATER 12000)
    math(EXPR start "${length} - 12000")
    string(SUBSTRING "${log}" ${start} -1 tail)
  endif()
  message(FATAL_ERROR "${name} failed (exit ${rc}): ${artifact}\n"
                      "replay the input: ${FUZZER} <that file>\n${tail}")
endif()
if(NOT log MATCHES "DONE")
  message(FATAL_ERROR "${name}: no final status line from libFuzzer:\n${log}")
endif()
message(STATUS "${name}: passed, 0 crashes${figures}")
