// Copyright 2026 The Sieve Authors.
//
// Fuzzes the server's HTTP API without sockets: each input is one request handed to the
// Router (over a real DB in a scratch directory, with a Batcher for queries), as the server
// does after Beast has parsed it. The input's first three lines are the method, the target and
// the Content-Type; the rest is the body. Invariants: the reply comes exactly once and soon,
// its status is a defined one, a JSON reply is valid JSON, and an internal failure (500) is a
// defect, since nothing a client sends may cause one.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <future>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sieve/db.h"
#include "tests/fuzz/fuzz_util.h"
#include "tools/server/batcher.h"
#include "tools/server/metrics.h"
#include "tools/server/router.h"

namespace {

constexpr uint64_t kBudget = uint64_t{64} << 20;
constexpr char kToken[] = "secret";

struct Fixture {
  std::unique_ptr<sieve::DB> db;
  std::unique_ptr<sieve::server::Metrics> metrics;
  std::unique_ptr<sieve::server::Batcher> batcher;
  std::unique_ptr<sieve::server::Router> router;
};

Fixture* MakeFixture() {
  auto* f = new Fixture;
  sieve::Options options;
  options.memory_budget_bytes = kBudget;
  sieve::Status s = sieve::DB::Open(options, sieve::fuzz::ScratchDir() + "/db", &f->db);
  if (!s.ok()) sieve::fuzz::Fail("open: " + s.ToString());
  sieve::CollectionSpec spec;
  spec.name = "items";
  spec.dim = 4;
  spec.attributes = {{"cat", sieve::AttrType::kInt}, {"tag", sieve::AttrType::kString}};
  s = f->db->CreateCollection(spec);
  if (!s.ok()) sieve::fuzz::Fail("create: " + s.ToString());
  constexpr size_t kRows = 100;
  std::vector<float> vectors(kRows * spec.dim);
  std::vector<std::vector<sieve::Value>> attrs(kRows);
  for (size_t i = 0; i < kRows; ++i) {
    for (size_t j = 0; j < spec.dim; ++j) vectors[i * spec.dim + j] = float((i * 7 + j * 3) % 11) - 5;
    attrs[i] = {sieve::Value(int64_t(i % 5)), sieve::Value(std::string(i % 2 ? "x" : "y"))};
  }
  sieve::RowBatch batch;
  batch.num_rows = kRows;
  batch.dim = spec.dim;
  batch.vectors = vectors.data();
  batch.attributes = attrs.data();
  sieve::IngestResult result;
  s = f->db->Ingest("items", batch, sieve::IngestOptions(), &result);
  if (!s.ok()) sieve::fuzz::Fail("ingest: " + s.ToString());
  f->metrics = std::make_unique<sieve::server::Metrics>();
  sieve::server::Batcher::Options bo;
  bo.window = std::chrono::microseconds(0);
  bo.workers = 1;
  f->batcher = std::make_unique<sieve::server::Batcher>(f->db.get(), f->metrics.get(), bo);
  sieve::server::Router::Options ro;
  ro.token = kToken;
  ro.max_request_queries = 64;
  ro.memory_budget_bytes = kBudget;
  f->router = std::make_unique<sieve::server::Router>(f->db.get(), f->batcher.get(),
                                                      f->metrics.get(), ro);
  return f;
}

// The next line of `in` from `*pos` (without its '\n').
std::string Line(const std::string& in, size_t* pos) {
  size_t end = in.find('\n', *pos);
  if (end == std::string::npos) end = in.size();
  std::string line = in.substr(*pos, end - *pos);
  *pos = end < in.size() ? end + 1 : end;
  return line;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using sieve::fuzz::Fail;
  // Never destroyed: the batcher's threads must outlive every input, and exit() ends them.
  static Fixture* const fixture = MakeFixture();
  static std::shared_ptr<std::atomic<int>> previous_calls;
  if (previous_calls != nullptr && previous_calls->load() != 1) Fail("more than one reply");
  const std::string in(reinterpret_cast<const char*>(data), size);
  size_t pos = 0;
  sieve::server::HttpRequest req;
  req.method = Line(in, &pos);
  req.target = Line(in, &pos);
  req.content_type = Line(in, &pos);
  // Most inputs carry the token, so that the fuzzer reaches past the check; some do not.
  if (req.method.size() % 8 != 7) req.authorization = std::string("Bearer ") + kToken;
  req.body = in.substr(pos);

  auto calls = std::make_shared<std::atomic<int>>(0);
  previous_calls = calls;
  auto promise = std::make_shared<std::promise<sieve::server::HttpResponse>>();
  std::future<sieve::server::HttpResponse> future = promise->get_future();
  fixture->router->Handle(req, [calls, promise](sieve::server::HttpResponse r) {
    if (calls->fetch_add(1) == 0) promise->set_value(std::move(r));
  });
  if (future.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
    Fail("no reply within 20 s");
  }
  const sieve::server::HttpResponse r = future.get();
  // A reply on this thread has come before Handle returned; one from the batcher thread comes
  // before the next input's, which this check then sees.
  if (calls->load() != 1) Fail("more than one reply");
  static const int kStatuses[] = {200, 201, 400, 401, 404, 405, 409, 413, 415, 503};
  bool known = false;
  for (int st : kStatuses) known = known || r.status == st;
  if (!known) Fail("status " + std::to_string(r.status) + ": " + r.body);
  if (r.status == 405 && r.allow.empty()) Fail("405 without an Allow header");
  if (r.content_type == "application/json" && !nlohmann::json::accept(r.body)) {
    Fail("a JSON reply that is not JSON: " + r.body);
  }
  return 0;
}
