# Test dependencies: GoogleTest/GoogleMock, Google Benchmark, RapidCheck.
# Order: a GoogleTest source tree (cross builds), then find_package, then (only with
# READYPORT_FETCH_DEPS, on machines with a network) FetchContent pinned to commits.
# Provides: GTest::gtest, GTest::gtest_main, GTest::gmock; benchmark::benchmark when available;
# rapidcheck / rapidcheck_gtest when available.

if(READYPORT_GTEST_SOURCE_DIR)
  set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
  set(gtest_force_shared_crt ON CACHE BOOL "" FORCE)
  add_subdirectory(${READYPORT_GTEST_SOURCE_DIR} ${CMAKE_BINARY_DIR}/_deps/googletest EXCLUDE_FROM_ALL)
  if(NOT TARGET GTest::gtest)  # GoogleTest 1.11+ defines it itself
    add_library(GTest::gtest ALIAS gtest)
  endif()
  if(NOT TARGET GTest::gtest_main)  # GoogleTest 1.11+ defines it itself
    add_library(GTest::gtest_main ALIAS gtest_main)
  endif()
  if(NOT TARGET GTest::gmock)  # GoogleTest 1.11+ defines it itself
    add_library(GTest::gmock ALIAS gmock)
  endif()
else()
  find_package(GTest CONFIG QUIET)
  if(NOT GTest_FOUND)
    if(NOT READYPORT_FETCH_DEPS)
      message(FATAL_ERROR "GoogleTest not found: install it (ci/setup.sh) or set READYPORT_FETCH_DEPS=ON")
    endif()
    include(FetchContent)
    set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
    set(gtest_force_shared_crt ON CACHE BOOL "" FORCE)
    FetchContent_Declare(googletest GIT_REPOSITORY https://github.com/google/googletest.git
                         GIT_TAG b796f7d44681514f58a683a3a71ff17c94edb0c1)  # v1.13.0
    FetchContent_MakeAvailable(googletest)
    if(NOT TARGET GTest::gtest)  # GoogleTest 1.11+ defines it itself
      add_library(GTest::gtest ALIAS gtest)
    endif()
    if(NOT TARGET GTest::gtest_main)  # GoogleTest 1.11+ defines it itself
      add_library(GTest::gtest_main ALIAS gtest_main)
    endif()
    if(NOT TARGET GTest::gmock)  # GoogleTest 1.11+ defines it itself
      add_library(GTest::gmock ALIAS gmock)
    endif()
  endif()
endif()

option(READYPORT_BENCHMARKS
       "Build the Google Benchmark programs when the library is found (no test runs them)" ON)
if(NOT CMAKE_CROSSCOMPILING AND READYPORT_BENCHMARKS)
  find_package(benchmark CONFIG QUIET)
endif()
if(NOT CMAKE_CROSSCOMPILING)
  find_package(rapidcheck CONFIG QUIET)
  # Machines without the packages but with a network (the Windows runners): fetch them, pinned.
  if(READYPORT_FETCH_DEPS AND READYPORT_BENCHMARKS AND NOT benchmark_FOUND)
    include(FetchContent)
    set(BENCHMARK_ENABLE_TESTING OFF CACHE BOOL "" FORCE)
    set(BENCHMARK_ENABLE_GTEST_TESTS OFF CACHE BOOL "" FORCE)
    set(BENCHMARK_ENABLE_INSTALL OFF CACHE BOOL "" FORCE)
    set(BENCHMARK_INSTALL_DOCS OFF CACHE BOOL "" FORCE)
    set(BENCHMARK_ENABLE_WERROR OFF CACHE BOOL "" FORCE)
    FetchContent_Declare(benchmark GIT_REPOSITORY https://github.com/google/benchmark.git
                         GIT_TAG 344117638c8ff7e239044fd0fa7085839fc03021)  # v1.8.3
    FetchContent_MakeAvailable(benchmark)
  endif()
  if(READYPORT_FETCH_DEPS AND NOT rapidcheck_FOUND)
    include(FetchContent)
    set(RC_ENABLE_GTEST ON CACHE BOOL "" FORCE)
    set(RC_ENABLE_GMOCK ON CACHE BOOL "" FORCE)
    FetchContent_Declare(rapidcheck GIT_REPOSITORY https://github.com/emil-e/rapidcheck.git
                         GIT_TAG ff6af6fc683159deb51c543b065eba14dfcf329b)  # master, 2023-12-14
    # CMake 4 refuses projects that ask for compatibility with CMake older than 3.5.
    set(CMAKE_POLICY_VERSION_MINIMUM 3.5)
    FetchContent_MakeAvailable(rapidcheck)
    unset(CMAKE_POLICY_VERSION_MINIMUM)
  endif()
