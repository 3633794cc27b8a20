// SPDX-License-Identifier: Apache-2.0
// The timing filter of Luecke and Lin, "OpenMP vs MPI on an SGI Origin 2000" (shared/reference
// 002), shared by every program of the benchmark suite so that all peers are filtered alike.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace weft_bench {

/// What is left of a series of trials after the filter.
struct trial_summary {
  double median_ns = 0;  ///< median of the kept trials
  double min_ns = 0;     ///< fastest kept trial
  double max_ns = 0;     ///< slowest kept trial
  double spread = 1;     ///< slowest over fastest of all the trials, none dropped
  std::size_t kept = 0;
  std::size_t trials = 0;  ///< trials measured, the dropped first one included
  std::int64_t units_per_trial = 0;
};

/// The median of an ascending, non-empty vector.
inline double median_of_sorted(const std::vector<double>& v) {
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// Applies 002's filter to per-trial times and summarises what is left (and the spread of all of
/// them): the first trial is dropped
/// (it pays for first-call setup), then every trial above 1.8x the median of the rest, but never
/// more than 10% of them (rounded down; when more exceed the limit only the largest go). A single
/// trial is kept as it is (nothing else to compare it with). Throws std::invalid_argument on an
/// empty series.
inline trial_summary filter_trials(std::vector<double> ns, std::int64_t units_per_trial) {
  if (ns.empty()) throw std::invalid_argument("filter_trials: no trials");
  trial_summary s;
  s.trials = ns.size();
  s.units_per_trial = units_per_trial;
  const auto [fastest, slowest] = std::minmax_element(ns.begin(), ns.end());
  if (*fastest > 0) s.spread = *slowest / *fastest;
  if (ns.size() > 1) ns.erase(ns.begin());
  std::sort(ns.begin(), ns.end());
  const double limit = 1.8 * median_of_sorted(ns);
  const auto spikes =
      static_cast<std::size_t>(ns.end() - std::upper_bound(ns.begin(), ns.end(), limit));
  ns.resize(ns.size() - std::min(spikes, ns.size() / 10));  // sorted: the largest go first
  s.kept = ns.size();
  s.median_ns = median_of_sorted(ns);
  s.min_ns = ns.front();
  s.max_ns = ns.back();
  return s;
}

}  // namespace weft_bench
