// SPDX-License-Identifier: Apache-2.0
// weft_sync_bench: Google Benchmark microbenchmarks of weft's synchronisation primitives, each
// against the pthread-based std:: primitive and Boost.Fiber's primitive, in the same run.
//
//   weft_sync_bench [Google Benchmark flags]
//
// weft is initialised once with 2 execution streams (affinity compact); every benchmark runs on
// the primary ULT (Google Benchmark runs them on the thread that calls RunSpecifiedBenchmarks).
// Each peer is measured in its natural setting:
//   - "1 stream" / "1 thread" pairs: weft's two ULTs share the primary's stream; Boost.Fiber's two
//     fibers share the main thread; the std:: pair needs two kernel threads.
//   - "2 streams" / "2 threads" pairs: the partner runs on the other core (weft: a ULT on stream
//     1; std: a std::thread; Boost.Fiber: the main fiber of a second std::thread).
// Times are wall-clock (UseRealTime). "ns_per_op" is the time per iteration: one lock+unlock,
// one ping-pong round trip, one promise/future set+get, one value through a channel.
// weft first: Boost.Fiber defines a function-like macro cpu_relax(), which would mangle the
// declaration of weft::cpu_relax() in weft/spinlock.hpp if it came first.
#include <weft/weft.hpp>

#include <benchmark/benchmark.h>

#include <boost/fiber/all.hpp>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <future>
#include <mutex>
#include <thread>

