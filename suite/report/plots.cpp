#include "suite/report/plots.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "suite/core/errors.h"
#include "suite/report/cells.h"
#include "suite/report/escape.h"
#include "suite/report/gnuplot.h"

namespace lrb {
namespace {

using json = nlohmann::json;

// Numbers in scripts and data: full precision, never from text the user wrote.
std::string num(double v) { return std::isfinite(v) ? fmt::format("{:.17g}", v) : "NaN"; }
std::string num(const json& v) { return v.is_number() ? num(v.get<double>()) : "NaN"; }
std::string gp_string(const std::string& label) { return "'" + gnuplot_label(label) + "'"; }

struct PlotJob {
  Plot plot;
  std::string body;  // gnuplot commands after the terminal and output are set
  int width = 760, height = 420;
  std::string hotspots;  // SVG elements appended to the plot (pareto: a circle per cell, to click)
};

// A plot whose margins and ranges are fixed, so that a data point's place in the SVG is known:
// gnuplot's SVG has a viewBox of the terminal's size, y downwards.
struct Frame {
  double width = 760, height = 480;
  double left = 0.12, right = 0.95, bottom = 0.13, top = 0.88;  // screen fractions
  double xlo = 0, xhi = 1, ylo = 0, yhi = 1;
  bool log_x = false;

  double px(double x) const {
    const double f = log_x ? std::log(x / xlo) / std::log(xhi / xlo) : (x - xlo) / (xhi - xlo);
    return width * (left + (right - left) * f);
  }
  double py(double y) const { return height * (1.0 - (bottom + (top - bottom) * (y - ylo) / (yhi - ylo))); }
  std::string script() const {
    return fmt::format("set lmargin at screen {}\nset rmargin at screen {}\nset bmargin at screen {}\nset tmargin at screen {}\n"
                       "{}set xrange [{}:{}]\nset yrange [{}:{}]\n",
                       num(left), num(right), num(bottom), num(top), log_x ? "set logscale x\n" : "", num(xlo), num(xhi), num(ylo),
                       num(yhi));
  }
};

// A range holding [lo, hi] with a margin: a tenth of the span (or of the value, when all are equal).
std::pair<double, double> padded(double lo, double hi) {
  const double span = hi > lo ? hi - lo : std::max(std::fabs(lo), 1e-12);
  return {lo - 0.1 * span, hi + 0.1 * span};
}

// A cost axis's unit: bytes in MiB, seconds in ms, counts as they are.
std::pair<double, std::string> cost_scale(const std::string& figure) {
  if (figure == "peak_step_bytes") return {1048576.0, "step memory (MiB)"};
  if (figure == "step_seconds_median") return {1e-3, "median step time (ms)"};
  if (figure == "train_flops") return {1.0, "training FLOPs"};
  return {1.0, figure};
}

std::string cell_label(const json& c) {
  std::string s = c["entrant"].get<std::string>();
  const std::string cond = label_of(c["condition"]);
  if (!cond.empty()) s += " " + cond;
  std::vector<std::string> extra;
  if (c["n"].get<int>() == 0) extra.push_back("no result");
  if (c["failed"].get<int>() > 0) extra.push_back(std::to_string(c["failed"].get<int>()) + " failed");
  if (c["stopped"].get<int>() > 0) extra.push_back(std::to_string(c["stopped"].get<int>()) + " stopped");
  if (c["n"].get<int>() == 1) extra.push_back("n=1");
  if (!extra.empty()) {
    s += " [";
    for (std::size_t i = 0; i < extra.size(); ++i) s += (i ? ", " : "") + extra[i];
    s += "]";
  }
  return s;
}

std::string interval_cols(const json& i) { return i.is_array() ? num(i[0]) + " " + num(i[1]) : "NaN NaN"; }

class Builder {
 public:
  std::vector<PlotJob> jobs;
  std::map<std::string, std::string> files;

