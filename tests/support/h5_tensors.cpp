#include "tests/support/h5_tensors.h"

#include <ATen/ATen.h>

#include <vector>

namespace lrb::test {

namespace {
bool is_double(at::ScalarType t) { return t == at::kDouble; }
}  // namespace

void write_tensor(const h5::File& f, const std::string& name, const at::Tensor& t, at::ScalarType stored) {
  const at::Tensor c = t.to(stored).contiguous();
  std::vector<hsize_t> dims(c.sizes().begin(), c.sizes().end());
  h5::write_array_dataset(f, name, is_double(stored) ? H5T_IEEE_F64LE : H5T_IEEE_F32LE,
                          is_double(stored) ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT, dims, c.data_ptr());
}

at::Tensor read_tensor(const std::filesystem::path& path, const std::string& name, at::ScalarType type) {
  const h5::File f = h5::open_file(path);
  const h5::Dataset ds = h5::open_dataset(f, name);
  const auto dims = h5::dataset_dims(ds);
  at::Tensor t = at::empty(std::vector<std::int64_t>(dims.begin(), dims.end()), type);
  h5::read_array_dataset(ds, is_double(type) ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT, t.data_ptr());
  return t;
}

}  // namespace lrb::test
