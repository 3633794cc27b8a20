// SPDX-License-Identifier: Apache-2.0
// Unit tests of 002's timing filter (filter.hpp), which every program of the benchmark suite uses.
#include "filter.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace {

using weft_bench::filter_trials;

TEST(BenchFilter, DropsTheFirstTrial) {
  const auto s = filter_trials({1000, 10, 11, 12, 13, 14}, 7);
  EXPECT_EQ(s.trials, 6u);
  EXPECT_EQ(s.kept, 5u);
  EXPECT_DOUBLE_EQ(s.median_ns, 12);
  EXPECT_DOUBLE_EQ(s.min_ns, 10);
  EXPECT_EQ(s.units_per_trial, 7);
}

TEST(BenchFilter, DropsASpikeAboveOnePointEightTimesTheMedian) {
  // After the first: ten trials, one of them 1.81x the median: 10% may go, so it goes.
  std::vector<double> ns{0, 10, 10, 10, 10, 10, 10, 10, 10, 10, 18.1};
  const auto s = filter_trials(ns, 1);
  EXPECT_EQ(s.kept, 9u);
  EXPECT_DOUBLE_EQ(s.median_ns, 10);
}

TEST(BenchFilter, KeepsATrialAtExactlyOnePointEightTimesTheMedian) {
  std::vector<double> ns{0, 10, 10, 10, 10, 10, 10, 10, 10, 10, 18};
  EXPECT_EQ(filter_trials(ns, 1).kept, 10u);
}

TEST(BenchFilter, DropsAtMostTenPercentLargestFirst) {
  // Ten kept candidates, three spikes: only one (10%) may go, the largest.
  std::vector<double> ns{0, 10, 10, 10, 10, 10, 10, 10, 30, 40, 50};
  const auto s = filter_trials(ns, 1);
  EXPECT_EQ(s.kept, 9u);
  EXPECT_DOUBLE_EQ(s.min_ns, 10);
  EXPECT_DOUBLE_EQ(s.median_ns, 10);
  // With fewer than ten trials after the first, 10% rounds down to none.
  const auto few = filter_trials({0, 10, 10, 10, 100}, 1);
  EXPECT_EQ(few.kept, 4u);
  EXPECT_DOUBLE_EQ(few.median_ns, 10);
}

TEST(BenchFilter, MedianOfAnEvenCountIsTheMeanOfTheMiddleTwo) {
  const auto s = filter_trials({99, 4, 1, 3, 2}, 1);
  EXPECT_DOUBLE_EQ(s.median_ns, 2.5);
  EXPECT_DOUBLE_EQ(s.min_ns, 1);
}

TEST(BenchFilter, MaxIsOfTheKeptTrialsSpreadOfAllTrials) {
  // The first trial (40) and the spike (30) are dropped; the spread counts them.
  const auto s = filter_trials({40, 10, 10, 11, 12, 10, 10, 10, 10, 10, 30}, 1);
  EXPECT_EQ(s.kept, 9u);
  EXPECT_DOUBLE_EQ(s.max_ns, 12);
  EXPECT_DOUBLE_EQ(s.spread, 4);
}

TEST(BenchFilter, ASingleTrialIsKept) {
  const auto s = filter_trials({42}, 3);
  EXPECT_EQ(s.kept, 1u);
  EXPECT_EQ(s.trials, 1u);
  EXPECT_DOUBLE_EQ(s.median_ns, 42);
  EXPECT_DOUBLE_EQ(s.max_ns, 42);
  EXPECT_DOUBLE_EQ(s.spread, 1);
}

TEST(BenchFilter, NoTrialsIsAnError) {
  EXPECT_THROW(filter_trials({}, 1), std::invalid_argument);
}

}  // namespace
