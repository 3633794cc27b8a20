// SPDX-License-Identifier: Apache-2.0
// weft_headline's command line, with CLI11 (see headline_options.hpp).
#include "headline_options.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>

namespace weft_bench {

std::variant<headline_options, int> parse_headline_options(int argc, char** argv) {
  headline_options o;
  CLI::App app("The headline benchmark: weft against the peers in one process.", "weft_headline");
  app.add_option("--json", o.json, "write the results in Google Benchmark's JSON shape to FILE")
      ->type_name("FILE");
  app.add_option("--streams", o.streams,
                 "streams of the rows on several streams (default: one per usable CPU)")
      ->check(CLI::Range(1, 1 << 30));
  app.add_flag("--peers", o.peers, "list the peers this build measures and the absent ones");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr,
                 "weft_headline: %s\nusage: weft_headline [--json=FILE] [--streams=N] | --peers\n",
                 e.what());
    return 2;
  }
  return o;
}

}  // namespace weft_bench
