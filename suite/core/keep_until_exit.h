#pragma once
// A value that lives until the process exits and is never destroyed: for the large inputs
// of a command that ends right after using them. Freeing the 100,000 decoded runs of a
// report, one allocation at a time, takes longer than writing its tables; the operating
// system takes the whole heap back at once. Reachable to the end (from a static), so leak
// checkers do not count it. Not for anything with work to do in its destructor (files,
// locks): only plain memory.
#include <memory>
#include <utility>
#include <vector>

namespace lrb {

template <class T>
T& keep_until_exit(T value) {
  static auto* kept = new std::vector<std::shared_ptr<void>>();  // never deleted, on purpose
  auto owned = std::make_shared<T>(std::move(value));
  T& ref = *owned;
  kept->push_back(std::move(owned));
  return ref;
}

}  // namespace lrb
