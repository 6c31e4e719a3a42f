# Canaries: planted engine bugs that measure the suite's power (TigerBeetle's "a fuzzer that must
# fail"). Each is a patch, ci/canaries/<name>.patch; the engine's sources carry none.
# ci/canary_tree.sh makes a copy of the sources with one applied, and a build configured from that
# copy with READYPORT_CANARY=<name> is that canary's build (readyport-stress --version and its
# bundles name it). The canary leg of ci/test.sh (ci/canaries.sh) builds each and requires the
# main job's default run to fail on it. Never set in a build that anyone ships or embeds.
#
# Checked here: each name of the list has its patch and each patch is in the list; a tree
# configured with READYPORT_CANARY=<name> carries that patch, and one configured without carries
# none (a patch is there when a file it changes holds its marker, "CANARY <name>:", which the
# patch's added lines hold).
set(READYPORT_CANARIES free_before_remove remove_failure_as_done dispatch_after_close
    double_remove)
set(READYPORT_CANARY "" CACHE STRING
    "The engine bug planted in ci/canary_tree.sh's copy (test builds only): ${READYPORT_CANARIES}")

# readyport_canary_planted(NAME OUT FILES): OUT is TRUE when a file that ci/canaries/NAME.patch
# changes holds the marker "CANARY NAME:" in this source tree; FILES, the files it changes.
function(readyport_canary_planted name out files)
  set(planted FALSE)
  set(paths "")
  file(STRINGS "${PROJECT_SOURCE_DIR}/ci/canaries/${name}.patch" targets REGEX "^\\+\\+\\+ b/")
  foreach(target IN LISTS targets)
    string(REGEX REPLACE "^\\+\\+\\+ b/" "" path "${target}")
    string(APPEND paths " ${path}")
    if(EXISTS "${PROJECT_SOURCE_DIR}/${path}")
      file(STRINGS "${PROJECT_SOURCE_DIR}/${path}" marks REGEX "CANARY ${name}:")
      if(marks)
        set(planted TRUE)
      endif()
    endif()
  endforeach()
  set(${out} ${planted} PARENT_SCOPE)
  string(STRIP "${paths}" paths)
  set(${files} "${paths}" PARENT_SCOPE)
endfunction()

file(GLOB readyport_canary_patches RELATIVE "${PROJECT_SOURCE_DIR}/ci/canaries"
     "${PROJECT_SOURCE_DIR}/ci/canaries/*.patch")
foreach(patch IN LISTS readyport_canary_patches)
  string(REGEX REPLACE "\\.patch$" "" name "${patch}")
  if(NOT name IN_LIST READYPORT_CANARIES)
    message(FATAL_ERROR "ci/canaries/${patch} is not in cmake/canary.cmake's list: add '${name}'")
  endif()
endforeach()
foreach(name IN LISTS READYPORT_CANARIES)
  if(NOT EXISTS "${PROJECT_SOURCE_DIR}/ci/canaries/${name}.patch")
    message(FATAL_ERROR "canary '${name}' of the list has no ci/canaries/${name}.patch")
  endif()
  readyport_canary_planted(${name} planted files)
  if(planted AND NOT READYPORT_CANARY STREQUAL name)
    message(FATAL_ERROR
      "the sources at ${PROJECT_SOURCE_DIR} carry canary '${name}' (ci/canaries/${name}.patch is "
      "applied), but READYPORT_CANARY is '${READYPORT_CANARY}': a canary is built only from "
      "ci/canary_tree.sh's copy with -DREADYPORT_CANARY=${name}; restore the engine's sources "
      "(git checkout -- ${files})")
  endif()
endforeach()
if(READYPORT_CANARY)
  if(NOT READYPORT_CANARY IN_LIST READYPORT_CANARIES)
    message(FATAL_ERROR "READYPORT_CANARY=${READYPORT_CANARY} is not one of: ${READYPORT_CANARIES}")
  endif()
  readyport_canary_planted(${READYPORT_CANARY} planted files)
  if(NOT planted)
    message(FATAL_ERROR
      "READYPORT_CANARY=${READYPORT_CANARY}, but the sources at ${PROJECT_SOURCE_DIR} do not carry "
      "ci/canaries/${READYPORT_CANARY}.patch: configure the copy that ci/canary_tree.sh makes, "
      "bash ci/canary_tree.sh ${READYPORT_CANARY}; cmake --preset default -S "
      "build/canary-src-${READYPORT_CANARY} -DREADYPORT_CANARY=${READYPORT_CANARY} (its build: "
      "build/canary-src-${READYPORT_CANARY}/build/default)")
  endif()
  message(WARNING "readyport: canary '${READYPORT_CANARY}' planted in the engine "
                  "(ci/canaries/${READYPORT_CANARY}.patch; a test build)")
endif()
