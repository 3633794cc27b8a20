// SPDX-License-Identifier: Apache-2.0
// weft_headline: the README's headline benchmark. ULT and tasklet create+join fan-outs, yield,
// yield_to, a chain (each ULT creates the next and joins it) and recursive fork-join (fib with a
// ULT at every level), the last two on 1 stream and on all, with no stream named (the scheduler
// places the units), against the peers that are cheap to have in the same process: a pthread
// create+join fan-out, Boost.Fiber, OpenMP tasks (libgomp) and, when it was found at build time,
// oneTBB's task_group, printed as a short table with the ratio peer time / weft time.
//
//   weft_headline [--json=FILE] [--streams=N] | --peers
//
// --json writes the results in Google Benchmark's JSON shape; --streams sets the number of streams
// of the "all streams" row (default: one per CPU the process may use); --peers lists the peers
// this build measures, and for each one left out how to add it, without measuring anything.
// The table names the absent peers as well.
//
// Method (Luecke and Lin, "OpenMP vs MPI on an SGI Origin 2000", shared/reference 002): each row is
// a series of timed trials after untimed warm-up runs. The first trial is dropped, then every trial
// above 1.8x the median of the rest, but never more than 10% of the trials (if more exceed it, only
// the largest 10% go). A trial's time is divided by the units it did (creates+joins, yields,
// hand-offs), giving ns per unit; the table shows the median and the minimum of the kept trials.
#include <pthread.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <boost/context/detail/fcontext.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <fstream>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "filter.hpp"
#include "headline_options.hpp"
#include "headline_peers.hpp"
#include "machine.hpp"
#include "workloads.hpp"

namespace {

using weft_bench::describe_machine;
using weft_bench::local_date;
using weft_bench::machine;

// --- Trials ---

using weft_bench::filter_trials;
using weft_bench::trial_summary;

/// A workload runs once per call and returns the units of work it did.
using workload = std::function<std::int64_t()>;

trial_summary measure(int warmups, int trials, const workload& run) {
  for (int i = 0; i < warmups; ++i) run();
  std::vector<double> ns;
  std::int64_t units = 0;
  for (int i = 0; i < trials; ++i) {
    const auto start = std::chrono::steady_clock::now();
    units = run();
    const auto stop = std::chrono::steady_clock::now();
    ns.push_back(std::chrono::duration<double, std::nano>(stop - start).count() /
                 static_cast<double>(units));
  }
  return filter_trials(std::move(ns), units);
}

// --- The rows ---

struct row {
  std::string label;  // for the table
  std::string name;   // for the JSON
  trial_summary weft;
  std::string key;  // what the peers' figures are matched on: "fanout/N", "fanout-streams/N", ...
};

/// One peer's figure for one key.
struct peer_figure {
  std::string peer;  // column of the table
  std::string key;   // as in row::key; "fanout/*" matches every fan-out row
  trial_summary s;
};

constexpr std::int64_t kSmallFanOut = 10'000;
constexpr std::int64_t kLargeFanOut = 1'000'000;
constexpr std::int64_t kYields = 10'000;  // per ULT and trial
constexpr int kPthreadFanOut = 100;
constexpr int kTrials = 100;
constexpr int kLargeTrials = 21;      // 0.1-0.2 s each; 20 kept trials leave room for 2 spikes
constexpr int kPthreadTrials = 31;    // 15-30 ms each, more on a loaded machine
constexpr int kPeerLargeTrials = 11;  // the peers' N = 10^6 fan-outs: 0.05-0.4 s each

row ult_row(std::int64_t n, int trials) {
  weft::pool& p = weft::execution_stream::primary().main_pool();
  std::vector<weft::ult> handles;
  handles.reserve(static_cast<std::size_t>(n));
  const trial_summary s =
      measure(2, trials, [&] { return weft_bench::ult_fan_out(p, handles, n); });
  return {"ULT create+join, N=" + std::to_string(n) + ", 1 stream",
          "ult_create_join/" + std::to_string(n) + "/streams:1", s, "fanout/" + std::to_string(n)};
}

/// The primary and, for the duration of a row, streams added up to `total` (default scheduler:
/// they steal from the primary and from each other), freed at the end of the row so that the other
/// rows run without idle schedulers on the other cores.
class row_streams {
 public:
  explicit row_streams(int total) : all_{&weft::execution_stream::primary()} {
    while (static_cast<int>(all_.size()) < total) all_.push_back(&weft::execution_stream::create());
  }
  row_streams(const row_streams&) = delete;
  row_streams& operator=(const row_streams&) = delete;
  ~row_streams() {
    for (std::size_t i = 1; i < all_.size(); ++i) all_[i]->free();
  }
  const std::vector<weft::execution_stream*>& all() const noexcept { return all_; }

