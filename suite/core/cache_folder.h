#pragma once
// Where lrbench keeps what it measured or made once per user and machine (task data, the
// matrix-product peak): $XDG_CACHE_HOME/lrbench, else $HOME/.cache/lrbench. The launcher
// (suite/cli/launcher.cpp, no C++ library of lrbench's) follows the same rule for its BLAS
// verdicts.
#include <filesystem>

namespace lrb {

// The folder (not created), or empty where neither variable gives an absolute path.
std::filesystem::path user_cache_folder();

}  // namespace lrb
