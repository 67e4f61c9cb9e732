// Pathfinder and Path-X (Long Range Arena): two long curved paths made of short paddles,
// short distractor paths, and two circular markers, each at an end of a long path. The
// label says whether both markers sit on the same path. Parameters follow LRA's 32x32
// settings (paddle length 2, thickness 0.5, margin 1, marker radius 1.5, contour length 14,
// continuity 1.0, distractors a third as long; Path-X at 128x128 with marker radius 3,
// thickness 1.5, continuity 1.8); where LRA leaves a choice open (Path-X paddle length and gap,
// what "continuity" measures) the defaults below are ours and are options.
//
// Paths never touch: a paddle is rejected when any pixel it inks lies next to (8-neighbour)
// a pixel of another path or of a non-adjacent paddle of its own path, so whether two
// markers are connected is decided by the path records, not by pixel accidents.
#include "workloads/tasks/pathfinder.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "suite/registry/registry.h"
#include "suite/contracts/task.h"
#include "workloads/tasks/common.h"

namespace lrb {
namespace {

constexpr int kPaddleTries = 10;     // turns tried for one paddle before restarting its path
constexpr int kBacktracks = 20;      // paddles taken back before a path starts over
constexpr int kPathRestarts = 10;    // fresh starts of one path before restarting the image
constexpr int kSecondPathRestarts = 3;  // path 1: a new image is often the cheaper way out
constexpr int kImageAttempts = 300;  // before giving up with a UserError
constexpr int kMarkerPaddle = 1 << 14;

double segment_distance2(double px, double py, const Point& a, const Point& b) {
  const double dx = b[0] - a[0], dy = b[1] - a[1];
  const double len2 = dx * dx + dy * dy;
  double t = len2 > 0 ? ((px - a[0]) * dx + (py - a[1]) * dy) / len2 : 0.0;
  t = std::min(1.0, std::max(0.0, t));
  const double ex = a[0] + t * dx - px, ey = a[1] + t * dy - py;
  return ex * ex + ey * ey;
}

class Canvas {
 public:
  explicit Canvas(int n) : n_(n), ink_(n * n, 0.f), owner_(n * n, -1), paddle_(n * n, 0) {}

  // Pixels within `reach` of segment ab (a = b: a disc), with their squared distance.
  template <class F>
  void for_covered(const Point& a, const Point& b, double reach, F&& f) const {
    const int x0 = std::max(0, static_cast<int>(std::floor(std::min(a[0], b[0]) - reach)));
    const int x1 = std::min(n_ - 1, static_cast<int>(std::ceil(std::max(a[0], b[0]) + reach)));
    const int y0 = std::max(0, static_cast<int>(std::floor(std::min(a[1], b[1]) - reach)));
    const int y1 = std::min(n_ - 1, static_cast<int>(std::ceil(std::max(a[1], b[1]) + reach)));
    const double reach2 = reach * reach;
    for (int y = y0; y <= y1; ++y)
      for (int x = x0; x <= x1; ++x) {
        const double d2 = segment_distance2(x, y, a, b);
        if (d2 < reach2) f(y * n_ + x, d2);
      }
  }

  // Whether inking ab for path `id`, paddle `idx`, would touch something it must not.
  bool collides(const Point& a, const Point& b, double reach, int id, int idx) const {
    bool hit = false;
    for_covered(a, b, reach, [&](int p, double) {
      if (hit) return;
      const int y = p / n_, x = p % n_;
      for (int dy = -1; dy <= 1 && !hit; ++dy)
        for (int dx = -1; dx <= 1 && !hit; ++dx) {
          const int yy = y + dy, xx = x + dx;
          if (yy < 0 || xx < 0 || yy >= n_ || xx >= n_) continue;
          const int q = yy * n_ + xx;
          if (owner_[q] < 0) continue;
          if (owner_[q] != id || paddle_[q] < idx - 1) hit = true;
        }
    });
    return hit;
  }

  // What inking a paddle overwrote, so the paddle can be taken back.
  struct Undo {
    std::vector<int> pixel;
    std::vector<float> ink;
    std::vector<std::int16_t> owner, paddle;
  };

  void ink(const Point& a, const Point& b, double reach, double softness, int id, int idx, Undo* undo = nullptr) {
    for_covered(a, b, reach, [&](int p, double d2) {
      const double d = std::sqrt(d2);
      if (undo) {
        undo->pixel.push_back(p);
        undo->ink.push_back(ink_[p]);
        undo->owner.push_back(owner_[p]);
        undo->paddle.push_back(paddle_[p]);
      }
      const float v = static_cast<float>(std::min(1.0, (reach - d) / softness));
      ink_[p] = std::max(ink_[p], v);
      owner_[p] = static_cast<std::int16_t>(id);
      paddle_[p] = static_cast<std::int16_t>(idx);
    });
  }

