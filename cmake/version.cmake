# The version header and the commit, generated at configure time.
#
# - readyport/version.hpp (from cmake/version.hpp.in): READYPORT_VERSION_MAJOR/MINOR/PATCH/STRING
#   from project(VERSION), for #if and for code. It changes only with the version, so a new commit
#   rebuilds none of the files that include it.
# - version.cpp (from cmake/version.cpp.in), compiled into readyport_core:
#   readyport::version_commit() (the git commit at configure time, "unknown" when it is not
#   known) and readyport::version_string() (the version the library was built as). A new commit
#   changes this one file: one object is recompiled and the libraries relinked.
#
# READYPORT_GIT_COMMIT (cache, or else the environment variable of that name) overrides the
# commit, for builds from a tarball, a package manager or a CI checkout without git; a full hash
# is cut to git's 12 digits. Empty means "ask git", which needs a checkout (a .git entry) and git
# on the PATH; such a tree configures again when HEAD moves. A copy of a checkout made by
# ci/canary_tree.sh (no .git) has the commit it was copied from in its .readyport-tree, and
# configures again when that file changes.
# configure_file rewrites a file only when its content changed, so reconfiguring at the same
# commit rebuilds nothing.
# Provides: READYPORT_GENERATED_INCLUDE_DIR, READYPORT_VERSION_SOURCE, READYPORT_VERSION_COMMIT.

set(READYPORT_GIT_COMMIT "" CACHE STRING
    "The commit readyport::version_commit() reports; empty: ask git at configure time")

set(READYPORT_VERSION_COMMIT "unknown")
if(READYPORT_GIT_COMMIT)
  set(READYPORT_VERSION_COMMIT "${READYPORT_GIT_COMMIT}")
elseif(NOT "$ENV{READYPORT_GIT_COMMIT}" STREQUAL "")
  # The same from the environment: CI jobs whose checkout has no .git (a container without git).
  set(READYPORT_VERSION_COMMIT "$ENV{READYPORT_GIT_COMMIT}")
elseif(EXISTS "${PROJECT_SOURCE_DIR}/.git")
  find_package(Git QUIET)
  if(GIT_FOUND)
    execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${PROJECT_SOURCE_DIR}" rev-parse --short=12 HEAD
                    OUTPUT_VARIABLE _readyport_commit OUTPUT_STRIP_TRAILING_WHITESPACE
                    RESULT_VARIABLE _readyport_git_result ERROR_QUIET)
    if(_readyport_git_result EQUAL 0 AND _readyport_commit MATCHES "^[0-9a-f]+$")
      set(READYPORT_VERSION_COMMIT "${_readyport_commit}")
    endif()
  endif()
elseif(EXISTS "${PROJECT_SOURCE_DIR}/.readyport-tree")
  file(STRINGS "${PROJECT_SOURCE_DIR}/.readyport-tree" _readyport_commit
       REGEX "^commit=[0-9a-f]+$")
  if(_readyport_commit)
    string(REGEX REPLACE "^commit=" "" READYPORT_VERSION_COMMIT "${_readyport_commit}")
  endif()
endif()
if(EXISTS "${PROJECT_SOURCE_DIR}/.readyport-tree")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
               "${PROJECT_SOURCE_DIR}/.readyport-tree")
endif()
# A checkout's commit moves with HEAD: configure again when it does, so that a build never
# reports the commit it was first configured at.
if(EXISTS "${PROJECT_SOURCE_DIR}/.git/HEAD")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/.git/HEAD")
  file(READ "${PROJECT_SOURCE_DIR}/.git/HEAD" _readyport_head)
  if(_readyport_head MATCHES "^ref: ([^\n]+)")
    set(_readyport_ref "${PROJECT_SOURCE_DIR}/.git/${CMAKE_MATCH_1}")
    if(EXISTS "${_readyport_ref}")
      set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_readyport_ref}")
    endif()
  endif()
endif()
string(LENGTH "${READYPORT_VERSION_COMMIT}" _readyport_commit_length)
if(READYPORT_VERSION_COMMIT MATCHES "^[0-9a-f]+$" AND _readyport_commit_length GREATER 12)
  string(SUBSTRING "${READYPORT_VERSION_COMMIT}" 0 12 READYPORT_VERSION_COMMIT)  # as git's short
endif()
if(NOT READYPORT_VERSION_COMMIT MATCHES "^[A-Za-z0-9._+-]+$")
  message(FATAL_ERROR "READYPORT_GIT_COMMIT='${READYPORT_VERSION_COMMIT}': use letters, digits and . _ + - only")
endif()

set(READYPORT_GENERATED_INCLUDE_DIR "${PROJECT_BINARY_DIR}/generated/include")
set(READYPORT_VERSION_SOURCE "${PROJECT_BINARY_DIR}/generated/version.cpp")
configure_file("${CMAKE_CURRENT_LIST_DIR}/version.hpp.in"
               "${READYPORT_GENERATED_INCLUDE_DIR}/readyport/version.hpp" @ONLY)
configure_file("${CMAKE_CURRENT_LIST_DIR}/version.cpp.in" "${READYPORT_VERSION_SOURCE}" @ONLY)
message(STATUS "readyport ${PROJECT_VERSION}, commit ${READYPORT_VERSION_COMMIT}")
