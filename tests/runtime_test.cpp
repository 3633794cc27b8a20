// SPDX-License-Identifier: Apache-2.0
// init/finalize, the RAII guard, nesting, the primary-only rule of finalize, re-initialisation
// and print_config.
#include <sstream>
#include <thread>

#include "test_support.hpp"

namespace {

using namespace weft_test;

class RuntimeTest : public streams_test {
 protected:
  // These tests drive init/finalize themselves.
  void SetUp() override { ASSERT_FALSE(weft::initialized()); }
};
WEFT_INSTANTIATE_STREAMS(RuntimeTest);

TEST_P(RuntimeTest, InitFinalize) {
  EXPECT_FALSE(weft::initialized());
  weft::init(test_config(streams()));
  EXPECT_TRUE(weft::initialized());
  EXPECT_EQ(weft::execution_stream::count(), streams());
  EXPECT_EQ(weft::current_config().num_streams, streams());
  EXPECT_TRUE(weft::this_unit::is_ult()) << "the thread that called init is the primary ULT";
  EXPECT_FALSE(weft::this_unit::is_tasklet());
  EXPECT_NE(weft::this_unit::id(), 0u);
  EXPECT_EQ(weft::this_unit::stream(), &weft::execution_stream::primary());
  EXPECT_EQ(weft::execution_stream::self(), &weft::execution_stream::primary());
  int x = 0;
  weft::ult::create([&] { x = 42; }).join();
  EXPECT_EQ(x, 42);
  weft::finalize();
  EXPECT_FALSE(weft::initialized());
  EXPECT_EQ(weft::execution_stream::count(), 0);
  EXPECT_EQ(weft::execution_stream::self(), nullptr);
  EXPECT_EQ(weft::this_unit::current(), nullptr);
  EXPECT_EQ(weft::this_unit::id(), 0u);
  EXPECT_FALSE(weft::this_unit::is_ult());
}

TEST_P(RuntimeTest, RaiiGuard) {
  std::atomic<int> ran{0};
  {
    weft::runtime rt(test_config(streams()));
    EXPECT_TRUE(weft::initialized());
    for (int r = 0; r < streams(); ++r) {
      weft::ult::create_on(stream(r), [&] { ran.fetch_add(1); }).detach();
    }
  }
  EXPECT_FALSE(weft::initialized());
  // finalize drains every pool before it returns.
  EXPECT_EQ(ran.load(), streams());
}

TEST_F(env_test, DefaultConstructedGuardUsesTheEnvironment) {
  scoped_env n("WEFT_NUM_STREAMS", "2");
  weft::runtime rt;
  EXPECT_EQ(weft::execution_stream::count(), 2);
  EXPECT_EQ(weft::current_config().num_streams, 2);
}

TEST_P(RuntimeTest, NestedInitOnlyCounts) {
  weft::init(test_config(streams()));
  weft::execution_stream* primary = &weft::execution_stream::primary();
  // A nested init's configuration is ignored.
  weft::init(test_config(streams() + 1));
  weft::init();
  EXPECT_EQ(weft::execution_stream::count(), streams());
  EXPECT_EQ(weft::current_config().num_streams, streams());
  weft::finalize();
  weft::finalize();
  // The inner finalizes did not tear anything down.
  EXPECT_TRUE(weft::initialized());
  EXPECT_EQ(&weft::execution_stream::primary(), primary);
  EXPECT_EQ(weft::execution_stream::count(), streams());
  std::atomic<int> ran{0};
  std::vector<weft::ult> us;
  for (int r = 0; r < streams(); ++r) us.push_back(weft::ult::create_on(stream(r), [&] { ran++; }));
  for (auto& u : us) u.join();
  EXPECT_EQ(ran.load(), streams());
  weft::finalize();
  EXPECT_FALSE(weft::initialized());
}

TEST_P(RuntimeTest, FinalizeFromAnotherThreadIsWrongThread) {
  weft::init(test_config(streams()));
  std::optional<weft::errc> got;
  std::thread t([&] { got = errc_of([] { weft::finalize(); }); });
  t.join();
  EXPECT_TRUE(got == weft::errc::wrong_thread) << describe(got);
  EXPECT_TRUE(weft::initialized());
  // The runtime still works and the primary can finalize.
  int x = 0;
  weft::ult::create([&] { x = 1; }).join();
  EXPECT_EQ(x, 1);
  weft::finalize();
  EXPECT_FALSE(weft::initialized());
}

TEST_P(RuntimeTest, FinalizeFromAnotherUltIsWrongThread) {
  weft::init(test_config(streams()));
  // On every stream, the primary's included: a ULT other than the primary ULT may not finalize,
  // even on the primary's own kernel thread.
  std::vector<std::optional<weft::errc>> got(static_cast<std::size_t>(streams()));
  std::vector<weft::ult> us;
  for (int r = 0; r < streams(); ++r) {
    us.push_back(weft::ult::create_on(stream(r), [&got, r] {
      got[static_cast<std::size_t>(r)] = errc_of([] { weft::finalize(); });
    }));
  }
  for (auto& u : us) u.join();
  for (int r = 0; r < streams(); ++r) {
    EXPECT_TRUE(got[static_cast<std::size_t>(r)] == weft::errc::wrong_thread)
        << "stream " << r << ": " << describe(got[static_cast<std::size_t>(r)]);
  }
  // A tasklet may not either.
  std::optional<weft::errc> from_tasklet;
  weft::tasklet::create([&] { from_tasklet = errc_of([] { weft::finalize(); }); }).join();
  EXPECT_TRUE(from_tasklet == weft::errc::wrong_thread) << describe(from_tasklet);
  EXPECT_TRUE(weft::initialized());
  weft::finalize();
  EXPECT_FALSE(weft::initialized());
}

TEST_F(env_test, FinalizeWithoutInitIsNotInitialized) {
  EXPECT_WEFT_ERRC(weft::finalize(), weft::errc::not_initialized);
  EXPECT_WEFT_ERRC(weft::current_config(), weft::errc::not_initialized);
  std::ostringstream out;
  EXPECT_WEFT_ERRC(weft::print_config(out), weft::errc::not_initialized);
  EXPECT_WEFT_ERRC(weft::execution_stream::primary(), weft::errc::not_initialized);
  EXPECT_WEFT_ERRC(weft::execution_stream::create(), weft::errc::not_initialized);
  EXPECT_EQ(weft::execution_stream::count(), 0);
  EXPECT_EQ(weft::execution_stream::by_rank(0), nullptr);
}

TEST_F(env_test, ErrorMessagesSayWhatWentWrongOnce) {
  // what() is the message of the throw alone: the code's generic text would repeat it.
  const auto uninitialised = [] { weft::finalize(); };
  EXPECT_EQ(what_of(uninitialised), "weft: the runtime is not initialised");
  try {
    uninitialised();
  } catch (const weft::error& e) {
    EXPECT_EQ(e.code().message(), "weft is not initialised");
  }
  const auto outside_a_ult = [] { weft::this_unit::yield(); };
  weft::init(test_config(1));
  std::string what;
  std::thread([&] { what = what_of(outside_a_ult); }).join();
  weft::finalize();
  EXPECT_EQ(what, "weft: yield must be called from a ULT");
  // Every code's generic text, against a message that says nothing more than it.
  for (int code = 1; code <= static_cast<int>(weft::errc::unsupported); ++code) {
    const auto c = static_cast<weft::errc>(code);
    const weft::error e(c, "weft: specific");
    EXPECT_STREQ(e.what(), "weft: specific");
    EXPECT_EQ(e.condition(), c);
    EXPECT_STREQ(weft::error(c, "").what(), weft::make_error_code(c).message().c_str());
    const weft::error copy = e;
    EXPECT_STREQ(copy.what(), "weft: specific");
  }
}

TEST_P(RuntimeTest, ReinitAfterFinalize) {
  for (int round = 0; round < 5; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    weft::init(test_config(streams()));
    ASSERT_TRUE(weft::initialized());
    EXPECT_EQ(weft::execution_stream::count(), streams());
    std::atomic<int> ran{0};
    std::vector<weft::ult> us;
    for (int i = 0; i < 32; ++i) {
      us.push_back(weft::ult::create_on(stream(i % streams()), [&] {
        weft::this_unit::yield();
        ran++;
      }));
    }
    std::vector<weft::tasklet> ts;
    for (int i = 0; i < 32; ++i)
      ts.push_back(weft::tasklet::create_on(stream(i % streams()), [&] { ran++; }));
    for (auto& u : us) u.join();
    for (auto& t : ts) t.join();
    EXPECT_EQ(ran.load(), 64);
    weft::finalize();
    EXPECT_FALSE(weft::initialized());
  }
}

TEST_P(RuntimeTest, UnitIdsStayUniqueAcrossReinit) {
  std::vector<weft::unit_id> ids;
  for (int round = 0; round < 3; ++round) {
    weft::runtime rt(test_config(streams()));
    for (int i = 0; i < 16; ++i) {
      weft::ult u = weft::ult::create_on(stream(i % streams()), [] {});
      ids.push_back(u.id());
      u.join();
    }
  }
  // work_unit.hpp: unit_id is "unique over the life of the process; 0 is never used".
  std::sort(ids.begin(), ids.end());
  const auto dup = std::adjacent_find(ids.begin(), ids.end());
  EXPECT_TRUE(dup == ids.end()) << "unit id " << *dup
                                << " was handed out twice (in different runtimes)";
  EXPECT_NE(ids.front(), 0u);
}

TEST_P(RuntimeTest, PrintConfigNamesEveryKey) {
  weft::config cfg = test_config(streams());
  cfg.stack_size = 64 * 1024;
  cfg.event_freq = 17;
  cfg.idle_spin = 33;
  cfg.park_limit_ms = 250;
  cfg.affinity = weft::affinity_policy::parse("none");
  weft::runtime rt(cfg);
  std::ostringstream out;
  weft::print_config(out);
  const std::string text = out.str();
  for (const char* line :
       {"num_streams = ", "stack_size = ", "affinity = ", "scheduler = ", "event_freq = ",
        "idle_spin = ", "park_limit_ms = ", "print = ", "dump_signal = "}) {
    EXPECT_NE(text.find(line), std::string::npos) << "missing '" << line << "' in:\n" << text;
  }
  EXPECT_NE(text.find("num_streams = " + std::to_string(streams()) + "\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("stack_size = 65536\n"), std::string::npos) << text;
  EXPECT_NE(text.find("affinity = none\n"), std::string::npos) << text;
  EXPECT_NE(text.find("scheduler = basic\n"), std::string::npos) << text;
  EXPECT_NE(text.find("event_freq = 17\n"), std::string::npos) << text;
  EXPECT_NE(text.find("idle_spin = 33\n"), std::string::npos) << text;
  EXPECT_NE(text.find("park_limit_ms = 250\n"), std::string::npos) << text;
  EXPECT_NE(text.find("print = 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("dump_signal = none\n"), std::string::npos) << text;
  EXPECT_EQ(text, weft::current_config().describe());
}

// config has seven fields; print_config promises "the effective configuration". The `print`
// field (WEFT_PRINT_CONFIG) is part of it and must be listed too.
TEST_F(env_test, PrintConfigNamesThePrintKey) {
  weft::runtime rt(test_config(1));
  std::ostringstream out;
  weft::print_config(out);
  EXPECT_NE(out.str().find("print = "), std::string::npos) << "missing 'print = ' in:\n"
                                                           << out.str();
}

TEST_F(env_test, PrintConfigAtInitFromTheEnvironment) {
  scoped_env p("WEFT_PRINT_CONFIG", "1");
  scoped_env n("WEFT_NUM_STREAMS", "2");
  testing::internal::CaptureStderr();
  weft::init();
  weft::finalize();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("num_streams = 2\n"), std::string::npos) << err;
  EXPECT_NE(err.find("scheduler = randws\n"), std::string::npos) << err;
}

TEST_F(env_test, PrintConfigFromCode) {
  weft::config cfg = test_config(1);
  cfg.print = true;
  testing::internal::CaptureStderr();
  weft::init(cfg);
  weft::finalize();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("num_streams = 1\n"), std::string::npos) << err;
}

TEST_F(env_test, NoPrintByDefault) {
  testing::internal::CaptureStderr();
  weft::init(test_config(1));
  weft::finalize();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err.find("num_streams"), std::string::npos) << err;
}

TEST_F(env_test, FailedInitLeavesNothingBehind) {
  weft::config cfg = test_config(2);
  cfg.scheduler = "no-such-scheduler";
  EXPECT_WEFT_ERRC(weft::init(cfg), weft::errc::invalid_config);
  EXPECT_FALSE(weft::initialized());
  // An explicit place naming a CPU outside the mask fails at init (not when parsed).
  cfg = test_config(2);
  cfg.affinity = weft::affinity_policy::parse("{4000}");
  EXPECT_WEFT_ERRC(weft::init(cfg), weft::errc::invalid_config);
  EXPECT_FALSE(weft::initialized());
  // And the runtime can be initialised afterwards.
  weft::runtime rt(test_config(2));
  EXPECT_EQ(weft::execution_stream::count(), 2);
}

TEST_P(RuntimeTest, PrimaryAffinityRestoredAfterFinalize) {
  const std::vector<int> before = affinity_cpus();
  {
    weft::config cfg = test_config(streams());
    cfg.affinity = weft::affinity_policy::parse("compact");
    weft::runtime rt(cfg);
    // The primary stream runs bound to its place while the runtime lives.
    const std::vector<int>& place = weft::execution_stream::primary().cpus();
    ASSERT_FALSE(place.empty());
    EXPECT_EQ(affinity_cpus(), place);
  }
  EXPECT_EQ(affinity_cpus(), before);
}

TEST_P(RuntimeTest, FinalizeRunsQueuedWork) {
  std::atomic<int> ran{0};
  weft::init(test_config(streams()));
  for (int i = 0; i < 200; ++i) {
    weft::ult::create_on(stream(i % streams()), [&] {
      weft::this_unit::yield();
      ran++;
    }).detach();
    weft::tasklet::create_on(stream(i % streams()), [&] { ran++; }).detach();
  }
  weft::finalize();
  EXPECT_EQ(ran.load(), 400);
}

TEST_P(RuntimeTest, FinalizeWaitsForWorkThatSpawnsWork) {
  std::atomic<int> ran{0};
  weft::init(test_config(streams()));
  const int n = streams();
  for (int i = 0; i < 20; ++i) {
    weft::ult::create_on(stream(i % n), [&ran] {
      // Detached children created while finalize is draining must still run.
      for (int j = 0; j < 10; ++j) {
        weft::this_unit::yield();
        weft::ult::create([&ran] { ran++; }).detach();
      }
      ran++;
    }).detach();
  }
  weft::finalize();
  EXPECT_EQ(ran.load(), 20 * 11);
}

}  // namespace
