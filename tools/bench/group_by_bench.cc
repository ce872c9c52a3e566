// Copyright 2026 The Sieve Authors.
//
// group_by_bench: grouped search (issue 37 item 1) beside the naive way, through the C++ API.
// One store of --rows rows × --dim with two int attributes: `few` (--few-groups values) and
// `many` (--many-groups values); for each, --queries queries at k = --k, group_size =
// --group-size, timed as medians of --reps (after one untimed warm-up):
//   auto         Search with group_by (the planner's strategy, named)
//   few_groups   the same, forced
//   many_groups  the same, forced
//   naive        a plain Search at k = --naive-k, grouped afterwards (the k groups among those
//                rows, each with the rows it holds): the answers it gets wrong (a group missing,
//                or holding fewer or other rows than the exact answer) are counted
// Usage: group_by_bench --work DIR [--rows 1000000] [--dim 128] [--few-groups 100]
//          [--many-groups 1000000] [--queries 10] [--k 10] [--group-size 2]
//          [--naive-k 10000] [--reps 3] [--device auto|cpu|gpu]
//          [--fields few,many] [--few-strategies auto,few_groups,many_groups]
//          [--many-strategies auto,few_groups,many_groups]
// --fields and the strategies of each field pick the cases (a forced few_groups over a million
// values issues a search per value, which a large run skips: --many-strategies auto,many_groups). Ingest and the first search's load are timed on
// stderr.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "sieve/db.h"
#include "tools/bench/bench_flags.h"

namespace {

using Clock = std::chrono::steady_clock;

double Ms(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void Check(const sieve::Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "group_by_bench: %s: %s\n", what, s.ToString().c_str());
    std::exit(1);
  }
}

