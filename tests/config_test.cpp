// SPDX-License-Identifier: Apache-2.0
// Configuration: WEFT_* variables (valid and malformed), validation, the affinity syntax,
// parse_size, scheduler names and the default number of streams. Linked with weft::weft_static.
#include <sstream>

#include "test_support.hpp"

namespace {

using namespace weft_test;
using kind = weft::affinity_policy::kind;
using places_t = std::vector<std::vector<int>>;

class ConfigTest : public env_test {};

/// apply_environment() on a default config with `var`=`value`.
weft::config from_env(const char* var, const char* value) {
  scoped_env e(var, value);
  weft::config cfg;
  cfg.apply_environment();
  return cfg;
}

/// Expects apply_environment() with `var`=`value` to throw invalid_config naming both.
void expect_malformed(const char* var, const char* value) {
  SCOPED_TRACE(std::string(var) + "='" + value + "'");
  scoped_env e(var, value);
  weft::config cfg;
  try {
    cfg.apply_environment();
    ADD_FAILURE() << "apply_environment accepted " << var << "='" << value << "'";
  } catch (const weft::error& err) {
    EXPECT_EQ(err.condition(), weft::errc::invalid_config) << err.what();
    EXPECT_EQ(err.code(), weft::make_error_code(weft::errc::invalid_config));
    const std::string what = err.what();
    EXPECT_NE(what.find(var), std::string::npos) << "what() does not name the variable: " << what;
    EXPECT_NE(what.find(std::string("'") + value + "'"), std::string::npos)
        << "what() does not quote the value: " << what;
  }
  // init() reports the same, and leaves no runtime behind.
  try {
    weft::init(test_config(1));
    weft::finalize();
    ADD_FAILURE() << "init accepted " << var << "='" << value << "'";
  } catch (const weft::error& err) {
    EXPECT_EQ(err.condition(), weft::errc::invalid_config) << err.what();
    EXPECT_NE(std::string(err.what()).find(var), std::string::npos) << err.what();
  }
  EXPECT_FALSE(weft::initialized());
}

TEST_F(ConfigTest, Defaults) {
  weft::config cfg;
  EXPECT_EQ(cfg.num_streams, 0);
  EXPECT_EQ(cfg.stack_size, 16u * 1024);
  EXPECT_EQ(cfg.affinity.how, kind::compact);
  EXPECT_EQ(cfg.scheduler, "randws");
  EXPECT_EQ(cfg.event_freq, 64u);
  EXPECT_EQ(cfg.idle_spin, 256u);
  EXPECT_FALSE(cfg.print);
  EXPECT_NO_THROW(cfg.validate());
  // With no WEFT_* set, apply_environment changes nothing.
  weft::config env = cfg;
  env.apply_environment();
  EXPECT_EQ(env.describe(), cfg.describe());
}

TEST_F(ConfigTest, EnvironmentOverridesCode) {
  scoped_env e("WEFT_NUM_STREAMS", "3");
  weft::config cfg;
  cfg.num_streams = 1;
  cfg.event_freq = 5;
  cfg.apply_environment();
  EXPECT_EQ(cfg.num_streams, 3);
  EXPECT_EQ(cfg.event_freq, 5u) << "fields whose variable is unset keep their value";
}

TEST_F(ConfigTest, NumStreams) {
  EXPECT_EQ(from_env("WEFT_NUM_STREAMS", "1").num_streams, 1);
  EXPECT_EQ(from_env("WEFT_NUM_STREAMS", "3").num_streams, 3);
  EXPECT_EQ(from_env("WEFT_NUM_STREAMS", " 4 ").num_streams, 4);
  EXPECT_EQ(from_env("WEFT_NUM_STREAMS", "4096").num_streams, 4096);
  for (const char* bad : {"", "abc", "-1", "2x", "1.5", "4097", "99999999999999999999", "0x4"}) {
    expect_malformed("WEFT_NUM_STREAMS", bad);
  }
}

TEST_F(ConfigTest, NumStreamsFromEnvironmentAtInit) {
  scoped_env e("WEFT_NUM_STREAMS", "3");
  weft::runtime rt(test_config(1));
  EXPECT_EQ(weft::execution_stream::count(), 3);
  EXPECT_EQ(weft::current_config().num_streams, 3);
}

TEST_F(ConfigTest, StackSize) {
  EXPECT_EQ(from_env("WEFT_STACK_SIZE", "32768").stack_size, 32768u);
  EXPECT_EQ(from_env("WEFT_STACK_SIZE", "64K").stack_size, 64u * 1024);
  EXPECT_EQ(from_env("WEFT_STACK_SIZE", "64k").stack_size, 64u * 1024);
  EXPECT_EQ(from_env("WEFT_STACK_SIZE", "1M").stack_size, 1024u * 1024);
  EXPECT_EQ(from_env("WEFT_STACK_SIZE", "2m").stack_size, 2u * 1024 * 1024);
  EXPECT_EQ(from_env("WEFT_STACK_SIZE", " 128K ").stack_size, 128u * 1024);
  for (const char* bad :
       {"", "K", "abc", "0", "-5", "12Q", "1.5K", "64KB", "K64", "99999999999999999999"}) {
    expect_malformed("WEFT_STACK_SIZE", bad);
  }
}

TEST_F(ConfigTest, StackSizeFromEnvironmentIsUsed) {
  // A ULT with the default stack can use most of a 256 KiB WEFT_STACK_SIZE.
  scoped_env e("WEFT_STACK_SIZE", "256K");
  weft::runtime rt(test_config(1));
  EXPECT_EQ(weft::current_config().stack_size, 256u * 1024);
  std::size_t sum = 0;
  weft::ult::create([&] {
    volatile unsigned char big[160 * 1024];
    for (std::size_t i = 0; i < sizeof big; i += 512)
      big[i] = static_cast<unsigned char>(1 + (i >> 9));
    for (std::size_t i = 0; i < sizeof big; i += 512) sum += big[i];
  }).join();
  EXPECT_GT(sum, 0u);
}

TEST_F(ConfigTest, StackReserve) {
  EXPECT_EQ(weft::config{}.stack_reserve, 48u * 1024);
  EXPECT_EQ(from_env("WEFT_STACK_RESERVE", "0").stack_reserve, 0u);
  EXPECT_EQ(from_env("WEFT_STACK_RESERVE", " 0 ").stack_reserve, 0u);
  EXPECT_EQ(from_env("WEFT_STACK_RESERVE", "112K").stack_reserve, 112u * 1024);
  EXPECT_EQ(from_env("WEFT_STACK_RESERVE", "1m").stack_reserve, 1024u * 1024);
  for (const char* bad : {"", "K", "-1", "12Q", "1.5K", "00x"})
    expect_malformed("WEFT_STACK_RESERVE", bad);
  weft::config cfg = test_config(1);
  cfg.stack_reserve = (std::size_t{1} << 30) + 1;
  EXPECT_WEFT_ERRC(cfg.validate(), weft::errc::invalid_config);
  EXPECT_NE(weft::config{}.describe().find("stack_reserve = 49152\n"), std::string::npos);
}

TEST_F(ConfigTest, AUltCanUseItsStackReserve) {
  // The default 16 KiB stack and its 48 KiB reserve: 40 KiB of frames fit.
  weft::runtime rt(test_config(1));
  std::size_t sum = 0;
  weft::ult u = weft::ult::create([&] {
    volatile unsigned char big[40 * 1024];
    for (std::size_t i = 0; i < sizeof big; i += 512)
      big[i] = static_cast<unsigned char>(1 + (i >> 9));
    for (std::size_t i = 0; i < sizeof big; i += 512) sum += big[i];
  });
  weft::this_unit::yield();  // u starts on a stack of its own, not on this one
  u.join();
  EXPECT_GT(sum, 0u);
}

TEST_F(ConfigTest, StackSizeOutOfRangeFailsValidation) {
  // Well-formed but below the 4 KiB minimum.
  scoped_env e("WEFT_STACK_SIZE", "1K");
  EXPECT_WEFT_ERRC(weft::init(test_config(1)), weft::errc::invalid_config);
  EXPECT_FALSE(weft::initialized());
}

TEST_F(ConfigTest, Affinity) {
  EXPECT_EQ(from_env("WEFT_AFFINITY", "none").affinity.how, kind::none);
  EXPECT_EQ(from_env("WEFT_AFFINITY", "compact").affinity.how, kind::compact);
  EXPECT_EQ(from_env("WEFT_AFFINITY", "scatter").affinity.how, kind::scatter);
  EXPECT_EQ(from_env("WEFT_AFFINITY", " scatter ").affinity.how, kind::scatter);
  const weft::config p = from_env("WEFT_AFFINITY", "{0,1},{2,3}");
  EXPECT_EQ(p.affinity.how, kind::places);
  EXPECT_EQ(p.affinity.places, (places_t{{0, 1}, {2, 3}}));
  EXPECT_EQ(from_env("WEFT_AFFINITY", "0:4:2").affinity.places, (places_t{{0}, {2}, {4}, {6}}));
  for (const char* bad : {"", "Compact", "bogus", "{0,1", "{0,1},", "0:", "0:0", "{}", "1,,2", "-1",
                          "{0}:2:-3", "70000", "{0:2:}"}) {
    expect_malformed("WEFT_AFFINITY", bad);
  }
}

TEST_F(ConfigTest, Scheduler) {
  EXPECT_EQ(from_env("WEFT_SCHED", "basic").scheduler, "basic");
  EXPECT_EQ(from_env("WEFT_SCHED", "  basic ").scheduler, "basic");
  // Any non-empty name is well formed; whether it exists is checked by init.
  EXPECT_EQ(from_env("WEFT_SCHED", "whatever").scheduler, "whatever");
  for (const char* bad : {"", "   "}) expect_malformed("WEFT_SCHED", bad);
}

TEST_F(ConfigTest, UnknownSchedulerFromEnvironment) {
  scoped_env e("WEFT_SCHED", "no_such_sched");
  const std::string what = what_of([] { weft::init(test_config(1)); });
  EXPECT_FALSE(weft::initialized());
  EXPECT_NE(what.find("no_such_sched"), std::string::npos) << what;
  EXPECT_NE(what.find("WEFT_SCHED"), std::string::npos) << what;
  EXPECT_WEFT_ERRC(weft::init(test_config(1)), weft::errc::invalid_config);
  EXPECT_FALSE(weft::initialized());
}

TEST_F(ConfigTest, UnknownSchedulerName) {
  EXPECT_WEFT_ERRC(weft::make_scheduler("no_such_sched"), weft::errc::invalid_config);
  const std::string what = what_of([] { weft::make_scheduler("no_such_sched"); });
  EXPECT_NE(what.find("no_such_sched"), std::string::npos) << what;
  EXPECT_NE(what.find("basic"), std::string::npos) << "the message lists the known names: " << what;
  weft::config cfg = test_config(2);
  cfg.scheduler = "no_such_sched";
  EXPECT_WEFT_ERRC(weft::init(cfg), weft::errc::invalid_config);
  EXPECT_FALSE(weft::initialized());
  auto names = weft::scheduler_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "basic"), names.end());
}

