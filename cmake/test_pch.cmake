# Precompiled GoogleTest headers for the test targets: <gtest/gtest.h> and <gmock/gmock.h> are
# parsed once per build tree instead of once per test file (0.3-0.9 CPU-s less a file, measured;
# 63 such files in each of the test command's g++ builds: native and mingw).
#
#   readyport_test_pch(<target>...)   each target's C++ files start from the tree's precompiled
#                                     headers (target_precompile_headers REUSE_FROM)
#
# The precompiled headers belong to readyport_test_pch (an object library of one file,
# cmake/test_pch.cpp, built with the tests' flags and warnings); a target that reuses them must
# compile with the same code-generation flags and defines, which every target of a tree has
# (the preset's flags; the warning set is readyport_warnings). -Winvalid-pch (CMake adds it) with
# -Werror makes a header the compiler could not use a build error, not a silent slowdown.
#
# READYPORT_PCH=OFF builds without them (the same sources; the objects may differ in layout,
# as the headers come first). Only GCC (g++, mingw-w64) uses them:
# - clang: its precompiled header holds the absolute paths of the tree, so ccache cannot reuse it
#   from another checkout, and every file that includes it misses the cache there too (a warm
#   rebuild in a second clone compiled the 63 test files again); that costs a warm run far more
#   than the header saves a cold one (0.9 CPU-s a file under ASan);
# - MSVC and clang-cl: reusing a precompiled header needs the same PDB for every target.
#
# ccache: a file compiled with a precompiled header is cached only with sloppiness
# pch_defines,time_macros (and include_file_mtime,include_file_ctime: the header was written a
# moment before), so these targets call ccache with those settings (their launcher only).
option(READYPORT_PCH "Precompile GoogleTest's headers once per build tree for the tests" ON)

function(readyport_test_pch)
  if(NOT READYPORT_PCH OR NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    return()
  endif()
  set(launcher "")
  if(CMAKE_CXX_COMPILER_LAUNCHER)
    set(launcher ${CMAKE_COMMAND} -E env
        "CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime"
        ${CMAKE_CXX_COMPILER_LAUNCHER})
  endif()
  if(NOT TARGET readyport_test_pch)
    add_library(readyport_test_pch OBJECT ${PROJECT_SOURCE_DIR}/cmake/test_pch.cpp)
    target_link_libraries(readyport_test_pch PRIVATE GTest::gmock GTest::gtest)
    readyport_warnings(readyport_test_pch)
    target_precompile_headers(readyport_test_pch PRIVATE <gtest/gtest.h> <gmock/gmock.h>)
    set_target_properties(readyport_test_pch PROPERTIES CXX_COMPILER_LAUNCHER "${launcher}")
  endif()
  foreach(target IN LISTS ARGN)
    target_precompile_headers(${target} REUSE_FROM readyport_test_pch)
    set_target_properties(${target} PROPERTIES CXX_COMPILER_LAUNCHER "${launcher}")
  endforeach()
endfunction()
