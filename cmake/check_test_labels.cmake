# Checks that every test discovered in lrb_tests carries the label of its folder beside its
# prefix label (cmake/test_folders.cmake labels a test whose suite it could not place
# "folder-unknown"), and that each folder label selects tests.
#   cmake -DCTEST=<ctest> -DBUILD_DIR=<build> -P cmake/check_test_labels.cmake
cmake_minimum_required(VERSION 3.22)
function(count_tests label out)
  execute_process(COMMAND ${CTEST} -N -L "^${label}$" WORKING_DIRECTORY ${BUILD_DIR}
                  OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR NOT listing MATCHES "Total Tests: ([0-9]+)")
    message(FATAL_ERROR "check_test_labels: ctest -N -L ${label} failed in ${BUILD_DIR}:\n${listing}")
  endif()
  set(${out} ${CMAKE_MATCH_1} PARENT_SCOPE)
  set(${out}_listing "${listing}" PARENT_SCOPE)
endfunction()

count_tests(folder-unknown unknown)
if(NOT unknown EQUAL 0)
  message(FATAL_ERROR "check_test_labels: ${unknown} tests of lrb_tests have no folder label (their suite was not "
                      "found in tests/unit, tests/integration or tests/faults by cmake/test_folders.cmake):\n${unknown_listing}")
endif()
foreach(folder unit integration faults)
  count_tests(${folder} n)
  if(n EQUAL 0)
    message(FATAL_ERROR "check_test_labels: no test is labelled ${folder}")
  endif()
  message(STATUS "check_test_labels: ${n} tests labelled ${folder}")
endforeach()