TEST_F(ConfigTest, EventFreq) {
  EXPECT_EQ(from_env("WEFT_EVENT_FREQ", "1").event_freq, 1u);
  EXPECT_EQ(from_env("WEFT_EVENT_FREQ", "16").event_freq, 16u);
  EXPECT_EQ(from_env("WEFT_EVENT_FREQ", "1048576").event_freq, 1048576u);
  for (const char* bad : {"", "0", "-3", "x", "16x", "1048577"})
    expect_malformed("WEFT_EVENT_FREQ", bad);
}

TEST_F(ConfigTest, IdleSpin) {
  EXPECT_EQ(from_env("WEFT_IDLE_SPIN", "0").idle_spin, 0u);
  EXPECT_EQ(from_env("WEFT_IDLE_SPIN", "100").idle_spin, 100u);
  EXPECT_EQ(from_env("WEFT_IDLE_SPIN", "16777216").idle_spin, 16777216u);
  for (const char* bad : {"", "-1", "abc", "1e3", "16777217"})
    expect_malformed("WEFT_IDLE_SPIN", bad);
}

TEST_F(ConfigTest, ParkLimit) {
  EXPECT_EQ(weft::config{}.park_limit_ms, 100u);
  EXPECT_EQ(from_env("WEFT_PARK_LIMIT_MS", "1").park_limit_ms, 1u);
  EXPECT_EQ(from_env("WEFT_PARK_LIMIT_MS", " 250 ").park_limit_ms, 250u);
  EXPECT_EQ(from_env("WEFT_PARK_LIMIT_MS", "3600000").park_limit_ms, 3600000u);
  for (const char* bad : {"", "0", "-1", "10ms", "1.5", "3600001"})
    expect_malformed("WEFT_PARK_LIMIT_MS", bad);
  for (unsigned bad : {0u, 3600001u}) {
    weft::config cfg;
    cfg.park_limit_ms = bad;
    try {
      cfg.validate();
      ADD_FAILURE() << "park_limit_ms " << bad << " was accepted";
    } catch (const weft::error& e) {
      EXPECT_EQ(e.condition(), weft::errc::invalid_config);
      EXPECT_NE(std::string(e.what()).find("park_limit_ms " + std::to_string(bad)),
                std::string::npos)
          << e.what();
    }
  }
}

