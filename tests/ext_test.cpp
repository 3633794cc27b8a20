// SPDX-License-Identifier: Apache-2.0
// The extension API (weft/ext/): the calling stream's queries, a user pool's consumer and owner
// fast paths, the intrusive unit list, park/wake, the steal counters, the stock registrations.
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "test_support.hpp"
#include "weft/ext/defaults.hpp"
#include "weft/ext/ext.hpp"

namespace {

using namespace weft_test;
using namespace std::chrono_literals;

/// A spinlocked FIFO pool written against weft/ext/ only, as a program would write one: it
/// records, for each push, whether the pushing thread was its consumer stream.
class recording_pool final : public weft::pool {
 public:
  explicit recording_pool(weft::access_mode mode) : pool(mode) {}
  weft::work_unit* pop() noexcept override {
    weft::ext::lock_guard g(lock_);
    weft::work_unit* u = list_.pop_front();
    if (u) size_.fetch_sub(1, std::memory_order_relaxed);
    return u;
  }
  std::size_t size() const noexcept override { return size_.load(std::memory_order_relaxed); }
  /// Whether each push so far came from the consumer stream, in push order.
  std::vector<bool> pushes() {
    weft::ext::lock_guard g(lock_);
    return by_consumer_;
  }
  using pool::clear_owner;
  using pool::set_owner;

 protected:
  void do_push(weft::work_unit* u) noexcept override {
    const bool mine = caller_is_consumer();
    weft::ext::lock_guard g(lock_);
    by_consumer_.push_back(mine);
    list_.push_back(u, this);
    size_.fetch_add(1, std::memory_order_relaxed);
  }