  std::string file(const std::string& content) {
    const std::string name = fmt::format("d{}.dat", files.size() + 1);
    files[name] = content;
    return name;
  }

  // A cell of more seeds than this draws this many evenly spaced quantiles of its values
  // (the smallest and largest among them): at 100,000 runs every dot made the HTML page's
  // plots 11 MB and its load 7 to 10 s, where the shape of a strip needs far fewer.
  static constexpr std::size_t kMostDots = 250;

  static std::vector<double> strip_values(const json& values) {
    std::vector<double> v;
    v.reserve(values.size());
    for (const auto& x : values) v.push_back(x["value"].get<double>());
    if (v.size() <= kMostDots) return v;
    std::sort(v.begin(), v.end());
    std::vector<double> q(kMostDots);
    for (std::size_t i = 0; i < kMostDots; ++i)
      q[i] = v[static_cast<std::size_t>(std::llround(static_cast<double>(i) * static_cast<double>(v.size() - 1) /
                                                       static_cast<double>(kMostDots - 1)))];
    return q;
  }

  void seeds(const std::string& task, const std::vector<json>& cells) {
    // Intervals in their own files, defined rows only: an undefined interval draws nothing.
    std::string means, tci, bca, sdat, ytics;
    bool thinned = false;
    for (std::size_t k = 0; k < cells.size(); ++k) {
      const json& c = cells[k];
      const std::string y = num(static_cast<double>(k + 1));
      if (c["mean"].is_number()) means += y + " " + num(c["mean"]) + "\n";
      if (c["ci95"].is_array()) tci += y + " " + num(c["mean"]) + " " + interval_cols(c["ci95"]) + "\n";
      if (c["bootstrap_bca95"].is_array()) bca += y + " " + num(c["mean"]) + " " + interval_cols(c["bootstrap_bca95"]) + "\n";
      thinned = thinned || c["values"].size() > kMostDots;
      for (double v : strip_values(c["values"])) sdat += y + " " + num(v) + "\n";
      ytics += fmt::format("{}{} {}", k ? ", " : "", gp_string(cell_label(c)), y);
    }
    if (sdat.empty()) return;
    const std::string metric = cells.front()["metric"].get<std::string>();
    PlotJob j;
    j.plot.kind = "seeds";
    j.plot.task = task;
    j.plot.caption = task + ": " + metric + " per seed (dots), mean (diamond), 95% t interval (below) and BCa interval (above)" +
                     (thinned ? fmt::format("; a cell of more than {0} seeds shows {0} evenly spaced quantiles of its values "
                                            "(every seed's value is in the tables' rows of the HTML report, and in the JSON report)",
                                            kMostDots)
                              : std::string());
    j.height = std::max(260, 130 + 30 * static_cast<int>(cells.size()));
    std::string plot = fmt::format("plot '{}' using 2:1 with points pt 13 ps 1.1 lc rgb '#d62728' title 'mean'", file(means));
    if (!tci.empty())
      plot += fmt::format(", '{}' using 2:($1+0.22):3:4 with xerrorbars pt 0 lw 1.5 lc rgb '#1f77b4' title '95% CI (t)'", file(tci));
    if (!bca.empty())
      plot += fmt::format(", '{}' using 2:($1-0.22):3:4 with xerrorbars pt 0 lw 1.5 lc rgb '#ff7f0e' title '95% CI (BCa)'", file(bca));
    plot += fmt::format(", '{}' using 2:1 with points pt 7 ps 0.6 lc rgb '#333333' title 'seeds'", file(sdat));
    j.body = fmt::format(
        "set title {}\nset xlabel {}\nset ytics ({}) font ',9'\nset yrange [{}:0.4]\nset grid xtics\n"
        "set key outside bottom center horizontal\nset lmargin 40\n{}\n",
        gp_string(task + ": " + metric + " over seeds"), gp_string(metric), ytics, num(static_cast<double>(cells.size()) + 0.6), plot);
    jobs.push_back(std::move(j));
  }

