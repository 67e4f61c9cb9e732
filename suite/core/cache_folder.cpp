#include "suite/core/cache_folder.h"

#include <cstdlib>
#include <string>

namespace lrb {

std::filesystem::path user_cache_folder() {
  const auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v ? v : "";
  };
  // The XDG spec ignores a relative XDG_CACHE_HOME.
  if (const std::filesystem::path xdg = env("XDG_CACHE_HOME"); !xdg.empty() && xdg.is_absolute()) return xdg / "lrbench";
  if (const std::filesystem::path home = env("HOME"); !home.empty() && home.is_absolute()) return home / ".cache" / "lrbench";
  return {};
}

}  // namespace lrb