TEST_F(ConfigTest, EventFreqAndIdleSpinReachTheSchedulers) {
  scoped_env f("WEFT_EVENT_FREQ", "3");
  scoped_env s("WEFT_IDLE_SPIN", "0");
  weft::runtime rt(test_config(2));
  EXPECT_EQ(weft::current_config().event_freq, 3u);
  EXPECT_EQ(weft::current_config().idle_spin, 0u);
  std::atomic<int> ran{0};
  std::vector<weft::ult> us;
  us.reserve(100);
  for (int i = 0; i < 100; ++i)
    us.push_back(weft::ult::create_on(*weft::execution_stream::by_rank(i % 2), [&] {
      weft::this_unit::yield();
      ran++;
    }));
  for (auto& u : us) u.join();
  EXPECT_EQ(ran.load(), 100);
}

TEST_F(ConfigTest, PrintConfig) {
  for (const char* yes : {"1", "true", "yes", "on"})
    EXPECT_TRUE(from_env("WEFT_PRINT_CONFIG", yes).print) << yes;
  for (const char* no : {"0", "false", "no", "off"})
    EXPECT_FALSE(from_env("WEFT_PRINT_CONFIG", no).print) << no;
  for (const char* bad : {"", "maybe", "2", "Y"}) expect_malformed("WEFT_PRINT_CONFIG", bad);
}