  // An accuracy–cost front: each placed cell with its intervals on both axes, the front as a
  // step line, and a transparent circle per cell over its point (data-key "cell:N") that the
  // page opens to the cell's seeds.
  void pareto(const json& front) {
    const auto [scale, what] = cost_scale(front["cost"].get<std::string>());
    std::vector<const json*> placed;
    double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
    for (const auto& p : front["points"]) {
      if (!p["placed"].get<bool>()) continue;
      placed.push_back(&p);
      const auto lo_hi = [](const json& mean, const json& ci) {
        return ci.is_array() ? std::make_pair(ci[0].get<double>(), ci[1].get<double>()) : std::make_pair(mean.get<double>(), mean.get<double>());
      };
      const auto [cl, ch] = lo_hi(p["cost_mean"], p["cost_ci95"]);
      const auto [ml, mh] = lo_hi(p["metric_mean"], p["metric_ci95"]);
      xlo = std::min(xlo, cl / scale), xhi = std::max(xhi, ch / scale), ylo = std::min(ylo, ml), yhi = std::max(yhi, mh);
    }
    if (placed.size() < 2) return;
    Frame fr;
    fr.log_x = xlo > 0 && xhi / xlo > 10;
    if (fr.log_x) fr.xlo = xlo / 1.25, fr.xhi = xhi * 1.25;
    else std::tie(fr.xlo, fr.xhi) = padded(xlo, xhi);
    std::tie(fr.ylo, fr.yhi) = padded(ylo, yhi);
    pareto_job(front, placed, fr, scale, what);
  }

  void pareto_job(const json& front, const std::vector<const json*>& placed, const Frame& fr, double scale, const std::string& what) {
    std::string on, off, steps, hot;
    std::map<std::pair<double, double>, std::string> labels;
    std::vector<std::pair<double, double>> front_points;
    for (const json* pp : placed) {
      const json& p = *pp;
      const double x = p["cost_mean"].get<double>() / scale, y = p["metric_mean"].get<double>();
      const auto col = [&](const json& ci, double mean, double by) { return ci.is_array() ? num(ci[0].get<double>() / by) + " " + num(ci[1].get<double>() / by) : num(mean) + " " + num(mean); };
      (p["on_front"].get<bool>() ? on : off) += num(x) + " " + num(y) + " " + col(p["cost_ci95"], x, scale) + " " + col(p["metric_ci95"], y, 1.0) + "\n";
      if (p["on_front"].get<bool>()) front_points.emplace_back(x, y);
      std::string& label = labels[{x, y}];  // cells at one place (a tie) share one label
      label += (label.empty() ? "" : ", ") + p["entrant"].get<std::string>() + (label_of(p["setting"]).empty() ? "" : " " + label_of(p["setting"]));
      hot += fmt::format("<circle class=\"lrb-hot\" data-key=\"cell:{}\" cx=\"{:.2f}\" cy=\"{:.2f}\" r=\"9\" fill=\"transparent\" "
                         "pointer-events=\"all\" style=\"cursor:pointer\"><title>{}</title></circle>\n",
                         p["cell"].get<std::size_t>(), fr.px(x), fr.py(y), html_escape(p["entrant"].get<std::string>() + " " + label_of(p["setting"])));
    }
    std::sort(front_points.begin(), front_points.end());
    for (const auto& [x, y] : front_points) steps += num(x) + " " + num(y) + "\n";
    std::string label_rows;
    for (const auto& [at, label] : labels) label_rows += fmt::format("{} {} \"{}\"\n", num(at.first), num(at.second), gnuplot_label(label));
    const std::string task = front["task"].get<std::string>(), metric = front["metric"].get<std::string>();
    PlotJob j;
    j.plot.kind = "pareto";
    j.plot.task = task;
    j.plot.caption = task + ": mean " + metric + " against mean " + what + " per cell (" + front["cost_choice"].get<std::string>() +
                     "), 95% t intervals on both axes (an exact cost has none); filled: on the front (the step line), open: "
                     "dominated; a click on a point opens its seeds";
    j.height = static_cast<int>(fr.height);
    j.width = static_cast<int>(fr.width);
    std::string plot = fmt::format("plot '{}' using 1:2 with steps lw 1.5 lc rgb '#2ca02c' title 'front'", file(steps));
    if (!on.empty()) plot += fmt::format(", '{}' using 1:2:3:4:5:6 with xyerrorbars pt 7 ps 1.1 lc rgb '#1f77b4' title 'on the front'", file(on));
    if (!off.empty()) plot += fmt::format(", '{}' using 1:2:3:4:5:6 with xyerrorbars pt 6 ps 1.1 lc rgb '#7f7f7f' title 'dominated'", file(off));
    plot += fmt::format(", '{}' using 1:2:3 with labels left offset char 0.8,0.6 font ',8' notitle", file(label_rows));
    j.body = fr.script() + fmt::format("set xlabel {}\nset ylabel {}\nset grid\nset key at screen 0.12,0.98 left top horizontal font ',9'\n{}\n",
                                       gp_string(what + (fr.log_x ? ", log scale" : "")), gp_string(metric + " (mean, 95% CI t)"), plot);
    j.hotspots = hot;
    jobs.push_back(std::move(j));
  }

