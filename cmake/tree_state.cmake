# Writes OUT (a C++ source) defining readyport::stress_tree_state(): "clean" when the checkout at
# SOURCE_DIR had no uncommitted change to a tracked file when the binary was built, "dirty" when it
# had, "unknown" without git, without a checkout, or when COMMIT_GIVEN (READYPORT_GIT_COMMIT names
# the commit: a tarball or a CI checkout without git). A copy of a checkout made by
# ci/canary_tree.sh (no .git) has the checkout's state when it was copied, in its .readyport-tree.
# Run at every build (stress/CMakeLists.txt); configure_file rewrites OUT only when the state
# changed, so nothing is recompiled otherwise.
#   cmake -DSOURCE_DIR=<repo> -DGIT=<git> -DCOMMIT_GIVEN=<0|1> -DOUT=<file> -P tree_state.cmake
cmake_minimum_required(VERSION 3.25)
set(READYPORT_TREE_STATE "unknown")
if(NOT COMMIT_GIVEN AND GIT AND EXISTS "${SOURCE_DIR}/.git")
  # No index refresh written back: several builds of one checkout may run at once.
  set(ENV{GIT_OPTIONAL_LOCKS} 0)
  execute_process(COMMAND "${GIT}" -C "${SOURCE_DIR}" status --porcelain --untracked-files=no
                  OUTPUT_VARIABLE _changes RESULT_VARIABLE _result ERROR_QUIET)
  if(_result EQUAL 0)
    if(_changes STREQUAL "")
      set(READYPORT_TREE_STATE "clean")
    else()
      set(READYPORT_TREE_STATE "dirty")
    endif()
  endif()
elseif(NOT COMMIT_GIVEN AND EXISTS "${SOURCE_DIR}/.readyport-tree")
  file(STRINGS "${SOURCE_DIR}/.readyport-tree" _tree REGEX "^tree=(clean|dirty)$")
  if(_tree)
    string(REGEX REPLACE "^tree=" "" READYPORT_TREE_STATE "${_tree}")
  endif()
endif()
configure_file("${CMAKE_CURRENT_LIST_DIR}/tree_state.cpp.in" "${OUT}" @ONLY)
