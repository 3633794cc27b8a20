// SPDX-License-Identifier: Apache-2.0
// The workloads both benchmark programs time: weft fan-outs, yield loops, the pthread baseline,
// and the scope that gives the primary stream a private main pool. Each workload runs once per
// call and returns the number of units of work it did (what "ns per unit" divides by).
#pragma once

#include <pthread.h>
#include <sched.h>

#include <cstdint>
#include <memory>
#include <system_error>
#include <vector>

#include <weft/weft.hpp>

#include "unit_body.hpp"

namespace weft_bench {

/// Creates `n` ULTs into `p` (the creator does not yield meanwhile), then joins them all.
inline std::int64_t ult_fan_out(weft::pool& p, std::vector<weft::ult>& handles, std::int64_t n) {
  handles.clear();
  for (std::int64_t i = 0; i < n; ++i) handles.push_back(weft::ult::create(p, &unit_body));
  for (auto& h : handles) h.join();
  return n;
}

/// Same, dealing the ULTs round-robin over the main pools of `streams`.
inline std::int64_t ult_fan_out_round_robin(const std::vector<weft::execution_stream*>& streams,
                                            std::vector<weft::ult>& handles, std::int64_t n) {
  handles.clear();
  const std::size_t count = streams.size();
  for (std::int64_t i = 0; i < n; ++i) {
    weft::execution_stream& s = *streams[static_cast<std::size_t>(i) % count];
    handles.push_back(weft::ult::create_on(s, &unit_body));
  }
  for (auto& h : handles) h.join();
  return n;
}

/// One stream's handles in the per-stream fan-out, alone on its cache lines. Plain adjacent
/// vectors put the streams' end pointers, written on every creation, on one line, and that false
/// sharing made 2 streams look 45-70% slower per unit than 1 on the machine this was found on.
struct alignas(64) stream_handles {
  std::vector<weft::ult> handles;
};

/// The scaling form of the fan-out, as the Argobots papers measure it (003: "if the ULT runtime is
/// perfectly scalable, the time should be the same regardless of the number of ESs"): one creator
/// ULT per stream creates `n` ULTs into its own stream's main pool and joins them, all streams at
/// once. Returns `n`, the units per stream, so that perfect scaling gives the one-stream figure.
inline std::int64_t ult_fan_out_per_stream(const std::vector<weft::execution_stream*>& streams,
                                           std::vector<stream_handles>& handles, std::int64_t n) {
  handles.resize(streams.size());
  std::vector<weft::ult> creators;
  creators.reserve(streams.size());
  for (std::size_t i = 0; i < streams.size(); ++i) {
    std::vector<weft::ult>* mine = &handles[i].handles;
    creators.push_back(weft::ult::create_on(*streams[i], [mine, n] {
      ult_fan_out(weft::execution_stream::self()->main_pool(), *mine, n);
    }));
  }
  for (auto& c : creators) c.join();
  return n;
}

/// Creates `n` tasklets into `p`, then joins them all.
inline std::int64_t tasklet_fan_out(weft::pool& p, std::vector<weft::tasklet>& handles,
                                    std::int64_t n) {
  handles.clear();
  for (std::int64_t i = 0; i < n; ++i) handles.push_back(weft::tasklet::create(p, &unit_body));
  for (auto& h : handles) h.join();
  return n;
}

/// Two ULTs in `p` that each yield `k` times; the caller blocks in join meanwhile, so the two
/// alternate. Returns the number of yields (2k).
inline std::int64_t yield_pair(weft::pool& p, std::int64_t k) {
  auto body = [k] {
    for (std::int64_t i = 0; i < k; ++i) weft::this_unit::yield();
  };
  weft::ult a = weft::ult::create(p, body);
  weft::ult b = weft::ult::create(p, body);
  a.join();
  b.join();
  return 2 * k;
}

/// Two ULTs in `p` that hand the core to each other `k` times each with yield_to. `p` must support
/// remove() (the stock pools do). Returns the number of direct hand-offs: 2k unless yield_to fell
/// back to a plain yield, which the caller should treat as an error.
inline std::int64_t yield_to_pair(weft::pool& p, std::int64_t k) {
  weft::work_unit* peer[2] = {nullptr, nullptr};
  std::int64_t handoffs[2] = {0, 0};
  // One closure type for both ULTs, as in yield_pair: they hand off from the same call site.
  auto body = [&peer, &handoffs, k](int self) {
    return [&peer, &handoffs, k, self] {
      for (std::int64_t i = 0; i < k; ++i)
        handoffs[self] += weft::this_unit::yield_to(peer[1 - self]);
    };
  };
  // Both descriptors are known before either ULT runs: creation does not yield.
  weft::ult a = weft::ult::create(p, body(0));
  weft::ult b = weft::ult::create(p, body(1));
  peer[0] = a.native_handle();
  peer[1] = b.native_handle();
  a.join();
  b.join();
  return handoffs[0] + handoffs[1];
}

/// The CPUs the process may run on, read before weft binds the primary thread.
inline cpu_set_t process_affinity() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof mask, &mask) != 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c) CPU_SET(c, &mask);
  }
  return mask;
}