 private:
  std::vector<weft::execution_stream*> all_;
};

std::string on_streams(int total) {
  return total == 1 ? "1 stream" : std::to_string(total) + " streams";
}

/// One creator dealing the units round-robin over the streams: the others only run what it makes.
row ult_all_streams_row(std::int64_t n, int total) {
  const row_streams streams(total);
  std::vector<weft::ult> handles;
  handles.reserve(static_cast<std::size_t>(n));
  const trial_summary s = measure(
      2, kTrials, [&] { return weft_bench::ult_fan_out_round_robin(streams.all(), handles, n); });
  return {"ULT create+join, N=" + std::to_string(n) + " dealt over " + std::to_string(total) +
              (total == 1 ? " stream" : " streams"),
          "ult_create_join/" + std::to_string(n) + "/streams:" + std::to_string(total), s,
          "fanout-streams/" + std::to_string(n)};
}

/// The scaling form (003's "ideal scalability", as the Argobots papers measure it): every stream
/// creates and joins `n` ULTs of its own at the same time; ns per unit is the wall time over `n`,
/// so perfect scaling gives the one-stream figure. Streams are added and freed as above.
row ult_per_stream_row(std::int64_t n, int total) {
  const row_streams streams(total);
  std::vector<weft_bench::stream_handles> handles(streams.all().size());
  for (auto& h : handles) h.handles.reserve(static_cast<std::size_t>(n));
  const trial_summary s = measure(
      2, kTrials, [&] { return weft_bench::ult_fan_out_per_stream(streams.all(), handles, n); });
  return {"ULT create+join, N=" + std::to_string(n) + " on each of " + std::to_string(total) +
              (total == 1 ? " stream" : " streams"),
          "ult_create_join_per_stream/" + std::to_string(n) + "/streams:" + std::to_string(total),
          s, "fanout-per-stream/" + std::to_string(n)};
}

// --- Machine control for the per-stream row ---

namespace bc = boost::context::detail;

void bounce(bc::transfer_t t) {
  for (;;) t = bc::jump_fcontext(t.fctx, nullptr);
}

/// `jumps` Boost.Context jumps there and back on the calling thread: no memory shared with
/// anyone, no allocation.
void jump_loop(std::int64_t jumps) {
  std::vector<char> stack(64 * 1024);
  bc::fcontext_t c = bc::make_fcontext(stack.data() + stack.size(), stack.size(), &bounce);
  for (std::int64_t i = 0; i < jumps; ++i) c = bc::jump_fcontext(c, nullptr).fctx;
}

/// How much the machine itself slows a core when all of them are busy, which the per-stream row
/// cannot tell apart from weft's own cost: the jump loop on `total` kernel threads at once, each
/// bound to one usable CPU as the streams are (compact). The threads start together from a spin
/// barrier of their own (the caller, bound to the first CPU, sleeps in join meanwhile) and each
/// times its own loop; a trial is the slowest thread's time per round trip. total = 1 is the same
/// on one thread, for the ratio. A shared VM's neighbours, SMT siblings and frequency limits all
/// show here.
row machine_control_row(const cpu_set_t& mask, int total) {
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE && static_cast<int>(cpus.size()) < total; ++c) {
    if (CPU_ISSET(c, &mask)) cpus.push_back(c);
  }
  constexpr std::int64_t kJumps = 500'000;
  constexpr int kWarmups = 2, kControlTrials = 31;
  std::vector<double> ns;
  for (int trial = 0; trial < kWarmups + kControlTrials; ++trial) {
    std::atomic<int> arrived{0};
    std::vector<double> per_thread(cpus.size());
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < cpus.size(); ++i) {
      threads.emplace_back([&, i] {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpus[i], &one);
        pthread_setaffinity_np(pthread_self(), sizeof one, &one);
        arrived.fetch_add(1);
        while (arrived.load(std::memory_order_acquire) != static_cast<int>(cpus.size())) {
        }
        const auto start = std::chrono::steady_clock::now();
        jump_loop(kJumps);
        per_thread[i] =
            std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start)
                .count();
      });
    }
    for (auto& t : threads) t.join();
    if (trial >= kWarmups) {
      ns.push_back(*std::max_element(per_thread.begin(), per_thread.end()) /
                   static_cast<double>(kJumps));
    }
  }
  const trial_summary s = filter_trials(std::move(ns), kJumps);
  const int n = static_cast<int>(cpus.size());
  return {"machine control: fcontext round trip, each of " + std::to_string(n) +
              (n == 1 ? " CPU" : " CPUs") + " (no weft)",
          "control_fcontext_round_trip/streams:" + std::to_string(n), s, "control"};
}

