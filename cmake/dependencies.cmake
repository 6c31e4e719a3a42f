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

if(NOT CMAKE_CROSSCOMPILING)
  find_package(benchmark CONFIG QUIET)
  find_package(rapidcheck CONFIG QUIET)
  # Machines without the packages but with a network (the Windows runners): fetch them, pinned.
  if(READYPORT_FETCH_DEPS AND NOT benchmark_FOUND)
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
