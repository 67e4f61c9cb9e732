#include "suite/store/results_index.h"

#include "suite/contracts/figures.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <deque>
#include <cmath>
#include <string_view>
#include <system_error>
#include <tuple>
#include <unordered_map>
#include <utility>

#include <nlohmann/json.hpp>

#include "suite/core/errors.h"
#include "suite/core/file_digest.h"
#include "suite/core/files.h"
#include "suite/core/mapped_file.h"
#include "suite/core/parallel_for.h"
#include "suite/core/version.h"
#include "suite/store/index_payload.h"
#include "suite/store/results_layout.h"
#include "suite/store/run_file.h"
#include "suite/store/text_dataset.h"

namespace lrb {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr std::string_view kMagic = "lrbench-index 1\n";
// The most bytes of an index read: about 20 times what 100,000 runs need.
constexpr std::uintmax_t kMaxIndexBytes = std::uintmax_t{4} << 30;

// The provenance fields and records the reports read (see index_view): world_size gives the
// runs a study ran at a time, by which `lrbench plan` and the budget warning divide run time;
// model says where a model came from (a TorchScript file, and whether its seeds share weights);
// gpu names the GPU a run trained on (RunRecord::gpu_name), cpu the processor a CPU run ran on
// (RunRecord::cpu_name); the versions and the BLAS core say why the same run gave other
// results in two folders (report_input.cpp).
constexpr const char* kProvenanceKept[] = {"sweep",       "git_revision", "git_dirty",     "threads",           "device_name",
                                           "gpu",         "cpu",          "world_size",    "model",             "lrbench_version",
                                           "torch_version", "blas",       "blas_core",     "openblas_coretype", "mpi_library",
                                           "hdf5_version"};
constexpr const char* kRecordsKept[] = {"task", "probes"};
constexpr std::string_view kCurvesKeptPrefix = "variant.";  // per-variant inference timings

// The body's second line: an index written by another lrbench or for another view is
// rebuilt, since what it holds (or how files were validated) may differ.
std::string version_line() {
  return std::string("lrbench ") + lrbench_version() + " view " + std::to_string(kIndexViewVersion) + " schema " +
         std::to_string(kResultsSchemaVersion) + "\n";
}

enum class Kind : char { Run = 'R', Bad = 'B' };

// One run file as the index knows it. `payload` is the view as CBOR (Run) or the reason
// (Bad); it points into the index's bytes or into a fresh entry's own string.
struct Entry {
  Kind kind = Kind::Run;
  std::string_view name;
  FileSignature sig;
  RunStatus status = RunStatus::Ok;
  std::int64_t steps_done = 0;
  std::string_view payload;
};

struct LoadedIndex {
  std::optional<MappedFile> file;
  std::vector<Entry> entries;
  std::unordered_map<std::string_view, std::size_t> by_name;
  const Entry* find(std::string_view name) const {
    const auto it = by_name.find(name);
    return it == by_name.end() ? nullptr : &entries[it->second];
  }
};

// Reads one space-separated integer field; false at the end of the line or on garbage.
template <class T>
bool next_number(std::string_view& line, T& out) {
  const auto end = line.find(' ');
  const std::string_view field = line.substr(0, end);
  const auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), out);
  if (ec != std::errc() || ptr != field.data() + field.size() || field.empty()) return false;
  line = end == std::string_view::npos ? std::string_view() : line.substr(end + 1);
  return true;
}

// Entry: "<kind> <name bytes> <payload bytes> <size> <mtime_ns> <ctime_ns> <inode> <status> <steps>\n"
// then the name and the payload. Lengths first: names and payloads may hold any byte.
void append_entry(std::string& out, const Entry& e) {
  out += static_cast<char>(e.kind);
  for (const std::uint64_t n : {static_cast<std::uint64_t>(e.name.size()), static_cast<std::uint64_t>(e.payload.size()),
                                static_cast<std::uint64_t>(e.sig.size)}) {
    out += ' ';
    out += std::to_string(n);
  }
  for (const std::int64_t n : {e.sig.mtime_ns, e.sig.ctime_ns}) {
    out += ' ';
    out += std::to_string(n);
  }
  out += ' ';
  out += std::to_string(e.sig.inode);
  out += ' ';
  out += status_name(e.status);
  out += ' ';
  out += std::to_string(e.steps_done);
  out += '\n';
  out += e.name;
  out += e.payload;
}