  // The performance profile of `leaderboard --by cost-to-target`: ρ(τ) of each model as a
  // step line over τ on a log axis, from 1 to past the largest ratio (at least 8).
  void profile(const json& cost_to_target) {
    const json& p = cost_to_target["profile"];
    const double tasks = static_cast<double>(p["tasks"].size());
    if (p["models"].empty() || tasks == 0) return;
    double tau_max = 8;
    for (const auto& m : p["models"])
      for (const auto& r : m["ratios"])
        if (r.is_number()) tau_max = std::max(tau_max, r.get<double>() * 1.1);
    std::string dat, plot;
    for (std::size_t k = 0; k < p["models"].size(); ++k) {
      const json& m = p["models"][k];
      std::vector<double> ratios;
      for (const auto& r : m["ratios"])
        if (r.is_number()) ratios.push_back(r.get<double>());
      std::sort(ratios.begin(), ratios.end());
      const auto rho = [&](double tau) { return static_cast<double>(std::upper_bound(ratios.begin(), ratios.end(), tau) - ratios.begin()) / tasks; };
      dat += (k ? "\n\n" : "") + num(1.0) + " " + num(rho(1.0)) + "\n";
      for (double r : ratios)
        if (r > 1) dat += num(r) + " " + num(rho(r)) + "\n";
      dat += num(tau_max) + " " + num(rho(tau_max)) + "\n";
      // Dashes tell apart the models whose steps coincide.
      plot += fmt::format("{}'{{F}}' index {} using 1:2 with steps lw 2 lc {} dt {} title {}", k ? ", " : "plot ", k, k + 1, k % 4 + 1,
                          gp_string(m["entrant"].get<std::string>()));
    }
    const std::string f = file(dat);
    for (std::size_t pos; (pos = plot.find("{F}")) != std::string::npos;) plot.replace(pos, 3, f);
    const std::string cost = cost_to_target["cost"].get<std::string>();
    PlotJob j;
    j.plot.kind = "profile";
    j.plot.caption = "performance profile: for each model, the share of tasks where its median " + cost +
                     " to the target is within τ × the best model's there (never reached: never within)";
    j.body = fmt::format("set title {}\nset logscale x 2\nset xrange [1:{}]\nset yrange [0:1.05]\nset xlabel 'τ (log scale)'\n"
                         "set ylabel 'share of tasks within τ × the best'\nset grid\nset key outside bottom center horizontal font ',9'\n{}\n",
                         gp_string("performance profile: median " + cost + " to the target"), num(tau_max), plot);
    j.height = 420 + 18 * static_cast<int>(p["models"].size() / 3);
    jobs.push_back(std::move(j));
  }

