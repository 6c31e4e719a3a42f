# readyport_library_properties(target): what an installable library of readyport needs beside its
# sources (readyport_core and the testing kit's libraries).
#
# - VERSION / SOVERSION for shared builds (BUILD_SHARED_LIBS=ON): libreadyport_core.so.0.1.0.
# - Windows shared builds (MSVC, clang-cl, mingw-w64 with BUILD_SHARED_LIBS=ON, vcpkg's
#   x64-windows): WINDOWS_EXPORT_ALL_SYMBOLS exports every function and every class's members and
#   vtables from the DLL, with no __declspec in the headers. That is enough here because neither
#   library has a data symbol a consumer refers to: the headers' constants are `inline
#   constexpr` (compiled into the consumer), there are no static data members, and the few
#   globals (thread_locals of the engine and the runtimes) live in anonymous namespaces of the
#   .cpp files. A variable exported from a DLL would need __declspec(dllimport) at the consumer,
#   which this property cannot add: a change that exports data must switch to
#   generate_export_header.
# - -ffile-prefix-map (GCC 8+, Clang 10+): debug information and __FILE__ name files of the build
#   tree (the generated version.cpp, the compile directory) relative to it, so the installed
#   libraries do not carry the build directory's path (tests/consumer checks it). Source files
#   keep their absolute paths: debuggers still find the sources.
include(CheckCXXCompilerFlag)
if(NOT MSVC)
  check_cxx_compiler_flag("-ffile-prefix-map=${CMAKE_BINARY_DIR}=." READYPORT_HAVE_FILE_PREFIX_MAP)
endif()

function(readyport_library_properties target)
  set_target_properties(${target} PROPERTIES
    VERSION ${PROJECT_VERSION}
    SOVERSION ${PROJECT_VERSION_MAJOR}
    WINDOWS_EXPORT_ALL_SYMBOLS ON)
  if(READYPORT_HAVE_FILE_PREFIX_MAP)
    target_compile_options(${target} PRIVATE "-ffile-prefix-map=${CMAKE_BINARY_DIR}=.")
  endif()
endfunction()

# readyport_kit_library(<target> EXPORT_NAME <name> SOURCES <file>... LINKS <target>...): one
# concept of the testing kit (fakes/<concept>/): its sources, its headers in <concept>/include
# (public ones in readyport/fake/, the kit's internal ones in readyport/fake/internal/, which is
# never installed), the libraries it builds on (PUBLIC), and readyport::<name>.
function(readyport_kit_library target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "EXPORT_NAME" "SOURCES;LINKS")
  add_library(${target} ${arg_SOURCES})
  add_library(readyport::${arg_EXPORT_NAME} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${arg_EXPORT_NAME})
  # Installed headers are found through install(TARGETS ... INCLUDES DESTINATION) (install.cmake).
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>)
  target_compile_features(${target} PUBLIC cxx_std_20)
  readyport_library_properties(${target})
  target_link_libraries(${target} PUBLIC ${arg_LINKS})
  readyport_warnings(${target})
endfunction()
