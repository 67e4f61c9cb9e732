#pragma once
// fn(0) .. fn(count - 1) on the cores this process may use, for independent pieces of work
// that each write only their own result (a report's per-cell bootstraps): the results do
// not depend on the number of threads. An exception from any piece is rethrown here, the
// lowest index's first, after every thread has finished.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

#include "suite/core/environment.h"

namespace lrb {

template <class Fn>
void parallel_for(std::size_t count, Fn fn) {
  const std::size_t threads = std::min<std::size_t>(count, static_cast<std::size_t>(std::max(1, available_cores())));
  std::vector<std::exception_ptr> errors(count);
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < count; i = next++) {
      try {
        fn(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {  // no more threads to be had: fewer do all the work
      break;
    }
  }
  work();
  for (auto& t : pool) t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace lrb