// Parses the body of a verified index; throws BadData on anything unexpected.
void parse_entries(std::string_view body, LoadedIndex& index) {
  if (body.substr(0, kMagic.size()) != kMagic) throw BadData("not an lrbench index");
  body.remove_prefix(kMagic.size());
  const std::string version = version_line();
  if (body.substr(0, version.size()) != version) {
    const auto eol = body.find('\n');
    throw BadData("written by another lrbench or for another view (" +
                  std::string(body.substr(0, std::min<std::size_t>(eol, 200))) + ")");
  }
  body.remove_prefix(version.size());
  while (!body.empty()) {
    const auto eol = body.find('\n');
    if (eol == std::string_view::npos) throw BadData("an entry's header has no end");
    std::string_view line = body.substr(0, eol);
    body.remove_prefix(eol + 1);
    Entry e;
    if (line.size() < 2 || (line[0] != 'R' && line[0] != 'B') || line[1] != ' ') throw BadData("an entry of unknown kind");
    e.kind = static_cast<Kind>(line[0]);
    line.remove_prefix(2);
    std::uint64_t name_bytes = 0, payload_bytes = 0;
    if (!next_number(line, name_bytes) || !next_number(line, payload_bytes) || !next_number(line, e.sig.size) ||
        !next_number(line, e.sig.mtime_ns) || !next_number(line, e.sig.ctime_ns) || !next_number(line, e.sig.inode))
      throw BadData("an entry's header is malformed");
    const auto space = line.find(' ');
    try {
      e.status = status_from_name(std::string(line.substr(0, space)));
    } catch (const std::invalid_argument&) {
      throw BadData("an entry has an unknown status");
    }
    line = space == std::string_view::npos ? std::string_view() : line.substr(space + 1);
    if (!next_number(line, e.steps_done) || !line.empty()) throw BadData("an entry's header is malformed");
    // What steps_of writes: 0, or a stopped run's steps up to 2^53. Anything else was not
    // written by lrbench, and would be printed as it stands.
    if (e.steps_done < 0 || e.steps_done > (std::int64_t{1} << 53) || (e.steps_done > 0 && e.status != RunStatus::Stopped))
      throw BadData("an entry's step count is out of range");
    if (name_bytes > body.size() || payload_bytes > body.size() - name_bytes) throw BadData("an entry runs past the end");
    e.name = body.substr(0, name_bytes);
    e.payload = body.substr(name_bytes, payload_bytes);
    body.remove_prefix(name_bytes + payload_bytes);
    if (!index.by_name.emplace(e.name, index.entries.size()).second) throw BadData("two entries for one file");
    index.entries.push_back(e);
  }
}

// The index of DIR, or nullopt with the reason it cannot be used ("" when there is none).
std::optional<LoadedIndex> read_index(const fs::path& dir, std::string& problem) {
  const fs::path path = ResultsLayout(dir).index();
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec))) return std::nullopt;
  LoadedIndex index;
  try {
    index.file.emplace(path, kMaxIndexBytes, "the results index");
    const std::string_view bytes = index.file->bytes();
    problem = sealed_bytes_problem(bytes);
    if (!problem.empty()) return std::nullopt;
    index.entries.reserve(bytes.size() / 1024);
    index.by_name.reserve(bytes.size() / 1024);
    parse_entries(digest_body(bytes), index);
  } catch (const std::exception& e) {
    problem = e.what();
    return std::nullopt;
  }
  return index;
}

template <std::size_t N>
json pick_keys(const json& from, const char* const (&keys)[N]) {
  json out = json::object();
  if (!from.is_object()) return out;
  for (const char* k : keys) {
    const auto it = from.find(k);
    if (it != from.end()) out[k] = *it;
  }
  return out;
}

