#pragma once
// Tensors to and from HDF5 datasets in tests: the inputs written for `lrbench attend` and
// `lrbench merge-tokens`, and their outputs read back. Float32 or float64, as asked.
#include <ATen/core/Tensor.h>

#include <filesystem>
#include <string>

#include "suite/hdf5/h5.h"

namespace lrb::test {

// Stores `t` as dataset `name`, converted to `stored` (at::kFloat or at::kDouble).
void write_tensor(const h5::File& f, const std::string& name, const at::Tensor& t, at::ScalarType stored);
// Dataset `name` of the file at `path`, read as `type` (at::kFloat or at::kDouble).
at::Tensor read_tensor(const std::filesystem::path& path, const std::string& name, at::ScalarType type);

}  // namespace lrb::test
