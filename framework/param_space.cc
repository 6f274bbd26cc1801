#include "framework/param_space.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace rooftune {

int64_t Config::Get(absl::string_view name) const {
  auto it = values_.find(name);
  return it == values_.end() ? 0 : it->second;
}

std::string Config::ToString() const {
  return absl::StrJoin(values_, ",", [](std::string* out, const auto& kv) {
    absl::StrAppend(out, kv.first, "=", kv.second);
  });
}

std::string ConfigText(const std::string& formatted) {
  return formatted.empty() ? "(no parameters)" : formatted;
}

std::string ConfigText(const ParamSpace& space, const Config& config) {
  return ConfigText(space.Format(config));
}

std::string Param::ValueText(int64_t value) const {
  if (!choices.empty() && value >= 0 && size_t(value) < choices.size()) return choices[value];
  return absl::StrCat(value);
}

absl::StatusOr<int64_t> Param::ParseValue(absl::string_view text) const {
  text = absl::StripAsciiWhitespace(text);
  for (size_t i = 0; i < choices.size(); ++i) {
    if (choices[i] == text) return int64_t(i);
  }
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value) ||
      std::find(domain.begin(), domain.end(), value) == domain.end()) {
    std::vector<std::string> values;
    for (int64_t v : domain) values.push_back(ValueText(v));
    return absl::InvalidArgumentError(
        absl::StrCat(name, "=", text, " is outside its domain {", absl::StrJoin(values, ","), "}"));
  }
  return value;
}

ParamSpace& ParamSpace::Add(std::string name, std::vector<int64_t> domain, std::string help) {
  if (const Param* same = FindSpelled(name)) {
    declaration_errors_.push_back(
        absl::StrCat("parameters ", same->name, " and ", name, " are spelled alike"));
  }
  Param p;
  p.name = std::move(name), p.domain = std::move(domain), p.help = std::move(help);
  params_.push_back(std::move(p));
  return *this;
}

ParamSpace& ParamSpace::AddChoice(std::string name, std::vector<std::string> names,
                                  std::string help) {
  std::vector<int64_t> codes(names.size());
  for (size_t i = 0; i < codes.size(); ++i) codes[i] = int64_t(i);
  Add(std::move(name), std::move(codes), std::move(help));
  params_.back().choices = std::move(names);
  return *this;
}

ParamSpace& ParamSpace::AsBefore(absl::string_view value) {
  absl::StatusOr<int64_t> code = params_.back().ParseValue(value);
  if (code.ok()) {
    params_.back().as_before = *code;
  } else {
    declaration_errors_.push_back(absl::StrCat("AsBefore: ", code.status().message()));
  }
  return *this;
}

ParamSpace& ParamSpace::OnlyWhen(std::string description, std::function<bool(const Config&)> used) {
  params_.back().only_when = std::move(description);
  params_.back().used = std::move(used);
  return *this;
}

ParamSpace& ParamSpace::Require(std::string description, std::function<bool(const Config&)> holds) {
  constraints_.push_back({std::move(description), std::move(holds), std::nullopt});
  return *this;
}

ParamSpace& ParamSpace::Require(std::string description, std::vector<std::string> reads,
                                std::function<bool(const Config&)> holds) {
  std::optional<size_t> last;
  for (const std::string& name : reads) {
    const Param* p = Find(name);
    if (p == nullptr) {
      declaration_errors_.push_back(
          absl::StrCat("constraint '", description, "' reads ", name, ", not declared before it"));
      return Require(std::move(description), std::move(holds));
    }
    last = std::max(last.value_or(0), size_t(p - params_.data()));
  }
  constraints_.push_back({std::move(description), std::move(holds), last});
  return *this;
}

ParamSpace ParamSpace::WithoutPruning() const {
  ParamSpace copy = *this;
  for (Constraint& c : copy.constraints_) c.decided_by.reset();
  return copy;
}

