// SPDX-License-Identifier: Apache-2.0
// weft::stats(): the streams' counters (observe_state.hpp), read from any thread.
#include "weft/stats.hpp"

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <ostream>
#include <string>

#include "core/runtime_state.hpp"
#include "core/stream.hpp"

namespace weft {

namespace {

stream_stats read(const detail::stream& s) {
  const detail::stream_observer& o = s.observer();
  stream_stats r;
  r.rank = s.rank();
  const std::uint64_t switched = o.runs_switched.get();
  r.units_run = switched + o.runs_direct.get();
  r.context_switches = switched + o.to_scheduler.get();
  r.steals = o.steals.get();
  r.steal_attempts = o.steal_attempts.get();
  r.parks = s.times_parked();
  r.time_parked = std::chrono::nanoseconds(o.parked_ns.get());
  r.migrations = o.migrations.get();
  r.stacks_mapped = o.stacks_mapped.get();
  return r;
}

void add(stream_stats& to, const stream_stats& s) {
  to.units_run += s.units_run;
  to.context_switches += s.context_switches;
  to.steals += s.steals;
  to.steal_attempts += s.steal_attempts;
  to.parks += s.parks;
  to.time_parked += s.time_parked;
  to.migrations += s.migrations;
  to.stacks_mapped += s.stacks_mapped;
}

}  // namespace

runtime_stats stats() {
  detail::runtime_state& r = detail::rt();
  runtime_stats out;
  r.streams().for_each_with_retired(
      [&out](const detail::stream& s) { out.streams.push_back(read(s)); });
  std::sort(out.streams.begin(), out.streams.end(),
            [](const stream_stats& a, const stream_stats& b) { return a.rank < b.rank; });
  for (const stream_stats& s : out.streams) add(out.total, s);
  return out;
}

void print_stats(std::ostream& out, const runtime_stats& s) {
  char line[256];
  std::snprintf(line, sizeof line, "%-8s %12s %12s %10s %10s %8s %11s %10s %8s\n", "stream",
                "units_run", "switches", "steals", "attempts", "parks", "parked_ms", "migrations",
                "stacks");
  out << "weft: counters per execution stream\n" << line;
  const auto row = [&](const char* label, const stream_stats& r) {
    std::snprintf(line, sizeof line, "%-8s %12llu %12llu %10llu %10llu %8llu %11.1f %10llu %8llu\n",
                  label, static_cast<unsigned long long>(r.units_run),
                  static_cast<unsigned long long>(r.context_switches),
                  static_cast<unsigned long long>(r.steals),
                  static_cast<unsigned long long>(r.steal_attempts),
                  static_cast<unsigned long long>(r.parks),
                  static_cast<double>(r.time_parked.count()) / 1e6,
                  static_cast<unsigned long long>(r.migrations),
                  static_cast<unsigned long long>(r.stacks_mapped));
    out << line;
  };
  for (const stream_stats& r : s.streams) row(std::to_string(r.rank).c_str(), r);
  row("total", s.total);
}

}  // namespace weft
