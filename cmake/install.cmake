# `cmake --install build --prefix P` installs:
#   P/bin/lrbench, P/bin/lrbench-core       the program (the launcher and what it starts;
#   P/bin/lrbench-results                   for the results commands, the same without LibTorch)
#   P/bin/lrbench-blas-check                the BLAS check the launcher runs (suite/cli/blas_check.cpp)
#   P/lib/liblrb_core.a, liblrb_store.a ... the libraries of the folders (cmake/layers.cmake)
#   P/lib/lrbench/objects/...               the self-registering folders (commands, report
#                                           formats, kernels, models, tasks) and main():
#                                           object files, so no registration is dropped
#   P/include/suite/..., workloads/..., baselines/...   the headers, by their repository paths
#   P/lib/cmake/lrbench/                    lrbenchConfig.cmake, its version file, the targets
# A CMake project then writes find_package(lrbench) and gets lrbench::lrbench (the library
# with every built-in command, model and task), lrbench::main (lrbench's main()),
# lrbench::launcher (the lrbench launcher) and lrbench_add_program() (lrbench with the
# project's own models and tasks compiled in): examples/custom_model.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
set(LRB_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/lrbench)

target_compile_features(lrb_core PUBLIC cxx_std_17)
# Exported without the lrb_ prefix: lrbench::core, lrbench::store, ... lrbench::cli, and
# the self-registering folders' objects as lrbench::<name>_objects.
get_property(lrb_layer_targets GLOBAL PROPERTY LRB_LAYER_TARGETS)
get_property(lrb_compiled_layers GLOBAL PROPERTY LRB_COMPILED_LAYER_TARGETS)
set(LRB_OBJECT_EXPORTS "")
foreach(t ${lrb_layer_targets} ${lrb_compiled_layers} lrb_core_usage lrb_plugins lrb_main lrb_fmt lrb_hdf5_c lrb_toml)
  string(REGEX REPLACE "^lrb_" "" export_name ${t})
  set_target_properties(${t} PROPERTIES EXPORT_NAME ${export_name})
  if(t MATCHES "_objects$")
    list(APPEND LRB_OBJECT_EXPORTS lrbench::${export_name})
  endif()
endforeach()
set_target_properties(lrbench PROPERTIES EXPORT_NAME launcher)
set_target_properties(lrbench-blas-check PROPERTIES EXPORT_NAME blas_check)
# An installed lrbench-core finds a LibTorch outside the system's folders (Torch_DIR) where
# the build found it.
set_target_properties(lrbench-core PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)

set(lrb_layer_libraries ${lrb_layer_targets} ${lrb_compiled_layers})
list(REMOVE_DUPLICATES lrb_layer_libraries)
install(TARGETS lrb_core_usage ${lrb_layer_libraries} lrb_plugins lrb_main lrb_fmt lrb_hdf5_c lrb_toml lrbench lrbench-blas-check
  EXPORT lrbenchTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  OBJECTS DESTINATION ${CMAKE_INSTALL_LIBDIR}/lrbench/objects)
install(TARGETS lrbench-core lrbench-results RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY suite workloads baselines DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")
install(EXPORT lrbenchTargets NAMESPACE lrbench:: DESTINATION ${LRB_INSTALL_CMAKEDIR})

# What the config must reproduce: the dependencies as found here, and the ABI of std::string
# (cmake/cxx_abi.cmake) and the CUDA paths (cmake/cuda.cmake).
configure_package_config_file(cmake/lrbenchConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/lrbenchConfig.cmake
  INSTALL_DESTINATION ${LRB_INSTALL_CMAKEDIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/lrbenchConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/lrbenchConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/lrbenchConfigVersion.cmake
  DESTINATION ${LRB_INSTALL_CMAKEDIR})
