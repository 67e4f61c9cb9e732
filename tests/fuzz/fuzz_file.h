#pragma once
// The fuzz targets' inputs as files: the readers under test take a path. One scratch file
// per process (libFuzzer's -fork and -jobs run several).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace lrb::fuzz {

inline const std::filesystem::path& scratch_file(const std::string& target) {
  static const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("lrb-fuzz-" + target + "-" + std::to_string(::getpid()));
  return path;
}

inline void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace lrb::fuzz
