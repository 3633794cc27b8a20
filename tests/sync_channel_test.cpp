// SPDX-License-Identifier: Apache-2.0
// channel<T>: buffered and unbuffered, from ULTs, tasklets and external threads, on 1, 2 and 4
// streams.
#include <weft/channel.hpp>

#include "test_support.hpp"

namespace {

using namespace weft_test;
using namespace std::chrono_literals;

class SyncChannelTest : public streams_test {};
WEFT_INSTANTIATE_STREAMS(SyncChannelTest);

class SyncChannelCapacityTest : public ::testing::TestWithParam<std::tuple<int, int>> {
 protected:
  void SetUp() override { rt_.emplace(test_config(streams())); }
  void TearDown() override { rt_.reset(); }
  int streams() const { return std::get<0>(GetParam()); }
  std::size_t capacity() const { return static_cast<std::size_t>(std::get<1>(GetParam())); }
  clean_weft_env env_;
  std::optional<weft::runtime> rt_;
};
INSTANTIATE_TEST_SUITE_P(, SyncChannelCapacityTest,
                         ::testing::Combine(::testing::Values(1, 2, 4),
                                            ::testing::Values(0, 1, 16)),
                         [](const ::testing::TestParamInfo<std::tuple<int, int>>& info) {
                           return "streams" + std::to_string(std::get<0>(info.param)) + "_cap" +
                                  std::to_string(std::get<1>(info.param));
                         });

TEST_P(SyncChannelCapacityTest, ProducersAndConsumersAgreeOnChecksums) {
  weft::channel<std::uint64_t> ch(capacity());
  const int producers_per_stream = 2;
  const std::uint64_t per_producer = scaled(3000, 50);
  std::atomic<std::uint64_t> sent_sum{0}, recv_sum{0}, recv_xor{0}, sent_xor{0};
  std::atomic<std::uint64_t> received{0};
  auto value_of = [](std::uint64_t producer, std::uint64_t k) {
    return (producer << 32) ^ (k * 0x9E3779B97F4A7C15ull >> 16);
  };
  auto produce = [&](std::uint64_t id) {
    std::uint64_t s = 0, x = 0;
    for (std::uint64_t k = 0; k < per_producer; ++k) {
      const std::uint64_t v = value_of(id, k);
      if (k % 7 == 0) {
        while (!ch.try_send_for(std::uint64_t{v}, 1ms)) {
        }
      } else {
        ch.send(v);
      }
      s += v;
      x ^= v;
    }
    sent_sum.fetch_add(s);
    sent_xor.fetch_xor(x);
  };
  auto consume = [&] {
    std::uint64_t s = 0, x = 0, n = 0;
    for (std::uint64_t k = 0;; ++k) {
      std::optional<std::uint64_t> v = k % 5 == 0 ? ch.try_recv_for(1ms) : ch.recv();
      if (!v) {
        if (ch.closed() && ch.size() == 0) break;
        continue;
      }
      s += *v;
      x ^= *v;
      ++n;
    }
    recv_sum.fetch_add(s);
    recv_xor.fetch_xor(x);
    received.fetch_add(n);
  };
  std::vector<weft::ult> producers, consumers;
  std::uint64_t id = 0;
  for (int r = 0; r < streams(); ++r) {
    for (int i = 0; i < producers_per_stream; ++i)
      producers.push_back(weft::ult::create_on(*weft::execution_stream::by_rank(r),
                                               [&, me = id++] { produce(me); }));
    consumers.push_back(weft::ult::create_on(*weft::execution_stream::by_rank(r), consume));
  }
  std::thread ext_producer([&, me = id++] { produce(me); });
  std::thread ext_consumer(consume);
  for (auto& p : producers) p.join();
  ext_producer.join();
  ch.close();
  for (auto& c : consumers) c.join();
  ext_consumer.join();
  const std::uint64_t total =
      per_producer * (static_cast<std::uint64_t>(streams()) * producers_per_stream + 1);
  EXPECT_EQ(received.load(), total);
  EXPECT_EQ(recv_sum.load(), sent_sum.load());
  EXPECT_EQ(recv_xor.load(), sent_xor.load());
}

TEST_P(SyncChannelCapacityTest, OneProducerOneConsumerKeepOrder) {
  weft::channel<int> ch(capacity());
  const int n = static_cast<int>(scaled(5000, 100));
  int errors = 0;
  weft::ult consumer = weft::ult::create_on(*weft::execution_stream::by_rank(streams() - 1), [&] {
    for (int i = 0; i < n; ++i) {
      std::optional<int> v = ch.recv();
      if (!v || *v != i) ++errors;
    }
    if (ch.recv()) ++errors;  // closed and drained
  });
  for (int i = 0; i < n; ++i) ch.send(i);
  ch.close();
  consumer.join();
  EXPECT_EQ(errors, 0);
}

TEST_P(SyncChannelTest, CloseDrainsThenEnds) {
  weft::channel<std::string> ch(4);
  ch.send("a");
  ch.send(std::string("b"));
  EXPECT_EQ(ch.size(), 2u);
  EXPECT_EQ(ch.capacity(), 4u);
  ch.close();
  ch.close();  // idempotent
  EXPECT_TRUE(ch.closed());
  EXPECT_THROW(ch.send("c"), weft::channel_closed);
  EXPECT_WEFT_ERRC(ch.try_send("c"), weft::errc::invalid_state);
  EXPECT_EQ(ch.recv(), std::optional<std::string>("a"));
  EXPECT_EQ(ch.try_recv(), std::optional<std::string>("b"));
  EXPECT_EQ(ch.recv(), std::nullopt);
  EXPECT_EQ(ch.try_recv_for(1h), std::nullopt);
}

TEST_P(SyncChannelTest, CloseWakesBlockedSendersAndReceivers) {
  weft::channel<int> full(1);
  full.send(1);
  weft::channel<int> empty(1);
  std::atomic<int> sender_closed{0}, receiver_ended{0};
  std::vector<weft::ult> us;
  for (int r = 0; r < streams(); ++r) {
    us.push_back(weft::ult::create_on(stream(r), [&] {
      try {
        full.send(2);
      } catch (const weft::channel_closed&) {
        sender_closed.fetch_add(1);
      }
    }));
    us.push_back(weft::ult::create_on(stream(r), [&] {
      if (!empty.recv()) receiver_ended.fetch_add(1);
    }));
  }
  std::thread t([&] {
    if (!empty.recv()) receiver_ended.fetch_add(1);
  });
  for (auto& u : us) ASSERT_TRUE(blocked(u));
  full.close();
  empty.close();
  for (auto& u : us) u.join();
  t.join();
  EXPECT_EQ(sender_closed.load(), streams());
  EXPECT_EQ(receiver_ended.load(), streams() + 1);
  EXPECT_EQ(full.recv(), std::optional<int>(1));  // the buffered value survives the close
  EXPECT_EQ(full.recv(), std::nullopt);
}

TEST_P(SyncChannelTest, TryAndTimedOperations) {
  weft::channel<std::unique_ptr<int>> ch(1);
  EXPECT_EQ(ch.try_recv(), std::nullopt);
  auto p = std::make_unique<int>(1);
  EXPECT_TRUE(ch.try_send(std::move(p)));
  EXPECT_FALSE(p);
  auto q = std::make_unique<int>(2);
  EXPECT_FALSE(ch.try_send(std::move(q)));
  ASSERT_TRUE(q);  // a failed send leaves the value with the caller
  const auto start = std::chrono::steady_clock::now();
  bool ult_sent = true;
  weft::ult u =
      weft::ult::create_on(last_stream(), [&] { ult_sent = ch.try_send_for(std::move(q), 20ms); });
  u.join();
  EXPECT_FALSE(ult_sent);
  ASSERT_TRUE(q);
  EXPECT_EQ(*q, 2);
  std::thread([&] {
    EXPECT_FALSE(ch.try_send_until(std::move(q), std::chrono::system_clock::now() + 5ms));
  }).join();
  ASSERT_TRUE(q);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 20ms);
  EXPECT_EQ(*ch.recv().value(), 1);
  // Receivers that time out, then one woken early.
  std::optional<std::unique_ptr<int>> got1, got2;
  weft::ult r1 = weft::ult::create_on(last_stream(), [&] { got1 = ch.try_recv_for(10ms); });
  r1.join();
  EXPECT_FALSE(got1.has_value());
  weft::ult r2 = weft::ult::create_on(last_stream(), [&] { got2 = ch.try_recv_for(1h); });
  ASSERT_TRUE(blocked(r2));
  ch.send(std::move(q));
  r2.join();
  ASSERT_TRUE(got2 && *got2);
  EXPECT_EQ(**got2, 2);
}

