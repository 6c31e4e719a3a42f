# docs.readme_snippets: every block of source lines marked
#   // readme-snippet: NAME begin
#   ...
#   // readme-snippet: NAME end
# in a test under SOURCE_DIR (core/, fakes/, stress/, properties/, examples/, tests/) appears,
# its indentation removed, line for line as one block of README.md. So the README shows code
# that a test compiles and runs, and cannot drift from it.
#   cmake -DSOURCE_DIR=<repo> [-DBREAK=1] -P cmake/check_snippets.cmake
# BREAK=1 changes one line of each snippet before looking for it: the check must then fail
# (docs.readme_snippets_catches_a_change), or it could not fail at all.
cmake_minimum_required(VERSION 3.25)
file(READ "${SOURCE_DIR}/README.md" readme)
file(GLOB_RECURSE sources LIST_DIRECTORIES false
     "${SOURCE_DIR}/core/*.cpp" "${SOURCE_DIR}/fakes/*.cpp" "${SOURCE_DIR}/stress/*.cpp"
     "${SOURCE_DIR}/properties/*.cpp" "${SOURCE_DIR}/examples/*.cpp" "${SOURCE_DIR}/tests/*.cpp")
list(SORT sources)
set(found 0)
set(failures "")
foreach(source IN LISTS sources)
  file(STRINGS "${source}" lines)
  set(name "")
  foreach(line IN LISTS lines)
    if(line MATCHES "// readme-snippet: ([a-z0-9-]+) begin$")
      set(name "${CMAKE_MATCH_1}")
      set(block "")
      set(indent "")
      continue()
    endif()
    if(name STREQUAL "")
      continue()
    endif()
    if(line MATCHES "// readme-snippet: ([a-z0-9-]+) end$")
      math(EXPR found "${found} + 1")
      if(BREAK)
        string(APPEND block "// a line the README does not have\n")
      endif()
      string(FIND "${readme}" "${block}" at)
      if(at EQUAL -1)
        string(APPEND failures "snippet '${name}' of ${source} is not in README.md as written\n")
      endif()
      set(name "")
      continue()
    endif()
    if(indent STREQUAL "")
      string(REGEX MATCH "^ *" indent "${line}")
    endif()
    string(LENGTH "${indent}" indent_length)
    string(SUBSTRING "${line}" 0 ${indent_length} head)
    if(head STREQUAL indent)
      string(SUBSTRING "${line}" ${indent_length} -1 line)
    endif()
    string(APPEND block "${line}\n")
  endforeach()
endforeach()
if(found EQUAL 0)
  message(FATAL_ERROR "readme snippets: no marked snippet found under ${SOURCE_DIR}")
endif()
if(NOT failures STREQUAL "")
  message(FATAL_ERROR "readme snippets: ${failures}")
endif()
message(STATUS "readme snippets: ${found} snippet(s), each in README.md as written")
