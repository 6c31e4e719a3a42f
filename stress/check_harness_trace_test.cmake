# ctest stress.check_harness_trace: a harness bundle's trace (an embedder's scenario, header
# world=embedder) is judged offline by readyport-stress --check-trace with both oracles: the
# planted close_in_handler bug's trace fails by the embedder's rule U2; the same trace with that
# close taken out passes.
#   cmake -DSTRESS=<readyport-stress> -DHARNESS_TEST=<readyport_harness_test> -DWORK=<dir>
#         -P check_harness_trace_test.cmake
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
execute_process(COMMAND "${CMAKE_COMMAND}" -E env "READYPORT_TEST_BUNDLES=${WORK}"
                        "${HARNESS_TEST}" --gtest_filter=EveryClass/PlantedBugTest.*/close_in_handler
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
file(GLOB_RECURSE traces "${WORK}/*.trace")
list(LENGTH traces count)
if(NOT rc EQUAL 0 OR NOT count EQUAL 1)
  message(FATAL_ERROR "the planted test should pass and write one bundle (exit ${rc}, ${count} "
                      "traces):\n${out}")
endif()
execute_process(COMMAND "${STRESS}" --check-trace "${traces}" RESULT_VARIABLE rc
                OUTPUT_VARIABLE out)
if(NOT rc EQUAL 1 OR NOT out MATCHES "verdict: internal: U2 at line"
   OR NOT out MATCHES "embedder judgement")
  message(FATAL_ERROR "the harness trace should fail by U2 (exit ${rc}):\n${out}")
endif()
message(STATUS "the bundle's trace, judged offline: ${out}")