row tasklet_row(std::int64_t n) {
  weft::pool& p = weft::execution_stream::primary().main_pool();
  std::vector<weft::tasklet> handles;
  handles.reserve(static_cast<std::size_t>(n));
  const trial_summary s =
      measure(2, kTrials, [&] { return weft_bench::tasklet_fan_out(p, handles, n); });
  return {"tasklet create+join, N=" + std::to_string(n), "tasklet_create_join/" + std::to_string(n),
          s, "fanout/" + std::to_string(n)};
}

row yield_row() {
  weft::pool& p = weft::execution_stream::primary().main_pool();
  const trial_summary s = measure(2, kTrials, [&] { return weft_bench::yield_pair(p, kYields); });
  return {"yield (per yield)", "yield", s, "yield"};
}

/// yield_to on a private pool; std::nullopt when the pool did not become private or yield_to fell
/// back to a plain yield (then the row would not measure what it claims).
std::optional<row> yield_to_row() {
  weft_bench::private_main_pool scope;
  bool fell_back = scope.pool().access() != weft::access_mode::priv;
  const trial_summary s = measure(2, kTrials, [&] {
    const std::int64_t handoffs = weft_bench::yield_to_pair(scope.pool(), kYields);
    fell_back |= handoffs != 2 * kYields;
    return std::max<std::int64_t>(handoffs, 1);
  });
  if (fell_back) return std::nullopt;
  return row{"yield_to (per hand-off)", "yield_to", s, "yield_to"};
}

/// Fork-join: fib(kFib) with a ULT (a task, for the peers) spawned for one branch at every level
/// and joined after the other branch, as users write recursive parallelism. Units: spawns.
constexpr int kFib = 25;
constexpr int kFibTrials = 21;

long fib_serial(int n) {
  return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2);
}

/// The spawns fib(n) makes: one per call with n >= 2, i.e. fib(n + 1) - 1.
std::int64_t fib_spawns(int n) {
  return fib_serial(n + 1) - 1;
}

/// Runs one fib trial and checks its value; returns the spawns.
template <class F>
std::int64_t checked_fib(F&& fib) {
  static const long expected = fib_serial(kFib);
  if (fib() != expected) throw std::runtime_error("fork-join fib returned a wrong value");
  return fib_spawns(kFib);
}

row fib_row() {
  const trial_summary s =
      measure(2, kFibTrials, [] { return checked_fib([] { return weft_bench::fib_ult(kFib); }); });
  return {"fork-join fib(" + std::to_string(kFib) + "), ULT per level (per spawn), 1 stream",
          "fork_join_fib/" + std::to_string(kFib) + "/streams:1", s, "fib"};
}

/// The chain: ULT k creates ULT k+1 with ult::create and joins it at once, kChain deep, on
/// `total` streams with default placement (what a user writes; the scheduler decides whether a
/// level moves to another stream). Units: levels.
constexpr std::int64_t kChain = 10'000;

row chain_row(int total) {
  const row_streams streams(total);
  const trial_summary s = measure(2, kTrials, [] {
    weft_bench::ult_chain_level(0, kChain);
    return kChain;
  });
  return {"ULT chain, N=" + std::to_string(kChain) + ", " + on_streams(total),
          "ult_chain/" + std::to_string(kChain) + "/streams:" + std::to_string(total), s,
          total == 1 ? "chain" : "chain-streams"};
}

