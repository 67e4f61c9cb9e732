#include "suite/store/results_folder.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <functional>
#include <string_view>
#include <system_error>
#include <tuple>

#include "suite/core/errors.h"
#include "suite/core/file_digest.h"
#include "suite/core/files.h"
#include "suite/core/process_info.h"
#include "suite/core/version.h"
#include "suite/hdf5/h5.h"
#include "suite/hdf5/streamed_file.h"
#include "suite/store/results_layout.h"
#include "suite/store/run_file.h"
#include "suite/store/run_view.h"
#include "suite/store/sweep_manifest.h"
#include "suite/store/text_dataset.h"

namespace lrb {

namespace {

namespace fs = std::filesystem;

// sweep.h5's layout: 2, each run file's bytes whole; 1, each run file's root group copied
// (still read).
constexpr long long kSweepFileVersion = 2;
constexpr long long kSweepFileVersionGroups = 1;
using json = nlohmann::json;


// A temporary file ".<name>.tmp.<host>.<pid>" (files.h) written on this host.
bool written_on_this_host(const std::string& name) {
  const auto tmp = name.rfind(".tmp.");
  if (tmp == std::string::npos) return false;
  const std::string rest = name.substr(tmp + 5);
  const auto dot = rest.rfind('.');
  return dot != std::string::npos && rest.substr(0, dot) == host_name();
}

// ... and still being written by a live process. Files of other hosts cannot be checked
// from here.
bool owned_by_live_local_process(const std::string& name) {
  if (!written_on_this_host(name)) return false;
  const std::string rest = name.substr(name.rfind(".tmp.") + 5);
  const auto dot = rest.rfind('.');
  const std::string pid_text = rest.substr(dot + 1);
  if (pid_text.empty() || pid_text.find_first_not_of("0123456789") != std::string::npos || pid_text.size() > 9)
    return false;
  const pid_t pid = static_cast<pid_t>(std::stol(pid_text));
  if (pid <= 0) return false;
  return ::kill(pid, 0) == 0 || errno == EPERM;
}

std::string utc_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

std::vector<fs::path> list_folder(const fs::path& folder) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) out.push_back(it->path());
  if (ec) throw EnvironmentError("cannot list " + folder.string() + ": " + ec.message() + "; check its permissions");
  std::sort(out.begin(), out.end());
  return out;
}

void sort_bad(std::vector<BadResult>& bad) {
  std::sort(bad.begin(), bad.end(),
            [](const BadResult& x, const BadResult& y) { return std::tie(x.file, x.reason) < std::tie(y.file, y.reason); });
}

}  // namespace

// Validates each run file of DIR/runs in name order, as far as `depth`, and hands it to
// `visit` with the bytes it was read from; `visit` may keep or drop the record (a merge
// keeps none in memory: records can be large).
template <class Visit>
void for_each_run_file(const fs::path& dir, std::vector<BadResult>& bad, RunRead depth, Visit visit) {
  const fs::path runs = ResultsLayout(dir).runs();
  std::error_code ec;
  if (!fs::is_directory(runs, ec)) return;
  std::string bytes;
  for (const fs::path& file : list_folder(runs)) {
    if (is_temp_name(file.filename().string()) || file.extension() != ".h5") continue;
    RunFileCheck check = read_run_file(file, bytes, depth);
    if (check.valid())
      visit(file, std::string_view(bytes), std::move(*check.record));
    else
      bad.push_back({file, check.reason});
  }
  sort_bad(bad);
}

ResultsScan scan_runs(const fs::path& dir) {
  ResultsScan out;
  for_each_run_file(dir, out.bad, RunRead::Whole,
                    [&](const fs::path&, std::string_view, RunRecord&& r) { out.runs.push_back(std::move(r)); });
  // Valid files are named by their key, so they are already in key order; keep it explicit.
  std::sort(out.runs.begin(), out.runs.end(), [](const RunRecord& a, const RunRecord& b) { return a.key < b.key; });
  return out;
}

