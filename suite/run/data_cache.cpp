#include "suite/run/data_cache.h"

#include <ATen/ATen.h>
#include <fmt/core.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <list>
#include <mutex>
#include <set>
#include <system_error>

#include "suite/core/cache_folder.h"
#include "suite/core/files.h"
#include "suite/core/process_info.h"
#include "suite/core/sha256.h"
#include "suite/run/data_cache_file.h"

namespace lrb {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// A few entries: a sweep interleaves cells, and one dataset per seed is typical.
constexpr std::size_t kEntries = 4;
std::mutex g_mutex;
std::list<std::pair<std::string, std::shared_ptr<const TaskData>>> g_cache;
std::set<std::string> g_warned;  // cache problems already printed (once per process each)

std::shared_ptr<const TaskData> memory_find(const std::string& key) {
  for (auto it = g_cache.begin(); it != g_cache.end(); ++it)
    if (it->first == key) {
      g_cache.splice(g_cache.begin(), g_cache, it);
      return it->second;
    }
  return nullptr;
}

void memory_insert(const std::string& key, std::shared_ptr<const TaskData> data) {
  g_cache.emplace_front(key, std::move(data));
  if (g_cache.size() > kEntries) g_cache.pop_back();
}

void print_warning(const std::string& text, bool once) {
  if (once && !g_warned.insert(text).second) return;
  fmt::print(stderr, "lrbench: warning ({}): {}\n", process_label(), text);
}

json input_identity(const std::string& path) {
  struct ::stat st {};
  if (::stat(path.c_str(), &st) != 0) return {{"path", path}, {"missing", true}};
  const long long mtime_ns = static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec;
  return {{"path", path}, {"size", static_cast<long long>(st.st_size)}, {"mtime_ns", mtime_ns}};
}

std::shared_ptr<const TaskData> generate(const TaskEntry& task, const json& options, std::int64_t seq_len,
                                         const TaskInfo& info, const DataRequest& request) {
  auto data = std::make_shared<TaskData>(task.make(options, seq_len)->generate(request));
  // A task that breaks its contract would otherwise write a file every reader rejects.
  if (auto problem = task_data_problem(*data, info, request.eval_size); !problem.empty())
    throw std::logic_error("task '" + task.name + "' produced data that does not match its description (" + problem +
                           "); this is a bug in the task");
  return data;
}

// Written through a private temporary name, then renamed (write_data_cache_file): readers
// see the old file or the whole new one.
void store(const fs::path& file, const std::string& key, const std::string& description, const TaskData& data) {
  write_data_cache_file(file, key, description, data);
}

// Temporaries of this entry left by a process that died while writing it. Called under the
// entry's lock, which every writer holds, so none of them is being written now.
void remove_stale_temporaries(const fs::path& file) {
  const std::string prefix = "." + file.filename().string() + ".tmp.";
  std::error_code ec;
  for (fs::directory_iterator it(file.parent_path(), ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.compare(0, prefix.size(), prefix) == 0) {
      std::error_code rm;
      fs::remove(it->path(), rm);
    }
  }
}

std::shared_ptr<const TaskData> from_folder(const TaskEntry& task, const json& options, std::int64_t seq_len,
                                            const TaskInfo& info, const DataRequest& request,
                                            const std::string& description, DataSource& src) {
  std::error_code ec;
  fs::create_directories(src.folder, ec);
  if (ec) {
    src.warning = "cannot create the data cache folder " + src.folder.string() + " (" + ec.message() +
                  "); data is generated and not cached (choose another folder with --data-cache)";
    print_warning(src.warning, true);
    src.result = "miss";
    return generate(task, options, seq_len, info, request);
  }
  // Held while the entry is checked and, if need be, made: the first process makes it,
  // the others wait here and then read it.
  FileLock lock(src.folder / (src.key + ".lock"));
  if (!lock.locked()) {
    src.warning = lock.why_unlocked() + "; going on without the lock (processes may generate the same data twice)";
    print_warning(src.warning, true);
  } else {
    remove_stale_temporaries(src.file);
  }
  if (fs::exists(src.file, ec)) {
    DataCacheCheck check = read_data_cache_file(src.file, src.key, description, info, request.eval_size);
    if (check.valid()) {
      src.result = "hit";
      return std::make_shared<const TaskData>(std::move(*check.data));
    }
    src.damage = check.reason;
    print_warning("the data cache file " + src.file.string() + " is damaged (" + check.reason +
                      "); generating the data again to replace it",
                  false);
  }
  auto data = generate(task, options, seq_len, info, request);
  src.result = src.damage.empty() ? "miss" : "regenerated";
  try {
    store(src.file, src.key, description, *data);
  } catch (const std::exception& e) {
    src.warning = "cannot store task data in the cache folder " + src.folder.string() + " (" + e.what() +
                  "); the run goes on with the data in memory";
    print_warning(src.warning, true);
  }
  return data;
}

}  // namespace

json DataSource::to_json() const {
  json j = {{"result", result}, {"key", key}, {"seconds", seconds}};
  if (!folder.empty()) {
    j["folder"] = folder.string();
    j["file"] = file.string();
  }
  if (!damage.empty()) j["damage"] = damage;
  if (!warning.empty()) j["warning"] = warning;
  return j;
}

json data_description(const TaskEntry& task, const json& options, std::int64_t seq_len, const DataRequest& request) {
  json o = options;
  o.erase("metrics");  // chosen metrics never change the data
  json inputs = json::array();
  if (task.input_files)
    for (const auto& path : task.input_files(options)) inputs.push_back(input_identity(path));
  return {{"format", kDataCacheFormat}, {"task", task.name},       {"data_version", task.data_version},
          {"options", o},               {"seq_len", seq_len},      {"seed", request.seed},
          {"eval_size", request.eval_size}, {"inputs", inputs}};
}

CachedTaskData cached_task_data(const TaskEntry& task, const json& options, std::int64_t seq_len, const TaskInfo& info,
                                const DataRequest& request, const fs::path& cache_folder) {
  const auto start = std::chrono::steady_clock::now();
  const std::string description = data_description(task, options, seq_len, request).dump();
  CachedTaskData out;
  DataSource& src = out.source;
  src.key = sha256_hex(description);
  if (!cache_folder.empty()) {
    std::error_code ec;
    src.folder = fs::absolute(cache_folder, ec);
    if (ec) src.folder = cache_folder;
    src.file = src.folder / (src.key + ".h5");
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  if ((out.data = memory_find(src.key))) {
    src.result = "memory";
  } else {
    if (src.folder.empty()) {
      src.result = "off";
      out.data = generate(task, options, seq_len, info, request);
    } else {
      out.data = from_folder(task, options, seq_len, info, request, description, src);
    }
    memory_insert(src.key, out.data);
  }
  src.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

void clear_task_data_cache() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_cache.clear();
}

fs::path default_data_cache_folder() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v ? v : "";
  };
  if (const std::string v = env("LRB_DATA_CACHE"); !v.empty()) return v == "none" ? fs::path() : fs::path(v);
  const fs::path cache = user_cache_folder();
  return cache.empty() ? cache : cache / "data";
}

fs::path data_cache_folder_from(const std::string& option) {
  if (option == "none") return {};
  if (option.empty()) return default_data_cache_folder();
  return option;
}

}  // namespace lrb
