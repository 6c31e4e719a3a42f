# Install rules and the CMake package: `cmake --install <build> --prefix <dir>`, then in a
# consumer `find_package(readyport CONFIG REQUIRED COMPONENTS core testing)`.
#
# Installed (and nothing else: no test, benchmark, example or stress binary):
#   include/readyport/**.hpp               core/include/readyport (internal/ too) and version.hpp
#   include/readyport/fake/*.hpp           fakes/include, fakes/trace/include and
#                                          fakes/oracle/include (component testing)
#   lib/ (bin/ for DLLs)                   readyport_core; readyport_fakes, readyport_trace,
#                                          readyport_oracle (component testing)
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

# readyport_install_component(TARGETS <target>... COMPONENT <name> HEADERS <dir>...): the
# libraries, their headers (each <dir> installed as include/<its name>) and the component's
# exported targets file readyport-<name>-targets.cmake, which defines all of the targets.
function(readyport_install_component)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "COMPONENT" "TARGETS;HEADERS")
  install(TARGETS ${arg_TARGETS} EXPORT readyport-${arg_COMPONENT}-targets
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT ${arg_COMPONENT}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT ${arg_COMPONENT}
                  NAMELINK_COMPONENT ${arg_COMPONENT}
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT ${arg_COMPONENT}
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(DIRECTORY ${arg_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
          COMPONENT ${arg_COMPONENT} FILES_MATCHING PATTERN "*.hpp")
  install(EXPORT readyport-${arg_COMPONENT}-targets NAMESPACE readyport::
          DESTINATION ${READYPORT_INSTALL_CMAKEDIR} COMPONENT ${arg_COMPONENT})
endfunction()

# core: core/include/readyport (and internal/), plus the generated version.hpp.
readyport_install_component(TARGETS readyport_core COMPONENT core
                            HEADERS "${PROJECT_SOURCE_DIR}/core/include/readyport")
install(FILES "${READYPORT_GENERATED_INCLUDE_DIR}/readyport/version.hpp"
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/readyport COMPONENT core)

# testing: readyport::testing (readyport_fakes) and the two libraries it links, readyport::trace
# and readyport::oracle, in one targets file; their headers all go to include/readyport/fake.
# readyport::trace links readyport::core, which the core targets file defines
# (readyportConfig.cmake always loads it first).
set(READYPORT_INSTALLED_COMPONENTS core)
if(READYPORT_TESTING)
  readyport_install_component(TARGETS readyport_fakes readyport_oracle readyport_trace
                              COMPONENT testing
                              HEADERS "${PROJECT_SOURCE_DIR}/fakes/include/readyport"
                                      "${PROJECT_SOURCE_DIR}/fakes/trace/include/readyport"
                                      "${PROJECT_SOURCE_DIR}/fakes/oracle/include/readyport")
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
