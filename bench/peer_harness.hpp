// SPDX-License-Identifier: Apache-2.0
// The skeleton every peer program of the suite shares (bench/peers/*.cpp; bench/go/peer.go
// follows the same protocol). A peer program runs one case per process:
//
//   PROGRAM --bench=NAME --n=N [--streams=S] [--trials=T] [--warmup=W]
//
// and prints one line per case on stdout, tab-separated:
//
//   raw  PEER  BENCH  N  STREAMS  UNITS  NS_TRIAL_1  NS_TRIAL_2 ...
//
// where each NS is the wall time of one whole trial (UNITS units of work: creates+joins, yields).
// weft_bench_collect applies 002's filter (filter.hpp) to these lines, so every peer is filtered by
// the same code. A case the peer does not support prints "skip PEER BENCH reason" on stdout and
// exits with status 3; bad arguments exit with status 2.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "unit_body.hpp"

namespace weft_bench {

/// One case of one peer, from the command line.
struct peer_case {
  std::string bench;
  std::int64_t n = 0;
  int streams = 1;
  int trials = 10;
  int warmup = 1;
};

/// Parses the command line; on error prints the usage and exits with status 2.
peer_case parse_case(int argc, char** argv);

/// Reports that `peer` does not run `c` (and why), then exits with status 3.
[[noreturn]] inline void skip_case(const char* peer, const peer_case& c, const char* why) {
  std::printf("skip\t%s\t%s\t%s\n", peer, c.bench.c_str(), why);
  std::fflush(stdout);
  std::_Exit(3);  // no destructors: a runtime the program started may still run threads
}

/// Runs `once` c.warmup times untimed, then c.trials times timed, and prints the raw line. `once`
/// does one trial and returns the units of work it did.
/// The line names the case `bench`.
template <class F>
void run_trials(const char* peer, const char* bench, const peer_case& c, F&& once) {
  for (int i = 0; i < c.warmup; ++i) once();
  std::vector<double> ns;
  std::int64_t units = 0;
  for (int i = 0; i < c.trials; ++i) {
    const auto start = std::chrono::steady_clock::now();
    units = once();
    const auto stop = std::chrono::steady_clock::now();
    ns.push_back(std::chrono::duration<double, std::nano>(stop - start).count());
  }
  std::printf("raw\t%s\t%s\t%lld\t%d\t%lld", peer, bench, static_cast<long long>(c.n), c.streams,
              static_cast<long long>(units));
  for (double t : ns) std::printf("\t%.0f", t);
  std::printf("\n");
  std::fflush(stdout);
}

}  // namespace weft_bench
