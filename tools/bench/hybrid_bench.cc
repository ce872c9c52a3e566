// Copyright 2026 The Sieve Authors.
//
// hybrid_bench: hybrid search (issue 34 item 5: BM25 + vectors, fused) beside running its two
// searches separately, through the C++ API. Each query is one request of one vector and one
// text, k = --k, each side's depth --depth, reciprocal rank fusion (the default fusion), under
// each filter of the corpus; per device of --devices, per filter:
//   hybrid      one Search with the vector and the text: its latency, and the medians of its
//               EXPLAIN stage times "text", "vector" and "fusion"
//   separately  a text-only Search (k = depth), a vector-only Search (k = depth) and their
//               fusion here, one after the other: each one's latency and the sum
// Every hybrid answer is checked against the fusion of the two separate lists (ids and fused
// scores): the "differ" column counts the queries where they are not the same (0 expected).
//
// Corpora:
//   zipf (default)  --docs documents of the synthetic Zipfian law of tools/bench/text_bench.py
//                   (vocabulary --vocab words "wa", "wb", …, rank r drawn with weight r^-s,
//                   lengths lognormal around 12 words), here from C++'s generator: the same law,
//                   not the same draws. Analyzer "simple". Random normal --dim vectors (--dtype),
//                   cosine. Attributes: body (text), cat (int, uniform 0..99). Filters: none,
//                   cat < 10 (10 %), cat = 7 (1 %). Queries: 1 to 4 words, each from a random
//                   document or a random word, and a random vector.
//   DIR             the output of tools/wordnet.py (wordnet.jsonl, wordnet.npy, queries.txt,
//                   queries.npy): WordNet's glosses with their sentence vectors, analyzer
//                   "english", cosine. Filters: none, pos = 'noun', lexname = 'noun.animal'.
//                   Queries: queries.txt with queries.npy's vectors, cycled to --queries.
// Ingest (documents/s) and the first search's load go to stderr; the table to stdout.
// Usage: hybrid_bench --work DIR [--corpus zipf|DIR] [--docs 1000000] [--vocab 200000]
//          [--zipf-s 1.07] [--dim 384] [--dtype f16|f32] [--queries 200] [--warmup 20]
//          [--k 10] [--depth 100] [--devices auto] [--shards 1] [--seed 34]

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "sieve/db.h"
#include "tools/bench/bench_flags.h"
#include "tools/io/attributes_reader.h"
#include "tools/io/npy.h"

namespace {

using Clock = std::chrono::steady_clock;

double Ms(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

void Check(const sieve::Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "hybrid_bench: %s: %s\n", what, s.ToString().c_str());
    std::exit(1);
  }
}

// What a benchmark run searches: the collection is made from it, the queries pair a text with
// a vector.
struct Corpus {
  sieve::CollectionSpec spec;
  std::vector<float> vectors;                    // docs × dim
  std::vector<std::vector<sieve::Value>> attrs;  // docs, in spec.attributes order
  std::vector<std::pair<std::string, std::string>> filters;  // (label, filter)
  std::vector<std::string> query_texts;
  std::vector<float> query_vectors;  // queries × dim
  std::string text_field;
};

// "wa", "wb", …, "wz", "wba", …: the word of rank r >= 1 (text_bench.py's _word).
std::string Word(uint64_t r) {
  std::string s;
  do {
    s.insert(s.begin(), static_cast<char>('a' + r % 26));
    r /= 26;
  } while (r != 0);
  return "w" + s;
}

