// Copyright 2026 The Sieve Authors.
//
// Which executors a search runs on and the planner thresholds each plans with: the calibration
// stored in the database for that device, else the defaults of its kind, after a first-use
// calibration where Options::first_use_calibration asks for one.

#include <cstdio>
#include <string>

#include "engine/db_impl.h"
#include "engine/db_util.h"
#include "query/calibrate/calibration.h"
#include "query/calibrate/grid.h"

namespace sieve {

namespace {

// The Store setting that holds a device's calibrated planner thresholds (storage/FORMAT.md).
const std::string kPlannerSettingPrefix = "planner/";

}  // namespace

Status DBImpl::ExecutorFor(Device device, Executor** executor, PlannerRule* thresholds) {
  Device resolved = Device::kCpu;
  SIEVE_RETURN_IF_ERROR(executors_->Resolve(device, executor, &resolved));
  return ThresholdsOf(*executor, resolved == Device::kGpu, /*first_use=*/false, thresholds);
}

Status DBImpl::DevicesFor(Device device, DeviceSet** set,
                          std::vector<PlannerRule>* thresholds) {
  Device resolved = Device::kCpu;
  SIEVE_RETURN_IF_ERROR(executors_->ResolveSet(device, set, &resolved));
  thresholds->resize((*set)->size());
  for (size_t i = 0; i < (*set)->size(); ++i) {
    SIEVE_RETURN_IF_ERROR(ThresholdsOf((*set)->executor(i), resolved == Device::kGpu,
                                       /*first_use=*/true, &(*thresholds)[i]));
  }
  return Status::OK();
}

Status DBImpl::ResolveDevices(Device device, DeviceSet** set,
                              std::vector<PlannerRule>* thresholds, Explain* explain) {
  SIEVE_RETURN_IF_ERROR(DevicesFor(device, set, thresholds));
  explain->device = (*set)->executor(0)->name();
  explain->thresholds = (*thresholds)[0].source;
  for (size_t d = 1; d < thresholds->size(); ++d) {
    if ((*thresholds)[d].source != (*thresholds)[0].source) {
      explain->thresholds += "; " + (*set)->label(d) + ": " + (*thresholds)[d].source;
    }
  }
  return Status::OK();
}

Status DBImpl::ThresholdsOf(Executor* executor, bool gpu, bool first_use,
                            PlannerRule* thresholds) {
  const std::string name = executor->name();
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = thresholds_.find(name);
    if (it != thresholds_.end()) {
      *thresholds = it->second;
      return Status::OK();
    }
    bool stored = false;
    SIEVE_RETURN_IF_ERROR(StoredThresholdsOf(name, gpu, thresholds, &stored));
    const bool due = !stored && WantsFirstUseCalibration(name, gpu);
    // Defaults that a first search will replace are not kept: reading them calibrates nothing.
    if (!due) thresholds_.emplace(name, *thresholds);
    if (!due || !first_use) return Status::OK();
  }
  // The first search on a GPU without thresholds of its own calibrates it, once: searches of
  // the same device wait here, the others go on (mu_ is not held while it runs).
  std::lock_guard<std::mutex> once(first_use_mu_);
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = thresholds_.find(name);
    if (it != thresholds_.end()) {
      *thresholds = it->second;
      return Status::OK();
    }
  }
  CalibrateFirstUse(executor, thresholds);
  std::lock_guard<std::mutex> l(mu_);
  thresholds_.emplace(name, *thresholds);
  return Status::OK();
}

Status DBImpl::StoredThresholdsOf(const std::string& name, bool gpu,
                                  PlannerRule* thresholds, bool* stored) {
  // A GPU by its name (shipped thresholds where the project has some); a stand-in executor
  // serving GPU searches (tests) as any GPU.
  *thresholds = !gpu                         ? PlannerRule::CpuDefaults()
                : name.rfind("gpu", 0) == 0 ? PlannerRule::DefaultsFor(name)
                                            : PlannerRule::GpuDefaults();
  *stored = false;
  std::string value;
  Status s = store_->GetSetting(kPlannerSettingPrefix + name, &value);
  if (s.IsNotFound() || s.IsNotSupported()) return Status::OK();
  SIEVE_RETURN_IF_ERROR(s);
  s = PlannerRule::FromJson(value, thresholds);
  if (!s.ok()) {
    return Status::Corruption("the stored planner calibration of '" + name +
                              "': " + s.message() + " (run sieve calibrate again)");
  }
  *stored = true;
  return Status::OK();
}

