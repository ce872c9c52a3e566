// Copyright 2026 The Sieve Authors.
//
// Times parsing and compiling filters against one in-memory shard (no storage, no search):
// the cost the query pipeline pays per distinct filter before planning.
//
//   filter_bench [--rows 1000000] [--repeats 50] [--lazy]
//
// --lazy leaves the range indexes unsorted after the load, so the first range query pays.
//
// Prints one JSON line per filter: {"filter", "rows", "passing", "parse_ms", "compile_ms"
// (median), "compile_min_ms", "first_compile_ms"} — first_compile_ms includes merging the range
// indexes' appended tails, which the first range query after an ingest pays.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "filter/filter.h"
#include "index/shard_index.h"
#include "tools/bench/bench_flags.h"

namespace {

using Clock = std::chrono::steady_clock;

double Ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

int main(int argc, char** argv) {
  sieve::bench::BenchFlags flags("filter_bench",
                                 "usage: filter_bench [--rows N] [--repeats R] [--lazy]\n",
                                 {"rows", "repeats"}, {"lazy"});
  flags.Parse(argc, argv);
  const uint32_t rows = static_cast<uint32_t>(flags.Uint("rows", 1000000));
  const int repeats = flags.Int("repeats", 50);
  if (rows == 0 || repeats < 1) flags.Die("--rows and --repeats must be positive");

  sieve::CollectionSpec spec;
  spec.name = "bench";
  spec.dim = 1;
  spec.attributes = {{"a", sieve::AttrType::kInt},
                     {"b", sieve::AttrType::kFloat},
                     {"c", sieve::AttrType::kString},
                     {"flag", sieve::AttrType::kBool},
                     {"t", sieve::AttrType::kTags}};
  sieve::ShardIndex shard(spec, 0);
  std::mt19937_64 rng(42);
  static const char* kC[] = {"x", "y", "z", "w", "v"};
  static const char* kT[] = {"red", "green", "blue", "big", "small", "new"};
  const uint32_t batch = 65536;  // the CLI's default ingest batch
  auto t_load = Clock::now();
  for (uint32_t first = 0; first < rows; first += batch) {
    uint32_t m = std::min(batch, rows - first);
    sieve::Chunk ch;
    ch.first_ordinal = first;
    ch.num_rows = m;
    ch.vectors.assign(m, 0.f);
    ch.columns.resize(spec.attributes.size());
    for (size_t a = 0; a < spec.attributes.size(); ++a)
      ch.columns[a].type = spec.attributes[a].type;
    for (uint32_t r = first; r < first + m; ++r) {
      ch.ids.push_back(r);
      for (auto& col : ch.columns) col.valid.push_back(rng() % 20 != 0);  // 5% nulls
      ch.columns[0].ints.push_back(static_cast<int64_t>(rng() % 10));
      ch.columns[1].floats.push_back(std::uniform_real_distribution<double>(0, 1)(rng));
      ch.columns[2].strings.push_back(kC[rng() % 5]);
      ch.columns[3].ints.push_back(rng() % 2);
      std::vector<std::string> tags;
      for (int k = 0; k < 2; ++k) tags.push_back(kT[rng() % 6]);
      ch.columns[4].tags.push_back(std::move(tags));
    }
    shard.ApplyChunk(ch);
  }
  std::fprintf(stderr, "filter_bench: appended %u rows in %.0f ms\n", rows,
               Ms(t_load, Clock::now()));
  if (!flags.Has("lazy")) {
    auto t_sort = Clock::now();
    for (size_t a = 0; a < shard.num_attributes(); ++a) shard.attribute(a).BuildRangeIndex();
    std::fprintf(stderr, "filter_bench: built the range indexes in %.0f ms\n",
                 Ms(t_sort, Clock::now()));
  }

  const char* filters[] = {
      "a = 3 AND b BETWEEN 0.2 AND 0.5 AND c IN ('x','y')",
      "a = 3",
      "b < 0.001",
      "b BETWEEN 0.1 AND 0.9",
      "c IN ('x', 'y') OR flag = true",
      "NOT (a IN (1, 2, 3) AND t CONTAINS 'red')",
      "t CONTAINS 'red' AND NOT t CONTAINS 'big' AND b > 0.5",
      "a != 3 AND b IS NOT NULL",
  };
  for (const char* text : filters) {
    auto t0 = Clock::now();
    std::unique_ptr<sieve::Filter> f;
    sieve::Status s = sieve::Filter::Parse(text, spec, &f);
    auto t1 = Clock::now();
    if (!s.ok()) {
      std::fprintf(stderr, "filter_bench: %s\n", s.ToString().c_str());
      return 1;
    }
    auto t2 = Clock::now();
    uint64_t passing = f->Compile(shard).Cardinality();
    double first_ms = Ms(t2, Clock::now());
    std::vector<double> ms;
    for (int k = 0; k < repeats; ++k) {
      auto a = Clock::now();
      sieve::RowSet got = f->Compile(shard);
      ms.push_back(Ms(a, Clock::now()));
      if (got.Cardinality() != passing) return 2;
    }
    std::sort(ms.begin(), ms.end());
    std::printf(
        "{\"filter\": \"%s\", \"rows\": %u, \"passing\": %llu, \"parse_ms\": %.4f, "
        "\"compile_ms\": %.4f, \"compile_min_ms\": %.4f, \"first_compile_ms\": %.3f}\n",
        text, rows, static_cast<unsigned long long>(passing), Ms(t0, t1), ms[ms.size() / 2], ms[0],
        first_ms);
  }
  return 0;
}
