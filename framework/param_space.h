// A kernel's tunable parameters: sizes (integers with finite domains) and choices (named values,
// "PACKB=in_place"), each possibly used only on some paths ("NC only when PATH=amx"), and
// constraints between them ("MC % MR == 0"). A Config is one assignment of every parameter; an
// unused parameter holds its first value, so that each point of the search is one config.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rooftune {

// Ordered so that its text form and its database key are canonical.
class Config {
 public:
  Config() = default;
  Config(std::initializer_list<std::pair<const std::string, int64_t>> values) : values_(values) {}

  int64_t Get(absl::string_view name) const;  // The parameter must exist (checked by Validate).
  bool Has(absl::string_view name) const { return values_.find(name) != values_.end(); }
  void Set(absl::string_view name, int64_t value) { values_[std::string(name)] = value; }
  const std::map<std::string, int64_t, std::less<>>& values() const { return values_; }
  bool empty() const { return values_.empty(); }

  // Every value as its integer code, "KC=256,MC=96,MR=6,PAR=0" (for tests and messages where
  // the space is unknown); ParamSpace::Format is the text form for people and the database.
  std::string ToString() const;
  friend bool operator==(const Config&, const Config&) = default;

 private:
  std::map<std::string, int64_t, std::less<>> values_;
};

// A formatted config (ParamSpace::Format) as text for people: "(no parameters)" for a kernel
// without any (JSON and the database keep "").
std::string ConfigText(const std::string& formatted);
class ParamSpace;
std::string ConfigText(const ParamSpace& space, const Config& config);
// A parameter's name as a user may spell it: upper case, without '_' and '-' ("pack_b" and
// "PACKB" are one name). No two parameters of a space share one (the registry's tests check).
std::string SpellingKey(absl::string_view name);

struct Param {
  std::string name;
  std::vector<int64_t> domain;
  std::string help;
  // For a choice, the name of each value of the domain (the codes 0, 1, ...); empty for a size.
  std::vector<std::string> choices;
  // For a parameter added to a kernel that already had stored configs: the value that runs the
  // kernel as it ran before the parameter existed.
  std::optional<int64_t> as_before;
  // For a parameter only some paths read: when it is used ("PATH=amx"), and the test. Where it
  // is unused it holds its first value, is left out of the text form and is never searched.
  std::string only_when;
  std::function<bool(const Config&)> used;

  bool UsedIn(const Config& config) const { return !used || used(config); }
  int64_t unused_value() const { return domain.front(); }
  // The value's name for a choice ("in_place"), its digits for a size.
  std::string ValueText(int64_t value) const;
  // A value's name or, for a choice too, its integer code (the form rows stored before the
  // choice had names use); checked against the domain.
  absl::StatusOr<int64_t> ParseValue(absl::string_view text) const;

  // The largest value of the domain not above `limit` that `accept` allows (all, when empty),
  // else the smallest value it allows; -1 when it allows none. For sizing a block from a cache:
  // rounded up, it would no longer fit the cache it was sized for.
  int64_t LargestNotAbove(double limit, const std::function<bool(int64_t)>& accept = {}) const;
  // The smallest value of the domain not below `limit` that `accept` allows (all, when empty);
  // -1 when there is none. For a block that must cover an extent (every row in one block).
  int64_t SmallestNotBelow(double limit, const std::function<bool(int64_t)>& accept = {}) const;
};

struct Constraint {
  std::string description;  // Shown to the user when a config breaks it, e.g. "MC % MR == 0".
  std::function<bool(const Config&)> holds;
  // The position of the last parameter `holds` reads, when it says which it reads: the walk
  // checks it as soon as that parameter has its value, and skips every point below one that
  // breaks it. Unset: checked on whole configs only.
  std::optional<size_t> decided_by;
};