TEST_F(ConfigTest, Validate) {
  auto invalid = [](auto mutate) {
    weft::config cfg;
    mutate(cfg);
    return errc_of([&] { cfg.validate(); });
  };
  EXPECT_EQ(invalid([](weft::config& c) { c.num_streams = -1; }), weft::errc::invalid_config);
  EXPECT_EQ(invalid([](weft::config& c) { c.num_streams = 4097; }), weft::errc::invalid_config);
  EXPECT_EQ(invalid([](weft::config& c) { c.stack_size = 100; }), weft::errc::invalid_config);
  EXPECT_EQ(invalid([](weft::config& c) { c.stack_size = (std::size_t{1} << 30) + 1; }),
            weft::errc::invalid_config);
  EXPECT_EQ(invalid([](weft::config& c) { c.event_freq = 0; }), weft::errc::invalid_config);
  EXPECT_EQ(invalid([](weft::config& c) { c.scheduler.clear(); }), weft::errc::invalid_config);
  EXPECT_EQ(invalid([](weft::config& c) {
              c.affinity.how = kind::places;
              c.affinity.places.clear();
            }),
            weft::errc::invalid_config);
  EXPECT_EQ(invalid([](weft::config& c) { c.num_streams = 4096; }), std::nullopt);
  EXPECT_EQ(invalid([](weft::config& c) { c.stack_size = 4096; }), std::nullopt);
  // init validates what code sets, too.
  weft::config cfg = test_config(1);
  cfg.event_freq = 0;
  EXPECT_WEFT_ERRC(weft::init(cfg), weft::errc::invalid_config);
  EXPECT_FALSE(weft::initialized());
}

