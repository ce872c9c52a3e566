// Copyright 2026 The Sieve Authors.
//
// The CLI and the server as child processes under an address-space limit (setrlimit
// RLIMIT_AS), given a search whose answer cannot fit: 3000 queries with k = 1,000,000 over
// 40,000 rows (its results and candidates alone take over 3 GB). The CLI must exit 1 with one
// line naming the memory budget, never die from a signal or an uncaught exception; the server
// must answer 413 or 503 and then serve the next request exactly. Both must still answer a
// search that fits under the same limit, equal to a float64 oracle.
//
// Not run under AddressSanitizer (CTest label no_asan): ASan reserves terabytes of address
// space for its shadow memory, which no RLIMIT_AS allows.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "sieve/db.h"
#include "tests/server/http_client.h"
#include "tests/testutil.h"
#include "tools/io/npy.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SIEVE_UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define SIEVE_UNDER_ASAN 1
#endif

namespace sieve {
namespace {

using json = nlohmann::json;

constexpr uint32_t kDim = 8;
// Enough rows that a search allowed past the limit (--max-memory 100G) fails on the engine's
// own candidate lists (3000 queries x 200,000 rows x 24 bytes, far over 4 GiB) before any BLAS
// call: OpenBLAS retries a failed buffer mmap for ever instead of failing.
constexpr size_t kRows = 200000;
constexpr size_t kBigQueries = 3000;
constexpr size_t kSmallQueries = 3;
constexpr int kSmallK = 10;
constexpr rlim_t kAddressSpace = rlim_t{4} << 30;

using test::CliPath;
using test::ReadFile;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// In the child: the limit, then the CLI with `args`. Only async-signal-safe calls.
[[noreturn]] void ExecLimited(const std::vector<std::string>& args) {
  rlimit limit{kAddressSpace, kAddressSpace};
  if (setrlimit(RLIMIT_AS, &limit) != 0) _exit(126);
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(CliPath()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execv(CliPath(), argv.data());
  _exit(127);
}

struct ChildExit {
  bool exited = false;  // false: killed by a signal
  int code = -1;        // exit code, or the signal
};

ChildExit Wait(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  ChildExit e;
  e.exited = WIFEXITED(status);
  e.code = e.exited ? WEXITSTATUS(status) : WTERMSIG(status);
  return e;
}

// Kills the child when a test ends early.
struct ChildGuard {
  pid_t pid = -1;
  ~ChildGuard() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
};

ChildExit RunLimited(const std::vector<std::string>& args, const std::string& out_path,
                     const std::string& err_path) {
  pid_t pid = fork();
  if (pid == 0) {
    dup2(::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), 1);
    dup2(::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), 2);
    ExecLimited(args);
  }
  return Wait(pid);
}

// The float64 oracle: the ids of the k nearest rows (l2), ties broken by id.
std::vector<int64_t> NearestIds(const std::vector<float>& rows, const float* q, int k) {
  std::vector<std::pair<double, int64_t>> d(kRows);
  for (size_t i = 0; i < kRows; ++i) {
    double s = 0;
    for (size_t j = 0; j < kDim; ++j) {
      const double diff = double(rows[i * kDim + j]) - double(q[j]);
      s += diff * diff;
    }
    d[i] = {s, static_cast<int64_t>(i)};
  }
  std::partial_sort(d.begin(), d.begin() + k, d.end());
  std::vector<int64_t> ids;
  for (int i = 0; i < k; ++i) ids.push_back(d[i].second);
  return ids;
}

class MemoryLimitTest : public ::testing::Test {
 protected:
  void SetUp() override {
#ifdef SIEVE_UNDER_ASAN
    GTEST_SKIP() << "RLIMIT_AS cannot hold AddressSanitizer's shadow memory";
#endif
    rows_ = test::RandomVectors(kRows, kDim, 5);
    {
      std::unique_ptr<DB> db;
      ASSERT_TRUE(DB::Open(Options(), dir_.Join("db"), &db).ok());
      CollectionSpec spec;
      spec.name = "c";
      spec.dim = kDim;
      ASSERT_TRUE(db->CreateCollection(spec).ok());
      RowBatch batch;
      batch.num_rows = kRows;
      batch.dim = kDim;
      batch.vectors = rows_.data();
      IngestResult result;
      ASSERT_TRUE(db->Ingest("c", batch, IngestOptions(), &result).ok());
    }
    big_ = test::RandomVectors(kBigQueries, kDim, 6);
    small_ = test::RandomVectors(kSmallQueries, kDim, 7);
    ASSERT_TRUE(io::WriteNpyMatrix(dir_.Join("big.npy"), big_.data(), kBigQueries, kDim).ok());
    ASSERT_TRUE(
        io::WriteNpyMatrix(dir_.Join("small.npy"), small_.data(), kSmallQueries, kDim).ok());
  }

  std::string QueryBody(const std::vector<float>& q, size_t n, int k) {
    json vectors = json::array();
    for (size_t i = 0; i < n; ++i) {
      vectors.push_back(std::vector<float>(&q[i * kDim], &q[(i + 1) * kDim]));
    }
    return json{{"vectors", vectors}, {"k", k}}.dump();
  }

  // Starts `sieve serve --max-memory budget` under the limit, sends the search that cannot fit
  // (expects `expected_status`), then one that fits (expects the oracle), then stops it.
  void ServeAndRefuse(const std::string& budget, int expected_status);

