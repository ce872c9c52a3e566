// Copyright 2026 The Sieve Authors.
//
// The CPU figures of the core issue, each beside FAISS (IndexFlatL2 + IDSelectorBitmap) and
// beside the time to read the vectors once, on the same data in the same run:
//   ingest of ROWS × DIM float32 rows with 3 attributes from .npy through the CLI,
//   opening and loading the collection, compiling a 3-clause filter,
//   QUERIES queries, k = K, at 0.1 %, 1 %, 10 %, 50 % and 100 % passing (results compared
//   with FAISS's).
// Usage: core_bench --cli PATH_TO_sieve --work DIR [--rows 1000000] [--dim 128] [--queries 16]
//                   [--k 10] [--reps 5]
// Prints a Markdown report on stdout.

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <faiss/IndexFlat.h>
#include <faiss/impl/IDSelector.h>

#include "sieve/db.h"
#include "tools/bench/bench_flags.h"
#include "tools/io/npy.h"

namespace {

using Clock = std::chrono::steady_clock;
double Ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}
double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int RunCli(const std::vector<std::string>& args) {
  pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A pass over every float: the floor for any exact search over all rows.
double ReadOnceMs(const std::vector<float>& v, int reps) {
  std::vector<double> t;
  volatile float sink = 0;
  for (int r = 0; r < reps + 1; ++r) {
    auto t0 = Clock::now();
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    const size_t n = v.size() / 8 * 8;
    for (size_t i = 0; i < n; i += 8) {
      for (int j = 0; j < 8; ++j) acc[j] += v[i + j];
    }
    sink = sink + acc[0] + acc[1] + acc[2] + acc[3] + acc[4] + acc[5] + acc[6] + acc[7];
    if (r > 0) t.push_back(Ms(t0, Clock::now()));
  }
  return Median(t);
}

}  // namespace