namespace {

void report(benchmark::State& state) {
  state.SetItemsProcessed(state.iterations());
  state.counters["ns_per_op"] = benchmark::Counter(
      1e-9, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

weft::execution_stream& stream(int r) {
  return *weft::execution_stream::by_rank(r);
}

// --- uncontended mutex lock+unlock -------------------------------------------------------------

template <class Mutex>
void mutex_uncontended(benchmark::State& state) {
  Mutex m;
  for (auto _ : state) {
    m.lock();
    benchmark::DoNotOptimize(&m);
    m.unlock();
  }
  report(state);
}
void BM_mutex_uncontended_weft(benchmark::State& s) {
  mutex_uncontended<weft::mutex>(s);
}
void BM_mutex_uncontended_std(benchmark::State& s) {
  mutex_uncontended<std::mutex>(s);
}
void BM_mutex_uncontended_fiber(benchmark::State& s) {
  mutex_uncontended<boost::fibers::mutex>(s);
}

// --- contended mutex: two parties on two cores hammer one mutex ---------------------------------

/// The measured party does lock, ++counter, unlock per iteration while `spawn` runs a partner
/// doing the same until told to stop.
template <class Mutex, class Spawn>
void mutex_contended(benchmark::State& state, Spawn spawn) {
  Mutex m;
  std::atomic<bool> stop{false};
  std::atomic<bool> started{false};
  std::int64_t counter = 0;
  auto partner = [&] {
    started = true;
    while (!stop.load(std::memory_order_relaxed)) {
      m.lock();
      ++counter;
      m.unlock();
    }
  };
  auto join = spawn(partner);
  while (!started.load()) std::this_thread::yield();
  for (auto _ : state) {
    m.lock();
    ++counter;
    m.unlock();
  }
  stop = true;
  join();
  benchmark::DoNotOptimize(counter);
  report(state);
}

template <class F>
auto spawn_ult_on_stream1(F f) {
  auto u = std::make_shared<weft::ult>(weft::ult::create_on(stream(1), std::move(f)));
  return [u] { u->join(); };
}
template <class F>
auto spawn_thread(F f) {
  auto t = std::make_shared<std::thread>(std::move(f));
  return [t] { t->join(); };
}

void BM_mutex_contended_weft_2streams(benchmark::State& s) {
  mutex_contended<weft::mutex>(s, [](auto f) { return spawn_ult_on_stream1(f); });
}
void BM_mutex_contended_std_2threads(benchmark::State& s) {
  mutex_contended<std::mutex>(s, [](auto f) { return spawn_thread(f); });
}
void BM_mutex_contended_fiber_2threads(benchmark::State& s) {
  mutex_contended<boost::fibers::mutex>(s, [](auto f) { return spawn_thread(f); });
}

// --- condition variable ping-pong --------------------------------------------------------------

/// One iteration: the measured party passes the turn to the partner and waits for it back.
template <class Mutex, class Cond, class Spawn>
void cond_ping_pong(benchmark::State& state, Spawn spawn) {
  Mutex m;
  Cond cv;
  int turn = 0;  // 0: measured party, 1: partner, 2: partner must stop
  auto partner = [&] {
    std::unique_lock lk(m);
    for (;;) {
      cv.wait(lk, [&] { return turn != 0; });
      if (turn == 2) return;
      turn = 0;
      cv.notify_one();
    }
  };
  auto join = spawn(partner);
  for (auto _ : state) {
    std::unique_lock lk(m);
    turn = 1;
    cv.notify_one();
    cv.wait(lk, [&] { return turn == 0; });
  }
  {
    std::unique_lock lk(m);
    turn = 2;
  }
  cv.notify_one();
  join();
  report(state);
}

template <class F>
auto spawn_ult_on_stream0(F f) {
  auto u = std::make_shared<weft::ult>(weft::ult::create_on(stream(0), std::move(f)));
  return [u] { u->join(); };
}
template <class F>
auto spawn_fiber(F f) {
  auto fb = std::make_shared<boost::fibers::fiber>(std::move(f));
  return [fb] { fb->join(); };
}

void BM_cond_ping_pong_weft_1stream(benchmark::State& s) {
  cond_ping_pong<weft::mutex, weft::condition_variable>(
      s, [](auto f) { return spawn_ult_on_stream0(f); });
}
void BM_cond_ping_pong_weft_2streams(benchmark::State& s) {
  cond_ping_pong<weft::mutex, weft::condition_variable>(
      s, [](auto f) { return spawn_ult_on_stream1(f); });
}
void BM_cond_ping_pong_std_2threads(benchmark::State& s) {
  cond_ping_pong<std::mutex, std::condition_variable>(s, [](auto f) { return spawn_thread(f); });
}
void BM_cond_ping_pong_fiber_1thread(benchmark::State& s) {
  cond_ping_pong<boost::fibers::mutex, boost::fibers::condition_variable>(
      s, [](auto f) { return spawn_fiber(f); });
}

// --- future set/get ----------------------------------------------------------------------------

template <template <class> class Promise>
void future_set_get(benchmark::State& state) {
  std::int64_t sum = 0;
  for (auto _ : state) {
    Promise<std::int64_t> p;
    auto f = p.get_future();
    p.set_value(1);
    sum += f.get();
  }
  benchmark::DoNotOptimize(sum);
  report(state);
}
void BM_future_set_get_weft(benchmark::State& s) {
  future_set_get<weft::promise>(s);
}
void BM_future_set_get_std(benchmark::State& s) {
  future_set_get<std::promise>(s);
}
void BM_future_set_get_fiber(benchmark::State& s) {
  future_set_get<boost::fibers::promise>(s);
}

// --- channel send/recv between two parties -----------------------------------------------------

/// The std:: peer: a bounded queue under std::mutex and two std::condition_variables.
class std_channel {
 public:
  explicit std_channel(std::size_t cap) : cap_(cap) {}
  void send(std::int64_t v) {
    std::unique_lock lk(m_);
    not_full_.wait(lk, [&] { return q_.size() < cap_; });
    q_.push_back(v);
    not_empty_.notify_one();
  }
  std::int64_t recv() {
    std::unique_lock lk(m_);
    not_empty_.wait(lk, [&] { return !q_.empty(); });
    const std::int64_t v = q_.front();
    q_.pop_front();
    not_full_.notify_one();
    return v;
  }

 private:
  std::mutex m_;
  std::condition_variable not_full_, not_empty_;
  std::deque<std::int64_t> q_;
  std::size_t cap_;
};

/// One iteration: the measured party receives one value the partner sent.
template <class Send, class Recv, class Spawn>
void channel_transfer(benchmark::State& state, Send send, Recv recv, Spawn spawn) {
  const std::int64_t n = state.max_iterations;
  auto join = spawn([&] {
    for (std::int64_t i = 0; i < n; ++i) send(i);
  });
  std::int64_t sum = 0;
  for (auto _ : state) sum += recv();
  join();
  benchmark::DoNotOptimize(sum);
  report(state);
}

constexpr std::size_t kCapacity = 64;

template <class Spawn>
void weft_channel(benchmark::State& s, std::size_t cap, Spawn spawn) {
  weft::channel<std::int64_t> ch(cap);
  channel_transfer(
      s, [&](std::int64_t v) { ch.send(v); }, [&] { return *ch.recv(); }, spawn);
}
void BM_channel_weft_cap64_1stream(benchmark::State& s) {
  weft_channel(s, kCapacity, [](auto f) { return spawn_ult_on_stream0(f); });
}
void BM_channel_weft_cap64_2streams(benchmark::State& s) {
  weft_channel(s, kCapacity, [](auto f) { return spawn_ult_on_stream1(f); });
}
void BM_channel_weft_unbuffered_1stream(benchmark::State& s) {
  weft_channel(s, 0, [](auto f) { return spawn_ult_on_stream0(f); });
}
void BM_channel_std_cap64_2threads(benchmark::State& s) {
  std_channel ch(kCapacity);
  channel_transfer(
      s, [&](std::int64_t v) { ch.send(v); }, [&] { return ch.recv(); },
      [](auto f) { return spawn_thread(f); });
}
void BM_channel_fiber_cap64_1thread(benchmark::State& s) {
  boost::fibers::buffered_channel<std::int64_t> ch(kCapacity);  // holds kCapacity - 1 values
  channel_transfer(
      s, [&](std::int64_t v) { ch.push(v); }, [&] { return ch.value_pop(); },
      [](auto f) { return spawn_fiber(f); });
}
void BM_channel_fiber_unbuffered_1thread(benchmark::State& s) {
  boost::fibers::unbuffered_channel<std::int64_t> ch;
  channel_transfer(
      s, [&](std::int64_t v) { ch.push(v); }, [&] { return ch.value_pop(); },
      [](auto f) { return spawn_fiber(f); });
}

void register_all() {
  auto add = [](const char* name, void (*fn)(benchmark::State&)) {
    benchmark::RegisterBenchmark(name, fn)->UseRealTime();
  };
  add("BM_mutex_uncontended_weft", BM_mutex_uncontended_weft);
  add("BM_mutex_uncontended_std", BM_mutex_uncontended_std);
  add("BM_mutex_uncontended_fiber", BM_mutex_uncontended_fiber);
  add("BM_mutex_contended_weft_2streams", BM_mutex_contended_weft_2streams);
  add("BM_mutex_contended_std_2threads", BM_mutex_contended_std_2threads);
  add("BM_mutex_contended_fiber_2threads", BM_mutex_contended_fiber_2threads);
  add("BM_cond_ping_pong_weft_1stream", BM_cond_ping_pong_weft_1stream);
  add("BM_cond_ping_pong_weft_2streams", BM_cond_ping_pong_weft_2streams);
  add("BM_cond_ping_pong_std_2threads", BM_cond_ping_pong_std_2threads);
  add("BM_cond_ping_pong_fiber_1thread", BM_cond_ping_pong_fiber_1thread);
  add("BM_future_set_get_weft", BM_future_set_get_weft);
  add("BM_future_set_get_std", BM_future_set_get_std);
  add("BM_future_set_get_fiber", BM_future_set_get_fiber);
  add("BM_channel_weft_cap64_1stream", BM_channel_weft_cap64_1stream);
  add("BM_channel_weft_cap64_2streams", BM_channel_weft_cap64_2streams);
  add("BM_channel_weft_unbuffered_1stream", BM_channel_weft_unbuffered_1stream);
  add("BM_channel_std_cap64_2threads", BM_channel_std_cap64_2threads);
  add("BM_channel_fiber_cap64_1thread", BM_channel_fiber_cap64_1thread);
  add("BM_channel_fiber_unbuffered_1thread", BM_channel_fiber_unbuffered_1thread);
}

}  // namespace

int main(int argc, char** argv) {
  weft::config cfg;
  cfg.num_streams = 2;
  cfg.affinity.how = weft::affinity_policy::kind::compact;
  weft::runtime rt(cfg);

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("weft_streams", std::to_string(weft::execution_stream::count()));
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
