# The CUDA and NCCL paths: every source that has CUDA or NCCL code (found by
# lrb_cuda_sources below: the same rule scripts/cuda_compile_check.py applies to a build's
# compile_commands.json in CI).
#
# LRB_WITH_CUDA=ON: a CUDA LibTorch (Torch_DIR) and the CUDA toolkit are required; the
# paths are compiled in and linked against c10_cuda, torch_cuda and cudart.
# LRB_WITH_NCCL=ON (with LRB_WITH_CUDA): data-parallel groups sum their gradients over
# NCCL (suite/mpi/nccl_run_group.cpp); NCCL's header and library are found under
# NCCL_ROOT, the CUDA toolkit, or the system's paths.
#
# LRB_WITH_CUDA=OFF (CPU LibTorch): the same sources are still compiled once more with
# LRB_WITH_CUDA (and, when nccl.h is there, LRB_WITH_NCCL) defined, into objects that
# nothing links, whenever the CUDA headers and LibTorch's c10/cuda headers are present —
# a compile check of every CUDA path against this LibTorch's headers. Whether it runs is
# printed at configure time.

# The repository's C++ sources with a preprocessor line that tests LRB_WITH_CUDA or
# LRB_WITH_NCCL or includes a CUDA, NCCL, c10/cuda or ATen/cuda header (a header with such
# code must be included by such a source: scripts/cuda_sources.py checks that in CI).
function(lrb_cuda_sources out)
  file(GLOB_RECURSE candidates LIST_DIRECTORIES false
       ${PROJECT_SOURCE_DIR}/suite/*.cpp ${PROJECT_SOURCE_DIR}/workloads/*.cpp ${PROJECT_SOURCE_DIR}/baselines/*.cpp)
  set(found "")
  foreach(f ${candidates})
    file(STRINGS ${f} hits REGEX "^[ \t]*#[ \t]*((if|ifdef|ifndef|elif)[ \t].*LRB_WITH_(CUDA|NCCL)|include[ \t]*<(cuda[a-z_]*\\.h|nccl\\.h|c10/cuda/|ATen/cuda/))")
    if(hits)
      list(APPEND found ${f})
    endif()
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()
lrb_cuda_sources(LRB_CUDA_SOURCES)

if(LRB_WITH_NCCL AND NOT LRB_WITH_CUDA)
  message(FATAL_ERROR "LRB_WITH_NCCL=ON needs LRB_WITH_CUDA=ON: NCCL sums gradients on CUDA devices")
endif()

if(LRB_WITH_CUDA)
  find_library(LRB_C10_CUDA_LIBRARY c10_cuda HINTS "${TORCH_INSTALL_PREFIX}/lib" PATH_SUFFIXES ${CMAKE_LIBRARY_ARCHITECTURE} NO_DEFAULT_PATH)
  find_library(LRB_TORCH_CUDA_LIBRARY torch_cuda HINTS "${TORCH_INSTALL_PREFIX}/lib" PATH_SUFFIXES ${CMAKE_LIBRARY_ARCHITECTURE} NO_DEFAULT_PATH)
  if(NOT LRB_C10_CUDA_LIBRARY OR NOT LRB_TORCH_CUDA_LIBRARY)
    message(FATAL_ERROR "LRB_WITH_CUDA=ON but the LibTorch at ${TORCH_INSTALL_PREFIX} has no CUDA "
                        "(no libc10_cuda/libtorch_cuda in ${TORCH_INSTALL_PREFIX}/lib): point Torch_DIR at a CUDA "
                        "build of LibTorch, e.g. -DTorch_DIR=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')/Torch")
  endif()
  find_package(CUDAToolkit REQUIRED)
  target_compile_definitions(lrb_runtime PUBLIC LRB_WITH_CUDA=1)
  # --no-as-needed: CUDA kernels register from torch_cuda's static initialisers, so the
  # library must stay linked even though few symbols are named directly.
  target_link_libraries(lrb_runtime PUBLIC "-Wl,--no-as-needed" ${LRB_TORCH_CUDA_LIBRARY} ${LRB_C10_CUDA_LIBRARY}
                        "-Wl,--as-needed" CUDA::cudart)
  message(STATUS "lrbench: CUDA paths built in (LibTorch ${Torch_VERSION} at ${TORCH_INSTALL_PREFIX}, CUDA ${CUDAToolkit_VERSION})")
  if(LRB_WITH_NCCL)
    find_path(LRB_NCCL_INCLUDE_DIR nccl.h HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_INCLUDE_DIRS} PATH_SUFFIXES include)
    find_library(LRB_NCCL_LIBRARY NAMES nccl libnccl.so.2 HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_LIBRARY_DIR}
                 PATH_SUFFIXES lib lib64)
    if(NOT LRB_NCCL_INCLUDE_DIR OR NOT LRB_NCCL_LIBRARY)
      message(FATAL_ERROR "LRB_WITH_NCCL=ON but NCCL was not found (nccl.h: ${LRB_NCCL_INCLUDE_DIR}, library: "
                          "${LRB_NCCL_LIBRARY}): install libnccl-dev, or set NCCL_ROOT to a folder with include/nccl.h "
                          "and lib/libnccl.so (PyTorch's wheel: python3 -c 'import nvidia.nccl; print(nvidia.nccl.__path__[0])')")
    endif()
    target_compile_definitions(lrb_mpi PUBLIC LRB_WITH_NCCL=1)
    target_include_directories(lrb_mpi SYSTEM PRIVATE ${LRB_NCCL_INCLUDE_DIR})
    target_link_libraries(lrb_mpi PUBLIC ${LRB_NCCL_LIBRARY} CUDA::cudart)
    message(STATUS "lrbench: NCCL exchange built in (${LRB_NCCL_LIBRARY}, header in ${LRB_NCCL_INCLUDE_DIR})")
  endif()
  return()
endif()

set(LRB_CUDA_CHECK_INCLUDE "" CACHE PATH "CUDA headers for the compile check of the CUDA paths (default: /usr/local/cuda/include)")
find_path(LRB_CUDA_RUNTIME_HEADER_DIR cuda_runtime_api.h HINTS ${LRB_CUDA_CHECK_INCLUDE} /usr/local/cuda/include)
find_path(LRB_C10_CUDA_HEADER_DIR c10/cuda/CUDACachingAllocator.h HINTS ${TORCH_INCLUDE_DIRS})
if(NOT LRB_CUDA_RUNTIME_HEADER_DIR OR NOT LRB_C10_CUDA_HEADER_DIR)
  message(STATUS "lrbench: CUDA paths NOT built and NOT compile-checked: "
                 "no CUDA headers (cuda_runtime_api.h: ${LRB_CUDA_RUNTIME_HEADER_DIR}) or no c10/cuda headers in this LibTorch")
  return()
endif()
# A CPU LibTorch lacks the one header its CUDA build generates; its content is fixed.
set(lrb_shim ${CMAKE_BINARY_DIR}/generated/cuda_check)
if(NOT EXISTS ${LRB_C10_CUDA_HEADER_DIR}/c10/cuda/impl/cuda_cmake_macros.h)
  file(CONFIGURE OUTPUT ${lrb_shim}/c10/cuda/impl/cuda_cmake_macros.h
       CONTENT "#pragma once\n// Generated by cmake/cuda.cmake for the CUDA compile check (a CUDA LibTorch ships its own).\n#define C10_CUDA_BUILD_SHARED_LIBS\n")
endif()
add_library(lrb_cuda_compile_check OBJECT ${LRB_CUDA_SOURCES})
target_compile_definitions(lrb_cuda_compile_check PRIVATE LRB_WITH_CUDA=1)
target_include_directories(lrb_cuda_compile_check SYSTEM PRIVATE ${lrb_shim} ${LRB_CUDA_RUNTIME_HEADER_DIR})
# Every layer a CUDA source may sit in, for the headers and definitions they bring.
target_link_libraries(lrb_cuda_compile_check PRIVATE lrb_core lrb_mpi lrb_runtime torch)
find_path(LRB_NCCL_CHECK_HEADER_DIR nccl.h HINTS ${LRB_CUDA_RUNTIME_HEADER_DIR})
if(LRB_NCCL_CHECK_HEADER_DIR)
  target_compile_definitions(lrb_cuda_compile_check PRIVATE LRB_WITH_NCCL=1)
  target_include_directories(lrb_cuda_compile_check SYSTEM PRIVATE ${LRB_NCCL_CHECK_HEADER_DIR})
endif()
list(LENGTH LRB_CUDA_SOURCES lrb_n)
set(lrb_nccl_note "without NCCL (no nccl.h there)")
if(LRB_NCCL_CHECK_HEADER_DIR)
  set(lrb_nccl_note "with NCCL (${LRB_NCCL_CHECK_HEADER_DIR}/nccl.h)")
endif()
message(STATUS "lrbench: CUDA paths not built (LRB_WITH_CUDA off); ${lrb_n} sources compile-checked against LibTorch "
               "${Torch_VERSION}'s c10/cuda headers and the CUDA headers in ${LRB_CUDA_RUNTIME_HEADER_DIR}, "
               "${lrb_nccl_note} (target lrb_cuda_compile_check, not linked)")
