#pragma once
// A new HDF5 file streamed to disk as it is built, published atomically with its whole-file
// digest (suite/core/file_digest.h). For files too large to build in memory (sweep.h5);
// smaller ones use h5::MemoryFile (suite/hdf5/h5.h). Defined in h5.cpp, beside the file
// settings it shares; a header of its own keeps h5.h's many includers from rebuilding.
#include <filesystem>

#include "suite/hdf5/h5.h"

namespace lrb::h5 {

// A new file written to disk as it is built (HDF5's default driver), under a temporary
// name beside final_path, with kDigestBlockBytes reserved as its user block. publish()
// closes it, seals its digest (reading it back in blocks), fsyncs it and renames it into
// place: memory stays at HDF5's metadata cache whatever the file's size (sweep.h5 of
// 100,000 runs is about 4 GB). Destroyed unpublished (a full disk, any failure) it removes
// the temporary file.
class StreamedFile {
 public:
  explicit StreamedFile(const std::filesystem::path& final_path);
  ~StreamedFile();
  StreamedFile(const StreamedFile&) = delete;
  StreamedFile& operator=(const StreamedFile&) = delete;
  const File& file() const { return file_; }
  void publish();

 private:
  std::filesystem::path final_path_, temp_path_;
  File file_;
  bool published_ = false;
};

}  // namespace lrb::h5