const Param* ParamSpace::Find(absl::string_view name) const {
  for (const Param& p : params_) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::string SpellingKey(absl::string_view name) {
  std::string key;
  for (char c : name) {
    if (c != '_' && c != '-') key += absl::ascii_toupper(static_cast<unsigned char>(c));
  }
  return key;
}

const Param* ParamSpace::FindSpelled(absl::string_view name) const {
  if (const Param* p = Find(name)) return p;
  for (const Param& p : params_) {
    if (SpellingKey(p.name) == SpellingKey(name)) return &p;
  }
  return nullptr;
}

int64_t ParamSpace::Code(absl::string_view param, absl::string_view choice) const {
  const Param* p = Find(param);
  if (p == nullptr) return -1;
  for (size_t i = 0; i < p->choices.size(); ++i) {
    if (p->choices[i] == choice) return int64_t(i);
  }
  return -1;
}

std::string ParamSpace::Format(const Config& config) const {
  std::vector<std::string> items;
  for (const auto& [name, value] : config.values()) {
    const Param* p = Find(name);
    if (p == nullptr) {
      items.push_back(absl::StrCat(name, "=", value));
    } else if (p->UsedIn(config)) {
      items.push_back(absl::StrCat(name, "=", p->ValueText(value)));
    }
  }
  return absl::StrJoin(items, ",");
}

Config ParamSpace::WithUnusedAtRest(Config config) const {
  for (const Param& p : params_) {
    if (!p.UsedIn(config)) config.Set(p.name, p.unused_value());
  }
  return config;
}

absl::Status ParamSpace::Validate(const Config& config) const {
  if (absl::Status s = CheckDomains(config); !s.ok()) return s;
  for (const Param& p : params_) {
    if (!p.UsedIn(config) && config.Get(p.name) != p.unused_value()) {
      return absl::InvalidArgumentError(absl::StrCat(p.name, " is used only when ", p.only_when,
                                                     "; this config does not use it"));
    }
  }
  for (const Constraint& c : constraints_) {
    if (!c.holds(config)) {
      return absl::InvalidArgumentError(
          absl::StrCat("config ", Format(config), " breaks the constraint ", c.description));
    }
  }
  return absl::OkStatus();
}

absl::Status ParamSpace::CheckDomains(const Config& config) const {
  for (const auto& [name, value] : config.values()) {
    if (Find(name) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("unknown parameter '", name, "'"));
    }
  }
  for (const Param& p : params_) {
    if (!config.Has(p.name)) {
      return absl::InvalidArgumentError(absl::StrCat("parameter ", p.name, " has no value"));
    }
    const int64_t value = config.Get(p.name);
    if (std::find(p.domain.begin(), p.domain.end(), value) == p.domain.end()) {
      std::vector<std::string> values;
      for (int64_t v : p.domain) values.push_back(p.ValueText(v));
      return absl::InvalidArgumentError(absl::StrCat(p.name, "=", value, " is outside its domain {",
                                                     absl::StrJoin(values, ","), "}"));
    }
  }
  return absl::OkStatus();
}

int64_t Param::LargestNotAbove(double limit, const std::function<bool(int64_t)>& accept) const {
  int64_t best = -1, smallest = -1;
  for (int64_t v : domain) {
    if (accept && !accept(v)) continue;
    if (smallest < 0 || v < smallest) smallest = v;
    if (double(v) <= limit && v > best) best = v;
  }
  return best > 0 ? best : smallest;
}

int64_t Param::SmallestNotBelow(double limit, const std::function<bool(int64_t)>& accept) const {
  int64_t best = -1;
  for (int64_t v : domain) {
    if ((accept && !accept(v)) || double(v) < limit) continue;
    if (best < 0 || v < best) best = v;
  }
  return best;
}

uint64_t ParamSpace::CrossProductSize() const {
  uint64_t size = 1;
  for (const Param& p : params_) size *= p.domain.size();
  return size;
}

bool ParamSpace::ForEachValid(const std::function<bool(const Config&)>& visit,
                              const std::function<bool()>& interrupted) const {
  if (params_.empty()) {
    visit(Config());
    return true;
  }
  for (const Param& p : params_) {
    if (p.domain.empty()) return true;
  }
  // The constraints to check once parameter i has its value: those decided by it, and at the
  // last parameter those checked on whole configs.
  const size_t n = params_.size();
  std::vector<std::vector<const Constraint*>> check_at(n);
  for (const Constraint& c : constraints_) check_at[c.decided_by.value_or(n - 1)].push_back(&c);
  // Points assigned between two questions to `interrupted`: a few milliseconds.
  constexpr uint64_t kPointsBetweenChecks = 4096;
  uint64_t assigned = 0;
  // A depth-first walk in lexicographic order of the parameters as declared (last fastest):
  // index[i] is parameter i's position in its domain. An unused parameter takes its value at
  // rest only (whether it is used depends on parameters declared before it, set already), and
  // a constraint that breaks skips every point below.
  std::vector<size_t> index(n, 0);
  Config config;
  for (const Param& p : params_) config.Set(p.name, p.domain[0]);
  size_t i = 0;
  while (true) {
    if (interrupted && ++assigned % kPointsBetweenChecks == 0 && interrupted()) return false;
    const Param& p = params_[i];
    config.Set(p.name, p.domain[index[i]]);
    const bool holds = std::all_of(check_at[i].begin(), check_at[i].end(),
                                   [&](const Constraint* c) { return c->holds(config); });
    if (holds && i + 1 < n) {
      index[++i] = 0;  // down to the next parameter's first value
      continue;
    }
    if (holds && !visit(config)) return true;
    // The next value at the deepest parameter that has one left, whose walk is not over.
    while (!params_[i].UsedIn(config) || ++index[i] >= params_[i].domain.size()) {
      index[i] = 0;
      config.Set(params_[i].name, params_[i].domain[0]);
      if (i == 0) return true;
      --i;
    }
  }
}