endif()

# The command-line and JSON libraries of readyport-stress and readyport-sim-trace (header only):
# CLI11 (CLI11::CLI11) and nlohmann-json (nlohmann_json::nlohmann_json). Found, in this order:
# 1. find_package (Debian: libcli11-dev, nlohmann-json3-dev; vcpkg; a prefix path);
# 2. cross builds (the mingw preset): the host's headers, through a directory in the build tree
#    that holds only a link to the library's own folder (CLI/, nlohmann/): /usr/include itself on
#    a cross compiler's include path would put the host's C library before the target's;
# 3. with READYPORT_FETCH_DEPS (the Windows runners): FetchContent, pinned to commits.
# readyport_host_headers(<target> <folder> <header>): step 2 for one library.
function(readyport_host_headers target folder header)
  find_path(READYPORT_${folder}_HOST_DIR ${folder}/${header}
            PATHS /usr/include /usr/local/include NO_DEFAULT_PATH NO_CMAKE_FIND_ROOT_PATH)
  if(NOT READYPORT_${folder}_HOST_DIR)
    return()
  endif()
  set(dir ${CMAKE_BINARY_DIR}/_deps/host_headers_${folder})
  file(MAKE_DIRECTORY ${dir})
  if(NOT EXISTS ${dir}/${folder})
    file(CREATE_LINK ${READYPORT_${folder}_HOST_DIR}/${folder} ${dir}/${folder} SYMBOLIC)
  endif()
  string(MAKE_C_IDENTIFIER "readyport_host_${folder}" library)
  add_library(${library} INTERFACE)
  target_include_directories(${library} SYSTEM INTERFACE ${dir})
  add_library(${target} ALIAS ${library})
  message(STATUS "readyport: ${folder}/ headers from the host's ${READYPORT_${folder}_HOST_DIR}")
endfunction()

find_package(CLI11 CONFIG QUIET)
find_package(nlohmann_json 3 CONFIG QUIET)
if(CMAKE_CROSSCOMPILING AND NOT TARGET CLI11::CLI11)
  readyport_host_headers(CLI11::CLI11 CLI CLI.hpp)
endif()
if(CMAKE_CROSSCOMPILING AND NOT TARGET nlohmann_json::nlohmann_json)
  readyport_host_headers(nlohmann_json::nlohmann_json nlohmann json.hpp)
endif()
if(READYPORT_FETCH_DEPS AND NOT TARGET CLI11::CLI11)
  include(FetchContent)
  # SYSTEM: the headers are outside our warning set (/W4 /WX on MSVC).
  FetchContent_Declare(cli11 GIT_REPOSITORY https://github.com/CLIUtils/CLI11.git
                       GIT_TAG 70f8072f9dd2292fd0b9f9e5f58e279f60483ed3  # v2.1.2 (Debian 12's)
                       SYSTEM)
  # CMake 4 refuses projects that ask for compatibility with CMake older than 3.5 (CLI11 asks 3.4).
  set(CMAKE_POLICY_VERSION_MINIMUM 3.5)
  FetchContent_MakeAvailable(cli11)
  unset(CMAKE_POLICY_VERSION_MINIMUM)
endif()
if(READYPORT_FETCH_DEPS AND NOT TARGET nlohmann_json::nlohmann_json)
  include(FetchContent)
  set(JSON_BuildTests OFF CACHE INTERNAL "")
  set(JSON_Install OFF CACHE INTERNAL "")
  FetchContent_Declare(nlohmann_json GIT_REPOSITORY https://github.com/nlohmann/json.git
                       GIT_TAG 9cca280a4d0ccf0c08f47a99aa71d1b0e52f8d03  # v3.11.3
                       SYSTEM)
  FetchContent_MakeAvailable(nlohmann_json)
endif()
if(NOT TARGET CLI11::CLI11)
  message(FATAL_ERROR "CLI11 not found: install it (Debian: libcli11-dev; ci/setup.sh) or set "
                      "READYPORT_FETCH_DEPS=ON")
endif()
if(NOT TARGET nlohmann_json::nlohmann_json)
  message(FATAL_ERROR "nlohmann-json not found: install it (Debian: nlohmann-json3-dev; "
                      "ci/setup.sh) or set READYPORT_FETCH_DEPS=ON")
endif()