  void memory(const std::string& task, const std::vector<json>& cells) {
    std::string dat;
    for (const auto& c : cells) {
      if (!c["mean"].is_number() || !c["efficiency"].contains("peak_bytes")) continue;
      const double peak = c["efficiency"]["peak_bytes"]["median"].get<double>();
      if (!(peak > 0)) continue;
      const json& ci = c["ci95"];
      dat += fmt::format("{} {} {} {} \"{}\"\n", num(peak / 1048576.0), num(c["mean"]), ci.is_array() ? num(ci[0]) : num(c["mean"]),
                         ci.is_array() ? num(ci[1]) : num(c["mean"]), gnuplot_label(c["entrant"].get<std::string>() + " " + label_of(c["condition"])));
    }
    if (dat.empty()) return;
    const std::string metric = cells.front()["metric"].get<std::string>();
    PlotJob j;
    j.plot.kind = "memory";
    j.plot.task = task;
    j.plot.caption = task + ": mean " + metric + " (95% t interval) against peak memory (median over runs), one point per cell";
    const std::string f = file(dat);
    j.body = fmt::format(
        "set title {}\nset logscale x\nset xlabel 'peak memory (MiB, log scale)'\nset ylabel {}\nset grid\nset offsets graph 0.08, graph 0.3, graph 0.08, graph 0.08\n"
        "plot '{}' using 1:2:3:4 with yerrorbars pt 7 ps 1 lc rgb '#1f77b4' notitle, '{}' using 1:2:5 with labels left offset char 1,0.4 font ',9' notitle\n",
        gp_string(task + ": " + metric + " against peak memory"), gp_string(metric + " (mean, 95% CI t)"), f, f);
    jobs.push_back(std::move(j));
  }

