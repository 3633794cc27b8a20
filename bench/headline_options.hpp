// SPDX-License-Identifier: Apache-2.0
// weft_headline's command line. Parsed in a translation unit of its own (headline_options.cpp):
// CLI11's headers beside the measured code would change how the compiler inlines it.
#pragma once

#include <string>
#include <variant>

namespace weft_bench {

struct headline_options {
  std::string json;    // --json=FILE: the results in Google Benchmark's JSON shape
  int streams = 0;     // --streams=N of the rows on several streams; 0: one per usable CPU
  bool peers = false;  // --peers: list the peers this build measures and the absent ones, and exit
};

/// The options, or the exit status when the program should stop (after --help: 0; on a
/// malformed command line, with the reason printed: 2).
std::variant<headline_options, int> parse_headline_options(int argc, char** argv);

}  // namespace weft_bench
