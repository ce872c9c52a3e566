// Copyright 2026 The Sieve Authors.
//
// The recorded forms of a sweep: the CSV of `sieve bench --csv` (one row per cell × path) and
// the points of a `sieve calibrate` summary (JSON), written here and read back here for
// `sieve calibrate --refit`.

#ifndef SIEVE_QUERY_CALIBRATE_RECORDS_H_
#define SIEVE_QUERY_CALIBRATE_RECORDS_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "sieve/status.h"
#include "query/calibrate/cell.h"
#include "query/calibrate/score.h"
#include "query/calibrate/sweep.h"

namespace sieve::calibrate {

// CSV: one row per cell × path (header first), with the chosen path of each named rule.
// IOError when the file cannot be written.
Status WriteCsv(const std::string& path, const std::vector<Cell>& cells, const SweepConfig& config,
                const std::vector<std::pair<std::string, Rule>>& rules);

// One point of a calibrate summary: mode, overlap, shape, counts, each path's milliseconds
// (null for a failed one) and the winner.
nlohmann::ordered_json CellJson(const Cell& c);

// The cells recorded in `path`: a calibrate summary's "points" or a bench CSV. *device gets the
// summary's device ("" for a CSV); *queries and *k the CSV's (left alone for a summary).
// IOError when the file cannot be read; InvalidArgument naming the file (and the line of a
// CSV) when it is neither form or a point is malformed.
Status ReadCells(const std::string& path, std::vector<Cell>* cells, std::string* device,
                 uint32_t* queries, uint32_t* k);

}  // namespace sieve::calibrate

#endif  // SIEVE_QUERY_CALIBRATE_RECORDS_H_
