# The layers of lrbench: one folder, one library, and what each may include and link.
# The single source of both cmake/check_layers.cmake (every include, checked before
# anything compiles) and the libraries of suite/CMakeLists.txt (lrb_add_layer links a
# folder's library to the libraries of exactly the folders listed here).
#
# Bottom to top: suite/core (no lrbench includes); suite/contracts (what models, tasks and
# kernels implement: model and task interfaces, task descriptions, metrics, option
# schemas); the harness pieces; the models and tasks, which see only contracts, nn, the
# registry to register in, and core; one run (suite/run) below the job that runs a sweep
# over MPI ranks (suite/sweep); the CLI on top.
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
  "suite/run=suite/core suite/hdf5 suite/contracts suite/config suite/registry suite/mpi suite/runtime suite/store suite/nn suite/stats"
  "suite/sweep=suite/core suite/hdf5 suite/contracts suite/config suite/registry suite/mpi suite/runtime suite/store suite/stats suite/run"
  "suite/cli=suite/core suite/hdf5 suite/contracts suite/config suite/registry suite/mpi suite/runtime suite/store suite/nn suite/stats suite/report suite/run suite/sweep suite/slurm"
  "workloads/loaders=suite/core suite/hdf5 suite/contracts suite/registry"
  "workloads/tasks=suite/core suite/contracts suite/registry workloads/loaders"
  "workloads/maelre=suite/core suite/contracts suite/nn suite/registry suite/runtime"
  "workloads/torchscript=suite/core suite/contracts suite/registry"
  "baselines=suite/core suite/contracts suite/nn suite/registry suite/runtime")

# The third-party libraries each folder uses itself (its own #include <...>), by the names
# of LRB_THIRD_PARTY below. A folder's library links exactly these (suite/CMakeLists.txt
# says which CMake target each name is) and, through the folders below it, theirs; the
# check refuses a file that includes a third-party header its folder does not list.
set(LRB_LAYER_THIRD_PARTY
  "suite/core=json openssl dl"
  "suite/contracts=torch json toml"
  "suite/hdf5=hdf5"
  "suite/stats=boost"
  "suite/slurm=fmt"
  "suite/runtime=torch cuda fmt json"
  "suite/mpi=mpi fmt json cuda"
  "suite/registry="
  "suite/config=toml json fmt"
  "suite/store=fmt json"
  "suite/nn=torch dl"
  "suite/report=fmt json"
  "suite/run=torch fmt json"
  "suite/sweep=torch fmt json"
  "suite/cli=torch cli11 fmt json dl"
  "workloads/loaders=torch fmt zlib"
  "workloads/tasks=torch"
  "workloads/maelre=torch"
  "workloads/torchscript=torch zlib"
  "baselines=torch")

# Each third-party library by name: what its headers' paths look like (a regular
# expression on what follows "#include <"). A name no folder lists is a library lrbench
# does not use: including it is refused like any other undeclared edge.
set(LRB_THIRD_PARTY
  "json=nlohmann/"
  "toml=toml\\+\\+/"
  "fmt=fmt/"
  "boost=boost/"
  "openssl=openssl/"
  "hdf5=(hdf5[a-z_]*|H5[A-Za-z]*)\\.h>"
  "mpi=mpi\\.h>"
  "torch=(torch|ATen|c10)/"
  "cuda=(cuda[a-z_]*|nccl)\\.h>"
  "cli11=CLI/"
  "zlib=zlib\\.h>"
  "dl=dlfcn\\.h>"
  "spdlog=spdlog/"
  "gtest=(gtest|gmock)/"
  "benchmark=benchmark/")

# lrb_layer_third_party(<folder> <var>): the third-party names <folder> may include and links.
function(lrb_layer_third_party folder out)
  set(names "")
  foreach(rule ${LRB_LAYER_THIRD_PARTY})
    string(REPLACE "=" ";" parts "${rule}")
    list(GET parts 0 name)
    list(LENGTH parts n)
    if(name STREQUAL folder AND n GREATER 1)
      list(GET parts 1 listed)
      string(REPLACE " " ";" names "${listed}")
    endif()
  endforeach()
  set(${out} "${names}" PARENT_SCOPE)
endfunction()

# The folders whose files register themselves (LRB_REGISTER_*: attention kernels and
# building blocks, report formats, commands, tasks, models): nothing names such a file, so
# a static archive would let the linker drop it. Their libraries hand their object files
# to every program that links them (suite/CMakeLists.txt, lrb_add_layer).
set(LRB_SELF_REGISTERING_LAYERS suite/nn suite/report suite/cli workloads/tasks workloads/maelre workloads/torchscript baselines)

