# ctest stress.os_windows_refused (non-Windows builds): `readyport-stress --os windows` is a bad
# command line there: exit 2, and a message saying it needs a Windows build.
#   cmake -DSTRESS=<readyport-stress> -P os_windows_refused_test.cmake
execute_process(COMMAND ${STRESS} --os windows --seeds 2
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 2)
  message(FATAL_ERROR "--os windows: exit ${status}, expected 2\nstdout: ${out}\nstderr: ${err}")
endif()
if(NOT err MATCHES "needs a Windows build")
  message(FATAL_ERROR "--os windows: the message does not say it needs a Windows build: ${err}")
endif()
message(STATUS "refused with exit 2: ${err}")
