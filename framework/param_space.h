// A kernel's tunable parameters: named integers with finite domains, and constraints between them
// (e.g. "MC % MR == 0"). A Config is one assignment of every parameter.
#pragma once

#include "absl/strings/string_view.h"
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace rooftune {

// Ordered so that its text form and its database key are canonical.
class Config {
 public:
  Config() = default;
  Config(std::initializer_list<std::pair<const std::string, int64_t>> values) : values_(values) {}

  int64_t Get(absl::string_view name) const;  // The parameter must exist (checked by Validate).
  bool Has(absl::string_view name) const { return values_.count(std::string(name)) != 0; }
  void Set(absl::string_view name, int64_t value) { values_[std::string(name)] = value; }
  const std::map<std::string, int64_t>& values() const { return values_; }
  bool empty() const { return values_.empty(); }

  // "KC=256,MC=96,MR=6": also the form `--config` takes.
  std::string ToString() const;
  friend bool operator==(const Config&, const Config&) = default;

 private:
  std::map<std::string, int64_t> values_;
};

// A config as text for people: "(no parameters)" for a kernel without any (JSON and the
// database keep "").
std::string ConfigText(const Config& config);
std::string ConfigText(const std::string& config_text);  // the same, from Config::ToString

struct Param {
  std::string name;
  std::vector<int64_t> domain;
  std::string help;
  // For a parameter added to a kernel that already had stored configs: the value that runs the
  // kernel as it ran before the parameter existed.
  std::optional<int64_t> as_before;

  // The largest value of the domain not above `limit` that `accept` allows (all, when empty),
  // else the smallest value it allows; -1 when it allows none. For sizing a block from a cache:
  // rounded up, it would no longer fit the cache it was sized for.
  int64_t LargestNotAbove(double limit, const std::function<bool(int64_t)>& accept = {}) const;
};

struct Constraint {
  std::string description;  // Shown to the user when a config breaks it, e.g. "MC % MR == 0".
  std::function<bool(const Config&)> holds;
};

class ParamSpace {
 public:
  ParamSpace& Add(std::string name, std::vector<int64_t> domain, std::string help = "");
  // A parameter added after configs were stored: those run as they did with it at `as_before`.
  ParamSpace& AddLater(std::string name, std::vector<int64_t> domain, std::string help,
                       int64_t as_before);
  ParamSpace& Require(std::string description, std::function<bool(const Config&)> holds);

  const std::vector<Param>& params() const { return params_; }
  const std::vector<Constraint>& constraints() const { return constraints_; }
  const Param* Find(absl::string_view name) const;

  // Every parameter present, in its domain, and every constraint holding.
  absl::Status Validate(const Config& config) const;
  // Every parameter known, present and in its domain; constraints not checked (some depend on
  // the SIMD target, so a config for another target may break them here and still be sound).
  absl::Status CheckDomains(const Config& config) const;
  // Calls `visit` on every valid config, in lexicographic order of the parameters as declared,
  // until it returns false. Nothing is stored: spaces of a million points are fine.
  void ForEachValid(const std::function<bool(const Config&)>& visit) const;
  // All valid configs, in the order above.
  std::vector<Config> Enumerate() const;
  uint64_t CountValid() const;
  // The first valid config, or an empty one when there is none.
  Config FirstValid() const;
  // Number of points in the cross product of the domains, before constraints.
  uint64_t CrossProductSize() const;

  // Parses "p=v,q=w" and fills the parameters it does not name from `base`; the result is
  // validated unless `validate` is false (for models of a config another target would run).
  absl::StatusOr<Config> Parse(absl::string_view text, const Config& base, bool validate = true) const;

  // Reads a config back from the tuning database. One stored before the space gained a
  // parameter takes that parameter's `as_before` value (so it runs as it was timed), or the
  // initial config's when it has none, and `*completed` says so.
  absl::StatusOr<Config> ParseStored(absl::string_view text, const Config& initial,
                                     bool* completed) const;

 private:
  std::vector<Param> params_;
  std::vector<Constraint> constraints_;
};

}  // namespace rooftune
