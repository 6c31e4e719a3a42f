# readyport_warnings(target): the project's warning set, errors when READYPORT_WERROR is on.
function(readyport_warnings target)
  if(MSVC)
    target_compile_options(${target} PRIVATE /W4 /permissive-)
    if(READYPORT_WERROR)
      target_compile_options(${target} PRIVATE /WX)
    endif()
  else()
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                             -Wno-sign-conversion)
    # Clang checks the engine's locking annotations (readyport/internal/thread_annotations.hpp):
    # guarded state touched without its lock is a warning, an error under READYPORT_WERROR.
    if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
      target_compile_options(${target} PRIVATE -Wthread-safety)
    endif()
    if(READYPORT_WERROR)
      target_compile_options(${target} PRIVATE -Werror)
    endif()
  endif()
endfunction()
