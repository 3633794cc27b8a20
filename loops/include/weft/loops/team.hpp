// SPDX-License-Identifier: Apache-2.0
// A parallel region's team and the handle each worker gets: thread number, barrier, worksharing
// loops, scalar and array reductions, critical sections and single.
#pragma once

#include <weft/loops/loop_share.hpp>
#include <weft/loops/nesting.hpp>
#include <weft/loops/options.hpp>
#include <weft/loops/team_barrier.hpp>

#include <weft/error.hpp>
#include <weft/mutex.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace weft::loops {

namespace detail {

/// Widest team whose array reductions are combined by the last worker to arrive, in one
/// barrier, rather than in parallel slices between two barriers. In a narrow team the serial
/// combine costs at most this many passes over the array, while a second barrier would put a
/// team-mate's wake-up (it may have blocked, and its stream parked, while waiting for the last
/// worker) between the last arrival and the end of the reduction.
inline constexpr int serial_combine_width = 4;

/// What the workers of one region share.
struct team {
  team(int w, unit_type u, long spin)
      : width(w),
        units(u),
        barrier(w, spin),
        slots(static_cast<std::size_t>(w)),
        results(static_cast<std::size_t>(w)) {}
  int width;
  unit_type units;
  team_barrier barrier;
  std::vector<const void*> slots;  // one per worker: the operand of the current reduction
  std::vector<void*> results;      // one per worker: where reduce() delivers its result
  void* shared_out = nullptr;      // worker 0's output array of the current array reduction
  weft::mutex critical;
  std::mutex loops_mutex;  // guards `loops` (held for a map lookup only)
  std::map<std::uint64_t, std::pair<std::unique_ptr<loop_state>, int>> loops;
};

}  // namespace detail

/// The calling worker's view of its team inside parallel(). Each worker gets its own; it must not
/// be used outside the region's body or by another unit.
///
/// Every team-wide call (barrier, for_loop, reduce, reduce_array, single) must be reached by all
/// workers of the team, in the same order, as in OpenMP. They block the worker, so they need a
/// ULT team: in a tasklet team they throw weft::error (errc::tasklet_cannot_block) before doing
/// anything. If a worker's body throws, its team-mates waiting in a team-wide call are released
/// with team_aborted and parallel() rethrows the first exception.
class worker_context {
 public:
  worker_context(detail::team& t, int w, int level) : team_(t), w_(w), level_(level) {}

  /// This worker's number, 0 for the caller of parallel(), up to num_threads() - 1.
  int thread_num() const noexcept { return w_; }
  /// The team's width.
  int num_threads() const noexcept { return team_.width; }
  /// The nesting level: 1 for a team opened outside any team.
  int level() const noexcept { return level_; }

  /// Waits until every worker of the team has arrived.
  void barrier() {
    require_waiting("barrier()");
    team_.barrier.arrive_and_wait();
  }

  /// Worksharing loop: the team's workers share [begin, end) under `s`; body(i) runs once for each
  /// i. Every worker must call it with the same bounds and schedule. Ends with a barrier.
  template <class Body>
  void for_loop(std::int64_t begin, std::int64_t end, Body&& body, schedule s = {}) {
    require_waiting("for_loop()");
    const std::uint64_t seq = next_loop_++;
    if (s.kind == schedule_kind::static_blocks) {
      detail::loop_state st(begin, end, s, team_.width);  // static: nothing shared to agree on
      detail::run_share(st, w_, body);
    } else {
      detail::loop_state& st = shared_loop(seq, begin, end, s);
      detail::run_share(st, w_, body);
      release_loop(seq);
    }
    team_.barrier.arrive_and_wait();
  }

