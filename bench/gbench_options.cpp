// SPDX-License-Identifier: Apache-2.0
#include "gbench_options.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace weft_bench {

namespace {

[[noreturn]] void usage_error(const char* program, const std::string& what, const char* usage) {
  std::fprintf(stderr, "%s: %s\nusage: %s %s\n", program, what.c_str(), program, usage);
  std::exit(2);
}

}  // namespace

int take_streams_option(int& argc, char** argv, int fallback, const char* program) {
  CLI::App app("weft benchmark options", program);
  app.allow_extras();
  int streams = fallback;
  app.add_option("--streams", streams, "execution streams")->check(CLI::Range(1, 1 << 16));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    usage_error(program, e.what(), "[--streams=N] [Google Benchmark flags]");
  }
  // Keep Google Benchmark's arguments in their order, as the same char* argv already holds them.
  const std::vector<std::string> rest = app.remaining();
  int out = 1;
  for (int i = 1; i < argc && out <= static_cast<int>(rest.size()); ++i) {
    if (std::string_view(argv[i]) == rest[static_cast<std::size_t>(out - 1)]) argv[out++] = argv[i];
  }
  if (out != static_cast<int>(rest.size()) + 1)
    usage_error(program, "arguments not understood", "[--streams=N] [Google Benchmark flags]");
  argc = out;
  argv[argc] = nullptr;
  return streams;
}

std::optional<single_run> parse_single_run(int argc, char** argv, const char* program) {
  const bool wanted = std::any_of(argv + 1, argv + argc, [](const char* a) {
    const std::string_view s(a);
    return s == "--run" || s.starts_with("--run=");
  });
  if (!wanted) return std::nullopt;
  single_run r;
  CLI::App app("one case of the abt.h layer benchmark, untimed", program);
  app.add_option("--run", r.name, "the case")->required();
  app.add_option("--units", r.units, "units per run")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
  app.add_option("--reps", r.reps, "runs after the warm-up")->check(CLI::Range(0L, 1L << 30));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    std::exit(app.exit(e));
  } catch (const CLI::ParseError& e) {
    usage_error(program, e.what(), "--run=CASE [--units=N] [--reps=R]");
  }
  return r;
}

}  // namespace weft_bench
