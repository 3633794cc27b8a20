// SPDX-License-Identifier: Apache-2.0
// Pools: the stock FIFO pools in every access mode (order, size, remove, pop_wait), a user-defined
// pool, and pools as the runtime uses them (producer streams, attachment).
#include <mutex>

#include "test_support.hpp"

namespace {

using namespace weft_test;
using namespace std::chrono_literals;

const char* mode_name(weft::access_mode m) {
  switch (m) {
    case weft::access_mode::priv:
      return "priv";
    case weft::access_mode::spsc:
      return "spsc";
    case weft::access_mode::mpsc:
      return "mpsc";
    case weft::access_mode::spmc:
      return "spmc";
    case weft::access_mode::mpmc:
      return "mpmc";
  }
  return "?";
}

}  // namespace

namespace weft {
// Readable parameter names in gtest (and ctest) output.
inline void PrintTo(access_mode m, std::ostream* os) {
  *os << mode_name(m);
}
}  // namespace weft

namespace {

/// Descriptors for pool-level tests: pools touch only the hook fields, so plain zeroed
/// work_units are enough (no runtime is needed).
struct fake_units {
  explicit fake_units(std::size_t n) : n(n), u(new weft::work_unit[n]{}) {}
  weft::work_unit* operator[](std::size_t i) const { return &u[i]; }
  std::size_t n;
  std::unique_ptr<weft::work_unit[]> u;
};

class FifoPoolTest : public ::testing::TestWithParam<weft::access_mode> {};
INSTANTIATE_TEST_SUITE_P(, FifoPoolTest,
                         ::testing::Values(weft::access_mode::priv, weft::access_mode::spsc,
                                           weft::access_mode::mpsc, weft::access_mode::spmc,
                                           weft::access_mode::mpmc),
                         [](const auto& info) { return std::string(mode_name(info.param)); });

TEST(AccessMode, Predicates) {
  using weft::access_mode;
  static_assert(weft::single_producer(access_mode::priv) &&
                weft::single_consumer(access_mode::priv));
  static_assert(weft::single_producer(access_mode::spsc) &&
                weft::single_consumer(access_mode::spsc));
  static_assert(!weft::single_producer(access_mode::mpsc) &&
                weft::single_consumer(access_mode::mpsc));
  static_assert(weft::single_producer(access_mode::spmc) &&
                !weft::single_consumer(access_mode::spmc));
  static_assert(!weft::single_producer(access_mode::mpmc) &&
                !weft::single_consumer(access_mode::mpmc));
  SUCCEED();
}

TEST_P(FifoPoolTest, FifoOrderAndSize) {
  auto p = weft::make_fifo_pool(GetParam());
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->access(), GetParam());
  EXPECT_EQ(p->producer(), nullptr);
  EXPECT_EQ(p->consumer(), nullptr);
  EXPECT_EQ(p->attached_schedulers(), 0);
  EXPECT_TRUE(p->empty());
  EXPECT_EQ(p->size(), 0u);
  EXPECT_EQ(p->pop(), nullptr);
  fake_units u(10);
  for (std::size_t i = 0; i < u.n; ++i) {
    p->push(u[i]);
    EXPECT_EQ(p->size(), i + 1);
    EXPECT_FALSE(p->empty());
  }
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(p->pop(), u[i]) << i;
  EXPECT_EQ(p->size(), 5u);
  // Interleaved pushes keep FIFO order.
  p->push(u[0]);
  for (std::size_t i = 5; i < 10; ++i) EXPECT_EQ(p->pop(), u[i]) << i;
  EXPECT_EQ(p->pop(), u[0]);
  EXPECT_EQ(p->pop(), nullptr);
  EXPECT_TRUE(p->empty());
}

