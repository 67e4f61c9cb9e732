// lrbench merge-tokens: ToMe's bipartite soft matching (suite/nn/token_merging.h) on the
// user's own tensors, so the merging can be checked against ToMe's code (tome/merge.py)
// on any data.
//
//   lrbench merge-tokens --r 8 [--class-token] [--unmerge duplicate] --in IN.h5 --out OUT.h5
//
// IN.h5 holds x [B, T, C] (floating point), metric [B, T, C'] (the keys ToMe compares;
// floating point) and optionally size [B, T, 1] (token sizes > 0; ones when absent).
// OUT.h5 gets, in float64: x_merged [B, T - r, C] (ToMe's order: kept A tokens, then B
// tokens), size_merged [B, T - r, 1], x_unmerged [B, T, C] (x_merged put back on the T
// positions by --unmerge); the matching as int64 indices unm_idx, src_idx, dst_idx (into
// the even and odd tokens, as tome/merge.py names them); attributes r (after ToMe's clamp
// to floor((T - class token) / 2)), r_requested, class_token, unmerge. --grid HxW (or N)
// places the tokens after the class token for neighbour-mean (default: a 1-D sequence).
// --out - writes the file to standard output; OUT must not be IN, nor anything but a
// regular file.
#include <ATen/ATen.h>
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <charconv>
#include <memory>

#include "suite/cli/command.h"
#include "suite/cli/h5_tensors.h"
#include "suite/core/errors.h"
#include "suite/core/exit_codes.h"
#include "suite/core/text.h"
#include "suite/nn/token_merging.h"
#include "suite/hdf5/h5.h"
#include "suite/store/output_paths.h"