std::vector<fs::path> clear_stale_temporaries(const fs::path& dir, StaleScope scope) {
  std::vector<fs::path> stale;
  const auto consider = [&](const fs::directory_entry& entry) {
    const std::string name = entry.path().filename().string();
    if (is_temp_name(name) && !owned_by_live_local_process(name) &&
        (scope == StaleScope::AnyHost || written_on_this_host(name)))
      stale.push_back(entry.path());
    return is_temp_name(name);
  };
  // runs/ and checkpoints/ at any depth; quarantine/ (its .reason files) and DIR itself
  // (sweep.h5) are written through temporary names too.
  for (const fs::path& folder : ResultsLayout(dir).folders_with_temporaries()) {
    std::error_code ec;
    if (!fs::is_directory(folder, ec)) continue;
    fs::recursive_directory_iterator it(folder, ec), end;
    for (; !ec && it != end; it.increment(ec))
      if (consider(*it)) it.disable_recursion_pending();  // a temporary folder goes as a whole
    if (ec) throw UserError("cannot list " + folder.string() + ": " + ec.message() + "; check its permissions");
  }
  std::error_code ec;
  if (fs::is_directory(dir, ec))
    for (const fs::path& p : list_folder(dir)) consider(fs::directory_entry(p));
  std::sort(stale.begin(), stale.end());
  for (const fs::path& p : stale) {
    fs::remove_all(p, ec);
    if (ec) throw EnvironmentError("cannot remove the stale temporary file " + p.string() + ": " + ec.message());
  }
  return stale;
}

fs::path quarantine_bad_file(const fs::path& dir, const fs::path& file, const std::string& reason) {
  const fs::path qdir = ResultsLayout(dir).quarantine();
  std::error_code ec;
  fs::create_directories(qdir, ec);
  if (ec) throw EnvironmentError("cannot create " + qdir.string() + ": " + ec.message() + "; check the folder's permissions");
  const std::string stamp = utc_timestamp();
  const std::string base = file.filename().string() + "." + stamp;
  fs::path dest = qdir / base;
  for (int i = 1; fs::exists(dest) || fs::exists(dest.string() + ".reason"); ++i)
    dest = qdir / (base + "-" + std::to_string(i));

  // The file first: once it is out of runs/ the run counts as missing and is recomputed.
  fs::rename(file, dest, ec);
  if (ec == std::errc::cross_device_link) {
    ec.clear();
    fs::copy_file(file, dest, ec);
    if (!ec) {
      fsync_path(dest);
      fs::remove(file, ec);
      // The file could not leave runs/ (a read-only mount): no copy without its reason.
      std::error_code ignored;
      if (ec) fs::remove(dest, ignored);
    }
  }
  if (ec)
    throw EnvironmentError("cannot move " + file.string() + " to " + dest.string() + ": " + ec.message() +
                           "; check the permissions of " + dir.string());
  fsync_path(file.parent_path().empty() ? fs::path(".") : file.parent_path());
  write_file_atomic(dest.string() + ".reason", "file: " + file.string() + "\nreason: " + reason +
                                                   "\nquarantined: " + stamp + " by " + process_label() + "\n");
  return dest;
}

