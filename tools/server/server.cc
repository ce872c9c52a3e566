// Copyright 2026 The Sieve Authors.
//
// The only translation unit that includes Boost.Beast (it is heavy to compile).

#include "tools/server/server.h"

#include <algorithm>
#include <atomic>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tools/server/batcher.h"
#include "tools/server/metrics.h"
#include "tools/server/router.h"

namespace sieve::server {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using std::chrono::milliseconds;

class Session;

class Server::Impl {
 public:
  Impl(DB* db, const ServerOptions& options)
      : options_(options), db_(db), acceptor_(net::make_strand(ioc_)) {}

  Status Start();
  void Accept();
  void Forget(uint64_t id) {
    std::lock_guard<std::mutex> l(sessions_mu_);
    sessions_.erase(id);
  }
  void RequestStop() {
    std::lock_guard<std::mutex> l(mu_);
    stop_requested_ = true;
    cv_.notify_all();
  }
  void DrainSessions();
  void Shutdown(int64_t drain_ms);

  const ServerOptions options_;
  DB* const db_;
  Metrics metrics_;
  std::unique_ptr<Batcher> batcher_;
  std::unique_ptr<Router> router_;
  // Declared before everything that uses it, so that it is destroyed after them.
  net::io_context ioc_;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work_;
  tcp::acceptor acceptor_;
  net::steady_timer accept_retry_{acceptor_.get_executor()};
  std::optional<net::signal_set> signals_;
  std::vector<std::thread> threads_;
  std::atomic<bool> draining_{false};
  std::atomic<int64_t> inflight_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_requested_ = false;
  bool shut_down_ = false;
  std::mutex sessions_mu_;
  std::unordered_map<uint64_t, std::weak_ptr<Session>> sessions_;
  uint64_t next_id_ = 0;
  uint16_t port_ = 0;
  std::string host_;
};

// One connection: read a request (whole, within read_timeout), hand it to the Router, write
// the response, wait (idle_timeout) for the next. Every handler runs on the connection's strand.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket&& socket, Server::Impl* srv, uint64_t id)
      : stream_(std::move(socket)), idle_timer_(stream_.get_executor()), srv_(srv), id_(id) {}

