#include "framework/tuning_db_export.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "framework/json_numbers.h"
#include "framework/machine_profile.h"
#include "framework/workload.h"

namespace rooftune {
namespace {

// The export file's row, one field per TunedResult member, named once here for writing and for
// reading. The enum members travel as text and are read apart (SetEnumsFromText).
template <typename Row, typename Visit>
void ForEachPlainField(Row& r, Visit&& visit) {
  visit("fingerprint", r.fingerprint);
  visit("kernel", r.kernel);
  visit("workload", r.workload);
  visit("threads", r.threads);
  visit("config", r.config);
  visit("median_seconds", r.median_seconds);
  visit("min_seconds", r.min_seconds);
  visit("cv", r.cv);
  visit("ops_per_second", r.ops_per_second);
  visit("attainment", r.attainment);
  visit("profile_attainment", r.profile_attainment);
  visit("paired_attainment", r.paired_attainment);
  visit("paired_low", r.paired_low);
  visit("paired_high", r.paired_high);
  visit("paired_pairs", r.paired_pairs);
  visit("paired_ceiling", r.paired_ceiling);
  visit("tolerance", r.tolerance);
  visit("binding", r.binding);
  visit("initial_config", r.initial_config);
  visit("initial_median_seconds", r.initial_median_seconds);
  visit("configs_tried", r.configs_tried);
  visit("created_at", r.created_at);
  visit("provenance", r.provenance);
  visit("config_schema", r.config_schema);
}

nlohmann::json RowJson(const TunedResult& r) {
  nlohmann::json j = {{"dtype", ToString(r.dtype)},
                      {"verdict", VerdictText(r.verdict)},
                      {"cache", ToString(r.cache)}};
  ForEachPlainField(r, [&](const char* name, const auto& value) { j[name] = value; });
  return j;
}

// Reads field `name` of `object` into `out`, or says what is wrong with it.
template <typename T>
absl::Status Read(const nlohmann::json& object, const char* name, const std::string& where,
                  T* out) {
  auto it = object.find(name);
  if (it == object.end())
    return absl::InvalidArgumentError(absl::StrCat(where, ": no \"", name, "\""));
  const bool fits = std::is_same_v<T, std::string> ? it->is_string()
                    : std::is_integral_v<T>        ? it->is_number_integer()
                                                   : it->is_number();
  if (!fits) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": \"", name, "\" is ", it->type_name(), ", not ",
                     std::is_same_v<T, std::string> ? "a string" : "a number"));
  }
  if constexpr (std::is_integral_v<T>) {
    try {
      *out = WholeNumber<T>(*it);
    } catch (const std::out_of_range&) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": \"", name, "\" is ", it->dump(), ", out of range"));
    }
  } else {
    *out = it->get<T>();
  }
  return absl::OkStatus();
}

absl::StatusOr<TunedResult> ParseRow(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) return absl::InvalidArgumentError(absl::StrCat(where, " is not an object"));
  TunedResult r;
  std::string dtype, verdict, cache;
  absl::Status status = Read(j, "dtype", where, &dtype);
  if (status.ok()) status = Read(j, "verdict", where, &verdict);
  if (status.ok()) status = Read(j, "cache", where, &cache);
  ForEachPlainField(r, [&](const char* name, auto& value) {
    if (status.ok()) status = Read(j, name, where, &value);
  });
  if (!status.ok()) return status;
  if (r.threads < 1) return absl::InvalidArgumentError(absl::StrCat(where, ": threads below 1"));
  if (absl::Status s = SetEnumsFromText(dtype, verdict, cache, r); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": ", s.message()));
  }
  if (absl::StatusOr<Workload> w = ParseWorkloadKey(r.workload); !w.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": ", w.status().message()));
  }
  return r;
}

}  // namespace

nlohmann::json ToJson(const DbExport& data) {
  nlohmann::json j = {{"format", kExportFormat},
                      {"schema_version", kTuningDbSchemaVersion},
                      {"machines", nlohmann::json::array()},
                      {"results", nlohmann::json::array()}};
  for (const TuningDb::Machine& m : data.machines) {
    nlohmann::json profile = nlohmann::json::parse(m.profile_json, nullptr, false);
    j["machines"].push_back(
        {{"fingerprint", m.fingerprint}, {"updated_at", m.updated_at}, {"profile", profile}});
  }
  for (const TunedResult& r : data.rows) j["results"].push_back(RowJson(r));
  j["thread_choices"] = nlohmann::json::array();
  for (const TuningDb::ThreadChoice& c : data.thread_choices) {
    nlohmann::json choice = {{"fingerprint", c.fingerprint}};
    choice.update(ThreadChoiceJson(c));
    j["thread_choices"].push_back(std::move(choice));
  }
  return j;
}