MergeSummary merge_results(const fs::path& dir) {
  h5::silence_error_printing();
  std::error_code ec;
  if (!fs::is_directory(ResultsLayout(dir).runs(), ec))
    throw UserError("nothing to merge: " + ResultsLayout(dir).runs().string() +
                    " does not exist; give the folder passed to `lrbench run --out`");
  MergeSummary summary;
  const fs::path final_path = ResultsLayout(dir).merged();
  try {
    // Streamed to disk as it is built, then sealed with its whole-file digest and renamed
    // into place: memory stays bounded at any number of runs, and a full disk fails the
    // merge cleanly, leaving no temporary file and any earlier sweep.h5 as it was.
    h5::StreamedFile file(final_path);
    h5::Group root = h5::open_group(file.file(), "/");
    h5::write_int_attribute(root, "schema_version", kSweepFileVersion);
    h5::write_string_attribute(root, "lrbench_version", lrbench_version());
    h5::write_string_attribute(root, "git_revision", git_revision());
    json index = json::object();
    {
      // Dense: one link per run, 100,000 and more (sweep.h5 is read only after its digest).
      h5::Group runs = h5::create_group(root, "runs", h5::LinkStorage::Dense);
      for_each_run_file(dir, summary.bad, RunRead::Identity, [&](const fs::path&, std::string_view bytes, RunRecord&& run) {
        // The file's bytes as read and checked, whole: its own digest travels with it, and
        // one dataset per run instead of a copy of its ~30 objects keeps merge linear and
        // fast (100,000 runs: docs/benchmarks.md).
        h5::write_array_dataset(runs, run.key, H5T_STD_U8LE, H5T_NATIVE_UINT8, {bytes.size()}, bytes.data());
        const RunView& view = run.view();
        index[run.key] = {{"task", view.task},
                          {"model", view.model},
                          {"seed", view.seed_index ? json(*view.seed_index) : json()},
                          {"status", status_name(run.status)}};
        if (!view.named_stream_indices.is_null()) index[run.key]["streams"] = view.named_stream_indices;
        ++summary.runs;
      });
    }
    json bad = json::array();
    for (const BadResult& b : summary.bad)
      bad.push_back({{"file", b.file.lexically_relative(dir).generic_string()}, {"reason", b.reason}});
    write_text_dataset(root, "bad", bad.dump(-1, ' ', false, json::error_handler_t::replace));
    write_text_dataset(root, "index", index.dump());
    h5::write_int_attribute(root, "complete", 1);  // last
    root.close();
    file.publish();
  } catch (const h5::Error& e) {
    // HDF5 reports a full disk as a failed write or flush, deep in a long stack: the
    // machine's problem, said in the system's words.
    const std::string& stack = e.stack();
    const auto said = stack.find("error message = '");
    const std::string reason = said == std::string::npos
                                   ? std::string(e.what())
                                   : stack.substr(said + 17, stack.find('\'', said + 17) - (said + 17));
    throw EnvironmentError("cannot write " + final_path.string() + " (HDF5 " + e.operation() + "): " + reason +
                           "; free space (or lift the file size limit) and run `lrbench merge " + dir.string() +
                           "` again");
  }
  return summary;
}

namespace {

std::string rebuild_hint(const fs::path& path) {
  return "; rebuild it with `lrbench merge " + path.parent_path().string() + "` if its runs/ folder still exists";
}

// Opens a sweep.h5 and checks it as a whole: its digest (before HDF5 reads a byte of it),
// schema_version, complete marker and /runs. Sets `version`; UserError naming the damage.
h5::File open_sweep_file(const fs::path& path, long long& version) {
  h5::silence_error_printing();
  std::error_code ec;
  if (!fs::exists(path, ec)) throw UserError("no sweep file " + path.string() + "; create it with `lrbench merge DIR`");
  std::string reason;
  h5::File file = h5::open_for_validation(path, reason);
  if (!file) throw UserError(path.string() + " is damaged (" + reason + ")" + rebuild_hint(path));
  try {
    h5::Group root = h5::open_group(file, "/");
    const auto v = h5::read_int_attribute(root, "schema_version");
    if (!v) throw UserError(path.string() + " is not an lrbench sweep file (no schema_version)");
    if (*v != kSweepFileVersion && *v != kSweepFileVersionGroups)
      throw UserError(path.string() + " has schema_version " + std::to_string(*v) + "; this lrbench reads " +
                      std::to_string(kSweepFileVersionGroups) + " and " + std::to_string(kSweepFileVersion) + rebuild_hint(path));
    const auto complete = h5::read_int_attribute(root, "complete");
    if (!complete || *complete != 1) throw UserError(path.string() + " is incomplete: no complete marker" + rebuild_hint(path));
    if (!h5::link_exists(root, "runs")) throw UserError(path.string() + " has no /runs group" + rebuild_hint(path));
    version = *v;
  } catch (const h5::Error& e) {
    throw UserError("cannot read " + path.string() + ": " + e.what() + rebuild_hint(path));
  }
  return file;
}

// /runs/<name> of a sweep.h5: a run file's bytes (schema_version 2, kept in `bytes`), checked
// as a file is, or (schema_version 1) a group copied from a run file's root.
RunFileCheck read_merged_run(const h5::Group& runs, const std::string& name, long long version, const fs::path& path,
                             std::string& bytes) {
  RunFileCheck check;
  bytes.clear();
  try {
    if (version == kSweepFileVersionGroups) {
      check = read_run_group(h5::open_group(runs, name));
    } else {
      const h5::Dataset ds = h5::open_dataset(runs, name);
      const std::vector<hsize_t> dims = h5::dataset_dims(ds);
      const h5::ElementType type = h5::dataset_element_type(ds);
      if (dims.size() != 1 || type.type_class != H5T_INTEGER || type.size != 1) {
        check.reason = "not the bytes of a run file (a 1-D dataset of bytes)";
        return check;
      }
      if (std::string problem = h5::readable_size_problem(ds, 1); !problem.empty()) {
        check.reason = "dataset " + problem;
        return check;
      }
      bytes.assign(static_cast<std::size_t>(dims[0]), '\0');
      h5::read_array_dataset(ds, H5T_NATIVE_UINT8, bytes.data());
      check.reason = sealed_bytes_problem(bytes);
      if (check.reason.empty()) check = read_run_image(bytes, path.string() + ":/runs/" + name);
    }
  } catch (const h5::Error& e) {
    check.reason = e.is_checksum_failure() ? "checksum error in the stored bytes" : "unreadable (" + e.stack() + ")";
  }
  if (check.valid() && check.record->key != name) {
    check.reason = "name is not the run key (key " + check.record->key + ")";
    check.record.reset();
  }
  return check;
}

}  // namespace

