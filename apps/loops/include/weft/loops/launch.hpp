// Starting a team: creates workers 1..n-1 as ULTs or tasklets, runs worker 0 in the caller, joins
// them all and rethrows the first exception. Every construct of the layer is built on launch().
#pragma once

#include <weft/loops/nesting.hpp>
#include <weft/loops/options.hpp>
#include <weft/loops/team_barrier.hpp>

#include <weft/execution_stream.hpp>
#include <weft/tasklet.hpp>
#include <weft/ult.hpp>

#include <exception>
#include <mutex>
#include <vector>

namespace weft::loops::detail {

/// True when workers 1..n-1 go round-robin over the streams rather than into the caller's pool.
inline bool spreads(placement p, const nesting_frame& outer) {
  return p == placement::spread || (p == placement::automatic && outer.level == 0);
}

/// Collects the first real exception of a team; a team_aborted is only an echo of it.
class failure {
 public:
  void record(std::exception_ptr e) {
    std::lock_guard lock(mutex_);  // workers on several streams may fail at once
    try {
      std::rethrow_exception(e);
    } catch (const team_aborted&) {
      if (!echo_) echo_ = e;
    } catch (...) {
      if (!first_) first_ = e;
    }
  }
  void rethrow() const {
    if (first_) std::rethrow_exception(first_);
    if (echo_) std::rethrow_exception(echo_);
  }

 private:
  std::mutex mutex_;
  std::exception_ptr first_, echo_;
};

/// Runs `work(w)` for w = 0..width-1 in a team: w = 0 in the caller, the others in new units of
/// kind `units` at `spread` or local placement. `abort` (may be null) is called once a worker
/// throws, so that its team-mates blocked in a team barrier are released. Returns when all have
/// finished; rethrows the first exception. The caller must be able to block (checked by the
/// constructs). Unit creation failing (out of memory) terminates the process: the workers already
/// started may be waiting for the missing one.
template <class Work>
void launch(int width, unit_type units, bool spread, const nesting_frame& outer, Work& work,
            team_barrier* abort) {
  const nesting_frame inner{outer.level + 1, outer.active_width * width, false};
  failure fail;
  auto guarded = [&](int w) noexcept {
    try {
      work(w);
    } catch (...) {
      fail.record(std::current_exception());
      if (abort) abort->abort();
    }
  };
  if (width <= 1) {
    // A one-worker tasklet team runs inline in the caller, but keeps the tasklet rules, so that
    // what is allowed in a team does not depend on its width.
    nesting_frame only = inner;
    only.cannot_block = units == unit_type::tasklet;
    frame_scope scope(&only);
    guarded(0);
    fail.rethrow();
    return;
  }
  const int streams = stream_count();
  const execution_stream* self = execution_stream::self();
  const int base = self ? self->rank() : 0;
  auto target = [&](int w) -> execution_stream* {
    return spread ? execution_stream::by_rank((base + w) % streams) : nullptr;
  };
  auto run_team = [&](auto make_unit) noexcept {
    std::vector<decltype(make_unit(1))> team;
    team.reserve(static_cast<std::size_t>(width - 1));
    for (int w = 1; w < width; ++w) team.push_back(make_unit(w));
    guarded(0);
    for (auto& u : team) u.join();  // the units catch their own exceptions: join cannot throw
  };
  if (units == unit_type::ult) {
    frame_scope scope(&inner);
    run_team([&](int w) {
      auto body = [&guarded, &inner, w] {
        frame_scope scope(&inner);
        guarded(w);
      };
      execution_stream* s = target(w);
      return s ? ult::create_on(*s, body) : ult::create(body);
    });
  } else {
    nesting_frame caller_share = inner;
    caller_share.cannot_block = true;
    frame_scope scope(&caller_share);
    run_team([&](int w) {
      auto body = [&guarded, w] { guarded(w); };
      execution_stream* s = target(w);
      return s ? tasklet::create_on(*s, body) : tasklet::create(body);
    });
  }
  fail.rethrow();
}

}  // namespace weft::loops::detail