bool DBImpl::WantsFirstUseCalibration(const std::string& name, bool gpu) const {
  using Mode = FirstUseCalibration::Mode;
  if (!gpu || first_use_.mode == Mode::kOff) return false;
  return first_use_.mode == Mode::kAlways || !HasShippedThresholds(name);
}

void DBImpl::CalibrateFirstUse(Executor* executor, PlannerRule* thresholds) {
  const std::string name = executor->name();
  auto say = [&](const std::string& line) {
    if (first_use_.notice) {
      first_use_.notice(line);
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
  };
  char line[512];
  std::snprintf(line, sizeof(line),
                "sieve: %s has no planner calibration in this database; calibrating it for "
                "first use (at most %.0f s; Options::first_use_calibration)",
                name.c_str(), first_use_.time_limit_s);
  say(line);
  const PlannerRule defaults = *thresholds;
  calibrate::SweepConfig config = calibrate::FirstUseGrid(first_use_.max_rows);
  config.time_limit_s = first_use_.time_limit_s;
  calibrate::Calibration report;
  // With shards of at most 2M rows the fit leaves the gather cap without a fall with the rows.
  Status s = calibrate::Calibrate(executor, config, defaults, "first use", /*note_cut=*/true, {},
                                  &report);
  if (s.ok()) *thresholds = report.thresholds;
  if (!s.ok()) {
    *thresholds = defaults;
    say("sieve: the first-use calibration of " + name + " failed (" + s.ToString() +
        "); it plans with " + defaults.source + " until `sieve calibrate` runs");
    return;
  }
  // Stored (and cached) as `sieve calibrate` stores its own; a read-only store refuses it.
  s = StoreRule(name, *thresholds);
  std::snprintf(line, sizeof(line),
                "sieve: calibrated %s in %.1f s (%zu points%s): %s; %s", name.c_str(),
                report.seconds, report.cells.size(),
                report.complete ? "" : ", the time limit cut the sweep",
                DescribeThresholds(*thresholds).c_str(),
                s.ok() ? "stored in the database (`sieve calibrate --quick` fits a wider grid)"
                       : ("not stored (" + s.ToString() +
                          "): used until the database closes; `sieve calibrate` stores one")
                             .c_str());
  say(line);
}

Status DBImpl::GetPlannerThresholds(Device device, PlannerThresholds* thresholds,
                                    std::string* device_name) {
  Executor* executor = nullptr;
  PlannerRule rule;
  SIEVE_RETURN_IF_ERROR(ExecutorFor(device, &executor, &rule));
  *thresholds = ToThresholds(rule);
  *device_name = executor->name();
  return Status::OK();
}

Status DBImpl::PutPlannerThresholds(const std::string& device_name,
                                    const PlannerThresholds& thresholds) {
  PlannerRule rule;
  SIEVE_RETURN_IF_ERROR(FromThresholds(thresholds, &rule));
  return StoreRule(device_name, rule);
}

Status DBImpl::StoreRule(const std::string& device_name, const PlannerRule& rule) {
  if (device_name.empty()) return Status::InvalidArgument("planner thresholds: no device name");
  // Round-trip through the stored form so that what is cached is exactly what a reopen reads.
  const std::string value = rule.ToJson();
  PlannerRule parsed;
  SIEVE_RETURN_IF_ERROR(PlannerRule::FromJson(value, &parsed));
  std::lock_guard<std::mutex> l(mu_);
  SIEVE_RETURN_IF_ERROR(store_->PutSetting(kPlannerSettingPrefix + device_name, value));
  thresholds_[device_name] = std::move(parsed);
  return Status::OK();
}

}  // namespace sieve
