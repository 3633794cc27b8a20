// SPDX-License-Identifier: Apache-2.0
// Creating many units under a virtual-memory limit (ulimit -v, as batch systems set) that allows
// only some of their stacks, natively and through abt.h: the creation ends with a clear error
// (from the create, or from the join of a unit that could not get a stack), within seconds, with
// no hang and no crash, and the runtime keeps working: the units made can be joined, and fresh
// ones run once the memory is back. Each case runs in a child process (a threadsafe death test)
// under an alarm, and exits 0 after checking its counts. Not under the sanitizers, which reserve
// address space of their own.
#include <abt.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace {

using namespace weft_test;

#ifndef WEFT_TEST_SANITIZED

constexpr int wanted = 100000;
constexpr int fresh = 1000;

/// Lets the process map `budget` bytes more than it has mapped now.
void limit_address_space(std::size_t budget) {
  std::ifstream status("/proc/self/status");
  std::size_t vm_kib = 0;
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmSize:", 0) == 0) vm_kib = std::stoul(line.substr(7));
  if (vm_kib == 0) std::_Exit(97);
  const rlim_t limit = vm_kib * 1024 + budget;
  rlimit rl{limit, limit};
  if (::setrlimit(RLIMIT_AS, &rl) != 0) std::_Exit(97);
}

/// Exits with `code` after printing `what` on stderr (the death test matches it).
[[noreturn]] void finish(int code, const std::string& what) {
  std::fprintf(stderr, "%s\n", what.c_str());
  std::fflush(stderr);
  std::_Exit(code);
}

void native_case(int streams, bool default_scheduler = false) {
  ::alarm(10);  // a hang ends as SIGALRM, which the death test reports
  clean_weft_env env;
  weft::runtime rt(default_scheduler ? default_config(streams) : test_config(streams));
  // One eventual per unit, woken one at a time before its join: waking thousands at once would
  // have the pool grow its queue in memory that is no longer there.
  std::vector<weft::eventual<int>> go(wanted);
  std::atomic<int> ran{0};
  std::vector<weft::ult> units;
  // A copy of the first error, not of its message: copying a weft::error allocates nothing,
  // and with the address space exhausted a string copy would throw std::bad_alloc.
  std::optional<weft::error> first_error;
  units.reserve(wanted);
  limit_address_space(std::size_t{256} << 20);
  for (int i = 0; i < wanted; ++i) {
    try {
      units.push_back(weft::ult::create([&ran, &g = go[static_cast<std::size_t>(i)]] {
        g.wait();  // hold the stack until every unit is made
        ran.fetch_add(1, std::memory_order_relaxed);
      }));
    } catch (const weft::error& e) {
      if (e.code() != weft::errc::resource) finish(2, std::string("create: ") + e.what());
      first_error.emplace(e);
      break;
    }
    if (i % 64 == 0) weft::this_unit::yield();  // let them start (and take stacks)
  }
  int failed = 0;
  for (std::size_t i = 0; i < units.size(); ++i) {
    go[i].set(1);
    try {
      units[i].join();
    } catch (const weft::error& e) {
      if (e.code() != weft::errc::resource) finish(3, std::string("join: ") + e.what());
      if (!first_error) first_error.emplace(e);
      ++failed;
    }
  }
  const int made = static_cast<int>(units.size());
  if (ran.load() + failed != made)
    finish(4, "some units neither ran nor failed: made " + std::to_string(made) + ", ran " +
                  std::to_string(ran.load()) + ", failed " + std::to_string(failed));
  if (!first_error) finish(5, "no error: the limit allowed every stack");
  units.clear();
  // The memory is back: fresh units run, each once.
  std::atomic<int> again{0};
  std::vector<weft::ult> more;
  more.reserve(fresh);
  for (int i = 0; i < fresh; ++i)
    more.push_back(weft::ult::create([&] { again.fetch_add(1, std::memory_order_relaxed); }));
  for (auto& u : more) u.join();
  if (again.load() != fresh) finish(6, "fresh units did not all run");
  finish(0, "made " + std::to_string(made) + ", ran " + std::to_string(ran.load()) + ", failed " +
                std::to_string(failed) + ": " + first_error->what());
}

std::atomic<int> abt_ran{0};

void abt_body(void* go) {
  ABT_eventual_wait(static_cast<ABT_eventual>(go), nullptr);
  abt_ran.fetch_add(1, std::memory_order_relaxed);
}

void abt_fresh_body(void*) {
  abt_ran.fetch_add(1, std::memory_order_relaxed);
}

