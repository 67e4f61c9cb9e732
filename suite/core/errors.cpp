#include "suite/core/errors.h"

#include <cstdio>
#include <cstdlib>

namespace lrb {

std::string SourceLocation::str() const {
  if (!known()) return file;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

UserError::UserError(SourceLocation where, const std::string& message)
    : std::runtime_error(where.str().empty() ? message : where.str() + ": " + message),
      where_(std::move(where)) {}

void invariant_failed(const char* expr, const char* file, int line, const std::string& what) {
  std::fprintf(stderr, "lrbench: internal error at %s:%d: %s (%s)\n", file, line, what.c_str(), expr);
  std::fflush(stderr);
  std::abort();
}

}  // namespace lrb
