// SPDX-License-Identifier: Apache-2.0
// The options of the Google Benchmark programs (weft_bench, weft_sched_bench,
// weft_abt_layer_bench) that are theirs rather than Google Benchmark's. Parsed with CLI11 in a
// translation unit of its own (gbench_options.cpp), like the peers' command line: CLI11's headers
// beside the measured code change how the compiler inlines it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace weft_bench {

/// Takes `--streams=N` (or `--streams N`) out of argv and returns N, or `fallback` when absent;
/// everything else is left, in order, for benchmark::Initialize. A malformed or non-positive N
/// prints a message naming `program` and exits with status 2.
int take_streams_option(int& argc, char** argv, int fallback, const char* program);

/// weft_abt_layer_bench's single-case mode: `--run=CASE [--units=N] [--reps=R]` runs one warm-up
/// and R timed-free runs of CASE (what callgrind measures).
struct single_run {
  std::string name;
  std::int64_t units = 1000;
  long reps = 1;
};

/// Returns the single-case options when `--run` is given (then no other argument is accepted),
/// nothing otherwise (argv is then Google Benchmark's). Malformed values print a message and exit
/// with status 2.
std::optional<single_run> parse_single_run(int argc, char** argv, const char* program);

}  // namespace weft_bench
