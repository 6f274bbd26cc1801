#include "framework/param_space.h"

#include <gtest/gtest.h>

namespace rooftune {
namespace {

ParamSpace BlockSpace() {
  ParamSpace space;
  space.Add("MR", {4, 6}).Add("MC", {12, 16, 24}).Require("MC % MR == 0", [](const Config& c) {
    return c.Get("MC") % c.Get("MR") == 0;
  });
  return space;
}

// A block sized from a cache rounds down (LargestNotAbove); one that must cover an extent rounds
// up (SmallestNotBelow), whatever order the domain lists its values in.
TEST(Param, BlocksRoundDownToFitAndUpToCover) {
  Param p{"MC", {96, 24, 48, 192}};
  auto multiple_of_48 = [](int64_t v) { return v % 48 == 0; };
  EXPECT_EQ(p.LargestNotAbove(100), 96);
  EXPECT_EQ(p.LargestNotAbove(10), 24);  // none fits: the smallest
  EXPECT_EQ(p.SmallestNotBelow(25), 48);
  EXPECT_EQ(p.SmallestNotBelow(48), 48);
  EXPECT_EQ(p.SmallestNotBelow(0), 24);
  EXPECT_EQ(p.SmallestNotBelow(25, multiple_of_48), 48);
  EXPECT_EQ(p.SmallestNotBelow(50, multiple_of_48), 96);
  EXPECT_EQ(p.SmallestNotBelow(193), -1);  // none covers it
  EXPECT_EQ(p.SmallestNotBelow(0, [](int64_t) { return false; }), -1);
}

TEST(ParamSpace, EnumerateKeepsOnlyConfigsThatSatisfyEveryConstraint) {
  const ParamSpace space = BlockSpace();
  EXPECT_EQ(space.CrossProductSize(), 6u);
  const std::vector<Config> all = space.Enumerate();
  // MR=4: 12, 16, 24; MR=6: 12, 24.
  ASSERT_EQ(all.size(), 5u);
  for (const Config& c : all) EXPECT_EQ(c.Get("MC") % c.Get("MR"), 0) << c.ToString();
  EXPECT_EQ(all.front().ToString(), "MC=12,MR=4");
}

TEST(ParamSpace, ValidateNamesWhatIsWrong) {
  const ParamSpace space = BlockSpace();
  EXPECT_TRUE(space.Validate(Config{{"MR", 6}, {"MC", 24}}).ok());
  absl::Status broken = space.Validate(Config{{"MR", 6}, {"MC", 16}});
  EXPECT_NE(broken.message().find("MC % MR == 0"), std::string::npos) << broken;
  absl::Status outside = space.Validate(Config{{"MR", 5}, {"MC", 16}});
  EXPECT_NE(outside.message().find("outside its domain"), std::string::npos) << outside;
  absl::Status missing = space.Validate(Config{{"MR", 4}});
  EXPECT_NE(missing.message().find("MC has no value"), std::string::npos) << missing;
  absl::Status unknown = space.Validate(Config{{"MR", 4}, {"MC", 12}, {"XX", 1}});
  EXPECT_NE(unknown.message().find("unknown parameter 'XX'"), std::string::npos) << unknown;
}

TEST(ParamSpace, CheckDomainsLeavesTheConstraintsOut) {
  const ParamSpace space = BlockSpace();
  EXPECT_TRUE(space.CheckDomains(Config{{"MR", 6}, {"MC", 16}}).ok());  // breaks MC % MR == 0 only
  absl::Status outside = space.CheckDomains(Config{{"MR", 5}, {"MC", 16}});
  EXPECT_NE(outside.message().find("outside its domain"), std::string::npos) << outside;
  EXPECT_FALSE(space.CheckDomains(Config{{"MR", 4}}).ok());
  EXPECT_FALSE(space.CheckDomains(Config{{"MR", 4}, {"MC", 12}, {"XX", 1}}).ok());
}

TEST(ParamSpace, ParseFillsUnnamedParametersFromTheBase) {
  const ParamSpace space = BlockSpace();
  absl::StatusOr<Config> c = space.Parse("MC=24", Config{{"MR", 6}, {"MC", 12}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->ToString(), "MC=24,MR=6");
  EXPECT_FALSE(space.Parse("MC=16", Config{{"MR", 6}, {"MC", 12}}).ok());  // constraint
  EXPECT_FALSE(space.Parse("MC=abc", Config{{"MR", 6}, {"MC", 12}}).ok());
  absl::StatusOr<Config> unknown = space.Parse("KC=1", Config{{"MR", 6}, {"MC", 12}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("this kernel has: MR, MC"), std::string::npos);
}

// A stored config lacking a parameter added later runs as it ran when stored; one lacking an
// older parameter (no as-before value) takes the initial config's.
TEST(ParamSpace, StoredConfigsLackingAParameterAreCompleted) {
  ParamSpace space = BlockSpace();
  space.AddChoice("SPREAD", {"neighbours", "spread"}).AsBefore("neighbours");
  const Config initial{{"MR", 6}, {"MC", 24}, {"SPREAD", 1}};
  bool completed = true;
  absl::StatusOr<Config> whole = space.ParseStored("MC=12,MR=4,SPREAD=1", initial, &completed);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_FALSE(completed);
  absl::StatusOr<Config> older = space.ParseStored("MC=12,MR=4", initial, &completed);
  ASSERT_TRUE(older.ok()) << older.status();
  EXPECT_TRUE(completed);
  EXPECT_EQ(older->ToString(), "MC=12,MR=4,SPREAD=0");
  absl::StatusOr<Config> no_mc = space.ParseStored("MR=6,SPREAD=1", initial, &completed);
  ASSERT_TRUE(no_mc.ok()) << no_mc.status();
  EXPECT_EQ(no_mc->ToString(), "MC=24,MR=6,SPREAD=1");
  EXPECT_FALSE(space.ParseStored("MR=5", initial, &completed).ok());
}

// A choice's values have names: the text form and --config use them, and a row stored while the
// choice was a bare integer still loads.
ParamSpace PathSpace() {
  ParamSpace space;
  auto amx = [](const Config& c) { return c.Get("PATH") == 2; };
  space.AddChoice("PATH", {"exact", "fast", "amx"}, "the instruction path")
      .Add("MR", {4, 6, 8})
      .OnlyWhen("PATH is not amx", [=](const Config& c) { return !amx(c); })
      .Add("KC", {128, 256, 512})
      .OnlyWhen("PATH=amx", amx)
      .AddChoice("PAR", {"rows", "columns"});
  return space;
}

TEST(ParamSpace, ChoicesAreNamedInTextAndParsedByNameOrCode) {
  const ParamSpace space = PathSpace();
  EXPECT_EQ(space.Code("PATH", "amx"), 2);
  EXPECT_EQ(space.Code("PATH", "vnni"), -1);
  const Config fast{{"PATH", 1}, {"MR", 6}, {"KC", 128}, {"PAR", 1}};
  EXPECT_EQ(space.Format(fast), "MR=6,PAR=columns,PATH=fast");
  absl::StatusOr<Config> by_name = space.Parse("PATH=fast,PAR=columns,MR=6", Config());
  ASSERT_TRUE(by_name.ok()) << by_name.status();
  EXPECT_EQ(*by_name, fast);
  absl::StatusOr<Config> by_code = space.Parse("PATH=1,PAR=1,MR=6", Config());
  ASSERT_TRUE(by_code.ok()) << by_code.status();
  EXPECT_EQ(*by_code, fast);
  absl::StatusOr<Config> typo = space.Parse("PATH=vnni", fast);
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("{exact,fast,amx}"), std::string::npos) << typo.status();
  EXPECT_FALSE(space.Parse("PATH=3", fast).ok());
  // The text form parses back to the same config.
  space.ForEachValid([&](const Config& c) {
    absl::StatusOr<Config> again = space.Parse(space.Format(c), Config());
    EXPECT_TRUE(again.ok() && *again == c) << space.Format(c);
    return true;
  });
}

// A config a user writes may spell a parameter in lower case with underscores (pack_b for
// PACKB): it names the same parameter, and the config prints in the canonical names.
TEST(ParamSpace, AParameterMayBeSpelledInLowerCaseWithUnderscores) {
  const ParamSpace space = PathSpace();
  const Config fast{{"PATH", 1}, {"MR", 6}, {"KC", 128}, {"PAR", 1}};
  absl::StatusOr<Config> spelled = space.Parse("path=fast,p_a_r=columns,mr=6", Config());
  ASSERT_TRUE(spelled.ok()) << spelled.status();
  EXPECT_EQ(*spelled, fast);
  EXPECT_EQ(space.Format(*spelled), "MR=6,PAR=columns,PATH=fast");
  EXPECT_EQ(SpellingKey("pack_b"), SpellingKey("PACKB"));
  EXPECT_NE(SpellingKey("pf"), SpellingKey("PFL"));
  absl::StatusOr<Config> unknown = space.Parse("m_c=6", Config());
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown parameter 'm_c'"), std::string::npos)
      << unknown.status();
}

// A parameter only some paths read is neither searched nor printed where it is not read; naming it
// there is an error, and a stored row that carried a placeholder for it still loads.
TEST(ParamSpace, AParameterOnlySomePathsReadIsSearchedOnlyOnThem) {
  const ParamSpace space = PathSpace();
  // exact and fast: 3 MR x 2 PAR each; amx: 3 KC x 2 PAR.
  EXPECT_EQ(space.CountValid(), 2 * 3 * 2 + 3 * 2);
  space.ForEachValid([&](const Config& c) {
    if (c.Get("PATH") == 2) {
      EXPECT_EQ(c.Get("MR"), 4) << c.ToString();
    } else {
      EXPECT_EQ(c.Get("KC"), 128) << c.ToString();
    }
    return true;
  });
  const Config amx{{"PATH", 2}, {"MR", 4}, {"KC", 512}, {"PAR", 0}};
  EXPECT_EQ(space.Format(amx), "KC=512,PAR=rows,PATH=amx");
  absl::StatusOr<Config> named = space.Parse("MR=6", amx);
  ASSERT_FALSE(named.ok());
  EXPECT_NE(named.status().message().find("MR is used only when PATH is not amx"),
            std::string::npos)
      << named.status();
  // Switching the path puts what the new path does not read at rest.
  absl::StatusOr<Config> switched =
      space.Parse("PATH=amx,KC=256", Config{{"PATH", 1}, {"MR", 8}, {"KC", 128}, {"PAR", 1}});
  ASSERT_TRUE(switched.ok()) << switched.status();
  EXPECT_EQ(switched->Get("MR"), 4);
  EXPECT_FALSE(space.Validate(Config{{"PATH", 2}, {"MR", 8}, {"KC", 512}, {"PAR", 0}}).ok());
  bool completed = false;
  absl::StatusOr<Config> stored =
      space.ParseStored("KC=512,MR=8,PAR=0,PATH=2", Config(), &completed);
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(*stored, amx);
  EXPECT_FALSE(completed);
  absl::StatusOr<Config> readable = space.ParseStored(space.Format(amx), Config(), &completed);
  ASSERT_TRUE(readable.ok()) << readable.status();
  EXPECT_EQ(*readable, amx);
}

// A walk asked to stop stops within a few thousand points and says so; one never asked to
// stop visits every valid config and says it finished.
TEST(ParamSpace, AWalkInterruptedStopsAndSaysSo) {
  ParamSpace space;
  std::vector<int64_t> values(1000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = int64_t(i);
  space.Add("A", values).Add("B", values);  // a million points
  int64_t asked = 0, visited = 0;
  const bool finished = space.ForEachValid(
      [&](const Config&) {
        ++visited;
        return true;
      },
      [&] { return ++asked == 3; });
  EXPECT_FALSE(finished);
  EXPECT_EQ(asked, 3);
  EXPECT_GT(visited, 0);
  EXPECT_LT(visited, 100000);
  const ParamSpace small = BlockSpace();
  visited = 0;
  EXPECT_TRUE(small.ForEachValid(
      [&](const Config&) {
        ++visited;
        return true;
      },
      [] { return false; }));
  EXPECT_EQ(visited, 5);
}

// Constraints decided early prune whole subtrees; the configs and their order are those of the
// walk without pruning, with parameters only some paths read among them.
TEST(ParamSpace, APrunedWalkVisitsWhatTheFullWalkVisits) {
  ParamSpace space;
  space.AddChoice("PATH", {"narrow", "wide"})
      .Add("MR", {1, 2, 4})
      .Add("X", {1, 2, 3})
      .OnlyWhen("PATH=wide", [](const Config& c) { return c.Get("PATH") == 1; })
      .Add("MC", {2, 4, 6, 8})
      .Require("PATH=narrow has no MR=1", {"PATH", "MR"},
               [](const Config& c) { return c.Get("PATH") == 1 || c.Get("MR") != 1; })
      .Require("MC % MR == 0", {"MC", "MR"},
               [](const Config& c) { return c.Get("MC") % c.Get("MR") == 0; })
      .Require("X + MC is odd",
               [](const Config& c) { return (c.Get("X") + c.Get("MC")) % 2 == 1; });
  const std::vector<Config> pruned = space.Enumerate();
  EXPECT_EQ(pruned, space.WithoutPruning().Enumerate());
  // narrow: X at rest (1), MR of 2 (4 MCs) or 4 (2); wide: X of 1 or 3 (X + an even MC is odd)
  // with MR of 1, 2 or 4.
  ASSERT_EQ(pruned.size(), 6u + 2u * (4 + 4 + 2));
  for (const Config& c : pruned) EXPECT_TRUE(space.Validate(c).ok()) << c.ToString();
  // A constraint naming a parameter not declared is checked on whole configs: still correct.
  ParamSpace late;
  late.Add("A", {1, 2, 3}).Require("A != 2", {"A", "B"}, [](const Config& c) {
    return c.Get("A") != 2;
  });
  late.Add("B", {0, 1});
  EXPECT_EQ(late.CountValid(), 4u);
}

TEST(ParamSpace, EmptySpaceHasOneEmptyConfig) {
  ParamSpace space;
  ASSERT_EQ(space.Enumerate().size(), 1u);
  EXPECT_TRUE(space.Enumerate().front().empty());
}

}  // namespace
}  // namespace rooftune
