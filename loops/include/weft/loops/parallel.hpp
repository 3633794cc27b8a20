// SPDX-License-Identifier: Apache-2.0
// The parallel constructs: parallel regions, parallel loops and reductions over a team of ULTs
// or tasklets on weft's existing execution streams.
//
// Contract shared by every function here. Callers: the primary ULT, any ULT, or an external
// thread (which then blocks its kernel thread while the team runs); never a tasklet and never the
// caller's share of a tasklet team (errc::tasklet_cannot_block), and only while weft is initialised
// (errc::not_initialized). A construct creates no kernel thread: workers 1..n-1 are new work units
// in the pools of the existing streams, worker 0 is the caller. The cost is one detached unit
// creation per extra worker plus one wait of the caller for the whole team (launch()), and, in
// parallel(), the barriers the body asks for. Nested constructs inside a worker open a
// nested team the same way; their default width shrinks with the enclosing teams' width
// (default_team_width()). Exceptions thrown by body run through: the first is rethrown by the
// construct after every worker has finished.
#pragma once

#include <weft/loops/launch.hpp>
#include <weft/loops/loop_share.hpp>
#include <weft/loops/nesting.hpp>
#include <weft/loops/options.hpp>
#include <weft/loops/team.hpp>

#include <weft/error.hpp>

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace weft::loops {

namespace detail {

/// The team width a construct uses: options::num_workers or the default, checked.
inline int team_width(const options& opt, const nesting_frame& outer, const char* what) {
  if (opt.num_workers < 0) {
    throw error(errc::invalid_config,
                std::string("weft::loops: ") + what + ": num_workers must be >= 0 (0: default)");
  }
  if (opt.sched.chunk < 0) {
    throw error(errc::invalid_config,
                std::string("weft::loops: ") + what + ": chunk must be >= 0 (0: default)");
  }
  return opt.num_workers > 0 ? opt.num_workers : default_team_width(outer);
}

/// Entry checks and team width of a loop construct over [begin, end): never wider than the trip.
inline int loop_width(const options& opt, std::int64_t begin, std::int64_t end, const char* what) {
  require_runtime(what);
  require_blocking_caller(what);
  const int width = team_width(opt, current_frame(), what);
  const std::int64_t trip = end > begin ? end - begin : 0;
  return trip < width ? static_cast<int>(trip > 0 ? trip : 1) : width;
}

/// Pause rounds a waiting worker of a team spins before blocking, under opt.wait: by default
/// only a team with one worker per stream spins, since team-mates sharing a stream would wait for
/// the spinner's yields.
inline long barrier_spin(const options& opt, int width, bool spread) {
  switch (opt.wait) {
    case wait_policy::passive:
      return 0;
    case wait_policy::active:
      return 1l << 22;
    case wait_policy::automatic:
      break;
  }
  return spread && width <= stream_count() ? 300000 : 0;
}

/// A value on its own cache line (per-worker partial results).
template <class T>
struct alignas(64) padded {
  T value;
};

}  // namespace detail

/// Opens a parallel region: body(worker_context&) runs once in each of the team's workers.
/// Returns when all have finished.
template <class Body>
void parallel(Body&& body, const options& opt = {}) {
  require_runtime("parallel()");
  require_blocking_caller("parallel()");
  const nesting_frame& outer = current_frame();
  const int width = detail::team_width(opt, outer, "parallel()");
  const bool spread = detail::spreads(opt.place, outer);
  detail::team t(width, opt.units, detail::barrier_spin(opt, width, spread));
  const int level = outer.level + 1;
  auto work = [&](int w) {
    worker_context ctx(t, w, level);
    body(ctx);
  };
  detail::launch(width, opt.units, spread, outer, work, &t.barrier);
}

/// Parallel loop: body(i) runs exactly once for each i in [begin, end), dealt to the team's
/// workers under opt.sched. A team is never wider than the number of iterations.
template <class Body>
void parallel_for(std::int64_t begin, std::int64_t end, Body&& body, const options& opt = {}) {
  const int width = detail::loop_width(opt, begin, end, "parallel_for()");
  if (end <= begin) return;
  detail::loop_state st(begin, end, opt.sched, width);
  auto work = [&](int w) { detail::run_share(st, w, body); };
  const nesting_frame& outer = current_frame();
  detail::launch(width, opt.units, detail::spreads(opt.place, outer), outer, work, nullptr);
}

/// Parallel reduction: each worker folds body(i, acc) over its iterations into its own acc
/// (starting from `identity`); the partial results are then combined in worker order with
/// combine(a, b). With a static schedule the result is the same on every run with the same team.
template <class T, class Body, class Combine = std::plus<>>
T parallel_reduce(std::int64_t begin, std::int64_t end, const T& identity, Body&& body,
                  Combine combine = {}, const options& opt = {}) {
  const int width = detail::loop_width(opt, begin, end, "parallel_reduce()");
  if (end <= begin) return identity;
  detail::loop_state st(begin, end, opt.sched, width);
  std::vector<detail::padded<T>> partial(static_cast<std::size_t>(width), {identity});
  auto work = [&](int w) {
    T& acc = partial[static_cast<std::size_t>(w)].value;
    auto step = [&](std::int64_t i) { body(i, acc); };
    detail::run_share(st, w, step);
  };
  const nesting_frame& outer = current_frame();
  detail::launch(width, opt.units, detail::spreads(opt.place, outer), outer, work, nullptr);
  T result = partial[0].value;
  for (int w = 1; w < width; ++w)
    result = combine(result, partial[static_cast<std::size_t>(w)].value);
  return result;
}

/// Parallel array reduction: each worker gets a private array of out.size() elements set to
/// `identity` and calls body(i, std::span<T> mine) for its iterations; then
/// out[j] = combine(out[j], mine_0[j], mine_1[j], ...). In a ULT team of up to
/// detail::serial_combine_width workers the last worker to finish combines the whole array; in a
/// wider one the workers combine in parallel, each over a slice of the array; in a tasklet team
/// the caller combines after the join.
template <class T, class Body, class Combine = std::plus<>>
void parallel_reduce_array(std::int64_t begin, std::int64_t end, std::span<T> out,
                           const T& identity, Body&& body, Combine combine = {},
                           const options& opt = {}) {
  const int width = detail::loop_width(opt, begin, end, "parallel_reduce_array()");
  if (end <= begin) return;
  detail::loop_state st(begin, end, opt.sched, width);
  std::vector<std::vector<T>> mine(static_cast<std::size_t>(width));
  const bool combine_in_team = opt.units == unit_type::ult;
  const nesting_frame& outer = current_frame();
  const bool spread = detail::spreads(opt.place, outer);
  team_barrier bar(width, detail::barrier_spin(opt, width, spread));
  const std::int64_t len = static_cast<std::int64_t>(out.size());
  auto work = [&](int w) {
    std::vector<T>& acc = mine[static_cast<std::size_t>(w)];
    acc.assign(out.size(), identity);  // first touch by the worker that uses it
    std::span<T> view(acc);
    auto step = [&](std::int64_t i) { body(i, view); };
    detail::run_share(st, w, step);
    if (!combine_in_team) return;
    if (width <= detail::serial_combine_width) {  // the last to arrive combines everything
      bar.arrive_and_wait([&] {
        for (const std::vector<T>& src : mine) {
          for (std::int64_t j = 0; j < len; ++j) out[j] = combine(out[j], src[j]);
        }
      });
      return;
    }
    bar.arrive_and_wait();
    const range r = static_block(0, len, w, width);
    for (int t = 0; t < width; ++t) {
      const T* src = mine[static_cast<std::size_t>(t)].data();
      for (std::int64_t j = r.begin; j < r.end; ++j) out[j] = combine(out[j], src[j]);
    }
  };
  detail::launch(width, opt.units, spread, outer, work, combine_in_team ? &bar : nullptr);
  if (combine_in_team) return;
  for (int t = 0; t < width; ++t) {
    const T* src = mine[static_cast<std::size_t>(t)].data();
    for (std::int64_t j = 0; j < len; ++j) out[j] = combine(out[j], src[j]);
  }
}

}  // namespace weft::loops
