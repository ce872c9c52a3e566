// Copyright 2026 The Sieve Authors.

#include "query/calibrate/fit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "query/planner.h"
#include "query/calibrate/score.h"
#include "query/calibrate/stats.h"

namespace sieve::calibrate {

namespace {

// Where path a stops beating path b along x (ascending): r[i] = log(t_a / t_b). The first loss
// by more than 10%
// confirmed by the next point too (or the last point) ends a's range; the crossover is
// interpolated in log x between it and the point before. *censored: -1 when a lost from the
// first point (returns x[0]), +1 when it never lost (returns the last x), else 0.
double Crossover(const std::vector<double>& x, std::vector<double> r, int* censored,
                 double tie = 0.10) {
  // Within `tie` of each other the two paths are tied: a loss that small is no loss (on a busy
  // machine it is noise, and either choice costs at most `tie`).
  for (double& v : r) v -= std::log1p(tie);
  const size_t n = x.size();
  *censored = 0;
  if (n == 0) {
    *censored = 1;
    return 0;
  }
  for (size_t i = 0; i < n; ++i) {
    if (r[i] > 0 && (i + 1 == n || r[i + 1] > 0)) {
      if (i == 0) {
        *censored = -1;
        return x[0];
      }
      const double lx0 = std::log(x[i - 1]), lx1 = std::log(x[i]);
      const double r0 = std::min(r[i - 1], 0.0), r1 = r[i];
      const double t = r1 - r0 > 0 ? (0 - r0) / (r1 - r0) : 0.5;
      return std::exp(lx0 + t * (lx1 - lx0));
    }
  }
  *censored = 1;
  return x[n - 1];
}

double LogRatio(double a, double b) {
  if (!(a > 0) || !(b > 0)) return a > b ? 10.0 : -10.0;
  return std::log(a / b);
}

// The series of cells sharing (rows, dim, mode, overlap), in ascending count.
std::map<std::tuple<bool, int, uint64_t, uint32_t>, std::vector<const Cell*>> GroupSeries(
    const std::vector<Cell>& cells) {
  std::map<std::tuple<bool, int, uint64_t, uint32_t>, std::vector<const Cell*>> g;
  for (const Cell& c : cells) {
    g[{c.per_query, static_cast<int>(c.overlap), c.rows, c.dim}].push_back(&c);
  }
  for (auto& [key, v] : g) {
    std::sort(v.begin(), v.end(),
              [](const Cell* a, const Cell* b) { return a->passing < b->passing; });
  }
  return g;
}

// Of the settings whose loss is within 1e-9 of the least, the one nearest (in log space) to
// their log-centroid. Settings are vectors of positive numbers.
size_t MiddleOfBest(const std::vector<std::vector<double>>& settings,
                    const std::vector<double>& loss) {
  const double best = *std::min_element(loss.begin(), loss.end());
  std::vector<size_t> tied;
  for (size_t i = 0; i < loss.size(); ++i) {
    if (loss[i] <= best + 1e-9) tied.push_back(i);
  }
  const size_t d = settings[tied[0]].size();
  std::vector<double> centroid(d, 0.0);
  for (size_t i : tied) {
    for (size_t j = 0; j < d; ++j) centroid[j] += std::log(settings[i][j]) / tied.size();
  }
  size_t pick = tied[0];
  double pick_dist = std::numeric_limits<double>::infinity();
  for (size_t i : tied) {
    double dist = 0;
    for (size_t j = 0; j < d; ++j) {
      const double e = std::log(settings[i][j]) - centroid[j];
      dist += e * e;
    }
    if (dist < pick_dist) {
      pick_dist = dist;
      pick = i;
    }
  }
  return pick;
}

// Crossovers of shards below this many rows do not enter the gather fits: there dense wins
// almost from the start, and no form that fits the larger shards follows them.
constexpr uint64_t kCrossoverMinRows = 65536;
// The smallest shard whose timings may set the gather cap's fall with the rows.
constexpr uint64_t kFallMinRows = 5000000;

// Least squares y = c0 + c1 x1 + c2 x2 (normal equations, Gauss-Jordan with partial pivoting);
// false when the system is singular (a coordinate that does not vary).
bool LeastSquares3(const std::vector<std::array<double, 3>>& pts, double c[3]) {
  double m[3][4] = {};
  for (const auto& p : pts) {
    const double v[3] = {1.0, p[0], p[1]};
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) m[i][j] += v[i] * v[j];
      m[i][3] += v[i] * p[2];
    }
  }
  for (int i = 0; i < 3; ++i) {
    int piv = i;
    for (int r = i + 1; r < 3; ++r) {
      if (std::fabs(m[r][i]) > std::fabs(m[piv][i])) piv = r;
    }
    if (std::fabs(m[piv][i]) < 1e-9) return false;
    std::swap(m[i], m[piv]);
    for (int r = 0; r < 3; ++r) {
      if (r == i) continue;
      const double f = m[r][i] / m[i][i];
      for (int col = 0; col < 4; ++col) m[r][col] -= f * m[i][col];
    }
  }
  for (int i = 0; i < 3; ++i) c[i] = m[i][3] / m[i][i];
  return true;
}

