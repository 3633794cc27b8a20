// SPDX-License-Identifier: Apache-2.0
// Configuration values built to exhaust memory: a place list is bounded before it is expanded.
#include "test_support.hpp"

namespace {

using namespace weft_test;

class ConfigHardeningTest : public env_test {};

TEST_F(ConfigHardeningTest, PlaceListsAreBoundedBeforeTheyAreExpanded) {
  for (const char* bad : {
           "{0:65535:0}:4096:0",     // 268 million CPU numbers
           "{0:65535:0}:100000:0",   // more
           "0:5000",                 // more places than streams can ever exist
           "{0:40000:0,0:40000:0}",  // one place listing more than 65536 CPUs
           "{0:1000:0}:2000:0",      // two million CPU numbers in all
       }) {
    SCOPED_TRACE(bad);
    EXPECT_WEFT_ERRC(weft::affinity_policy::parse(bad), weft::errc::invalid_config);
    scoped_env e("WEFT_AFFINITY", bad);
    EXPECT_WEFT_ERRC(weft::init(test_config(1)), weft::errc::invalid_config);
    EXPECT_FALSE(weft::initialized());
  }
  // At the limits: accepted.
  EXPECT_EQ(weft::affinity_policy::parse("0:4096:0").places.size(), 4096u);
  EXPECT_EQ(weft::affinity_policy::parse("{0:65535:0}").places.front().size(), 65535u);
  EXPECT_EQ(weft::affinity_policy::parse("{0:256:0}:4096:0").places.size(), 4096u);
}

}  // namespace
