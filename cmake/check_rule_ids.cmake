# check_rule_ids.cmake: every rule ID used in a test name has a heading in docs/rules.md.
#
#   cmake -DSOURCE_DIR=<repository> -P cmake/check_rule_ids.cmake
#   ctest -L docs                       # the same, as the test docs.rule_ids
#
# Scans every *.cpp under core/test, fakes/test, examples, stress and properties for test names:
# the names in TEST(suite, name), TEST_F, TEST_P, TYPED_TEST, TYPED_TEST_P, and the prefix and
# suite of INSTANTIATE_TEST_SUITE_P / INSTANTIATE_TYPED_TEST_SUITE_P. A rule ID in a name is a
# letter A-G and a number followed by "_" and a capital letter, at the start of the name or after
# an "_" (`C2_OneShotDisarmsAllDirections`, `Fake_B6_RemoveTwice`). Each one needs a heading
# "### <ID>" (anything may follow after a space) in docs/rules.md. Fails listing every missing ID
# with the first test that uses it; duplicate headings fail too.
#
# Options: -DRULES_FILE=<path> (default <SOURCE_DIR>/docs/rules.md). -DDROP_HEADING=<ID> or
# FIRST_USED pretends that heading is absent: the test docs.rule_ids_catches_a_missing_heading
# uses it to show that this check can fail.
cmake_minimum_required(VERSION 3.25)

if(NOT SOURCE_DIR)
  message(FATAL_ERROR "usage: cmake -DSOURCE_DIR=<repository> -P check_rule_ids.cmake")
endif()
if(NOT RULES_FILE)
  set(RULES_FILE "${SOURCE_DIR}/docs/rules.md")
endif()
if(NOT EXISTS "${RULES_FILE}")
  message(FATAL_ERROR "${RULES_FILE} does not exist")
endif()

# ---- The headings ---------------------------------------------------------------------------
file(STRINGS "${RULES_FILE}" heading_lines REGEX "^### [A-G][0-9]+([^0-9A-Za-z_]|$)")
set(headings "")
foreach(line IN LISTS heading_lines)
  string(REGEX MATCH "^### ([A-G][0-9]+)" _ "${line}")
  set(id "${CMAKE_MATCH_1}")
  if(id IN_LIST headings)
    message(FATAL_ERROR "${RULES_FILE}: the heading '### ${id}' appears twice")
  endif()
  list(APPEND headings "${id}")
endforeach()

# ---- The test names ---------------------------------------------------------------------------
set(ws "[ \t\r\n]*")
set(ident "[A-Za-z_][A-Za-z0-9_]*")
set(test_macro "(TEST|TEST_F|TEST_P|TYPED_TEST|TYPED_TEST_P|INSTANTIATE_TEST_SUITE_P|INSTANTIATE_TYPED_TEST_SUITE_P)")
# The character before the macro keeps MY_TEST( and GTEST( out (CMake regexes have no \b).
set(test_regex "(^|[^A-Za-z0-9_])${test_macro}\\(${ws}${ident}${ws},${ws}${ident}")

set(scanned_dirs core/test fakes/test examples stress properties)
set(files "")
foreach(dir IN LISTS scanned_dirs)
  file(GLOB_RECURSE found LIST_DIRECTORIES false "${SOURCE_DIR}/${dir}/*.cpp")
  list(APPEND files ${found})
endforeach()
list(SORT files)

set(used "")            # distinct IDs, in first-use order
set(names_count 0)
foreach(file IN LISTS files)
  file(READ "${file}" text)
  string(REGEX MATCHALL "${test_regex}" calls "${text}")
  foreach(call IN LISTS calls)
    string(REGEX REPLACE "^[^(]*\\(" "" arguments "${call}")
    string(REGEX REPLACE "[ \t\r\n]" "" arguments "${arguments}")
    string(REPLACE "," ";" names "${arguments}")
    foreach(name IN LISTS names)
      math(EXPR names_count "${names_count} + 1")
      # IDs at the start of the name or after "_".
      string(REGEX MATCHALL "(^|_)[A-G][0-9]+_[A-Z]" hits "${name}")
      foreach(hit IN LISTS hits)
        string(REGEX MATCH "[A-G][0-9]+" id "${hit}")
        if(NOT id IN_LIST used)
          list(APPEND used "${id}")
          file(RELATIVE_PATH relative "${SOURCE_DIR}" "${file}")
          string(REGEX REPLACE "^[^A-Z]" "" shown "${call}")
          set(first_use_${id} "${relative}: ${shown})")
        endif()
      endforeach()
    endforeach()
  endforeach()
endforeach()

list(LENGTH files files_count)
if(files_count EQUAL 0)
  message(FATAL_ERROR "no *.cpp under ${scanned_dirs} in ${SOURCE_DIR}: wrong SOURCE_DIR?")
endif()
if(NOT used)
  message(FATAL_ERROR "no rule ID in any test name under ${scanned_dirs}: the scan is broken")
endif()

if(DROP_HEADING)
  if(DROP_HEADING STREQUAL "FIRST_USED")
    list(GET used 0 DROP_HEADING)
  endif()
  list(REMOVE_ITEM headings "${DROP_HEADING}")
  message(STATUS "pretending that '### ${DROP_HEADING}' is missing from ${RULES_FILE}")
endif()

# ---- The verdict ------------------------------------------------------------------------------
set(missing_lines "")
set(missing_count 0)
foreach(id IN LISTS used)
  if(NOT id IN_LIST headings)
    string(APPEND missing_lines "\n  rule ${id}: used in test names but has no heading in docs/rules.md (first: ${first_use_${id}})")
    math(EXPR missing_count "${missing_count} + 1")
  endif()
endforeach()
list(LENGTH used used_count)
list(LENGTH headings headings_count)
if(missing_count GREATER 0)
  message(FATAL_ERROR "${missing_count} rule ID(s) in test names lack a '### <ID>' heading in ${RULES_FILE}:${missing_lines}")
endif()
list(SORT used COMPARE NATURAL)
string(REPLACE ";" " " used_text "${used}")
message(STATUS "rule IDs: ${files_count} files, ${names_count} test names, ${used_count} IDs used (${used_text}), all among the ${headings_count} headings of docs/rules.md")