// A bitmap series' union gather → dense crossover (the fraction of the rows in the union).
struct UnionPoint {
  uint64_t rows;
  uint32_t dim;
  double f;
  int censored;  // > 0: the gather won to the series' end; < 0: dense won from its start
};

// The union gather bound (bitmap_gather_max_fraction, bitmap_gather_scale and the exponents)
// from the series' crossovers. Without crossovers at two dims and two shard sizes (of at least
// kCrossoverMinRows rows, bracketed): the median crossover at every shape. Otherwise
// log(crossover) = log(scale) + a · log(dim / 128) + b · log(10^6 / rows) by least squares, a
// and b clamped to [0, 2], capped by the largest such crossover (or the end of a series the
// gather won throughout). The crossover falls with the rows and rises with the dim, so one
// fraction for every shape would send large low-dim shards to the gather past it.
void FitUnionGatherBound(const std::vector<UnionPoint>& points, PlannerRule* t) {
  std::vector<double> fracs;
  for (const UnionPoint& u : points) fracs.push_back(u.f);
  t->bitmap_gather_max_fraction = std::min(1.0, LogMedian(fracs));
  std::vector<std::array<double, 3>> pts;
  std::vector<uint64_t> shard_rows;
  std::vector<uint32_t> shard_dims;
  double cap = 0;
  for (const UnionPoint& u : points) {
    if (u.rows < kCrossoverMinRows || !(u.f > 0)) continue;
    // A series the gather won to its end bounds the crossover from below: it raises the cap,
    // but has no crossover to fit.
    if (u.censored > 0) cap = std::max(cap, u.f);
    if (u.censored != 0) continue;
    pts.push_back(
        {std::log(u.dim / kReferenceDim), std::log(kReferenceRows / u.rows), std::log(u.f)});
    shard_rows.push_back(u.rows);
    shard_dims.push_back(u.dim);
    cap = std::max(cap, u.f);
  }
  std::sort(shard_rows.begin(), shard_rows.end());
  std::sort(shard_dims.begin(), shard_dims.end());
  const bool varied = std::unique(shard_rows.begin(), shard_rows.end()) - shard_rows.begin() >= 2 &&
                      std::unique(shard_dims.begin(), shard_dims.end()) - shard_dims.begin() >= 2;
  double c[3];
  if (!varied || pts.size() < 4 || !LeastSquares3(pts, c)) return;
  const double a = std::clamp(c[1], 0.0, 2.0), b = std::clamp(c[2], 0.0, 2.0);
  double log_scale = 0;
  for (const auto& p : pts) log_scale += (p[2] - a * p[0] - b * p[1]) / pts.size();
  t->bitmap_gather_scale = std::exp(log_scale);
  t->bitmap_gather_dim_exponent = a;
  t->bitmap_gather_rows_exponent = b;
  t->bitmap_gather_max_fraction = std::min(1.0, cap);
}

