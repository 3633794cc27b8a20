// SPDX-License-Identifier: Apache-2.0
// Shared helpers of the weft test suite: stress scaling, environment hygiene, runtime fixtures
// parameterised over the number of execution streams, and small waiting utilities.
//
// Rules the tests follow (see tests/CMakeLists.txt):
//  - every test makes its own runtime and finalizes it before it ends;
//  - assertions are on counts and orders the runtime promises, never on timing;
//  - stress sizes go through scaled(), which divides them by WEFT_TEST_SCALE (the sanitizer runs
//    set 10).
#pragma once

#include <gtest/gtest.h>

#include <weft/weft.hpp>

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

extern char** environ;

namespace weft_test {

// ---------------------------------------------------------------------------------------------
// Scaling

/// WEFT_TEST_SCALE (a positive integer, default 1).
inline long test_scale() {
  static const long scale = [] {
    const char* v = std::getenv("WEFT_TEST_SCALE");
    if (!v || !*v) return 1L;
    char* end = nullptr;
    const long s = std::strtol(v, &end, 10);
    return (end && *end == '\0' && s >= 1) ? s : 1L;
  }();
  return scale;
}

/// A stress size divided by WEFT_TEST_SCALE, at least `floor`.
inline std::size_t scaled(std::size_t n, std::size_t floor = 1) {
  const std::size_t s = n / static_cast<std::size_t>(test_scale());
  return s < floor ? floor : s;
}

/// True in the sanitizer builds (WEFT_SANITIZE non-empty at configure time).
inline bool sanitized_build() {
#ifdef WEFT_TEST_SANITIZED
  return true;
#else
  return false;
#endif
}

// ---------------------------------------------------------------------------------------------
// Environment

/// Sets (or unsets, with nullptr) one variable and restores its previous value on destruction.
class scoped_env {
 public:
  scoped_env(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = std::string(old);
    if (value) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~scoped_env() {
    if (old_) {
      ::setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  scoped_env(const scoped_env&) = delete;
  scoped_env& operator=(const scoped_env&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

/// Unsets every WEFT_* variable but WEFT_TEST_SCALE for its lifetime (so that a developer's
/// environment cannot change what a test configures), restoring them afterwards.
class clean_weft_env {
 public:
  clean_weft_env() {
    for (char** e = environ; e && *e; ++e) {
      const std::string entry(*e);
      if (entry.rfind("WEFT_", 0) != 0) continue;
      const auto eq = entry.find('=');
      const std::string name = entry.substr(0, eq);
      if (name == "WEFT_TEST_SCALE") continue;
      saved_[name] = eq == std::string::npos ? "" : entry.substr(eq + 1);
    }
    for (const auto& [name, value] : saved_) ::unsetenv(name.c_str());
  }
  ~clean_weft_env() {
    for (char** e = environ; e && *e;) {
      // Remove what a test may have left behind, then restore the saved values.
      const std::string entry(*e);
      if (entry.rfind("WEFT_", 0) == 0 && entry.rfind("WEFT_TEST_SCALE", 0) != 0) {
        ::unsetenv(entry.substr(0, entry.find('=')).c_str());
        e = environ;
        continue;
      }
      ++e;
    }
    for (const auto& [name, value] : saved_) ::setenv(name.c_str(), value.c_str(), 1);
  }
  clean_weft_env(const clean_weft_env&) = delete;
  clean_weft_env& operator=(const clean_weft_env&) = delete;

 private:
  std::map<std::string, std::string> saved_;
};

// ---------------------------------------------------------------------------------------------
// Errors

/// The condition of the weft::error `f` throws, or nullopt when it throws nothing. Any other
/// exception propagates (and fails the test).
template <class F>
std::optional<weft::errc> errc_of(F&& f) {
  try {
    std::forward<F>(f)();
  } catch (const weft::error& e) {
    return e.condition();
  }
  return std::nullopt;
}

/// The what() of the weft::error `f` throws ("" when none).
template <class F>
std::string what_of(F&& f) {
  try {
    std::forward<F>(f)();
  } catch (const weft::error& e) {
    return e.what();
  }
  return {};
}

inline const char* errc_name(weft::errc e) {
  switch (e) {
    case weft::errc::ok:
      return "ok";
    case weft::errc::not_initialized:
      return "not_initialized";
    case weft::errc::already_initialized:
      return "already_initialized";
    case weft::errc::invalid_config:
      return "invalid_config";
    case weft::errc::not_in_ult:
      return "not_in_ult";
    case weft::errc::tasklet_cannot_block:
      return "tasklet_cannot_block";
    case weft::errc::not_joinable:
      return "not_joinable";
    case weft::errc::invalid_state:
      return "invalid_state";
    case weft::errc::wrong_thread:
      return "wrong_thread";
    case weft::errc::primary_stream:
      return "primary_stream";
    case weft::errc::resource:
      return "resource";
    case weft::errc::unsupported:
      return "unsupported";
  }
  return "?";
}

inline std::string describe(const std::optional<weft::errc>& e) {
  return e ? std::string("weft::error(errc::") + errc_name(*e) + ")" : std::string("no exception");
}

}  // namespace weft_test

/// Expects `stmt` to throw a weft::error whose condition is `code`.
#define EXPECT_WEFT_ERRC(stmt, code)                                                \
  do {                                                                              \
    const auto weft_got_ = ::weft_test::errc_of([&] { stmt; });                     \
    EXPECT_TRUE(weft_got_ == std::optional<weft::errc>(code))                       \
        << "`" #stmt "` gave " << ::weft_test::describe(weft_got_) << ", expected " \
        << ::weft_test::describe(std::optional<weft::errc>(code));                  \
  } while (0)

namespace weft_test {

// ---------------------------------------------------------------------------------------------
// Waiting (never a timing assertion: the deadline only turns a hang into a failure)

inline constexpr std::chrono::seconds hang_guard{60};

/// Lets other work run until `pred()` holds: yields the calling ULT (so its stream keeps
/// scheduling), or the OS thread outside ULTs. Returns false if `pred` still fails after
/// hang_guard.
template <class Pred>
bool wait_until(Pred&& pred) {
  const auto deadline = std::chrono::steady_clock::now() + hang_guard;
  for (unsigned i = 0;; ++i) {
    if (pred()) return true;
    if (std::chrono::steady_clock::now() > deadline) return pred();
    if (weft::this_unit::is_ult()) {
      weft::this_unit::yield();
      if (i % 64 == 63) std::this_thread::yield();
    } else {
      std::this_thread::yield();
    }
  }
}

/// Runs `body` in a tasklet on `s`; returns the weft condition join() rethrows (nullopt: none).
template <class F>
std::optional<weft::errc> in_tasklet(weft::execution_stream& s, F body) {
  weft::tasklet t = weft::tasklet::create_on(s, std::move(body));
  return errc_of([&] { t.join(); });
}

/// Waits until the ULT behind `u` is blocked (in a wait queue); false after hang_guard.
inline bool blocked(const weft::ult& u) {
  return wait_until([&] { return u.state() == weft::unit_state::blocked; });
}

/// The number of CPUs in the calling thread's affinity mask.
inline int affinity_cpu_count() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return -1;
  return CPU_COUNT(&set);
}

/// The CPUs in the calling thread's affinity mask.
inline std::vector<int> affinity_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> out;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

/// A configuration with `streams` execution streams, the `basic` scheduler on every stream, and
/// everything else at its default. Most tests check placement and order, which `basic` (FIFO
/// pools, no stealing) promises and the default work-stealing scheduler does not; the suites of
/// the default scheduler (fork_join_test, sched_randws_test, sched_stock_test) use
/// default_config().
inline weft::config test_config(int streams) {
  weft::config cfg;
  cfg.num_streams = streams;
  cfg.scheduler = "basic";
  return cfg;
}

/// A configuration with `streams` execution streams and everything else, the scheduler
/// included, at its default.
inline weft::config default_config(int streams) {
  weft::config cfg;
  cfg.num_streams = streams;
  return cfg;
}

// ---------------------------------------------------------------------------------------------
// Fixtures

/// A test with a clean WEFT_* environment and no runtime; the body initialises what it needs.
class env_test : public ::testing::Test {
 protected:
  void TearDown() override {
    // A test must leave no runtime behind (the next one would nest into it).
    EXPECT_FALSE(weft::initialized()) << "the test left the runtime initialised";
    while (weft::initialized()) weft::finalize();
  }
  clean_weft_env env_;
};

/// A runtime of GetParam() streams (1, 2 or 4), made in SetUp and finalized in TearDown, on the
/// test's thread (which is the primary ULT).
class streams_test : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    ASSERT_FALSE(weft::initialized());
    init(test_config(GetParam()));
  }
  void TearDown() override {
    if (rt_) rt_.reset();
    EXPECT_FALSE(weft::initialized());
  }
  /// (Re)initialises with `cfg` (for tests that need another configuration than the default).
  void init(const weft::config& cfg) {
    rt_.reset();
    rt_.emplace(cfg);
  }
  /// Finalizes now (e.g. to observe what finalize did).
  void finalize() { rt_.reset(); }

  int streams() const { return GetParam(); }
  /// The stream of rank r (asserted live).
  static weft::execution_stream& stream(int r) {
    weft::execution_stream* s = weft::execution_stream::by_rank(r);
    if (!s) throw std::runtime_error("no stream of rank " + std::to_string(r));
    return *s;
  }
  /// The last of the initial streams (the primary when there is one).
  weft::execution_stream& last_stream() const { return stream(GetParam() - 1); }

  clean_weft_env env_;
  std::optional<weft::runtime> rt_;
};

inline std::string streams_param_name(const ::testing::TestParamInfo<int>& info) {
  return "streams" + std::to_string(info.param);
}

/// Instantiates a streams_test-derived suite for 1, 2 and 4 streams.
#define WEFT_INSTANTIATE_STREAMS(suite) \
  INSTANTIATE_TEST_SUITE_P(, suite, ::testing::Values(1, 2, 4), ::weft_test::streams_param_name)

// ---------------------------------------------------------------------------------------------
// Destruction tests

/// A heap object shared by `users` parties; the one that leaves last deletes it (the "last
/// reference frees the object" pattern). Under ASan, an operation that touches the object after
/// the point where its last user could see it released is a heap-use-after-free.
template <class T>
class last_user_deletes {
 public:
  last_user_deletes(T* obj, int users) : obj_(obj), users_(users) {}
  void leave() {
    if (users_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete obj_;
  }

 private:
  T* obj_;
  std::atomic<int> users_;
};

/// A stream created for the duration of a scope; free()d (which joins it first) on destruction.
class scoped_stream {
 public:
  scoped_stream() : s_(&weft::execution_stream::create()) {}
  explicit scoped_stream(std::unique_ptr<weft::scheduler> sched)
      : s_(&weft::execution_stream::create(std::move(sched))) {}
  ~scoped_stream() {
    if (s_) s_->free();
  }
  scoped_stream(const scoped_stream&) = delete;
  scoped_stream& operator=(const scoped_stream&) = delete;

  weft::execution_stream& operator*() const { return *s_; }
  weft::execution_stream* operator->() const { return s_; }
  weft::execution_stream& get() const { return *s_; }
  /// Frees it now.
  void free() {
    weft::execution_stream* s = std::exchange(s_, nullptr);
    if (s) s->free();
  }

 private:
  weft::execution_stream* s_;
};

/// A stream other than the primary: the last initial stream when there are several, else a new
/// one held by `holder`.
inline weft::execution_stream& secondary_stream(int streams, std::optional<scoped_stream>& holder) {
  if (streams > 1) return *weft::execution_stream::by_rank(streams - 1);
  holder.emplace();
  return holder->get();
}

/// A one-shot latch a ULT can wait on without blocking its OS thread for ever: it spins with
/// sched_yield, which is what a gate that deliberately occupies its stream must do.
class spin_gate {
 public:
  void open() { open_.store(true, std::memory_order_release); }
  bool is_open() const { return open_.load(std::memory_order_acquire); }
  /// Busy-waits (occupying the calling stream) until open.
  void hold() const {
    const auto deadline = std::chrono::steady_clock::now() + hang_guard;
    while (!is_open() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  }

 private:
  std::atomic<bool> open_{false};
};

// ---------------------------------------------------------------------------------------------
// A user-defined scheduler

/// What a stats_scheduler did; shared, since the stream owns (and may destroy) the scheduler.
struct sched_stats {
  std::atomic<int> runs{0};        // run() entered
  std::atomic<int> returns{0};     // run() returned
  std::atomic<long> units_run{0};  // run_unit() calls
  std::atomic<long> checks{0};     // check_events() calls
};

/// A loop-writing scheduler written against the public contract only: FIFO over its pools, first
/// pool first, check_events() every event_freq() pops and whenever every pool was empty, and an
/// idle loop that gives the core away. It records what it does in a sched_stats.
class stats_scheduler : public weft::loop_scheduler {
 public:
  stats_scheduler(std::vector<std::shared_ptr<weft::pool>> pools,
                  std::shared_ptr<sched_stats> stats)
      : weft::loop_scheduler(std::move(pools)), stats_(std::move(stats)) {}
  static std::unique_ptr<stats_scheduler> with_new_pool(
      std::shared_ptr<sched_stats> stats, weft::access_mode mode = weft::access_mode::mpsc) {
    return std::make_unique<stats_scheduler>(
        std::vector<std::shared_ptr<weft::pool>>{weft::make_fifo_pool(mode)}, std::move(stats));
  }

  void run() override {
    stats_->runs.fetch_add(1);
    const unsigned freq = event_freq();
    unsigned pops = 0;
    for (;;) {
      weft::work_unit* u = nullptr;
      for (const auto& p : pools()) {
        if ((u = p->pop())) break;
      }
      if (u) {
        run_unit(u);
        stats_->units_run.fetch_add(1, std::memory_order_relaxed);
        if (++pops < freq) continue;
      }
      pops = 0;
      stats_->checks.fetch_add(1, std::memory_order_relaxed);
      if (check_events()) break;
      if (!u) std::this_thread::yield();
    }
    stats_->returns.fetch_add(1);
  }

  /// The stream running it (exposes the protected accessor to tests).
  weft::execution_stream& running_stream() const { return stream(); }

 private:
  std::shared_ptr<sched_stats> stats_;
};

}  // namespace weft_test
