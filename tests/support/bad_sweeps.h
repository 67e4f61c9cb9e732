#pragma once
// Sweep files that must be refused before anything runs: where the message points first
// (file:line:column) and what it says. Shared by the config tests' tables of mistakes.
#include <gtest/gtest.h>

#include <cctype>
#include <ostream>
#include <string>

#include "suite/config/expand.h"
#include "suite/config/sweep_spec.h"

namespace lrb::test {

struct BadSweep {
  const char* name;
  std::string text;
  std::string where;     // the message's "file:line:column" prefix
  std::string contains;  // a part of the message
};
inline void PrintTo(const BadSweep& c, std::ostream* os) { *os << c.name; }

// Parses and expands `c.text` as `file`: a failure unless a UserError starts at c.where and says c.contains.
inline void expect_refused(const BadSweep& c, const std::string& file) {
  try {
    (void)expand_sweep(parse_sweep(c.text, file));
    ADD_FAILURE() << "accepted: " << c.name;
  } catch (const UserError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(c.where, 0), 0u) << msg;
    EXPECT_NE(msg.find(c.contains), std::string::npos) << msg;
  }
}

// A parameterised test's name from the case's words ("unknown stream" -> unknown_stream).
inline std::string bad_sweep_name(const ::testing::TestParamInfo<BadSweep>& i) {
  std::string n = i.param.name;
  for (auto& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

}  // namespace lrb::test
