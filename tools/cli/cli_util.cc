// Copyright 2026 The Sieve Authors.

#include "tools/cli/cli_util.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "tools/cli/flags.h"

namespace sieve::cli {

int Fail(const char* cmd, const Status& s) {
  std::string msg = s.message().empty() ? s.ToString() : s.message();
  for (char& c : msg) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  std::fprintf(stderr, "sieve %s: %s\n", cmd, msg.c_str());
  return 1;
}

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

Status ParseNumberList(const Flags& flags, const std::string& name, double lo, double hi,
                       std::vector<double>* out) {
  if (!flags.Has(name)) return Status::OK();
  out->clear();
  for (const std::string& item : SplitList(flags.Get(name))) {
    char* end = nullptr;
    const double v = std::strtod(item.c_str(), &end);
    if (end == item.c_str() || *end != '\0' || !(v >= lo && v <= hi)) {
      return Status::InvalidArgument("--" + name + ": '" + item + "' is not a number in [" +
                                     std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
    out->push_back(v);
  }
  if (out->empty()) return Status::InvalidArgument("--" + name + " is empty");
  return Status::OK();
}

Status OpenDb(const std::string& path, OpenFor mode, std::unique_ptr<DB>* db,
              uint64_t memory_budget_bytes, const Options& base) {
  Options o = base;
  o.create_if_missing = mode == OpenFor::kCreate;
  o.read_only = mode == OpenFor::kRead;
  o.memory_budget_bytes = memory_budget_bytes;
  return DB::Open(o, path, db);
}

Status ParseDevices(const std::string& flag, const std::string& text, std::vector<int>* devices) {
  devices->clear();
  if (text == "all") return Status::OK();
  size_t start = 0;
  while (true) {
    const size_t end = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, end - start);
    int v = 0;
    bool ok = !item.empty() && item.size() <= 4;
    for (char ch : item) {
      ok = ok && ch >= '0' && ch <= '9';
      if (ok) v = v * 10 + (ch - '0');
    }
    if (!ok || v > 1023) {
      return Status::InvalidArgument("--" + flag + ": '" + item +
                                     "' is not a CUDA device number (0 to 1023); give a "
                                     "comma-separated list such as 0,1,2,3, or all");
    }
    devices->push_back(v);
    if (end == text.size()) break;
    start = end + 1;
  }
  return Status::OK();
}

Status ParseMemoryBudget(const std::string& flag, const std::string& text, uint64_t* bytes) {
  if (text == "auto") {
    *bytes = 0;
    return Status::OK();
  }
  const Status bad = Status::InvalidArgument(
      "--" + flag + ": '" + text + "' is not a byte count (e.g. 1073741824, 512M, 2GiB) or auto");
  size_t i = 0;
  uint64_t v = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    const uint64_t digit = static_cast<uint64_t>(text[i] - '0');
    if (v > (UINT64_MAX - digit) / 10) return bad;
    v = v * 10 + digit;
    ++i;
  }
  if (i == 0) return bad;
  std::string suffix;
  for (; i < text.size(); ++i) suffix += static_cast<char>(std::tolower(text[i]));
  int shift = 0;
  if (suffix.empty() || suffix == "b") {
    shift = 0;
  } else if (suffix == "k" || suffix == "kib") {
    shift = 10;
  } else if (suffix == "m" || suffix == "mib") {
    shift = 20;
  } else if (suffix == "g" || suffix == "gib") {
    shift = 30;
  } else if (suffix == "t" || suffix == "tib") {
    shift = 40;
  } else {
    return bad;
  }
  if (v > (UINT64_MAX >> shift)) return bad;
  v <<= shift;
  if (v == 0) {
    return Status::InvalidArgument("--" + flag + ": the budget must be positive (or auto)");
  }
  *bytes = v;
  return Status::OK();
}

namespace {

int Usage(const char* cmd, const Status& s) {
  std::fprintf(stderr, "sieve %s: %s (see sieve %s --help)\n", cmd, s.message().c_str(), cmd);
  return 1;
}

}  // namespace

int ParseFlags(const char* cmd, const char* usage, const std::vector<std::string>& args,
               Flags* flags, std::string* db_path, const char* more_usage) {
  Status s = flags->Parse(args);
  if (flags->help()) {
    std::fputs(usage, stdout);
    if (more_usage != nullptr) std::fputs(more_usage, stdout);
    return 0;
  }
  if (!s.ok()) return Usage(cmd, s);
  if (flags->positional().empty()) {
    return Usage(cmd, Status::InvalidArgument("missing the database path"));
  }
  *db_path = flags->positional()[0];
  return -1;
}

const char* const kEngineFlags[4] = {"devices", "cpu-executors", "device-memory",
                                     "first-use-calibration"};

const char kEngineFlagsUsage[] =
    "  --devices: the CUDA devices a GPU search spreads the collection's shards over, e.g.\n"
    "    0,1,2,3 (a number may repeat: several executors on one GPU); default all\n"
    "  --cpu-executors: CPU executors a CPU search spreads the shards over (default 1)\n"
    "  --device-memory: bytes of resident rows each device may hold (e.g. 80G; default\n"
    "    auto: what the executor says, else no limit)\n"
    "  --first-use-calibration: on a GPU without a calibration stored in DB, whether the\n"
    "    first search calibrates it (a sweep of seconds, announced on stderr, stored in DB\n"
    "    unless it is read-only): unknown (default) on GPUs without shipped thresholds, off\n"
    "    never, always on every GPU\n";

Status ParseEngineFlags(const Flags& flags, Options* engine) {
  SIEVE_RETURN_IF_ERROR(ParseDevices("devices", flags.Get("devices", "all"), &engine->devices));
  long long cpu_executors = 1;
  SIEVE_RETURN_IF_ERROR(flags.GetInt("cpu-executors", 1, 1, 1024, &cpu_executors));
  engine->cpu_executors = static_cast<uint32_t>(cpu_executors);
  if (flags.Has("device-memory")) {
    SIEVE_RETURN_IF_ERROR(ParseMemoryBudget("device-memory", flags.Get("device-memory"),
                                            &engine->device_memory_bytes));
  }
  const std::string mode = flags.Get("first-use-calibration", "unknown");
  using Mode = FirstUseCalibration::Mode;
  if (mode == "unknown") {
    engine->first_use_calibration.mode = Mode::kUnknownDevices;
  } else if (mode == "off") {
    engine->first_use_calibration.mode = Mode::kOff;
  } else if (mode == "always") {
    engine->first_use_calibration.mode = Mode::kAlways;
  } else {
    return Status::InvalidArgument("--first-use-calibration is unknown, off or always, got '" +
                                   mode + "'");
  }
  return Status::OK();
}

}  // namespace sieve::cli
