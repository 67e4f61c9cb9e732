#include "suite/cli/attend_input.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <algorithm>

#include "suite/cli/h5_tensors.h"
#include "suite/core/errors.h"
#include "suite/hdf5/h5.h"

namespace lrb {

AttendInput read_attend_input(const std::string& in, const std::vector<std::string>& kernel_reads) {
  AttendInput input;
  AttentionTensors& t = input.tensors;
  try {
    const h5::File file = h5::open_file(in);
    const std::string qkv_shape = "[B, H, N, d] (4 dimensions)";
    auto rank4 = [](const std::vector<hsize_t>& d) { return d.size() == 4; };
    t.q = read_h5_tensor(file, in, "q", at::kFloat, qkv_shape, rank4);
    const auto B = static_cast<hsize_t>(t.q.size(0)), H = static_cast<hsize_t>(t.q.size(1));
    const auto d = static_cast<hsize_t>(t.q.size(3));
    const std::string kv_shape = fmt::format("[{}, {}, Nk, {}] (B, H and d of q)", B, H, d);
    t.k = read_h5_tensor(file, in, "k", at::kFloat, kv_shape,
                      [&](const std::vector<hsize_t>& s) { return s.size() == 4 && s[0] == B && s[1] == H && s[3] == d; });
    const auto Nk = static_cast<hsize_t>(t.k.size(2));
    t.v = read_h5_tensor(file, in, "v", at::kFloat, fmt::format("[{}, {}, {}, dv] (B, H and Nk of k)", B, H, Nk),
                      [&](const std::vector<hsize_t>& s) { return s.size() == 4 && s[0] == B && s[1] == H && s[2] == Nk; });
    auto reads = [&](const char* name) { return std::find(kernel_reads.begin(), kernel_reads.end(), name) != kernel_reads.end(); };
    for (const char* optional : {"mask", "global", "sizes", "decays", "bias"})
      if (!reads(optional) && h5::link_exists(file, optional))
        input.ignored.push_back(optional);
    if (reads("mask") && h5::link_exists(file, "mask"))
      t.mask = read_h5_tensor(file, in, "mask", at::kByte, fmt::format("[{}, {}] (B, Nk), 1 = real token", B, Nk),
                           [&](const std::vector<hsize_t>& s) { return s.size() == 2 && s[0] == B && s[1] == Nk; })
                   .to(at::kBool);
    if (reads("sizes") && h5::link_exists(file, "sizes"))
      t.sizes = read_h5_tensor(file, in, "sizes", at::kFloat, fmt::format("[{}, {}] (B, Nk), token sizes >= 1", B, Nk),
                            [&](const std::vector<hsize_t>& s) { return s.size() == 2 && s[0] == B && s[1] == Nk; });
    // tala's own decays and G: their shapes are the kernel's to check (it names what it needs).
    if (reads("decays") && h5::link_exists(file, "decays"))
      t.decays = read_h5_tensor(file, in, "decays", at::kDouble, fmt::format("[{}] (H), each in (0, 1]", H),
                                [&](const std::vector<hsize_t>& s) { return s.size() == 1 && s[0] == static_cast<hsize_t>(H); });
    if (reads("bias") && h5::link_exists(file, "bias"))
      t.bias = read_h5_tensor(file, in, "bias", at::kDouble, fmt::format("[{}, w+1] (relative) or [{}, T, T] (pairwise)", H, H),
                              [&](const std::vector<hsize_t>& s) { return (s.size() == 2 || s.size() == 3) && s[0] == static_cast<hsize_t>(H); });
    if (reads("global") && h5::link_exists(file, "global")) {
      const h5::Dataset ds = h5::open_dataset(file, "global");
      const bool as_mask = h5::dataset_dims(ds).size() == 2 && h5::dataset_dims(ds)[1] == static_cast<hsize_t>(t.q.size(2)) &&
                           h5::dataset_dims(ds)[0] == B && t.q.size(2) > 1;
      const std::string expected = fmt::format("int64 positions [g] or [{}, g], or a 0/1 array [{}, {}]", B, B, t.q.size(2));
      auto ok = [&](const std::vector<hsize_t>& s) { return s.size() == 1 || (s.size() == 2 && s[0] == B); };
      t.global = as_mask ? read_h5_tensor(file, in, "global", at::kByte, expected, ok).to(at::kBool)
                         : read_h5_tensor(file, in, "global", at::kLong, expected, ok);
    }
  } catch (const h5::Error& e) {
    // The user's file: damaged, truncated or not HDF5 is theirs to fix (exit 2), not a bug.
    throw UserError(in + ": cannot read it as HDF5 (" + e.operation() + " failed: " + e.stack() +
                    "); is it truncated, damaged or another format?");
  }

  return input;
}

}  // namespace lrb
