# ctest stress.guided: the guided search (stress/jobs/guided_search.hpp) is deterministic for a
# budget in runs, and a failure it finds in a mutant replays from its bundle as any other.
# A small --steps-max makes many runs fail (a step limit), seeds and mutants alike: two searches
# of 80 runs from seed 700 keep the same inputs, reach the same tuples and rows and fail at the
# same runs (the same bundles); a mutant's bundle (its own schedule seed, pinned fault hits)
# replays exactly. Then 300 runs with the default limits: no failure.
#   cmake -DSTRESS=<readyport-stress> -DWORK=<dir> -P guided_test.cmake
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

function(search name)
  execute_process(COMMAND ${STRESS} --guided 80 --first-seed 700 --steps-max 8000
                          --bundle-dir ${WORK}/${name}
                  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 1)
    message(FATAL_ERROR "search ${name}: exit ${status}, expected 1 (runs past --steps-max)\n"
                        "stdout: ${out}\nstderr: ${err}")
  endif()
  # What may differ between two searches: CPU time (the summary's first line has it; the line
  # for scripts, `search: mode=...`, has it only as first_failure_cpu_s).
  string(REGEX MATCH "\nsearch: mode=[^\n]*" line "${out}")
  string(REGEX REPLACE " first_failure_cpu_s=[0-9.]+" "" line "${line}")
  string(REGEX MATCH "[0-9]+ inputs kept \\([0-9]+ of them mutants\\)" kept "${out}")
  if(line STREQUAL "" OR kept STREQUAL "")
    message(FATAL_ERROR "search ${name}: no summary\nstdout: ${out}")
  endif()
  file(GLOB bundles RELATIVE ${WORK}/${name} ${WORK}/${name}/*.json)
  list(SORT bundles)
  set(line_${name} "${line}" PARENT_SCOPE)
  set(kept_${name} "${kept}" PARENT_SCOPE)
  set(bundles_${name} "${bundles}" PARENT_SCOPE)
endfunction()

search(a)
search(b)
if(NOT line_a STREQUAL line_b OR NOT kept_a STREQUAL kept_b)
  message(FATAL_ERROR "two searches from seed 700 differ:\n${line_a}, ${kept_a}\n"
                      "${line_b}, ${kept_b}")
endif()
if(NOT bundles_a STREQUAL bundles_b OR bundles_a STREQUAL "")
  message(FATAL_ERROR "two searches wrote different bundles (or none):\n${bundles_a}\n${bundles_b}")
endif()

# A mutant's bundle: its options carry a schedule seed of its own.
set(mutant "")
foreach(bundle ${bundles_a})
  file(READ ${WORK}/a/${bundle} text)
  if(text MATCHES "\"schedule_seed\": [0-9]+" AND mutant STREQUAL "")
    set(mutant ${WORK}/a/${bundle})
  endif()
endforeach()
if(mutant STREQUAL "")
  message(FATAL_ERROR "no failing mutant among ${bundles_a}")
endif()
execute_process(COMMAND ${STRESS} --replay ${mutant}
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT out MATCHES "replay: reproduced exactly")
  message(FATAL_ERROR "${mutant} did not replay exactly (exit ${status})\n${out}\n${err}")
endif()

execute_process(COMMAND ${STRESS} --guided 300 --bundle-dir ${WORK}/plain
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 0 OR NOT out MATCHES "search: mode=guided runs=300 [^\n]* failures=0 ")
  message(FATAL_ERROR "300 guided runs with nothing planted: exit ${status}\n${out}\n${err}")
endif()
string(REGEX MATCH "\nsearch: mode=[^\n]*" line "${out}")
message(STATUS "${line_a}; ${kept_a}; replayed ${mutant}; ${line}")
