#include "suite/config/size_match.h"

#include <fmt/format.h>

#include <cmath>

namespace lrb {

namespace {

// Widths tried past a refused one before the search gives up on a direction: a model's
// divisibility rules (dim by heads) leave gaps far shorter than this.
constexpr std::int64_t kMostSkipped = 4096;

class Search {
 public:
  explicit Search(const SizeSearch& s) : s_(s) {}

  // The first width at or above `from` (at most `limit`) the model takes.
  std::optional<MatchedSize> first_from(std::int64_t from, std::int64_t limit) const {
    for (std::int64_t w = from; w <= limit && w - from <= kMostSkipped; ++w)
      if (const std::optional<double> c = s_.count(w)) return MatchedSize{w, *c};
    return std::nullopt;
  }
  // The last width at or below `from` (at least `limit`) the model takes.
  std::optional<MatchedSize> last_from(std::int64_t from, std::int64_t limit) const {
    for (std::int64_t w = from; w >= limit && from - w <= kMostSkipped; --w)
      if (const std::optional<double> c = s_.count(w)) return MatchedSize{w, *c};
    return std::nullopt;
  }

 private:
  const SizeSearch& s_;
};

}  // namespace

SizeMatchResult match_size(const SizeSearch& s) {
  const Search search(s);
  SizeMatchResult out;
  std::optional<MatchedSize> below = search.first_from(s.smallest, s.largest);
  if (!below) {
    out.problem = fmt::format("the model takes no value from {} to {}", s.smallest, std::min(s.largest, s.smallest + kMostSkipped));
    return out;
  }
  if (below->count > s.to) {
    out.problem = fmt::format("the smallest value it takes, {}, already gives {:.6g}, more than {:.6g}", below->value, below->count, s.to);
    return out;
  }
  // Double until the count reaches the target: `below` stays under it, `above` reaches it.
  std::optional<MatchedSize> above;
  while (!above) {
    if (below->count == s.to) {
      out.size = below;
      return out;
    }
    if (below->value >= s.largest) {
      out.problem = fmt::format("the largest value, {}, gives only {:.6g}, less than {:.6g}", below->value, below->count, s.to);
      return out;
    }
    const std::int64_t next = below->value > s.largest / 2 ? s.largest : std::max(below->value * 2, below->value + 1);
    std::optional<MatchedSize> w = search.first_from(next, s.largest);
    if (!w) w = search.last_from(s.largest, below->value + 1);
    if (!w) {
      out.problem = fmt::format("the largest value it takes, {}, gives only {:.6g}, less than {:.6g}", below->value, below->count, s.to);
      return out;
    }
    if (w->count >= s.to) above = w;
    else below = w;
  }
  // Bisect between them over the widths the model takes.
  while (above->value - below->value > 1) {
    const std::int64_t mid = below->value + (above->value - below->value) / 2;
    std::optional<MatchedSize> w = search.first_from(mid, above->value - 1);
    if (!w) w = search.last_from(mid - 1, below->value + 1);
    if (!w) break;  // no width between them
    if (w->count >= s.to) above = w;
    else below = w;
  }
  out.size = std::fabs(below->count - s.to) <= std::fabs(above->count - s.to) ? below : above;
  return out;
}

}  // namespace lrb
