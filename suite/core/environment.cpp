#include "suite/core/environment.h"

#include <dlfcn.h>
#include <link.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <utility>
#include <vector>

#include "suite/core/cpu_info.h"

namespace lrb {

namespace {
int collect_blas(struct dl_phdr_info* info, size_t, void* data) {
  auto* out = static_cast<std::vector<std::string>*>(data);
  if (info->dlpi_name && *info->dlpi_name) {
    const std::string name = info->dlpi_name;
    if (name.find("blas") != std::string::npos) out->push_back(name);
  }
  return 0;
}
}  // namespace

BlasInfo loaded_blas() {
  std::vector<std::string> libs;
  dl_iterate_phdr(collect_blas, &libs);
  BlasInfo b;
  for (const auto& l : libs) {
    std::error_code ec;
    const std::string real = std::filesystem::canonical(l, ec).string();
    const std::string path = ec ? l : real;
    if (b.library.empty() || path.find("openblas") != std::string::npos) b.library = path;
  }
  using ConfigFn = char* (*)();
  if (auto fn = reinterpret_cast<ConfigFn>(dlsym(RTLD_DEFAULT, "openblas_get_config"))) b.config = fn();
  if (auto fn = reinterpret_cast<ConfigFn>(dlsym(RTLD_DEFAULT, "openblas_get_corename"))) b.core = fn();
  if (!b.core.empty()) {
    b.better_core = better_blas_core(b.core, cpu_flags().avx2, cpu_flags().avx512f);
    b.fallback_core = !b.better_core.empty();
    b.wider_core = wider_blas_core(b.core, cpu_flags().avx512f);
  }
  if (const char* choice = std::getenv("LRB_BLAS_CORE_CHOICE")) b.choice = choice;
  if (b.library.empty()) b.library = "(no BLAS library loaded yet)";
  // Debian's reference BLAS lives in .../blas/libblas.so.3; OpenBLAS in .../openblas-*/.
  b.reference = b.config.empty() && b.library.find("/blas/libblas") != std::string::npos;
  return b;
}

nlohmann::json slurm_environment() {
  static const char* names[] = {
      "SLURM_JOB_ID",         "SLURM_JOB_NAME",      "SLURM_CLUSTER_NAME",    "SLURM_JOB_PARTITION",
      "SLURM_JOB_ACCOUNT",    "SLURM_ARRAY_JOB_ID",  "SLURM_ARRAY_TASK_ID",   "SLURM_ARRAY_TASK_COUNT",
      "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX", "SLURM_RESTART_COUNT",  "SLURM_JOB_NODELIST",
      "SLURM_JOB_NUM_NODES",  "SLURM_STEP_ID",       "SLURM_STEP_NODELIST",   "SLURM_NTASKS",
      "SLURM_PROCID",         "SLURM_LOCALID",       "SLURM_NODEID",          "SLURM_CPUS_PER_TASK",
      "SLURM_GPUS_PER_TASK",  "SLURM_STEP_GPUS",     "SLURM_SUBMIT_HOST"};
  nlohmann::json j = nlohmann::json::object();
  for (const char* n : names)
    if (const char* v = std::getenv(n)) j[n] = v;
  // Slurm sets SLURM_RESTART_COUNT only once a job has been requeued: record the first
  // attempt as 0, so every run file of a Slurm job says which attempt ran it.
  if (j.contains("SLURM_JOB_ID") && !j.contains("SLURM_RESTART_COUNT")) j["SLURM_RESTART_COUNT"] = "0";
  return j;
}

std::string utc_now_iso() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

int available_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

int available_physical_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return available_cores();
  std::set<std::pair<std::string, std::string>> cores;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) continue;
    const std::string topology = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
    std::ifstream package(topology + "physical_package_id"), core(topology + "core_id");
    std::string p, c;
    if (!(package >> p) || !(core >> c)) return available_cores();
    cores.emplace(p, c);
  }
  return cores.empty() ? available_cores() : static_cast<int>(cores.size());
}

nlohmann::json heap_pages() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes, mode;
  std::getline(in, modes);  // "always [madvise] never": the chosen one is bracketed
  const auto open = modes.find('['), close = modes.find(']');
  if (open != std::string::npos && close != std::string::npos && close > open) mode = modes.substr(open + 1, close - open - 1);
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  return {{"transparent_huge_pages", mode}, {"glibc_tunables", tunables != nullptr ? tunables : ""}};
}

std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (!path) return "";
  std::string p = path;
  std::size_t start = 0;
  while (start <= p.size()) {
    const auto end = p.find(':', start);
    const std::string dir = p.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!dir.empty()) {
      const std::string candidate = dir + "/" + name;
      if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return "";
}

}  // namespace lrb