std::vector<float> NormalVectors(size_t n, size_t dim, uint64_t seed) {
  std::vector<float> v(n * dim);
  // Drawn in blocks of rows, each from its own seed, on every core (the draw dominates a large
  // corpus's set-up); the same rows whatever the core count.
  constexpr size_t kBlock = 65536;
  const size_t blocks = (n + kBlock - 1) / kBlock;
  const size_t threads = std::max<size_t>(1, std::min<size_t>(std::thread::hardware_concurrency(),
                                                              blocks));
  std::vector<std::thread> pool;
  for (size_t t = 0; t < threads; ++t) {
    pool.emplace_back([&v, t, threads, blocks, n, dim, seed] {
      for (size_t b = t; b < blocks; b += threads) {
        std::mt19937_64 rng(seed * 1000003 + b);
        std::normal_distribution<float> g;
        const size_t end = std::min(n, (b + 1) * kBlock) * dim;
        for (size_t i = b * kBlock * dim; i < end; ++i) v[i] = g(rng);
      }
    });
  }
  for (std::thread& th : pool) th.join();
  return v;
}

Corpus ZipfCorpus(size_t docs, uint64_t vocab, double s, uint32_t dim, sieve::DType dtype,
                  size_t queries, uint64_t seed) {
  Corpus c;
  c.spec.name = "h";
  c.spec.dim = dim;
  c.spec.metric = sieve::Metric::kCosine;
  c.spec.dtype = dtype;
  c.spec.attributes = {{"body", sieve::AttrType::kText, "simple"},
                       {"cat", sieve::AttrType::kInt, ""}};
  c.text_field = "body";
  c.filters = {{"none", ""}, {"cat < 10", "cat < 10"}, {"cat = 7", "cat = 7"}};
  std::vector<double> cdf(vocab);
  double sum = 0;
  for (uint64_t r = 0; r < vocab; ++r) cdf[r] = sum += std::pow(static_cast<double>(r + 1), -s);
  for (double& x : cdf) x /= sum;
  std::vector<std::string> words(vocab);
  for (uint64_t r = 0; r < vocab; ++r) words[r] = Word(r + 1);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::lognormal_distribution<double> len(std::log(12.0), 0.6);
  auto draw_word = [&]() -> const std::string& {
    const size_t r = std::lower_bound(cdf.begin(), cdf.end(), u(rng)) - cdf.begin();
    return words[std::min<size_t>(r, vocab - 1)];
  };
  std::vector<std::vector<uint32_t>> doc_words(docs);  // for the queries' words
  c.attrs.resize(docs);
  for (size_t d = 0; d < docs; ++d) {
    const int n = static_cast<int>(std::clamp(std::nearbyint(len(rng)), 1.0, 200.0));
    std::string text;
    for (int i = 0; i < n; ++i) {
      const std::string& w = draw_word();
      if (i > 0) text += ' ';
      text += w;
      if (doc_words[d].size() < 8) doc_words[d].push_back(static_cast<uint32_t>(&w - &words[0]));
    }
    c.attrs[d] = {sieve::Value(std::move(text)), sieve::Value(static_cast<int64_t>(rng() % 100))};
  }
  for (size_t q = 0; q < queries; ++q) {
    const int n = 1 + static_cast<int>(rng() % 4);
    std::string text;
    for (int i = 0; i < n; ++i) {
      const std::vector<uint32_t>& dw = doc_words[rng() % docs];
      // Half the words from a random document (common words, as people type), half any word of
      // the vocabulary's first tenth (rarer words that still occur).
      const std::string& w = (rng() & 1) != 0 && !dw.empty()
                                 ? words[dw[rng() % dw.size()]]
                                 : words[rng() % std::max<uint64_t>(1, vocab / 10)];
      if (i > 0) text += ' ';
      text += w;
    }
    c.query_texts.push_back(std::move(text));
  }
  c.vectors = NormalVectors(docs, dim, seed + 1);
  c.query_vectors = NormalVectors(queries, dim, seed + 2);
  return c;
}

