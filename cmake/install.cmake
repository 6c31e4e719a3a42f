# Install rules and the CMake package: `cmake --install <build> --prefix <dir>`, then in a
# consumer `find_package(readyport CONFIG REQUIRED COMPONENTS core testing)`.
#
# Installed (and nothing else: no test, benchmark, example or stress binary):
#   include/readyport/**.hpp               core/include/readyport (internal/ too) and version.hpp
#   include/readyport/fake/*.hpp           fakes/<concept>/include, without internal/
#                                          (component testing)
#   lib/ (bin/ for DLLs)                   readyport_core; the kit's libraries, one per concept
#                                          of fakes/ (component testing)
#   lib/cmake/readyport/                   readyportConfig.cmake, readyportConfigVersion.cmake
#                                          (SameMinorVersion while 0.x, then SameMajorVersion),
#                                          one targets file per component
#   share/doc/readyport/LICENSE
# Headers are installed by directory, so a new header is picked up without editing this file.
# Every path in the generated files is relative to the install prefix (no build or source path).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(READYPORT_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/readyport" CACHE STRING
    "Where readyportConfig.cmake is installed, relative to the prefix")
mark_as_advanced(READYPORT_INSTALL_CMAKEDIR)

# readyport_install_component(TARGETS <target>... COMPONENT <name> HEADERS <dir>...
# [EXCLUDE <folder name>]): the libraries, their headers (each <dir> installed as include/<its
# name>, without the folders named EXCLUDE) and the component's exported targets file readyport-<name>-targets.cmake, which defines all of the targets.
function(readyport_install_component)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "COMPONENT;EXCLUDE" "TARGETS;HEADERS")
  set(exclude "")
  if(arg_EXCLUDE)
    set(exclude PATTERN "${arg_EXCLUDE}" EXCLUDE)
  endif()
  install(TARGETS ${arg_TARGETS} EXPORT readyport-${arg_COMPONENT}-targets
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT ${arg_COMPONENT}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT ${arg_COMPONENT}
                  NAMELINK_COMPONENT ${arg_COMPONENT}
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT ${arg_COMPONENT}
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(DIRECTORY ${arg_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
          COMPONENT ${arg_COMPONENT} FILES_MATCHING PATTERN "*.hpp" ${exclude})
  install(EXPORT readyport-${arg_COMPONENT}-targets NAMESPACE readyport::
          DESTINATION ${READYPORT_INSTALL_CMAKEDIR} COMPONENT ${arg_COMPONENT})
endfunction()

# core: core/include/readyport (and internal/), plus the generated version.hpp.
readyport_install_component(TARGETS readyport_core COMPONENT core
                            HEADERS "${PROJECT_SOURCE_DIR}/core/include/readyport")
install(FILES "${READYPORT_GENERATED_INCLUDE_DIR}/readyport/version.hpp"
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/readyport COMPONENT core)

# testing: readyport::testing (an interface library) and the kit's libraries it links, one per
# concept of fakes/ (fakes/CMakeLists.txt), in one targets file; their public headers all go to
# include/readyport/fake, never readyport/fake/internal/ (the kit's own). The kit links
# readyport::core, which the core targets file defines (readyportConfig.cmake loads it first).
set(READYPORT_INSTALLED_COMPONENTS core)
set(READYPORT_KIT_CONCEPTS trace runtime os recording faults oracle world harness)
if(READYPORT_TESTING)
  set(readyport_kit_headers "")
  foreach(concept IN LISTS READYPORT_KIT_CONCEPTS)
    list(APPEND readyport_kit_headers "${PROJECT_SOURCE_DIR}/fakes/${concept}/include/readyport")
  endforeach()
  readyport_install_component(TARGETS readyport_testing readyport_harness readyport_world
                                      readyport_oracle
                                      readyport_faults readyport_recording readyport_fake_os
                                      readyport_runtime readyport_trace
                              COMPONENT testing
                              HEADERS ${readyport_kit_headers}
                              EXCLUDE "internal")
  list(APPEND READYPORT_INSTALLED_COMPONENTS testing)
endif()

configure_package_config_file("${CMAKE_CURRENT_LIST_DIR}/readyportConfig.cmake.in"
                              "${PROJECT_BINARY_DIR}/generated/readyportConfig.cmake"
                              INSTALL_DESTINATION ${READYPORT_INSTALL_CMAKEDIR})
# While the major version is 0 a minor release may break the API (CHANGELOG.md): a request for
# 0.1 accepts 0.1.x only. From 1.0 on, the major version decides.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(readyport_compatibility SameMinorVersion)
else()
  set(readyport_compatibility SameMajorVersion)
endif()
write_basic_package_version_file("${PROJECT_BINARY_DIR}/generated/readyportConfigVersion.cmake"
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY ${readyport_compatibility})
install(FILES "${PROJECT_BINARY_DIR}/generated/readyportConfig.cmake"
              "${PROJECT_BINARY_DIR}/generated/readyportConfigVersion.cmake"
        DESTINATION ${READYPORT_INSTALL_CMAKEDIR} COMPONENT core)
install(FILES "${PROJECT_SOURCE_DIR}/LICENSE" DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT core)