  test::ScratchDir dir_;
  std::vector<float> rows_, big_, small_;
};

TEST_F(MemoryLimitTest, CliRefusesWithOneLineAndAnswersWhatFits) {
  ChildExit e = RunLimited({"query", dir_.Join("db"), "--collection", "c", "--queries",
                            dir_.Join("big.npy"), "--k", "1000000"},
                           dir_.Join("big.out"), dir_.Join("big.err"));
  const std::string err = ReadFile(dir_.Join("big.err"));
  ASSERT_TRUE(e.exited) << "killed by signal " << e.code << "; stderr: " << err;
  EXPECT_EQ(e.code, 1) << err;
  const std::vector<std::string> lines = Lines(err);
  ASSERT_EQ(lines.size(), 1u) << err;
  EXPECT_EQ(lines[0].rfind("sieve query: ", 0), 0u) << err;
  EXPECT_NE(lines[0].find("memory budget"), std::string::npos) << err;
  EXPECT_EQ(ReadFile(dir_.Join("big.out")), "") << "no partial answer";

  // A budget above the limit (the operator's mistake): the allocation itself fails, and that is
  // reported the same way.
  e = RunLimited({"query", dir_.Join("db"), "--collection", "c", "--queries", dir_.Join("big.npy"),
                  "--k", "1000000", "--max-memory", "100G"},
                 dir_.Join("big.out"), dir_.Join("big.err"));
  const std::string err2 = ReadFile(dir_.Join("big.err"));
  ASSERT_TRUE(e.exited) << "killed by signal " << e.code << "; stderr: " << err2;
  EXPECT_EQ(e.code, 1) << err2;
  ASSERT_EQ(Lines(err2).size(), 1u) << err2;
  EXPECT_EQ(err2.rfind("sieve query: ", 0), 0u) << err2;
  EXPECT_NE(err2.find("memory"), std::string::npos) << err2;
  EXPECT_EQ(ReadFile(dir_.Join("big.out")), "") << "no partial answer";

  e = RunLimited({"query", dir_.Join("db"), "--collection", "c", "--queries",
                  dir_.Join("small.npy"), "--k", std::to_string(kSmallK)},
                 dir_.Join("small.out"), dir_.Join("small.err"));
  ASSERT_TRUE(e.exited && e.code == 0) << ReadFile(dir_.Join("small.err"));
  const std::vector<std::string> out = Lines(ReadFile(dir_.Join("small.out")));
  ASSERT_EQ(out.size(), kSmallQueries);
  for (size_t q = 0; q < kSmallQueries; ++q) {
    json j = json::parse(out[q]);
    EXPECT_EQ(j["ids"].get<std::vector<int64_t>>(),
              NearestIds(rows_, &small_[q * kDim], kSmallK))
        << "query " << q;
  }
}

// With the default budget (half the limit) the search is refused before it allocates: 413. With
// a budget above the limit the allocation fails: 503. Either way the next request is served.
TEST_F(MemoryLimitTest, ServerRefusesAndKeepsServing) {
  for (const char* budget : {"auto", "100G"}) {
    SCOPED_TRACE(std::string("--max-memory ") + budget);
    ServeAndRefuse(budget, std::string(budget) == "auto" ? 413 : 503);
  }
}

void MemoryLimitTest::ServeAndRefuse(const std::string& budget, int expected_status) {
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(p[1], 1);
    close(p[0]);
    dup2(::open(dir_.Join("serve.err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), 2);
    ExecLimited({"serve", dir_.Join("db"), "--listen", "127.0.0.1:0", "--max-memory", budget});
  }
  ChildGuard guard{pid};
  close(p[1]);
  std::string line;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (line.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    pollfd pfd{p[0], POLLIN, 0};
    if (poll(&pfd, 1, 100) <= 0) continue;
    char buf[256];
    ssize_t n = read(p[0], buf, sizeof(buf));
    if (n <= 0) break;
    line.append(buf, static_cast<size_t>(n));
  }
  close(p[0]);
  json listening = json::parse(line, nullptr, false);
  if (!listening.is_object() || !listening.contains("listening")) {
    FAIL() << "serve did not start: " << line << ReadFile(dir_.Join("serve.err"));
  }
  const std::string addr = listening["listening"];
  const auto port = static_cast<uint16_t>(std::stoi(addr.substr(addr.rfind(':') + 1)));

  // With a budget above the limit the search runs until an allocation fails, which on a loaded
  // machine takes longer than the client's default 30 s.
  test::HttpConnection slow(port, /*timeout_ms=*/300000);
  test::HttpReply r =
      slow.Request("POST", "/collections/c/query", QueryBody(big_, kBigQueries, 1000000));
  EXPECT_EQ(r.status, expected_status) << r.body.substr(0, 300);
  json err = json::parse(r.body, nullptr, false);
  EXPECT_TRUE(err.is_object() && err.contains("error")) << r.body.substr(0, 300);

  r = test::Http(port, "POST", "/collections/c/query", QueryBody(small_, kSmallQueries, kSmallK));
  ASSERT_EQ(r.status, 200) << r.body << ReadFile(dir_.Join("serve.err"));
  json results = json::parse(r.body)["results"];
  ASSERT_EQ(results.size(), kSmallQueries);
  for (size_t q = 0; q < kSmallQueries; ++q) {
    EXPECT_EQ(results[q]["ids"].get<std::vector<int64_t>>(),
              NearestIds(rows_, &small_[q * kDim], kSmallK))
        << "query " << q;
  }
  EXPECT_EQ(test::Http(port, "GET", "/health").status, 200);

  kill(pid, SIGTERM);
  ChildExit e = Wait(pid);
  guard.pid = -1;
  EXPECT_TRUE(e.exited && e.code == 0)
      << (e.exited ? "exit " : "signal ") << e.code << ReadFile(dir_.Join("serve.err"));
}

}  // namespace
}  // namespace sieve
