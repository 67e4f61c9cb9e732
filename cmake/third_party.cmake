# The CMake side of each third-party name of cmake/layers.cmake (LRB_LAYER_THIRD_PARTY):
# LRB_LINK_<name> is what a layer that uses <name> links (lrb_add_layer).
add_library(lrb_hdf5_c INTERFACE)
target_include_directories(lrb_hdf5_c INTERFACE ${HDF5_INCLUDE_DIRS})
target_link_libraries(lrb_hdf5_c INTERFACE ${HDF5_C_LIBRARIES})
set(LRB_LINK_json nlohmann_json::nlohmann_json)
set(LRB_LINK_toml lrb_toml)
set(LRB_LINK_fmt lrb_fmt)
set(LRB_LINK_boost Boost::boost)
set(LRB_LINK_openssl OpenSSL::Crypto)
set(LRB_LINK_hdf5 lrb_hdf5_c)
set(LRB_LINK_mpi MPI::MPI_CXX)
set(LRB_LINK_torch ${TORCH_LIBRARIES})
set(LRB_LINK_cuda "")  # cmake/cuda.cmake links the CUDA libraries where they are built in
set(LRB_LINK_cli11 CLI11::CLI11)
set(LRB_LINK_zlib ZLIB::ZLIB)
set(LRB_LINK_dl ${CMAKE_DL_LIBS})