/// fork-join fib on `total` streams: the row above's program, the other streams stealing.
row fib_streams_row(int total) {
  const row_streams streams(total);
  const trial_summary s =
      measure(2, kFibTrials, [] { return checked_fib([] { return weft_bench::fib_ult(kFib); }); });
  return {"fork-join fib(" + std::to_string(kFib) + "), ULT per level (per spawn), " +
              on_streams(total),
          "fork_join_fib/" + std::to_string(kFib) + "/streams:" + std::to_string(total), s,
          "fib-streams"};
}

/// Runs `f` on a thread of its own allowed on every CPU of `mask` and returns what it returned:
/// the multi-thread peers create their threads from it, so they inherit that mask instead of the
/// primary stream's single CPU.
template <class F>
auto on_every_cpu(const cpu_set_t& mask, F&& f) {
  std::optional<std::invoke_result_t<F&>> out;
  std::exception_ptr failed;
  std::thread t([&] {
    pthread_setaffinity_np(pthread_self(), sizeof mask, &mask);
    try {
      out.emplace(f());
    } catch (...) {
      failed = std::current_exception();
    }
  });
  t.join();
  if (failed) std::rethrow_exception(failed);
  return std::move(*out);
}

trial_summary pthread_fan_out(const cpu_set_t& mask) {
  const weft_bench::pthread_attributes attr(mask);
  std::vector<pthread_t> threads(kPthreadFanOut);
  return measure(2, kPthreadTrials,
                 [&] { return weft_bench::pthread_fan_out(threads, attr.get()); });
}

/// The in-process peers (headline_peers.hpp), on the primary's CPU at the one-stream rows' sizes,
/// and on `threads` threads (every CPU of `mask`) for the multi-stream chain and fork-join rows.
std::vector<peer_figure> measure_peers(const cpu_set_t& mask, int threads) {
  std::vector<peer_figure> out;
  out.push_back({"pthread", "fanout/*", pthread_fan_out(mask)});
  const std::string small = "fanout/" + std::to_string(kSmallFanOut);
  const std::string large = "fanout/" + std::to_string(kLargeFanOut);
  weft_bench::fiber_peer fibers;
  out.push_back(
      {"Boost.Fiber", small, measure(2, kTrials, [&] { return fibers.fan_out(kSmallFanOut); })});
  out.push_back(
      {"Boost.Fiber", "yield", measure(2, kTrials, [&] { return fibers.yield_pair(kYields); })});
#ifdef WEFT_HEADLINE_OPENMP
  out.push_back(
      {"OpenMP", small, measure(2, kTrials, [] { return weft_bench::omp_fan_out(kSmallFanOut); })});
  out.push_back({"OpenMP", large, measure(2, kPeerLargeTrials, [] {
                   return weft_bench::omp_fan_out(kLargeFanOut);
                 })});
  out.push_back({"OpenMP", "fib", measure(2, kFibTrials, [] {
                   return checked_fib([] { return weft_bench::omp_fib(kFib); });
                 })});
  out.push_back(
      {"OpenMP", "chain", measure(2, kTrials, [] { return weft_bench::omp_chain(kChain, 1); })});
  if (threads > 1) {
    const auto [chain, fib] = on_every_cpu(mask, [threads] {
      return std::pair{
          measure(2, kTrials, [threads] { return weft_bench::omp_chain(kChain, threads); }),
          measure(2, kFibTrials, [threads] {
            return checked_fib([threads] { return weft_bench::omp_fib(kFib, threads); });
          })};
    });
    out.push_back({"OpenMP", "chain-streams", chain});
    out.push_back({"OpenMP", "fib-streams", fib});
  }
#endif
#ifdef WEFT_HEADLINE_TBB
  // TBB sizes its worker pool once, from the affinity of the thread that first uses it: here the
  // primary stream's thread, which weft pins to one CPU, so TBB would start no workers and its
  // rows on every CPU would run on one thread. The limit is stated instead.
  const tbb::global_control tbb_threads(tbb::global_control::max_allowed_parallelism,
                                        static_cast<std::size_t>(std::max(threads, 1)));
  tbb::task_arena arena(1);
  out.push_back({"TBB", small, measure(2, kTrials, [&] {
                   return weft_bench::tbb_fan_out(arena, kSmallFanOut);
                 })});
  out.push_back({"TBB", large, measure(2, kPeerLargeTrials, [&] {
                   return weft_bench::tbb_fan_out(arena, kLargeFanOut);
                 })});
  out.push_back({"TBB", "fib", measure(2, kFibTrials, [&] {
                   return checked_fib([&] { return weft_bench::tbb_fib(arena, kFib); });
                 })});
  out.push_back(
      {"TBB", "chain", measure(2, kTrials, [&] { return weft_bench::tbb_chain(arena, kChain); })});
  if (threads > 1) {
    const auto [chain, fib] = on_every_cpu(mask, [threads] {
      tbb::task_arena wide(threads);
      return std::pair{measure(2, kTrials, [&] { return weft_bench::tbb_chain(wide, kChain); }),
                       measure(2, kFibTrials, [&] {
                         return checked_fib([&] { return weft_bench::tbb_fib(wide, kFib); });
                       })};
    });
    out.push_back({"TBB", "chain-streams", chain});
    out.push_back({"TBB", "fib-streams", fib});
  }
#endif
  return out;
}

