# Canaries: planted engine bugs that measure the suite's power (TigerBeetle's "a fuzzer that must
# fail"). READYPORT_CANARY=<name> compiles exactly one of them into readyport_core; the canary leg
# of ci/test.sh builds each and requires the main job's default run to fail on it. Never set in a
# build that anyone ships or embeds.
set(READYPORT_CANARIES free_before_remove remove_failure_as_done dispatch_after_close
    double_remove)
set(READYPORT_CANARY "" CACHE STRING
    "Plant one engine bug (test builds only): one of ${READYPORT_CANARIES}")
if(READYPORT_CANARY)
  if(NOT READYPORT_CANARY IN_LIST READYPORT_CANARIES)
    message(FATAL_ERROR "READYPORT_CANARY=${READYPORT_CANARY} is not one of: ${READYPORT_CANARIES}")
  endif()
  message(WARNING "readyport: canary '${READYPORT_CANARY}' planted in the engine (a test build)")
  target_compile_definitions(readyport_core PRIVATE READYPORT_CANARY_${READYPORT_CANARY})
endif()