/// Attributes for the pthread baseline. weft binds the primary thread to one CPU and a new thread
/// inherits its creator's binding; the baseline gets the process's original mask instead, so that
/// it measures what a plain pthread program would see.
class pthread_attributes {
 public:
  explicit pthread_attributes(const cpu_set_t& mask) {
    pthread_attr_init(&attr_);
    pthread_attr_setaffinity_np(&attr_, sizeof mask, &mask);
  }
  ~pthread_attributes() { pthread_attr_destroy(&attr_); }
  pthread_attributes(const pthread_attributes&) = delete;
  pthread_attributes& operator=(const pthread_attributes&) = delete;
  const pthread_attr_t* get() const noexcept { return &attr_; }

 private:
  pthread_attr_t attr_;
};

inline void* pthread_body(void* arg) {
  unit_body();
  return arg;
}

/// Creates threads.size() pthreads, then joins them all. Throws std::system_error when a creation
/// fails (after joining those already created).
inline std::int64_t pthread_fan_out(std::vector<pthread_t>& threads, const pthread_attr_t* attr) {
  std::size_t created = 0;
  int rc = 0;
  for (; created < threads.size(); ++created) {
    if ((rc = pthread_create(&threads[created], attr, &pthread_body, nullptr)) != 0) break;
  }
  for (std::size_t i = 0; i < created; ++i) pthread_join(threads[i], nullptr);
  if (rc != 0) throw std::system_error(rc, std::generic_category(), "pthread_create");
  return static_cast<std::int64_t>(created);
}

/// While it lives, the primary stream's main scheduler is a basic_scheduler whose first pool is a
/// private FIFO pool, followed by the pools it had before (the primary ULT's home pool among them).
/// Construct and destroy it on the primary ULT.
class private_main_pool {
 public:
  private_main_pool()
      : stream_(weft::execution_stream::primary()), before_(stream_.main_scheduler().pools()) {
    std::vector<std::shared_ptr<weft::pool>> pools{shared_private_pool()};
    for (const auto& p : before_) {
      if (p != pools.front()) pools.push_back(p);
    }
    install(std::move(pools));
  }
  ~private_main_pool() { install(before_); }
  private_main_pool(const private_main_pool&) = delete;
  private_main_pool& operator=(const private_main_pool&) = delete;

  weft::pool& pool() const noexcept { return stream_.main_pool(); }

 private:
  // One private pool for the whole program: the runtime keeps a replaced scheduler's pools that
  // nobody else serves in the next scheduler, so a fresh pool per scope would pile up there.
  static const std::shared_ptr<weft::pool>& shared_private_pool() {
    static const std::shared_ptr<weft::pool> p = weft::make_fifo_pool(weft::access_mode::priv);
    return p;
  }

  /// Returns once `pools` serve the primary stream; gives up (leaving the request pending, and the
  /// caller to notice that pool() is not what it asked for) after a million yields.
  void install(std::vector<std::shared_ptr<weft::pool>> pools) {
    weft::pool* first = pools.front().get();
    stream_.set_main_scheduler(std::make_unique<weft::basic_scheduler>(std::move(pools)));
    // The replacement happens at the scheduler's next check_events(), which the basic scheduler
    // makes only every event_freq pops: keep yielding until it has happened.
    for (int i = 0; i < 1'000'000 && &stream_.main_pool() != first; ++i) weft::this_unit::yield();
  }

  weft::execution_stream& stream_;
  std::vector<std::shared_ptr<weft::pool>> before_;
};

/// Level k of a chain of `n` with default placement: creates level k+1 with ult::create (no
/// stream named: the scheduler decides where it runs) and joins it at once.
inline void ult_chain_level(std::int64_t k, std::int64_t n) {
  if (k == n) return;
  weft::ult child = weft::ult::create([k, n] { ult_chain_level(k + 1, n); });
  child.join();
}

/// fib(n) as users write fork-join: a ULT spawned for one branch at every level, joined.
inline long fib_ult(int n) {
  if (n < 2) return n;
  long a = 0;
  weft::ult h = weft::ult::create([&a, n] { a = fib_ult(n - 1); });
  const long b = fib_ult(n - 2);
  h.join();
  return a + b;
}

}  // namespace weft_bench