// ----------------------------------------------------------------------------------------------
// affinity_policy::parse / to_string

TEST_F(ConfigTest, ParseKeywords) {
  EXPECT_EQ(weft::affinity_policy::parse("none").how, kind::none);
  EXPECT_EQ(weft::affinity_policy::parse("compact").how, kind::compact);
  EXPECT_EQ(weft::affinity_policy::parse("scatter").how, kind::scatter);
  EXPECT_TRUE(weft::affinity_policy::parse("none").places.empty());
}

TEST_F(ConfigTest, ParsePlaceLists) {
  struct example {
    const char* text;
    places_t places;
  };
  const example examples[] = {
      {"{0,1},{2,3}", {{0, 1}, {2, 3}}},
      {"0:4:2", {{0}, {2}, {4}, {6}}},
      {"{0:2}:2:2", {{0, 1}, {2, 3}}},
      {"{0:2}:2", {{0, 1}, {1, 2}}},
      {"0", {{0}}},
      {"3,1,2", {{3}, {1}, {2}}},
      {"0:3", {{0}, {1}, {2}}},
      {"{4}:3:-2", {{4}, {2}, {0}}},
      {"{0,2,4}", {{0, 2, 4}}},
      {"{0:4:2}", {{0, 2, 4, 6}}},
      {" { 0 , 1 } , { 2 , 3 } ", {{0, 1}, {2, 3}}},
      {"{0,1}:2:4", {{0, 1}, {4, 5}}},
  };
  for (const auto& ex : examples) {
    SCOPED_TRACE(ex.text);
    const auto p = weft::affinity_policy::parse(ex.text);
    EXPECT_EQ(p.how, kind::places);
    EXPECT_EQ(p.places, ex.places);
  }
}

TEST_F(ConfigTest, ParseMalformed) {
  for (const char* bad :
       {"",         " ",     "{",      "}",       "{0,1", "0,1}",         "{0},", ",0", "0:",
        "0:0",      "0::2",  "{}",     "{,}",     "a",    "{a}",          "1,,2", "-1", "{-1}",
        "{0}:2:-3", "70000", "{0}{1}", "0:2:2:2", "NONE", "none,compact", "{0:0}"}) {
    SCOPED_TRACE(std::string("'") + bad + "'");
    try {
      auto p = weft::affinity_policy::parse(bad, "my_origin");
      ADD_FAILURE() << "accepted, giving " << p.to_string();
    } catch (const weft::error& e) {
      EXPECT_EQ(e.condition(), weft::errc::invalid_config);
      const std::string what = e.what();
      EXPECT_NE(what.find("my_origin"), std::string::npos) << what;
      EXPECT_NE(what.find(std::string("'") + bad + "'"), std::string::npos) << what;
    }
  }
}

TEST_F(ConfigTest, APlaceOutsideTheMaskFailsInitNamingTheField) {
  // CPU 65535 is in no test machine's mask. The message names the field, not WEFT_AFFINITY: the
  // list came from code, under a label of its own.
  weft::config cfg = test_config(1);
  cfg.affinity = weft::affinity_policy::parse("0,65535", "my affinity");
  const auto init = [&] { weft::runtime rt(cfg); };
  EXPECT_EQ(errc_of(init), weft::errc::invalid_config);
  EXPECT_EQ(what_of(init),
            "weft: affinity: a place names CPU 65535, which is not in the process's affinity mask");
  EXPECT_FALSE(weft::initialized());
}

