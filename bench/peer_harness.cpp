// SPDX-License-Identifier: Apache-2.0
// The peer programs' command line (peer_harness.hpp), parsed with CLI11. Out of line, in a
// library of its own: CLI11's headers in a peer's translation unit change how the compiler
// inlines the measured code (GCC's unit-growth limits), and so the figures.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "peer_harness.hpp"

namespace weft_bench {

peer_case parse_case(int argc, char** argv) {
  peer_case c;
  CLI::App app("One case of one peer of weft's benchmark suite.", argc > 0 ? argv[0] : "peer");
  app.add_option("--bench", c.bench, "the case")->required();
  app.add_option("--n", c.n, "units per trial")
      ->required()
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
  app.add_option("--streams", c.streams, "streams or threads")->check(CLI::Range(1, 1 << 16));
  app.add_option("--trials", c.trials, "timed trials")->check(CLI::Range(1, 1 << 20));
  app.add_option("--warmup", c.warmup, "untimed trials first")->check(CLI::Range(0, 1 << 20));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    std::exit(app.exit(e));
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr,
                 "%s: %s\nusage: %s --bench=NAME --n=N [--streams=S] [--trials=T] [--warmup=W]\n",
                 app.get_name().c_str(), e.what(), app.get_name().c_str());
    std::exit(2);
  }
  return c;
}

}  // namespace weft_bench