  void Start() {
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->WaitIdle(); });
  }

  // Closes the connection unless a request is being handled or answered.
  void Drain() {
    net::post(stream_.get_executor(), [self = shared_from_this()] {
      if (self->state_ == kIdle || self->state_ == kReading) self->Close();
    });
  }

 private:
  enum State { kIdle, kReading, kHandling, kWriting, kLinger, kClosed };
  static constexpr size_t kIdleReadBytes = 16 * 1024;

  void WaitIdle() {
    if (state_ == kClosed) return;
    if (srv_->draining_) return Close();
    state_ = kIdle;
    if (buffer_.size() > 0) return Read();  // a pipelined request
    stream_.expires_never();
    idle_timer_.expires_after(milliseconds(srv_->options_.idle_timeout_ms));
    idle_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (!ec && self->state_ == kIdle) self->Close();
    });
    // The wait ends with the next request's first bytes, read into the parser's buffer. (Not
    // with socket readiness: a wait_read can complete with nothing to read — under load, about
    // one keep-alive connection in a hundred on the 2-core test machine — and the read that
    // followed then held the idle connection open until the read timeout.)
    stream_.async_read_some(buffer_.prepare(kIdleReadBytes),
                            [self = shared_from_this()](beast::error_code ec, size_t n) {
                              self->idle_timer_.cancel();
                              if (ec || self->state_ != kIdle) return self->Close();
                              self->buffer_.commit(n);
                              self->Read();
                            });
  }

  void Read() {
    state_ = kReading;
    parser_.emplace();
    parser_->body_limit(srv_->options_.max_body_bytes);
    parser_->header_limit(64 * 1024);
    stream_.expires_after(milliseconds(srv_->options_.read_timeout_ms));
    http::async_read_header(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, size_t) { self->OnHeader(ec); });
  }

  // Clients such as curl send "Expect: 100-continue" before a large body and wait for the
  // interim response (or a second) before sending it. A request the Router refuses from its
  // head alone (no token, no route, a wrong method) is answered before its body is read, and
  // the connection closed: its body costs no memory.
  void OnHeader(beast::error_code ec) {
    if (state_ == kClosed) return;
    if (ec) return OnRead(ec);
    const auto& head = parser_->get();
    HttpRequest hr;
    hr.method = std::string(head.method_string());
    hr.target = std::string(head.target());
    hr.content_type = std::string(head[http::field::content_type]);
    hr.authorization = std::string(head[http::field::authorization]);
    HttpResponse refusal;
    if (!srv_->router_->Admit(hr, &refusal)) {
      state_ = kHandling;
      keep_alive_ = false;
      version_ = head.version();
      return Write(std::move(refusal), /*counted=*/false);
    }
    if (beast::iequals(parser_->get()[http::field::expect], "100-continue")) {
      continue_ = std::make_shared<http::response<http::empty_body>>(http::status::continue_,
                                                                     parser_->get().version());
      http::async_write(stream_, *continue_,
                        [self = shared_from_this()](beast::error_code ec, size_t) {
                          self->continue_.reset();
                          if (ec) return self->Close();
                          self->ReadBody();
                        });
      return;
    }
    ReadBody();
  }

  void ReadBody() {
    http::async_read(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, size_t) { self->OnRead(ec); });
  }

  void OnRead(beast::error_code ec) {
    if (state_ == kClosed) return;
    if (ec == http::error::body_limit) {
      return WriteError(413, "request body larger than the limit of " +
                                 std::to_string(srv_->options_.max_body_bytes) + " bytes");
    }
    if (ec == http::error::header_limit) {
      return WriteError(431, "request headers larger than 64 KiB");
    }
    if (ec == http::error::end_of_stream || ec == beast::error::timeout ||
        ec == net::error::operation_aborted) {
      return Close();  // gone, too slow, or closed by a drain
    }
    if (ec) {
      if (ec.category() == http::make_error_code(http::error::bad_method).category() &&
          ec != http::error::partial_message) {
        return WriteError(400, "malformed HTTP request: " + ec.message());
      }
      return Close();
    }
    Handle(parser_->release());
  }

  void Handle(http::request<http::string_body> req) {
    state_ = kHandling;
    keep_alive_ = req.keep_alive();
    version_ = req.version();
    HttpRequest hr;
    hr.method = std::string(req.method_string());
    hr.target = std::string(req.target());
    hr.content_type = std::string(req[http::field::content_type]);
    hr.authorization = std::string(req[http::field::authorization]);
    hr.body = std::move(req.body());
    stream_.expires_never();  // handling time is not the client's
    ++srv_->inflight_;
    srv_->router_->Handle(hr, [self = shared_from_this()](HttpResponse r) {
      net::post(self->stream_.get_executor(), [self, r = std::move(r)]() mutable {
        self->Write(std::move(r), /*counted=*/true);
      });
    });
  }

  void WriteError(int status, const std::string& message) {
    keep_alive_ = false;
    HttpResponse r;
    r.status = status;
    std::string escaped;
    for (char c : message) {
      if (c == '"' || c == '\\') escaped += '\\';
      escaped += c < 0x20 && c >= 0 ? ' ' : c;
    }
    r.body = "{\"error\": \"" + escaped + "\"}\n";
    srv_->metrics_.RecordRequest("-", "other", status, 0);
    Write(std::move(r), /*counted=*/false);
  }

  void Write(HttpResponse r, bool counted) {
    if (state_ == kClosed) {
      if (counted) --srv_->inflight_;
      return;
    }
    state_ = kWriting;
    res_ = std::make_shared<http::response<http::string_body>>(static_cast<http::status>(r.status),
                                                               version_);
    res_->set(http::field::server, "sieve");
    res_->set(http::field::content_type, r.content_type);
    if (!r.allow.empty()) res_->set(http::field::allow, r.allow);
    if (r.status == 401) res_->set(http::field::www_authenticate, "Bearer");
    res_->keep_alive(keep_alive_ && !srv_->draining_);
    res_->body() = std::move(r.body);
    res_->prepare_payload();
    stream_.expires_after(milliseconds(std::max<int64_t>(srv_->options_.read_timeout_ms, 5000)));
    http::async_write(stream_, *res_,
                      [self = shared_from_this(), counted](beast::error_code ec, size_t) {
                        if (counted) --self->srv_->inflight_;
                        if (ec) return self->Close();
                        if (!self->res_->keep_alive()) return self->CloseGracefully();
                        self->res_.reset();
                        self->WaitIdle();
                      });
  }

  // Half-closes and reads what the client still sends (up to a bound), so that closing does
  // not reset the connection before the client has read the response (say a 413).
  void CloseGracefully() {
    state_ = kLinger;
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    stream_.expires_after(std::chrono::seconds(2));
    Linger();
  }

  void Linger() {
    stream_.async_read_some(net::buffer(linger_buf_),
                            [self = shared_from_this()](beast::error_code ec, size_t n) {
                              self->linger_bytes_ += n;
                              if (ec || self->linger_bytes_ > (64u << 20)) return self->Close();
                              self->Linger();
                            });
  }

  void Close() {
    if (state_ == kClosed) return;
    state_ = kClosed;
    idle_timer_.cancel();
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.close();
    srv_->Forget(id_);
  }

  beast::tcp_stream stream_;
  net::steady_timer idle_timer_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::shared_ptr<http::response<http::string_body>> res_;
  std::shared_ptr<http::response<http::empty_body>> continue_;
  Server::Impl* const srv_;
  const uint64_t id_;
  State state_ = kIdle;
  bool keep_alive_ = true;
  unsigned version_ = 11;
  char linger_buf_[16384];
  size_t linger_bytes_ = 0;
};

