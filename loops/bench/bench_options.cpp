// SPDX-License-Identifier: Apache-2.0
#include "bench_options.hpp"

#include <CLI/CLI.hpp>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace loops_bench {

namespace {

/// A whole string as an int, or nothing.
std::optional<int> to_int(std::string_view text) {
  int v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return v;
}

/// Expands "1,2,8-12" into its widths; throws CLI::ValidationError on anything else.
std::vector<int> expand_widths(const std::vector<std::string>& items) {
  std::vector<int> out;
  for (const std::string& item : items) {
    const std::size_t dash = item.find('-', 1);
    const std::optional<int> lo = to_int(std::string_view(item).substr(0, dash));
    const std::optional<int> hi =
        dash == std::string::npos ? lo : to_int(std::string_view(item).substr(dash + 1));
    if (!lo || !hi || *lo < 0 || *hi < *lo || *hi > 1 << 20)
      throw CLI::ValidationError("INNER-LIST", "'" + item + "' is not a width or a range a-b");
    for (int v = *lo; v <= *hi; ++v) out.push_back(v);
  }
  return out;
}

bool parse(CLI::App& app, int argc, char** argv, const char* usage, bool report) {
  try {
    app.parse(argc, argv);
    return true;
  } catch (const CLI::CallForHelp& e) {
    if (report) app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (report)
      std::fprintf(stderr, "%s: %s\nusage: %s %s\n", app.get_name().c_str(), e.what(),
                   app.get_name().c_str(), usage);
  }
  return false;
}

}  // namespace

std::optional<kernels_options> parse_kernels_options(int argc, char** argv,
                                                     const std::vector<std::string>& impls,
                                                     const std::vector<std::string>& known_kernels,
                                                     bool with_workers, bool report) {
  kernels_options o;
  CLI::App app("The seven kernels of 002", argc > 0 ? argv[0] : "kernels");
  app.add_option("IMPL", o.impl, "implementation")->required()->check(CLI::IsMember(impls));
  if (with_workers)
    app.add_option("P", o.workers, "workers")->required()->check(CLI::Range(1, 1 << 16));
  app.add_option("KERNELS", o.kernels, "kernel names, comma-separated (default: all)")
      ->delimiter(',')
      ->check(CLI::IsMember(known_kernels));
  std::string usage;
  for (const std::string& i : impls) usage += (usage.empty() ? "" : "|") + i;
  usage += with_workers ? " P [KERNELS]" : " [KERNELS]";
  if (!parse(app, argc, argv, usage.c_str(), report)) return std::nullopt;
  return o;
}

std::optional<nested_options> parse_nested_options(int argc, char** argv,
                                                   const std::vector<std::string>& modes) {
  nested_options o;
  std::vector<std::string> widths;
  CLI::App app("The nested benchmark of 003", argc > 0 ? argv[0] : "nested");
  std::string usage = "OUTER INNER-LIST";
  if (!modes.empty()) {
    std::vector<std::string> all = modes;
    all.emplace_back("serial");
    app.add_option("MODE", o.mode, "inner units")->required()->check(CLI::IsMember(all));
    usage = "serial | ";
    for (const std::string& m : modes) usage += m + (&m == &modes.back() ? " " : "|");
    usage += "OUTER INNER-LIST";
  }
  app.add_option("OUTER", o.outer, "outer team width (0: the default)")
      ->check(CLI::Range(0, 1 << 16));
  app.add_option("INNER-LIST", widths, "inner team widths: 1,2,4 or 1-36")->delimiter(',');
  if (!parse(app, argc, argv, usage.c_str(), true)) return std::nullopt;
  if (o.mode == "serial") {
    if (app.count("OUTER") == 0) return o;
    std::fprintf(stderr, "%s: serial takes no widths\nusage: %s %s\n", app.get_name().c_str(),
                 app.get_name().c_str(), usage.c_str());
    return std::nullopt;
  }
  try {
    if (app.count("OUTER") == 0 || widths.empty())
      throw CLI::ValidationError("OUTER INNER-LIST", "both are needed");
    o.inner = expand_widths(widths);
  } catch (const CLI::ValidationError& e) {
    std::fprintf(stderr, "%s: %s\nusage: %s %s\n", app.get_name().c_str(), e.what(),
                 app.get_name().c_str(), usage.c_str());
    return std::nullopt;
  }
  return o;
}

int trials_from_env(int fallback) {
  const char* text = std::getenv("WEFT_LOOPS_TRIALS");
  if (text == nullptr) return fallback;
  const std::optional<int> v = to_int(text);
  if (v && *v > 1) return *v;
  std::fprintf(stderr, "WEFT_LOOPS_TRIALS=%s is not an integer above 1; using %d\n", text,
               fallback);
  return fallback;
}

}  // namespace loops_bench
