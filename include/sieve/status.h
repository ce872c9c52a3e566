// Copyright 2026 The Sieve Authors.
//
// A Status encapsulates the result of an operation. It may indicate success, or it may indicate
// an error with an associated message. OK costs nothing: no allocation, one pointer.
//
// Thread-safety: multiple threads may call const methods on a Status without external
// synchronization; non-const methods need it.

#ifndef SIEVE_INCLUDE_SIEVE_STATUS_H_
#define SIEVE_INCLUDE_SIEVE_STATUS_H_

#include <memory>
#include <string>
#include <string_view>

namespace sieve {

class [[nodiscard]] Status {
 public:
  // Persisted in no file; the numbering is still kept stable for clients that log codes.
  enum class Code : unsigned char {
    kOk = 0,
    kNotFound = 1,
    kCorruption = 2,
    kNotSupported = 3,
    kInvalidArgument = 4,
    kIOError = 5,
    kAlreadyExists = 6,
    kResourceExhausted = 7,  // device or host memory
    kUnavailable = 8,        // e.g. no GPU present
    kInternal = 9,
  };

  Status() noexcept = default;
  Status(const Status& rhs) : state_(rhs.state_ ? new State(*rhs.state_) : nullptr) {}
  Status& operator=(const Status& rhs) {
    if (this != &rhs) state_.reset(rhs.state_ ? new State(*rhs.state_) : nullptr);
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

  static Status OK() { return Status(); }
  static Status NotFound(std::string_view msg) { return Status(Code::kNotFound, msg); }
  static Status Corruption(std::string_view msg) { return Status(Code::kCorruption, msg); }
  static Status NotSupported(std::string_view msg) { return Status(Code::kNotSupported, msg); }
  static Status InvalidArgument(std::string_view msg) {
    return Status(Code::kInvalidArgument, msg);
  }
  static Status IOError(std::string_view msg) { return Status(Code::kIOError, msg); }
  static Status AlreadyExists(std::string_view msg) { return Status(Code::kAlreadyExists, msg); }
  static Status ResourceExhausted(std::string_view msg) {
    return Status(Code::kResourceExhausted, msg);
  }
  static Status Unavailable(std::string_view msg) { return Status(Code::kUnavailable, msg); }
  static Status Internal(std::string_view msg) { return Status(Code::kInternal, msg); }

  bool ok() const { return state_ == nullptr; }
  Code code() const { return state_ ? state_->code : Code::kOk; }
  bool IsNotFound() const { return code() == Code::kNotFound; }
  bool IsCorruption() const { return code() == Code::kCorruption; }
  bool IsNotSupported() const { return code() == Code::kNotSupported; }
  bool IsInvalidArgument() const { return code() == Code::kInvalidArgument; }
  bool IsIOError() const { return code() == Code::kIOError; }
  bool IsAlreadyExists() const { return code() == Code::kAlreadyExists; }
  bool IsResourceExhausted() const { return code() == Code::kResourceExhausted; }
  bool IsUnavailable() const { return code() == Code::kUnavailable; }

  // The message alone, without the code's name ("" for OK).
  const std::string& message() const {
    static const std::string kEmpty;
    return state_ ? state_->msg : kEmpty;
  }

  // "OK", or the code's name, ": ", and the message.
  std::string ToString() const;

  // Returns a copy of this status whose message is prefixed with `context` and ": ".
  Status WithContext(std::string_view context) const {
    if (ok()) return *this;
    return Status(state_->code, std::string(context) + ": " + state_->msg);
  }

 private:
  struct State {
    Code code;
    std::string msg;
  };
  Status(Code code, std::string_view msg) : state_(new State{code, std::string(msg)}) {}

  std::unique_ptr<State> state_;
};

}  // namespace sieve

// Returns from the calling function when `expr` yields a non-OK Status.
#define SIEVE_RETURN_IF_ERROR(expr)              \
  do {                                           \
    ::sieve::Status _sieve_status = (expr);      \
    if (!_sieve_status.ok()) return _sieve_status; \
  } while (0)

#endif  // SIEVE_INCLUDE_SIEVE_STATUS_H_
