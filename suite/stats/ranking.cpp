#include "suite/stats/ranking.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <system_error>
#include <thread>

#include "suite/core/errors.h"
#include "suite/core/parallel_for.h"
#include "suite/core/seeds.h"
#include "suite/stats/t_tests.h"
#include "suite/stats/wilcoxon.h"

namespace lrb::stats {

namespace {

// Ranks 1 = best; equal means share the average rank.
std::vector<double> ranks_of(const std::vector<double>& means, bool higher_is_better) {
  std::vector<double> key(means.size());
  for (std::size_t i = 0; i < means.size(); ++i) key[i] = higher_is_better ? -means[i] : means[i];
  return rank_average(key);
}

// Per-task scores in [0, 1], 1 = best; empty when all means are equal.
std::vector<double> normalised(const std::vector<double>& means, bool higher_is_better) {
  const auto [lo_it, hi_it] = std::minmax_element(means.begin(), means.end());
  const double lo = *lo_it, hi = *hi_it;
  if (!(hi > lo)) return {};
  std::vector<double> s(means.size());
  for (std::size_t i = 0; i < means.size(); ++i) {
    s[i] = higher_is_better ? (means[i] - lo) / (hi - lo) : (hi - means[i]) / (hi - lo);
  }
  return s;
}

std::optional<double> group_test_p(const SeedValues& leader, const SeedValues& other, GroupTest test,
                                   std::size_t& n_pairs) {
  const SeedPairing p = pair_by_seed(leader, other);
  n_pairs = p.differences.size();
  if (n_pairs < 2) return std::nullopt;
  switch (test) {
    case GroupTest::kPairedT: return t_test_one_sample(p.differences).p_value;
    case GroupTest::kWilcoxon: return wilcoxon_signed_rank(p.differences).p_value;
  }
  return std::nullopt;
}

void check_settings(const RankingSettings& s) {
  if (!(s.alpha > 0.0 && s.alpha < 1.0)) throw UserError("ranking alpha must lie in (0, 1)");
  if (!(s.bootstrap.confidence > 0.0 && s.bootstrap.confidence < 1.0)) {
    throw UserError("ranking bootstrap confidence must lie in (0, 1)");
  }
}

std::optional<Interval> percentile_interval(std::vector<double> v, double confidence) {
  if (v.size() < 2) return std::nullopt;
  std::sort(v.begin(), v.end());
  const double alpha = (1.0 - confidence) / 2.0;
  return Interval{quantile_sorted(v, alpha), quantile_sorted(v, 1.0 - alpha)};
}

}  // namespace

TaskRanking rank_task(const std::string& task, const std::map<std::string, SeedValues>& models,
                      const RankingSettings& settings) {
  check_settings(settings);
  if (models.empty()) throw UserError("task '" + task + "': no models to rank");
  TaskRanking r;
  r.task = task;
  for (const auto& [name, seeds] : models) {
    if (seeds.empty()) {
      throw UserError("task '" + task + "': model '" + name +
                      "' has no successful runs; leave it out of the ranking (it is shown as failed)");
    }
    RankedModel m;
    m.model = name;
    m.n = seeds.size();
    m.mean = mean(values_of(seeds));
    r.models.push_back(std::move(m));
  }
  // Best first; the map gave name order, which stable_sort keeps for equal means.
  std::stable_sort(r.models.begin(), r.models.end(), [&](const RankedModel& a, const RankedModel& b) {
    return settings.higher_is_better ? a.mean > b.mean : a.mean < b.mean;
  });
  std::vector<double> means;
  for (const auto& m : r.models) means.push_back(m.mean);
  const std::vector<double> ranks = ranks_of(means, settings.higher_is_better);
  for (std::size_t i = 0; i < r.models.size(); ++i) r.models[i].rank = ranks[i];

  // Step-down tie groups (see the header).
  std::size_t start = 0, group = 0;
  const std::size_t end = r.models.size();
  while (start < end) {
    ++group;
    RankedModel& leader = r.models[start];
    leader.leader = true;
    leader.group = group;
    leader.group_rank = start + 1;
    leader.n_pairs_vs_leader = 0;
    leader.p_vs_leader.reset();
    leader.p_adjusted_vs_leader.reset();
    const SeedValues& leader_seeds = models.at(leader.model);
    std::vector<std::optional<double>> p;
    std::vector<std::size_t> n_pairs;
    for (std::size_t j = start + 1; j < end; ++j) {
      std::size_t np = 0;
      p.push_back(group_test_p(leader_seeds, models.at(r.models[j].model), settings.test, np));
      n_pairs.push_back(np);
    }
    const std::vector<std::optional<double>> adjusted = adjust(p, settings.correction);
    std::size_t j = start + 1;
    for (; j < end; ++j) {
      const std::size_t k = j - start - 1;
      RankedModel& m = r.models[j];
      m.n_pairs_vs_leader = n_pairs[k];
      m.p_vs_leader = p[k];
      m.p_adjusted_vs_leader = adjusted[k];
      if (adjusted[k] && *adjusted[k] <= settings.alpha) break;  // significantly worse: next group
      m.group = group;
      m.group_rank = start + 1;
    }
    start = j;
  }
  return r;
}

namespace {

// The models ranked across tasks: every one must have results on every task.
std::vector<std::string> models_on_every_task(const std::vector<TaskScores>& tasks) {
  std::set<std::string> names;
  for (const auto& t : tasks)
    for (const auto& [name, seeds] : t.models) names.insert(name);
  for (const auto& t : tasks)
    for (const auto& name : names)
      if (t.models.count(name) == 0 || t.models.at(name).empty())
        throw UserError("ranking across tasks needs every model on every task: model '" + name +
                        "' has no results on task '" + t.task + "'; rank a subset of models or tasks");
  return {names.begin(), names.end()};
}

// One task's values as a dense table: model × seed (the union of the task's seeds), with
// presence flags, seed-major so that a resample sums every model's values side by side.
struct SeedTable {
  std::vector<std::int64_t> seeds;
  std::vector<double> value_by_seed;  // seeds × n_models
  std::vector<char> has_by_seed;
  std::vector<double> means;  // observed, per model
  bool complete = true;       // every model has every seed (the usual table)
};

SeedTable seed_table(const TaskScores& task, const std::vector<std::string>& model_names) {
  const std::size_t n_models = model_names.size();
  SeedTable tab;
  std::set<std::int64_t> seeds;
  for (const auto& [name, sv] : task.models)
    for (const auto& [seed, v] : sv) seeds.insert(seed);
  tab.seeds.assign(seeds.begin(), seeds.end());
  const std::size_t ns = tab.seeds.size();
  tab.value_by_seed.assign(ns * n_models, 0.0);
  tab.has_by_seed.assign(ns * n_models, 0);
  for (std::size_t m = 0; m < n_models; ++m) {
    const SeedValues& sv = task.models.at(model_names[m]);
    for (std::size_t s = 0; s < ns; ++s) {
      const auto it = sv.find(tab.seeds[s]);
      if (it != sv.end()) {
        tab.value_by_seed[s * n_models + m] = it->second;
        tab.has_by_seed[s * n_models + m] = 1;
      }
    }
    tab.means.push_back(mean(values_of(sv)));
    tab.complete = tab.complete && sv.size() == ns;
  }
  return tab;
}

// One resample's figures, from its draws of each task's seeds (`draws` holds the tasks'
// draws back to back, task t's from draw_offset[t]): each model's mean rank over the
// tasks into rank_out, its normalised IQM into iqm_out where some task normalised.
bool score_resample(const std::vector<SeedTable>& tables, const std::uint32_t* draws, const std::vector<std::size_t>& draw_offset,
                    bool hib, double* rank_out, double* iqm_out) {
  const std::size_t n_models = tables.front().means.size(), n_tasks = tables.size();
  std::vector<double> rank_sum(n_models, 0.0), means(n_models), sum(n_models);
  std::vector<std::size_t> cnt(n_models);
  std::vector<std::vector<double>> scores(n_models);
  for (std::size_t t = 0; t < n_tasks; ++t) {
    const SeedTable& tab = tables[t];
    const std::size_t ns = tab.seeds.size();
    const std::uint32_t* d = draws + draw_offset[t];
    // Every model's sum in draw order, the models side by side (seed-major table).
    std::fill(sum.begin(), sum.end(), 0.0);
    std::fill(cnt.begin(), cnt.end(), 0);
    if (tab.complete) {  // the same sums in the same order, without asking each cell
      std::fill(cnt.begin(), cnt.end(), ns);
      for (std::size_t j = 0; j < ns; ++j) {
        const double* v = tab.value_by_seed.data() + d[j] * n_models;
        for (std::size_t m = 0; m < n_models; ++m) sum[m] += v[m];
      }
    } else {
      for (std::size_t j = 0; j < ns; ++j) {
        const double* v = tab.value_by_seed.data() + d[j] * n_models;
        const char* h = tab.has_by_seed.data() + d[j] * n_models;
        for (std::size_t m = 0; m < n_models; ++m)
          if (h[m]) {
            sum[m] += v[m];
            ++cnt[m];
          }
      }
    }
    for (std::size_t m = 0; m < n_models; ++m) means[m] = cnt[m] > 0 ? sum[m] / static_cast<double>(cnt[m]) : tab.means[m];
    const std::vector<double> ranks = ranks_of(means, hib);
    for (std::size_t m = 0; m < n_models; ++m) rank_sum[m] += ranks[m];
    const std::vector<double> norm = normalised(means, hib);
    if (!norm.empty())
      for (std::size_t m = 0; m < n_models; ++m) scores[m].push_back(norm[m]);
  }
  for (std::size_t m = 0; m < n_models; ++m) rank_out[m] = rank_sum[m] / static_cast<double>(n_tasks);
  if (scores.front().empty()) return false;
  for (std::size_t m = 0; m < n_models; ++m) iqm_out[m] = trim_mean(scores[m], 0.25);
  return true;
}

// Stratified bootstrap over seeds: per model, the resamples' mean ranks and normalised IQMs
// (the latter only from resamples where some task normalised).
struct ResampledFigures {
  std::vector<std::vector<double>> rank, iqm;
};

ResampledFigures bootstrap_over_seeds(const std::vector<SeedTable>& tables, const RankingSettings& settings) {
  const std::size_t n_models = tables.front().means.size(), n_tasks = tables.size();
  const bool hib = settings.higher_is_better;
  // The draws come from one stream in (resample, task) order, so they are drawn a block of
  // resamples at a time, the next block while this one's resamples are scored on every
  // core; each resample's figures depend only on its own draws.
  const std::size_t B = settings.bootstrap.resamples;
  std::vector<std::size_t> draw_offset(n_tasks + 1, 0);  // of task t's draws within one resample's
  for (std::size_t t = 0; t < n_tasks; ++t) draw_offset[t + 1] = draw_offset[t] + tables[t].seeds.size();
  const std::size_t draws_per_resample = draw_offset[n_tasks];
  // About 4 MiB of draws per block, at least one resample.
  const std::size_t block = std::max<std::size_t>(1, (std::size_t{1} << 20) / std::max<std::size_t>(1, draws_per_resample));
  std::vector<std::uint32_t> draws(std::min(block, B) * draws_per_resample), next_draws(draws.size());
  std::vector<double> rank_of(B * n_models), iqm_of(B * n_models);  // resample-major
  std::vector<char> has_iqm(B, 0);  // some task normalised in that resample (then every model has a score)
  Rng rng(settings.bootstrap.seed);
  const auto draw_block = [&](std::size_t first, std::vector<std::uint32_t>& into) {
    for (std::size_t b = 0; b < std::min(block, B - first); ++b)
      for (std::size_t t = 0; t < n_tasks; ++t) {
        const std::size_t ns = tables[t].seeds.size();
        std::uint32_t* d = into.data() + b * draws_per_resample + draw_offset[t];
        for (std::size_t j = 0; j < ns; ++j) d[j] = static_cast<std::uint32_t>(rng.below(ns));
      }
  };
  draw_block(0, draws);
  for (std::size_t first = 0; first < B; first += block) {
    const std::size_t rows = std::min(block, B - first);
    const bool more = first + block < B;
    std::thread drawer;
    if (more) {
      try {
        drawer = std::thread(draw_block, first + block, std::ref(next_draws));
      } catch (const std::system_error&) {  // no thread to be had: drawn below, after scoring
      }
    }
    const auto draw_rest = [&] {
      if (drawer.joinable())
        drawer.join();
      else if (more)
        draw_block(first + block, next_draws);
    };
    try {
      parallel_for(rows, [&](std::size_t b) {
        const std::size_t at = (first + b) * n_models;
        has_iqm[first + b] = score_resample(tables, draws.data() + b * draws_per_resample, draw_offset, hib,
                                            rank_of.data() + at, iqm_of.data() + at) ? 1 : 0;
      });
    } catch (...) {
      draw_rest();
      throw;
    }
    draw_rest();
    std::swap(draws, next_draws);
  }
  ResampledFigures out{std::vector<std::vector<double>>(n_models), std::vector<std::vector<double>>(n_models)};
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t m = 0; m < n_models; ++m) {
      out.rank[m].push_back(rank_of[b * n_models + m]);
      if (has_iqm[b]) out.iqm[m].push_back(iqm_of[b * n_models + m]);
    }
  return out;
}

}  // namespace

