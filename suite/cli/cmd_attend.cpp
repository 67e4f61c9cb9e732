// lrbench attend: run one attention kernel on the user's own q, k, v (HDF5), so a kernel
// can be checked against any reference the user trusts.
//
//   lrbench attend --list
//   lrbench attend --kernel sliding_window --opt window=64 --in qkv.h5 --out out.h5
//
// IN.h5 holds q, k, v (floating point, [B, H, N, d]) and, when the kernel reads them,
// mask ([B, Nk], bool or 0/1 integers), global (sliding_window: int64 positions [g] or
// [B, g], or a 0/1 [B, N] array), sizes (proportional: [B, Nk]), and tala's decays ([H]) and
// bias G ([H, w+1] or [H, T, T]). OUT.h5 gets `out` (float32), the kernel's records (e.g.
// block_sparse's random_blocks), its float64 values (tala's decays and G as used), and attributes
// kernel, options (JSON), score_elements, info (JSON); --out - writes it to standard output.
// OUT must not be IN, and must not be anything but a regular file (a device, a FIFO).
#include <ATen/ATen.h>
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "suite/cli/attend_input.h"
#include "suite/cli/command.h"
#include "suite/cli/h5_tensors.h"
#include "suite/core/errors.h"
#include "suite/core/exit_codes.h"
#include "suite/core/text.h"
#include "suite/nn/attention/kernel_registry.h"
#include "suite/hdf5/h5.h"
#include "suite/store/output_paths.h"

namespace lrb {
namespace {

namespace fs = std::filesystem;

struct AttendArgs {
  bool list = false;
  std::string kernel;
  std::vector<std::string> options;
  std::string in, out;
};

std::vector<std::string> kernel_names() {
  std::vector<std::string> names;
  for (const auto& k : attention_kernels()) names.push_back(k.name);
  return names;
}

int list_kernels() {
  for (const auto& k : attention_kernels()) {
    fmt::print("{} — {}{}\n", k.name, k.summary, k.reads.empty() ? "" : " [reads: " + join(k.reads, ", ") + "]");
    for (const auto& o : k.schema.options)
      fmt::print("    {:<18} {:<22} default {:<10} {}{}\n", o.name, type_name(o.type), o.default_value.dump(), o.help,
                 o.choices.empty() ? "" : " {" + join(o.choices, ", ") + "}");
  }
  return kExitDone;
}

// The inputs are finite (read_attend_input checks them), so a NaN or inf in the output is
// the kernel's arithmetic overflowing (scores near float32's limit, exp of a large bias) or a
// row with no key to attend to: said, with exit 2, instead of written.
void check_finite_output(const std::string& kernel, const at::Tensor& out, const AttentionTensors& t) {
  const at::Tensor bad = out.isfinite().logical_not();
  const std::int64_t count = bad.sum().item<std::int64_t>();
  if (count == 0) return;
  const at::Tensor first = bad.nonzero()[0];
  std::vector<std::string> at_index;
  for (std::int64_t i = 0; i < first.size(0); ++i) at_index.push_back(std::to_string(first[i].item<std::int64_t>()));
  throw UserError(fmt::format(
      "kernel {} gave {} non-finite output value(s) (the first at [{}]) from finite inputs: its arithmetic overflowed "
      "(largest |q| {:.3g}, |k| {:.3g}; float32 holds up to 3.4e38 and its exp overflows past 88) or a row had no key to attend "
      "to (every key masked); nothing was written. Scale q and k down, lower the option that grows the scores, or unmask a key",
      kernel, count, join(at_index, ", "), t.q.abs().max().item<double>(), t.k.abs().max().item<double>()));
}

int attend(const AttendArgs& a) {
  if (a.list) return list_kernels();
  if (a.kernel.empty() || a.in.empty() || a.out.empty())
    throw UserError("attend needs --kernel NAME, --in IN.h5 and --out OUT.h5 (or --list); kernels: " + join(kernel_names(), ", "));
  const AttentionKernel& kernel = find_attention_kernel(a.kernel);
  const json options = kernel_options(kernel, a.options);
  if (!fs::exists(a.in)) throw UserError(a.in + " does not exist");
  if (!fs::is_regular_file(a.in)) throw UserError("--in " + a.in + " is not a regular file; give an HDF5 file");
  const bool to_stdout = a.out == "-";
  fs::path out_target;
  if (!to_stdout) {
    if (same_file(a.in, a.out))
      throw UserError("--out " + a.out + " is the input file --in " + a.in + "; write the output to another file");
    out_target = checked_output_file(a.out, "--out");
  }

  const AttendInput input = read_attend_input(a.in, kernel.reads);
  for (const auto& name : input.ignored)
    fmt::print(stderr, "lrbench: note: kernel {} does not read '{}'; it is ignored\n", kernel.name, name);
  const AttentionTensors& t = input.tensors;

  const AttentionRun run = kernel.run(options, t);
  check_finite_output(kernel.name, run.out, t);

  // Built in memory and published with a whole-file digest: a full disk fails a plain write.
  h5::MemoryFile file(to_stdout ? fs::path("<standard output>") : out_target);
  const at::Tensor o = run.out.to(at::kFloat).contiguous();
  std::vector<hsize_t> dims(o.sizes().begin(), o.sizes().end());
  h5::write_array_dataset(file.file(), "out", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, dims, o.data_ptr());
  for (const auto& [name, tensor] : run.records) {
    const at::Tensor r = tensor.to(at::kLong).contiguous();
    std::vector<hsize_t> rd(r.sizes().begin(), r.sizes().end());
    h5::write_array_dataset(file.file(), name, H5T_STD_I64LE, H5T_NATIVE_INT64, rd, r.data_ptr());
  }
  for (const auto& [name, tensor] : run.values) {
    const at::Tensor v = tensor.to(at::kDouble).contiguous();
    std::vector<hsize_t> vd(v.sizes().begin(), v.sizes().end());
    h5::write_array_dataset(file.file(), name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, vd, v.data_ptr());
  }
  h5::write_string_attribute(file.file(), "kernel", kernel.name);
  h5::write_string_attribute(file.file(), "options", options.dump());
  h5::write_string_attribute(file.file(), "info", run.info.dump());
  h5::write_int_attribute(file.file(), "score_elements", run.score_elements);
  const std::string summary = fmt::format("out {} from {} ({} score elements)",
                                          shape_text(run.out.sizes()),
                                          kernel.name, run.score_elements);
  finish_output_file(file, out_target, a.out, summary);
  return kExitDone;
}

void add_attend_command(CLI::App& app, CommandResult& result) {
  auto a = std::make_shared<AttendArgs>();
  auto* cmd = app.add_subcommand("attend", "run one attention kernel on q, k, v from an HDF5 file (--list: the kernels and their options)");
  cmd->add_flag("--list", a->list, "list the kernels with their options and defaults");
  cmd->add_option("--kernel", a->kernel, "kernel name (see --list)");
  cmd->add_option("--opt", a->options, "kernel option key=value (repeatable)");
  cmd->add_option("--in", a->in, "input HDF5 file with q, k, v [B, H, N, d] and optional mask, global, sizes");
  cmd->add_option("--out", a->out, "output HDF5 file (written atomically; - for standard output): out, records, attributes");
  cmd->callback([a, &result] { result.exit_code = attend(*a); });
}

LRB_REGISTER_COMMAND(add_attend_command);

}  // namespace
}  // namespace lrb
