# ctest stress.check_trace: the oracle judges a recorded run offline (readyport-stress
# --check-trace), and catches a violation planted in a copy of that trace.
#   cmake -DSTRESS=<readyport-stress> -DWORK=<dir> -P check_trace_test.cmake
file(MAKE_DIRECTORY "${WORK}")
set(trace "${WORK}/seed5.trace")
execute_process(COMMAND "${STRESS}" --seed 5 --trace-out "${trace}" RESULT_VARIABLE rc
                OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "readyport-stress --seed 5 --trace-out failed (${rc})")
endif()
execute_process(COMMAND "${STRESS}" --check-trace "${trace}" RESULT_VARIABLE rc
                OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "verdict: ok")
  message(FATAL_ERROR "the recorded run should pass (exit ${rc}):\n${out}")
endif()
message(STATUS "recorded run: ${out}")
# The planted violation: every REMOVE packet the engine dequeued now reads as a plain IN packet,
# so the engine closes sockets whose REMOVE the OS never delivered (rule O1). The engine's own
# observer lines are dropped too: the OS-side rules alone must catch it (with them, O12 would).
file(READ "${trace}" text)
string(REPLACE "/mask=0x80]" "/mask=0x1]" planted "${text}")
string(REPLACE "/mask=0x80," "/mask=0x1," planted "${planted}")
string(REGEX REPLACE "[^\n]* obs\\.[^\n]*\n" "" planted "${planted}")
if(planted STREQUAL text)
  message(FATAL_ERROR "the recorded run dequeued no REMOVE packet: nothing to plant")
endif()
file(WRITE "${WORK}/seed5.planted.trace" "${planted}")
execute_process(COMMAND "${STRESS}" --check-trace "${WORK}/seed5.planted.trace"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 1 OR NOT out MATCHES "verdict: internal: O1 ")
  message(FATAL_ERROR "the planted violation was not caught (exit ${rc}):\n${out}")
endif()
message(STATUS "planted violation: ${out}")

# The header line says how a trace was made; the judgement does not depend on it (a call's
# begin and end lines say what may lag): a trace of real threads is judged in full with no flag, a
# trace without a header too, and a --runtime that contradicts the header is refused.
if(NOT out MATCHES "recorded with runtime=sim os=fake")
  message(FATAL_ERROR "the simulated trace's header was not read:\n${out}")
endif()
set(free_trace "${WORK}/seed5.free.trace")
execute_process(COMMAND "${STRESS}" --seed 5 --runtime free --trace-out "${free_trace}"
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "readyport-stress --seed 5 --runtime free --trace-out failed (${rc})")
endif()
execute_process(COMMAND "${STRESS}" --check-trace "${free_trace}" RESULT_VARIABLE rc
                OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "recorded with runtime=free"
   OR NOT out MATCHES "oracle judgement       every rule judged; ambiguous: none; unjudged: none")
  message(FATAL_ERROR "the real-thread trace was not judged in full (exit ${rc}):\n${out}")
endif()
message(STATUS "real-thread trace: ${out}")
execute_process(COMMAND "${STRESS}" --check-trace "${free_trace}" --runtime sim
                RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
if(NOT rc EQUAL 2 OR NOT err MATCHES "contradicts")
  message(FATAL_ERROR "--runtime sim on a real-thread trace was not refused (exit ${rc}):\n${err}")
endif()
file(READ "${trace}" text)
string(REGEX REPLACE "^# readyport-trace [^\n]*\n" "" headless "${text}")
file(WRITE "${WORK}/seed5.headless.trace" "${headless}")
execute_process(COMMAND "${STRESS}" --check-trace "${WORK}/seed5.headless.trace"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "no header line" OR NOT out MATCHES "verdict: ok")
  message(FATAL_ERROR "a trace without a header should be judged as it is (exit ${rc}):\n${out}")
endif()
message(STATUS "headers: named, never needed; a contradicting --runtime refused")
