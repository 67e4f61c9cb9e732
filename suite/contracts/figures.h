#pragma once
// The figure catalogue: every figure a run records (a metric in a run file's /metrics, or a
// variant's), declared once with its unit, which way is better, whether it is exact on a
// CPU, and who records it. Reports, rankings and claims read a figure's direction here,
// never from its name; a claim's metric is checked against it when the sweep is validated.
//
// Stored names resolve as: the name itself; "eval_<m>" to the task metric <m>;
// "variant.<v>.<rest>" to <rest>; a family by its prefix and suffix
// ("infer_peak_bytes_b<B>", "probe_<name>_cosine"). The runner's and the variant
// evaluator's figures are declared in figures.cpp, one table per recorder; the task metrics
// of metrics.cpp's table are declared there too (a test holds the two together). A model
// folder declares the figures its models measure in its own figures.cpp
// (LRB_DECLARE_FIGURE): torch-free, so that lrbench-results, which links no model, links
// those files and knows them too (CMakeLists.txt, lrb_plugin_figures). A new task metric is
// declared with declare_figure where it is registered (tests declare fixtures the same
// way). Every run file records each of its figures' unit and direction (results/SCHEMA.md),
// so that a program that does not know a figure (a model built out of tree) learns it.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "suite/core/macros.h"

namespace lrb {

enum class Direction { Higher, Lower, None };  // None: no better side (a count of steps, a ratio that should be 1)
enum class FigureUnit { Count, Bytes, Seconds, Rate, Share, Plain };  // Share: a fraction of 1, shown as a percentage

const char* direction_name(Direction d);  // "higher", "lower", "none"
const char* unit_name(FigureUnit u);      // "count", "bytes", "seconds", "1/s", "share", ""
// The reverse of each: nothing for a name that is not one.
std::optional<Direction> direction_from_name(std::string_view name);
std::optional<FigureUnit> unit_from_name(std::string_view name);
// Both at once, as a file records them: false when either is not a name.
bool parse_figure_names(std::string_view unit, std::string_view direction, FigureUnit* unit_out, Direction* direction_out);

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
  bool harness = false;      // one of figures.cpp's tables, known to every lrbench program
};

// Adds a figure; throws std::logic_error when the name is declared already with other
// properties (two definitions of one figure are a bug). A definition learnt from a run file
// (declare_recorded_figure) gives way to the program's own.
void declare_figure(FigureDef def);

// A model's figure (what Model::figures() records in measurement runs), for
// LRB_DECLARE_FIGURE in the model folder's figures.cpp.
FigureDef model_figure(std::string name, FigureUnit unit, Direction direction, bool exact_on_cpu, std::string model);

// The figure a stored name refers to, or nullptr when none is declared.
const FigureDef* find_figure(std::string_view stored_name);
// Its direction; None for an undeclared name.
Direction figure_direction(std::string_view stored_name);
// Every declared figure, in declaration order.
std::vector<FigureDef> all_figures();

// A figure as a run file records it (results/SCHEMA.md, /figures): where the program that
// reads the file does not know the figure (a model's, read by a program without that
// model), it is declared from the file, recorded_by "run file"; a figure the catalogue
// knows keeps the catalogue's definition. Cheap to call for every record read.
void declare_recorded_figure(const std::string& stored_name, FigureUnit unit, Direction direction);
// Whether the figure is one of lrbench's own (the runner's, the variant evaluator's, the
// task metrics'), which every lrbench program knows: the results index keeps the recorded
// definitions of the others only.
bool is_harness_figure(std::string_view stored_name);

}  // namespace lrb

#define LRB_DECLARE_FIGURE(def) \
  static const bool LRB_CONCAT(lrb_figure_declared_, __LINE__) = (::lrb::declare_figure(def), true)
