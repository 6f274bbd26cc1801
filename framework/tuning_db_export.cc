#include "framework/tuning_db_export.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "framework/json_numbers.h"
#include "framework/machine_profile.h"
#include "framework/workload.h"

namespace rooftune {
namespace {

nlohmann::json RowJson(const TunedResult& r) {
  return {{"fingerprint", r.fingerprint},
          {"kernel", r.kernel},
          {"workload", r.workload},
          {"dtype", ToString(r.dtype)},
          {"threads", r.threads},
          {"config", r.config},
          {"median_seconds", r.median_seconds},
          {"min_seconds", r.min_seconds},
          {"cv", r.cv},
          {"ops_per_second", r.ops_per_second},
          {"attainment", r.attainment},
          {"profile_attainment", r.profile_attainment},
          {"paired_attainment", r.paired_attainment},
          {"paired_low", r.paired_low},
          {"paired_high", r.paired_high},
          {"paired_pairs", r.paired_pairs},
          {"paired_ceiling", r.paired_ceiling},
          {"tolerance", r.tolerance},
          {"verdict", VerdictText(r.verdict)},
          {"binding", r.binding},
          {"cache", ToString(r.cache)},
          {"initial_config", r.initial_config},
          {"initial_median_seconds", r.initial_median_seconds},
          {"configs_tried", r.configs_tried},
          {"created_at", r.created_at},
          {"provenance", r.provenance},
          {"config_schema", r.config_schema}};
}

// Reads field `name` of `object` into `out`, or says what is wrong with it.
template <typename T>
absl::Status Read(const nlohmann::json& object, const char* name, const std::string& where,
                  T* out) {
  auto it = object.find(name);
  if (it == object.end()) return absl::InvalidArgumentError(absl::StrCat(where, ": no \"", name, "\""));
  const bool fits = std::is_same_v<T, std::string> ? it->is_string()
                    : std::is_integral_v<T>          ? it->is_number_integer()
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
  for (absl::Status s :
       {Read(j, "fingerprint", where, &r.fingerprint), Read(j, "kernel", where, &r.kernel),
        Read(j, "workload", where, &r.workload), Read(j, "dtype", where, &dtype),
        Read(j, "threads", where, &r.threads), Read(j, "config", where, &r.config),
        Read(j, "median_seconds", where, &r.median_seconds),
        Read(j, "min_seconds", where, &r.min_seconds), Read(j, "cv", where, &r.cv),
        Read(j, "ops_per_second", where, &r.ops_per_second),
        Read(j, "attainment", where, &r.attainment),
        Read(j, "profile_attainment", where, &r.profile_attainment),
        Read(j, "paired_attainment", where, &r.paired_attainment),
        Read(j, "paired_low", where, &r.paired_low), Read(j, "paired_high", where, &r.paired_high),
        Read(j, "paired_pairs", where, &r.paired_pairs),
        Read(j, "paired_ceiling", where, &r.paired_ceiling),
        Read(j, "tolerance", where, &r.tolerance), Read(j, "verdict", where, &verdict),
        Read(j, "binding", where, &r.binding), Read(j, "cache", where, &cache),
        Read(j, "initial_config", where, &r.initial_config),
        Read(j, "initial_median_seconds", where, &r.initial_median_seconds),
        Read(j, "configs_tried", where, &r.configs_tried),
        Read(j, "created_at", where, &r.created_at), Read(j, "provenance", where, &r.provenance),
        Read(j, "config_schema", where, &r.config_schema)}) {
    if (!s.ok()) return s;
  }
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
  return j;
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
    return absl::FailedPreconditionError(absl::StrCat("an export of schema version ", version.dump(),
                                                      "; this rooftune reads versions 3 to ",
                                                      kTuningDbSchemaVersion));
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
  return data;
}

}  // namespace rooftune
