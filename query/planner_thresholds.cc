// Copyright 2026 The Sieve Authors.
//
// PlannerRule's stored form (a Store setting per device, storage/FORMAT.md): one JSON object,
// versioned; fields added after the first format may be missing and read as their defaults.
// And the public, opaque PlannerThresholds, which holds that text.

#include <cmath>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "query/planner.h"
#include "sieve/db.h"

namespace sieve {

std::string PlannerRule::ToJson() const {
  nlohmann::ordered_json j;
  j["version"] = PlannerThresholds::kVersion;
  j["sddmm_max_rows"] = sddmm_max_rows;
  j["sddmm_dim_exponent"] = sddmm_dim_exponent;
  j["sddmm_max_fraction"] = sddmm_max_fraction;
  j["gather_min_rows"] = gather_min_rows;
  j["gather_scale"] = gather_scale;
  j["gather_max_fraction"] = gather_max_fraction;
  j["gather_rows_exponent"] = gather_rows_exponent;
  j["gather_rows_dim_exponent"] = gather_rows_dim_exponent;
  j["bitmap_sddmm_max_rows"] = bitmap_sddmm_max_rows;
  j["bitmap_sddmm_max_fraction"] = bitmap_sddmm_max_fraction;
  j["bitmap_sddmm_base_rows"] = bitmap_sddmm_base_rows;
  j["bitmap_sddmm_max_share"] = bitmap_sddmm_max_share;
  j["bitmap_sddmm_rows_exponent"] = bitmap_sddmm_rows_exponent;
  j["bitmap_sddmm_dim_exponent"] = bitmap_sddmm_dim_exponent;
  j["bitmap_union_gather"] = bitmap_union_gather;
  j["bitmap_gather_max_fraction"] = bitmap_gather_max_fraction;
  j["bitmap_gather_scale"] = bitmap_gather_scale;
  j["bitmap_gather_dim_exponent"] = bitmap_gather_dim_exponent;
  j["bitmap_gather_rows_exponent"] = bitmap_gather_rows_exponent;
  j["source"] = source;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Status PlannerRule::FromJson(const std::string& text, PlannerRule* out) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Status::InvalidArgument("planner thresholds: not a JSON object");
  auto version = j.find("version");
  if (version != j.end() &&
      (!version->is_number_unsigned() || version->get<uint64_t>() < 1 ||
       version->get<uint64_t>() > static_cast<uint64_t>(PlannerThresholds::kVersion))) {
    return Status::InvalidArgument(
        "planner thresholds: 'version' " + version->dump() + " is not a format this release "
        "reads (1 to " + std::to_string(PlannerThresholds::kVersion) +
        "; a newer Sieve wrote it)");
  }
  PlannerRule t;
  auto count = [&](const char* key, uint64_t* v) -> Status {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_unsigned()) {
      return Status::InvalidArgument(std::string("planner thresholds: '") + key +
                                     "' is missing or not a non-negative integer");
    }
    *v = it->get<uint64_t>();
    return Status::OK();
  };
  auto number = [&](const char* key, double* v, double hi) -> Status {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number() || !std::isfinite(it->get<double>()) ||
        it->get<double>() < 0 || it->get<double>() > hi) {
      return Status::InvalidArgument(std::string("planner thresholds: '") + key +
                                     "' is missing or not a number in [0, " + std::to_string(hi) +
                                     "]");
    }
    *v = it->get<double>();
    return Status::OK();
  };
  const double kHuge = std::numeric_limits<double>::max();
  // Fields added after the first stored format may be missing: an older calibration keeps
  // the meaning it was fitted with (no dim scaling, no base count).
  auto optional = [&](const char* key, double* v, double hi) -> Status {
    return j.contains(key) ? number(key, v, hi) : Status::OK();
  };
  SIEVE_RETURN_IF_ERROR(count("sddmm_max_rows", &t.sddmm_max_rows));
  SIEVE_RETURN_IF_ERROR(optional("sddmm_dim_exponent", &t.sddmm_dim_exponent, 8.0));
  SIEVE_RETURN_IF_ERROR(number("sddmm_max_fraction", &t.sddmm_max_fraction, 1.0));
  SIEVE_RETURN_IF_ERROR(number("gather_min_rows", &t.gather_min_rows, kHuge));
  SIEVE_RETURN_IF_ERROR(number("gather_scale", &t.gather_scale, kHuge));
  SIEVE_RETURN_IF_ERROR(number("gather_max_fraction", &t.gather_max_fraction, 1.0));
  SIEVE_RETURN_IF_ERROR(optional("gather_rows_exponent", &t.gather_rows_exponent, 8.0));
  SIEVE_RETURN_IF_ERROR(optional("gather_rows_dim_exponent", &t.gather_rows_dim_exponent, 8.0));
  SIEVE_RETURN_IF_ERROR(count("bitmap_sddmm_max_rows", &t.bitmap_sddmm_max_rows));
  SIEVE_RETURN_IF_ERROR(number("bitmap_sddmm_max_fraction", &t.bitmap_sddmm_max_fraction, 1.0));
  SIEVE_RETURN_IF_ERROR(optional("bitmap_sddmm_base_rows", &t.bitmap_sddmm_base_rows, kHuge));
  SIEVE_RETURN_IF_ERROR(optional("bitmap_sddmm_max_share", &t.bitmap_sddmm_max_share, 1.0));
  SIEVE_RETURN_IF_ERROR(
      optional("bitmap_sddmm_rows_exponent", &t.bitmap_sddmm_rows_exponent, 8.0));
  SIEVE_RETURN_IF_ERROR(
      optional("bitmap_sddmm_dim_exponent", &t.bitmap_sddmm_dim_exponent, 8.0));
  auto g = j.find("bitmap_union_gather");
  if (g == j.end() || !g->is_boolean()) {
    return Status::InvalidArgument(
        "planner thresholds: 'bitmap_union_gather' is missing or not a boolean");
  }
  t.bitmap_union_gather = g->get<bool>();
  SIEVE_RETURN_IF_ERROR(number("bitmap_gather_max_fraction", &t.bitmap_gather_max_fraction, 1.0));
  SIEVE_RETURN_IF_ERROR(optional("bitmap_gather_scale", &t.bitmap_gather_scale, kHuge));
  SIEVE_RETURN_IF_ERROR(optional("bitmap_gather_dim_exponent", &t.bitmap_gather_dim_exponent, 8.0));
  SIEVE_RETURN_IF_ERROR(
      optional("bitmap_gather_rows_exponent", &t.bitmap_gather_rows_exponent, 8.0));
  auto src = j.find("source");
  if (src != j.end() && src->is_string()) t.source = src->get<std::string>();
  *out = std::move(t);
  return Status::OK();
}

PlannerThresholds ToThresholds(const PlannerRule& rule) {
  PlannerThresholds t;
  // The rule's own text always reads back; an allocation failure is the only way it cannot.
  if (!PlannerThresholds::FromJson(rule.ToJson(), &t).ok()) return PlannerThresholds();
  return t;
}

Status FromThresholds(const PlannerThresholds& thresholds, PlannerRule* rule) {
  if (thresholds.empty()) return Status::InvalidArgument("planner thresholds: empty");
  return PlannerRule::FromJson(thresholds.ToJson(), rule);
}

Status PlannerThresholds::FromJson(const std::string& text, PlannerThresholds* out) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  PlannerRule rule;
  SIEVE_RETURN_IF_ERROR(PlannerRule::FromJson(text, &rule));
  PlannerThresholds t;
  t.version_ = j.contains("version") ? j["version"].get<int>() : 1;
  t.source_ = rule.source;
  // Held in the current format: what a stored older calibration meant, written anew.
  t.json_ = rule.ToJson();
  *out = std::move(t);
  return Status::OK();
}

PlannerThresholds PlannerThresholds::DefaultsFor(const std::string& executor_name) {
  return ToThresholds(PlannerRule::DefaultsFor(executor_name));
}

}  // namespace sieve
