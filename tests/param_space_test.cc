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
  space.AddLater("SPREAD", {0, 1}, "", /*as_before=*/0);
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

TEST(ParamSpace, EmptySpaceHasOneEmptyConfig) {
  ParamSpace space;
  ASSERT_EQ(space.Enumerate().size(), 1u);
  EXPECT_TRUE(space.Enumerate().front().empty());
}

}  // namespace
}  // namespace rooftune