ResultsScan read_sweep_file(const fs::path& path) {
  long long version = 0;
  const h5::File file = open_sweep_file(path, version);
  ResultsScan out;
  try {
    h5::Group root = h5::open_group(file, "/");
    try {
      const json bad = json::parse(read_text_dataset(root, "bad", "/bad"));
      for (const json& b : bad)
        out.bad.push_back({path.parent_path() / b.at("file").get<std::string>(), b.at("reason").get<std::string>()});
    } catch (const std::exception& e) {  // BadData or bad JSON: the list is lost, the runs are not
      out.bad.push_back({path, std::string("/bad: ") + e.what()});
    }
    h5::Group runs = h5::open_group(root, "runs");
    std::string bytes;
    for (const std::string& name : h5::link_names(runs)) {
      RunFileCheck check = read_merged_run(runs, name, version, path, bytes);
      if (check.valid())
        out.runs.push_back(std::move(*check.record));
      else
        out.bad.push_back({path, "/runs/" + name + ": " + check.reason});
    }
  } catch (const h5::Error& e) {
    throw UserError("cannot read " + path.string() + ": " + e.what() + rebuild_hint(path));
  }
  sort_bad(out.bad);
  return out;
}

void for_each_merged_run(const fs::path& dir, const std::vector<std::string>& keys,
                         const std::function<void(const std::string& key, std::string_view bytes, RunFileCheck&& check)>& visit) {
  const fs::path path = ResultsLayout(dir).merged();
  std::error_code ec;
  if (keys.empty() || !fs::exists(fs::symlink_status(path, ec))) return;
  long long version = 0;
  const h5::File file = open_sweep_file(path, version);
  try {
    h5::Group runs = h5::open_group(h5::open_group(file, "/"), "runs");
    std::string bytes;
    for (const std::string& key : keys) {
      if (!is_run_key(key) || !h5::link_exists(runs, key)) continue;  // a run key is one plain link name
      RunFileCheck check = read_merged_run(runs, key, version, path, bytes);
      visit(key, bytes, std::move(check));
    }
  } catch (const h5::Error& e) {
    throw UserError("cannot read " + path.string() + ": " + e.what() + rebuild_hint(path));
  }
}

ResultsScan load_results(const fs::path& dir) {
  std::error_code ec;
  if (fs::is_directory(ResultsLayout(dir).runs(), ec)) return scan_runs(dir);
  if (fs::exists(ResultsLayout(dir).merged(), ec)) return read_sweep_file(ResultsLayout(dir).merged());
  throw UserError("no results in " + dir.string() + ": neither " + ResultsLayout(dir).runs().string() + " nor " +
                  ResultsLayout(dir).merged().string() +
                  " exists; give the folder passed to `lrbench run --out` (or run the sweep first)");
}

}  // namespace lrb
