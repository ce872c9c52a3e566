// Copyright 2026 The Sieve Authors.
//
// `sieve serve` as a real process: SIGTERM drains requests in flight and exits 0; kill -9
// during ingests and a restart lose nothing acknowledged; a non-loopback address needs a
// token file; the engine flags (--cpu-executors, --devices, --first-use-calibration) reach the
// database it serves, and bad values fail naming the flag.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/server/http_client.h"
#include "tests/testutil.h"
#include "tools/io/npy.h"

namespace sieve {
namespace {

using json = nlohmann::json;
using test::Http;
using test::HttpReply;

using test::CliPath;
using test::ReadFile;

// Runs the CLI to completion; returns its exit code.
int RunCli(const std::vector<std::string>& args, const std::string& err_path,
           const std::string& out_path = "/dev/null") {
  pid_t pid = fork();
  if (pid == 0) {
    int fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 2);
    int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out, 1);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(CliPath()));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(CliPath(), argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A `sieve serve` child process.
class ServeProcess {
 public:
  ~ServeProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  // Starts it and waits for its {"listening": ...} line; false when it exits instead.
  bool Start(const std::vector<std::string>& args, const std::string& err_path) {
    int p[2];
    if (pipe(p) != 0) return false;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(p[1], 1);
      close(p[0]);
      int fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, 2);
      std::vector<char*> argv;
      argv.push_back(const_cast<char*>(CliPath()));
      argv.push_back(const_cast<char*>("serve"));
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(CliPath(), argv.data());
      _exit(127);
    }
    close(p[1]);
    std::string line;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (line.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
      pollfd pfd{p[0], POLLIN, 0};
      if (poll(&pfd, 1, 100) <= 0) continue;
      char buf[256];
      ssize_t n = read(p[0], buf, sizeof(buf));
      if (n <= 0) break;
      line.append(buf, static_cast<size_t>(n));
    }
    close(p[0]);
    json j = json::parse(line, nullptr, false);
    if (!j.is_object() || !j.contains("listening")) return false;
    const std::string addr = j["listening"];
    port_ = static_cast<uint16_t>(std::stoi(addr.substr(addr.rfind(':') + 1)));
    return true;
  }