/// A peer this build left out (its library was not found), and how to get it.
struct absent_peer {
  const char* name;
  const char* how;
};

std::vector<absent_peer> absent_peers() {
  std::vector<absent_peer> out;
#ifndef WEFT_HEADLINE_TBB
  out.push_back({"oneTBB",
                 "install libtbb-dev (bash scripts/install-deps does), then run "
                 "bash scripts/bench-headline again, which rebuilds with it"});
#endif
#ifndef WEFT_HEADLINE_OPENMP
  out.push_back({"OpenMP", "build with a compiler that has OpenMP (g++ and its libgomp)"});
#endif
  return out;
}

/// One line per absent peer: a missing column is otherwise easy to take for a lost result.
void print_absent_peers(std::FILE* out) {
  for (const absent_peer& p : absent_peers()) {
    std::fprintf(out,
                 "peer %s not measured: not found when weft_headline was built; to add it, %s\n",
                 p.name, p.how);
  }
}

/// The figure of `peer` that applies to `key`, or nullptr.
const peer_figure* find_peer(const std::vector<peer_figure>& peers, const std::string& peer,
                             const std::string& key) {
  for (const peer_figure& p : peers) {
    if (p.peer != peer) continue;
    if (p.key == key) return &p;
    if (p.key == "fanout/*" && key.starts_with("fanout")) return &p;
  }
  return nullptr;
}

// --- Output ---

std::string fixed(double v, int decimals = 1) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

