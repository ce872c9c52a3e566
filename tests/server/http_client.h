// Copyright 2026 The Sieve Authors.
//
// A minimal blocking HTTP/1.1 client over POSIX sockets for the server tests: independent of
// the server's Beast code, so a bug there cannot hide in a shared parser.

#ifndef SIEVE_TESTS_SERVER_HTTP_CLIENT_H_
#define SIEVE_TESTS_SERVER_HTTP_CLIENT_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace sieve::test {

struct HttpReply {
  int status = 0;                              // 0: no response (connection failed or closed)
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
};

// One keep-alive connection to 127.0.0.1:port.
class HttpConnection {
 public:
  explicit HttpConnection(uint16_t port, int timeout_ms = 30000) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~HttpConnection() {
    if (fd_ >= 0) ::close(fd_);
  }
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  bool connected() const { return fd_ >= 0; }
  int fd() const { return fd_; }

  bool SendAll(const std::string& data) {
    size_t off = 0;
    while (off < data.size()) {
      ssize_t n = ::send(fd_, data.data() + off, data.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return false;
      off += static_cast<size_t>(n);
    }
    return true;
  }

  HttpReply Request(const std::string& method, const std::string& target,
                    const std::string& body = "",
                    const std::vector<std::pair<std::string, std::string>>& headers = {}) {
    std::string req = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    bool has_type = false;
    for (const auto& [k, v] : headers) {
      req += k + ": " + v + "\r\n";
      if (k == "Content-Type") has_type = true;
    }
    if (!body.empty() && !has_type) req += "Content-Type: application/json\r\n";
    if (method != "GET" || !body.empty()) {
      req += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    }
    req += "\r\n" + body;
    if (fd_ < 0 || !SendAll(req)) return HttpReply();
    return ReadReply();
  }

  HttpReply ReadReply() {
    HttpReply r;
    size_t end;
    while ((end = buf_.find("\r\n\r\n")) == std::string::npos) {
      if (!Fill()) return HttpReply();
    }
    const std::string head = buf_.substr(0, end);
    buf_.erase(0, end + 4);
    size_t line_end = head.find("\r\n");
    const std::string status_line = head.substr(0, line_end);
    if (status_line.size() < 12) return HttpReply();
    r.status = std::atoi(status_line.c_str() + 9);
    size_t pos = line_end == std::string::npos ? head.size() : line_end + 2;
    while (pos < head.size()) {
      size_t e = head.find("\r\n", pos);
      if (e == std::string::npos) e = head.size();
      const std::string line = head.substr(pos, e - pos);
      const size_t colon = line.find(':');
      if (colon != std::string::npos) {
        std::string name = line.substr(0, colon);
        for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        size_t v = colon + 1;
        while (v < line.size() && line[v] == ' ') ++v;
        r.headers[name] = line.substr(v);
      }
      pos = e + 2;
    }
    const size_t length = std::strtoull(r.headers["content-length"].c_str(), nullptr, 10);
    while (buf_.size() < length) {
      if (!Fill()) return HttpReply();
    }
    r.body = buf_.substr(0, length);
    buf_.erase(0, length);
    return r;
  }

  // True when the peer closed the connection (recv returned 0 or an error) within the socket's
  // receive timeout; false when data arrived or the wait timed out.
  bool WaitClosed() {
    char c;
    ssize_t n = ::recv(fd_, &c, 1, 0);
    if (n == 0) return true;
    if (n < 0) return errno != EAGAIN && errno != EWOULDBLOCK;
    return false;
  }

 private:
  bool Fill() {
    char tmp[65536];
    ssize_t n = ::recv(fd_, tmp, sizeof(tmp), 0);
    if (n <= 0) return false;
    buf_.append(tmp, static_cast<size_t>(n));
    return true;
  }

  int fd_ = -1;
  std::string buf_;
};

// One request on a fresh connection.
inline HttpReply Http(uint16_t port, const std::string& method, const std::string& target,
                      const std::string& body = "",
                      const std::vector<std::pair<std::string, std::string>>& headers = {}) {
  HttpConnection c(port);
  return c.Request(method, target, body, headers);
}

}  // namespace sieve::test

#endif  // SIEVE_TESTS_SERVER_HTTP_CLIENT_H_
