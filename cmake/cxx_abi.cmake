# Debian's compiled C++ libraries (fmt, toml++, GoogleTest, Google Benchmark) use
# the C++11 ABI of std::string. A LibTorch built with the old ABI (-D_GLIBCXX_USE_CXX11_ABI=0
# in TORCH_CXX_FLAGS: PyTorch's own wheels up to 2.6; TorchConfig puts the flag on every
# target that links torch) cannot pass strings to them. Then fmt and toml++ are used
# header-only (compiled with the same flag as the rest), GoogleTest is built from its
# sources (Debian's googletest package, LRB_GTEST_SOURCE_DIR), and the benchmarks, which
# need Google Benchmark's compiled library, are not built. LRB_HEADER_ONLY_DEPS=ON forces
# this mode with any LibTorch (scripts/device_check.sh's CPU fallback tests it that way).
string(FIND "${TORCH_CXX_FLAGS}" "_GLIBCXX_USE_CXX11_ABI=0" lrb_old_abi_at)
if(lrb_old_abi_at EQUAL -1)
  set(LRB_TORCH_CXX11_ABI 1)
else()
  set(LRB_TORCH_CXX11_ABI 0)
endif()
option(LRB_HEADER_ONLY_DEPS "fmt, toml++ header-only and GoogleTest from source (automatic with an old-ABI LibTorch)" OFF)
if(NOT LRB_TORCH_CXX11_ABI)
  set(LRB_HEADER_ONLY_DEPS ON)
  # TorchConfig sets the flag only on what links torch; lrb_core (torch-free) and GoogleTest
  # pass strings to it, so every target here is compiled with the same ABI.
  add_compile_definitions(_GLIBCXX_USE_CXX11_ABI=0)
endif()
set(LRB_GTEST_SOURCE_DIR /usr/src/googletest CACHE PATH "GoogleTest's sources, built here when LRB_HEADER_ONLY_DEPS is on")

add_library(lrb_fmt INTERFACE)
add_library(lrb_toml INTERFACE)

# PyTorch's wheels ship their own fmt headers (torch/include/fmt, fmt 11 or later), which
# come ahead of the system's on every target that links torch. Sources compiled against them
# cannot link Debian's compiled fmt 9 (another inline namespace), and torch-free sources would
# see the other version. So with such a LibTorch, fmt is used header-only from LibTorch's copy,
# first on every target's include path (a folder holding only that fmt).
get_target_property(lrb_fmt_package_include fmt::fmt INTERFACE_INCLUDE_DIRECTORIES)
set(LRB_TORCH_FMT_DIR "")
foreach(dir ${TORCH_INCLUDE_DIRS})
  if(NOT LRB_TORCH_FMT_DIR AND EXISTS "${dir}/fmt/format-inl.h" AND NOT "${dir}" IN_LIST lrb_fmt_package_include)
    set(LRB_TORCH_FMT_DIR "${dir}")
  endif()
endforeach()
if(LRB_TORCH_FMT_DIR)
  set(lrb_torch_fmt_only "${CMAKE_BINARY_DIR}/torch-fmt")
  file(MAKE_DIRECTORY "${lrb_torch_fmt_only}")
  file(CREATE_LINK "${LRB_TORCH_FMT_DIR}/fmt" "${lrb_torch_fmt_only}/fmt" SYMBOLIC)
  include_directories(BEFORE SYSTEM "${lrb_torch_fmt_only}")
  target_compile_definitions(lrb_fmt INTERFACE FMT_HEADER_ONLY=1)
  message(STATUS "lrbench: fmt header-only from LibTorch's own copy (${LRB_TORCH_FMT_DIR}/fmt), not ${lrb_fmt_package_include}")
endif()

if(LRB_HEADER_ONLY_DEPS)
  get_target_property(lrb_toml_include tomlplusplus::tomlplusplus INTERFACE_INCLUDE_DIRECTORIES)
  if(NOT LRB_TORCH_FMT_DIR)
    target_link_libraries(lrb_fmt INTERFACE fmt::fmt-header-only)
  endif()
  target_include_directories(lrb_toml SYSTEM INTERFACE ${lrb_toml_include})
  target_compile_definitions(lrb_toml INTERFACE TOML_HEADER_ONLY=1)
  if(LRB_BUILD_BENCHMARKS)
    set(LRB_BUILD_BENCHMARKS OFF)
    message(STATUS "lrbench: benchmarks NOT built: Google Benchmark's compiled library cannot be linked in this mode")
  endif()
  message(STATUS "lrbench: LibTorch C++11 ABI = ${LRB_TORCH_CXX11_ABI}: fmt, toml++ header-only; "
                 "GoogleTest built from ${LRB_GTEST_SOURCE_DIR}")
else()
  if(NOT LRB_TORCH_FMT_DIR)
    target_link_libraries(lrb_fmt INTERFACE fmt::fmt)
  endif()
  target_link_libraries(lrb_toml INTERFACE tomlplusplus::tomlplusplus)
endif()
