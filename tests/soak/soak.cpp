// SPDX-License-Identifier: Apache-2.0
// The soak test's workload (tests/soak/run.sh drives it with weft-rm): rounds of mixed units on
// every stream, using every synchronisation primitive, migrating and sleeping, while a resource
// manager shrinks and expands the process. After each round it checks that every unit ran
// exactly once and that the mutex-protected counts are exact.
//   weft_soak SECONDS        (WEFT_RM names the manager; any WEFT_* variable applies)
// Exits 0 when every round checked out, 1 on a lost or repeated unit or a wrong count.
#include <weft/barrier.hpp>
#include <weft/channel.hpp>
#include <weft/condition_variable.hpp>
#include <weft/eventual.hpp>
#include <weft/future.hpp>
#include <weft/mutex.hpp>
#include <weft/rwlock.hpp>
#include <weft/semaphore.hpp>
#include <weft/weft.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <shared_mutex>
#include <vector>

namespace {

using namespace std::chrono_literals;

/// Everything one round shares.
struct round_state {
  explicit round_state(int units) : ran(static_cast<std::size_t>(units)), gate(4), ch(8), sem(3) {}
  std::vector<std::atomic<int>> ran;
  weft::mutex m;
  long guarded = 0;  // under m
  weft::condition_variable cv;
  int ready = 0;  // under m
  weft::rwlock rw;
  long read_sum = 0;  // under rw, exclusive
  weft::barrier gate;
  weft::channel<int> ch;
  weft::counting_semaphore<> sem;
  weft::eventual<int> ev;
};

/// Migrates the caller to a random live stream; a stream being shrunk away may refuse.
void hop(std::mt19937& rng) {
  const int n = weft::execution_stream::count();
  weft::execution_stream* to = weft::execution_stream::by_rank(static_cast<int>(rng() % 8) % n);
  if (!to) to = &weft::execution_stream::primary();
  try {
    weft::this_unit::migrate_to(*to);
  } catch (const weft::error& e) {
    if (e.condition() != weft::errc::invalid_state) throw;
  }
}

/// What unit `i` does; the kinds are spread so that the blocking groups are always complete.
void body(round_state& r, int i, int units) {
  std::mt19937 rng(static_cast<unsigned>(i));
  r.ran[static_cast<std::size_t>(i)].fetch_add(1);
  switch (i % 8) {
    case 0: {
      std::lock_guard lock(r.m);
      ++r.guarded;
      break;
    }
    case 1:
      hop(rng);
      weft::this_unit::yield();
      hop(rng);
      break;
    case 2:
      weft::this_unit::sleep_for(std::chrono::microseconds(rng() % 2000));
      break;
    case 3: {
      std::unique_lock lock(r.m);
      ++r.guarded;
      ++r.ready;
      r.cv.notify_all();
      (void)r.cv.wait_for(lock, 1ms, [&] { return r.ready % 2 == 0; });
      break;
    }
    case 4:
      if (i % 16 == 4) {
        std::unique_lock lock(r.rw);
        ++r.read_sum;
      } else {
        std::shared_lock lock(r.rw);
        (void)r.read_sum;
      }
      break;
    case 5:
      r.sem.acquire();
      weft::this_unit::yield();
      r.sem.release();
      break;
    case 6:
      // Pairs: even pairs send, odd receive; units is a multiple of 32, so every send has its
      // receive.
      if ((i / 8) % 2 == 0) {
        r.ch.send(i);
      } else {
        (void)r.ch.recv();
      }
      break;
    default:
      (void)r.ev.wait();
      break;
  }
  (void)units;
}

}  // namespace

int main(int argc, char** argv) {
  const long seconds = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 60;
  const int units = 1024;  // a multiple of 32 (see body())
  weft::runtime rt;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  long rounds = 0, total = 0, failures = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    auto r = std::make_unique<round_state>(units);
    std::vector<weft::ult> ults;
    std::vector<weft::tasklet> tasklets;
    std::atomic<int> tasklet_runs{0};
    for (int i = 0; i < units; ++i) {
      const int n = weft::execution_stream::count();
      weft::execution_stream* s = weft::execution_stream::by_rank(i % n);
      if (!s) s = &weft::execution_stream::primary();
      try {
        ults.push_back(weft::ult::create_on(*s, [&, i] { body(*r, i, units); }));
      } catch (const weft::error& e) {
        if (e.condition() != weft::errc::invalid_state) throw;  // a stream shrunk away: primary
        ults.push_back(weft::ult::create([&, i] { body(*r, i, units); }));
      }
      if (i % 4 == 0) tasklets.push_back(weft::tasklet::create([&] { tasklet_runs.fetch_add(1); }));
    }
    // The barrier's parties arrive from here; the eventual is set once everything is queued.
    for (int k = 0; k < 4; ++k) {
      ults.push_back(weft::ult::create([&] { r->gate.arrive_and_wait(); }));
    }
    weft::promise<int> p;
    auto f = p.get_future();
    auto producer = weft::ult::create([&] { p.set_value(42); });
    r->ev.set(1);
    for (auto& u : ults) u.join();
    for (auto& t : tasklets) t.join();
    producer.join();
    bool ok = f.get() == 42;
    for (int i = 0; i < units; ++i) ok &= r->ran[static_cast<std::size_t>(i)].load() == 1;
    ok &= tasklet_runs.load() == units / 4;
    ok &= r->guarded == units / 8 * 2;
    ok &= r->read_sum == units / 16;
    if (!ok) {
      ++failures;
      std::fprintf(stderr,
                   "weft_soak: round %ld: a unit was lost or ran twice, or a count is off\n",
                   rounds);
    }
    ++rounds;
    total += units + units / 4 + 5;
    if (rounds % 50 == 0) {
      std::printf("weft_soak: %ld rounds, %ld units, %d streams\n", rounds, total,
                  weft::execution_stream::count());
      std::fflush(stdout);
    }
  }
  std::printf("weft_soak: %ld rounds, %ld units, %ld failed rounds\n", rounds, total, failures);
  return failures ? 1 : 0;
}