int main(int argc, char** argv) {
  sieve::bench::BenchFlags f(
      "core_bench",
      "usage: core_bench --cli PATH_TO_sieve --work DIR [--rows N] [--dim D] [--queries Q]\n"
      "         [--k K] [--reps R]\n",
      {"cli", "work", "rows", "dim", "queries", "k", "reps"});
  f.Parse(argc, argv);
  const std::string cli = f.Str("cli", ""), work = f.Str("work", "");
  const size_t rows = f.Uint("rows", 1000000), dim = f.Uint("dim", 128);
  const size_t nq = f.Uint("queries", 16), k = f.Uint("k", 10);
  const int reps = f.Int("reps", 5);
  if (cli.empty() || work.empty()) f.Die("--cli and --work are required");
  std::filesystem::remove_all(work);
  std::filesystem::create_directories(work);

  // Data: uniform vectors; cat uniform in [0, 1000) so that "cat < c" passes c/10 %.
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<float> x(rows * dim);
  for (auto& f : x) f = u(rng);
  std::vector<int> cat(rows);
  {
    std::ofstream attrs(work + "/attrs.jsonl");
    std::string line;
    const char* colors[] = {"red", "green", "blue", "black"};
    for (size_t i = 0; i < rows; ++i) {
      cat[i] = static_cast<int>(rng() % 1000);
      line = "{\"cat\": " + std::to_string(cat[i]) + ", \"price\": " +
             std::to_string((rng() % 100000) / 100.0) + ", \"color\": \"" + colors[rng() % 4] +
             "\"}\n";
      attrs << line;
    }
  }
  if (!sieve::io::WriteNpyMatrix(work + "/vectors.npy", x.data(), rows, dim).ok()) return 1;
  // The inputs are on disk before anything is timed: writing them back must not compete with
  // the ingest's own writes.
  sync();
  std::vector<float> q(nq * dim);
  for (auto& f : q) f = u(rng);
  std::printf("# Sieve core figures (CPU)\n\nrows=%zu dim=%zu queries=%zu k=%zu reps=%d (medians)\n\n",
              rows, dim, nq, k, reps);

  const double read_once = ReadOnceMs(x, reps);
  std::printf("read the %zu MB of vectors once: %.1f ms\n\n", rows * dim * 4 >> 20, read_once);

  // Ingest through the CLI.
  const std::string db_path = work + "/db";
  RunCli({cli, "create", db_path, "--collection", "b", "--dim", std::to_string(dim), "--attr",
          "cat:int", "--attr", "price:float", "--attr", "color:string"});
  auto t0 = Clock::now();
  int rc = RunCli({cli, "ingest", db_path, "--collection", "b", "--vectors", work + "/vectors.npy",
                   "--attributes", work + "/attrs.jsonl"});
  const double ingest_ms = Ms(t0, Clock::now());
  if (rc != 0) {
    std::fprintf(stderr, "ingest failed\n");
    return 1;
  }
  // What a user sees first: one `sieve query` process right after the ingest (open, load,
  // one query, exit), wall time.
  if (!sieve::io::WriteNpyMatrix(work + "/q1.npy", x.data(), 1, dim).ok()) return 1;
  t0 = Clock::now();
  rc = RunCli({cli, "query", db_path, "--collection", "b", "--queries", work + "/q1.npy", "--k",
               "1", "--filter", "cat = -1"});
  const double cli_first_query_ms = Ms(t0, Clock::now());
  if (rc != 0) return 1;
  faiss::IndexFlatL2 faiss_index(static_cast<int>(dim));
  t0 = Clock::now();
  faiss_index.add(static_cast<faiss::Index::idx_t>(rows), x.data());
  const double faiss_add_ms = Ms(t0, Clock::now());
  std::printf("| stage | Sieve | FAISS | read once |\n|---|---|---|---|\n");
  std::printf("| ingest (CLI, .npy + .jsonl, durable) | %.0f ms = %.0f k rows/s | add: %.0f ms (in memory only) | %.1f ms |\n",
              ingest_ms, rows / ingest_ms, faiss_add_ms, read_once);

  // Open + load.
  std::unique_ptr<sieve::DB> db;
  t0 = Clock::now();
  if (!sieve::DB::Open(sieve::Options(), db_path, &db).ok()) return 1;
  const double rocksdb_open_ms = Ms(t0, Clock::now());
  sieve::SearchRequest warm;
  warm.queries = q.data();
  warm.num_queries = 1;
  warm.dim = static_cast<uint32_t>(dim);
  warm.k = 1;
  warm.filter = "cat = -1";
  sieve::SearchResult wr;
  sieve::SearchOptions cpu;
  cpu.device = sieve::Device::kCpu;
  if (!db->Search("b", warm, cpu, &wr).ok()) return 1;
  const double open_ms = Ms(t0, Clock::now());
  double load_ms = 0;
  for (auto& [name, ms] : wr.explain.stage_ms) {
    if (name == "load") load_ms = ms;
  }
  std::printf("| first `sieve query` process after the ingest (open + load + query) | %.0f ms | - | %.1f ms |\n",
              cli_first_query_ms, read_once);
  std::printf("| open + load in this process (open %.0f ms, load %.0f ms) | %.0f ms | - | %.1f ms |\n",
              rocksdb_open_ms, load_ms, open_ms, read_once);

  // A 3-clause filter.
  std::vector<double> ct;
  for (int r = 0; r < reps; ++r) {
    sieve::SearchRequest fr = warm;
    fr.filter = "cat < 500 AND price BETWEEN 100.5 AND 700 AND color IN ('red', 'blue')";
    sieve::SearchResult res;
    if (!db->Search("b", fr, cpu, &res).ok()) return 1;
    for (auto& [name, ms] : res.explain.stage_ms) {
      if (name == "compile") ct.push_back(ms);
    }
  }
  std::printf("| compile `cat < 500 AND price BETWEEN 100.5 AND 700 AND color IN ('red', 'blue')` | %.2f ms | - | - |\n\n",
              Median(ct));

  std::printf("| passing | n_pass | Sieve path | Sieve ms | FAISS ms | same results | Sieve / read once |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (int c : {1, 10, 100, 500, 1000}) {
    sieve::SearchRequest req;
    req.queries = q.data();
    req.num_queries = nq;
    req.dim = static_cast<uint32_t>(dim);
    req.k = static_cast<int>(k);
    req.filter = c == 1000 ? "" : "cat < " + std::to_string(c);
    std::vector<double> st;
    sieve::SearchResult res;
    for (int r = 0; r < reps + 1; ++r) {
      auto a = Clock::now();
      if (!db->Search("b", req, cpu, &res).ok()) return 1;
      if (r > 0) st.push_back(Ms(a, Clock::now()));
    }
    std::vector<uint8_t> bitmap((rows + 7) / 8, 0);
    size_t n_pass = 0;
    for (size_t i = 0; i < rows; ++i) {
      if (cat[i] < c) {
        bitmap[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
        ++n_pass;
      }
    }
    faiss::IDSelectorBitmap sel(bitmap.size(), bitmap.data());
    faiss::SearchParameters params;
    params.sel = &sel;
    std::vector<float> dist(nq * k);
    std::vector<faiss::Index::idx_t> ids(nq * k);
    std::vector<double> ft;
    for (int r = 0; r < std::max(2, reps / 2) + 1; ++r) {
      auto a = Clock::now();
      faiss_index.search(static_cast<faiss::Index::idx_t>(nq), q.data(), static_cast<faiss::Index::idx_t>(k),
                         dist.data(), ids.data(), c == 1000 ? nullptr : &params);
      if (r > 0) ft.push_back(Ms(a, Clock::now()));
    }
    size_t same = 0, total = 0;
    for (size_t i = 0; i < nq; ++i) {
      for (size_t j = 0; j < k; ++j) {
        ++total;
        if (j < res.results[i].ids.size() && res.results[i].ids[j] == ids[i * k + j]) ++same;
      }
    }
    const double sm = Median(st);
    std::printf("| %.1f %% | %zu | %s | %.2f | %.1f | %zu/%zu ids | %.2f× |\n", c / 10.0, n_pass,
                res.explain.shards.empty() ? "-" : res.explain.shards[0].path.c_str(), sm,
                Median(ft), same, total, sm / read_once);
  }
  return 0;
}