OverallRanking rank_across_tasks(const std::vector<TaskScores>& tasks, const RankingSettings& settings) {
  check_settings(settings);
  if (tasks.empty()) throw UserError("ranking across tasks needs at least one task");
  const std::vector<std::string> model_names = models_on_every_task(tasks);
  const std::size_t n_models = model_names.size();
  const std::size_t n_tasks = tasks.size();
  const bool hib = settings.higher_is_better;

  OverallRanking out;
  out.resamples = settings.bootstrap.resamples;
  out.seed = settings.bootstrap.seed;
  out.confidence = settings.bootstrap.confidence;
  std::vector<SeedTable> tables;
  std::vector<double> rank_sum(n_models, 0.0);
  std::vector<std::vector<double>> scores(n_models);
  for (std::size_t t = 0; t < n_tasks; ++t) {
    out.tasks.push_back(rank_task(tasks[t].task, tasks[t].models, settings));
    tables.push_back(seed_table(tasks[t], model_names));
    const std::vector<double> ranks = ranks_of(tables.back().means, hib);
    for (std::size_t m = 0; m < n_models; ++m) rank_sum[m] += ranks[m];
    const std::vector<double> norm = normalised(tables.back().means, hib);
    if (!norm.empty()) {
      ++out.normalised_tasks;
      for (std::size_t m = 0; m < n_models; ++m) scores[m].push_back(norm[m]);
    }
  }
  for (std::size_t m = 0; m < n_models; ++m) {
    OverallModel om;
    om.model = model_names[m];
    om.mean_rank = rank_sum[m] / static_cast<double>(n_tasks);
    if (!scores[m].empty()) om.normalised_iqm = trim_mean(scores[m], 0.25);
    out.models.push_back(std::move(om));
  }
  ResampledFigures resampled = bootstrap_over_seeds(tables, settings);
  for (std::size_t m = 0; m < n_models; ++m) {
    out.models[m].mean_rank_ci = percentile_interval(std::move(resampled.rank[m]), settings.bootstrap.confidence);
    out.models[m].normalised_iqm_ci = percentile_interval(std::move(resampled.iqm[m]), settings.bootstrap.confidence);
  }
  std::stable_sort(out.models.begin(), out.models.end(),
                   [](const OverallModel& a, const OverallModel& b) { return a.mean_rank < b.mean_rank; });
  return out;
}

}  // namespace lrb::stats