class ParamSpace {
 public:
  // A size: its values as integers.
  ParamSpace& Add(std::string name, std::vector<int64_t> domain, std::string help = "");
  // A choice between named values; in a Config each is its position in `names` (0, 1, ...).
  ParamSpace& AddChoice(std::string name, std::vector<std::string> names, std::string help = "");
  // The parameter just added came after configs were stored: those run as they did with it at
  // `value` (a name for a choice).
  ParamSpace& AsBefore(absl::string_view value);
  // The parameter just added is read only where `used` holds, described as `description`.
  // `used` reads only parameters added before this one (the enumeration relies on it).
  ParamSpace& OnlyWhen(std::string description, std::function<bool(const Config&)> used);
  ParamSpace& Require(std::string description, std::function<bool(const Config&)> holds);
  // The same, saying which parameters `holds` reads (all declared before it, and no other), so
  // that the walk prunes a subtree that breaks it instead of visiting each of its points: in a
  // space of millions of points most of them break some constraint.
  ParamSpace& Require(std::string description, std::vector<std::string> reads,
                      std::function<bool(const Config&)> holds);

  // What the declarations above got wrong (a value AsBefore names that is not in the domain, two
  // parameters one SpellingKey, a Require naming an undeclared parameter): the registry refuses
  // a kernel whose space has any.
  const std::vector<std::string>& DeclarationErrors() const { return declaration_errors_; }

  const std::vector<Param>& params() const { return params_; }
  const std::vector<Constraint>& constraints() const { return constraints_; }
  const Param* Find(absl::string_view name) const;
  // Find, or else the parameter spelled the same but for case, '_' and '-' (SpellingKey): a
  // config a user writes may say pack_b for PACKB.
  const Param* FindSpelled(absl::string_view name) const;

  // A choice's code by name, for the kernel's own decoding and initial configs (the name must
  // be one of the parameter's: a typo is a programming error, checked by the tests).
  int64_t Code(absl::string_view param, absl::string_view choice) const;

  // "KC=256,MC=96,MR=6,PACKB=in_place": names for choices, unused parameters left out. The form
  // `--config` takes and the database stores.
  std::string Format(const Config& config) const;
  // `config` with every unused parameter at its unused value.
  Config WithUnusedAtRest(Config config) const;

  // Every parameter present, in its domain, unused ones at rest, and every constraint holding.
  absl::Status Validate(const Config& config) const;
  // Every parameter known, present and in its domain; constraints not checked (some depend on
  // the SIMD target, so a config for another target may break them here and still be sound).
  absl::Status CheckDomains(const Config& config) const;
  // Calls `visit` on every valid config, in lexicographic order of the parameters as declared,
  // until it returns false. Nothing is stored: spaces of a million points are fine. Walking
  // such a space takes a second or more, so `interrupted`, when set, is asked every few
  // thousand points whether to stop; the walk returns false when it stopped so.
  bool ForEachValid(const std::function<bool(const Config&)>& visit,
                    const std::function<bool()>& interrupted = {}) const;
  // All valid configs, in the order above.
  std::vector<Config> Enumerate() const;
  uint64_t CountValid() const;
  // The first valid config, or an empty one when there is none.
  Config FirstValid() const;
  // Number of points in the cross product of the domains, before constraints.
  uint64_t CrossProductSize() const;
  // This space with every constraint checked on whole configs only: the walk without pruning,
  // the reference the pruned walk is tested against.
  ParamSpace WithoutPruning() const;

  // Parses "p=v,q=w" (values by name or integer) and fills the parameters it does not name from
  // `base`; a named parameter the config does not use is an error, an unnamed one is put at rest.
  // The result is validated unless `validate` is false (for models of a config another target
  // would run).
  absl::StatusOr<Config> Parse(absl::string_view text, const Config& base,
                               bool validate = true) const;

  // Reads a config back from the tuning database, in the text form or the older all-integer
  // one; unused parameters it names are put at rest. One stored before the space gained a
  // parameter takes that parameter's `as_before` value (so it runs as it was timed), or the
  // initial config's when it has none, and `*completed` says so.
  absl::StatusOr<Config> ParseStored(absl::string_view text, const Config& initial,
                                     bool* completed) const;

 private:
  absl::StatusOr<Config> ParseItems(absl::string_view text, const Config& base,
                                    bool refuse_unused) const;

  std::vector<Param> params_;
  std::vector<Constraint> constraints_;
  std::vector<std::string> declaration_errors_;
};

}  // namespace rooftune