  // Sends `sig` and returns the exit status (-1 when killed by a signal).
  int Stop(int sig) {
    kill(pid_, sig);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  // Exit code once it exits by itself.
  int Wait() {
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  pid_t pid() const { return pid_; }
  uint16_t port() const { return port_; }

 private:
  pid_t pid_ = -1;
  uint16_t port_ = 0;
};

std::string Vectors(size_t n, size_t dim, uint64_t seed) {
  std::vector<float> v = test::RandomVectors(n, dim, seed);
  json rows = json::array();
  for (size_t i = 0; i < n; ++i) rows.push_back(std::vector<float>(&v[i * dim], &v[(i + 1) * dim]));
  return rows.dump();
}

TEST(ServeProcessTest, SigtermDrainsRequestsInFlightAndExitsZero) {
  test::ScratchDir dir;
  ServeProcess server;
  // A long batching window keeps the query in flight while SIGTERM arrives.
  ASSERT_TRUE(server.Start(
      {dir.Join("db"), "--create", "--listen", "127.0.0.1:0", "--batch-window-us", "1500000"},
      dir.Join("err")))
      << ReadFile(dir.Join("err"));
  const uint16_t port = server.port();
  ASSERT_EQ(Http(port, "POST", "/collections", R"({"name": "c", "dim": 2})").status, 201);
  ASSERT_EQ(Http(port, "POST", "/collections/c/rows",
                 R"({"ids": [10, 20, 30], "vectors": [[0, 0], [1, 1], [5, 5]]})")
                .status,
            200);
  HttpReply reply;
  std::thread client([&] {
    reply = Http(port, "POST", "/collections/c/query", R"({"vectors": [[0.9, 0.8]], "k": 2})");
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  const auto t0 = std::chrono::steady_clock::now();
  kill(server.pid(), SIGTERM);
  client.join();
  EXPECT_EQ(server.Wait(), 0) << ReadFile(dir.Join("err"));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  ASSERT_EQ(reply.status, 200) << reply.body;
  json r = json::parse(reply.body)["results"][0];
  EXPECT_EQ(r["ids"], json::array({20, 10}));
  EXPECT_NE(ReadFile(dir.Join("err")).find("stopped"), std::string::npos);
  EXPECT_EQ(RunCli({"check", dir.Join("db")}, dir.Join("check.err")), 0)
      << ReadFile(dir.Join("check.err"));
}

// Three rounds of: serve, ingest 200-row requests back to back, kill -9 mid-stream. Then a
// restart finds every acknowledged request whole, the request in flight at each kill whole or
// absent, and nothing else; `sieve check` passes.
TEST(ServeProcessTest, Kill9DuringIngestLosesNothingAcknowledged) {
  test::ScratchDir dir;
  constexpr int kRowsPerRequest = 200;
  std::vector<int> acked, in_flight;  // batch numbers
  int next_batch = 0;
  for (int round = 0; round < 3; ++round) {
    ServeProcess server;
    ASSERT_TRUE(
        server.Start({dir.Join("db"), "--create", "--listen", "127.0.0.1:0"}, dir.Join("err")))
        << ReadFile(dir.Join("err"));
    const uint16_t port = server.port();
    if (round == 0) {
      ASSERT_EQ(Http(port, "POST", "/collections",
                     R"({"name": "c", "dim": 8, "attributes": {"batch": "int"}})")
                    .status,
                201);
    }
    std::atomic<int> acked_now{0};
    std::atomic<bool> stop{false};
    std::vector<int> acked_round;
    int attempted = -1;
    std::thread writer([&] {
      for (int b = next_batch; !stop; ++b) {
        json ids = json::array(), attrs = json::array();
        for (int i = 0; i < kRowsPerRequest; ++i) {
          ids.push_back(b * kRowsPerRequest + i);
          attrs.push_back({{"batch", b}});
        }
        std::string body = "{\"ids\": " + ids.dump() + ", \"attributes\": " + attrs.dump() +
                           ", \"vectors\": " + Vectors(kRowsPerRequest, 8, b) + "}";
        attempted = b;
        HttpReply r = Http(port, "POST", "/collections/c/rows", body);
        if (r.status != 200) return;  // killed
        acked_round.push_back(b);
        ++acked_now;
      }
    });
    while (acked_now < 4 + 2 * round) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(3 * round));
    EXPECT_EQ(server.Stop(SIGKILL), -1);
    stop = true;
    writer.join();
    acked.insert(acked.end(), acked_round.begin(), acked_round.end());
    if (acked_round.empty() || acked_round.back() != attempted) in_flight.push_back(attempted);
    next_batch = attempted + 1;
  }
  ServeProcess server;
  ASSERT_TRUE(
      server.Start({dir.Join("db"), "--create", "--listen", "127.0.0.1:0"}, dir.Join("err2")))
      << ReadFile(dir.Join("err2"));
  int64_t expected_min = static_cast<int64_t>(acked.size()) * kRowsPerRequest, found = 0;
  for (int b = 0; b < next_batch; ++b) {
    HttpReply r = Http(server.port(), "POST", "/collections/c/query",
                       "{\"vectors\": " + Vectors(1, 8, 1000) +
                           ", \"k\": 1000, \"filter\": \"batch = " + std::to_string(b) + "\"}");
    ASSERT_EQ(r.status, 200) << r.body;
    const size_t n = json::parse(r.body)["results"][0]["ids"].size();
    found += static_cast<int64_t>(n);
    if (std::find(acked.begin(), acked.end(), b) != acked.end()) {
      EXPECT_EQ(n, static_cast<size_t>(kRowsPerRequest)) << "acknowledged request " << b;
    } else {
      EXPECT_TRUE(std::find(in_flight.begin(), in_flight.end(), b) != in_flight.end()) << b;
      EXPECT_TRUE(n == 0 || n == static_cast<size_t>(kRowsPerRequest)) << b << ": " << n;
    }
  }
  HttpReply r = Http(server.port(), "GET", "/collections/c");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["rows"].get<int64_t>(), found);
  EXPECT_GE(found, expected_min);
  EXPECT_EQ(server.Stop(SIGTERM), 0);
  EXPECT_EQ(RunCli({"check", dir.Join("db")}, dir.Join("check.err")), 0)
      << ReadFile(dir.Join("check.err"));
}

// The server's answers are the CLI's, byte for byte in value, for one filter and for one
// filter per query.
TEST(ServeProcessTest, AnswersEqualTheClis) {
  test::ScratchDir dir;
  constexpr size_t kN = 700, kDim = 8, kQ = 5;
  const std::vector<float> rows = test::RandomVectors(kN, kDim, 3);
  const std::vector<float> queries = test::RandomVectors(kQ, kDim, 4);
  const std::vector<std::string> filters = {"cat = 1", "", "cat IN (2, 3)", "cat != 0", "cat = 4"};
  json server_one, server_many;
  {
    ServeProcess server;
    ASSERT_TRUE(
        server.Start({dir.Join("db"), "--create", "--listen", "127.0.0.1:0"}, dir.Join("err")))
        << ReadFile(dir.Join("err"));
    const uint16_t port = server.port();
    ASSERT_EQ(Http(port, "POST", "/collections",
                   R"({"name": "c", "dim": 8, "attributes": {"cat": "int"}})")
                  .status,
              201);
    json attrs = json::array(), vecs = json::array();
    for (size_t i = 0; i < kN; ++i) {
      attrs.push_back({{"cat", i % 5}});
      vecs.push_back(std::vector<float>(&rows[i * kDim], &rows[(i + 1) * kDim]));
    }
    ASSERT_EQ(Http(port, "POST", "/collections/c/rows",
                   json{{"vectors", vecs}, {"attributes", attrs}}.dump())
                  .status,
              200);
    json q = json::array();
    for (size_t i = 0; i < kQ; ++i) {
      q.push_back(std::vector<float>(&queries[i * kDim], &queries[(i + 1) * kDim]));
    }
    HttpReply r = Http(port, "POST", "/collections/c/query",
                       json{{"vectors", q}, {"k", 10}, {"filter", "cat = 1"}}.dump());
    ASSERT_EQ(r.status, 200) << r.body;
    server_one = json::parse(r.body)["results"];
    r = Http(port, "POST", "/collections/c/query",
             json{{"vectors", q}, {"k", 10}, {"filters", filters}}.dump());
    ASSERT_EQ(r.status, 200) << r.body;
    server_many = json::parse(r.body)["results"];
    EXPECT_EQ(server.Stop(SIGTERM), 0);
  }
  ASSERT_TRUE(io::WriteNpyMatrix(dir.Join("q.npy"), queries.data(), kQ, kDim).ok());
  {
    std::ofstream f(dir.Join("filters.txt"));
    for (const auto& line : filters) f << line << "\n";
  }
  for (int many = 0; many < 2; ++many) {
    std::vector<std::string> args = {"query",     dir.Join("db"),    "--collection", "c",
                                     "--queries", dir.Join("q.npy"), "--k",          "10"};
    if (many) {
      args.insert(args.end(), {"--filters", dir.Join("filters.txt")});
    } else {
      args.insert(args.end(), {"--filter", "cat = 1"});
    }
    ASSERT_EQ(RunCli(args, dir.Join("q.err"), dir.Join("q.out")), 0) << ReadFile(dir.Join("q.err"));
    std::istringstream in(ReadFile(dir.Join("q.out")));
    const json& server_results = many ? server_many : server_one;
    std::string line;
    size_t i = 0;
    for (; std::getline(in, line); ++i) {
      json cli = json::parse(line);
      ASSERT_LT(i, server_results.size());
      EXPECT_EQ(cli["ids"], server_results[i]["ids"]) << "query " << i;
      EXPECT_EQ(cli["distances"], server_results[i]["distances"]) << "query " << i;
      EXPECT_FALSE(cli["ids"].empty());
    }
    EXPECT_EQ(i, kQ);
  }
}

// The CLI's read-only commands open the store read-only, which takes no lock: they work while
// `sieve serve` holds the database open for writing, and see what it has committed. A writing
// command is refused with one line that says why.
TEST(ServeProcessTest, ReadOnlyCommandsWorkWhileServeRuns) {
  test::ScratchDir dir;
  const std::string db = dir.Join("db");
  ServeProcess server;
  ASSERT_TRUE(server.Start({db, "--create", "--listen", "127.0.0.1:0"}, dir.Join("err")))
      << ReadFile(dir.Join("err"));
  const uint16_t port = server.port();
  ASSERT_EQ(Http(port, "POST", "/collections",
                 R"({"name": "c", "dim": 2, "attributes": {"cat": "int"}})")
                .status,
            201);
  ASSERT_EQ(Http(port, "POST", "/collections/c/rows",
                 R"({"ids": [10, 20, 30], "vectors": [[0, 0], [1, 1], [5, 5]],
                     "attributes": [{"cat": 1}, {"cat": 2}, {"cat": 1}]})")
                .status,
            200);
  const std::vector<float> q = {0.9f, 0.8f};
  ASSERT_TRUE(io::WriteNpyMatrix(dir.Join("q.npy"), q.data(), 1, 2).ok());
  const std::string out = dir.Join("out"), err = dir.Join("cli.err");
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round);
    const int rows = round == 0 ? 3 : 4;
    ASSERT_EQ(RunCli({"stats", db, "--collection", "c"}, err, out), 0) << ReadFile(err);
    EXPECT_EQ(json::parse(ReadFile(out))["rows"], rows);
    ASSERT_EQ(RunCli({"collections", db}, err, out), 0) << ReadFile(err);
    EXPECT_EQ(json::parse(ReadFile(out))["collection"], "c");
    ASSERT_EQ(RunCli({"query", db, "--collection", "c", "--queries", dir.Join("q.npy"), "--k",
                      "5", "--filter", "cat = 1"},
                     err, out),
              0)
        << ReadFile(err);
    EXPECT_EQ(json::parse(ReadFile(out))["ids"],
              round == 0 ? json::array({10, 30}) : json::array({40, 10, 30}));
    ASSERT_EQ(RunCli({"check", db}, err, out), 0) << ReadFile(err) << ReadFile(out);
    // The server took more rows meanwhile; the next read-only open sees them.
    if (round == 0) {
      ASSERT_EQ(Http(port, "POST", "/collections/c/rows",
                     R"({"ids": [40], "vectors": [[0.9, 0.8]], "attributes": [{"cat": 1}]})")
                    .status,
                200);
    }
  }
  // A write needs the lock the server holds.
  std::vector<int64_t> del = {10};
  ASSERT_TRUE(io::WriteNpyInt64(dir.Join("del.npy"), del.data(), 1).ok());
  EXPECT_EQ(RunCli({"delete", db, "--collection", "c", "--ids", dir.Join("del.npy")}, err, out), 1);
  const std::string message = ReadFile(err);
  EXPECT_EQ(std::count(message.begin(), message.end(), '\n'), 1) << message;
  EXPECT_NE(message.find("another process"), std::string::npos) << message;
  // And the server is unharmed.
  HttpReply r = Http(port, "GET", "/collections/c");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["rows"], 4);
  EXPECT_EQ(server.Stop(SIGTERM), 0);
}

