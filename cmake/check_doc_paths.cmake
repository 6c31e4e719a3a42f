# check_doc_paths.cmake: every repository path the documentation names exists.
#
#   cmake -DSOURCE_DIR=<repository> -P cmake/check_doc_paths.cmake
#   ctest -L docs                       # the same, as the test docs.paths
#
# Reads README.md, CHANGELOG.md's first section, docs/*.md and stress/corpus/README.md. A path is
# a `code span` or a Markdown link target that starts with one of the tree's top folders (core/,
# fakes/, stress/, properties/, ci/, docs/, cmake/, tests/, examples/, ports/, fuzz/, .github/) and
# holds no placeholder (<...>, *, ...) and no space; a trailing ":<line>" or "#anchor" is dropped; a
# link target is taken relative to its file. Each must exist. Fails listing every missing path with
# the file that names it.
#
# A text with more '[' than ']' is refused: in a CMake list an unmatched '[' would hide every path
# after it from this check.
#
# -DPLANT=1 adds a path that does not exist to README.md's text (in memory): the test
# docs.paths_catches_a_missing_file uses it to show that this check can fail. -DPLANT=bracket adds
# an unmatched '[' (docs.paths_catches_an_unmatched_bracket).
cmake_minimum_required(VERSION 3.25)

if(NOT SOURCE_DIR)
  message(FATAL_ERROR "usage: cmake -DSOURCE_DIR=<repository> -P check_doc_paths.cmake")
endif()

file(GLOB doc_files "${SOURCE_DIR}/docs/*.md")
list(PREPEND doc_files "${SOURCE_DIR}/README.md" "${SOURCE_DIR}/stress/corpus/README.md")
set(top "(core|fakes|stress|properties|ci|docs|cmake|tests|examples|ports|fuzz|\\.github)/")
set(missing "")
set(checked 0)
foreach(doc IN LISTS doc_files)
  file(READ "${doc}" text)
  if(PLANT STREQUAL "bracket" AND doc STREQUAL "${SOURCE_DIR}/README.md")
    string(APPEND text "\nan unmatched `[`\n")
  elseif(PLANT AND doc STREQUAL "${SOURCE_DIR}/README.md")
    string(APPEND text "\n`docs/no-such-file-planted.md`\n")
  endif()
  # A '[' opens a bracket in a CMake list, inside which ';' does not separate elements: an
  # unmatched one would merge every later span into one element and hide its paths from this
  # check. Such a text is refused, never passed unseen.
  string(REPLACE "[" "" without_opens "${text}")
  string(REPLACE "]" "" without_closes "${text}")
  string(LENGTH "${without_opens}" length_without_opens)
  string(LENGTH "${without_closes}" length_without_closes)
  if(length_without_opens LESS length_without_closes)
    file(RELATIVE_PATH unmatched_doc "${SOURCE_DIR}" "${doc}")
    message(FATAL_ERROR "doc paths: ${unmatched_doc} has more '[' than ']': the paths after an "
                        "unmatched '[' cannot be checked (write it in words, or match it)")
  endif()
  get_filename_component(doc_dir "${doc}" DIRECTORY)
  file(RELATIVE_PATH doc_name "${SOURCE_DIR}" "${doc}")
  # Code spans (a path from the repository's root) and link targets (relative to the file).
  string(REGEX MATCHALL "`[^`\n]+`" spans "${text}")
  string(REGEX MATCHALL "\\]\\([^)\n ]+\\)" links "${text}")
  set(candidates "")
  foreach(span IN LISTS spans)
    string(REGEX REPLACE "^`(.*)`$" "\\1" path "${span}")
    if(path MATCHES "^${top}" AND NOT path MATCHES ";")
      list(APPEND candidates "${SOURCE_DIR}|${path}")
    endif()
  endforeach()
  foreach(link IN LISTS links)
    string(REGEX REPLACE "^\\]\\((.*)\\)$" "\\1" path "${link}")
    if(path MATCHES "^[a-z]+:" OR path MATCHES "^#" OR path MATCHES ";")
      continue()  # a URL or an anchor in the same file
    endif()
    list(APPEND candidates "${doc_dir}|${path}")
  endforeach()
  foreach(candidate IN LISTS candidates)
    string(FIND "${candidate}" "|" bar)
    string(SUBSTRING "${candidate}" 0 ${bar} base)
    math(EXPR after "${bar} + 1")
    string(SUBSTRING "${candidate}" ${after} -1 path)
    if(path MATCHES "[<>*{} ]|\\.\\.\\.|\\$")
      continue()  # a placeholder or a pattern, not a path
    endif()
    string(REGEX REPLACE "#.*$" "" path "${path}")
    string(REGEX REPLACE ":[0-9]+(-[0-9]+)?$" "" path "${path}")
    if(path STREQUAL "")
      continue()
    endif()
    math(EXPR checked "${checked} + 1")
    if(NOT EXISTS "${base}/${path}")
      list(APPEND missing "${doc_name}: ${path}")
    endif()
  endforeach()
endforeach()
list(REMOVE_DUPLICATES missing)
if(missing)
  list(JOIN missing "\n  " listed)
  message(FATAL_ERROR "doc paths: these paths do not exist:\n  ${listed}")
endif()
message(STATUS "doc paths: ${checked} paths named in the docs, all present")