  void claim(const Point& c, double reach, int id) {
    for_covered(c, c, reach, [&](int p, double) {
      if (owner_[p] < 0) {
        owner_[p] = static_cast<std::int16_t>(id);
        paddle_[p] = static_cast<std::int16_t>(kMarkerPaddle);
      }
    });
  }

  // Gives back what claim() took and nothing inked since.
  void release(const Point& c, double reach, int id) {
    for_covered(c, c, reach, [&](int p, double) {
      if (owner_[p] == id && paddle_[p] == kMarkerPaddle && ink_[p] == 0.f) owner_[p] = -1;
    });
  }

  void undo(const Undo& u) {
    for (std::size_t k = u.pixel.size(); k-- > 0;) {
      ink_[u.pixel[k]] = u.ink[k];
      owner_[u.pixel[k]] = u.owner[k];
      paddle_[u.pixel[k]] = u.paddle[k];
    }
  }

  int size() const { return n_; }
  const std::vector<float>& ink() const { return ink_; }
  std::int16_t owner(int p) const { return owner_[p]; }

 private:
  int n_;
  std::vector<float> ink_;
  std::vector<std::int16_t> owner_, paddle_;
};

class PathDrawer {
 public:
  PathDrawer(const PathfinderParams& p, Rng& rng) : p_(p), rng_(rng) {
    reach_ = p.thickness / 2 + 0.5;
    softness_ = std::min(1.0, p.thickness);
    border_ = std::ceil(p.marker_radius);
    max_turn_ = p.continuity * kTwoPi / 12;
  }

  // Draws path `id` of `paddles` paddles onto the canvas; false (canvas unchanged) when
  // it found no room. A paddle with no room takes back the last two (up to kBacktracks
  // times) before the path starts over elsewhere: in a 32x32 image a 14-paddle path
  // often runs into a wall, and backing up is much cheaper than starting over.
  bool draw(Canvas& canvas, int id, int paddles, PathRecord& out, int restarts) {
    std::vector<Canvas::Undo> undo;
    std::vector<double> heading;
    for (int r = 0; r < restarts; ++r) {
      PathRecord rec;
      undo.clear();
      heading.clear();
      int backtracks = 0;
      while (static_cast<int>(rec.paddles.size()) < paddles) {
        const int i = static_cast<int>(rec.paddles.size());
        Canvas::Undo u;
        double th = 0;
        if (place(canvas, id, i, i ? rec.paddles.back()[1] : Point{}, i ? heading.back() : 0.0, rec, th, u)) {
          undo.push_back(std::move(u));
          heading.push_back(th);
          continue;
        }
        if (i == 0 || backtracks++ >= kBacktracks) break;
        for (int k = 0; k < std::min(i, 2); ++k) {
          canvas.undo(undo.back());
          undo.pop_back();
          heading.pop_back();
          rec.paddles.pop_back();
        }
      }
      if (static_cast<int>(rec.paddles.size()) == paddles) {
        out = std::move(rec);
        return true;
      }
      while (!undo.empty()) {
        canvas.undo(undo.back());
        undo.pop_back();
      }
    }
    return false;
  }

  // A marker disc at c for path `id`: false when it would touch another path.
  bool marker_fits(const Canvas& canvas, const Point& c, int id) const {
    bool hit = false;
    const int n = canvas.size();
    canvas.for_covered(c, c, p_.marker_radius + 0.5, [&](int p, double) {
      const int y = p / n, x = p % n;
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          const int yy = y + dy, xx = x + dx;
          if (yy < 0 || xx < 0 || yy >= n || xx >= n) continue;
          const int o = canvas.owner(yy * n + xx);
          if (o >= 0 && o != id) hit = true;
        }
    });
    return !hit;
  }

  void ink_marker(Canvas& canvas, const Point& c, int id) const {
    canvas.ink(c, c, p_.marker_radius + 0.5, 1.0, id, kMarkerPaddle);
  }

  // Claims a marker's disc for path `id` without inking it, so later paths keep clear.
  void reserve_marker(Canvas& canvas, const Point& c, int id) const { canvas.claim(c, p_.marker_radius + 0.5, id); }
  void release_marker(Canvas& canvas, const Point& c, int id) const { canvas.release(c, p_.marker_radius + 0.5, id); }

