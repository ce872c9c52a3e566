// Copyright 2026 The Sieve Authors.

#include "query/calibrate/records.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace sieve::calibrate {

Status WriteCsv(const std::string& path, const std::vector<Cell>& cells, const SweepConfig& config,
                const std::vector<std::pair<std::string, Rule>>& rules) {
  std::ofstream out(path);
  if (!out) return Status::IOError("file " + path + ": cannot be written");
  out << "mode,overlap,rows,dim,queries,k,dtype,passing,fraction,union_rows,union_fraction,"
         "max_passing,path,ms,reps,status,oracle_path,oracle_ms,penalty";
  for (const auto& [name, rule] : rules) out << ",rule_" << name;
  out << "\n";
  char buf[512];
  for (const Cell& c : cells) {
    const int best = c.best();
    std::vector<std::string> chosen;
    for (const auto& [name, rule] : rules) {
      chosen.push_back(SearchPathName(rule(c.plan_input(config.queries, config.k))));
    }
    for (int p = 0; p < 3; ++p) {
      const char* status = c.failed[p] ? "failed" : c.pruned[p] ? "pruned" : "ok";
      std::snprintf(buf, sizeof(buf),
                    "%s,%s,%llu,%u,%u,%u,%s,%llu,%.8g,%llu,%.8g,%llu,%s,%.6g,%d,%s,%s,%.6g,%.6g",
                    c.per_query ? "bitmap" : "bitset", c.per_query ? OverlapName(c.overlap) : "",
                    static_cast<unsigned long long>(c.rows), c.dim, config.queries, config.k,
                    config.dtype == DType::kFloat16 ? "f16" : "f32",
                    static_cast<unsigned long long>(c.passing), c.fraction(),
                    static_cast<unsigned long long>(c.union_rows), c.union_fraction(),
                    static_cast<unsigned long long>(c.max_passing), SearchPathName(PathAt(p)),
                    c.ms[p], c.reps[p], status, SearchPathName(PathAt(best)), c.best_ms(),
                    c.failed[p] ? 0.0 : c.ms[p] / c.best_ms());
      out << buf;
      for (const auto& name : chosen) out << "," << name;
      out << "\n";
    }
  }
  out.close();
  if (!out) return Status::IOError("file " + path + ": write failed");
  return Status::OK();
}

nlohmann::ordered_json CellJson(const Cell& c) {
  nlohmann::ordered_json j;
  j["mode"] = c.per_query ? "bitmap" : "bitset";
  if (c.per_query) j["overlap"] = OverlapName(c.overlap);
  j["rows"] = c.rows;
  j["dim"] = c.dim;
  j["passing"] = c.passing;
  if (c.per_query) {
    j["union"] = c.union_rows;
    j["max_passing"] = c.max_passing;
  }
  nlohmann::ordered_json ms;
  for (int p = 0; p < 3; ++p) {
    const char* name = SearchPathName(PathAt(p));
    if (c.failed[p])
      ms[name] = nullptr;
    else
      ms[name] = std::round(c.ms[p] * 1e4) / 1e4;
  }
  j["ms"] = ms;
  j["winner"] = SearchPathName(PathAt(c.best()));
  return j;
}

