#pragma once
// Three kinds of failure: errors the user can cause and fix (UserError: a message that says
// what to do, with a file:line:column when it comes from a file; exit 2), failures of the
// environment (EnvironmentError: a full disk, a folder that cannot be written; the message
// names the path and the reason; exit 1) and broken invariants (LRB_CHECK: abort with file
// and line; a bug in lrbench, never the user's fault).
#include <stdexcept>
#include <string>

namespace lrb {

struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
  bool known() const { return line > 0; }
  // "file:line:column", or just the file when the position is unknown.
  std::string str() const;
};

class UserError : public std::runtime_error {
 public:
  explicit UserError(const std::string& message) : std::runtime_error(message) {}
  UserError(SourceLocation where, const std::string& message);
  const SourceLocation& where() const { return where_; }

 private:
  SourceLocation where_;
};

class EnvironmentError : public std::runtime_error {
 public:
  explicit EnvironmentError(const std::string& message) : std::runtime_error(message) {}
};

[[noreturn]] void invariant_failed(const char* expr, const char* file, int line, const std::string& what);

}  // namespace lrb

#define LRB_CHECK(cond, what)                                            \
  do {                                                                   \
    if (!(cond)) ::lrb::invariant_failed(#cond, __FILE__, __LINE__, (what)); \
  } while (0)
