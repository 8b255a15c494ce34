#include <gtest/gtest.h>

#include "policies/registry.h"
#include "sim/error.h"

namespace dvfsim {
namespace {

TEST(PolicyRegistry, ListsTheBuiltInPolicies) {
  std::vector<std::string> names;
  for (const PolicyInfo* p : all_policies()) names.push_back(p->name);
  for (const char* n : {"max", "native", "static"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
}

TEST(PolicyRegistry, DefaultsAreFilledAndTypesChecked) {
  const Params p = resolve_params(find_policy("static"), {{"core_mhz", "1200"}});
  EXPECT_EQ(p.integer("core_mhz"), 1200);
  EXPECT_EQ(p.integer("memory_mhz"), 0);
  const Params bad = resolve_params(find_policy("static"), {{"core_mhz", "fast"}});
  EXPECT_THROW(bad.integer("core_mhz"), InputError);
}

TEST(PolicyRegistry, UnknownParameterNamesTheValidOnes) {
  try {
    resolve_params(find_policy("static"), {{"core_mhz", "1"}, {"speed", "2"}});
    FAIL();
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("'speed'"), std::string::npos) << m;
    EXPECT_NE(m.find("core_mhz, memory_mhz"), std::string::npos) << m;
  }
}

TEST(PolicyRegistry, UnknownPolicyListsKnownNames) {
  try {
    find_policy("turbo");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("native"), std::string::npos);
  }
}

}  // namespace
}  // namespace dvfsim
