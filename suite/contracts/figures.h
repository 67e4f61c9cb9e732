#pragma once
// The figure catalogue: every figure a run records (a metric in a run file's /metrics, or a
// variant's), declared once with its unit, which way is better, whether it is exact on a
// CPU, and who records it. Reports, rankings and claims read a figure's direction here,
// never from its name; a claim's metric is checked against it when the sweep is validated.
//
// Stored names resolve as: the name itself; "eval_<m>" to the task metric <m>;
// "variant.<v>.<rest>" to <rest>; a family by its prefix and suffix
// ("infer_peak_bytes_b<B>", "probe_<name>_cosine"). The runner's, the variant evaluator's
// and the models' figures are declared in figures.cpp, one table per recorder; the task
// metrics of metrics.cpp's table are declared there too (a test holds the two together).
// A figure of a new task metric or model is declared with declare_figure where it is
// registered (tests declare fixtures the same way).
#include <string>
#include <string_view>
#include <vector>

namespace lrb {

enum class Direction { Higher, Lower, None };  // None: no better side (a count of steps, a ratio that should be 1)
enum class FigureUnit { Count, Bytes, Seconds, Rate, Share, Plain };  // Share: a fraction of 1, shown as a percentage

const char* direction_name(Direction d);  // "higher", "lower", "none"
const char* unit_name(FigureUnit u);      // "count", "bytes", "seconds", "1/s", "share", ""

struct FigureDef {
  std::string name;  // the stored name; for a family, its prefix
  FigureUnit unit = FigureUnit::Plain;
  Direction direction = Direction::None;
  // A deterministic count on a CPU (the counting allocator's bytes, parameters, analytic
  // FLOPs): the same on every seed, so one run of it decides a claim.
  bool exact_on_cpu = false;
  std::string recorded_by;  // "runner", "variant evaluator", "model maelre", "task metric"
  std::string suffix;       // a family: names prefix + <anything> + suffix (non-empty prefix part)
  bool family = false;
  bool task_metric = false;  // recorded as "eval_<name>" (and by variants as "variant.<v>.eval_<name>")
};

// Adds a figure; throws std::logic_error when the name is declared already with other
// properties (two definitions of one figure are a bug).
void declare_figure(FigureDef def);

// The figure a stored name refers to, or nullptr when none is declared.
const FigureDef* find_figure(std::string_view stored_name);
// Its direction; None for an undeclared name.
Direction figure_direction(std::string_view stored_name);
// Every declared figure, in declaration order.
std::vector<FigureDef> all_figures();

}  // namespace lrb
