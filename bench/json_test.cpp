// SPDX-License-Identifier: Apache-2.0
// The reports' JSON (ctest bench.json): weft_bench::json_string, and weft_bench_collect's
// results.json, read back with nlohmann-json. Strings with quotes, backslashes, control bytes and
// UTF-8 must come back byte for byte, and the document must keep Google Benchmark's shape.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "machine.hpp"

namespace {

// Quotes, a backslash, newline, tab, other control bytes (0x01, 0x1f, DEL) and UTF-8 (2, 3 and 4
// bytes: "é", "→", U+1F9F5).
const std::string awkward =
    "a\"quote\" back\\slash \\\" nl\n tab\t ctl\x01\x1f del\x7f "
    "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\xa7\xb5 end";

TEST(BenchJson, JsonStringRoundTrips) {
  const std::string literal = weft_bench::json_string(awkward);
  ASSERT_EQ(literal.front(), '"');
  EXPECT_EQ(literal.find('\n'), std::string::npos) << "a raw newline inside a JSON string";
  EXPECT_EQ(nlohmann::json::parse(literal).get<std::string>(), awkward);
  EXPECT_EQ(nlohmann::json::parse(weft_bench::json_string("")).get<std::string>(), "");
}

TEST(BenchJson, InvalidUtf8IsReplacedNotThrown) {
  const std::string bad = "x\xff\xfey";
  std::string literal;
  ASSERT_NO_THROW(literal = weft_bench::json_string(bad));
  EXPECT_EQ(nlohmann::json::parse(literal).get<std::string>(), "x\xef\xbf\xbd\xef\xbf\xbdy");
}

/// Runs weft_bench_collect with `args` (no shell: the arguments may hold any byte); its exit code.
int run_collect(std::vector<std::string> args) {
  args.insert(args.begin(), WEFT_BENCH_COLLECT);
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    // Its tables go to stdout; the test needs only the files.
    if (std::freopen("/dev/null", "w", stdout) == nullptr) _exit(126);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

TEST(BenchJson, CollectWritesParsableGoogleBenchmarkJson) {
  char dir_template[] = "/tmp/weft-bench-json-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  // A peer name with no tab or newline (the protocol splits on those) but every other awkward byte.
  const std::string peer = "pe\"er\\ \x01 caf\xc3\xa9 \xf0\x9f\xa7\xb5";
  {
    std::ofstream in(dir + "/raw.txt");
    in << "raw\t" << peer << "\tfanout\t10\t1\t100\t1000\t1234\t1100\t1150\n"
       << "rss\t" << peer << "\tchain\t10\t1\t2000\n"
       << "rss\t" << peer << "\tchain\t100\t1\t2090\n";
  }
  const std::string out = dir + "/out.json";
  ASSERT_EQ(run_collect({"--json=" + out, "--csv=" + dir + "/out.csv",
                         "--context=k\"ey\\=" + awkward, dir + "/raw.txt"}),
            0);
  std::ifstream f(out);
  std::stringstream text;
  text << f.rdbuf();
  nlohmann::ordered_json doc;
  ASSERT_NO_THROW(doc = nlohmann::ordered_json::parse(text.str())) << text.str();

  ASSERT_EQ(doc.size(), 2u);
  EXPECT_EQ(doc.begin().key(), "context");
  const auto& ctx = doc.at("context");
  EXPECT_EQ(ctx.at("k\"ey\\").get<std::string>(), awkward);
  EXPECT_EQ(ctx.begin().key(), "date");
  EXPECT_EQ(ctx.items().begin().value().type(), nlohmann::json::value_t::string);
  EXPECT_TRUE(ctx.at("num_cpus").is_number_integer());
  EXPECT_TRUE(ctx.at("cpu_scaling_enabled").is_boolean());
  EXPECT_EQ(ctx.at("library_build_type"), "release");

  const auto& b = doc.at("benchmarks");
  ASSERT_TRUE(b.is_array());
  ASSERT_EQ(b.size(), 4u);  // median and min of the fan-out, then the two memory cases
  const std::string run = peer + "/fanout/10/streams:1";
  EXPECT_EQ(b[0].at("name"), run + "_median");
  EXPECT_EQ(b[0].at("run_name"), run);
  EXPECT_EQ(b[0].at("run_type"), "aggregate");
  EXPECT_EQ(b[0].at("aggregate_name"), "median");
  EXPECT_EQ(b[1].at("name"), run + "_min");
  EXPECT_EQ(b[1].at("aggregate_name"), "min");
  std::vector<std::string> keys;
  for (const auto& [k, v] : b[0].items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"name", "run_name", "run_type", "repetitions",
                                            "threads", "aggregate_name", "aggregate_unit",
                                            "iterations", "real_time", "time_unit", "trials"}));
  EXPECT_EQ(b[0].at("iterations"), 100);
  EXPECT_EQ(b[0].at("trials"), 4);
  // The first trial is dropped; real_time is ns per unit: min 1100 / 100 units.
  EXPECT_DOUBLE_EQ(b[1].at("real_time").get<double>(), 11.0);
  EXPECT_EQ(b[0].at("time_unit"), "ns");

  EXPECT_EQ(b[2].at("name"), "memory/" + peer + "/chain/10/streams:1");
  EXPECT_EQ(b[2].at("maxrss_kb"), 2000);
  EXPECT_FALSE(b[2].contains("bytes_per_unit")) << "the smallest N is the baseline";
  EXPECT_EQ(b[3].at("maxrss_kb"), 2090);
  // (2090 - 2000) KiB over 90 extra units, to one decimal place.
  EXPECT_DOUBLE_EQ(b[3].at("bytes_per_unit").get<double>(), 1024.0);
  std::remove(out.c_str());
  std::remove((dir + "/out.csv").c_str());
  std::remove((dir + "/raw.txt").c_str());
  rmdir(dir.c_str());
}

}  // namespace
