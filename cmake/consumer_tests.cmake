# Consumer tests (label "consumer"; READYPORT_CONSUMER_TESTS=ON, set by the default preset only so
# that the sanitizer legs do not repeat them). Each runs tests/consumer/run.cmake, which shows the
# commands a user types:
# - consumer.find_package: `cmake --install` of this build tree into build/<preset>/consumer/
#   install/prefix, checks the installed tree (no test binaries, no build paths), then configures,
#   builds and runs tests/consumer with find_package(readyport CONFIG REQUIRED COMPONENTS core
#   testing).
# - consumer.fetchcontent: the same consumer with FetchContent_Declare(readyport SOURCE_DIR <this
#   checkout>): no network.
# Both use this build's generator, compiler and flags, and take a lock so that they do not compile
# at the same time (each builds with 2 jobs). find_package uses this build's type (it installs this
# tree); fetchcontent builds readyport's sources as the README's install does, Release (-O3 with
# g++) with warnings as errors, so that a user's Release build stays warning-free (g++ 12 warns
# at -O3 where -O2 does not).
if(CMAKE_CROSSCOMPILING)
  message(WARNING "READYPORT_CONSUMER_TESTS: skipped when cross-compiling (the consumer runs here)")
  return()
endif()
if(NOT READYPORT_INSTALL)
  message(FATAL_ERROR "READYPORT_CONSUMER_TESTS=ON needs READYPORT_INSTALL=ON")
endif()

set(_readyport_consumer_args
    "-DGENERATOR=${CMAKE_GENERATOR}"
    "-DCXX_COMPILER=${CMAKE_CXX_COMPILER}"
    "-DBUILD_TYPE=${CMAKE_BUILD_TYPE}"
    "-DCONFIG=$<CONFIG>"
    "-DCOMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER}"
    "-DCXX_FLAGS=${CMAKE_CXX_FLAGS}"
    "-DEXE_LINKER_FLAGS=${CMAKE_EXE_LINKER_FLAGS}"
    "-DREADYPORT_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
add_test(NAME consumer.find_package
         COMMAND ${CMAKE_COMMAND} -DMODE=install "-DREADYPORT_BINARY_DIR=${PROJECT_BINARY_DIR}"
                 "-DWORK_DIR=${PROJECT_BINARY_DIR}/consumer/install" ${_readyport_consumer_args}
                 -P "${PROJECT_SOURCE_DIR}/tests/consumer/run.cmake")
add_test(NAME consumer.fetchcontent
         COMMAND ${CMAKE_COMMAND} -DMODE=fetchcontent
                 "-DWORK_DIR=${PROJECT_BINARY_DIR}/consumer/fetchcontent" ${_readyport_consumer_args}
                 -DBUILD_TYPE=Release -DCONFIG=Release -DWERROR=ON
                 -P "${PROJECT_SOURCE_DIR}/tests/consumer/run.cmake")
# COST: they take a minute or two each, so they start early, even in a fresh clone's tree.
set_tests_properties(consumer.find_package consumer.fetchcontent PROPERTIES
                     LABELS "consumer" TIMEOUT 900 RESOURCE_LOCK readyport_consumer_build COST 100)