TEST(ServeProcessTest, NonLoopbackNeedsATokenFile) {
  test::ScratchDir dir;
  ServeProcess refused;
  EXPECT_FALSE(
      refused.Start({dir.Join("db"), "--create", "--listen", "0.0.0.0:0"}, dir.Join("err")));
  EXPECT_EQ(refused.Wait(), 1);
  EXPECT_NE(ReadFile(dir.Join("err")).find("--token-file"), std::string::npos)
      << ReadFile(dir.Join("err"));

  std::ofstream(dir.Join("token")) << "tok-0123456789abcdef\n";
  ServeProcess server;
  ASSERT_TRUE(server.Start(
      {dir.Join("db"), "--create", "--listen", "0.0.0.0:0", "--token-file", dir.Join("token")},
      dir.Join("err2")))
      << ReadFile(dir.Join("err2"));
  EXPECT_EQ(Http(server.port(), "GET", "/health").status, 401);
  EXPECT_EQ(
      Http(server.port(), "GET", "/health", "", {{"Authorization", "Bearer tok-0123456789abcdef"}})
          .status,
      200);
  EXPECT_EQ(server.Stop(SIGINT), 0);
}

// A token file that cannot hold a usable token is refused before anything is opened, saying
// what is wrong with it.
TEST(ServeProcessTest, BadTokenFilesAreRefusedSayingWhy) {
  test::ScratchDir dir;
  ASSERT_EQ(::mkdir(dir.Join("tokendir").c_str(), 0755), 0);
  std::ofstream(dir.Join("short")) << "x\n";
  std::ofstream(dir.Join("spaced")) << "0123456789 abcdef0123\n";
  std::ofstream(dir.Join("empty")) << " \n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {dir.Join("tokendir"), "is a directory, not a file"},
      {dir.Join("short"), "the token has 1 characters, fewer than 16"},
      {dir.Join("spaced"), "the token must be printable ASCII without spaces"},
      {dir.Join("empty"), "empty token"},
      {dir.Join("missing"), "cannot be read: No such file or directory"},
  };
  for (const auto& [file, why] : cases) {
    EXPECT_EQ(RunCli({"serve", dir.Join("db"), "--create", "--listen", "127.0.0.1:0",
                      "--token-file", file},
                     dir.Join("err")),
              1)
        << file;
    const std::string err = ReadFile(dir.Join("err"));
    EXPECT_NE(err.find("--token-file " + file + ": " + why), std::string::npos) << err;
    EXPECT_EQ(err.find('\n'), err.size() - 1) << err;  // one line
  }
  struct stat st;
  EXPECT_NE(::stat(dir.Join("db").c_str(), &st), 0);  // refused before the store was created
}