nlohmann::json ThreadChoiceJson(const TuningDb::ThreadChoice& c) {
  return {{"kernel", c.kernel},   {"workload", c.workload},   {"offered", c.offered},
          {"threads", c.threads}, {"tolerance", c.tolerance}, {"created_at", c.created_at}};
}

absl::StatusOr<DbExport> ParseDbExport(const nlohmann::json& j) {
  const auto format = j.is_object() ? j.find("format") : j.end();
  if (!j.is_object() || format == j.end() || *format != kExportFormat) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a rooftune database export (no \"format\": \"", kExportFormat, "\")"));
  }
  // Version 3's rows have the same fields (version 4 only added the cache mode to the key).
  const nlohmann::json version = j.value("schema_version", nlohmann::json());
  if (version != kTuningDbSchemaVersion && version != 3) {
    return absl::FailedPreconditionError(
        absl::StrCat("an export of schema version ", version.dump(),
                     "; this rooftune reads versions 3 to ", kTuningDbSchemaVersion));
  }
  const auto machines = j.find("machines"), results = j.find("results");
  if (machines == j.end() || !machines->is_array() || results == j.end() || !results->is_array()) {
    return absl::InvalidArgumentError("an export needs \"machines\" and \"results\" arrays");
  }
  DbExport data;
  std::set<std::string> identities;
  for (size_t i = 0; i < machines->size(); ++i) {
    const nlohmann::json& m = (*machines)[i];
    const std::string where = absl::StrCat("machines[", i, "]");
    if (!m.is_object()) return absl::InvalidArgumentError(absl::StrCat(where, " is not an object"));
    TuningDb::Machine machine;
    if (absl::Status s = Read(m, "fingerprint", where, &machine.fingerprint); !s.ok()) return s;
    if (absl::Status s = Read(m, "updated_at", where, &machine.updated_at); !s.ok()) return s;
    const auto profile_json = m.find("profile");
    if (profile_json == m.end() || !profile_json->is_object()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": no \"profile\" object"));
    }
    absl::StatusOr<MachineProfile> profile = MachineProfile::FromJson(*profile_json);
    if (!profile.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": the profile does not read (", profile.status().message(), ")"));
    }
    if (profile->Fingerprint() != machine.fingerprint) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": identity ", machine.fingerprint,
                                                     " is not its profile's (",
                                                     profile->Fingerprint(), ")"));
    }
    machine.profile_json = profile_json->dump();
    identities.insert(machine.fingerprint);
    data.machines.push_back(std::move(machine));
  }
  for (size_t i = 0; i < results->size(); ++i) {
    absl::StatusOr<TunedResult> row = ParseRow((*results)[i], absl::StrCat("results[", i, "]"));
    if (!row.ok()) return row.status();
    if (identities.count(row->fingerprint) == 0) {
      return absl::InvalidArgumentError(absl::StrCat("results[", i, "]: machine ", row->fingerprint,
                                                     " is not among the export's machines"));
    }
    data.rows.push_back(*std::move(row));
  }
  const auto choices = j.find("thread_choices");
  if (choices == j.end()) return data;
  if (!choices->is_array()) return absl::InvalidArgumentError("\"thread_choices\" is not an array");
  for (size_t i = 0; i < choices->size(); ++i) {
    const nlohmann::json& c = (*choices)[i];
    const std::string where = absl::StrCat("thread_choices[", i, "]");
    if (!c.is_object()) return absl::InvalidArgumentError(absl::StrCat(where, " is not an object"));
    TuningDb::ThreadChoice choice;
    for (absl::Status s :
         {Read(c, "fingerprint", where, &choice.fingerprint),
          Read(c, "kernel", where, &choice.kernel), Read(c, "workload", where, &choice.workload),
          Read(c, "offered", where, &choice.offered), Read(c, "threads", where, &choice.threads),
          Read(c, "tolerance", where, &choice.tolerance),
          Read(c, "created_at", where, &choice.created_at)}) {
      if (!s.ok()) return s;
    }
    if (identities.count(choice.fingerprint) == 0) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": machine ", choice.fingerprint,
                                                     " is not among the export's machines"));
    }
    if (choice.threads < 1 || choice.threads > choice.offered || !(choice.tolerance >= 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": ", choice.threads, " of ", choice.offered, " threads, tolerance ",
                       choice.tolerance, " (needs 1 <= threads <= offered and a tolerance >= 0)"));
    }
    data.thread_choices.push_back(std::move(choice));
  }
  return data;
}

}  // namespace rooftune
