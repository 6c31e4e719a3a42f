# The readyport overlay port, used from a checkout of the repository:
#
#   vcpkg install "readyport[testing]" --classic --overlay-ports=<checkout>/ports --triplet x64-windows
#
# Source: this port builds the checkout it lives in (two directories up from this file), not a
# download, so that CI and developers package exactly the tree in front of them; a port in a
# registry would use vcpkg_from_github with a REF and SHA512 instead. To package another checkout,
# set READYPORT_SOURCE_DIR and let it through vcpkg's clean build environment:
#   set READYPORT_SOURCE_DIR=D:\src\readyport
#   set VCPKG_KEEP_ENV_VARS=READYPORT_SOURCE_DIR
# vcpkg's binary cache keys a package by the port's files, not by that source tree: after changing
# the sources, reinstall with --binarysource=clear (or `vcpkg remove readyport` first).
if(DEFINED ENV{READYPORT_SOURCE_DIR} AND NOT "$ENV{READYPORT_SOURCE_DIR}" STREQUAL "")
  file(TO_CMAKE_PATH "$ENV{READYPORT_SOURCE_DIR}" SOURCE_PATH)
else()
  get_filename_component(SOURCE_PATH "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
endif()
if(NOT EXISTS "${SOURCE_PATH}/CMakeLists.txt" OR NOT EXISTS "${SOURCE_PATH}/core/include/readyport/engine.hpp")
  message(FATAL_ERROR "readyport sources not found at ${SOURCE_PATH}: use this port from a checkout (ports/readyport) or set READYPORT_SOURCE_DIR (with VCPKG_KEEP_ENV_VARS=READYPORT_SOURCE_DIR)")
endif()

vcpkg_check_features(OUT_FEATURE_OPTIONS FEATURE_OPTIONS
  FEATURES
    testing READYPORT_TESTING
)

vcpkg_cmake_configure(
  SOURCE_PATH "${SOURCE_PATH}"
  OPTIONS
    ${FEATURE_OPTIONS}
    -DREADYPORT_TESTS=OFF
    -DREADYPORT_INSTALL=ON
    -DREADYPORT_WERROR=OFF
    -DREADYPORT_CONSUMER_TESTS=OFF
)
vcpkg_cmake_install()
vcpkg_cmake_config_fixup(CONFIG_PATH lib/cmake/readyport)
vcpkg_copy_pdbs()

file(REMOVE_RECURSE "${CURRENT_PACKAGES_DIR}/debug/include" "${CURRENT_PACKAGES_DIR}/debug/share")
# The licence is installed as share/readyport/copyright below, not under share/doc.
file(REMOVE_RECURSE "${CURRENT_PACKAGES_DIR}/share/doc")

file(INSTALL "${CMAKE_CURRENT_LIST_DIR}/usage" DESTINATION "${CURRENT_PACKAGES_DIR}/share/${PORT}")
vcpkg_install_copyright(FILE_LIST "${SOURCE_PATH}/LICENSE")