// The engine flags as sieve query takes them: a CPU search over 3 executors spreads the
// shards over them (the plan names cpu0..cpu2) and answers what one executor answers; bad
// values fail before anything is opened, naming the flag.
TEST(ServeProcessTest, EngineFlagsReachTheDatabase) {
  test::ScratchDir dir;
  const std::string db = dir.Join("db");
  ASSERT_EQ(RunCli({"create", db, "--collection", "c", "--dim", "4", "--shards", "6"},
                   dir.Join("create.err")),
            0)
      << ReadFile(dir.Join("create.err"));
  constexpr size_t kN = 600, kDim = 4;
  const std::vector<float> rows = test::RandomVectors(kN, kDim, 5);
  ASSERT_TRUE(io::WriteNpyMatrix(dir.Join("v.npy"), rows.data(), kN, kDim).ok());
  ASSERT_EQ(RunCli({"ingest", db, "--collection", "c", "--vectors", dir.Join("v.npy")},
                   dir.Join("ingest.err")),
            0)
      << ReadFile(dir.Join("ingest.err"));
  const std::string query = json{{"vectors", json::parse(Vectors(3, kDim, 6))},
                                 {"k", 9},
                                 {"device", "cpu"},
                                 {"explain", true}}
                                .dump();
  json answers[2];
  for (int spread = 0; spread < 2; ++spread) {
    std::vector<std::string> args = {db, "--listen", "127.0.0.1:0", "--first-use-calibration",
                                     "off", "--devices", "0"};
    if (spread) args.insert(args.end(), {"--cpu-executors", "3"});
    ServeProcess server;
    ASSERT_TRUE(server.Start(args, dir.Join("err"))) << ReadFile(dir.Join("err"));
    HttpReply r = Http(server.port(), "POST", "/collections/c/query", query);
    ASSERT_EQ(r.status, 200) << r.body;
    const json body = json::parse(r.body);
    answers[spread] = body["results"];
    std::set<std::string> devices;
    for (const json& d : body["plan"].value("devices", json::array())) {
      devices.insert(d["device"].get<std::string>());
    }
    if (spread) {
      EXPECT_EQ(devices, (std::set<std::string>{"cpu0", "cpu1", "cpu2"})) << r.body;
    } else {
      EXPECT_LE(devices.size(), 1u) << r.body;
    }
    EXPECT_EQ(server.Stop(SIGTERM), 0);
  }
  EXPECT_EQ(answers[1], answers[0]);
  ASSERT_EQ(answers[0].size(), 3u);

  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"--first-use-calibration", "sometimes"}, "--first-use-calibration is unknown, off or always"},
      {{"--devices", "0,x"}, "--devices: 'x' is not a CUDA device number"},
      {{"--cpu-executors", "0"}, "cpu-executors"},
      {{"--device-memory", "lots"}, "device-memory"}};
  for (const auto& [flags, message] : bad) {
    std::vector<std::string> args = {"serve", db, "--listen", "127.0.0.1:0"};
    args.insert(args.end(), flags.begin(), flags.end());
    EXPECT_EQ(RunCli(args, dir.Join("bad.err")), 1) << flags[0];
    const std::string err = ReadFile(dir.Join("bad.err"));
    EXPECT_NE(err.find(message), std::string::npos) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  }
}

}  // namespace
}  // namespace sieve
