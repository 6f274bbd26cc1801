#include "framework/param_space.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace rooftune {

int64_t Config::Get(absl::string_view name) const {
  auto it = values_.find(std::string(name));
  return it == values_.end() ? 0 : it->second;
}

std::string Config::ToString() const {
  return absl::StrJoin(values_, ",", [](std::string* out, const auto& kv) {
    absl::StrAppend(out, kv.first, "=", kv.second);
  });
}

std::string ConfigText(const Config& config) { return ConfigText(config.ToString()); }

std::string ConfigText(const std::string& config_text) {
  return config_text.empty() ? "(no parameters)" : config_text;
}

ParamSpace& ParamSpace::Add(std::string name, std::vector<int64_t> domain, std::string help) {
  params_.push_back({std::move(name), std::move(domain), std::move(help)});
  return *this;
}

ParamSpace& ParamSpace::AddLater(std::string name, std::vector<int64_t> domain, std::string help,
                                 int64_t as_before) {
  params_.push_back({std::move(name), std::move(domain), std::move(help), as_before});
  return *this;
}

ParamSpace& ParamSpace::Require(std::string description, std::function<bool(const Config&)> holds) {
  constraints_.push_back({std::move(description), std::move(holds)});
  return *this;
}

const Param* ParamSpace::Find(absl::string_view name) const {
  for (const Param& p : params_) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

absl::Status ParamSpace::Validate(const Config& config) const {
  if (absl::Status s = CheckDomains(config); !s.ok()) return s;
  for (const Constraint& c : constraints_) {
    if (!c.holds(config)) {
      return absl::InvalidArgumentError(
          absl::StrCat("config ", config.ToString(), " breaks the constraint ", c.description));
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
      return absl::InvalidArgumentError(absl::StrCat(p.name, "=", value, " is outside its domain {",
                                                     absl::StrJoin(p.domain, ","), "}"));
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

uint64_t ParamSpace::CrossProductSize() const {
  uint64_t size = 1;
  for (const Param& p : params_) size *= p.domain.size();
  return size;
}

void ParamSpace::ForEachValid(const std::function<bool(const Config&)>& visit) const {
  if (params_.empty()) {
    visit(Config());
    return;
  }
  for (const Param& p : params_) {
    if (p.domain.empty()) return;
  }
  // Every point is built from the domains, so only the constraints need checking (and no error
  // text is built for the many points that break one).
  std::vector<size_t> index(params_.size(), 0);
  Config config;
  for (const Param& p : params_) config.Set(p.name, p.domain[0]);
  while (true) {
    const bool valid = std::all_of(constraints_.begin(), constraints_.end(),
                                   [&](const Constraint& c) { return c.holds(config); });
    if (valid && !visit(config)) return;
    // Odometer increment, last parameter fastest.
    size_t i = params_.size();
    while (true) {
      --i;
      if (++index[i] < params_[i].domain.size()) break;
      index[i] = 0;
      config.Set(params_[i].name, params_[i].domain[0]);
      if (i == 0) return;
    }
    config.Set(params_[i].name, params_[i].domain[index[i]]);
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

absl::StatusOr<Config> ParamSpace::Parse(absl::string_view text, const Config& base,
                                         bool validate) const {
  Config config = base;
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    item = absl::StripAsciiWhitespace(item);
    const std::vector<absl::string_view> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
    int64_t value = 0;
    if (kv.size() != 2 || !absl::SimpleAtoi(kv[1], &value)) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad config item '", item, "': expected name=integer"));
    }
    const absl::string_view name = absl::StripAsciiWhitespace(kv[0]);
    if (Find(name) == nullptr) {
      std::vector<std::string> names;
      for (const Param& p : params_) names.push_back(p.name);
      return absl::InvalidArgumentError(absl::StrCat("unknown parameter '", name,
                                                     "' (this kernel has: ",
                                                     absl::StrJoin(names, ", "), ")"));
    }
    config.Set(name, value);
  }
  if (!validate) return config;
  if (absl::Status s = Validate(config); !s.ok()) return s;
  return config;
}

absl::StatusOr<Config> ParamSpace::ParseStored(absl::string_view text, const Config& initial,
                                               bool* completed) const {
  *completed = false;
  absl::StatusOr<Config> whole = Parse(text, Config());
  if (whole.ok()) return whole;
  Config as_before = initial;
  for (const Param& p : params_) {
    if (p.as_before) as_before.Set(p.name, *p.as_before);
  }
  absl::StatusOr<Config> filled = Parse(text, as_before);
  if (!filled.ok()) filled = Parse(text, initial);
  if (filled.ok()) *completed = true;
  return filled;
}

}  // namespace rooftune