TEST_F(ConfigTest, ToStringRoundTrip) {
  for (const char* text : {"none", "compact", "scatter", "{0,1},{2,3}", "0:4:2", "{0:2}:2:2", "7",
                           "{5,3,1}", "{4}:3:-2"}) {
    SCOPED_TRACE(text);
    const auto p = weft::affinity_policy::parse(text);
    const std::string s = p.to_string();
    const auto q = weft::affinity_policy::parse(s);
    EXPECT_EQ(q.how, p.how) << s;
    EXPECT_EQ(q.places, p.places) << s;
    EXPECT_EQ(q.to_string(), s);
  }
  EXPECT_EQ(weft::affinity_policy::parse("none").to_string(), "none");
  EXPECT_EQ(weft::affinity_policy::parse("compact").to_string(), "compact");
  EXPECT_EQ(weft::affinity_policy::parse("scatter").to_string(), "scatter");
  EXPECT_EQ(weft::affinity_policy::parse("0:4:2").to_string(), "{0},{2},{4},{6}");
  EXPECT_EQ(weft::affinity_policy{}.to_string(), "compact");
}

// ----------------------------------------------------------------------------------------------
// parse_size

TEST_F(ConfigTest, ParseSize) {
  EXPECT_EQ(weft::parse_size("16384", "x"), 16384u);
  EXPECT_EQ(weft::parse_size("1", "x"), 1u);
  EXPECT_EQ(weft::parse_size("64K", "x"), 65536u);
  EXPECT_EQ(weft::parse_size("64k", "x"), 65536u);
  EXPECT_EQ(weft::parse_size("2M", "x"), 2u * 1024 * 1024);
  EXPECT_EQ(weft::parse_size("1G", "x"), std::size_t{1} << 30);
  EXPECT_EQ(weft::parse_size("  8k ", "x"), 8192u);
  for (const char* bad : {"", " ", "K", "M", "0", "0K", "-1", "-1K", "1.5K", "12KB", "1 K", "x1",
                          "1T", "99999999999999999999", "18014398509481984K"}) {
    SCOPED_TRACE(std::string("'") + bad + "'");
    const std::string what = what_of([&] { weft::parse_size(bad, "SIZE_ORIGIN"); });
    EXPECT_EQ(errc_of([&] { weft::parse_size(bad, "SIZE_ORIGIN"); }), weft::errc::invalid_config);
    EXPECT_NE(what.find("SIZE_ORIGIN"), std::string::npos) << what;
  }
}

// ----------------------------------------------------------------------------------------------
// Streams, places and the affinity mask

TEST_F(ConfigTest, DefaultNumStreamsIsTheAffinityMask) {
  const int cpus = affinity_cpu_count();
  ASSERT_GT(cpus, 0);
  weft::runtime rt;  // num_streams = 0
  EXPECT_EQ(weft::execution_stream::count(), cpus);
  EXPECT_EQ(weft::current_config().num_streams, cpus);
}

