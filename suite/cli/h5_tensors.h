#pragma once
// Tensors in and out of a user's HDF5 files, for the commands that run one building block
// on the user's own data (attend, merge-tokens): each dataset checked for presence, kind and
// shape, with an error that names the file, the dataset and the shape expected.
#include <ATen/core/Tensor.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "suite/core/shape_text.h"
#include "suite/hdf5/h5.h"

namespace lrb {

// Reads dataset `name` of `file` (at `path`) as a tensor of `dtype` (kFloat, kDouble, kLong
// or kByte; HDF5 converts numeric types). `expected` describes the shape for messages;
// `check` says whether the dims are right. Floating-point tensors must be finite.
at::Tensor read_h5_tensor(const h5::File& file, const std::string& path, const std::string& name, at::ScalarType dtype,
                          const std::string& expected, const std::function<bool(const std::vector<hsize_t>&)>& check);

// Writes a float (kFloat or kDouble, stored as such) or int64 tensor as a dataset.
void write_h5_tensor(const h5::Object& loc, const std::string& name, const at::Tensor& t);

// Ends a command's output file: with `target` empty, its bytes (sealed with their digest)
// go to standard output and the summary to stderr; else it is published at `target`
// (atomically) and the summary printed after `given`, the name the user wrote.
void finish_output_file(h5::MemoryFile& file, const std::filesystem::path& target, const std::string& given,
                        const std::string& summary);

// Whether `out` names the file `in` (a link, another spelling), whether or not it exists yet.
bool same_file(const std::filesystem::path& in, const std::filesystem::path& out);

}  // namespace lrb