double TimeOrInf(const Cell& c, int p) {
  if (c.failed[p] || (c.reps[p] == 0 && !c.pruned[p]))
    return std::numeric_limits<double>::infinity();
  return c.ms[p];
}

}  // namespace

PlannerRule FitThresholds(const std::vector<Cell>& cells, uint32_t queries, uint32_t k,
                                const PlannerRule& base, FitReport* report) {
  PlannerRule t = base;
  FitReport local;
  FitReport& rep = report != nullptr ? *report : local;
  rep = FitReport();
  auto groups = GroupSeries(cells);

  std::vector<double> sddmm_bitset, sddmm_bitmap;
  std::vector<UnionPoint> union_points;
  struct GatherPoint {
    uint64_t rows;
    uint32_t dim;
    double f;
    int censored;
  };
  std::vector<GatherPoint> gather_points;
  bool union_pays = false;
  for (auto& [key, series] : groups) {
    FitReport::Series fs;
    fs.per_query = std::get<0>(key);
    fs.overlap = static_cast<Overlap>(std::get<1>(key));
    fs.rows = std::get<2>(key);
    fs.dim = std::get<3>(key);
    // A filter per query with one set for every query is planned by the bitset rule
    // (ChoosePath), so its series says nothing of the bitmap bounds.
    if (fs.per_query && fs.overlap == Overlap::kShared) continue;
    // SDDMM against the better of the other two, along the (mean) count.
    std::vector<double> x, r;
    for (const Cell* c : series) {
      const double other = std::min(TimeOrInf(*c, 1), TimeOrInf(*c, 2));
      x.push_back(std::max<double>(1, c->passing));
      r.push_back(c->pruned[0] ? 10.0 : LogRatio(TimeOrInf(*c, 0), other));
    }
    // Crossover's 10% tie, as everywhere: gather is the noisier path here, and a bound placed
    // short of the crossover costs more than one placed past it.
    fs.sddmm_rows = Crossover(x, r, &fs.sddmm_censored);
    (fs.per_query ? sddmm_bitmap : sddmm_bitset).push_back(fs.sddmm_rows);
    // Gather against dense, along the passing (bitset) or union (bitmap) fraction.
    x.clear();
    r.clear();
    for (const Cell* c : series) {
      if (c->passing <= k) continue;
      x.push_back(fs.per_query ? c->union_fraction() : c->fraction());
      r.push_back(c->pruned[1] ? 10.0 : LogRatio(TimeOrInf(*c, 1), TimeOrInf(*c, 2)));
      if (fs.per_query && TimeOrInf(*c, 1) < 0.9 * TimeOrInf(*c, 2) && !c->pruned[1]) {
        union_pays = true;
      }
    }
    if (!x.empty()) {
      // Union fractions of a series rise with the count but may repeat (saturated unions).
      fs.gather_fraction = Crossover(x, r, &fs.gather_censored);
      if (fs.per_query) {
        union_points.push_back({fs.rows, fs.dim, fs.gather_fraction, fs.gather_censored});
      } else {
        gather_points.push_back({fs.rows, fs.dim, fs.gather_fraction, fs.gather_censored});
      }
    }
    rep.series.push_back(fs);
  }

  if (!sddmm_bitset.empty()) {
    // log(crossover) = log(A) + e · log(128 / dim) over the bracketed series.
    std::vector<std::pair<double, double>> xy;  // (log(128 / dim), log(crossover))
    std::vector<uint32_t> dims;
    for (const auto& fs : rep.series) {
      if (fs.per_query || fs.sddmm_censored != 0) continue;
      xy.emplace_back(std::log(kReferenceDim / fs.dim), std::log(fs.sddmm_rows));
      dims.push_back(fs.dim);
    }
    std::sort(dims.begin(), dims.end());
    dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
    rep.sddmm_series = static_cast<int>(xy.size());
    rep.sddmm_dims = static_cast<int>(dims.size());
    double exponent = base.sddmm_dim_exponent;
    double log_a = 0;
    if (dims.size() >= 2) {
      double mx = 0, my = 0;
      for (auto [x, y] : xy) mx += x / xy.size(), my += y / xy.size();
      double sxx = 0, sxy = 0;
      for (auto [x, y] : xy) sxx += (x - mx) * (x - mx), sxy += (x - mx) * (y - my);
      exponent = std::clamp(sxx > 0 ? sxy / sxx : 0.0, 0.0, 2.0);
      log_a = my - exponent * mx;
    } else {
      // One dim (or none bracketed): the base's exponent, the count from every series.
      std::vector<double> at_reference;
      for (const auto& fs : rep.series) {
        if (fs.per_query) continue;
        at_reference.push_back(fs.sddmm_rows * std::pow(fs.dim / kReferenceDim, exponent));
      }
      log_a = std::log(LogMedian(at_reference));
    }
    t.sddmm_max_rows = static_cast<uint64_t>(std::llround(std::exp(log_a)));
    t.sddmm_dim_exponent = exponent;
    t.sddmm_max_fraction = 1.0;
    double sq = 0;
    for (auto [x, y] : xy) {
      const double e = log_a + exponent * x - y;
      sq += e * e;
    }
    rep.sddmm_log_rms = xy.empty() ? 0 : std::sqrt(sq / xy.size());
    for (auto& fs : rep.series) {
      if (!fs.per_query) fs.model_sddmm_rows = SddmmMaxRows(t, fs.dim);
    }
  }
  if (!gather_points.empty()) {
    // Grid search of cuVS's form amortized(rows) · min(scale / √dim, cap).
    std::vector<double> ms = {0};
    for (double e = 3; e <= 8.001; e += 0.25) ms.push_back(std::pow(10.0, e));
    std::vector<double> ss, cs;
    for (double e = -2; e <= 4.001; e += 0.1) ss.push_back(std::pow(10.0, e));
    ss.push_back(1e9);
    for (double e = -3; e <= 0.0001; e += 0.05) cs.push_back(std::min(1.0, std::pow(10.0, e)));
    const double kFloor = std::log(1e-7);
    // The loss is first the mean log penalty over the bitset cells whose choice the gather
    // bound decides (gather or dense; SDDMM's bound is fitted above), then, a thousand times
    // lighter, the squared log error to the crossovers of the series of at least 65,536 rows,
    // which only settles what the penalty leaves flat (between two calibrated fractions).
    // Crossovers alone let the smallest shards (where dense wins almost from the start and the
    // form cannot follow both dims) pull the cap far below the crossovers of large ones.
    // The cells the bound decides: those ChoosePath does not send to SDDMM (a choice that does
    // not depend on the gather bound) and that have more than k passing rows; ChoosePath then
    // takes gather below GatherMaxSelectivity, else dense.
    struct GatherCell {
      uint64_t rows;
      uint32_t dim;
      double fraction, pen_gather, pen_dense;
    };
    std::vector<GatherCell> decided;
    for (const Cell& c : cells) {
      if (c.per_query || c.passing <= k || c.failed[1] || c.failed[2]) continue;
      if (ChoosePath(t, c.plan_input(queries, k)) == SearchPath::kSddmm) continue;
      const double best_ms = c.best_ms();
      if (!(best_ms > 0)) continue;
      decided.push_back({c.rows, c.dim, c.fraction(), std::log(std::max(1.0, c.ms[1] / best_ms)),
                         std::log(std::max(1.0, c.ms[2] / best_ms))});
    }
    // The cap's fall with the rows past 10^6, searched only where the sweep has shards of
    // kFallMinRows or more (nearer ones cannot tell the fall from noise, and it would be
    // stretched over shards many times larger), else none; its weakening with dim only with
    // such shards at two dims or more.
    std::set<uint32_t> large_dims;
    for (const Cell& c : cells) {
      if (!c.per_query && c.rows >= kFallMinRows) large_dims.insert(c.dim);
    }
    std::vector<double> es = {0}, gs = {0};
    if (!large_dims.empty()) {
      for (double e = 0.05; e <= 0.6001; e += 0.05) es.push_back(e);
    }
    if (large_dims.size() >= 2) gs = {0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0};
    auto loss_of = [&](const PlannerRule& trial) {
      double pen = 0;
      for (const GatherCell& g : decided) {
        pen += g.fraction < GatherMaxSelectivity(trial, g.rows, g.dim) ? g.pen_gather
                                                                       : g.pen_dense;
      }
      if (!decided.empty()) pen /= static_cast<double>(decided.size());
      double loss = 0;
      for (const GatherPoint& g : gather_points) {
        if (g.rows < kCrossoverMinRows) continue;
        const double model = GatherMaxSelectivity(trial, g.rows, g.dim);
        const double e = (model > 0 ? std::log(model) : kFloor) - std::log(g.f);
        if (g.censored > 0 && e >= 0) continue;  // gather won to the end: may be above
        if (g.censored < 0 && e <= 0) continue;  // dense won from the start: may be below
        loss += e * e;
      }
      // Ties (directions the data does not pin down) go toward cuVS's constants and no fall
      // with the rows.
      loss += 1e-3 * (std::fabs(std::log(trial.gather_scale / 5.5)) +
                      std::fabs(std::log(trial.gather_max_fraction / 0.5)) +
                      trial.gather_rows_exponent + 0.1 * trial.gather_rows_dim_exponent) +
              1e-4 * std::log1p(trial.gather_min_rows / 1000.0);
      return pen + 1e-3 * loss;
    };
    double best = std::numeric_limits<double>::infinity();
    PlannerRule trial = t, chosen = t;
    auto consider = [&]() {
      const double l = loss_of(trial);
      if (l < best) {
        best = l;
        chosen = trial;
      }
    };
    // Three passes, each a full grid over some of the five numbers with the rest held: (min
    // rows, scale, cap, fall) without the dim term; (cap, fall, dim term); (min rows, scale).
    trial.gather_rows_dim_exponent = 0;
    for (double m : ms) {
      for (double sc : ss) {
        for (double c : cs) {
          for (double ex : es) {
            trial.gather_min_rows = m;
            trial.gather_scale = sc;
            trial.gather_max_fraction = c;
            trial.gather_rows_exponent = ex;
            consider();
          }
        }
      }
    }
    if (gs.size() > 1) {
      trial = chosen;
      for (double c : cs) {
        for (double ex : es) {
          for (double g : gs) {
            trial.gather_max_fraction = c;
            trial.gather_rows_exponent = ex;
            trial.gather_rows_dim_exponent = g;
            consider();
          }
        }
      }
      trial = chosen;
      for (double m : ms) {
        for (double sc : ss) {
          trial.gather_min_rows = m;
          trial.gather_scale = sc;
          consider();
        }
      }
    }
    t = chosen;  // only the gather fields differ from t
    double sq = 0;
    int n = 0;
    for (auto& fs : rep.series) {
      if (fs.per_query) continue;
      fs.model_fraction = GatherMaxSelectivity(t, fs.rows, fs.dim);
      if (fs.gather_censored == 0 && fs.model_fraction > 0) {
        const double e = std::log(fs.model_fraction / fs.gather_fraction);
        sq += e * e;
        ++n;
      }
    }
    rep.fit_log_rms = n ? std::sqrt(sq / n) : 0;
    // An extra fraction bound on SDDMM only when it clearly pays (small shards where dense is
    // cheap before the absolute count is reached).
    std::vector<Cell> bitset_cells;
    for (const Cell& c : cells) {
      if (!c.per_query) bitset_cells.push_back(c);
    }
    auto mean_penalty = [&](const PlannerRule& th) {
      return Score(bitset_cells, false, queries, k,
                   [&](const PlanInput& in) { return ChoosePath(th, in); })
          .mean;
    };
    const double base_pen = mean_penalty(t);
    double best_pen = base_pen, best_frac = 1.0;
    for (const auto& fs : rep.series) {
      if (fs.per_query || fs.sddmm_censored != 0) continue;
      PlannerRule trial = t;
      trial.sddmm_max_fraction = std::min(1.0, fs.sddmm_rows / fs.rows * 1.0001);
      const double p = mean_penalty(trial);
      if (p < best_pen) {
        best_pen = p;
        best_frac = trial.sddmm_max_fraction;
      }
    }
    if (best_pen < base_pen * 0.97) t.sddmm_max_fraction = best_frac;
  }
  if (!sddmm_bitmap.empty()) {
    t.bitmap_union_gather = union_pays && !union_points.empty();
    t.bitmap_gather_max_fraction = 0;
    t.bitmap_gather_scale = 0;
    t.bitmap_gather_dim_exponent = 0;
    t.bitmap_gather_rows_exponent = 0;
    if (t.bitmap_union_gather) FitUnionGatherBound(union_points, &t);
    // Per-query SDDMM against the alternative that would run instead (the union gather or
    // dense, fixed by the bounds just fitted): the share bound on the cells whose alternative
    // is the gather, the base count and fraction on those whose alternative is dense, each by
    // the mean log penalty; no count bound.
    t.bitmap_sddmm_max_rows = UINT64_MAX;
    std::vector<const Cell*> vs_gather, vs_dense;
    for (const Cell& c : cells) {
      if (!c.per_query || SameSetForEveryQuery(c.plan_input(queries, k))) continue;
      PlannerRule never = t;
      never.bitmap_sddmm_max_rows = 0;
      const SearchPath alt = ChoosePath(never, c.plan_input(queries, k));
      (alt == SearchPath::kGather ? vs_gather : vs_dense).push_back(&c);
    }
    auto mean_log_penalty = [&](const std::vector<const Cell*>& cs, const PlannerRule& th) {
      double sum = 0;
      size_t n = 0;
      for (const Cell* c : cs) {
        const int chosen = PathIndex(ChoosePath(th, c->plan_input(queries, k)));
        if (c->failed[chosen]) continue;
        sum += std::log(std::max(1.0, c->ms[chosen] / c->best_ms()));
        ++n;
      }
      return n ? sum / n : 0.0;
    };
    std::vector<std::vector<double>> settings;
    std::vector<double> loss;
    if (!vs_gather.empty()) {
      for (double e = -3; e <= 0.0001; e += 0.1) {
        PlannerRule trial = t;
        trial.bitmap_sddmm_max_share = std::min(1.0, std::pow(10.0, e));
        settings.push_back({trial.bitmap_sddmm_max_share});
        loss.push_back(mean_log_penalty(vs_gather, trial));
      }
      t.bitmap_sddmm_max_share = settings[MiddleOfBest(settings, loss)][0];
    }
    if (!vs_dense.empty()) {
      // base + fraction · rows by least squares in log space to the crossovers of the series
      // (overlap, rows, dim) whose alternative is dense: where per-query SDDMM stops beating
      // dense along the largest per-query count (ties within 10% to SDDMM). A fit to the
      // crossovers carries past the calibrated rows; one to the penalty alone is flat between
      // grid counts and may put the bound anywhere there.
      const std::set<const Cell*> dense_alt(vs_dense.begin(), vs_dense.end());
      struct Cross {
        double rows, dim, count;
        int censored;
      };
      std::vector<Cross> cross;
      for (const auto& [key, series] : groups) {
        // Bitsets, and bitmaps of one set (planned as bitsets).
        if (!std::get<0>(key) || std::get<1>(key) == static_cast<int>(Overlap::kShared)) continue;
        std::vector<double> x, r;
        for (const Cell* c : series) {
          if (dense_alt.count(c) == 0 || c->failed[0] || c->failed[2]) continue;
          x.push_back(std::max<double>(1, std::max(c->max_passing, c->passing)));
          r.push_back(c->pruned[0] ? 10.0 : LogRatio(c->ms[0], c->ms[2]));
        }
        if (x.size() < 2) continue;
        Cross cr{static_cast<double>(std::get<2>(key)), static_cast<double>(std::get<3>(key)), 0,
                 0};
        cr.count = Crossover(x, r, &cr.censored);
        cross.push_back(cr);
      }
      rep.bitmap_sddmm_series = static_cast<int>(cross.size());
      if (!cross.empty()) {
        std::vector<double> bases = {0};
        for (double e = 1; e <= 7.001; e += 0.05) bases.push_back(std::pow(10.0, e));
        // The fraction's fall with the rows and the dim, base + f · (10^6 / rows)^x ·
        // (128 / dim)^y · rows: x searched only where the crossovers span three shard sizes
        // (two fix base and f alone), y where they span two dims.
        std::set<double> sizes, dims;
        for (const Cross& cr : cross) {
          sizes.insert(cr.rows);
          dims.insert(cr.dim);
        }
        std::vector<double> xs = {0}, ys = {0};
        if (sizes.size() >= 3) {
          for (double x = 0.05; x <= 0.5001; x += 0.05) xs.push_back(x);
        }
        if (dims.size() >= 2) {
          for (double y = 0.1; y <= 1.0001; y += 0.1) ys.push_back(y);
        }
        // rows · (10^6 / rows)^x · (128 / dim)^y per exponent pair and crossover, computed once
        // for the search.
        std::vector<std::vector<double>> scaled(xs.size() * ys.size());
        for (size_t xi = 0; xi < xs.size(); ++xi) {
          for (size_t yi = 0; yi < ys.size(); ++yi) {
            for (const Cross& cr : cross) {
              scaled[xi * ys.size() + yi].push_back(
                  cr.rows * std::pow(kReferenceRows / cr.rows, xs[xi]) *
                  std::pow(kReferenceDim / std::max(1.0, cr.dim), ys[yi]));
            }
          }
        }
        double best = std::numeric_limits<double>::infinity(), bb = 0, bf = 1.0, bx = 0, by = 0;
        for (double base_rows : bases) {
          for (double e = -4; e <= 0.0001; e += 0.02) {
            const double f = std::min(1.0, std::pow(10.0, e));
            for (size_t si = 0; si < scaled.size(); ++si) {
              const double x = xs[si / ys.size()], y = ys[si % ys.size()];
              double l = 0;
              for (size_t ci = 0; ci < cross.size(); ++ci) {
                const Cross& cr = cross[ci];
                const double err = std::log(std::max(1.0, base_rows + f * scaled[si][ci])) -
                                   std::log(std::max(1.0, cr.count));
                if (cr.censored > 0 && err >= 0) continue;  // SDDMM won to the end: above
                if (cr.censored < 0 && err <= 0) continue;  // dense won from the start: below
                l += err * err;
              }
              // Directions the crossovers do not pin down go toward no base and no fall.
              l += 1e-4 * (std::log1p(base_rows / 1000.0) + x + y);
              if (l < best) {
                best = l;
                bb = base_rows;
                bf = f;
                bx = x;
                by = y;
              }
            }
          }
        }
        t.bitmap_sddmm_base_rows = bb;
        t.bitmap_sddmm_max_fraction = bf;
        t.bitmap_sddmm_rows_exponent = bx;
        t.bitmap_sddmm_dim_exponent = by;
        double sq = 0;
        int n = 0;
        for (const Cross& cr : cross) {
          if (cr.censored != 0) continue;
          const double fraction = BitmapSddmmMaxFraction(t, static_cast<uint64_t>(cr.rows),
                                                         static_cast<uint32_t>(cr.dim));
          const double e = std::log((bb + fraction * cr.rows) / cr.count);
          sq += e * e;
          ++n;
        }
        rep.bitmap_sddmm_log_rms = n ? std::sqrt(sq / n) : 0;
      }
    }
  }
  return t;
}

}  // namespace sieve::calibrate