void abt_case(int streams) {
  ::alarm(10);
  clean_weft_env env;
  if (ABT_init(0, nullptr) != ABT_SUCCESS) finish(90, "ABT_init failed");
  std::vector<ABT_xstream> xs(static_cast<std::size_t>(streams - 1));
  for (auto& x : xs)
    if (ABT_xstream_create(ABT_SCHED_NULL, &x) != ABT_SUCCESS) finish(91, "xstream");
  ABT_xstream self;
  ABT_pool pool;
  ABT_xstream_self(&self);
  ABT_xstream_get_main_pools(self, 1, &pool);
  // One eventual per thread, set one at a time before its join (see native_case).
  std::vector<ABT_eventual> go(wanted);
  for (auto& g : go)
    if (ABT_eventual_create(0, &g) != ABT_SUCCESS) finish(92, "eventual");
  limit_address_space(std::size_t{256} << 20);
  std::vector<ABT_thread> threads;
  threads.reserve(wanted);
  int create_error = ABT_SUCCESS;
  for (int i = 0; i < wanted; ++i) {
    ABT_thread t = ABT_THREAD_NULL;
    const int rc = ABT_thread_create(pool, abt_body, go[static_cast<std::size_t>(i)],
                                     ABT_THREAD_ATTR_NULL, &t);
    if (rc != ABT_SUCCESS) {
      if (rc != ABT_ERR_MEM) finish(2, "ABT_thread_create: error " + std::to_string(rc));
      create_error = rc;
      break;
    }
    threads.push_back(t);
    if (i % 64 == 0) ABT_thread_yield();
  }
  int failed = 0;
  for (std::size_t i = 0; i < threads.size(); ++i) {
    ABT_eventual_set(go[i], nullptr, 0);
    const int rc = ABT_thread_join(threads[i]);
    if (rc != ABT_SUCCESS) {
      if (rc != ABT_ERR_MEM) finish(3, "ABT_thread_join: error " + std::to_string(rc));
      ++failed;
    }
    // A thread that could not get a stack is freed with the same ABT_ERR_MEM as its join.
    if (const int f = ABT_thread_free(&threads[i]); f != rc)
      finish(3, "ABT_thread_free: error " + std::to_string(f));
  }
  const int made = static_cast<int>(threads.size());
  if (abt_ran.load() + failed != made)
    finish(4, "some threads neither ran nor failed: made " + std::to_string(made) + ", ran " +
                  std::to_string(abt_ran.load()) + ", failed " + std::to_string(failed));
  if (create_error == ABT_SUCCESS && failed == 0) finish(5, "no error: every stack fitted");
  threads.clear();
  abt_ran = 0;
  std::vector<ABT_thread> more(fresh);
  for (auto& t : more)
    if (ABT_thread_create(pool, abt_fresh_body, nullptr, ABT_THREAD_ATTR_NULL, &t) != ABT_SUCCESS)
      finish(6, "fresh ABT_thread_create failed");
  for (auto& t : more) ABT_thread_free(&t);
  if (abt_ran.load() != fresh) finish(6, "fresh threads did not all run");
  for (auto& g : go) ABT_eventual_free(&g);
  for (auto& x : xs) ABT_xstream_free(&x);
  ABT_finalize();
  finish(0, "made " + std::to_string(made) + ", failed " + std::to_string(failed) +
                (create_error != ABT_SUCCESS ? ", then ABT_thread_create gave ABT_ERR_MEM" : ""));
}

class VmLimitTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};
INSTANTIATE_TEST_SUITE_P(, VmLimitTest, ::testing::Values(1, 2), streams_param_name);

TEST_P(VmLimitTest, NativeCreationEndsWithAnErrorAndTheRuntimeGoesOn) {
  EXPECT_EXIT(native_case(GetParam()), ::testing::ExitedWithCode(0), "made [0-9]+, ran");
}

// The default scheduler (randws over ws_pool): a push that cannot grow the pool's array goes to
// its side lane (schedulers/src/ws_pool.cpp), and the creation ends with errc::resource.
TEST_P(VmLimitTest, NativeCreationWithTheDefaultScheduler) {
  EXPECT_EXIT(native_case(GetParam(), true), ::testing::ExitedWithCode(0), "made [0-9]+, ran");
}

TEST_P(VmLimitTest, AbtCreationEndsWithAnErrorAndTheRuntimeGoesOn) {
  EXPECT_EXIT(abt_case(GetParam()), ::testing::ExitedWithCode(0), "made [0-9]+, failed");
}

#endif  // WEFT_TEST_SANITIZED

}  // namespace
