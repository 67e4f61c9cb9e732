#include "suite/cli/h5_tensors.h"

#include <ATen/ATen.h>

#include <fmt/core.h>

#include "suite/core/errors.h"
#include "suite/core/file_digest.h"
#include "suite/core/files.h"
#include "suite/core/text.h"

namespace lrb {

namespace fs = std::filesystem;

at::Tensor read_h5_tensor(const h5::File& file, const std::string& path, const std::string& name, at::ScalarType dtype,
                          const std::string& expected, const std::function<bool(const std::vector<hsize_t>&)>& check) {
  if (!h5::link_exists(file, name))
    throw UserError(path + ": no dataset '" + name + "'; expected " + expected);
  const h5::Dataset ds = h5::open_dataset(file, name);
  const auto dims = h5::dataset_dims(ds);
  const h5::ElementType et = h5::dataset_element_type(ds);
  const bool numeric = et.type_class == H5T_INTEGER || et.type_class == H5T_FLOAT;
  const bool floating = dtype == at::kFloat || dtype == at::kDouble;
  if (!numeric) throw UserError(path + ": dataset '" + name + "' is not numeric; expected " + expected);
  if (floating && et.type_class != H5T_FLOAT)
    throw UserError(path + ": dataset '" + name + "' holds integers; expected floating point " + expected);
  if (!check(dims)) throw UserError(path + ": dataset '" + name + "' has shape " + shape_text(dims) + "; expected " + expected);
  if (const std::string size = h5::readable_size_problem(ds, at::elementSize(dtype)); !size.empty())
    throw UserError(path + ": dataset '" + name + "' " + size + "; the file is damaged, or (for a shape beyond memory) read it on a larger machine");
  std::vector<std::int64_t> sizes(dims.begin(), dims.end());
  at::Tensor t = at::empty(sizes, at::TensorOptions().dtype(dtype));
  const hid_t mem = dtype == at::kFloat    ? H5T_NATIVE_FLOAT
                    : dtype == at::kDouble ? H5T_NATIVE_DOUBLE
                    : dtype == at::kLong   ? H5T_NATIVE_INT64
                                           : H5T_NATIVE_UINT8;
  h5::read_array_dataset(ds, mem, t.data_ptr());
  if (floating) {
    // NaN or infinity would only come back as NaN in every output that touches it.
    const at::Tensor bad = at::isfinite(t).logical_not().flatten();
    if (bad.any().item<bool>()) {
      auto flat = bad.nonzero()[0][0].item<std::int64_t>();
      std::vector<std::string> index(sizes.size());
      for (std::size_t i = sizes.size(); i-- > 0;) {
        index[i] = std::to_string(flat % sizes[i]);
        flat /= sizes[i];
      }
      throw UserError(path + ": dataset '" + name + "' holds a non-finite value (NaN or infinity) at [" + join(index, ", ") +
                      "]; finite inputs are needed");
    }
  }
  return t;
}

void write_h5_tensor(const h5::Object& loc, const std::string& name, const at::Tensor& t) {
  const at::Tensor c = t.contiguous();
  std::vector<hsize_t> dims(c.sizes().begin(), c.sizes().end());
  if (c.scalar_type() == at::kDouble) {
    h5::write_array_dataset(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, dims, c.data_ptr());
  } else if (c.scalar_type() == at::kLong) {
    h5::write_array_dataset(loc, name, H5T_STD_I64LE, H5T_NATIVE_INT64, dims, c.data_ptr());
  } else {
    const at::Tensor f = c.to(at::kFloat);
    h5::write_array_dataset(loc, name, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, dims, f.data_ptr());
  }
}

bool same_file(const fs::path& in, const fs::path& out) {
  std::error_code ec;
  if (fs::exists(out, ec)) return fs::equivalent(in, out, ec) && !ec;
  return fs::weakly_canonical(in, ec) == fs::weakly_canonical(out, ec);
}

void finish_output_file(h5::MemoryFile& file, const std::filesystem::path& target, const std::string& given,
                        const std::string& summary) {
  if (target.empty()) {
    const auto [data, size] = file.close_in_place();
    seal_digest(data, size);
    write_all_to_stdout(std::string_view(data, size));
    fmt::print(stderr, "lrbench: {}\n", summary);  // stdout holds the file
    return;
  }
  h5::publish_memory_file(file, target);
  fmt::print("{}: {}\n", given, summary);
}

}  // namespace lrb