std::vector<Config> ParamSpace::Enumerate() const {
  std::vector<Config> valid;
  ForEachValid([&](const Config& c) {
    valid.push_back(c);
    return true;
  });
  return valid;
}

uint64_t ParamSpace::CountValid() const {
  uint64_t count = 0;
  ForEachValid([&](const Config&) {
    ++count;
    return true;
  });
  return count;
}

Config ParamSpace::FirstValid() const {
  Config first;
  ForEachValid([&](const Config& c) {
    first = c;
    return false;
  });
  return first;
}

absl::StatusOr<Config> ParamSpace::ParseItems(absl::string_view text, const Config& base,
                                              bool refuse_unused) const {
  Config config = base;
  std::vector<const Param*> named;
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    item = absl::StripAsciiWhitespace(item);
    const std::vector<absl::string_view> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
    if (kv.size() != 2 || absl::StripAsciiWhitespace(kv[1]).empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad config item '", item, "': expected name=value"));
    }
    const absl::string_view name = absl::StripAsciiWhitespace(kv[0]);
    const Param* p = FindSpelled(name);
    if (p == nullptr) {
      std::vector<std::string> names;
      for (const Param& q : params_) names.push_back(q.name);
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown parameter '", name, "' (this kernel has: ", absl::StrJoin(names, ", "), ")"));
    }
    absl::StatusOr<int64_t> value = p->ParseValue(kv[1]);
    if (!value.ok()) return value.status();
    config.Set(p->name, *value);
    named.push_back(p);
  }
  if (refuse_unused) {
    for (const Param* p : named) {
      if (!p->UsedIn(config) && config.Get(p->name) != p->unused_value()) {
        return absl::InvalidArgumentError(absl::StrCat(p->name, " is used only when ", p->only_when,
                                                       "; leave it out of this config"));
      }
    }
  }
  return WithUnusedAtRest(std::move(config));
}

absl::StatusOr<Config> ParamSpace::Parse(absl::string_view text, const Config& base,
                                         bool validate) const {
  absl::StatusOr<Config> config = ParseItems(text, base, /*refuse_unused=*/true);
  if (!config.ok()) {
    // A config written before a parameter existed ("KC=64" before PATH) may name parameters
    // that only the old path uses, where the base has moved on: read it on the old path.
    Config as_before = base;
    for (const Param& p : params_) {
      if (p.as_before) as_before.Set(p.name, *p.as_before);
    }
    if (absl::StatusOr<Config> older = ParseItems(text, WithUnusedAtRest(as_before), true);
        older.ok()) {
      config = std::move(older);
    }
  }
  if (!config.ok() || !validate) return config;
  if (absl::Status s = Validate(*config); !s.ok()) return s;
  return config;
}

absl::StatusOr<Config> ParamSpace::ParseStored(absl::string_view text, const Config& initial,
                                               bool* completed) const {
  *completed = false;
  auto parse = [&](const Config& base) -> absl::StatusOr<Config> {
    absl::StatusOr<Config> config = ParseItems(text, base, /*refuse_unused=*/false);
    if (!config.ok()) return config;
    if (absl::Status s = Validate(*config); !s.ok()) return s;
    return config;
  };
  absl::StatusOr<Config> whole = parse(Config());
  if (whole.ok()) return whole;
  Config as_before = initial;
  for (const Param& p : params_) {
    if (p.as_before) as_before.Set(p.name, *p.as_before);
  }
  absl::StatusOr<Config> filled = parse(as_before);
  if (!filled.ok()) filled = parse(initial);
  if (filled.ok()) *completed = true;
  return filled;
}

}  // namespace rooftune
