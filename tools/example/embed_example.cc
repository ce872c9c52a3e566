// Copyright 2026 The Sieve Authors.
//
// Embedding Sieve: open a database, create a collection, ingest rows with attributes, and run
// a filtered search, and check that every hit passes the filter. Usage: embed_example DB_PATH
// (a path where no database exists yet). Exits 0 when the search gave what it must.

#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "sieve/db.h"
#include "sieve/version.h"

int main(int argc, char** argv) {
  const char kUsage[] =
      "usage: embed_example DB_PATH\n"
      "  creates a database at DB_PATH (a path where none exists yet), ingests 1000 rows and\n"
      "  checks a filtered search; exits 0 when the search gave what it must\n";
  if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  // A leading dash is an option this program does not have, never a path to create.
  if (argc != 2 || argv[1][0] == '-') {
    if (argc == 2) std::fprintf(stderr, "embed_example: unknown option '%s'\n", argv[1]);
    std::fputs(kUsage, stderr);
    return 2;
  }
  std::printf("sieve %s\n", SIEVE_VERSION);
  std::unique_ptr<sieve::DB> db;
  sieve::Status s = sieve::DB::Open(sieve::Options(), argv[1], &db);
  if (!s.ok()) {
    std::fprintf(stderr, "open: %s\n", s.ToString().c_str());
    return 1;
  }

  sieve::CollectionSpec spec;
  spec.name = "items";
  spec.dim = 8;
  spec.metric = sieve::Metric::kCosine;
  spec.attributes = {{"price", sieve::AttrType::kFloat}, {"color", sieve::AttrType::kString}};
  s = db->CreateCollection(spec);
  if (!s.ok() && !s.IsAlreadyExists()) {
    std::fprintf(stderr, "create: %s\n", s.ToString().c_str());
    return 1;
  }

  const size_t n = 1000;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  std::vector<float> vectors(n * spec.dim);
  for (float& x : vectors) x = normal(rng);
  std::vector<std::vector<sieve::Value>> attributes(n);
  const char* colors[] = {"red", "green", "blue"};
  for (size_t i = 0; i < n; ++i) {
    attributes[i] = {sieve::Value(double(i % 100)), sieve::Value(std::string(colors[i % 3]))};
  }
  sieve::RowBatch batch;
  batch.num_rows = n;
  batch.dim = spec.dim;
  batch.vectors = vectors.data();
  batch.attributes = attributes.data();
  sieve::IngestResult ingested;
  s = db->Ingest("items", batch, sieve::IngestOptions(), &ingested);
  if (!s.ok()) {
    std::fprintf(stderr, "ingest: %s\n", s.ToString().c_str());
    return 1;
  }

  sieve::SearchRequest request;
  request.queries = vectors.data();  // the first two rows as queries
  request.num_queries = 2;
  request.dim = spec.dim;
  request.k = 5;
  request.filter = "color = 'red' AND price < 50";
  sieve::SearchResult result;
  s = db->Search("items", request, sieve::SearchOptions(), &result);
  if (!s.ok()) {
    std::fprintf(stderr, "search: %s\n", s.ToString().c_str());
    return 1;
  }
  // Ids were assigned in ingest order from 0 (the collection was empty), so id i is row i.
  bool ok = result.results.size() == request.num_queries;
  for (size_t q = 0; q < result.results.size(); ++q) {
    std::printf("query %zu:", q);
    const sieve::Neighbors& hits = result.results[q];
    ok = ok && hits.ids.size() == static_cast<size_t>(request.k);
    for (size_t i = 0; i < hits.ids.size(); ++i) {
      const long long id = static_cast<long long>(hits.ids[i]);
      std::printf(" %lld (%.4f)", id, hits.distances[i]);
      ok = ok && id >= 0 && static_cast<size_t>(id) < n && id % 3 == 0 && id % 100 < 50;
      if (i > 0) ok = ok && hits.distances[i - 1] <= hits.distances[i];
    }
    std::printf("\n");
  }
  std::printf("plan: %s\n", result.explain.ToJson().c_str());
  if (!ok) {
    std::fprintf(stderr, "embed_example: the search returned rows that do not pass the filter, "
                         "or not k of them\n");
    return 1;
  }
  return 0;
}
