# The layers of lrbench, checked on every build (suite/CMakeLists.txt) and by ctest: each
# folder may include its own headers and those of the folders listed for it, nothing
# else. An include against the grain stops the build with the file, the line and the rule.
#   cmake -DSOURCE_DIR=<repository> -P cmake/check_layers.cmake
#
# Bottom to top: suite/core (no lrbench includes); suite/contracts (what models, tasks and
# kernels implement: model and task interfaces, task descriptions, metrics, option
# schemas); the harness pieces; the models and tasks, which see only contracts, nn, the
# registry to register in, and core; the CLI on top.
set(LRB_LAYERS
  "suite/core="
  "suite/contracts=suite/core"
  "suite/hdf5=suite/core"
  "suite/stats=suite/core"
  "suite/slurm=suite/core"
  "suite/runtime=suite/core"
  "suite/mpi=suite/core"
  "suite/registry=suite/core suite/contracts"
  "suite/config=suite/core suite/contracts suite/registry"
  "suite/store=suite/core suite/hdf5 suite/contracts suite/config"
  "suite/nn=suite/core suite/contracts"
  "suite/report=suite/core suite/contracts suite/stats suite/store suite/config"
  "suite/run=suite/core suite/hdf5 suite/contracts suite/config suite/registry suite/mpi suite/runtime suite/store suite/nn"
  "suite/cli=suite/core suite/hdf5 suite/contracts suite/config suite/registry suite/mpi suite/runtime suite/store suite/nn suite/stats suite/report suite/run suite/slurm"
  "workloads/loaders=suite/core suite/hdf5 suite/contracts suite/registry"
  "workloads/tasks=suite/core suite/contracts suite/registry workloads/loaders"
  "workloads/maelre=suite/core suite/contracts suite/nn suite/registry suite/runtime"
  "baselines=suite/core suite/contracts suite/nn suite/registry suite/runtime")

cmake_minimum_required(VERSION 3.22)  # script mode: today's policies (IN_LIST, empty list items)
if(NOT SOURCE_DIR)
  message(FATAL_ERROR "check_layers: give -DSOURCE_DIR=<the repository>")
endif()

# The folder (layer) of a repository path: baselines/... is one layer, suite/x and workloads/x one each.
function(lrb_layer_of path out)
  string(REGEX MATCH "^(baselines|suite/[^/]+|workloads/[^/]+)" layer "${path}")
  set(${out} "${layer}" PARENT_SCOPE)
endfunction()

set(problems "")
file(GLOB_RECURSE sources RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/suite/*.h" "${SOURCE_DIR}/suite/*.cpp"
     "${SOURCE_DIR}/workloads/*.h" "${SOURCE_DIR}/workloads/*.cpp" "${SOURCE_DIR}/baselines/*.h" "${SOURCE_DIR}/baselines/*.cpp")
foreach(src ${sources})
  lrb_layer_of("${src}" from)
  set(allowed "")
  set(known FALSE)
  foreach(rule ${LRB_LAYERS})
    string(REPLACE "=" ";" parts "${rule}")
    list(GET parts 0 name)
    if(name STREQUAL from)
      set(known TRUE)
      list(LENGTH parts n)
      if(n GREATER 1)
        list(GET parts 1 targets)
        string(REPLACE " " ";" allowed "${targets}")
      endif()
    endif()
  endforeach()
  if(NOT known)
    string(APPEND problems "  ${src}: the folder ${from} has no place in the layers (cmake/check_layers.cmake)\n")
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
  message(FATAL_ERROR "check_layers: includes against the layers (cmake/check_layers.cmake says which folder may "
                      "include which; move the shared piece down, or change the rule there with a reason):\n${problems}")
endif()