std::vector<float> Vectors(size_t n, size_t dim, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> g;
  std::vector<float> v(n * dim);
  for (float& x : v) x = g(rng);
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  sieve::bench::BenchFlags f(
      "group_by_bench",
      "usage: group_by_bench --work DIR [--rows N] [--dim D] [--few-groups G] [--many-groups G]\n"
      "         [--queries Q] [--k K] [--group-size N] [--naive-k K] [--reps R]\n"
      "         [--device auto|cpu|gpu] [--fields few,many]\n"
      "         [--few-strategies auto,few_groups,many_groups]\n"
      "         [--many-strategies auto,few_groups,many_groups]\n",
      {"work", "rows", "dim", "few-groups", "many-groups", "queries", "k", "group-size",
       "naive-k", "reps", "device", "fields", "few-strategies", "many-strategies"});
  f.Parse(argc, argv);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each row lands even if a time limit ends the run
  const std::string work = f.Str("work", "");
  if (work.empty()) f.Die("--work DIR is required");
  const size_t rows = f.Uint("rows", 1000000);
  const uint32_t dim = static_cast<uint32_t>(f.Uint("dim", 128));
  const int64_t few = static_cast<int64_t>(f.Uint("few-groups", 100));
  const int64_t many = static_cast<int64_t>(f.Uint("many-groups", 1000000));
  const size_t nq = f.Uint("queries", 10);
  const int k = static_cast<int>(f.Uint("k", 10));
  const int size = static_cast<int>(f.Uint("group-size", 2));
  const int naive_k = static_cast<int>(f.Uint("naive-k", 10000));
  const int reps = static_cast<int>(f.Uint("reps", 3));
  sieve::SearchOptions options;
  Check(sieve::ParseDevice(f.Str("device", "auto"), &options.device), "--device");
  const std::vector<std::string> fields = f.List("fields", {"few", "many"});
  for (const std::string& field : fields) {
    if (field != "few" && field != "many") f.Die("--fields: '" + field + "' is not few or many");
  }
  // The other ways' answers are checked against auto's, so auto always runs, first.
  auto strategies_of = [&f](const std::string& flag) {
    std::vector<sieve::GroupStrategy> out = {sieve::GroupStrategy::kAuto};
    for (const std::string& name : f.List(flag, {"few_groups", "many_groups"})) {
      sieve::GroupStrategy s;
      Check(sieve::ParseGroupStrategy(name, &s), ("--" + flag).c_str());
      if (s != sieve::GroupStrategy::kAuto) out.push_back(s);
    }
    return out;
  };
  const std::vector<sieve::GroupStrategy> few_strategies = strategies_of("few-strategies");
  const std::vector<sieve::GroupStrategy> many_strategies = strategies_of("many-strategies");

  std::filesystem::remove_all(work);
  std::filesystem::create_directories(work);
  std::unique_ptr<sieve::DB> db;
  Check(sieve::DB::Open(sieve::Options(), work + "/db", &db), "open");
  sieve::CollectionSpec spec;
  spec.name = "g";
  spec.dim = dim;
  spec.attributes = {{"few", sieve::AttrType::kInt}, {"many", sieve::AttrType::kInt}};
  Check(db->CreateCollection(spec), "create");
  std::mt19937_64 rng(7);
  const size_t batch = 100000;
  auto t_ingest = Clock::now();
  // Each batch's vectors come from its own seed, so the machine's cores draw several batches at
  // once (the draw, not the ingest, took most of the time) and the rows stay the same.
  const size_t threads = std::max(1u, std::thread::hardware_concurrency());
  for (size_t round = 0; round < rows; round += threads * batch) {
    std::vector<std::vector<float>> drawn(std::min(threads, (rows - round + batch - 1) / batch));
    std::vector<std::thread> pool;
    for (size_t t = 0; t < drawn.size(); ++t) {
      pool.emplace_back([&drawn, t, round, batch, rows, dim] {
        const size_t first = round + t * batch;
        drawn[t] = Vectors(std::min(batch, rows - first), dim, first + 1);
      });
    }
    for (std::thread& th : pool) th.join();
    for (size_t t = 0; t < drawn.size(); ++t) {
      const size_t first = round + t * batch;
      const size_t n = std::min(batch, rows - first);
      const std::vector<float>& v = drawn[t];
      std::vector<int64_t> ids(n);
      std::vector<std::vector<sieve::Value>> attrs(n);
      for (size_t i = 0; i < n; ++i) {
        ids[i] = static_cast<int64_t>(first + i);
        attrs[i] = {sieve::Value(static_cast<int64_t>(rng() % few)),
                    sieve::Value(static_cast<int64_t>(rng() % many))};
      }
      sieve::RowBatch b;
      b.num_rows = n;
      b.dim = dim;
      b.vectors = v.data();
      b.ids = ids.data();
      b.attributes = attrs.data();
      sieve::IngestResult r;
      Check(db->Ingest("g", b, sieve::IngestOptions(), &r), "ingest");
    }
  }
  const double ingest_ms = Ms(t_ingest);
  const std::vector<float> queries = Vectors(nq, dim, 999);
  {
    // The first search reads the rows into memory (and onto the device): timed apart.
    sieve::SearchRequest one;
    one.queries = queries.data();
    one.num_queries = 1;
    one.dim = dim;
    one.k = 1;
    sieve::SearchResult res;
    const auto t0 = Clock::now();
    Check(db->Search("g", one, options, &res), "first search");
    std::fprintf(stderr, "group_by_bench: generate + ingest %.0f ms, first search (load) %.0f ms, "
                 "device %s\n", ingest_ms, Ms(t0), res.explain.device.c_str());
  }
  std::printf("# group_by_bench: %zu rows x %u, %zu queries, k = %d, group_size = %d, "
              "naive k = %d, %d reps (medians, ms per batch)\n\n",
              rows, dim, nq, k, size, naive_k, reps);
  std::printf("| field | values | way | ms | searches | rounds | wrong queries |\n");
  std::printf("| --- | --- | --- | --- | --- | --- | --- |\n");
  for (const std::string& field : fields) {
    const int64_t values = field == "few" ? few : many;
    sieve::SearchRequest req;
    req.queries = queries.data();
    req.num_queries = nq;
    req.dim = dim;
    req.k = k;
    req.group_by = field;
    req.group_size = size;
    sieve::SearchResult exact;
    // The naive way: one plain top-naive_k search, grouped afterwards; it runs right after
    // auto (whose answers it is checked against), before the forced strategies, which may be
    // slow (a large run bounds the program's time).
    auto naive = [&]() {
      sieve::SearchRequest plain;
      plain.queries = queries.data();
      plain.num_queries = nq;
      plain.dim = dim;
      plain.k = naive_k;
      plain.include.attributes = {field};
      std::vector<double> ms;
      size_t wrong = 0;
      for (int r = 0; r <= reps; ++r) {
        const auto t0 = Clock::now();
        sieve::SearchResult res;
        Check(db->Search("g", plain, options, &res), "naive search");
        std::vector<std::vector<std::pair<int64_t, std::vector<int64_t>>>> grouped(nq);
        for (size_t q = 0; q < nq; ++q) {
          std::map<int64_t, size_t> index;
          const sieve::Neighbors& nb = res.results[q];
          for (size_t i = 0; i < nb.ids.size(); ++i) {
            const int64_t v = std::get<int64_t>(nb.attributes[i][0]);
            auto [it, inserted] = index.emplace(v, grouped[q].size());
            if (inserted) {
              if (grouped[q].size() == static_cast<size_t>(k)) continue;
              grouped[q].push_back({v, {}});
            }
            if (it->second >= grouped[q].size()) continue;
            auto& g = grouped[q][it->second].second;
            if (g.size() < static_cast<size_t>(size)) g.push_back(nb.ids[i]);
          }
        }
        if (r > 0) ms.push_back(Ms(t0));
        if (r != reps) continue;
        for (size_t q = 0; q < nq; ++q) {
          const auto& want = exact.results[q].groups;
          bool same = want.size() == grouped[q].size();
          for (size_t g = 0; same && g < want.size(); ++g) {
            same = std::get<int64_t>(want[g].value) == grouped[q][g].first &&
                   want[g].ids == grouped[q][g].second;
          }
          wrong += !same;
        }
      }
      std::printf("| %s | %lld | naive (k = %d, then grouped) | %.1f | %zu | 1 | %zu of %zu |\n",
                  field.c_str(), static_cast<long long>(values), naive_k, Median(ms), nq, wrong,
                  nq);
    };
    for (sieve::GroupStrategy strategy : field == "few" ? few_strategies : many_strategies) {
      req.group_strategy = strategy;
      std::vector<double> ms;
      sieve::SearchResult res;
      for (int r = 0; r <= reps; ++r) {
        const auto t0 = Clock::now();
        Check(db->Search("g", req, options, &res), "grouped search");
        if (r > 0) ms.push_back(Ms(t0));
      }
      if (strategy == sieve::GroupStrategy::kAuto) exact = res;
      std::string way = sieve::GroupStrategyName(strategy);
      if (strategy == sieve::GroupStrategy::kAuto) way += " (" + res.explain.group->strategy + ")";
      size_t differ = 0;
      for (size_t q = 0; q < nq; ++q) {
        const auto& want = exact.results[q].groups;
        const auto& got = res.results[q].groups;
        bool same = want.size() == got.size();
        for (size_t g = 0; same && g < want.size(); ++g) {
          same = want[g].value == got[g].value && want[g].ids == got[g].ids;
        }
        differ += !same;
      }
      std::printf("| %s | %lld | %s | %.1f | %llu | %u | %s |\n", field.c_str(),
                  static_cast<long long>(values), way.c_str(), Median(ms),
                  static_cast<unsigned long long>(res.explain.group->searches),
                  res.explain.group->rounds,
                  strategy == sieve::GroupStrategy::kAuto
                      ? ""
                      : (std::to_string(differ) + " of " + std::to_string(nq) + " (vs auto)")
                            .c_str());
      if (strategy == sieve::GroupStrategy::kAuto) naive();
    }
  }
  return 0;
}