namespace {

Status ListenAddress(const ServerOptions& options, net::ip::address* addr) {
  beast::error_code ec;
  if (options.host == "localhost") {
    *addr = net::ip::make_address("127.0.0.1");
  } else {
    *addr = net::ip::make_address(options.host, ec);
    if (ec) {
      return Status::InvalidArgument("--listen: '" + options.host +
                                     "' is not an IP address (or localhost)");
    }
  }
  if (!options.token.empty() && options.token.size() < kMinTokenLength) {
    return Status::InvalidArgument("the bearer token has " + std::to_string(options.token.size()) +
                                   " characters, fewer than " + std::to_string(kMinTokenLength) +
                                   ": a short token can be guessed (make one with "
                                   "`openssl rand -hex 32`)");
  }
  for (char c : options.token) {
    if (c < 0x21 || c > 0x7e) {
      return Status::InvalidArgument("the bearer token must be printable ASCII without spaces");
    }
  }
  if (!addr->is_loopback() && options.token.empty()) {
    return Status::InvalidArgument(
        "refusing to listen on non-loopback address " + options.host +
        " without --token-file: anyone who can reach it could read and change the database");
  }
  return Status::OK();
}

}  // namespace

Status Server::Impl::Start() {
  beast::error_code ec;
  net::ip::address addr;
  if (Status s = ListenAddress(options_, &addr); !s.ok()) return s;
  tcp::endpoint ep(addr, options_.port);
  acceptor_.open(ep.protocol(), ec);
  if (!ec) acceptor_.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(ep, ec);
  if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    return Status::IOError("cannot listen on " + options_.host + ":" +
                           std::to_string(options_.port) + ": " + ec.message());
  }
  port_ = acceptor_.local_endpoint().port();
  host_ = addr.is_v6() ? "[" + addr.to_string() + "]" : addr.to_string();

  Batcher::Options bo;
  bo.window = std::chrono::microseconds(std::max<int64_t>(0, options_.batch_window_us));
  bo.max_batch = std::max<size_t>(1, options_.max_batch);
  bo.workers = std::max(1, options_.search_workers);
  batcher_ = std::make_unique<Batcher>(db_, &metrics_, bo);
  Router::Options ro;
  ro.token = options_.token;
  ro.max_request_queries = options_.max_request_queries;
  ro.memory_budget_bytes = options_.memory_budget_bytes;
  ro.snapshot_idle_ms = options_.snapshot_idle_ms;
  ro.backup_dir = options_.backup_dir;
  router_ = std::make_unique<Router>(db_, batcher_.get(), &metrics_, ro);

  if (options_.handle_signals) {
    signals_.emplace(ioc_, SIGINT, SIGTERM);
    signals_->async_wait([this](beast::error_code ec, int) {
      if (!ec) RequestStop();
    });
  }
  work_.emplace(net::make_work_guard(ioc_));
  Accept();
  int n = options_.threads > 0 ? options_.threads
                               : std::max(4, static_cast<int>(std::thread::hardware_concurrency()));
  for (int i = 0; i < n; ++i) {
    threads_.emplace_back([this] {
      for (;;) {
        try {
          ioc_.run();
          return;
        } catch (const std::exception& e) {
          std::fprintf(stderr, "sieve serve: internal error in a handler: %s\n", e.what());
        }
      }
    });
  }
  return Status::OK();
}