 private:
  // Paddle i of path `id` after a paddle ending at prev_end heading prev_theta.
  bool place(Canvas& canvas, int id, int i, const Point& prev_end, double prev_theta, PathRecord& rec, double& th,
             Canvas::Undo& u) {
    for (int t = 0; t < kPaddleTries; ++t) {
      Point a;
      if (i == 0) {
        a = {uniform_coord(), uniform_coord()};
        th = rng_.uniform() * kTwoPi;
      } else {
        th = prev_theta + (2 * rng_.uniform() - 1) * max_turn_;
        a = {prev_end[0] + p_.paddle_margin * pcos(th), prev_end[1] + p_.paddle_margin * psin(th)};
      }
      const Point b{a[0] + p_.paddle_length * pcos(th), a[1] + p_.paddle_length * psin(th)};
      if (!inside(a) || !inside(b) || canvas.collides(a, b, reach_, id, i)) continue;
      canvas.ink(a, b, reach_, softness_, id, i, &u);
      rec.paddles.push_back({a, b});
      return true;
    }
    return false;
  }

  double uniform_coord() { return border_ + rng_.uniform() * (p_.size - 1 - 2 * border_); }
  bool inside(const Point& q) const {
    return q[0] >= border_ && q[1] >= border_ && q[0] <= p_.size - 1 - border_ && q[1] <= p_.size - 1 - border_;
  }

  const PathfinderParams& p_;
  Rng& rng_;
  double reach_, softness_, border_, max_turn_;
};

double distance(const Point& a, const Point& b) {
  return std::sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]));
}

}  // namespace

PathfinderSample generate_pathfinder_sample(const PathfinderParams& p, bool same_path, Rng& rng) {
  PathDrawer drawer(p, rng);
  for (int attempt = 0; attempt < kImageAttempts; ++attempt) {
    Canvas canvas(p.size);
    PathfinderSample s;
    s.paths.resize(2);
    if (!drawer.draw(canvas, 0, p.contour_length, s.paths[0], kPathRestarts)) continue;
    // Either end of path 0 may carry a marker: path 1 keeps clear of both.
    drawer.reserve_marker(canvas, s.paths[0].start(), 0);
    drawer.reserve_marker(canvas, s.paths[0].end(), 0);
    if (!drawer.draw(canvas, 1, p.contour_length, s.paths[1], kSecondPathRestarts)) continue;
    // Only the discs that get markers stay claimed: no empty halo marks an unused end.
    drawer.release_marker(canvas, s.paths[0].start(), 0);
    drawer.release_marker(canvas, s.paths[0].end(), 0);
    // Marker 0 at a random end of path 0; marker 1 at the other end of path 0, or at a
    // random end of path 1.
    const bool flip0 = rng.below(2) == 1, flip1 = rng.below(2) == 1;
    s.marker_path = {0, same_path ? 0 : 1};
    s.markers[0] = flip0 ? s.paths[0].end() : s.paths[0].start();
    if (same_path) s.markers[1] = flip0 ? s.paths[0].start() : s.paths[0].end();
    else s.markers[1] = flip1 ? s.paths[1].end() : s.paths[1].start();
    if (distance(s.markers[0], s.markers[1]) < 2 * p.marker_radius + 3) continue;
    if (!drawer.marker_fits(canvas, s.markers[0], s.marker_path[0]) ||
        !drawer.marker_fits(canvas, s.markers[1], s.marker_path[1]))
      continue;
    drawer.ink_marker(canvas, s.markers[0], s.marker_path[0]);
    drawer.ink_marker(canvas, s.markers[1], s.marker_path[1]);
    // Distractors: as many as fit (a crowded image may hold fewer).
    for (int d = 0; d < p.num_distractors; ++d) {
      PathRecord rec;
      if (drawer.draw(canvas, static_cast<int>(s.paths.size()), p.distractor_length, rec, 3)) {
        rec.distractor = true;
        s.paths.push_back(std::move(rec));
      }
    }
    s.label = same_path ? 1 : 0;
    s.pixels.resize(canvas.ink().size());
    for (std::size_t i = 0; i < s.pixels.size(); ++i)
      s.pixels[i] = static_cast<std::uint8_t>(std::floor(canvas.ink()[i] * 255.0 + 0.5));
    return s;
  }
  throw UserError("pathfinder: found no room for two paths of " + std::to_string(p.contour_length) +
                  " paddles in a " + std::to_string(p.size) + "x" + std::to_string(p.size) + " image after " +
                  std::to_string(kImageAttempts) + " attempts; lower difficulty, paddle_length or paddle_margin");
}

namespace {

int contour_length_of(const std::string& difficulty) {
  if (difficulty == "easy") return 6;
  if (difficulty == "medium") return 9;
  if (difficulty == "hard") return 14;
  return std::stoi(difficulty);
}

}  // namespace

PathfinderParams pathfinder_params(const json& o, int size) {
  PathfinderParams p;
  p.size = size;
  p.contour_length = contour_length_of(o.at("difficulty").get<std::string>());
  p.paddle_length = o.at("paddle_length").get<double>();
  p.paddle_margin = o.at("paddle_margin").get<double>();
  p.thickness = o.at("thickness").get<double>();
  p.marker_radius = o.at("marker_radius").get<double>();
  p.continuity = o.at("continuity").get<double>();
  // LRA: distractor length contour // 3, and 20 / (distractor length) distractors.
  p.distractor_length = std::max(1, p.contour_length / 3);
  p.num_distractors = 20 / p.distractor_length;
  return p;
}