void print_table(const machine& m, const std::vector<row>& rows,
                 const std::vector<peer_figure>& peers) {
  std::printf("machine: %s, %d CPUs online (%d usable), governor %s, load average %s\n",
              m.cpu_model.c_str(), m.online_cpus, m.allowed_cpus, m.governor.c_str(),
              weft_bench::load_average().c_str());
  std::printf(
      "weft: 1 execution stream (more only in the rows that say so), affinity compact; the peers' "
      "rows on several streams use as many threads\n");
  std::printf(
      "ns per unit; median and min of the kept trials (first dropped, >1.8x median dropped, "
      "at most 10%%)\n");
  std::printf(
      "peer columns: peer median / weft median, i.e. how many times faster weft is (below 1x: "
      "slower)\n");
  print_absent_peers(stdout);
  std::printf("\n");
  std::vector<std::string> columns;
  for (const peer_figure& p : peers) {
    if (std::find(columns.begin(), columns.end(), p.peer) == columns.end()) {
      columns.push_back(p.peer);
    }
  }
  std::size_t width = std::string_view("benchmark").size();
  for (const row& r : rows) width = std::max(width, r.label.size());
  const int w = static_cast<int>(width);
  std::printf("%-*s  %11s  %8s  %7s", w, "benchmark", "weft median", "weft min", "kept");
  for (const auto& c : columns) std::printf("  %11s", c.c_str());
  std::printf("\n");
  for (const row& r : rows) {
    const std::string kept = std::to_string(r.weft.kept) + "/" + std::to_string(r.weft.trials);
    std::printf("%-*s  %11s  %8s  %7s", w, r.label.c_str(), fixed(r.weft.median_ns).c_str(),
                fixed(r.weft.min_ns).c_str(), kept.c_str());
    for (const auto& c : columns) {
      std::string cell;
      if (const peer_figure* p = find_peer(peers, c, r.key)) {
        const double x = p->s.median_ns / r.weft.median_ns;
        cell = fixed(x, x >= 100 ? 0 : x >= 10 ? 1 : 2) + "x";
      }
      std::printf("  %11s", cell.c_str());
    }
    std::printf("\n");
  }
  std::printf("\npeers, median (min) ns per unit, measured in this process:\n");
  for (const peer_figure& p : peers) {
    const std::string fib = "fork-join fib(" + std::to_string(kFib) + "), per spawn, ";
    const std::string chain = "chain, N=" + std::to_string(kChain) + ", per level, ";
    std::string what =
        p.key == "fanout/*"
            ? "create+join fan-out, N=" + std::to_string(kPthreadFanOut) + " (every usable CPU)"
        : p.key == "yield"         ? "yield, 2 fibers"
        : p.key == "fib"           ? fib + "1 thread"
        : p.key == "fib-streams"   ? fib + "every usable CPU"
        : p.key == "chain"         ? chain + "1 thread"
        : p.key == "chain-streams" ? chain + "every usable CPU"
                                   : "create+join fan-out, N=" + p.key.substr(7) + ", 1 thread";
    std::printf("  %-12s %-46s %12s (%s)\n", p.peer.c_str(), what.c_str(),
                fixed(p.s.median_ns).c_str(), fixed(p.s.min_ns).c_str());
  }
}

/// One Google Benchmark aggregate entry: real_time is ns per unit, iterations the units per trial.
nlohmann::ordered_json json_entry(const std::string& name, const trial_summary& s,
                                  const char* aggregate, double ns) {
  nlohmann::ordered_json e;
  e["name"] = name + "_" + aggregate;
  e["run_name"] = name;
  e["run_type"] = "aggregate";
  e["repetitions"] = s.kept;
  e["threads"] = 1;
  e["aggregate_name"] = aggregate;
  e["aggregate_unit"] = "time";
  e["iterations"] = s.units_per_trial;
  e["real_time"] = std::round(ns * 1000) / 1000;
  e["time_unit"] = "ns";
  return e;
}

void write_json(const std::string& path, const char* executable, const machine& m,
                const std::vector<row>& rows, const std::vector<peer_figure>& peers) {
  nlohmann::ordered_json doc;
  auto& context = doc["context"];
  context["date"] = local_date();
  context["host_name"] = m.host;
  context["executable"] = executable;
  context["num_cpus"] = m.online_cpus;
  context["mhz_per_cpu"] = static_cast<long>(m.mhz);
  context["cpu_scaling_enabled"] = m.governor != "unavailable" && m.governor != "performance";
  context["cpu_model"] = m.cpu_model;
  context["scaling_governor"] = m.governor;
  context["usable_cpus"] = m.allowed_cpus;
  context["method"] =
      "first trial dropped, trials above 1.8x median dropped (at most 10%); real_time is ns per "
      "unit, iterations units per trial";
  context["library_build_type"] = "release";
  auto& benchmarks = doc["benchmarks"] = nlohmann::ordered_json::array();
  for (const row& r : rows) {
    benchmarks.push_back(json_entry(r.name, r.weft, "median", r.weft.median_ns));
    benchmarks.push_back(json_entry(r.name, r.weft, "min", r.weft.min_ns));
  }
  for (const peer_figure& p : peers) {
    const std::string key =
        p.key == "fanout/*" ? "create_join/" + std::to_string(kPthreadFanOut) : p.key;
    const std::string name = p.peer + "/" + key;
    benchmarks.push_back(json_entry(name, p.s, "median", p.s.median_ns));
    benchmarks.push_back(json_entry(name, p.s, "min", p.s.min_ns));
  }
  std::ofstream file(path);
  // Names come from this program, but a host or CPU model string is the machine's: replace what
  // is not UTF-8 rather than fail.
  file << doc.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
  if (!file.flush()) throw std::runtime_error("cannot write " + path);
}

