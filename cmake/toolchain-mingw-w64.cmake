# Cross build for 64-bit Windows with mingw-w64 on Debian (g++-mingw-w64-x86-64-posix), tests run
# under Wine. Used by the "mingw" preset and ci/wine_leg.sh.
#
# - The posix thread model (x86_64-w64-mingw32-g++-posix): the win32 one has no std::thread.
# - -static: the test binaries then need no libstdc++/winpthreads DLLs in Wine's path.
# - Tests run through Wine (CMAKE_CROSSCOMPILING_EMULATOR, via ci/wine_exec.sh), discovered when
#   ctest runs (PRE_TEST), so the build never starts a Wine process: ci/wine_leg.sh starts one
#   persistent, detached wineserver before ctest.
# - ws2_32 is linked by core/CMakeLists.txt for every Windows build (MSVC too).
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_VERSION 10.0)
set(CMAKE_SYSTEM_PROCESSOR x86_64)

set(READYPORT_MINGW_TRIPLE x86_64-w64-mingw32)
set(CMAKE_C_COMPILER ${READYPORT_MINGW_TRIPLE}-gcc-posix)
set(CMAKE_CXX_COMPILER ${READYPORT_MINGW_TRIPLE}-g++-posix)
set(CMAKE_RC_COMPILER ${READYPORT_MINGW_TRIPLE}-windres)

set(CMAKE_FIND_ROOT_PATH /usr/${READYPORT_MINGW_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")

# wine, through ci/wine_exec.sh: it keeps Wine's output in files until the program exits, so no
# Wine process (nor a wineserver it starts) ever holds ctest's pipe.
get_filename_component(READYPORT_WINE_EXEC "${CMAKE_CURRENT_LIST_DIR}/../ci/wine_exec.sh" ABSOLUTE)
set(CMAKE_CROSSCOMPILING_EMULATOR bash ${READYPORT_WINE_EXEC})
set(CMAKE_GTEST_DISCOVER_TESTS_DISCOVERY_MODE PRE_TEST)
