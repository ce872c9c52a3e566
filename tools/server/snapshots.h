// Copyright 2026 The Sieve Authors.
//
// Snapshots: the server's snapshot tokens. A client opens one (POST /snapshots, or a scroll
// with "snapshot": true) and names it in later reads, which then read the DB snapshot behind
// it (DB::GetSnapshot). A token is released when the client says so (DELETE /snapshots/TOKEN),
// when the scroll that opened it returns its last page, or when no read has used it for the
// idle timeout, so that a client that goes away does not hold the rows' memory for ever. A
// read holds a Lease for as long as it runs: a token is never released under a read.
//
// Thread-safety: every method may be called from many threads at once. The DB must outlive
// this object; the destructor releases every snapshot still open.

#ifndef SIEVE_TOOLS_SERVER_SNAPSHOTS_H_
#define SIEVE_TOOLS_SERVER_SNAPSHOTS_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "sieve/db.h"
#include "sieve/status.h"

namespace sieve::server {

class Snapshots {
 public:
  using Clock = std::chrono::steady_clock;

  Snapshots(DB* db, std::chrono::milliseconds idle_timeout);
  ~Snapshots();
  Snapshots(const Snapshots&) = delete;
  Snapshots& operator=(const Snapshots&) = delete;

  // A snapshot in use by one read; the read ends when the lease is destroyed.
  class Lease {
   public:
    Lease(Snapshots* owner, std::string token, const Snapshot* snapshot)
        : owner_(owner), token_(std::move(token)), snapshot_(snapshot) {}
    ~Lease() { owner_->Return(token_); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    const Snapshot* snapshot() const { return snapshot_; }
    const std::string& token() const { return token_; }

   private:
    Snapshots* const owner_;
    const std::string token_;
    const Snapshot* const snapshot_;
  };

  // Opens a snapshot and gives its token. `scroll`: the scroll that opened it releases it
  // with its last page (EndScroll).
  Status Open(bool scroll, std::string* token);
  // The snapshot behind `token`, leased. NotFound (naming the token and why it may be gone)
  // when it is unknown, released or expired.
  Status Acquire(const std::string& token, std::shared_ptr<Lease>* lease);
  // Releases `token` (now, or when the last read using it ends). NotFound as Acquire.
  Status Release(const std::string& token);
  // A scroll read its last page with `token`: released when a scroll opened it.
  void EndScroll(const std::string& token);

  int64_t idle_timeout_s() const;
  size_t open() const;  // tokens open now (tests, metrics)

 private:
  struct Entry {
    const Snapshot* snapshot = nullptr;
    Clock::time_point last_used;
    int in_use = 0;
    bool scroll = false;
    bool released = false;  // released by the client while in use: freed by the last Return
  };
  void Return(const std::string& token);
  // Releases every idle entry past the timeout. REQUIRES: mu_ held.
  void ExpireLocked(Clock::time_point now);
  void FreeLocked(std::map<std::string, Entry>::iterator it);

  DB* const db_;
  const std::chrono::milliseconds idle_timeout_;
  mutable std::mutex mu_;
  std::map<std::string, Entry> entries_;
};

}  // namespace sieve::server

#endif  // SIEVE_TOOLS_SERVER_SNAPSHOTS_H_