RunRecord record_from_payload(const Entry& e) {
  RunRecord r;
  r.key = std::string(e.name.substr(0, e.name.size() - 3));  // runs/<key>.h5
  r.status = e.status;
  decode_view_payload(e.payload, r);
  return r;
}

std::int64_t steps_of(const RunRecord& r) {
  const auto it = r.metrics.find("steps_done");
  if (r.status != RunStatus::Stopped || it == r.metrics.end() || !std::isfinite(it->second) || it->second <= 0) return 0;
  // At most 2^53 (a double's exact integers): a damaged or hand-made value cannot overflow.
  return static_cast<std::int64_t>(std::min(it->second, 9007199254740992.0));
}

// A folder held open for stat calls by name within it, on every core: 100,000 of them, each
// without walking the folder's whole path again. By path where it cannot be opened.
class OpenFolder {
 public:
  explicit OpenFolder(fs::path path) : path_(std::move(path)), fd_(::open(path_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {}
  ~OpenFolder() {
    if (fd_ >= 0) ::close(fd_);
  }
  OpenFolder(const OpenFolder&) = delete;
  OpenFolder& operator=(const OpenFolder&) = delete;
  std::optional<FileSignature> signature(const std::string& name) const {
    return fd_ >= 0 ? signature_at(fd_, name.c_str()) : signature_of(path_ / name);
  }

 private:
  fs::path path_;
  int fd_;
};

struct RunFileName {
  std::string name;
  std::optional<FileSignature> sig;
};

// DIR/runs/*.h5 but temporaries, by name, each with its signature taken before it is read.
std::vector<RunFileName> list_run_files(const fs::path& runs) {
  std::vector<RunFileName> out;
  std::error_code ec;
  for (fs::directory_iterator it(runs, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (is_temp_name(name) || it->path().extension() != ".h5") continue;
    out.push_back({std::move(name), std::nullopt});
  }
  if (ec) throw EnvironmentError("cannot list " + runs.string() + ": " + ec.message() + "; check its permissions");
  std::sort(out.begin(), out.end(), [](const RunFileName& a, const RunFileName& b) { return a.name < b.name; });
  const OpenFolder folder(runs);
  parallel_for(out.size(), [&](std::size_t i) { out[i].sig = folder.signature(out[i].name); });
  return out;
}

void write_index(const fs::path& dir, const std::vector<Entry>& entries, IndexRefresh& refresh) {
  std::size_t payload_bytes = 0;
  for (const Entry& e : entries) payload_bytes += e.name.size() + e.payload.size();
  std::string bytes(kDigestBlockBytes, '\0');
  bytes.reserve(kDigestBlockBytes + payload_bytes + entries.size() * 160 + 256);
  bytes += kMagic;
  bytes += version_line();
  for (const Entry& e : entries) append_entry(bytes, e);
  seal_digest(bytes);
  try {
    write_file_atomic(ResultsLayout(dir).index(), bytes);
    refresh.written = true;
  } catch (const std::exception& e) {
    refresh.write_problem = e.what();
  }
}

}  // namespace

RunRecord index_view(RunRecord full) {
  RunRecord view;
  view.key = std::move(full.key);
  view.spec = std::move(full.spec);
  view.status = full.status;
  view.error = std::move(full.error);
  view.metrics = std::move(full.metrics);
  view.provenance = pick_keys(full.provenance, kProvenanceKept);
  view.records = pick_keys(full.records, kRecordsKept);
  for (auto& [name, values] : full.curves)
    if (name.compare(0, kCurvesKeptPrefix.size(), kCurvesKeptPrefix) == 0) view.curves.emplace(name, std::move(values));
  // What every lrbench program knows need not be kept: a model's figures are.
  for (auto& [name, figure] : full.figures)
    if (!is_harness_figure(name)) view.figures.emplace(name, std::move(figure));
  return view;
}

std::optional<FileSignature> signature_of(const fs::path& file) { return signature_at(AT_FDCWD, file.c_str()); }

std::optional<FileSignature> signature_at(int folder, const char* name) {
  struct stat st {};
  if (::fstatat(folder, name, &st, 0) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  FileSignature s;
  s.size = static_cast<std::uintmax_t>(st.st_size);
  s.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  s.ctime_ns = static_cast<std::int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
  s.inode = static_cast<std::uint64_t>(st.st_ino);
  return s;
}

namespace {

// The entries still valid, decoded on every core: decoding is most of reading a large folder
// through its index. One that does not decode stays empty (its file is read).
std::vector<std::optional<RunRecord>> decode_still_valid(const std::vector<RunFileName>& files,
                                                         const std::vector<const Entry*>& known_of) {
  std::vector<std::optional<RunRecord>> decoded(files.size());
  parallel_for(files.size(), [&](std::size_t i) {
    const Entry* known = known_of[i];
    if (known == nullptr || known->sig != *files[i].sig || known->kind != Kind::Run) return;
    try {
      decoded[i] = record_from_payload(*known);
    } catch (const std::exception&) {  // sealed but not decodable (written by a faulty writer)
    }
  });
  return decoded;
}

// A file new or changed since the index was written, read and checked: its run (or its
// reason) goes to `out`, and its entry is returned, its payload kept in `payloads`; none
// for what is not a regular file (or is gone): that is never cached.
std::optional<Entry> read_fresh(const fs::path& runs, const RunFileName& f, const IndexOptions& options, ResultsScan& out,
                                IndexRefresh& refresh, std::deque<std::string>& payloads) {
  ++refresh.read;
  RunFileCheck check = read_run_file(runs / f.name);
  Entry e;
  if (check.valid()) {
    RunRecord view = index_view(std::move(*check.record));
    e.status = view.status;
    e.steps_done = steps_of(view);
    payloads.push_back(encode_view_payload(view));
    if (options.records)
      out.runs.push_back(std::move(view));
    else
      ++refresh.runs;
  } else {
    e.kind = Kind::Bad;
    payloads.push_back(check.reason);
    out.bad.push_back({runs / f.name, check.reason});
  }
  if (!f.sig) return std::nullopt;
  e.name = f.name;
  e.sig = *f.sig;
  e.payload = payloads.back();
  return e;
}

}  // namespace

ResultsScan scan_runs_indexed(const fs::path& dir, IndexRefresh& refresh, IndexOptions options) {
  ResultsScan out;
  const fs::path runs = ResultsLayout(dir).runs();
  std::error_code ec;
  if (!fs::is_directory(runs, ec)) return out;
  std::optional<LoadedIndex> old;
  if (!options.rebuild) old = read_index(dir, refresh.ignored);
  const std::vector<RunFileName> files = list_run_files(runs);

  std::vector<const Entry*> known_of(files.size(), nullptr);
  for (std::size_t i = 0; i < files.size(); ++i)
    if (old && files[i].sig) known_of[i] = old->find(files[i].name);
  std::vector<std::optional<RunRecord>> decoded(files.size());
  if (options.records) decoded = decode_still_valid(files, known_of);

  std::vector<Entry> entries;
  entries.reserve(files.size());
  std::size_t replaced = 0;  // entries of files changed since
  std::deque<std::string> fresh_payloads;  // owns what fresh entries point to; never moves them
  if (options.records) out.runs.reserve(files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    const RunFileName& f = files[i];
    const Entry* known = known_of[i];
    if (known != nullptr && known->sig != *f.sig) ++replaced;
    if (known != nullptr && known->sig == *f.sig && known->kind == Kind::Run && options.records && !decoded[i]) {
      ++replaced;  // not decodable: read the file
      known = nullptr;
    }
    if (known != nullptr && known->sig == *f.sig) {
      ++refresh.reused;
      entries.push_back(*known);
      if (known->kind == Kind::Bad)
        out.bad.push_back({runs / f.name, std::string(known->payload)});
      else if (decoded[i])
        out.runs.push_back(std::move(*decoded[i]));
      else
        ++refresh.runs;
    } else if (std::optional<Entry> e = read_fresh(runs, f, options, out, refresh, fresh_payloads)) {
      entries.push_back(std::move(*e));
    }
  }
  refresh.dropped = old ? old->entries.size() - refresh.reused - replaced : 0;
  std::sort(out.runs.begin(), out.runs.end(), [](const RunRecord& a, const RunRecord& b) { return a.key < b.key; });
  std::sort(out.bad.begin(), out.bad.end(),
            [](const BadResult& x, const BadResult& y) { return std::tie(x.file, x.reason) < std::tie(y.file, y.reason); });
  refresh.runs += out.runs.size();
  refresh.bad = out.bad.size();
  const bool changed = !old || refresh.read > 0 || refresh.dropped > 0;
  if (options.write && (changed || options.rebuild)) write_index(dir, entries, refresh);
  return out;
}

namespace {

// The keys with no run file, from DIR/sweep.h5 where it holds them (a merged-only folder):
// as `run` restores them, status counts them. A sweep.h5 unusable as a whole is said in
// `problem` and its runs stay missing.
void merged_statuses(const fs::path& dir, const std::vector<std::string>& run_keys, std::vector<IndexedStatus>& out,
                     std::string* problem) {
  std::unordered_map<std::string, std::size_t> missing;
  for (std::size_t i = 0; i < run_keys.size(); ++i)
    if (out[i].kind == IndexedStatus::Kind::Missing) missing.emplace(run_keys[i], i);
  std::vector<std::string> keys;
  for (const auto& [key, i] : missing) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  try {
    for_each_merged_run(dir, keys, [&](const std::string& key, std::string_view, RunFileCheck&& check) {
      IndexedStatus& s = out[missing.at(key)];
      s.kind = check.valid() ? IndexedStatus::Kind::Run : IndexedStatus::Kind::Bad;
      if (check.valid()) {
        s.status = check.record->status;
        s.steps_done = steps_of(*check.record);
      }
    });
  } catch (const UserError& e) {
    if (problem != nullptr) *problem = std::string(e.what()) + "; its runs count as missing";
  }
}

}  // namespace

std::vector<IndexedStatus> run_statuses(const fs::path& dir, const std::vector<std::string>& run_keys, std::string* merged_problem) {
  std::string ignored;
  const std::optional<LoadedIndex> index = read_index(dir, ignored);
  std::vector<IndexedStatus> out(run_keys.size());
  const ResultsLayout layout(dir);
  // Signatures and index entries on every core (stat calls by name within the folder); the
  // files the index cannot answer for are read afterwards, one at a time (HDF5 is serial).
  std::vector<char> answered(run_keys.size(), 0);
  const OpenFolder folder(layout.runs());
  if (index)
    parallel_for(run_keys.size(), [&](std::size_t i) {
      const std::string name = layout.run_file(run_keys[i]).filename().string();
      const std::optional<FileSignature> sig = folder.signature(name);
      const Entry* known = sig ? index->find(name) : nullptr;
      if (known == nullptr || known->sig != *sig) return;
      IndexedStatus& s = out[i];
      s.kind = known->kind == Kind::Run ? IndexedStatus::Kind::Run : IndexedStatus::Kind::Bad;
      s.status = known->status;
      s.steps_done = known->steps_done;
      answered[i] = 1;
    });
  for (std::size_t i = 0; i < run_keys.size(); ++i) {
    if (answered[i]) continue;
    IndexedStatus& s = out[i];
    const fs::path file = layout.run_file(run_keys[i]);
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(file, ec))) continue;
    const RunFileCheck check = read_run_file(file);
    s.kind = check.valid() ? IndexedStatus::Kind::Run : IndexedStatus::Kind::Bad;
    if (check.valid()) {
      s.status = check.record->status;
      s.steps_done = steps_of(*check.record);
    }
  }
  merged_statuses(dir, run_keys, out, merged_problem);
  return out;
}

}  // namespace lrb