void Server::Impl::Accept() {
  acceptor_.async_accept(net::make_strand(ioc_), [this](beast::error_code ec, tcp::socket socket) {
    if (draining_ || !acceptor_.is_open()) return;
    if (ec) {
      // Out of descriptors or memory: back off instead of spinning on the error.
      accept_retry_.expires_after(milliseconds(50));
      accept_retry_.async_wait([this](beast::error_code ec) {
        if (!ec && !draining_) Accept();
      });
      return;
    }
    std::shared_ptr<Session> s;
    {
      std::lock_guard<std::mutex> l(sessions_mu_);
      const uint64_t id = next_id_++;
      s = std::make_shared<Session>(std::move(socket), this, id);
      sessions_[id] = s;
    }
    s->Start();
    Accept();
  });
}

void Server::Impl::DrainSessions() {
  std::vector<std::shared_ptr<Session>> live;
  {
    std::lock_guard<std::mutex> l(sessions_mu_);
    for (auto& [id, w] : sessions_) {
      if (auto s = w.lock()) live.push_back(std::move(s));
    }
  }
  for (auto& s : live) s->Drain();
}

void Server::Impl::Shutdown(int64_t drain_ms) {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (shut_down_) return;
    shut_down_ = true;
    stop_requested_ = true;
    cv_.notify_all();
  }
  draining_ = true;
  net::post(acceptor_.get_executor(), [this] {
    beast::error_code ec;
    acceptor_.close(ec);
  });
  DrainSessions();
  const auto deadline = std::chrono::steady_clock::now() + milliseconds(drain_ms);
  while (inflight_ > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(2));
  }
  if (batcher_) batcher_->Stop();
  // Let the last responses reach their sockets.
  while (inflight_ > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(2));
  }
  DrainSessions();
  if (signals_) {
    net::post(ioc_, [this] {
      beast::error_code ec;
      signals_->cancel(ec);
    });
  }
  work_.reset();
  ioc_.stop();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

Status Server::Start(DB* db, const ServerOptions& options, std::unique_ptr<Server>* server) {
  auto impl = std::make_unique<Impl>(db, options);
  Status s = impl->Start();
  if (!s.ok()) return s;
  server->reset(new Server(std::move(impl)));
  return Status::OK();
}

Status Server::Validate(const ServerOptions& options) {
  net::ip::address addr;
  return ListenAddress(options, &addr);
}

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() { Shutdown(); }

uint16_t Server::port() const { return impl_->port_; }

std::string Server::address() const { return impl_->host_ + ":" + std::to_string(impl_->port_); }

void Server::WaitForSignal() {
  std::unique_lock<std::mutex> l(impl_->mu_);
  impl_->cv_.wait(l, [this] { return impl_->stop_requested_; });
}

void Server::Shutdown(int64_t drain_ms) { impl_->Shutdown(drain_ms); }

std::string Server::MetricsText() const { return impl_->metrics_.Render(); }

}  // namespace sieve::server
