// SPDX-License-Identifier: Apache-2.0
// Traces (weft/trace.hpp) and counters (weft/stats.hpp): the file a fork-join run writes is a
// valid Chrome trace (every slice closed, every flow paired, one creation flow per unit), the
// API refuses misuse, WEFT_TRACE and WEFT_STATS work, and the counters count what ran.
#include <signal.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "test_support.hpp"

namespace {

using namespace weft_test;
using nlohmann::json;

/// A file name under the temporary directory, removed when the test ends.
class temp_file {
 public:
  explicit temp_file(const std::string& stem)
      : path_(std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/weft-" +
              stem + "-" + std::to_string(getpid()) + ".json") {}
  ~temp_file() { std::remove(path_.c_str()); }
  temp_file(const temp_file&) = delete;
  temp_file& operator=(const temp_file&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

json read_json(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  return json::parse(in);  // throws (failing the test) on malformed JSON
}

/// fib(n) with a ULT at every level; returns the number of ULTs created.
long fork_join(int n, long& result) {
  if (n < 2) {
    result = n;
    return 0;
  }
  long a = 0, b = 0;
  std::atomic<long> created_a{0};
  weft::ult child = weft::ult::create([&] { created_a = fork_join(n - 1, a); });
  const long created_b = fork_join(n - 2, b);
  child.join();
  result = a + b;
  return 1 + created_a + created_b;
}

/// What a trace holds, checked for the format's rules on the way.
struct trace_summary {
  std::map<std::uint64_t, int> slices_of;   // unit id -> slices
  std::map<std::string, int> slices_named;  // slice name -> count
  std::map<std::string, int> flows;         // flow name -> pairs
  std::multiset<std::uint64_t> woken;       // units a wake flow points at
  std::set<int> tracks;                     // tids with a thread_name
  std::map<std::string, int> instants;      // instant name -> count
};

trace_summary check_trace(const json& doc) {
  trace_summary out;
  EXPECT_TRUE(doc.is_object());
  const json& events = doc.at("traceEvents");
  EXPECT_TRUE(events.is_array());
  std::map<std::uint64_t, std::pair<int, int>> flow_ends;  // id -> (starts, ends)
  std::map<std::uint64_t, double> flow_start_ts;
  std::map<std::uint64_t, std::string> flow_name;
  int open_b = 0;
  for (const json& e : events) {
    const std::string ph = e.at("ph");
    if (ph == "M") {
      if (e.at("name") == "thread_name") out.tracks.insert(e.at("tid").get<int>());
      continue;
    }
    EXPECT_TRUE(e.contains("ts") && e.contains("pid") && e.contains("tid")) << e.dump();
    if (ph == "X") {
      EXPECT_TRUE(e.contains("dur")) << e.dump();
      if (!e.contains("dur")) continue;
      EXPECT_GE(e.at("dur").get<double>(), 0.0) << e.dump();
      if (e.at("cat") == "ult" || e.at("cat") == "tasklet") {
        ++out.slices_of[e.at("args").at("id").get<std::uint64_t>()];
        ++out.slices_named[e.at("name").get<std::string>()];
      }
    } else if (ph == "B") {
      ++open_b;
    } else if (ph == "E") {
      --open_b;
    } else if (ph == "s") {
      const auto id = e.at("id").get<std::uint64_t>();
      ++flow_ends[id].first;
      flow_start_ts[id] = e.at("ts").get<double>();
      flow_name[id] = e.at("name").get<std::string>();
      if (e.at("name") == "wake") out.woken.insert(e.at("args").at("unit").get<std::uint64_t>());
    } else if (ph == "f") {
      const auto id = e.at("id").get<std::uint64_t>();
      ++flow_ends[id].second;
      EXPECT_EQ(e.at("bp"), "e");
    } else if (ph == "i") {
      ++out.instants[e.at("name").get<std::string>()];
    } else {
      ADD_FAILURE() << "unexpected event " << e.dump();
    }
  }
  EXPECT_EQ(open_b, 0) << "unpaired B/E events";
  for (const auto& [id, se] : flow_ends) {
    EXPECT_EQ(se.first, 1) << "flow " << id << " starts " << se.first << " times";
    EXPECT_EQ(se.second, 1) << "flow " << id << " ends " << se.second << " times";
    ++out.flows[flow_name[id]];
  }
  // Every flow ends at or after its start.
  for (const json& e : events) {
    if (e.at("ph") != "f") continue;
    const auto id = e.at("id").get<std::uint64_t>();
    EXPECT_GE(e.at("ts").get<double>(), flow_start_ts[id]) << e.dump();
  }
  return out;
}

class TraceTest : public streams_test {};
WEFT_INSTANTIATE_STREAMS(TraceTest);

TEST_P(TraceTest, ForkJoinTraceIsValidAndComplete) {
  temp_file file("forkjoin");
  weft::trace::start(file.path());
  EXPECT_TRUE(weft::trace::active());
  long result = 0;
  const long created = fork_join(12, result);
  ASSERT_EQ(result, 144);
  // Named ULTs and tasklets.
  weft::ult_attributes named;
  named.name = "worker \"w\"";
  std::vector<weft::ult> workers;
  workers.reserve(5);
  for (int i = 0; i < 5; ++i)
    workers.push_back(weft::ult::create(
        weft::execution_stream::primary().main_pool(), [] {}, named));
  for (auto& w : workers) w.join();
  std::vector<weft::tasklet> tasklets;
  tasklets.reserve(7);
  for (int i = 0; i < 7; ++i) tasklets.push_back(weft::tasklet::create([] {}));
  for (auto& t : tasklets) t.join();
  // A wake-up: `waiter` blocks until the primary ULT sets the eventual.
  weft::eventual<void> ev;
  weft::ult waiter = weft::ult::create([&] { ev.wait(); });
  const weft::unit_id waiter_id = waiter.id();
  while (waiter.state() != weft::unit_state::blocked) weft::this_unit::yield();
  ev.set();
  waiter.join();
  weft::trace::stop();
  EXPECT_FALSE(weft::trace::active());

  const trace_summary t = check_trace(read_json(file.path()));
  const long units = created + 5 + 7 + 1;
  // One slice at least per unit, and one creation flow per unit (to its first run).
  long with_slice = 0;
  for (const auto& [id, n] : t.slices_of) with_slice += n > 0;
  EXPECT_GE(with_slice, units);
  EXPECT_EQ(t.flows.count("create") ? t.flows.at("create") : 0, units);
  EXPECT_EQ(t.slices_named.count("worker \"w\"") ? t.slices_named.at("worker \"w\"") : 0, 5);
  EXPECT_GE(t.woken.count(waiter_id), 1u);
  EXPECT_GE(t.tracks.size(), 1u);
  EXPECT_LE(static_cast<int>(t.tracks.size()), streams());
}

TEST_P(TraceTest, AwkwardNamesRoundTripThroughTheTrace) {
  temp_file file("names");
  // Quotes, backslashes, a newline, a tab, control bytes, DEL and UTF-8 of 2, 3 and 4 bytes.
  const std::string awkward =
      "q\"uote\" b\\ack\\\\ nl\n tab\t ctl\x01\x1f\x7f caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\xa7\xb5 "
      "end";
  // Not UTF-8: written as U+FFFD so that the file stays JSON.
  const std::string invalid = "bad\xff\xfe end";
  weft::trace::start(file.path());
  for (const std::string* name : {&awkward, &invalid}) {
    weft::ult_attributes attr;
    attr.name = name->c_str();
    weft::ult::create(
        weft::execution_stream::primary().main_pool(), [] {}, attr)
        .join();
  }
  weft::trace::stop();

  const trace_summary t = check_trace(read_json(file.path()));
  EXPECT_EQ(t.slices_named.count(awkward), 1u) << "the name did not come back byte for byte";
  EXPECT_EQ(t.slices_named.count("bad\xef\xbf\xbd\xef\xbf\xbd end"), 1u);
}

TEST_P(TraceTest, FlushWritesWhatWasRecordedAndGoesOn) {
  temp_file file("flush");
  weft::trace::start(file.path());
  weft::ult::create([] {}).join();
  weft::trace::flush();
  const trace_summary first = check_trace(read_json(file.path()));
  EXPECT_EQ(first.flows.at("create"), 1);
  weft::ult::create([] {}).join();
  weft::trace::stop();
  const trace_summary second = check_trace(read_json(file.path()));
  EXPECT_EQ(second.flows.at("create"), 2);
}

TEST_P(TraceTest, MisuseIsRefused) {
  temp_file file("misuse");
  EXPECT_EQ(errc_of([] { weft::trace::stop(); }), weft::errc::invalid_state);
  EXPECT_EQ(errc_of([] { weft::trace::flush(); }), weft::errc::invalid_state);
  EXPECT_EQ(errc_of([] { weft::trace::start("/nonexistent-weft-dir/trace.json"); }),
            weft::errc::invalid_config);
  EXPECT_FALSE(weft::trace::active());
  weft::trace::start(file.path());
  EXPECT_EQ(errc_of([&] { weft::trace::start(file.path()); }), weft::errc::invalid_state);
  weft::trace::stop();
  // A second session in the same runtime records only its own units.
  weft::trace::start(file.path());
  weft::ult::create([] {}).join();
  weft::trace::stop();
  EXPECT_EQ(check_trace(read_json(file.path())).flows.at("create"), 1);
}

TEST_P(TraceTest, FinalizeWritesAnUnstoppedTrace) {
  temp_file file("finalize");
  weft::trace::start(file.path());
  weft::ult::create([] {}).join();
  finalize();
  EXPECT_FALSE(weft::trace::active());
  EXPECT_EQ(check_trace(read_json(file.path())).flows.at("create"), 1);
}

class TraceEnvTest : public env_test {};

TEST_F(TraceEnvTest, WeftTraceRecordsTheWholeRun) {
  temp_file file("env");
  scoped_env trace("WEFT_TRACE", file.path().c_str());
  {
    weft::runtime rt(test_config(2));
    EXPECT_TRUE(weft::trace::active());
    for (int i = 0; i < 10; ++i) weft::ult::create([] { weft::this_unit::yield(); }).join();
  }
  const trace_summary t = check_trace(read_json(file.path()));
  EXPECT_EQ(t.flows.at("create"), 10);
}

TEST_F(TraceEnvTest, AnEmptyWeftTraceMeansNoTrace) {
  for (const char* empty : {"", "  "}) {
    SCOPED_TRACE(std::string("WEFT_TRACE='") + empty + "'");
    scoped_env trace("WEFT_TRACE", empty);
    {
      weft::runtime rt(test_config(1));
      EXPECT_FALSE(weft::trace::active());
      EXPECT_EQ(weft::current_config().trace, "");
    }
    // It also turns off a trace the program asked for.
    temp_file file("empty-env");
    weft::config cfg = test_config(1);
    cfg.trace = file.path();
    {
      weft::runtime rt(cfg);
      EXPECT_FALSE(weft::trace::active());
    }
    EXPECT_NE(::access(file.path().c_str(), F_OK), 0) << "the trace file was created";
  }
}

TEST_F(TraceEnvTest, AMissingDirectoryIsAConfigurationErrorNamingThePath) {
  const std::string path = "/tmp/weft-no-such-dir-" + std::to_string(getpid()) + "/t.json";
  ASSERT_NE(::access(path.c_str(), F_OK), 0);
  const std::string reason = std::strerror(ENOENT);
  {
    weft::runtime rt(test_config(1));
    const auto start = [&] { weft::trace::start(path); };
    EXPECT_EQ(errc_of(start), weft::errc::invalid_config);
    const std::string what = what_of(start);
    EXPECT_NE(what.find("trace::start"), std::string::npos) << what;
    EXPECT_NE(what.find("'" + path + "'"), std::string::npos) << what;
    EXPECT_NE(what.find(reason), std::string::npos) << what;
    EXPECT_FALSE(weft::trace::active());
  }
  scoped_env trace("WEFT_TRACE", path.c_str());
  const auto init = [] { weft::runtime rt(test_config(1)); };
  EXPECT_EQ(errc_of(init), weft::errc::invalid_config);
  const std::string what = what_of(init);
  EXPECT_NE(what.find("WEFT_TRACE"), std::string::npos) << what;
  EXPECT_NE(what.find("'" + path + "'"), std::string::npos) << what;
  EXPECT_NE(what.find(reason), std::string::npos) << what;
  EXPECT_FALSE(weft::initialized());
}

// The dump-signal thread starts before the trace file is opened: an init that fails at the
// file must stop it and give the signal back, or the next init finds the old thread still there.
TEST_F(TraceEnvTest, AnInitFailingAtTheTraceFileStopsTheDumpSignalThread) {
  const std::string path = "/tmp/weft-no-such-dir-" + std::to_string(getpid()) + "/t.json";
  ASSERT_NE(::access(path.c_str(), F_OK), 0);
  struct sigaction before {};
  ASSERT_EQ(sigaction(SIGUSR2, nullptr, &before), 0);
  {
    scoped_env dump("WEFT_DUMP_SIGNAL", "SIGUSR2");
    scoped_env trace("WEFT_TRACE", path.c_str());
    EXPECT_EQ(errc_of([] { weft::runtime rt(test_config(1)); }), weft::errc::invalid_config);
    EXPECT_FALSE(weft::initialized());
  }
  struct sigaction after {};
  ASSERT_EQ(sigaction(SIGUSR2, nullptr, &after), 0);
  EXPECT_EQ(after.sa_handler, before.sa_handler) << "the dump signal's handler was left installed";
  // A second runtime with the same dump signal starts and ends cleanly.
  scoped_env dump("WEFT_DUMP_SIGNAL", "SIGUSR2");
  {
    weft::runtime rt(test_config(1));
    int ran = 0;
    weft::ult::create([&] { ran = 7; }).join();
    EXPECT_EQ(ran, 7);
  }
  EXPECT_FALSE(weft::initialized());
}

TEST_F(TraceEnvTest, StartNeedsARuntime) {
  EXPECT_EQ(errc_of([] { weft::trace::start("/tmp/unused.json"); }), weft::errc::not_initialized);
  EXPECT_EQ(errc_of([] { (void)weft::stats(); }), weft::errc::not_initialized);
}

TEST_F(TraceEnvTest, WeftStatsPrintsATableAtFinalize) {
  scoped_env stats("WEFT_STATS", "1");
  testing::internal::CaptureStderr();
  {
    weft::runtime rt(test_config(2));
    for (int i = 0; i < 10; ++i) weft::ult::create([] {}).join();
  }
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("units_run"), std::string::npos) << err;
  EXPECT_NE(err.find("\ntotal "), std::string::npos) << err;
}

class StatsTest : public streams_test {};
WEFT_INSTANTIATE_STREAMS(StatsTest);

TEST_P(StatsTest, CountersCountWhatRan) {
  const weft::runtime_stats before = weft::stats();
  ASSERT_EQ(static_cast<int>(before.streams.size()), streams());
  constexpr int n = 200;
  std::vector<weft::ult> us;
  us.reserve(n);
  for (int i = 0; i < n; ++i) {
    us.push_back(
        weft::ult::create(stream(i % streams()).main_pool(), [] { weft::this_unit::yield(); }));
  }
  for (auto& u : us) u.join();
  std::vector<weft::tasklet> ts;
  ts.reserve(n);
  for (int i = 0; i < n; ++i) ts.push_back(weft::tasklet::create(stream(0).main_pool(), [] {}));
  for (auto& t : ts) t.join();
  const weft::runtime_stats after = weft::stats();
  // Each ULT runs twice (it yields once), each tasklet once; each ULT run is entered by a switch.
  EXPECT_GE(after.total.units_run - before.total.units_run, std::uint64_t{3 * n});
  EXPECT_GE(after.total.context_switches - before.total.context_switches, std::uint64_t{2 * n});
  EXPECT_GE(after.total.stacks_mapped, 1u);
  // The basic scheduler never steals.
  EXPECT_EQ(after.total.steals, 0u);
  EXPECT_EQ(after.total.steal_attempts, 0u);
  // The total is the sum of the rows.
  std::uint64_t sum = 0;
  for (const weft::stream_stats& s : after.streams) sum += s.units_run;
  EXPECT_EQ(sum, after.total.units_run);
  EXPECT_EQ(after.total.rank, -1);
  for (int r = 0; r < streams(); ++r) EXPECT_EQ(after.streams[r].rank, r);
}

TEST_P(StatsTest, MigrationsAreCounted) {
  if (streams() < 2) GTEST_SKIP() << "needs two streams";
  weft::ult u =
      weft::ult::create(stream(0).main_pool(), [&] { weft::this_unit::migrate_to(stream(1)); });
  u.join();
  EXPECT_GE(weft::stats().total.migrations, 1u);
}

TEST_P(StatsTest, PrintStatsHasARowPerStreamAndTheTotal) {
  std::ostringstream out;
  weft::print_stats(out, weft::stats());
  const std::string s = out.str();
  for (int r = 0; r < streams(); ++r)
    EXPECT_NE(s.find("\n" + std::to_string(r) + " "), std::string::npos) << s;
  EXPECT_NE(s.find("\ntotal "), std::string::npos) << s;
}

}  // namespace
