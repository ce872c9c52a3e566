// Copyright 2026 The Sieve Authors.

#ifndef SIEVE_ENGINE_NO_THROW_DB_INL_H_
#define SIEVE_ENGINE_NO_THROW_DB_INL_H_

#include <exception>
#include <new>
#include <stdexcept>
#include <string>

namespace sieve {

namespace no_throw_detail {

// Building the message allocates too. By the time a handler runs the failed operation's own
// buffers are unwound and freed, so it normally succeeds; when it does not, the code alone is
// returned (a Status with an empty message allocates only its small state).
inline Status Make(Status::Code code, const char* what, const char* detail,
                   const char* more = "") noexcept {
  try {
    std::string msg = std::string(what) + ": " + detail + more;
    return code == Status::Code::kResourceExhausted ? Status::ResourceExhausted(msg)
                                                    : Status::Internal(msg);
  } catch (...) {
  }
  try {
    return code == Status::Code::kResourceExhausted ? Status::ResourceExhausted("")
                                                    : Status::Internal("");
  } catch (...) {
    // Not even the small state could be allocated: nothing can be reported but the failure.
    std::terminate();
  }
}

}  // namespace no_throw_detail

template <typename Fn>
Status CatchExceptions(const char* what, Fn&& fn) noexcept {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    return no_throw_detail::Make(Status::Code::kResourceExhausted, what, "out of host memory");
  } catch (const std::length_error& e) {
    return no_throw_detail::Make(Status::Code::kResourceExhausted, what,
                                 "a buffer would exceed its maximum size: ", e.what());
  } catch (const std::exception& e) {
    return no_throw_detail::Make(Status::Code::kInternal, what, e.what());
  } catch (...) {
    return no_throw_detail::Make(Status::Code::kInternal, what, "unknown exception");
  }
}

}  // namespace sieve

#endif  // SIEVE_ENGINE_NO_THROW_DB_INL_H_