TEST_P(FifoPoolTest, Remove) {
  auto p = weft::make_fifo_pool(GetParam());
  auto other = weft::make_fifo_pool(GetParam());
  fake_units u(6);
  for (std::size_t i = 0; i < 5; ++i) p->push(u[i]);
  other->push(u[5]);
  EXPECT_TRUE(p->remove(u[2]));   // middle
  EXPECT_FALSE(p->remove(u[2]));  // no longer there
  EXPECT_TRUE(p->remove(u[0]));   // head
  EXPECT_TRUE(p->remove(u[4]));   // tail
  EXPECT_FALSE(p->remove(u[5]));  // queued in another pool
  EXPECT_EQ(p->size(), 2u);
  EXPECT_EQ(other->size(), 1u);
  EXPECT_EQ(p->pop(), u[1]);
  EXPECT_EQ(p->pop(), u[3]);
  EXPECT_EQ(p->pop(), nullptr);
  // Removing the only element, then reusing the pool.
  p->push(u[0]);
  EXPECT_TRUE(p->remove(u[0]));
  EXPECT_TRUE(p->empty());
  EXPECT_EQ(p->pop(), nullptr);
  p->push(u[1]);
  p->push(u[0]);
  EXPECT_EQ(p->pop(), u[1]);
  EXPECT_EQ(p->pop(), u[0]);
  EXPECT_EQ(other->pop(), u[5]);
  EXPECT_FALSE(other->remove(u[5]));
}

TEST_P(FifoPoolTest, PopWaitTimesOut) {
  auto p = weft::make_fifo_pool(GetParam());
  for (auto timeout : {0ms, 1ms, 30ms}) {
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(p->pop_wait(timeout), nullptr);
    EXPECT_GE(std::chrono::steady_clock::now() - start, timeout) << timeout.count() << " ms";
  }
}

TEST_P(FifoPoolTest, PopWaitReturnsAQueuedUnitAtOnce) {
  auto p = weft::make_fifo_pool(GetParam());
  fake_units u(2);
  p->push(u[0]);
  p->push(u[1]);
  EXPECT_EQ(p->pop_wait(std::chrono::hours(1)), u[0]);
  EXPECT_EQ(p->pop_wait(std::chrono::hours(1)), u[1]);
}

TEST_P(FifoPoolTest, PopWaitIsWokenByAPush) {
  if (GetParam() == weft::access_mode::priv) {
    GTEST_SKIP()
        << "a private pool is pushed only by its own stream: nothing can arrive while it waits";
  }
  auto p = weft::make_fifo_pool(GetParam());
  fake_units u(3);
  for (std::size_t i = 0; i < u.n; ++i) {
    std::thread pusher([&] {
      std::this_thread::sleep_for(20ms);
      p->push(u[i]);
    });
    // No timing assertion: the point is that it returns the unit (long before the timeout).
    EXPECT_EQ(p->pop_wait(std::chrono::seconds(120)), u[i]) << i;
    pusher.join();
  }
  EXPECT_TRUE(p->empty());
}

