# ctest stress.jobs_equal: the main job on 3 runners (--jobs 3) gives exactly what it gives on one
# (--jobs 1): the same per-seed trace hashes in seed order, the same totals, figures, coverage,
# faults fired and failures in the JSON summary, and the same per-seed lines (--verbose) in the
# same order on stdout; only the lines naming the job count, the wall time and the rates may
# differ. Then --stop-on-failure, where a small --steps-max makes seeds 703 and 706 fail: on 3
# runners as on one, the run stops at seed 703 (the lowest failing seed) after 2 seeds, and no
# seed run ahead by another runner writes a bundle or counts.
#   cmake -DSTRESS=<readyport-stress> -DWORK=<dir> -P jobs_equal_test.cmake
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

function(run_job jobs)
  execute_process(COMMAND ${STRESS} --seeds 12 --first-seed 700 --corpus none --verbose
                          --jobs ${jobs} --json ${WORK}/jobs${jobs}.json
                          --bundle-dir ${WORK}/bundles${jobs}
                  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "--jobs ${jobs}: exit ${status}\nstdout: ${out}\nstderr: ${err}")
  endif()
  set(out_${jobs} "${out}" PARENT_SCOPE)
endfunction()

run_job(1)
run_job(3)

file(READ ${WORK}/jobs1.json json_1)
file(READ ${WORK}/jobs3.json json_3)
string(JSON jobs_1 GET "${json_1}" jobs)
string(JSON jobs_3 GET "${json_3}" jobs)
if(NOT jobs_1 EQUAL 1 OR NOT jobs_3 EQUAL 3)
  message(FATAL_ERROR "the summaries name ${jobs_1} and ${jobs_3} jobs, expected 1 and 3")
endif()
string(JSON hashes_count LENGTH "${json_1}" seed_hashes)
if(NOT hashes_count EQUAL 12)
  message(FATAL_ERROR "--jobs 1: ${hashes_count} per-seed hashes, expected 12")
endif()
string(JSON first_seed GET "${json_1}" seed_hashes 0 seed)
string(JSON last_seed GET "${json_3}" seed_hashes 11 seed)
if(NOT first_seed EQUAL 700 OR NOT last_seed EQUAL 711)
  message(FATAL_ERROR "per-seed hashes not in seed order: first ${first_seed}, last ${last_seed}")
endif()
foreach(key seed_hashes totals figures coverage faults_fired failures seeds_run passed failed
            steps_all stopped_early exit_status)
  string(JSON value_1 GET "${json_1}" ${key})
  string(JSON value_3 GET "${json_3}" ${key})
  if(NOT value_1 STREQUAL value_3)
    message(FATAL_ERROR "'${key}' differs between --jobs 1 and --jobs 3:\n${value_1}\n${value_3}")
  endif()
endforeach()
string(JSON steps GET "${json_1}" steps_all)
string(JSON calls_per_second GET "${json_3}" scheduled_calls_per_second)
string(JSON seeds_per_second GET "${json_3}" seeds_per_second)
if(steps EQUAL 0 OR calls_per_second LESS_EQUAL 0 OR seeds_per_second LESS_EQUAL 0)
  message(FATAL_ERROR "rates missing: steps ${steps}, calls/s ${calls_per_second}, "
                      "seeds/s ${seeds_per_second}")
endif()

# stdout: the same lines in the same order, but the header's and the summary's wall time.
foreach(jobs 1 3)
  string(REGEX REPLACE "\n[^\n]*(jobs [0-9]+|wall time|seeds/s|scheduled calls/s)[^\n]*" ""
         lines_${jobs} "\n${out_${jobs}}")
endforeach()
if(NOT lines_1 STREQUAL lines_3)
  file(WRITE ${WORK}/out1.txt "${lines_1}")
  file(WRITE ${WORK}/out3.txt "${lines_3}")
  message(FATAL_ERROR "stdout differs between --jobs 1 and --jobs 3 (see ${WORK}/out1.txt, out3.txt)")
endif()
string(REGEX MATCHALL "seed 7[0-9][0-9] ok" per_seed "${out_3}")
list(LENGTH per_seed per_seed_count)
if(NOT per_seed_count EQUAL 12)
  message(FATAL_ERROR "--jobs 3 --verbose printed ${per_seed_count} per-seed lines, expected 12")
endif()

foreach(jobs 1 3)
  execute_process(COMMAND ${STRESS} --seeds 12 --first-seed 702 --steps-max 20000 --corpus none
                          --stop-on-failure --jobs ${jobs} --json ${WORK}/stop${jobs}.json
                          --bundle-dir ${WORK}/stop_bundles${jobs}
                  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 1 OR NOT out MATCHES "first failure: seed 703 after 2 seeds")
    message(FATAL_ERROR "--stop-on-failure --jobs ${jobs}: exit ${status}, expected 1 and the "
                        "first failure at seed 703\nstdout: ${out}\nstderr: ${err}")
  endif()
  file(GLOB bundles RELATIVE ${WORK}/stop_bundles${jobs} ${WORK}/stop_bundles${jobs}/*.json)
  if(NOT bundles STREQUAL "seed-703.json")
    message(FATAL_ERROR "--stop-on-failure --jobs ${jobs}: bundles '${bundles}', expected "
                        "seed-703.json only")
  endif()
  file(READ ${WORK}/stop${jobs}.json stop_${jobs})
endforeach()
# The failures compared field by field: the bundle paths differ (one directory per run).
string(JSON failures_1 LENGTH "${stop_1}" failures)
string(JSON failures_3 LENGTH "${stop_3}" failures)
if(NOT failures_1 EQUAL 1 OR NOT failures_3 EQUAL 1)
  message(FATAL_ERROR "--stop-on-failure: ${failures_1} and ${failures_3} failures, expected 1")
endif()
foreach(key "seed_hashes" "totals" "seeds_run" "stopped_early" "failures;0;seed"
            "failures;0;message" "failures;0;signature")
  string(JSON value_1 GET "${stop_1}" ${key})
  string(JSON value_3 GET "${stop_3}" ${key})
  if(NOT value_1 STREQUAL value_3)
    message(FATAL_ERROR "--stop-on-failure: '${key}' differs between --jobs 1 and 3:\n"
                        "${value_1}\n${value_3}")
  endif()
endforeach()
message(STATUS "--jobs 1 and --jobs 3: the same 12 per-seed hashes, totals, figures and output; "
               "both stop at seed 703")
