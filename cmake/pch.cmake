# Precompiled headers (CI build time, docs/development.md): the heavy third-party headers every
# translation unit of a target parses again (nlohmann/json, fmt, CLI11, Catch2) are parsed once per
# target. C++ only (nvcc compiles cuda/ without them). GPUBENCH_PCH=OFF builds without.
option(GPUBENCH_PCH "Precompile the third-party headers of the host targets" ON)

function(gpubench_precompile target)
  if(NOT GPUBENCH_PCH)
    return()
  endif()
  set(headers)
  foreach(h IN LISTS ARGN)
    list(APPEND headers "$<$<COMPILE_LANGUAGE:CXX>:${h}>")
  endforeach()
  target_precompile_headers(${target} PRIVATE ${headers})
endfunction()

# A source compiled with options the header was not precompiled with, or one that must see its
# headers after its own #defines (Catch2's CATCH_CONFIG_MAIN), parses them itself: no precompiled
# header, and in a unity build (CMAKE_UNITY_BUILD, the sanitizer build of CI) a translation unit
# of its own.
function(gpubench_no_pch)
  set_source_files_properties(${ARGN} PROPERTIES SKIP_PRECOMPILE_HEADERS ON
                                                 SKIP_UNITY_BUILD_INCLUSION ON)
endfunction()
