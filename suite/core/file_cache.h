#pragma once
// One bounded, thread-safe cache of what the data loaders decode from files (idx arrays,
// HDF5 data sets, time-series files), so that a sweep which runs many models on one data
// set reads each file once per process, and a process that reads many files keeps only
// the most recently used of them.
//
//   static FileCache<at::Tensor> cache([](const at::Tensor& t) { return t.nbytes(); });
//   at::Tensor t = cache.get(path, read_idx);
//
// - Keyed by path, valid while the file's stamp (size and modification time) is unchanged:
//   an edited or replaced file is read again.
// - Bounded by a number of entries and a byte budget (the loader's size function says what
//   a value costs); the least recently used entries go first. A value larger than the
//   budget is returned but not kept.
// - A failed load (an exception) remembers nothing; a file that cannot be stat'ed (missing)
//   is loaded every time, so that the loader names the problem.
// - Loads run outside the lock: threads reading different files do not wait for each
//   other; two threads missing on one file may both read it (the later result is kept).
//   Values are handed out by copy: keep T cheap to copy (a tensor, a shared_ptr).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

namespace lrb {

// A file's identity for caching: "size@mtime"; "" when its size cannot be read (a
// missing file).
std::string file_stamp(const std::string& path);

struct FileCacheLimits {
  // The default per loader. A sweep reads a few files per data set (Fashion-MNIST: four
  // idx files; a file task: a train and an evaluation file) and may run several data sets,
  // so 8 entries keep a sweep's working set; 4 GiB keeps the largest data sets one runs
  // on a workstation in memory while a process that walks many large files cannot grow
  // without bound. Evicting only costs a second read, never a different result.
  static constexpr std::size_t kDefaultEntries = 8;
  static constexpr std::uint64_t kDefaultBytes = std::uint64_t{4} << 30;  // 4 GiB
  std::size_t max_entries = kDefaultEntries;
  std::uint64_t max_bytes = kDefaultBytes;
};

template <class T>
class FileCache {
 public:
  using SizeFn = std::function<std::uint64_t(const T&)>;

  explicit FileCache(SizeFn size, FileCacheLimits limits = {}) : size_(std::move(size)), limits_(limits) {}
  FileCache(const FileCache&) = delete;
  FileCache& operator=(const FileCache&) = delete;

  // The value of `path`: the cached one while the file's stamp is unchanged, else
  // load(path), kept when it fits. Exceptions of `load` pass through; nothing is kept.
  template <class Load>
  T get(const std::string& path, Load&& load) {
    const std::string stamp = file_stamp(path);
    if (stamp.empty()) return load(path);
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = index_.find(path);
      if (it != index_.end()) {
        if (it->second->stamp == stamp) {
          order_.splice(order_.begin(), order_, it->second);  // most recently used first
          return it->second->value;
        }
        erase(it);  // the file changed: the old value is of no use any more
      }
    }
    T value = load(path);
    const std::uint64_t bytes = size_(value);
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(path);
    if (it != index_.end()) erase(it);
    if (bytes > limits_.max_bytes || limits_.max_entries == 0) return value;
    order_.push_front(Entry{path, stamp, value, bytes});
    index_[path] = order_.begin();
    bytes_ += bytes;
    while (order_.size() > limits_.max_entries || bytes_ > limits_.max_bytes) erase(index_.find(order_.back().path));
    return value;
  }

  std::size_t entries() const {
    std::lock_guard<std::mutex> lock(mu_);
    return order_.size();
  }
  std::uint64_t bytes() const {
    std::lock_guard<std::mutex> lock(mu_);
    return bytes_;
  }
  bool contains(const std::string& path) const {
    std::lock_guard<std::mutex> lock(mu_);
    return index_.count(path) > 0;
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mu_);
    order_.clear();
    index_.clear();
    bytes_ = 0;
  }

 private:
  struct Entry {
    std::string path;
    std::string stamp;
    T value;
    std::uint64_t bytes;
  };
  using Index = std::unordered_map<std::string, typename std::list<Entry>::iterator>;

  void erase(typename Index::iterator it) {  // mu_ held
    bytes_ -= it->second->bytes;
    order_.erase(it->second);
    index_.erase(it);
  }

  SizeFn size_;
  FileCacheLimits limits_;
  mutable std::mutex mu_;
  std::list<Entry> order_;  // most recently used first
  Index index_;
  std::uint64_t bytes_ = 0;
};

}  // namespace lrb