namespace {

class Pathfinder final : public PerSampleTask {
 public:
  Pathfinder(PathfinderParams p, std::int64_t train_size, std::string view)
      : PerSampleTask(train_size), p_(p), view_(std::move(view)) {}

 private:
  Split split(std::uint64_t seed, SplitStream stream, std::int64_t n) const override {
    // Labels balanced per split; each image from its own stream.
    Rng label_rng(sample_seed(seed, SplitStream::Labels, static_cast<std::uint64_t>(stream)));
    const auto labels = balanced_labels(n, 2, label_rng);
    auto pixels = at::empty({n, 1, p_.size, p_.size}, at::kByte);
    auto* px = pixels.data_ptr<std::uint8_t>();
    const std::int64_t area = static_cast<std::int64_t>(p_.size) * p_.size;
    at::parallel_for(0, n, 1, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i) {
        Rng rng(sample_seed(seed, stream, static_cast<std::uint64_t>(i)));
        const auto s = generate_pathfinder_sample(p_, labels[static_cast<std::size_t>(i)] == 1, rng);
        std::copy(s.pixels.begin(), s.pixels.end(), px + i * area);
      }
    });
    return {image_view(pixels, view_), at::tensor(labels, at::kLong)};
  }

  PathfinderParams p_;
  std::string view_;
};

struct Defaults {
  double paddle_length, paddle_margin, thickness, marker_radius, continuity;
};

TaskEntry pathfinder_entry(const std::string& name, int size, const Defaults& def, const std::string& summary) {
  TaskEntry e;
  e.name = name;
  e.summary = summary;
  e.uses_seq_len = false;
  e.schema.options = {
      {"train_size", OptionType::Int, json(2000), "training images (LRA: 160,000)", {}, 1, {}},
      view_option("sequence"),
      {"difficulty", OptionType::String, json("hard"),
       "contour length: \"easy\" (6 paddles), \"medium\" (9), \"hard\" (14), or a number of paddles in quotes, e.g. \"12\""},
      {"paddle_length", OptionType::Float, json(def.paddle_length), "paddle length in pixels", {}, 0.5, double(size) / 2},
      {"paddle_margin", OptionType::Float, json(def.paddle_margin), "gap between consecutive paddles, pixels", {}, 0.0, double(size) / 4},
      {"thickness", OptionType::Float, json(def.thickness), "stroke width, pixels", {}, 0.1, 8.0},
      {"marker_radius", OptionType::Float, json(def.marker_radius), "marker radius, pixels", {}, 0.5, double(size) / 8},
      {"continuity", OptionType::Float, json(def.continuity), "largest turn between paddles, in units of 30 degrees", {}, 0.0, 6.0},
      metrics_option({"accuracy", "macro_f1"}),
  };
  e.schema.resolve = [](json& o, const json&) {
    const std::string d = o.at("difficulty").get<std::string>();
    if (d != "easy" && d != "medium" && d != "hard") {
      const bool digits = !d.empty() && d.size() < 4 && std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; });
      const int n = digits ? std::stoi(d) : 0;
      if (n < 2 || n > 64)
        throw OptionError("difficulty", "difficulty must be \"easy\", \"medium\", \"hard\" or a number of paddles from 2 to 64 in quotes, got \"" + d + "\"");
      // One spelling per setting, so equal data has equal run keys.
      o["difficulty"] = n == 6 ? "easy" : n == 9 ? "medium" : n == 14 ? "hard" : std::to_string(n);
    }
    resolve_metrics(o, false, 2);
  };
  e.describe = [size](const json& o, std::int64_t) {
    return image_info(o.at("view").get<std::string>(), 1, size, size, 2, metrics_of(o));
  };
  e.make = [size](const json& o, std::int64_t) -> std::unique_ptr<Task> {
    return std::make_unique<Pathfinder>(pathfinder_params(o, size), o.at("train_size").get<std::int64_t>(),
                                        o.at("view").get<std::string>());
  };
  return e;
}

LRB_REGISTER_TASK(pathfinder_entry("pathfinder", 32, {2.0, 1.0, 0.5, 1.5, 1.0},
                                   "LRA Pathfinder 32x32: are the two markers on one path? 2 classes"));
LRB_REGISTER_TASK(pathfinder_entry("pathx", 128, {5.0, 3.0, 1.5, 3.0, 1.8},
                                   "LRA Path-X: Pathfinder at 128x128 (16,384 pixels), 2 classes"));

}  // namespace
}  // namespace lrb