namespace lrb {
namespace {

namespace fs = std::filesystem;

struct MergeArgs {
  std::string r_text;  // parsed here: CLI11 clamps a number past int64 silently
  std::int64_t r = -1;
  bool class_token = false;
  std::string unmerge = "duplicate";
  std::string grid;
  std::string in, out;
};

// "28x28" or "784" -> {28, 28} or {784}.
std::vector<std::int64_t> parse_grid(const std::string& text) {
  std::vector<std::string> parts(1);
  for (char ch : text) {
    if (ch == 'x') parts.emplace_back();
    else parts.back() += ch;
  }
  std::vector<std::int64_t> out;
  if (parts.size() > 2) throw UserError("--grid " + text + ": give the token grid as HxW (e.g. 14x14) or N: two sizes at most");
  for (const auto& part : parts) {
    if (part.empty() || part.size() > 9 || part.find_first_not_of("0123456789") != std::string::npos || std::stoll(part) < 1)
      throw UserError("--grid " + text + ": give the token grid as HxW (e.g. 14x14) or N, positive whole numbers");
    out.push_back(std::stoll(part));
  }
  return out;
}

// --r: a whole number from 0 to the largest int64, exactly as written.
std::int64_t parse_r(const std::string& text) {
  std::int64_t v = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < 0)
    throw UserError("--r " + text + ": give the tokens to merge away as a whole number from 0 to 9223372036854775807");
  return v;
}

int merge_tokens(MergeArgs a) {
  if (!a.r_text.empty()) a.r = parse_r(a.r_text);
  if (a.r < 0 || a.in.empty() || a.out.empty())
    throw UserError("merge-tokens needs --r R (tokens to merge away), --in IN.h5 and --out OUT.h5");
  const std::vector<std::int64_t> user_grid = a.grid.empty() ? std::vector<std::int64_t>{} : parse_grid(a.grid);
  UnmergeMode mode;
  try {
    mode = parse_unmerge_mode(a.unmerge);
  } catch (const std::invalid_argument&) {
    throw UserError("--unmerge " + a.unmerge + ": one of " + join(unmerge_mode_names(), ", "));
  }
  if (!fs::exists(a.in)) throw UserError(a.in + " does not exist");
  if (!fs::is_regular_file(a.in)) throw UserError("--in " + a.in + " is not a regular file; give an HDF5 file");
  const bool to_stdout = a.out == "-";
  fs::path out_target;
  if (!to_stdout) {
    if (same_file(a.in, a.out))
      throw UserError("--out " + a.out + " is the input file --in " + a.in + "; write the output to another file");
    out_target = checked_output_file(a.out, "--out");
  }

  at::Tensor x, metric, size;
  try {
    const h5::File file = h5::open_file(a.in);
    x = read_h5_tensor(file, a.in, "x", at::kDouble, "[B, T, C] (3 dimensions)", [](const std::vector<hsize_t>& d) {
      return d.size() == 3 && d[0] > 0 && d[1] > 0 && d[2] > 0;
    });
    const auto B = static_cast<hsize_t>(x.size(0)), T = static_cast<hsize_t>(x.size(1));
    metric = read_h5_tensor(file, a.in, "metric", at::kDouble, fmt::format("[{}, {}, C'] (B and T of x)", B, T),
                            [&](const std::vector<hsize_t>& d) { return d.size() == 3 && d[0] == B && d[1] == T && d[2] > 0; });
    if (h5::link_exists(file, "size")) {
      size = read_h5_tensor(file, a.in, "size", at::kDouble, fmt::format("[{}, {}, 1] (B and T of x), token sizes > 0", B, T),
                            [&](const std::vector<hsize_t>& d) { return d.size() == 3 && d[0] == B && d[1] == T && d[2] == 1; });
      if (size.le(0).any().item<bool>())
        throw UserError(a.in + ": dataset 'size' holds a size <= 0; token sizes count the tokens a token stands for (> 0)");
    }
  } catch (const h5::Error& e) {
    throw UserError(a.in + ": cannot read it as HDF5 (" + e.operation() + " failed: " + e.stack() +
                    "); is it truncated, damaged or another format?");
  }
  const std::int64_t prefix = a.class_token ? 1 : 0;
  std::vector<std::int64_t> grid = {x.size(1) - prefix};
  if (!user_grid.empty()) {
    grid = user_grid;
    std::int64_t cells = 1;
    for (auto g : grid) cells *= g;
    if (cells != x.size(1) - prefix)
      throw UserError(fmt::format("--grid {} has {} positions but x has {} tokens{}", a.grid, cells, x.size(1) - prefix,
                                  a.class_token ? " after the class token" : ""));
  } else if (x.size(1) - prefix < 1) {
    throw UserError(a.in + ": x has no token besides the class token");
  }

  const TokenMatch match = bipartite_soft_matching(metric, a.r, a.class_token);
  MergeStack stack(mode == UnmergeMode::Exact);
  const MergedTokens merged = stack.merge(match, x, size);
  const at::Tensor unmerged = stack.unmerge(merged.x, mode, grid, prefix);

  h5::MemoryFile file(to_stdout ? fs::path("<standard output>") : out_target);
  write_h5_tensor(file.file(), "x_merged", merged.x);
  write_h5_tensor(file.file(), "size_merged", merged.size);
  write_h5_tensor(file.file(), "x_unmerged", unmerged);
  if (match.r > 0) {
    write_h5_tensor(file.file(), "unm_idx", match.unm_idx);
    write_h5_tensor(file.file(), "src_idx", match.src_idx);
    write_h5_tensor(file.file(), "dst_idx", match.dst_idx);
  }
  h5::write_int_attribute(file.file(), "r", match.r);
  h5::write_int_attribute(file.file(), "r_requested", a.r);
  h5::write_int_attribute(file.file(), "class_token", a.class_token ? 1 : 0);
  h5::write_string_attribute(file.file(), "unmerge", unmerge_mode_name(mode));
  const std::string summary = fmt::format("{} tokens -> {} (r = {}{}), unmerged by {}", x.size(1), match.kept(), match.r,
                                          match.r < a.r ? fmt::format(", clamped from {}", a.r) : "", unmerge_mode_name(mode));
  finish_output_file(file, out_target, a.out, summary);
  return kExitDone;
}

void add_merge_tokens_command(CLI::App& app, CommandResult& result) {
  auto a = std::make_shared<MergeArgs>();
  auto* cmd = app.add_subcommand("merge-tokens", "ToMe's bipartite token merging on x, metric (and size) from an HDF5 file");
  cmd->add_option("--r", a->r_text, "tokens to merge away, a whole number ≥ 0 (clamped to ToMe's limit, half the tokens)");
  cmd->add_flag("--class-token", a->class_token, "token 0 is a class token: never merged");
  cmd->add_option("--unmerge", a->unmerge, "how x_unmerged is put back: " + join(unmerge_mode_names(), ", ") + " (default duplicate)");
  cmd->add_option("--grid", a->grid, "token grid after the class token, HxW or N (neighbour-mean; default a 1-D sequence)");
  cmd->add_option("--in", a->in, "input HDF5 file with x [B, T, C], metric [B, T, C'] and optional size [B, T, 1]");
  cmd->add_option("--out", a->out, "output HDF5 file (written atomically; - for standard output)");
  cmd->callback([a, &result] { result.exit_code = merge_tokens(*a); });
}

LRB_REGISTER_COMMAND(add_merge_tokens_command);

}  // namespace
}  // namespace lrb
