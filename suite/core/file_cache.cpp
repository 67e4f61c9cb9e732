#include "suite/core/file_cache.h"

#include <filesystem>
#include <system_error>

namespace lrb {

std::string file_stamp(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec) return {};
  return std::to_string(size) + "@" + std::to_string(fs::last_write_time(path, ec).time_since_epoch().count());
}

}  // namespace lrb