# The folder (layer) of a repository path: baselines/... is one layer, suite/x and workloads/x one each.
function(lrb_layer_of path out)
  string(REGEX MATCH "^(baselines|suite/[^/]+|workloads/[^/]+)" layer "${path}")
  set(${out} "${layer}" PARENT_SCOPE)
endfunction()

# lrb_layer_allowed(<folder> <allowed-var> <known-var>): the folders <folder> may include,
# and whether it is a layer at all.
function(lrb_layer_allowed folder allowed_out known_out)
  set(allowed "")
  set(known FALSE)
  foreach(rule ${LRB_LAYERS})
    string(REPLACE "=" ";" parts "${rule}")
    list(GET parts 0 name)
    if(name STREQUAL folder)
      set(known TRUE)
      list(LENGTH parts n)
      if(n GREATER 1)
        list(GET parts 1 targets)
        string(REPLACE " " ";" allowed "${targets}")
      endif()
    endif()
  endforeach()
  set(${allowed_out} "${allowed}" PARENT_SCOPE)
  set(${known_out} ${known} PARENT_SCOPE)
endfunction()

# lrb_layer_library(<folder> <var>): the library that builds <folder>: lrb_ and the folder's
# last name (suite/store: lrb_store; baselines: lrb_baselines).
function(lrb_layer_library folder out)
  get_filename_component(last "${folder}" NAME)
  set(${out} lrb_${last} PARENT_SCOPE)
endfunction()

# lrb_add_layer(<folder> [EXCLUDE <file>...] [SOURCES <file>...] [LINK <item>...]
# [HEADERS_ONLY <name>...]): the library of one folder, from every .cpp under it (less
# EXCLUDE, plus SOURCES), linked to the libraries of the folders it may include, to its
# third-party libraries (LRB_LAYER_THIRD_PARTY, less HEADERS_ONLY: names whose headers
# the caller adds itself) and to LINK. A self-registering folder is an
# object library, lrb_<name>_objects, behind an interface library lrb_<name> whose users
# link its objects (a static archive would let the linker drop the registrations); any
# other folder is a static library lrb_<name>. Either way other targets link lrb_<name>.
function(lrb_add_layer folder)
  cmake_parse_arguments(arg "" "" "EXCLUDE;SOURCES;LINK;HEADERS_ONLY" ${ARGN})
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${folder}/*.cpp)
  foreach(file ${arg_EXCLUDE})
    list(REMOVE_ITEM sources ${PROJECT_SOURCE_DIR}/${folder}/${file})
  endforeach()
  list(APPEND sources ${arg_SOURCES})
  lrb_layer_library(${folder} name)
  lrb_layer_allowed(${folder} below known)
  if(NOT known)
    message(FATAL_ERROR "lrb_add_layer: ${folder} has no place in cmake/layers.cmake's LRB_LAYERS")
  endif()
  set(links ${arg_LINK})
  lrb_layer_third_party(${folder} third_party)
  foreach(library ${third_party})
    if(NOT library IN_LIST arg_HEADERS_ONLY)
      if(NOT DEFINED LRB_LINK_${library})
        message(FATAL_ERROR "lrb_add_layer: ${folder} uses ${library}, which has no LRB_LINK_${library} (suite/CMakeLists.txt)")
      endif()
      list(APPEND links ${LRB_LINK_${library}})
    endif()
  endforeach()
  foreach(lower ${below})
    lrb_layer_library(${lower} lib)
    list(APPEND links ${lib})
  endforeach()
  if(folder IN_LIST LRB_SELF_REGISTERING_LAYERS)
    set(compiled ${name}_objects)
    add_library(${compiled} OBJECT ${sources})
    target_link_libraries(${compiled} PUBLIC ${links})
    add_library(${name} INTERFACE)
    target_link_libraries(${name} INTERFACE ${links} $<BUILD_INTERFACE:$<TARGET_OBJECTS:${compiled}>>)
  else()
    set(compiled ${name})
    add_library(${compiled} STATIC ${sources})
    target_link_libraries(${compiled} PUBLIC ${links})
  endif()
  add_dependencies(${compiled} lrb_layers)
  set_property(GLOBAL APPEND PROPERTY LRB_LAYER_TARGETS ${name})
  set_property(GLOBAL APPEND PROPERTY LRB_COMPILED_LAYER_TARGETS ${compiled})
endfunction()
