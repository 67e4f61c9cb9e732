#include "suite/core/file_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/subprocess.h"

namespace lrb {
namespace {

namespace fs = std::filesystem;

// Values are the file's text; a value costs its length in bytes.
class FileCacheTest : public ::testing::Test {
 protected:
  std::string file(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  // A loader that counts its calls.
  auto loader() {
    return [this](const std::string& path) {
      ++loads_;
      std::ifstream in(path, std::ios::binary);
      return std::string(std::istreambuf_iterator<char>(in), {});
    };
  }
  static FileCacheLimits limits(std::size_t entries, std::uint64_t bytes) {
    FileCacheLimits l;
    l.max_entries = entries;
    l.max_bytes = bytes;
    return l;
  }
  static std::uint64_t length(const std::string& s) { return s.size(); }

  test::TempDir dir_;
  std::atomic<int> loads_{0};
};

TEST_F(FileCacheTest, ASecondGetOfAnUnchangedFileIsAHit) {
  FileCache<std::string> cache(length);
  const auto a = file("a", "alpha");
  EXPECT_EQ(cache.get(a, loader()), "alpha");
  EXPECT_EQ(cache.get(a, loader()), "alpha");
  EXPECT_EQ(loads_, 1);
  EXPECT_EQ(cache.entries(), 1u);
  EXPECT_EQ(cache.bytes(), 5u);
}

TEST_F(FileCacheTest, AChangedFileIsReadAgain) {
  FileCache<std::string> cache(length);
  const auto a = file("a", "alpha");
  EXPECT_EQ(cache.get(a, loader()), "alpha");
  file("a", "alpha, edited");  // another size: another stamp, whatever the clock's resolution
  EXPECT_EQ(cache.get(a, loader()), "alpha, edited");
  EXPECT_EQ(loads_, 2);
  EXPECT_EQ(cache.entries(), 1u);
  EXPECT_EQ(cache.bytes(), 13u);
  EXPECT_EQ(cache.get(a, loader()), "alpha, edited");
  EXPECT_EQ(loads_, 2);
}

TEST_F(FileCacheTest, TheLeastRecentlyUsedEntryGoesAtTheEntryBound) {
  FileCache<std::string> cache(length, limits(2, 1000));
  const auto a = file("a", "a"), b = file("b", "b"), c = file("c", "c");
  cache.get(a, loader());
  cache.get(b, loader());
  cache.get(a, loader());  // a is now the most recently used
  cache.get(c, loader());  // evicts b
  EXPECT_EQ(loads_, 3);
  EXPECT_TRUE(cache.contains(a));
  EXPECT_FALSE(cache.contains(b));
  EXPECT_TRUE(cache.contains(c));
  EXPECT_EQ(cache.entries(), 2u);
  cache.get(b, loader());  // read again; evicts a
  EXPECT_EQ(loads_, 4);
  EXPECT_FALSE(cache.contains(a));
}

TEST_F(FileCacheTest, TheLeastRecentlyUsedEntriesGoAtTheByteBound) {
  FileCache<std::string> cache(length, limits(100, 10));
  const auto a = file("a", "aaaa"), b = file("b", "bbbb"), c = file("c", "cccccc");
  cache.get(a, loader());
  cache.get(b, loader());
  EXPECT_EQ(cache.bytes(), 8u);
  cache.get(c, loader());  // 14 bytes: a goes, 10 stay
  EXPECT_FALSE(cache.contains(a));
  EXPECT_TRUE(cache.contains(b));
  EXPECT_TRUE(cache.contains(c));
  EXPECT_EQ(cache.bytes(), 10u);
}

TEST_F(FileCacheTest, AValueLargerThanTheBoundIsReturnedButNotKept) {
  FileCache<std::string> cache(length, limits(8, 10));
  const auto small = file("small", "tiny"), big = file("big", "far more than ten bytes");
  cache.get(small, loader());
  EXPECT_EQ(cache.get(big, loader()), "far more than ten bytes");
  EXPECT_FALSE(cache.contains(big));
  EXPECT_TRUE(cache.contains(small));  // nothing was evicted to make room for it
  EXPECT_EQ(cache.get(big, loader()), "far more than ten bytes");
  EXPECT_EQ(loads_, 3);
}

TEST_F(FileCacheTest, AFailedLoadIsNotRemembered) {
  FileCache<std::string> cache(length);
  const auto a = file("a", "alpha");
  int calls = 0;
  auto flaky = [&](const std::string& path) -> std::string {
    if (++calls == 1) throw std::runtime_error("bad file");
    return loader()(path);
  };
  EXPECT_THROW(cache.get(a, flaky), std::runtime_error);
  EXPECT_EQ(cache.entries(), 0u);
  EXPECT_EQ(cache.get(a, flaky), "alpha");
  EXPECT_EQ(calls, 2);
}

TEST_F(FileCacheTest, AMissingFileIsLoadedEveryTimeSoTheLoaderNamesIt) {
  FileCache<std::string> cache(length);
  const std::string missing = (dir_ / "missing").string();
  auto named = [&](const std::string& path) -> std::string { throw std::runtime_error(path + ": no such file"); };
  EXPECT_THROW(cache.get(missing, named), std::runtime_error);
  EXPECT_EQ(file_stamp(missing), "");
  EXPECT_EQ(cache.entries(), 0u);
}

TEST_F(FileCacheTest, ThreadsShareOneCacheSafely) {
  FileCache<std::shared_ptr<const std::string>> cache([](const std::shared_ptr<const std::string>& s) { return s->size(); },
                                                      limits(3, 1000));
  std::vector<std::string> paths;
  for (int i = 0; i < 5; ++i) paths.push_back(file("f" + std::to_string(i), std::string(10 + i, 'a' + i)));
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 400; ++i) {
        const int k = (i * 7 + t) % 5;
        auto v = cache.get(paths[k], [&](const std::string& path) {
          ++loads_;
          std::ifstream in(path, std::ios::binary);
          return std::make_shared<const std::string>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
        });
        if (*v != std::string(10 + k, 'a' + k)) ++wrong;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong, 0);
  EXPECT_LE(cache.entries(), 3u);
  EXPECT_GE(loads_, 5);
  std::uint64_t expected = 0;
  for (int k = 0; k < 5; ++k)
    if (cache.contains(paths[k])) expected += 10 + k;
  EXPECT_EQ(cache.bytes(), expected);
}

}  // namespace
}  // namespace lrb
