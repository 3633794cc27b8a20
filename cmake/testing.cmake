# SPDX-License-Identifier: Apache-2.0
# weft_add_gtest(TARGET [TIMEOUT seconds] [LABELS l...] [ENVIRONMENT v=x...]): registers a
# GoogleTest executable with ctest.
#
# With WEFT_TEST_PER_PROCESS on (the default in plain builds) every test case is its own ctest
# test, run in a fresh process (gtest_discover_tests, listed when ctest runs, so that discovery
# runs under whatever ctest is run with, e.g. setarch -R for TSan). Off (the default in sanitized
# builds) the executable is one ctest test that runs all its cases in one process: a sanitized
# process costs 0.1-0.3 s to start and tear down (shadow memory, LeakSanitizer's scan at exit),
# which over a thousand cases is most of the sanitizer runs' time. Each case still sets up and
# tears down its own runtime, so the cases do not depend on running alone. TIMEOUT (per case)
# times three then bounds the whole executable; the log of a run that failed or hung ends with the
# case that was running (googletest prints each case as it starts).
include(GoogleTest)

if(WEFT_SANITIZE)
  set(_weft_test_per_process_default OFF)
else()
  set(_weft_test_per_process_default ON)
endif()
option(WEFT_TEST_PER_PROCESS
  "Register every GoogleTest case as its own ctest test (off: one ctest test per executable)"
  ${_weft_test_per_process_default})

function(weft_add_gtest target)
  cmake_parse_arguments(arg "" "TIMEOUT" "LABELS;ENVIRONMENT" ${ARGN})
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT 300)
  endif()
  set(properties TIMEOUT ${arg_TIMEOUT})
  if(arg_LABELS)
    list(APPEND properties LABELS "${arg_LABELS}")
  endif()
  if(arg_ENVIRONMENT)
    list(APPEND properties ENVIRONMENT "${arg_ENVIRONMENT}")
  endif()
  if(WEFT_TEST_PER_PROCESS)
    gtest_discover_tests(${target}
      DISCOVERY_MODE PRE_TEST
      DISCOVERY_TIMEOUT 60
      PROPERTIES ${properties})
  else()
    add_test(NAME ${target} COMMAND ${target})
    math(EXPR whole "${arg_TIMEOUT} * 3")
    list(REMOVE_AT properties 0 1)
    set_tests_properties(${target} PROPERTIES TIMEOUT ${whole} ${properties})
  endif()
endfunction()
