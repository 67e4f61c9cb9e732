#pragma once
// Build identity, generated at build time (cmake/write_git_revision.cmake).
namespace lrb {
const char* lrbench_version();
const char* git_revision();
bool git_dirty();
}  // namespace lrb
