// Copyright 2026 The Sieve Authors.
//
// Include this instead of <roaring/roaring.hh> wherever roaring::Roaring (the type of
// ShardState::deleted) is used. CRoaring before 0.3 (Debian 12 ships 0.2.66) declares its C++
// class as ::Roaring; there this header defines roaring::Roaring as a thin subclass — a class,
// not an alias, so that `namespace roaring { class Roaring; }` forward declarations stay valid
// with every CRoaring version. SIEVE_ROARING_HAS_NAMESPACE comes from storage/CMakeLists.txt.

#ifndef SIEVE_STORAGE_ROARING_H_
#define SIEVE_STORAGE_ROARING_H_

#include <roaring/roaring.hh>
#include <utility>

#if !defined(SIEVE_ROARING_HAS_NAMESPACE)
#error "SIEVE_ROARING_HAS_NAMESPACE is undefined: link the target against sieve_storage"
#endif

#if !SIEVE_ROARING_HAS_NAMESPACE
namespace roaring {

class Roaring : public ::Roaring {
 public:
  using ::Roaring::Roaring;
  Roaring() = default;
  Roaring(const ::Roaring& r) : ::Roaring(r) {}  // NOLINT: implicit, as results of ::Roaring ops
  Roaring(::Roaring&& r) noexcept : ::Roaring(std::move(r)) {}  // NOLINT
};

}  // namespace roaring
#endif

#endif  // SIEVE_STORAGE_ROARING_H_
