// Copyright 2026 The Sieve Authors.
//
// For tests that look inside a device's planner thresholds: the rule behind the opaque
// PlannerThresholds a DB gives (query/planner.h).

#ifndef SIEVE_TESTS_PLANNER_RULE_UTIL_H_
#define SIEVE_TESTS_PLANNER_RULE_UTIL_H_

#include <string>

#include "query/planner.h"
#include "sieve/db.h"

namespace sieve::test {

// DB::GetPlannerThresholds, read as the rule it holds.
inline Status GetRule(DB* db, Device device, PlannerRule* rule, std::string* device_name) {
  PlannerThresholds t;
  SIEVE_RETURN_IF_ERROR(db->GetPlannerThresholds(device, &t, device_name));
  return FromThresholds(t, rule);
}

}  // namespace sieve::test

#endif  // SIEVE_TESTS_PLANNER_RULE_UTIL_H_