  void scaling(const std::string& task, const std::string& metric, const std::vector<json>& fits) {
    const bool bytes = metric == "peak_bytes" || metric == "peak_step_bytes";
    const double scale = bytes ? 1048576.0 : 1e-3;  // MiB, ms
    const std::string what = metric == "peak_bytes" ? "peak memory (MiB)" : bytes ? "step memory (MiB)" : "median step time (ms)";
    std::string dat, plot;
    std::set<double> lengths;
    double xlo = INFINITY, xhi = 0;
    for (std::size_t k = 0; k < fits.size(); ++k) {
      const json& s = fits[k];
      if (k) dat += "\n\n";
      for (const auto& p : s["points"]) {
        dat += num(p["seq_len"]) + " " + num(p["value"].get<double>() / scale) + "\n";
        lengths.insert(p["seq_len"].get<double>());
        xlo = std::min(xlo, p["seq_len"].get<double>());
        xhi = std::max(xhi, p["seq_len"].get<double>());
      }
      std::string title = s["entrant"].get<std::string>();
      if (const std::string cond = label_of(s["setting"]); !cond.empty()) title += " " + cond;
      title += fmt::format(": slope {:.2f}", s["slope"].get<double>());
      if (s["slope_ci95"].is_array()) title += fmt::format(" [{:.2f}, {:.2f}]", s["slope_ci95"][0].get<double>(), s["slope_ci95"][1].get<double>());
      plot += fmt::format("{}'{{F}}' index {} using 1:2 with points pt 7 ps 0.8 lc {} title {}, exp({})*x**({})/{} with lines dt 2 lw 1.5 lc {} notitle",
                          k ? ", " : "plot ", k, k + 1, gp_string(title), num(s["intercept"]), num(s["slope"]), num(scale), k + 1);
    }
    if (fits.empty()) return;
    PlotJob j;
    j.plot.kind = "scaling";
    j.plot.task = task;
    j.plot.caption = task + ": " + what + " against N on log-log axes, one point per run; dashed: least-squares fit, slope with its 95% interval";
    j.height = 420 + 18 * static_cast<int>(fits.size());
    const std::string f = file(dat);
    std::string p = plot;
    for (std::size_t pos; (pos = p.find("{F}")) != std::string::npos;) p.replace(pos, 3, f);
    std::string xtics;  // a tic at every length measured: log axes would show only powers of ten
    for (double x : lengths) xtics += (xtics.empty() ? "" : ", ") + fmt::format("'{:.0f}' {}", x, num(x));
    j.body = fmt::format(
        "set title {}\nset logscale xy\nset xlabel 'N (sequence length, log scale)'\nset ylabel {}\nset grid\nset xrange [{}:{}]\n"
        "set xtics ({})\nset key outside bottom center vertical font ',9'\nset samples 200\n{}\n",
        gp_string(task + ": " + what + " against N"), gp_string(what + ", log scale"), num(xlo / 1.25), num(xhi * 1.25), xtics, p);
    jobs.push_back(std::move(j));
  }
};

// Every id in a gnuplot SVG gets the plot's prefix, so that several SVGs inline in one page
// never resolve each other's references.
std::string prefix_ids(std::string svg, const std::string& prefix) {
  const auto start = svg.find("<svg");
  LRB_CHECK(start != std::string::npos, "gnuplot wrote an SVG without an <svg> element");
  svg.erase(0, start);
  for (const char* pattern : {"id='", "id=\"", "href='#", "href=\"#", "url(#"}) {
    const std::string p = pattern;
    for (std::size_t pos = 0; (pos = svg.find(p, pos)) != std::string::npos; pos += p.size() + prefix.size() + 1)
      svg.insert(pos + p.size(), prefix + "-");
  }
  return svg;
}

}  // namespace

std::vector<Plot> make_plots(const json& data) {
  Builder b;
  std::map<std::string, std::vector<json>> cells_by_task;
  for (const auto& c : data.value("cells", json::array())) cells_by_task[c["task"].get<std::string>()].push_back(c);
  std::map<std::pair<std::string, std::string>, std::vector<json>> fits;
  for (const auto& s : data.value("scaling", json::array()))
    fits[{s["task"].get<std::string>(), s["metric"].get<std::string>()}].push_back(s);
  for (const auto& [task, cells] : cells_by_task) {
    b.seeds(task, cells);
    b.memory(task, cells);
    for (const char* metric : {"peak_bytes", "peak_step_bytes", "step_seconds_median"})
      if (auto it = fits.find({task, metric}); it != fits.end()) b.scaling(task, metric, it->second);
    for (const auto& f : data.value("fronts", json::array()))
      if (f["task"] == task) b.pareto(f);
  }
  if (const auto c = data.find("cost_to_target"); c != data.end()) b.profile(*c);
  if (b.jobs.empty()) return {};
  std::string script = "set encoding utf8\n";
  std::vector<std::string> outputs;
  for (std::size_t k = 0; k < b.jobs.size(); ++k) {
    PlotJob& j = b.jobs[k];
    j.plot.id = fmt::format("plot-{}", k + 1);
    const std::string out = j.plot.id + ".svg";
    outputs.push_back(out);
    // Enhanced text off: '_' and '^' in names print as they are.
    script += fmt::format(
        "reset\nset terminal svg size {},{} font 'sans,11' background rgb 'white' noenhanced\nset output '{}'\n{}unset output\n",
        j.width, j.height, out, j.body);
  }
  const auto svgs = run_gnuplot(script, b.files, outputs);
  std::vector<Plot> plots;
  for (auto& j : b.jobs) {
    j.plot.svg = prefix_ids(svgs.at(j.plot.id + ".svg"), j.plot.id);
    if (!j.hotspots.empty()) j.plot.svg.insert(j.plot.svg.rfind("</svg>"), "<g class=\"lrb-hotspots\">\n" + j.hotspots + "</g>\n");
    plots.push_back(std::move(j.plot));
  }
  return plots;
}

}  // namespace lrb