TEST_P(SyncChannelTest, UnbufferedSendWaitsForAReceiver) {
  weft::channel<int> ch(0);
  EXPECT_FALSE(ch.try_send(1));  // nobody receives
  EXPECT_EQ(ch.try_recv(), std::nullopt);
  std::atomic<bool> sent{false};
  weft::ult s = weft::ult::create_on(last_stream(), [&] {
    ch.send(5);
    sent = true;
  });
  ASSERT_TRUE(blocked(s));
  EXPECT_FALSE(sent.load());
  EXPECT_EQ(ch.size(), 0u);
  EXPECT_EQ(ch.try_recv(), std::optional<int>(5));  // takes it from the blocked sender
  s.join();
  EXPECT_TRUE(sent.load());
  // A blocked receiver gets a try_send's value directly.
  std::optional<int> got;
  weft::ult r = weft::ult::create_on(last_stream(), [&] { got = ch.recv(); });
  ASSERT_TRUE(blocked(r));
  EXPECT_TRUE(ch.try_send(6));
  r.join();
  EXPECT_EQ(got, std::optional<int>(6));
}

TEST_P(SyncChannelTest, TaskletsUseTheTryFormsAndFailOnlyWhenTheyWouldBlock) {
  weft::channel<int> ch(1);
  EXPECT_EQ(in_tasklet(last_stream(), [&] { ch.recv(); }), weft::errc::tasklet_cannot_block);
  EXPECT_EQ(in_tasklet(last_stream(),
                       [&] {
                         ch.send(1);  // room: does not block
                         ASSERT_FALSE(ch.try_send(2));
                       }),
            std::nullopt);
  EXPECT_EQ(in_tasklet(last_stream(), [&] { ch.send(3); }), weft::errc::tasklet_cannot_block);
  std::optional<int> got;
  EXPECT_EQ(in_tasklet(last_stream(), [&] { got = ch.recv(); }), std::nullopt);
  EXPECT_EQ(got, std::optional<int>(1));
  EXPECT_EQ(ch.size(), 0u);
}

