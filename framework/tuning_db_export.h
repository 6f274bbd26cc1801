// A tuning database's machines and rows as one JSON document, to carry results from one machine
// to its identical neighbours (`rooftune db export`, `db import`). The document names its format
// and the database schema its rows follow; a row keeps every column, so that an export imported
// into an empty database exports again byte for byte.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/tuning_db.h"
#include "nlohmann/json.hpp"

namespace rooftune {

inline constexpr const char* kExportFormat = "rooftune-db-export";

struct DbExport {
  std::vector<TuningDb::Machine> machines;
  std::vector<TunedResult> rows;
  std::vector<TuningDb::ThreadChoice> thread_choices;  // absent from older exports: none
};

nlohmann::json ToJson(const DbExport& data);

// One stored thread choice without its machine: kernel, workload, offered, threads, tolerance,
// created_at (as the export, `db list` and the report write it).
nlohmann::json ThreadChoiceJson(const TuningDb::ThreadChoice& choice);

// Reads a document ToJson wrote. Refuses, naming the first problem: another format or schema
// version, a field missing or of the wrong type, a machine whose profile does not read or whose
// identity is not its profile's, a row whose workload does not parse or whose machine is not in
// the document, a thread choice whose machine is not in it or whose counts do not hold
// (1 <= threads <= offered).
absl::StatusOr<DbExport> ParseDbExport(const nlohmann::json& json);

}  // namespace rooftune
