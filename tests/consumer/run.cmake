# tests/consumer/run.cmake: builds and runs the consumer project (this directory) against
# readyport, the way a user embeds it. A cmake -P script so that it runs wherever CMake does and
# its log shows every command it runs.
#
#   cmake -DMODE=install -DREADYPORT_BINARY_DIR=<readyport build> -DWORK_DIR=<scratch> \
#         [-DCONFIG=<config>] [common options] -P tests/consumer/run.cmake
#     1. cmake --install <readyport build> --prefix <scratch>/prefix
#     2. checks the installed tree: only readyport's libraries, headers, package files and
#        LICENSE (no test, benchmark, example or stress binary), and no file that contains the
#        build directory's path (text files and the printable strings of binaries)
#     3. configures the consumer with find_package(readyport CONFIG REQUIRED COMPONENTS core
#        testing) and CMAKE_PREFIX_PATH=<scratch>/prefix, builds it and runs it with ctest
#
#   cmake -DMODE=fetchcontent -DREADYPORT_SOURCE_DIR=<readyport checkout> -DWORK_DIR=<scratch> \
#         [common options] -P tests/consumer/run.cmake
#     configures the consumer with FetchContent (SOURCE_DIR: no network), builds it (readyport's
#     core and fakes included) and runs it with ctest
#
# Common options: -DGENERATOR=<generator> -DCXX_COMPILER=<compiler> -DBUILD_TYPE=<type>
# -DCOMPILER_LAUNCHER=<ccache> -DCXX_FLAGS=<flags> -DEXE_LINKER_FLAGS=<flags> -DJOBS=<n>
# (default 2). fetchcontent also takes -DWERROR=ON: readyport's sources with warnings as errors. <scratch> is deleted and recreated.
# Exit status: non-zero (a CMake error naming the step) when any step fails.
cmake_minimum_required(VERSION 3.25)

foreach(required MODE WORK_DIR)
  if(NOT ${required})
    message(FATAL_ERROR "run.cmake: -D${required}=... is required (see the comment at the top)")
  endif()
endforeach()
if(NOT JOBS)
  set(JOBS 2)
endif()
if(NOT CONFIG)
  set(CONFIG "${BUILD_TYPE}")
endif()
set(consumer_source "${CMAKE_CURRENT_LIST_DIR}")
set(consumer_build "${WORK_DIR}/build")
set(prefix "${WORK_DIR}/prefix")

# step(<name> <command>...): runs a command, echoing it first; fails the script if it fails.
function(step name)
  message(STATUS "---- ${name}")
  execute_process(COMMAND ${ARGN} COMMAND_ECHO STDOUT RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "consumer test (${MODE}): step '${name}' failed (${result})")
  endif()
endfunction()

# The scratch directory is deleted first: refuse anything this script did not create (a marker
# file), so a wrong -DWORK_DIR cannot delete someone's files.
if(NOT IS_ABSOLUTE "${WORK_DIR}")
  message(FATAL_ERROR "run.cmake: WORK_DIR must be an absolute path, not '${WORK_DIR}'")
endif()
set(marker "${WORK_DIR}/.readyport-consumer-scratch")
file(GLOB work_dir_entries "${WORK_DIR}/*")
if(work_dir_entries AND NOT EXISTS "${marker}")
  message(FATAL_ERROR "run.cmake: ${WORK_DIR} is not empty and was not made by this script")
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
file(WRITE "${marker}" "scratch directory of tests/consumer/run.cmake: deleted on every run\n")

set(configure_args -S "${consumer_source}" -B "${consumer_build}")
if(GENERATOR)
  list(APPEND configure_args -G "${GENERATOR}")