// ---------------------------------------------------------------------------------------------
// Destruction right after the last use (docs/sync.md, "Destruction")

TEST_P(SyncChannelTest, TheReceiverOfTheLastValueMayDestroyTheChannelRightAway) {
  // The sender's send() may still be returning when the receiver frees the channel.
  const int rounds = static_cast<int>(scaled(80, 8));
  std::atomic<long> sum{0};
  for (int i = 0; i < rounds; ++i) {
    auto* ch = new weft::channel<int>(static_cast<std::size_t>(i % 2));  // unbuffered or 1
    auto receive = [&] {
      sum.fetch_add(*ch->recv(), std::memory_order_relaxed);
      delete ch;
    };
    // A queued receiver (a ULT, or a thread every other round) gets the value handed over.
    std::optional<weft::ult> u;
    std::optional<std::thread> t;
    if (i % 4 < 2) {
      u.emplace(weft::ult::create_on(last_stream(), receive));
      ASSERT_TRUE(blocked(*u));
    } else {
      t.emplace(receive);
    }
    std::thread sender([&] { ch->send(i); });  // a thread: the receiver may run on any stream
    if (u) u->join();
    if (t) t->join();
    sender.join();
  }
  EXPECT_EQ(sum.load(), static_cast<long>(rounds) * (rounds - 1) / 2);
}

}  // namespace
