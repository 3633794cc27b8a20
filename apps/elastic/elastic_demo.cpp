// SPDX-License-Identifier: Apache-2.0
// weft-elastic-demo: keeps every execution stream busy with small work units and prints, once a
// second, how many streams it runs on and how many units per second they complete. Start it with
// WEFT_RM=<address> and change its stream count with weft-rm (apps/elastic/demo.sh does both).
//
//   weft-elastic-demo [SECONDS]      (default 20)
//
// The dispatcher follows the streams through the event callbacks, as a runtime built on weft
// would: a stream being stopped leaves the set before it stops, a new one joins once it runs.
#include <weft/events.hpp>
#include <weft/weft.hpp>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <vector>

namespace {

/// A few microseconds of arithmetic.
std::uint64_t work(std::uint64_t seed) {
  std::uint64_t x = seed | 1;
  for (int i = 0; i < 2000; ++i) x ^= x << 13, x ^= x >> 7, x ^= x << 17;
  return x;
}

}  // namespace

int main(int argc, char** argv) {
  int seconds = 20;
  CLI::App app(
      "Keeps every execution stream busy and prints the stream count and throughput "
      "once a second; start it with WEFT_RM=<address> and resize it with weft-rm.",
      "weft-elastic-demo");
  app.add_option("SECONDS", seconds, "how long to run (default 20)")
      ->check(CLI::TypeValidator<int>("SECONDS"))
      ->check(CLI::Range(1, 1'000'000'000));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "weft-elastic-demo: %s\nusage: weft-elastic-demo [SECONDS > 0]\n",
                 e.what());
    return 2;
  }
  weft::runtime rt;
  std::mutex ranks_mutex;
  std::set<int> ranks;
  for (int r = 0; r < weft::execution_stream::count(); ++r) ranks.insert(r);
  weft::event_registration on_stop(weft::event_kind::stop_stream,
                                   {nullptr, [&](weft::event_kind, int rank) {
                                      std::lock_guard l(ranks_mutex);
                                      ranks.erase(rank);
                                    }});
  weft::event_registration on_add(weft::event_kind::add_stream,
                                  {nullptr, [&](weft::event_kind, int rank) {
                                     std::lock_guard l(ranks_mutex);
                                     ranks.insert(rank);
                                   }});

  std::atomic<std::uint64_t> done{0};
  std::atomic<std::uint64_t> sink{0};
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  auto next_report = start + std::chrono::seconds(1);
  std::uint64_t last_done = 0;
  std::vector<weft::tasklet> batch;
  for (std::uint64_t i = 0; clock::now() < start + std::chrono::seconds(seconds);) {
    std::vector<int> live;
    {
      std::lock_guard l(ranks_mutex);
      live.assign(ranks.begin(), ranks.end());
    }
    // A batch of units per live stream, then wait for them: the streams stay busy while the
    // dispatcher (the primary ULT) keeps its own stream free to serve events.
    batch.clear();
    for (int k = 0; k < 64; ++k) {
      for (int rank : live) {
        weft::execution_stream* s = weft::execution_stream::by_rank(rank);
        if (!s) s = &weft::execution_stream::primary();
        try {
          batch.push_back(weft::tasklet::create_on(*s, [&, seed = ++i] {
            sink.fetch_xor(work(seed), std::memory_order_relaxed);
            done.fetch_add(1, std::memory_order_relaxed);
          }));
        } catch (const weft::error&) {
          // Freed between the lookup and the push: the callbacks will drop it from `ranks`.
        }
      }
    }
    for (auto& t : batch) t.join();
    if (clock::now() >= next_report) {
      const std::uint64_t d = done.load();
      std::printf(
          "t=%3llds streams=%d throughput=%llu units/s\n",
          static_cast<long long>(
              std::chrono::duration_cast<std::chrono::seconds>(clock::now() - start).count()),
          weft::execution_stream::count(), static_cast<unsigned long long>(d - last_done));
      std::fflush(stdout);
      last_done = d;
      next_report += std::chrono::seconds(1);
    }
  }
  std::printf("done: %llu units (checksum %llx)\n", static_cast<unsigned long long>(done.load()),
              static_cast<unsigned long long>(sink.load()));
  return 0;
}
