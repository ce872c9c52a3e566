// Copyright 2026 The Sieve Authors.

#include "tools/server/snapshots.h"

#include <utility>
#include <vector>

namespace sieve::server {

Snapshots::Snapshots(DB* db, std::chrono::milliseconds idle_timeout)
    : db_(db), idle_timeout_(idle_timeout) {}

Snapshots::~Snapshots() {
  std::lock_guard<std::mutex> l(mu_);
  for (auto& [token, e] : entries_) (void)db_->ReleaseSnapshot(e.snapshot);
  entries_.clear();
}

int64_t Snapshots::idle_timeout_s() const {
  return std::chrono::duration_cast<std::chrono::seconds>(idle_timeout_).count();
}

size_t Snapshots::open() const {
  std::lock_guard<std::mutex> l(mu_);
  return entries_.size();
}

Status Snapshots::Open(bool scroll, std::string* token) {
  const Snapshot* snapshot = nullptr;
  SIEVE_RETURN_IF_ERROR(db_->GetSnapshot(&snapshot));
  std::lock_guard<std::mutex> l(mu_);
  const Clock::time_point now = Clock::now();
  ExpireLocked(now);
  *token = "s" + std::to_string(snapshot->id());
  Entry& e = entries_[*token];
  e.snapshot = snapshot;
  e.last_used = now;
  e.scroll = scroll;
  return Status::OK();
}

Status Snapshots::Acquire(const std::string& token, std::shared_ptr<Lease>* lease) {
  std::lock_guard<std::mutex> l(mu_);
  const Clock::time_point now = Clock::now();
  ExpireLocked(now);
  auto it = entries_.find(token);
  if (it == entries_.end() || it->second.released) {
    return Status::NotFound("snapshot '" + token + "' is not open: it was released, its " +
                            "scroll ended, or no read used it for " +
                            std::to_string(idle_timeout_s()) + " s (open one with POST " +
                            "/snapshots, or a scroll with \"snapshot\": true)");
  }
  ++it->second.in_use;
  it->second.last_used = now;
  *lease = std::make_shared<Lease>(this, token, it->second.snapshot);
  return Status::OK();
}

Status Snapshots::Release(const std::string& token) {
  std::lock_guard<std::mutex> l(mu_);
  ExpireLocked(Clock::now());
  auto it = entries_.find(token);
  if (it == entries_.end() || it->second.released) {
    return Status::NotFound("snapshot '" + token + "' is not open");
  }
  if (it->second.in_use > 0) {
    it->second.released = true;
  } else {
    FreeLocked(it);
  }
  return Status::OK();
}

void Snapshots::EndScroll(const std::string& token) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = entries_.find(token);
  if (it == entries_.end() || !it->second.scroll) return;
  // The page being answered holds a lease: freed when it ends.
  it->second.released = true;
  if (it->second.in_use == 0) FreeLocked(it);
}

void Snapshots::Return(const std::string& token) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = entries_.find(token);
  if (it == entries_.end()) return;
  Entry& e = it->second;
  --e.in_use;
  e.last_used = Clock::now();
  if (e.in_use == 0 && e.released) FreeLocked(it);
}

void Snapshots::ExpireLocked(Clock::time_point now) {
  for (auto it = entries_.begin(); it != entries_.end();) {
    auto next = std::next(it);
    if (it->second.in_use == 0 && now - it->second.last_used > idle_timeout_) FreeLocked(it);
    it = next;
  }
}

void Snapshots::FreeLocked(std::map<std::string, Entry>::iterator it) {
  (void)db_->ReleaseSnapshot(it->second.snapshot);
  entries_.erase(it);
}

}  // namespace sieve::server