 private:
  weft::spinlock lock_;
  weft::ext::unit_list list_ WEFT_GUARDED_BY(lock_);
  std::vector<bool> by_consumer_ WEFT_GUARDED_BY(lock_);
  std::atomic<std::size_t> size_{0};
};

/// What the ext queries answer on the calling thread.
struct queries {
  bool on_stream;
  weft::execution_stream* stream;
  int rank;
};

queries ask() {
  return {weft::ext::on_stream(), weft::ext::current_stream(), weft::ext::current_rank()};
}

TEST(ExtPoolList, KeepsOrderAndMarksTheHolder) {
  weft::work_unit u[4]{};
  weft::pool* owner = reinterpret_cast<weft::pool*>(&u[3]);  // any address names the holder
  weft::ext::unit_list l;
  EXPECT_TRUE(l.empty());
  l.push_back(&u[0], owner);
  l.push_back(&u[1], owner);
  l.push_front(&u[2], owner);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(u[i].pool_holder.load(), owner) << i;
  l.unlink(&u[0]);  // the middle one
  EXPECT_EQ(u[0].pool_holder.load(), nullptr);
  EXPECT_EQ(l.pop_front(), &u[2]);
  EXPECT_EQ(l.pop_front(), &u[1]);
  EXPECT_EQ(u[1].pool_holder.load(), nullptr);
  EXPECT_TRUE(l.empty());
  EXPECT_EQ(l.pop_front(), nullptr);
}

TEST(ExtPoolStream, QueriesNameTheCallingStream) {
  clean_weft_env env;
  weft::runtime rt(test_config(1));
  const queries primary = ask();
  EXPECT_TRUE(primary.on_stream);
  EXPECT_EQ(primary.stream, &weft::execution_stream::primary());
  EXPECT_EQ(primary.rank, 0);

  scoped_stream s;
  queries there{};
  weft::ult::create_on(*s, [&] { there = ask(); }).join();
  EXPECT_TRUE(there.on_stream);
  EXPECT_EQ(there.stream, &s.get());
  EXPECT_EQ(there.rank, s->rank());

  queries outside{true, nullptr, 0};
  std::thread([&] { outside = ask(); }).join();
  EXPECT_FALSE(outside.on_stream);
  EXPECT_EQ(outside.stream, nullptr);
  EXPECT_EQ(outside.rank, -1);
}

TEST(ExtPoolStream, UserPoolSeesItsConsumerPushes) {
  clean_weft_env env;
  weft::runtime rt(test_config(1));
  auto p = std::make_shared<recording_pool>(weft::access_mode::mpsc);
  scoped_stream s(std::make_unique<weft::scheduler>(std::vector<std::shared_ptr<weft::pool>>{p}));
  EXPECT_FALSE(p->caller_is_consumer());  // the primary stream
  bool consumer_inside = false;
  bool child_ran = false;
  // The parent is pushed by the primary stream, its child by the parent's stream, which pops p.
  weft::ult::create(*p, [&] {
    consumer_inside = p->caller_is_consumer();
    weft::ult::create(*p, [&] { child_ran = true; }).join();
  }).join();
  EXPECT_TRUE(consumer_inside);
  EXPECT_TRUE(child_ran);
  EXPECT_EQ(p->consumer(), &s.get());
  const std::vector<bool> pushes = p->pushes();
  ASSERT_GE(pushes.size(), 2u);
  EXPECT_FALSE(pushes[0]);
  EXPECT_TRUE(pushes[1]);
  bool outside = true;
  std::thread([&] { outside = p->caller_is_consumer(); }).join();
  EXPECT_FALSE(outside);
}

TEST(ExtPoolStream, OwnerQueryFollowsSetAndClearOwner) {
  clean_weft_env env;
  weft::runtime rt(test_config(1));
  recording_pool p(weft::access_mode::mpmc);
  EXPECT_FALSE(p.caller_is_owner());
  p.set_owner(weft::execution_stream::primary());
  EXPECT_EQ(p.owner(), &weft::execution_stream::primary());
  EXPECT_TRUE(p.caller_is_owner());
  bool outside = true;
  std::thread([&] { outside = p.caller_is_owner(); }).join();
  EXPECT_FALSE(outside);
  p.clear_owner();
  EXPECT_FALSE(p.caller_is_owner());
}

TEST(ExtPark, WaitReturnsOnAChangedWordAndOnWake) {
  std::atomic<std::uint32_t> word{1};
  weft::ext::futex_wait(&word, 0);       // not the expected value: returns at once
  weft::ext::futex_wait(&word, 1, 1ms);  // times out
  std::atomic<bool> woke{false};
  std::thread sleeper([&] {
    while (word.load() == 1) weft::ext::futex_wait(&word, 1);
    woke = true;
  });
  word.store(2);
  weft::ext::futex_wake(&word, 1);
  sleeper.join();
  EXPECT_TRUE(woke);
}

TEST(ExtPoolObserve, StealNotesCountOnTheCallingStream) {
  clean_weft_env env;
  weft::runtime rt(test_config(1));
  weft::work_unit probe{};
  const weft::runtime_stats start = weft::stats();
  const weft::stream_stats& before = start.streams.at(0);
  weft::ext::note_steal_attempt();
  weft::ext::note_steal_attempt();
  weft::ext::note_stolen(&probe, 3);
  std::thread([&] {
    weft::ext::note_steal_attempt();  // an external thread: not counted anywhere
    weft::ext::note_stolen(&probe, 5);
  }).join();
  const weft::runtime_stats after = weft::stats();
  EXPECT_EQ(after.streams.at(0).steal_attempts - before.steal_attempts, 2u);
  EXPECT_EQ(after.streams.at(0).steals - before.steals, 3u);
  EXPECT_EQ(after.total.steals - start.total.steals, 3u);  // basic steals nothing itself
}

TEST(ExtDefaults, StockSchedulersAreRegisteredByName) {
  std::vector<std::string> stock;
  for (const auto& s : weft::ext::stock_schedulers()) {
    EXPECT_TRUE(static_cast<bool>(s.factory)) << s.name;
    stock.emplace_back(s.name);
  }
  EXPECT_EQ(stock, (std::vector<std::string>{"basic", "basic_wait", "prio", "randws"}));
  const std::vector<std::string> names = weft::scheduler_names();
  for (const auto& n : stock) EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  const auto fallback = weft::ext::make_fallback_pool();
  ASSERT_NE(fallback, nullptr);
  EXPECT_EQ(fallback->access(), weft::access_mode::mpsc);
  EXPECT_EQ(fallback->size(), 0u);
}

TEST(ExtPoolAssert, CheckRunsExactlyWhenAssertsAreOn) {
  if constexpr (weft::ext::asserts_enabled) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(weft::ext::assert_invariant([] { return false; }, "a user pool's probe"),
                 "invariant violated: a user pool's probe");
  } else {
    int calls = 0;
    weft::ext::assert_invariant(
        [&] {
          ++calls;
          return false;
        },
        "never evaluated");
    EXPECT_EQ(calls, 0);
  }
}

}  // namespace