endif()
if(CXX_COMPILER)
  list(APPEND configure_args "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
endif()
if(BUILD_TYPE)
  list(APPEND configure_args "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}")
endif()
if(COMPILER_LAUNCHER)
  list(APPEND configure_args "-DCMAKE_CXX_COMPILER_LAUNCHER=${COMPILER_LAUNCHER}")
endif()
# The same flags as readyport's build (a sanitizer build needs them at the consumer's link too).
if(CXX_FLAGS)
  list(APPEND configure_args "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}")
endif()
if(EXE_LINKER_FLAGS)
  list(APPEND configure_args "-DCMAKE_EXE_LINKER_FLAGS=${EXE_LINKER_FLAGS}")
endif()
set(config_args "")
set(ctest_config_args "")
if(CONFIG)
  set(config_args --config "${CONFIG}")
  set(ctest_config_args -C "${CONFIG}")
endif()

if(MODE STREQUAL "install")
  if(NOT IS_DIRECTORY "${READYPORT_BINARY_DIR}")
    message(FATAL_ERROR "run.cmake: -DREADYPORT_BINARY_DIR=<readyport build tree> is required")
  endif()
  step("install readyport" "${CMAKE_COMMAND}" --install "${READYPORT_BINARY_DIR}" --prefix
       "${prefix}" ${config_args})

  # Only readyport's own files. Anything else (a test or tool binary, a dependency's files) fails.
  file(GLOB_RECURSE installed LIST_DIRECTORIES false RELATIVE "${prefix}" "${prefix}/*")
  list(SORT installed)
  set(allowed
      "^include/readyport/([a-z0-9_]+/)?[a-z0-9_]+\\.hpp$"
      "^lib(64)?/(lib)?readyport_(core|trace|runtime|fake_os|recording|faults|oracle|world|harness)(\\.[0-9]+)*\\.(a|lib|so|dylib|dll\\.a)(\\.[0-9]+)*$"
      "^lib(64)?/cmake/readyport/[A-Za-z_-]+\\.cmake$"
      "^bin/(lib)?readyport_(core|trace|runtime|fake_os|recording|faults|oracle|world|harness)\\.(dll|pdb)$"
      "^share/doc/readyport/LICENSE$")
  set(unexpected "")
  foreach(file IN LISTS installed)
    set(ok FALSE)
    foreach(pattern IN LISTS allowed)
      if(file MATCHES "${pattern}")
        set(ok TRUE)
        break()
      endif()
    endforeach()
    if(NOT ok)
      string(APPEND unexpected "\n  ${file}")
    endif()
  endforeach()
  # The testing kit's internal headers (readyport/fake/internal/) stay in the source tree.
  foreach(file IN LISTS installed)
    if(file MATCHES "^include/readyport/fake/internal/")
      string(APPEND unexpected "\n  ${file} (the kit's internal header)")
    endif()
  endforeach()
  if(unexpected)
    message(FATAL_ERROR "the install put files there that are not readyport's libraries, headers or package files:${unexpected}")
  endif()
  foreach(must IN ITEMS include/readyport/engine.hpp include/readyport/version.hpp
                        include/readyport/internal/slot_table.hpp include/readyport/fake/fake_os.hpp
                        include/readyport/fake/trace.hpp include/readyport/fake/lifetime_oracle.hpp
                        include/readyport/fake/world.hpp include/readyport/fake/harness.hpp
                        include/readyport/fake/harness_gtest.hpp
                        lib/cmake/readyport/readyportConfig.cmake
                        lib/cmake/readyport/readyportConfigVersion.cmake share/doc/readyport/LICENSE)
    if(NOT EXISTS "${prefix}/${must}")
      message(FATAL_ERROR "the install lacks ${must}")
    endif()
  endforeach()

  # No installed file may name the build directory (relocatable package, no leaked paths).
  file(REAL_PATH "${READYPORT_BINARY_DIR}" build_dir)
  string(REGEX REPLACE "([][+.*()^$?|\\\\])" "\\\\\\1" build_dir_regex "${build_dir}")
  set(leaks "")
  foreach(file IN LISTS installed)
    file(STRINGS "${prefix}/${file}" hits REGEX "${build_dir_regex}")
    if(hits)
      list(GET hits 0 first)
      string(APPEND leaks "\n  ${file}: ${first}")
    endif()
  endforeach()
  if(leaks)
    message(FATAL_ERROR "installed files contain the build directory ${build_dir}:${leaks}")
  endif()
  list(LENGTH installed installed_count)
  message(STATUS "installed ${installed_count} files, all readyport's, none naming ${build_dir}")

  step("configure the consumer (find_package)" "${CMAKE_COMMAND}" ${configure_args}
       "-DCMAKE_PREFIX_PATH=${prefix}" "-DREADYPORT_EXPECTED_PREFIX=${prefix}"
       -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DREADYPORT_CONSUMER_MODE=find_package)
elseif(MODE STREQUAL "fetchcontent")
  if(NOT IS_DIRECTORY "${READYPORT_SOURCE_DIR}")
    message(FATAL_ERROR "run.cmake: -DREADYPORT_SOURCE_DIR=<readyport checkout> is required")
  endif()
  set(werror_args "")
  if(WERROR)
    set(werror_args -DREADYPORT_WERROR=ON)
  endif()
  step("configure the consumer (FetchContent)" "${CMAKE_COMMAND}" ${configure_args}
       -DREADYPORT_CONSUMER_MODE=fetchcontent "-DREADYPORT_SOURCE_DIR=${READYPORT_SOURCE_DIR}"
       ${werror_args})
else()
  message(FATAL_ERROR "run.cmake: MODE must be install or fetchcontent, not '${MODE}'")
endif()

step("build the consumer" "${CMAKE_COMMAND}" --build "${consumer_build}" --parallel ${JOBS}
     ${config_args})
step("run the consumer" "${CMAKE_CTEST_COMMAND}" --test-dir "${consumer_build}"
     ${ctest_config_args} --output-on-failure --no-tests=error -V)
message(STATUS "consumer test (${MODE}): passed")
