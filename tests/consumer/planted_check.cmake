# tests/consumer/planted_check.cmake: the harness catches a planted bug, and its printed replay
# command reproduces the failure exactly.
#
#   cmake -DBINARY=<test binary with the bug> -DEXPECTED_RULE=U2 -P planted_check.cmake
#
# 1. runs BINARY (its default seeds): it must fail, naming EXPECTED_RULE (`  rule: U2`), and print
#    a replay command and the shrunk case (`faults that matter`, `replay the shrunk case`);
# 2. runs the replay command (its READYPORT_TEST_* words as the environment): it must fail again
#    and print `reproduced exactly` (the same trace hash, READYPORT_TEST_EXPECT_HASH);
# 3. runs the shrunk case's replay command the same way: the same rule, reproduced exactly.
# Exit status: non-zero (a CMake error naming what was missing) when any of it does not hold.
cmake_minimum_required(VERSION 3.25)
if(NOT BINARY OR NOT EXPECTED_RULE)
  message(FATAL_ERROR "planted_check.cmake: -DBINARY=... and -DEXPECTED_RULE=... are required")
endif()

# run(<output variable> <words>...): runs a command given as printed (VAR=value words first, then
# the program and its arguments), with those variables set; its output goes to <output variable>.
function(run_printed out_var command)
  string(REPLACE " " ";" words "${command}")
  set(env "")
  set(program "")
  foreach(word IN LISTS words)
    string(REGEX REPLACE "^'(.*)'$" "\\1" word "${word}")
    string(REGEX REPLACE "='(.*)'$" "=\\1" word "${word}")
    if(NOT program AND word MATCHES "^READYPORT_TEST_[A-Z_]+=")
      list(APPEND env "${word}")
    else()
      list(APPEND program "${word}")
    endif()
  endforeach()
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${env} ${program}
                  OUTPUT_VARIABLE output ERROR_VARIABLE output RESULT_VARIABLE result)
  set(${out_var} "${output}" PARENT_SCOPE)
  set(${out_var}_result "${result}" PARENT_SCOPE)
endfunction()

function(require output what)
  string(FIND "${output}" "${what}" at)
  if(at EQUAL -1)
    message("${output}")
    message(FATAL_ERROR "planted_check: the output lacks '${what}'")
  endif()
endfunction()

execute_process(COMMAND "${BINARY}" OUTPUT_VARIABLE first ERROR_VARIABLE first
                RESULT_VARIABLE result)
if(result EQUAL 0)
  message("${first}")
  message(FATAL_ERROR "planted_check: the planted bug was not caught")
endif()
require("${first}" "  rule: ${EXPECTED_RULE}")
require("${first}" "faults that matter")
string(REGEX MATCH "\n  replay: ([^\n]*)" ignored "${first}")
set(replay "${CMAKE_MATCH_1}")
string(REGEX MATCH "replay the shrunk case: ([^\n]*)" ignored "${first}")
set(shrunk "${CMAKE_MATCH_1}")
if(NOT replay OR NOT shrunk)
  message("${first}")
  message(FATAL_ERROR "planted_check: no replay command, or no shrunk case, in the output")
endif()
message(STATUS "caught by ${EXPECTED_RULE}; replay: ${replay}")

run_printed(again "${replay}")
require("${again}" "  rule: ${EXPECTED_RULE}")
require("${again}" "reproduced exactly")
message(STATUS "the replay command reproduced the trace hash")
run_printed(minimal "${shrunk}")
require("${minimal}" "  rule: ${EXPECTED_RULE}")
require("${minimal}" "reproduced exactly")
message(STATUS "the shrunk case: ${shrunk}")
message(STATUS "planted_check: passed")