Corpus WordNetCorpus(const std::string& dir, size_t queries) {
  Corpus c;
  sieve::io::NpyMatrix vectors, qv;
  Check(sieve::io::ReadNpyMatrix(dir + "/wordnet.npy", &vectors), "wordnet.npy");
  Check(sieve::io::ReadNpyMatrix(dir + "/queries.npy", &qv), "queries.npy");
  c.spec.name = "h";
  c.spec.dim = static_cast<uint32_t>(vectors.cols);
  c.spec.metric = sieve::Metric::kCosine;
  c.spec.attributes = {{"gloss", sieve::AttrType::kText, "english"},
                       {"words", sieve::AttrType::kTags, ""},
                       {"pos", sieve::AttrType::kString, ""},
                       {"lexname", sieve::AttrType::kString, ""},
                       {"offset", sieve::AttrType::kInt, ""},
                       {"word_count", sieve::AttrType::kInt, ""},
                       {"pointer_count", sieve::AttrType::kInt, ""}};
  c.text_field = "gloss";
  c.filters = {{"none", ""},
               {"pos = 'noun'", "pos = 'noun'"},
               {"lexname = 'noun.animal'", "lexname = 'noun.animal'"}};
  Check(sieve::io::ReadAttributes(dir + "/wordnet.jsonl", c.spec.attributes, vectors.rows,
                                  &c.attrs),
        "wordnet.jsonl");
  c.vectors = std::move(vectors.data);
  std::ifstream in(dir + "/queries.txt");
  std::vector<std::string> texts;
  for (std::string line; std::getline(in, line);) texts.push_back(line);
  if (texts.empty() || texts.size() != qv.rows || qv.cols != c.spec.dim) {
    Check(sieve::Status::InvalidArgument("queries.txt and queries.npy of " + dir +
                                         " do not match (or are empty)"),
          "queries");
  }
  for (size_t q = 0; q < queries; ++q) {
    const size_t i = q % texts.size();
    c.query_texts.push_back(texts[i]);
    c.query_vectors.insert(c.query_vectors.end(), qv.data.begin() + i * qv.cols,
                           qv.data.begin() + (i + 1) * qv.cols);
  }
  return c;
}

// Reciprocal rank fusion of one query's two lists as sieve::Fusion's defaults define it: a row
// scores 1 / (60 + rank) per list it is in (rank 1 its best); larger first, then the smaller id.
std::vector<std::pair<double, int64_t>> Rrf(const std::vector<int64_t>& vector_ids,
                                            const std::vector<int64_t>& text_ids, size_t k) {
  std::map<int64_t, double> score;
  for (size_t i = 0; i < vector_ids.size(); ++i) score[vector_ids[i]] += 1.0 / (60.0 + i + 1);
  for (size_t i = 0; i < text_ids.size(); ++i) score[text_ids[i]] += 1.0 / (60.0 + i + 1);
  std::vector<std::pair<double, int64_t>> out;
  for (const auto& [id, s] : score) out.push_back({s, id});
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  if (out.size() > k) out.resize(k);
  return out;
}