TEST_F(ConfigTest, DefaultNumStreamsFollowsARestrictedMask) {
  const std::vector<int> all = affinity_cpus();
  ASSERT_FALSE(all.empty());
  cpu_set_t saved;
  ASSERT_EQ(sched_getaffinity(0, sizeof saved, &saved), 0);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(all.back(), &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  {
    weft::runtime rt;
    EXPECT_EQ(weft::execution_stream::count(), 1);
    EXPECT_EQ(weft::execution_stream::primary().cpus(), std::vector<int>{all.back()});
  }
  ASSERT_EQ(sched_setaffinity(0, sizeof saved, &saved), 0);
}

class AffinityTest : public streams_test {
 protected:
  void SetUp() override {}  // each test initialises with its own policy
};
WEFT_INSTANTIATE_STREAMS(AffinityTest);

/// The CPU mask of the kernel thread running stream `s`, read from a ULT running there.
std::vector<int> mask_of(weft::execution_stream& s) {
  std::vector<int> mask;
  weft::ult::create_on(s, [&] { mask = affinity_cpus(); }).join();
  return mask;
}

TEST_P(AffinityTest, CompactBindsEveryStream) {
  const std::vector<int> allowed = affinity_cpus();
  weft::config cfg = test_config(streams());
  cfg.affinity = weft::affinity_policy::parse("compact");
  init(cfg);
  for (int r = 0; r < streams(); ++r) {
    SCOPED_TRACE("stream " + std::to_string(r));
    const std::vector<int>& cpus = stream(r).cpus();
    ASSERT_EQ(cpus.size(), 1u);
    // Places wrap around when there are more streams than CPUs.
    EXPECT_EQ(cpus.front(), allowed[static_cast<std::size_t>(r) % allowed.size()]);
    EXPECT_EQ(mask_of(stream(r)), cpus);
  }
}

TEST_P(AffinityTest, ScatterBindsEveryStream) {
  const std::vector<int> allowed = affinity_cpus();
  weft::config cfg = test_config(streams());
  cfg.affinity = weft::affinity_policy::parse("scatter");
  init(cfg);
  std::vector<int> seen;
  for (int r = 0; r < streams(); ++r) {
    const std::vector<int>& cpus = stream(r).cpus();
    ASSERT_EQ(cpus.size(), 1u);
    EXPECT_NE(std::find(allowed.begin(), allowed.end(), cpus.front()), allowed.end());
    EXPECT_EQ(mask_of(stream(r)), cpus);
    seen.push_back(cpus.front());
  }
  // The first min(streams, CPUs) streams get distinct CPUs.
  const std::size_t distinct =
      std::min<std::size_t>(static_cast<std::size_t>(streams()), allowed.size());
  std::vector<int> first(seen.begin(), seen.begin() + static_cast<std::ptrdiff_t>(distinct));
  std::sort(first.begin(), first.end());
  EXPECT_EQ(std::unique(first.begin(), first.end()), first.end());
}

TEST_P(AffinityTest, NoneLeavesStreamsUnbound) {
  const std::vector<int> allowed = affinity_cpus();
  weft::config cfg = test_config(streams());
  cfg.affinity = weft::affinity_policy::parse("none");
  init(cfg);
  for (int r = 0; r < streams(); ++r) {
    EXPECT_TRUE(stream(r).cpus().empty()) << "stream " << r;
    EXPECT_EQ(mask_of(stream(r)), allowed) << "stream " << r;
  }
}

TEST_P(AffinityTest, ExplicitPlacesFromTheEnvironment) {
  const std::vector<int> allowed = affinity_cpus();
  // Places {last}, {first[,second]}: stream r takes place r modulo 2.
  std::vector<std::vector<int>> places{{allowed.back()}, {allowed.front()}};
  if (allowed.size() > 1) places[1].push_back(allowed[1]);
  weft::affinity_policy p;
  p.how = kind::places;
  p.places = places;
  scoped_env e("WEFT_AFFINITY", p.to_string().c_str());
  init(test_config(streams()));
  EXPECT_EQ(weft::current_config().affinity.how, kind::places);
  for (int r = 0; r < streams(); ++r) {
    SCOPED_TRACE("stream " + std::to_string(r));
    const auto& expected = places[static_cast<std::size_t>(r) % places.size()];
    EXPECT_EQ(stream(r).cpus(), expected);
    std::vector<int> mask = mask_of(stream(r));
    std::vector<int> want = expected;
    std::sort(want.begin(), want.end());
    EXPECT_EQ(mask, want);
  }
}

TEST_P(AffinityTest, StreamsCreatedLaterTakeThePlaceOfTheirRank) {
  const std::vector<int> allowed = affinity_cpus();
  weft::config cfg = test_config(streams());
  cfg.affinity = weft::affinity_policy::parse("compact");
  init(cfg);
  scoped_stream extra;
  EXPECT_EQ(extra->rank(), streams());
  ASSERT_EQ(extra->cpus().size(), 1u);
  EXPECT_EQ(extra->cpus().front(), allowed[static_cast<std::size_t>(streams()) % allowed.size()]);
  EXPECT_EQ(mask_of(*extra), extra->cpus());
}

}  // namespace
