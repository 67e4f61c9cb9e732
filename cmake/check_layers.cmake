# Checks every include of suite/, workloads/ and baselines/ against the layers of
# cmake/layers.cmake, on every build (suite/CMakeLists.txt) and by ctest: each folder may
# include its own headers and those of the folders listed for it, nothing else. An include
# against the grain stops the build with the file, the line and the rule.
#   cmake -DSOURCE_DIR=<repository> -P cmake/check_layers.cmake

cmake_minimum_required(VERSION 3.22)  # script mode: today's policies (IN_LIST, empty list items)
include(${CMAKE_CURRENT_LIST_DIR}/layers.cmake)
if(NOT SOURCE_DIR)
  message(FATAL_ERROR "check_layers: give -DSOURCE_DIR=<the repository>")
endif()

set(problems "")
file(GLOB_RECURSE sources RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/suite/*.h" "${SOURCE_DIR}/suite/*.cpp"
     "${SOURCE_DIR}/workloads/*.h" "${SOURCE_DIR}/workloads/*.cpp" "${SOURCE_DIR}/baselines/*.h" "${SOURCE_DIR}/baselines/*.cpp")
foreach(src ${sources})
  lrb_layer_of("${src}" from)
  lrb_layer_allowed("${from}" allowed known)
  if(NOT known)
    string(APPEND problems "  ${src}: the folder ${from} has no place in the layers (cmake/layers.cmake)\n")
    continue()
  endif()
  file(STRINGS "${SOURCE_DIR}/${src}" includes REGEX "^#include \"(suite|workloads|baselines)/")
  foreach(line ${includes})
    string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" header "${line}")
    lrb_layer_of("${header}" to)
    if(NOT to STREQUAL from AND NOT to IN_LIST allowed)
      string(APPEND problems "  ${src}: includes ${header}, but ${from} may include only: ${allowed}\n")
    endif()
  endforeach()
endforeach()
if(problems)
  message(FATAL_ERROR "check_layers: includes against the layers (cmake/layers.cmake says which folder may "
                      "include which; move the shared piece down, or change the rule there with a reason):\n${problems}")
endif()
