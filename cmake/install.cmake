# `cmake --install build --prefix P` installs:
#   P/bin/lrbench, P/bin/lrbench-core       the program (the launcher and what it starts)
#   P/lib/liblrb_core.a, liblrb_torch.a     the harness libraries
#   P/lib/lrbench/objects/...               the commands, the report formats, the attention
#                                           kernels, the built-in models and tasks and main():
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
set_target_properties(lrb_core PROPERTIES EXPORT_NAME core)
set_target_properties(lrb_core_usage PROPERTIES EXPORT_NAME core_usage)
set_target_properties(lrb_report PROPERTIES EXPORT_NAME report)
set_target_properties(lrb_torch PROPERTIES EXPORT_NAME torch)
set_target_properties(lrb_kernels PROPERTIES EXPORT_NAME kernels)
set_target_properties(lrb_cli PROPERTIES EXPORT_NAME cli)
set_target_properties(lrb_plugins PROPERTIES EXPORT_NAME plugins)
set_target_properties(lrb_main PROPERTIES EXPORT_NAME main)
set_target_properties(lrb_fmt PROPERTIES EXPORT_NAME fmt)
set_target_properties(lrb_spdlog PROPERTIES EXPORT_NAME spdlog)
set_target_properties(lrb_toml PROPERTIES EXPORT_NAME toml)
set_target_properties(lrbench PROPERTIES EXPORT_NAME launcher)
# An installed lrbench-core finds a LibTorch outside the system's folders (Torch_DIR) where
# the build found it.
set_target_properties(lrbench-core PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)

install(TARGETS lrb_core_usage lrb_core lrb_report lrb_torch lrb_kernels lrb_cli lrb_plugins lrb_main lrb_fmt lrb_spdlog lrb_toml lrbench
  EXPORT lrbenchTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  OBJECTS DESTINATION ${CMAKE_INSTALL_LIBDIR}/lrbench/objects)
install(TARGETS lrbench-core RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
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