  /// All workers contribute `value`; every worker gets op(op(v0, v1), v2)... in worker order, so
  /// floating-point results are the same on every worker and every run with the same team. One
  /// barrier: the last worker to arrive combines the values and hands each worker the result.
  template <class T, class Op = std::plus<>>
  T reduce(const T& value, Op op = {}) {
    require_waiting("reduce()");
    std::optional<T> result;
    team_.slots[static_cast<std::size_t>(w_)] = &value;
    team_.results[static_cast<std::size_t>(w_)] = &result;
    // The others wait in the barrier meanwhile, so their values and results are alive.
    team_.barrier.arrive_and_wait([&] {
      T r = *static_cast<const T*>(team_.slots[0]);
      for (int t = 1; t < team_.width; ++t) {
        r = op(r, *static_cast<const T*>(team_.slots[static_cast<std::size_t>(t)]));
      }
      for (void* slot : team_.results) static_cast<std::optional<T>*>(slot)->emplace(r);
    });
    return std::move(*result);
  }

  /// Array reduction (what 002 asks OpenMP for): out[j] = op(out[j], mine_0[j], mine_1[j], ...)
  /// for every j, with `out` taken from worker 0 and every `mine` of the same length. In a team of
  /// up to detail::serial_combine_width workers the last worker to arrive combines the whole
  /// array before it releases the others (one barrier); in a wider team the combine is parallel,
  /// each worker reducing its own slice of the array over all workers' copies (two barriers).
  template <class T, class Op = std::plus<>>
  void reduce_array(std::span<const T> mine, std::span<T> out, Op op = {}) {
    require_waiting("reduce_array()");
    if (mine.size() != out.size()) {
      throw error(errc::invalid_state, "weft::loops: reduce_array() needs |mine| == |out|");
    }
    team_.slots[static_cast<std::size_t>(w_)] = mine.data();
    if (w_ == 0) team_.shared_out = out.data();
    if (team_.width <= detail::serial_combine_width) {
      team_.barrier.arrive_and_wait([&] {
        T* dst = static_cast<T*>(team_.shared_out);
        for (const void* slot : team_.slots) {
          const T* src = static_cast<const T*>(slot);
          for (std::size_t j = 0; j < out.size(); ++j) dst[j] = op(dst[j], src[j]);
        }
      });
      return;
    }
    team_.barrier.arrive_and_wait();
    T* dst = static_cast<T*>(team_.shared_out);
    const range r = static_block(0, static_cast<std::int64_t>(out.size()), w_, team_.width);
    for (int t = 0; t < team_.width; ++t) {
      const T* src = static_cast<const T*>(team_.slots[static_cast<std::size_t>(t)]);
      for (std::int64_t j = r.begin; j < r.end; ++j) dst[j] = op(dst[j], src[j]);
    }
    team_.barrier.arrive_and_wait();
  }

  /// Runs `f` under the team's mutex (one worker at a time). Allowed in tasklet teams: the mutex
  /// is tried there and a tasklet that would have to wait throws errc::tasklet_cannot_block.
  template <class F>
  void critical(F&& f) {
    std::lock_guard lock(team_.critical);
    f();
  }

  /// Worker 0 runs `f`, then the team meets at a barrier (OpenMP's master + barrier).
  template <class F>
  void single(F&& f) {
    require_waiting("single()");
    if (w_ == 0) f();
    team_.barrier.arrive_and_wait();
  }

 private:
  void require_waiting(const char* what) const {
    if (team_.units == unit_type::tasklet) {  // whatever the width: same rules for every team
      throw error(errc::tasklet_cannot_block,
                  std::string("weft::loops: ") + what +
                      " in a tasklet team: workers that wait for each other must be ULTs");
    }
  }

  detail::loop_state& shared_loop(std::uint64_t seq, std::int64_t b, std::int64_t e, schedule s) {
    std::lock_guard lock(team_.loops_mutex);
    auto& entry = team_.loops[seq];
    if (!entry.first) entry.first = std::make_unique<detail::loop_state>(b, e, s, team_.width);
    return *entry.first;
  }

  void release_loop(std::uint64_t seq) {
    std::lock_guard lock(team_.loops_mutex);
    auto it = team_.loops.find(seq);
    if (++it->second.second == team_.width) team_.loops.erase(it);
  }

  detail::team& team_;
  int w_;
  int level_;
  std::uint64_t next_loop_ = 0;
};

}  // namespace weft::loops
