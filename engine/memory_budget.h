// Copyright 2026 The Sieve Authors.
//
// MemoryBudget: the host memory the searches of one DB may hold at once
// (Options::memory_budget_bytes). A search computes what it will allocate, then Reserve()s
// that much before allocating it; a reservation that would overflow the budget waits, first
// come first served, until enough is released.
//
// Thread-safety: every method may be called from any thread.

#ifndef SIEVE_ENGINE_MEMORY_BUDGET_H_
#define SIEVE_ENGINE_MEMORY_BUDGET_H_

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>

namespace sieve {

class MemoryBudget {
 public:
  // Holds `bytes` of the budget until destroyed (or moved from).
  class Reservation {
   public:
    Reservation() = default;
    Reservation(Reservation&& other) noexcept : budget_(other.budget_), bytes_(other.bytes_) {
      other.budget_ = nullptr;
    }
    Reservation& operator=(Reservation&& other) noexcept;
    ~Reservation();
    uint64_t bytes() const { return bytes_; }

   private:
    friend class MemoryBudget;
    Reservation(MemoryBudget* budget, uint64_t bytes) : budget_(budget), bytes_(bytes) {}
    MemoryBudget* budget_ = nullptr;
    uint64_t bytes_ = 0;
  };

  explicit MemoryBudget(uint64_t bytes) : bytes_(bytes) {}
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  uint64_t bytes() const { return bytes_; }
  // Bytes reserved now (for tests and explain).
  uint64_t reserved() const;

  // Waits until `bytes` fit beside the reservations held and every earlier caller has been
  // served, then reserves them. REQUIRES: bytes <= this->bytes() (a larger request could
  // never be served; callers refuse it instead).
  Reservation Reserve(uint64_t bytes);

 private:
  void Release(uint64_t bytes);

  const uint64_t bytes_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  uint64_t reserved_ = 0;
  uint64_t next_ticket_ = 0;     // the ticket the next caller of Reserve takes
  uint64_t serving_ticket_ = 0;  // the ticket that may reserve next
};

// "12.3 GiB (13207024435 bytes)": a size for messages.
std::string DescribeBytes(uint64_t bytes);

}  // namespace sieve

#endif  // SIEVE_ENGINE_MEMORY_BUDGET_H_
