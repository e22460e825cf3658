# lagscope_add_test_cases(TARGET PREFIX SOURCE [LABELS l…] [TIMEOUT s] [SUFFIX s]
#                         [RUNNER command…]): one CTest per TEST_CASE(name) line of SOURCE
# (tests/support/cases.h), named PREFIX_name (PREFIX_nameSUFFIX with SUFFIX), running
# `TARGET name` (`RUNNER… TARGET name` with RUNNER, e.g. setarch). The list lives in the source
# only; CMake re-reads it when the file changes.
function(lagscope_add_test_cases target prefix source)
  cmake_parse_arguments(ARG "" "TIMEOUT;SUFFIX" "LABELS;RUNNER" ${ARGN})
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${source})
  file(STRINGS ${source} lines REGEX "^[ \t]*TEST_CASE\\([a-z0-9_]+\\),?[ \t]*$")
  if(NOT lines)
    message(FATAL_ERROR "${source}: no TEST_CASE(name) lines")
  endif()
  foreach(line ${lines})
    string(REGEX REPLACE "^[ \t]*TEST_CASE\\(([a-z0-9_]+)\\).*$" "\\1" name "${line}")
    set(test ${prefix}_${name}${ARG_SUFFIX})
    add_test(NAME ${test} COMMAND ${ARG_RUNNER} $<TARGET_FILE:${target}> ${name})
    if(ARG_LABELS)
      set_tests_properties(${test} PROPERTIES LABELS "${ARG_LABELS}")
    endif()
    if(ARG_TIMEOUT)
      set_tests_properties(${test} PROPERTIES TIMEOUT ${ARG_TIMEOUT})
    endif()
  endforeach()
endfunction()