// --- Command line ---

int run(const weft_bench::headline_options& opts, const char* executable) {
  const cpu_set_t mask = weft_bench::process_affinity();  // before weft binds this thread
  const machine m = describe_machine(mask);
  const int all_streams = opts.streams ? opts.streams : m.allowed_cpus;

  weft::config cfg;
  cfg.num_streams = 1;  // the all-streams row adds its streams itself
  cfg.affinity.how = weft::affinity_policy::kind::compact;
  weft::runtime rt(cfg);

  std::vector<row> rows;
  rows.push_back(ult_row(kSmallFanOut, kTrials));
  rows.push_back(ult_row(kLargeFanOut, kLargeTrials));
  rows.push_back(ult_per_stream_row(kSmallFanOut, all_streams));
  const row control_one = machine_control_row(mask, 1);
  const row control_all = machine_control_row(mask, all_streams);
  rows.push_back(ult_all_streams_row(kSmallFanOut, all_streams));
  rows.push_back(tasklet_row(kSmallFanOut));
  // Before the yield_to row, which replaces the primary's scheduler for its private pool.
  row fork_join = fib_row();
  const row chain_one = chain_row(1);
  std::optional<row> chain_all, fork_join_all;
  if (all_streams > 1) {
    chain_all = chain_row(all_streams);
    fork_join_all = fib_streams_row(all_streams);
  }
  rows.push_back(yield_row());
  std::optional<row> handoff = yield_to_row();
  if (!handoff) {
    std::fprintf(stderr,
                 "weft_headline: yield_to did not hand off directly on a private pool (the pool "
                 "did not become private, or yield_to fell back to a plain yield)\n");
    return 1;
  }
  rows.push_back(*handoff);
  rows.push_back(chain_one);
  if (chain_all) rows.push_back(*chain_all);
  rows.push_back(fork_join);
  if (fork_join_all) rows.push_back(*fork_join_all);
  const std::vector<peer_figure> peers = measure_peers(mask, all_streams);

  rows.push_back(control_one);
  rows.push_back(control_all);

  print_table(m, rows, peers);
  // The per-stream row against the one-stream row, next to the same ratio for work that shares
  // nothing: what is left of the first beyond the second is weft's.
  const double weft_scaling = rows[2].weft.median_ns / rows[0].weft.median_ns;
  const double machine_scaling = control_all.weft.median_ns / control_one.weft.median_ns;
  std::printf(
      "\nscaling: per-stream fan-out on %d streams / on 1 stream = %sx; the machine control on %d "
      "CPUs / on 1 = %sx\n",
      all_streams, fixed(weft_scaling, 3).c_str(), all_streams, fixed(machine_scaling, 3).c_str());
  if (chain_all && fork_join_all) {
    std::printf(
        "chain on %d streams / on 1 stream = %sx; fork-join fib speedup on %d streams = %s\n",
        all_streams, fixed(chain_all->weft.median_ns / chain_one.weft.median_ns, 3).c_str(),
        all_streams, fixed(fork_join.weft.median_ns / fork_join_all->weft.median_ns, 2).c_str());
  }
  if (!opts.json.empty()) write_json(opts.json, executable, m, rows, peers);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::variant<weft_bench::headline_options, int> parsed =
      weft_bench::parse_headline_options(argc, argv);
  if (const int* status = std::get_if<int>(&parsed)) return *status;
  const weft_bench::headline_options* opts = &std::get<weft_bench::headline_options>(parsed);
  if (opts->peers) {
    std::printf("peers measured: pthread, Boost.Fiber");
#ifdef WEFT_HEADLINE_OPENMP
    std::printf(", OpenMP");
#endif
#ifdef WEFT_HEADLINE_TBB
    std::printf(", TBB");
#endif
    std::printf("\n");
    print_absent_peers(stdout);
    return 0;
  }
  try {
    return run(*opts, argv[0]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weft_headline: %s\n", e.what());
    return 1;
  }
}