Status ReadCells(const std::string& path, std::vector<Cell>* cells, std::string* device,
                 uint32_t* queries, uint32_t* k) {
  std::ifstream in(path);
  if (!in) return Status::IOError("file " + path + ": cannot be read");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  cells->clear();
  device->clear();
  auto path_index = [](const std::string& name) {
    return name == "sddmm" ? 0 : name == "gather" ? 1 : name == "dense" ? 2 : -1;
  };
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') {
    nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("points") || !j["points"].is_array()) {
      return Status::InvalidArgument("file " + path + ": not a calibrate summary (no points)");
    }
    if (j.contains("device") && j["device"].is_string()) *device = j["device"].get<std::string>();
    for (const auto& p : j["points"]) {
      Cell c;
      try {
        c.per_query = p.at("mode").get<std::string>() == "bitmap";
        if (c.per_query) {
          SIEVE_RETURN_IF_ERROR(ParseOverlap(p.at("overlap").get<std::string>(), &c.overlap));
        }
        c.rows = p.at("rows").get<uint64_t>();
        c.dim = p.at("dim").get<uint32_t>();
        c.passing = p.at("passing").get<uint64_t>();
        c.union_rows = p.value("union", c.passing);
        c.max_passing = p.value("max_passing", c.passing);
        for (const auto& [name, v] : p.at("ms").items()) {
          const int i = path_index(name);
          if (i < 0) continue;
          if (v.is_null()) {
            c.failed[i] = true;
            c.ms[i] = std::numeric_limits<double>::quiet_NaN();
          } else {
            c.ms[i] = v.get<double>();
            c.reps[i] = 1;
          }
        }
      } catch (const nlohmann::json::exception& e) {
        return Status::InvalidArgument("file " + path + ": a point is malformed: " + e.what());
      }
      cells->push_back(c);
    }
    return Status::OK();
  }
  // CSV: one line per cell × path, the columns named by the header.
  std::istringstream lines(text);
  std::string line;
  std::vector<std::string> header;
  auto split = [](const std::string& l) {
    std::vector<std::string> out;
    size_t start = 0;
    while (true) {
      const size_t end = l.find(',', start);
      out.push_back(l.substr(start, end == std::string::npos ? std::string::npos : end - start));
      if (end == std::string::npos) break;
      start = end + 1;
    }
    return out;
  };
  if (!std::getline(lines, line)) return Status::InvalidArgument("file " + path + ": empty");
  header = split(line);
  auto col = [&](const char* name) {
    auto it = std::find(header.begin(), header.end(), name);
    return it == header.end() ? -1 : static_cast<int>(it - header.begin());
  };
  const int c_mode = col("mode"), c_overlap = col("overlap"), c_rows = col("rows"),
            c_dim = col("dim"), c_queries = col("queries"), c_k = col("k"),
            c_passing = col("passing"), c_union = col("union_rows"), c_max = col("max_passing"),
            c_path = col("path"), c_ms = col("ms"), c_reps = col("reps"), c_status = col("status");
  if (c_mode < 0 || c_rows < 0 || c_dim < 0 || c_passing < 0 || c_union < 0 || c_path < 0 ||
      c_ms < 0 || c_status < 0) {
    return Status::InvalidArgument("file " + path +
                                   ": neither a calibrate summary nor a bench CSV");
  }
  std::map<std::tuple<std::string, std::string, uint64_t, uint32_t, uint64_t>, size_t> index;
  size_t line_no = 1;
  while (std::getline(lines, line)) {
    ++line_no;
    if (line.empty()) continue;
    const std::vector<std::string> f = split(line);
    if (f.size() < header.size()) {
      return Status::InvalidArgument("file " + path + ", line " + std::to_string(line_no) +
                                     ": too few columns");
    }
    const uint64_t rows = std::strtoull(f[c_rows].c_str(), nullptr, 10);
    const uint32_t dim = static_cast<uint32_t>(std::strtoul(f[c_dim].c_str(), nullptr, 10));
    const uint64_t passing = std::strtoull(f[c_passing].c_str(), nullptr, 10);
    const std::string overlap = c_overlap >= 0 ? f[c_overlap] : "";
    auto key = std::make_tuple(f[c_mode], overlap, rows, dim, passing);
    auto it = index.find(key);
    if (it == index.end()) {
      Cell c;
      c.per_query = f[c_mode] == "bitmap";
      if (c.per_query) SIEVE_RETURN_IF_ERROR(ParseOverlap(overlap, &c.overlap));
      c.rows = rows;
      c.dim = dim;
      c.passing = passing;
      c.union_rows = std::strtoull(f[c_union].c_str(), nullptr, 10);
      c.max_passing =
          c_max >= 0 && !f[c_max].empty() ? std::strtoull(f[c_max].c_str(), nullptr, 10) : passing;
      it = index.emplace(key, cells->size()).first;
      cells->push_back(c);
      if (c_queries >= 0) *queries = static_cast<uint32_t>(std::stoul(f[c_queries]));
      if (c_k >= 0) *k = static_cast<uint32_t>(std::stoul(f[c_k]));
    }
    Cell& c = (*cells)[it->second];
    const int i = path_index(f[c_path]);
    if (i < 0) continue;
    c.ms[i] = std::strtod(f[c_ms].c_str(), nullptr);
    c.reps[i] = c_reps >= 0 ? std::atoi(f[c_reps].c_str()) : 1;
    c.failed[i] = f[c_status] == "failed";
    c.pruned[i] = f[c_status] == "pruned";
    if (c.failed[i]) c.ms[i] = std::numeric_limits<double>::quiet_NaN();
  }
  return Status::OK();
}

}  // namespace sieve::calibrate
