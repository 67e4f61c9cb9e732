#pragma once
// Entries that register themselves at static initialisation, each with its place in the
// listing (the attention kernels, the report formats), and are read after main() starts,
// in that order. Models and tasks have their own registry (suite/registry), which the
// layers below it cannot include; this one is for them.
#include <algorithm>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "suite/core/errors.h"

namespace lrb {

// `Entry` has a `name`. `plural` names the entries in the messages ("attention kernels").
// Keep the registry in a function-local static, so that it exists before the first
// registration whatever the order of static initialisation.
template <class Entry>
class OrderedRegistry {
 public:
  // Checks an entry against one registered before it (e.g. two formats claiming one file
  // extension); a conflict is a bug, reported with LRB_CHECK.
  using ConflictCheck = std::function<void(const Entry& earlier, const Entry& added)>;

  explicit OrderedRegistry(std::string plural) : plural_(std::move(plural)) {}

  // A second entry with the same name or the same order is a bug (LRB_CHECK), and so is a
  // registration after the listing was first read: it would be missing from it.
  void add(int order, Entry entry, const ConflictCheck& also = {}) {
    LRB_CHECK(!read_, plural_ + ": '" + entry.name + "' registers after the listing was read");
    for (const auto& [earlier_order, earlier] : added_) {
      LRB_CHECK(earlier.name != entry.name, "two " + plural_ + " register under the name '" + entry.name + "'");
      LRB_CHECK(earlier_order != order, plural_ + " '" + earlier.name + "' and '" + entry.name +
                                            "' register with one listing order (" + std::to_string(order) + ")");
      if (also) also(earlier, entry);
    }
    added_.emplace_back(order, std::move(entry));
  }

  // Every entry, in listing order (sorted once, on first use).
  const std::vector<Entry>& entries() {
    std::call_once(sorted_once_, [this] {
      read_ = true;
      std::sort(added_.begin(), added_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      for (auto& [order, entry] : added_) sorted_.push_back(std::move(entry));
      added_.clear();
    });
    return sorted_;
  }

 private:
  std::string plural_;
  std::vector<std::pair<int, Entry>> added_;
  std::vector<Entry> sorted_;
  std::once_flag sorted_once_;
  bool read_ = false;
};

}  // namespace lrb
