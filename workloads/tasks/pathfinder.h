#pragma once
// The Pathfinder generator (LRA Pathfinder 32x32 and Path-X 128x128), exposed so tests can
// check every label against the generator's own record of which path each marker sits on.
#include <array>
#include <cstdint>
#include <vector>

#include "suite/contracts/options.h"
#include "suite/core/seeds.h"

namespace lrb {

struct PathfinderParams {
  int size = 32;               // image height and width
  int contour_length = 14;     // paddles per long path (6 easy, 9 medium, 14 hard)
  double paddle_length = 2.0;  // pixels
  double paddle_margin = 1.0;  // gap between consecutive paddles, pixels
  double thickness = 0.5;      // stroke width, pixels
  double marker_radius = 1.5;  // pixels
  double continuity = 1.0;     // max turn between paddles = continuity * 30 degrees
  int distractor_length = 4;   // paddles per distractor (contour_length / 3)
  int num_distractors = 5;     // 20 / distractor_length
};

using Point = std::array<double, 2>;  // (x = column, y = row), pixel centres at integers

struct PathRecord {
  std::vector<std::array<Point, 2>> paddles;  // in order along the path
  bool distractor = false;
  Point start() const { return paddles.front()[0]; }
  Point end() const { return paddles.back()[1]; }
};

struct PathfinderSample {
  std::vector<std::uint8_t> pixels;  // size*size, row-major, 0..255
  std::int64_t label = 0;            // 1: both markers sit on one path
  std::vector<PathRecord> paths;     // paths[0], paths[1]: the long paths; then distractors
  std::array<Point, 2> markers{};    // marker centres (each at an end of its path)
  std::array<int, 2> marker_path{};  // index into paths of the path each marker sits on
};

// Draws one image; `same_path` says whether both markers go on one path. Throws UserError
// when the parameters leave no room for the paths.
PathfinderSample generate_pathfinder_sample(const PathfinderParams& p, bool same_path, Rng& rng);

// Parameters from a resolved option set of the "pathfinder" or "pathx" task.
PathfinderParams pathfinder_params(const json& options, int size);

}  // namespace lrb