TEST_P(FifoPoolTest, ConcurrentProducersAndConsumers) {
  const weft::access_mode mode = GetParam();
  const std::size_t producers = weft::single_producer(mode) ? 1 : 3;
  const std::size_t consumers = weft::single_consumer(mode) ? 1 : 3;
  if (mode == weft::access_mode::priv) GTEST_SKIP() << "no concurrency allowed on a private pool";
  const std::size_t per_producer = scaled(30000, 3000);
  const std::size_t total = producers * per_producer;
  auto p = weft::make_fifo_pool(mode);
  fake_units u(total);
  std::vector<std::atomic<int>> popped(total);
  std::atomic<std::size_t> taken{0};
  std::vector<std::thread> threads;
  for (std::size_t c = 0; c < consumers; ++c) {
    threads.emplace_back([&, c] {
      while (taken.load() < total) {
        weft::work_unit* w = (c % 2) ? p->pop_wait(1ms) : p->pop();
        if (!w) continue;
        popped[static_cast<std::size_t>(w - u[0])].fetch_add(1);
        taken.fetch_add(1);
      }
    });
  }
  for (std::size_t t = 0; t < producers; ++t) {
    threads.emplace_back([&, t] {
      for (std::size_t i = 0; i < per_producer; ++i) {
        p->push(u[t * per_producer + i]);
        if (i % 97 == 0) (void)p->size();  // size() may be called from any thread
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_TRUE(p->empty());
  std::size_t wrong = 0;
  for (auto& n : popped) wrong += n.load() != 1;
  EXPECT_EQ(wrong, 0u) << "every unit is popped exactly once";
}

TEST_P(FifoPoolTest, SingleProducerKeepsOrderUnderAConcurrentConsumer) {
  if (GetParam() == weft::access_mode::priv)
    GTEST_SKIP() << "no concurrency allowed on a private pool";
  const std::size_t n = scaled(50000, 5000);
  auto p = weft::make_fifo_pool(GetParam());
  fake_units u(n);
  std::thread producer([&] {
    for (std::size_t i = 0; i < n; ++i) p->push(u[i]);
  });
  std::size_t next = 0, out_of_order = 0;
  while (next < n) {
    if (weft::work_unit* w = p->pop()) {
      out_of_order += w != u[next];
      ++next;
    }
  }
  producer.join();
  EXPECT_EQ(out_of_order, 0u);
}

// ----------------------------------------------------------------------------------------------
// A user-defined pool: LIFO over a vector under a mutex, relying on the base class for pop_wait
// and remove.

class lifo_pool final : public weft::pool {
 public:
  explicit lifo_pool(weft::access_mode m = weft::access_mode::mpmc) : weft::pool(m) {}
  void do_push(weft::work_unit* u) noexcept override {
    std::lock_guard lock(m_);
    v_.push_back(u);
    pushes_.fetch_add(1, std::memory_order_relaxed);
  }
  weft::work_unit* pop() noexcept override {
    std::lock_guard lock(m_);
    if (v_.empty()) return nullptr;
    weft::work_unit* u = v_.back();
    v_.pop_back();
    return u;
  }
  std::size_t size() const noexcept override {
    std::lock_guard lock(m_);
    return v_.size();
  }
  long pushes() const { return pushes_.load(); }

 private:
  mutable std::mutex m_;
  std::vector<weft::work_unit*> v_;
  std::atomic<long> pushes_{0};
};

TEST(UserPool, BaseClassPopWaitAndRemove) {
  lifo_pool p;
  fake_units u(3);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(p.pop_wait(20ms), nullptr);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 20ms);
  p.push(u[0]);
  p.push(u[1]);
  EXPECT_FALSE(p.remove(u[0])) << "the default remove() declines";
  EXPECT_EQ(p.pop_wait(1h), u[1]);
  EXPECT_EQ(p.pop(), u[0]);
  std::thread pusher([&] {
    std::this_thread::sleep_for(20ms);
    p.push(u[2]);
  });
  EXPECT_EQ(p.pop_wait(std::chrono::seconds(120)), u[2]);
  pusher.join();
}

class PoolRuntimeTest : public streams_test {};
WEFT_INSTANTIATE_STREAMS(PoolRuntimeTest);

TEST_P(PoolRuntimeTest, UserPoolOnANewStream) {
  auto lifo = std::make_shared<lifo_pool>();
  scoped_stream s(
      std::make_unique<weft::basic_scheduler>(std::vector<std::shared_ptr<weft::pool>>{lifo}));
  EXPECT_EQ(&s->main_pool(), lifo.get());
  EXPECT_EQ(lifo->attached_schedulers(), 1);
  std::atomic<int> ran{0}, wrong_stream{0};
  std::vector<weft::ult> us;
  for (int i = 0; i < 200; ++i) {
    us.push_back(weft::ult::create_on(*s, [&] {
      for (int j = 0; j < 3; ++j) {
        if (weft::this_unit::stream() != &*s) wrong_stream++;
        weft::this_unit::yield();
      }
      ran++;
    }));
  }
  std::vector<weft::tasklet> ts;
  for (int i = 0; i < 100; ++i) ts.push_back(weft::tasklet::create(*lifo, [&] { ran++; }));
  for (auto& u : us) u.join();
  for (auto& t : ts) t.join();
  EXPECT_EQ(ran.load(), 300);
  EXPECT_EQ(wrong_stream.load(), 0);
  EXPECT_GE(lifo->pushes(), 300 + 200 * 3);
}

TEST_P(PoolRuntimeTest, UserPoolLifoOrder) {
  auto lifo = std::make_shared<lifo_pool>();
  scoped_stream s(
      std::make_unique<weft::basic_scheduler>(std::vector<std::shared_ptr<weft::pool>>{lifo}));
  std::vector<std::string> log;
  // The parent pushes A, B, C on the stream itself, then blocks in join: LIFO runs C, B, A.
  weft::ult::create_on(*s, [&] {
    weft::ult a = weft::ult::create([&] { log.push_back("A"); });
    weft::ult b = weft::ult::create([&] { log.push_back("B"); });
    weft::ult c = weft::ult::create([&] { log.push_back("C"); });
    a.join();
    b.join();
    c.join();
  }).join();
  EXPECT_EQ(log, (std::vector<std::string>{"C", "B", "A"}));
}

TEST_P(PoolRuntimeTest, UserPoolWithoutRemoveStillMigrates) {
  // migrate_to of a ULT queued in a pool that cannot remove falls back to applying the request
  // when the ULT is popped.
  auto lifo = std::make_shared<lifo_pool>();
  scoped_stream s(
      std::make_unique<weft::basic_scheduler>(std::vector<std::shared_ptr<weft::pool>>{lifo}));
  spin_gate gate;
  weft::ult g = weft::ult::create(*lifo, [&] { gate.hold(); });
  ASSERT_TRUE(wait_until([&] { return g.state() == weft::unit_state::running; }));
  weft::execution_stream* ran_on = nullptr;
  weft::ult u = weft::ult::create(*lifo, [&] { ran_on = weft::this_unit::stream(); });
  u.migrate_to(weft::execution_stream::primary());
  gate.open();
  g.join();
  u.join();
  EXPECT_EQ(ran_on, &weft::execution_stream::primary());
}

TEST_P(PoolRuntimeTest, EveryModeAsAStreamPool) {
  for (auto mode : {weft::access_mode::priv, weft::access_mode::spsc, weft::access_mode::mpsc,
                    weft::access_mode::spmc, weft::access_mode::mpmc}) {
    SCOPED_TRACE(mode_name(mode));
    auto p = weft::make_fifo_pool(mode);
    scoped_stream s(std::make_unique<weft::basic_scheduler>(std::vector{p}));
    if (weft::single_producer(mode)) {
      EXPECT_EQ(p->producer(), &*s) << "the first stream using it becomes its producer";
    }
    if (weft::single_consumer(mode)) {
      EXPECT_EQ(p->consumer(), &*s) << "the stream serving it is its consumer";
    } else {
      EXPECT_EQ(p->consumer(), nullptr);
    }
    EXPECT_EQ(p->attached_schedulers(), 1);
    std::atomic<int> ran{0}, wrong{0};
    std::vector<weft::ult> us;
    std::vector<weft::tasklet> ts;
    // Created from the primary and from ULTs on every stream: the runtime routes pushes into
    // single-producer pools through the producer stream.
    for (int i = 0; i < 60; ++i) {
      us.push_back(weft::ult::create(*p, [&] {
        if (weft::this_unit::stream() != &*s) wrong++;
        weft::this_unit::yield();
        if (weft::this_unit::stream() != &*s) wrong++;
        ran++;
      }));
      ts.push_back(weft::tasklet::create(*p, [&] { ran++; }));
    }
    std::vector<weft::ult> makers;
    for (int r = 0; r < streams(); ++r) {
      makers.push_back(weft::ult::create_on(stream(r), [&] {
        std::vector<weft::ult> mine;
        for (int i = 0; i < 20; ++i) mine.push_back(weft::ult::create(*p, [&] { ran++; }));
        for (auto& m : mine) m.join();
      }));
    }
    for (auto& m : makers) m.join();
    // Joined only once they ran: a join of a unit still queued in a multi-consumer pool would
    // take it out and run it on the joiner's stream (a join that helps).
    EXPECT_TRUE(weft_test::wait_until([&] { return ran.load() == 120 + 20 * streams(); }));
    for (auto& u : us) u.join();
    for (auto& t : ts) t.join();
    EXPECT_EQ(ran.load(), 120 + 20 * streams());
    EXPECT_EQ(wrong.load(), 0);
  }
}

TEST_P(PoolRuntimeTest, SizeMayBeReadFromAnyThread) {
  // pool.hpp: size() may be called from any thread (and may be stale), whatever the mode.
  for (auto mode : {weft::access_mode::priv, weft::access_mode::spsc, weft::access_mode::mpsc,
                    weft::access_mode::spmc, weft::access_mode::mpmc}) {
    SCOPED_TRACE(mode_name(mode));
    auto p = weft::make_fifo_pool(mode);
    scoped_stream s(std::make_unique<weft::basic_scheduler>(std::vector{p}));
    std::atomic<bool> done{false};
    std::size_t max_seen = 0;
    std::thread reader([&] {
      while (!done.load()) max_seen = std::max(max_seen, p->size());
    });
    std::vector<weft::ult> us;
    for (int i = 0; i < 50; ++i) {
      us.push_back(weft::ult::create(*p, [] {
        for (int j = 0; j < 20; ++j) weft::this_unit::yield();
      }));
    }
    for (auto& u : us) u.join();
    done = true;
    reader.join();
    (void)max_seen;  // a concurrent reading may be stale: nothing to assert about it
    EXPECT_EQ(p->size(), 0u);
  }
}

TEST_P(PoolRuntimeTest, ExplicitProducer) {
  // An spsc pool whose producer is named up front as the primary: the primary pushes directly,
  // the new stream consumes.
  auto p = weft::make_fifo_pool(weft::access_mode::spsc);
  p->set_producer(weft::execution_stream::primary());
  EXPECT_EQ(p->producer(), &weft::execution_stream::primary());
  scoped_stream s(std::make_unique<weft::basic_scheduler>(std::vector{p}));
  EXPECT_EQ(p->producer(), &weft::execution_stream::primary());
  std::atomic<int> ran{0};
  std::vector<weft::tasklet> ts;
  for (int i = 0; i < 200; ++i)
    ts.push_back(weft::tasklet::create(*p, [&] {
      if (weft::this_unit::stream() == &*s) ran++;
    }));
  for (auto& t : ts) t.join();
  EXPECT_EQ(ran.load(), 200);
}

TEST_P(PoolRuntimeTest, SchedulerOverSeveralPoolsDrainsThemAll) {
  auto high = weft::make_fifo_pool(weft::access_mode::mpsc);
  auto low = weft::make_fifo_pool(weft::access_mode::mpmc);
  scoped_stream s(std::make_unique<weft::basic_scheduler>(std::vector{high, low}));
  EXPECT_EQ(&s->main_pool(), high.get());
  std::atomic<int> ran{0};
  std::vector<weft::ult> us;
  for (int i = 0; i < 100; ++i)
    us.push_back(weft::ult::create(i % 2 ? *high : *low, [&] {
      weft::this_unit::yield();
      ran++;
    }));
  for (auto& u : us) u.join();
  EXPECT_EQ(ran.load(), 100);
  // First pool first: with the stream busy, queued high-priority units run before low ones.
  std::vector<char> order;
  spin_gate gate;
  weft::ult g = weft::ult::create(*high, [&] { gate.hold(); });
  ASSERT_TRUE(wait_until([&] { return g.state() == weft::unit_state::running; }));
  std::vector<weft::tasklet> ts;
  std::atomic<int> done{0};
  for (int i = 0; i < 3; ++i)
    ts.push_back(weft::tasklet::create(*low, [&] {
      order.push_back('L');
      done.fetch_add(1);
    }));
  for (int i = 0; i < 3; ++i)
    ts.push_back(weft::tasklet::create(*high, [&] {
      order.push_back('H');
      done.fetch_add(1);
    }));
  gate.open();
  g.join();
  // Joined once they ran: a join of a tasklet still queued in `low` (multi-consumer) would run it
  // on the joiner's stream, out of the order under test.
  EXPECT_TRUE(wait_until([&] { return done.load() == 6; }));
  for (auto& t : ts) t.join();
  EXPECT_EQ(order, (std::vector<char>{'H', 'H', 'H', 'L', 'L', 'L'}));
}

}  // namespace