double StageMs(const sieve::Explain& e, const std::string& stage) {
  for (const auto& [name, ms] : e.stage_ms) {
    if (name == stage) return ms;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  sieve::bench::BenchFlags f(
      "hybrid_bench",
      "usage: hybrid_bench --work DIR [--corpus zipf|DIR] [--docs N] [--vocab V] [--zipf-s S]\n"
      "         [--dim D] [--dtype f16|f32] [--queries Q] [--warmup W] [--k K] [--depth D]\n"
      "         [--devices auto,cpu,gpu] [--shards S] [--seed N]\n",
      {"work", "corpus", "docs", "vocab", "zipf-s", "dim", "dtype", "queries", "warmup", "k",
       "depth", "devices", "shards", "seed"});
  f.Parse(argc, argv);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each row lands even if a time limit ends the run
  const std::string work = f.Str("work", "");
  if (work.empty()) f.Die("--work DIR is required");
  const std::string corpus_name = f.Str("corpus", "zipf");
  const size_t nq = f.Uint("queries", 200);
  const size_t warmup = f.Uint("warmup", 20);
  const int k = static_cast<int>(f.Uint("k", 10));
  const int depth = static_cast<int>(f.Uint("depth", 100));
  if (nq == 0 || k < 1 || depth < k) f.Die("--queries >= 1 and 1 <= --k <= --depth");
  const std::string dtype_name = f.Str("dtype", "f16");
  if (dtype_name != "f16" && dtype_name != "f32") f.Die("--dtype is f16 or f32");
  const sieve::DType dtype =
      dtype_name == "f16" ? sieve::DType::kFloat16 : sieve::DType::kFloat32;
  std::vector<sieve::Device> devices;
  for (const std::string& name : f.List("devices", {"auto"})) {
    sieve::Device d;
    Check(sieve::ParseDevice(name, &d), "--devices");
    devices.push_back(d);
  }

  auto t_gen = Clock::now();
  Corpus c = corpus_name == "zipf"
                 ? ZipfCorpus(f.Uint("docs", 1000000), f.Uint("vocab", 200000),
                              f.Double("zipf-s", 1.07), static_cast<uint32_t>(f.Uint("dim", 384)),
                              dtype, nq + warmup, f.Uint("seed", 34))
                 : WordNetCorpus(corpus_name, nq + warmup);
  c.spec.shards = static_cast<uint32_t>(f.Uint("shards", 1));
  const size_t docs = c.attrs.size();
  const uint32_t dim = c.spec.dim;
  std::fprintf(stderr, "hybrid_bench: %zu documents x %u made in %.0f ms\n", docs, dim, Ms(t_gen));

  std::filesystem::remove_all(work);
  std::filesystem::create_directories(work);
  std::unique_ptr<sieve::DB> db;
  Check(sieve::DB::Open(sieve::Options(), work + "/db", &db), "open");
  Check(db->CreateCollection(c.spec), "create");
  const auto t_ingest = Clock::now();
  constexpr size_t kBatch = 100000;
  for (size_t first = 0; first < docs; first += kBatch) {
    const size_t n = std::min(kBatch, docs - first);
    std::vector<int64_t> ids(n);
    for (size_t i = 0; i < n; ++i) ids[i] = static_cast<int64_t>(first + i);
    sieve::RowBatch b;
    b.num_rows = n;
    b.dim = dim;
    b.vectors = c.vectors.data() + first * dim;
    b.ids = ids.data();
    b.attributes = c.attrs.data() + first;
    sieve::IngestResult r;
    Check(db->Ingest(c.spec.name, b, sieve::IngestOptions(), &r), "ingest");
  }
  const double ingest_ms = Ms(t_ingest);
  std::fprintf(stderr, "hybrid_bench: ingest %.0f ms (%.0f documents/s, vectors and text)\n",
               ingest_ms, static_cast<double>(docs) / (ingest_ms / 1000));

  std::printf("# hybrid_bench: %s, %zu documents x %u %s, %zu queries (1 vector + 1 text each, "
              "after %zu untimed), k = %d, depth = %d, rrf; ms per query\n\n",
              corpus_name == "zipf" ? "zipf" : "wordnet", docs, dim,
              sieve::DTypeName(c.spec.dtype), nq, warmup, k, depth);
  std::printf("| device | filter | passing | hybrid p50 | hybrid p99 | its text | its vector | "
              "its fusion | vector path | text-only p50 | vector-only p50 | separately p50 | "
              "separately p99 | hybrid / separately | differ |\n");
  std::printf("|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|\n");
  for (sieve::Device device : devices) {
    sieve::SearchOptions options;
    options.device = device;
    {
      // The first search reads the rows into memory (and onto the device): timed apart.
      sieve::SearchRequest one;
      one.queries = c.query_vectors.data();
      one.num_queries = 1;
      one.dim = dim;
      one.k = 1;
      sieve::SearchResult res;
      const auto t0 = Clock::now();
      Check(db->Search(c.spec.name, one, options, &res), "first search");
      std::fprintf(stderr, "hybrid_bench: first search on %s (load) %.0f ms\n",
                   res.explain.device.c_str(), Ms(t0));
    }
    for (const auto& [label, filter] : c.filters) {
      std::vector<double> hybrid_ms, text_stage, vector_stage, fusion_stage, text_ms, vector_ms,
          separate_ms;
      size_t differ = 0;
      uint64_t passing = 0;
      std::map<std::string, int> paths;
      std::string device_name;
      for (size_t q = 0; q < nq + warmup; ++q) {
        const bool timed = q >= warmup;
        sieve::SearchRequest req;
        req.queries = c.query_vectors.data() + q * dim;
        req.num_queries = 1;
        req.dim = dim;
        req.k = k;
        req.filter = filter;
        req.text_field = c.text_field;
        req.text = c.query_texts[q];
        req.fusion.depth = depth;
        sieve::SearchResult hybrid;
        auto t0 = Clock::now();
        Check(db->Search(c.spec.name, req, options, &hybrid), "hybrid search");
        const double h = Ms(t0);

        // Separately: the text side, the vector side, and their fusion here.
        sieve::SearchRequest text_req;
        text_req.k = depth;
        text_req.filter = filter;
        text_req.text_field = c.text_field;
        text_req.text = c.query_texts[q];
        sieve::SearchRequest vector_req;
        vector_req.queries = req.queries;
        vector_req.num_queries = 1;
        vector_req.dim = dim;
        vector_req.k = depth;
        vector_req.filter = filter;
        sieve::SearchResult text_res, vector_res;
        t0 = Clock::now();
        Check(db->Search(c.spec.name, text_req, options, &text_res), "text search");
        const double t = Ms(t0);
        const auto t1 = Clock::now();
        Check(db->Search(c.spec.name, vector_req, options, &vector_res), "vector search");
        const double v = Ms(t1);
        const std::vector<std::pair<double, int64_t>> fused =
            Rrf(vector_res.results[0].ids, text_res.results[0].ids, static_cast<size_t>(k));
        const double s = Ms(t0);

        const sieve::Neighbors& got = hybrid.results[0];
        bool same = got.ids.size() == fused.size() && got.scores.size() == fused.size();
        for (size_t i = 0; same && i < fused.size(); ++i) {
          same = got.ids[i] == fused[i].second &&
                 std::abs(got.scores[i] - fused[i].first) <= 1e-12 * fused[i].first;
        }
        if (!timed) continue;
        differ += !same;
        hybrid_ms.push_back(h);
        text_ms.push_back(t);
        vector_ms.push_back(v);
        separate_ms.push_back(s);
        text_stage.push_back(StageMs(hybrid.explain, "text"));
        vector_stage.push_back(StageMs(hybrid.explain, "vector"));
        fusion_stage.push_back(StageMs(hybrid.explain, "fusion"));
        device_name = hybrid.explain.device;
        passing = hybrid.explain.text.passing_rows;
        for (const sieve::ShardPlan& sp : hybrid.explain.shards) ++paths[sp.path];
      }
      std::string path_text;
      for (const auto& [path, n] : paths) {
        path_text += (path_text.empty() ? "" : ", ") + path + " " + std::to_string(n);
      }
      const double hp50 = Quantile(hybrid_ms, 0.5), sp50 = Quantile(separate_ms, 0.5);
      std::printf("| %s | %s | %llu | %.3f | %.3f | %.3f | %.3f | %.4f | %s | %.3f | %.3f | %.3f | "
                  "%.3f | %.2f | %zu of %zu |\n",
                  device_name.c_str(), label.c_str(), static_cast<unsigned long long>(passing),
                  hp50, Quantile(hybrid_ms, 0.99), Quantile(text_stage, 0.5),
                  Quantile(vector_stage, 0.5), Quantile(fusion_stage, 0.5), path_text.c_str(),
                  Quantile(text_ms, 0.5), Quantile(vector_ms, 0.5), sp50,
                  Quantile(separate_ms, 0.99), sp50 > 0 ? hp50 / sp50 : 0.0, differ, nq);
    }
  }
  return 0;
}
