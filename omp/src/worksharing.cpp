// Worksharing: loops (long and unsigned long long, every schedule, ordered), sections, single
// and copyprivate, critical, atomic, ordered, cancellation of loops and sections, and the
// combined parallel-loop and parallel-sections entry points.
#include "internal.hpp"

#include <cstring>

namespace weft::omp {
namespace {

constexpr int cancel_parallel = 1;
constexpr int cancel_loop = 2;
constexpr int cancel_sections = 4;
constexpr int cancel_taskgroup = 8;

std::atomic<std::uint32_t> g_unnamed_critical{0};
std::atomic<std::uint32_t> g_atomic_lock{0};

// An orphaned construct (outside any parallel region) binds to a team of one.
team& team_of(context& c) {
  if (!c.t) {
    c.solo = std::make_unique<team>(1, nullptr);
    c.t = c.solo.get();
  }
  return *c.t;
}

// Joins (or sets up, when first) the worksharing construct the calling member reaches next.
// The first member returns holding ws.init_lock and publish() releases it: a hand-off across
// calls that the thread-safety analysis cannot express, so neither function is analysed.
work_share& enter(context& c, bool& first) WEFT_NO_THREAD_SAFETY_ANALYSIS {
  team& t = team_of(c);
  const std::uint64_t want = ++c.ws_seq;
  work_share& ws = t.ws[(want - 1) % team::ws_slots];
  first = false;
  if (ws.tag.load(std::memory_order_acquire) == want) return ws;
  for (;;) {
    ws.init_lock.lock();
    if (ws.tag.load(std::memory_order_acquire) == want) {
      ws.init_lock.unlock();
      return ws;
    }
    if (ws.users.load(std::memory_order_acquire) == 0) {
      // The slot's previous construct (team::ws_slots earlier) has been released by everyone.
      first = true;
      ws.users.store(t.nthreads, std::memory_order_relaxed);
      return ws;  // the caller fills it and calls publish()
    }
    ws.init_lock.unlock();
    // A team-mate is still ws_slots constructs behind (nowait): let it catch up.
    wait_until([&] {
      return ws.users.load(std::memory_order_acquire) == 0 ||
             ws.tag.load(std::memory_order_acquire) == want;
    });
  }
}

void publish(context& c, work_share& ws) WEFT_NO_THREAD_SAFETY_ANALYSIS {
  ws.tag.store(c.ws_seq, std::memory_order_release);
  ws.init_lock.unlock();
}

void release(context& c) {
  if (!c.ws) return;
  c.ws->users.fetch_sub(1, std::memory_order_acq_rel);
  c.ws = nullptr;
  c.have_chunk = false;
  c.static_k = 0;
}

// The team-shared memory GOMP_loop_start and GOMP_sections2_start hand out (*mem holds its size).
void share_memory(work_share& ws, bool first, void** mem) {
  if (!mem) return;
  if (first) ws.mem.assign(reinterpret_cast<std::uintptr_t>(*mem), 0);
  *mem = ws.mem.data();
}

std::uint64_t trip_count(bool ull, bool up, std::uint64_t start, std::uint64_t end,
                         std::uint64_t incr) {
  if (ull) {
    if (up) return end > start ? (end - start + incr - 1) / incr : 0;
    const std::uint64_t step = -incr;
    return start > end ? (start - end + step - 1) / step : 0;
  }
  const auto s = static_cast<std::int64_t>(start), e = static_cast<std::int64_t>(end),
             i = static_cast<std::int64_t>(incr);
  if (i > 0) return e > s ? (end - start + incr - 1) / incr : 0;
  const std::uint64_t step = -incr;
  return s > e ? (start - end + step - 1) / step : 0;
}

sched_kind resolve(context& c, sched_kind k, std::uint64_t& chunk) {
  if (k == sched_kind::runtime) {
    k = c.icv.run_sched;
    chunk = static_cast<std::uint64_t>(c.icv.run_chunk);
  }
  if (k == sched_kind::auto_) {
    k = sched_kind::static_;
    chunk = 0;
  }
  if ((k == sched_kind::dynamic || k == sched_kind::guided) && chunk == 0) chunk = 1;
  return k;
}

void fill_loop(work_share& ws, bool ull, bool up, std::uint64_t start, std::uint64_t end,
               std::uint64_t incr, sched_kind k, std::uint64_t chunk, bool ordered) {
  ws.kind = k;
  ws.is_ull = ull;
  ws.ordered = ordered;
  ws.n = trip_count(ull, up, start, end, incr);
  ws.chunk = chunk;
  ws.start = start;
  ws.end = end;
  ws.incr = incr;
  ws.copy = nullptr;
  ws.next.store(0, std::memory_order_relaxed);
  ws.ord_turn.store(0, std::memory_order_relaxed);
}

// Hands the calling member its next chunk, as logical iterations [lo, hi).
bool take_chunk(context& c, work_share& ws, std::uint64_t& lo, std::uint64_t& hi) {
  team& t = *c.t;
  if (t.ws_cancelled.load(std::memory_order_acquire) == c.ws_seq ||
      t.cancelled.load(std::memory_order_acquire)) {
    return false;
  }
  const std::uint64_t n = ws.n;
  const auto T = static_cast<std::uint64_t>(t.nthreads);
  const auto me = static_cast<std::uint64_t>(c.num);
  switch (ws.kind) {
    case sched_kind::dynamic: {
      lo = ws.next.fetch_add(ws.chunk, std::memory_order_relaxed);
      if (lo >= n) return false;
      hi = n - lo < ws.chunk ? n : lo + ws.chunk;
      return true;
    }
    case sched_kind::guided: {
      lo = ws.next.load(std::memory_order_relaxed);
      do {
        if (lo >= n) return false;
        const std::uint64_t rem = n - lo;
        std::uint64_t q = (rem + T - 1) / T;
        if (q < ws.chunk) q = ws.chunk;
        hi = rem < q ? n : lo + q;
      } while (!ws.next.compare_exchange_weak(lo, hi, std::memory_order_relaxed));
      return true;
    }
    default: {
      if (ws.chunk == 0) {  // one block per member, sizes differing by at most one
        if (c.static_k++ > 0) return false;
        const std::uint64_t q = n / T, r = n % T;
        lo = me * q + (me < r ? me : r);
        hi = lo + q + (me < r ? 1 : 0);
        return lo < hi;
      }
      const std::uint64_t k = c.static_k++;
      const std::uint64_t first = (k * T + me);
      if (first >= (n + ws.chunk - 1) / ws.chunk) return false;
      lo = first * ws.chunk;
      hi = n - lo < ws.chunk ? n : lo + ws.chunk;
      return true;
    }
  }
}

// Ordered loops: a finished chunk passes the turn on once every earlier chunk has.
void pass_turn(context& c, work_share& ws) {
  if (!ws.ordered || !c.have_chunk) return;
  const std::uint64_t lo = c.chunk_lo;
  if (ws.ord_turn.load(std::memory_order_acquire) != lo) {
    note_blocking(c);
    wait_until([&] { return ws.ord_turn.load(std::memory_order_acquire) == lo; });
  }
  ws.ord_turn.store(c.chunk_hi, std::memory_order_release);
  c.have_chunk = false;
}

bool next_range(std::uint64_t* istart, std::uint64_t* iend) {
  context& c = current();
  work_share* ws = c.ws;
  if (!ws) return false;
  pass_turn(c, *ws);
  std::uint64_t lo = 0, hi = 0;
  if (!take_chunk(c, *ws, lo, hi)) return false;
  c.chunk_lo = lo;
  c.chunk_hi = hi;
  c.have_chunk = true;
  *istart = ws->start + lo * ws->incr;
  *iend = hi == ws->n ? ws->end : ws->start + hi * ws->incr;
  return true;
}

bool start_range(bool ull, bool up, std::uint64_t start, std::uint64_t end, std::uint64_t incr,
                 sched_kind k, std::uint64_t chunk, bool ordered, std::uint64_t* istart,
                 std::uint64_t* iend, void** mem) {
  context& c = current();
  bool first = false;
  work_share& ws = enter(c, first);
  if (first) {
    k = resolve(c, k, chunk);
    fill_loop(ws, ull, up, start, end, incr, k, chunk, ordered);
    share_memory(ws, true, mem);
    publish(c, ws);
  } else {
    share_memory(ws, false, mem);
  }
  c.ws = &ws;
  c.static_k = 0;
  c.have_chunk = false;
  if (!istart) return true;
  return next_range(istart, iend);
}

bool start_long(long start, long end, long incr, sched_kind k, long chunk, bool ordered,
                long* istart, long* iend, void** mem = nullptr) {
  std::uint64_t s = 0, e = 0;
  const bool r =
      start_range(false, incr > 0, static_cast<std::uint64_t>(start),
                  static_cast<std::uint64_t>(end), static_cast<std::uint64_t>(incr), k,
                  static_cast<std::uint64_t>(chunk), ordered, istart ? &s : nullptr, &e, mem);
  if (r && istart) {
    *istart = static_cast<long>(s);
    *iend = static_cast<long>(e);
  }
  return r;
}

bool next_long(long* istart, long* iend) {
  std::uint64_t s = 0, e = 0;
  if (!next_range(&s, &e)) return false;
  *istart = static_cast<long>(s);
  *iend = static_cast<long>(e);
  return true;
}

using ull = unsigned long long;

bool start_ull(bool up, ull start, ull end, ull incr, sched_kind k, ull chunk, bool ordered,
               ull* istart, ull* iend, void** mem = nullptr) {
  std::uint64_t s = 0, e = 0;
  const bool r =
      start_range(true, up, start, end, incr, k, chunk, ordered, istart ? &s : nullptr, &e, mem);
  if (r && istart) {
    *istart = s;
    *iend = e;
  }
  return r;
}

bool next_ull(ull* istart, ull* iend) {
  std::uint64_t s = 0, e = 0;
  if (!next_range(&s, &e)) return false;
  *istart = s;
  *iend = e;
  return true;
}

sched_kind sched_arg(long sched) {
  return static_cast<sched_kind>(sched & 0x7fffffff);
}

void end_loop(bool wait) {
  context& c = current();
  if (c.ws) pass_turn(c, *c.ws);
  release(c);
  if (wait) team_wait(c);
}

// The preset slot of a combined parallel loop or sections construct.
void parallel_preset(void (*fn)(void*), void* data, unsigned nthreads, bool ull, bool up,
                     std::uint64_t start, std::uint64_t end, std::uint64_t incr, sched_kind k,
                     std::uint64_t chunk, unsigned flags) {
  work_share preset;
  context& c = current();
  k = resolve(c, k, chunk);
  fill_loop(preset, ull, up, start, end, incr, k, chunk, false);
  run_parallel(fn, data, nthreads, flags, &preset);
}

unsigned section_next() {
  std::uint64_t s = 0, e = 0;
  return next_range(&s, &e) ? static_cast<unsigned>(s) : 0;
}

unsigned sections_start(unsigned count, void** mem) {
  std::uint64_t s = 0, e = 0;
  const bool r =
      start_range(false, true, 1, count + 1ul, 1, sched_kind::dynamic, 1, false, &s, &e, mem);
  return r ? static_cast<unsigned>(s) : 0;
}

}  // namespace

void team_wait(context& c) {
  if (!c.t) return;
  note_blocking(c);
  finish_children(c);
  if (c.t->nthreads > 1) {
    const bool spin = c.active_level == 1 && c.t->nthreads <= settings().streams;
    c.t->barrier.wait(*c.t, spin ? settings().spin : 0);
  }
}

bool cancellation_point(context& c, int which) {
  if (!settings().cancellation) return false;
  if (which & cancel_taskgroup) return cancelled_group(c);
  if (!c.t) return false;
  if (c.t->cancelled.load(std::memory_order_acquire)) return true;
  if (which & (cancel_loop | cancel_sections)) {
    return c.t->ws_cancelled.load(std::memory_order_acquire) == c.ws_seq;
  }
  return false;
}

}  // namespace weft::omp

using namespace weft;
using namespace weft::omp;

extern "C" {

// ---- loops -------------------------------------------------------------------------------

bool GOMP_loop_static_start(long s, long e, long i, long chunk, long* is, long* ie) {
  return start_long(s, e, i, sched_kind::static_, chunk, false, is, ie);
}
bool GOMP_loop_dynamic_start(long s, long e, long i, long chunk, long* is, long* ie) {
  return start_long(s, e, i, sched_kind::dynamic, chunk, false, is, ie);
}
bool GOMP_loop_guided_start(long s, long e, long i, long chunk, long* is, long* ie) {
  return start_long(s, e, i, sched_kind::guided, chunk, false, is, ie);
}
bool GOMP_loop_nonmonotonic_dynamic_start(long s, long e, long i, long chunk, long* is, long* ie) {
  return start_long(s, e, i, sched_kind::dynamic, chunk, false, is, ie);
}
bool GOMP_loop_nonmonotonic_guided_start(long s, long e, long i, long chunk, long* is, long* ie) {
  return start_long(s, e, i, sched_kind::guided, chunk, false, is, ie);
}
bool GOMP_loop_runtime_start(long s, long e, long i, long* is, long* ie) {
  return start_long(s, e, i, sched_kind::runtime, 0, false, is, ie);
}
bool GOMP_loop_nonmonotonic_runtime_start(long s, long e, long i, long* is, long* ie) {
  return start_long(s, e, i, sched_kind::runtime, 0, false, is, ie);
}
bool GOMP_loop_maybe_nonmonotonic_runtime_start(long s, long e, long i, long* is, long* ie) {
  return start_long(s, e, i, sched_kind::runtime, 0, false, is, ie);
}
bool GOMP_loop_ordered_static_start(long s, long e, long i, long chunk, long* is, long* ie) {
  return start_long(s, e, i, sched_kind::static_, chunk, true, is, ie);
}
bool GOMP_loop_ordered_dynamic_start(long s, long e, long i, long chunk, long* is, long* ie) {
  return start_long(s, e, i, sched_kind::dynamic, chunk, true, is, ie);
}
bool GOMP_loop_ordered_guided_start(long s, long e, long i, long chunk, long* is, long* ie) {
  return start_long(s, e, i, sched_kind::guided, chunk, true, is, ie);
}
bool GOMP_loop_ordered_runtime_start(long s, long e, long i, long* is, long* ie) {
  return start_long(s, e, i, sched_kind::runtime, 0, true, is, ie);
}
bool GOMP_loop_start(long s, long e, long i, long sched, long chunk, long* is, long* ie,
                     std::uintptr_t* reductions, void** mem) {
  if (reductions) unsupported("task reductions on a worksharing loop (reduction(task, ...))");
  return start_long(s, e, i, sched_arg(sched), chunk, false, is, ie, mem);
}
bool GOMP_loop_ordered_start(long s, long e, long i, long sched, long chunk, long* is, long* ie,
                             std::uintptr_t* reductions, void** mem) {
  if (reductions) unsupported("task reductions on a worksharing loop (reduction(task, ...))");
  return start_long(s, e, i, sched_arg(sched), chunk, true, is, ie, mem);
}

bool GOMP_loop_static_next(long* is, long* ie) {
  return next_long(is, ie);
}
bool GOMP_loop_dynamic_next(long* is, long* ie) {
  return next_long(is, ie);
}
bool GOMP_loop_guided_next(long* is, long* ie) {
  return next_long(is, ie);
}
bool GOMP_loop_runtime_next(long* is, long* ie) {
  return next_long(is, ie);
}
bool GOMP_loop_nonmonotonic_dynamic_next(long* is, long* ie) {
  return next_long(is, ie);
}
bool GOMP_loop_nonmonotonic_guided_next(long* is, long* ie) {
  return next_long(is, ie);
}
bool GOMP_loop_nonmonotonic_runtime_next(long* is, long* ie) {
  return next_long(is, ie);
}
bool GOMP_loop_maybe_nonmonotonic_runtime_next(long* is, long* ie) {
  return next_long(is, ie);
}
bool GOMP_loop_ordered_static_next(long* is, long* ie) {
  return next_long(is, ie);
}
bool GOMP_loop_ordered_dynamic_next(long* is, long* ie) {
  return next_long(is, ie);
}
bool GOMP_loop_ordered_guided_next(long* is, long* ie) {
  return next_long(is, ie);
}
bool GOMP_loop_ordered_runtime_next(long* is, long* ie) {
  return next_long(is, ie);
}

bool GOMP_loop_ull_static_start(bool up, ull s, ull e, ull i, ull chunk, ull* is, ull* ie) {
  return start_ull(up, s, e, i, sched_kind::static_, chunk, false, is, ie);
}
bool GOMP_loop_ull_dynamic_start(bool up, ull s, ull e, ull i, ull chunk, ull* is, ull* ie) {
  return start_ull(up, s, e, i, sched_kind::dynamic, chunk, false, is, ie);
}
bool GOMP_loop_ull_guided_start(bool up, ull s, ull e, ull i, ull chunk, ull* is, ull* ie) {
  return start_ull(up, s, e, i, sched_kind::guided, chunk, false, is, ie);
}
bool GOMP_loop_ull_nonmonotonic_dynamic_start(bool up, ull s, ull e, ull i, ull chunk, ull* is,
                                              ull* ie) {
  return start_ull(up, s, e, i, sched_kind::dynamic, chunk, false, is, ie);
}
bool GOMP_loop_ull_nonmonotonic_guided_start(bool up, ull s, ull e, ull i, ull chunk, ull* is,
                                             ull* ie) {
  return start_ull(up, s, e, i, sched_kind::guided, chunk, false, is, ie);
}
bool GOMP_loop_ull_runtime_start(bool up, ull s, ull e, ull i, ull* is, ull* ie) {
  return start_ull(up, s, e, i, sched_kind::runtime, 0, false, is, ie);
}
bool GOMP_loop_ull_nonmonotonic_runtime_start(bool up, ull s, ull e, ull i, ull* is, ull* ie) {
  return start_ull(up, s, e, i, sched_kind::runtime, 0, false, is, ie);
}
bool GOMP_loop_ull_maybe_nonmonotonic_runtime_start(bool up, ull s, ull e, ull i, ull* is,
                                                    ull* ie) {
  return start_ull(up, s, e, i, sched_kind::runtime, 0, false, is, ie);
}
bool GOMP_loop_ull_ordered_static_start(bool up, ull s, ull e, ull i, ull chunk, ull* is, ull* ie) {
  return start_ull(up, s, e, i, sched_kind::static_, chunk, true, is, ie);
}
bool GOMP_loop_ull_ordered_dynamic_start(bool up, ull s, ull e, ull i, ull chunk, ull* is,
                                         ull* ie) {
  return start_ull(up, s, e, i, sched_kind::dynamic, chunk, true, is, ie);
}
bool GOMP_loop_ull_ordered_guided_start(bool up, ull s, ull e, ull i, ull chunk, ull* is, ull* ie) {
  return start_ull(up, s, e, i, sched_kind::guided, chunk, true, is, ie);
}
bool GOMP_loop_ull_ordered_runtime_start(bool up, ull s, ull e, ull i, ull* is, ull* ie) {
  return start_ull(up, s, e, i, sched_kind::runtime, 0, true, is, ie);
}
bool GOMP_loop_ull_start(bool up, ull s, ull e, ull i, long sched, ull chunk, ull* is, ull* ie,
                         std::uintptr_t* reductions, void** mem) {
  if (reductions) unsupported("task reductions on a worksharing loop (reduction(task, ...))");
  return start_ull(up, s, e, i, sched_arg(sched), chunk, false, is, ie, mem);
}
bool GOMP_loop_ull_ordered_start(bool up, ull s, ull e, ull i, long sched, ull chunk, ull* is,
                                 ull* ie, std::uintptr_t* reductions, void** mem) {
  if (reductions) unsupported("task reductions on a worksharing loop (reduction(task, ...))");
  return start_ull(up, s, e, i, sched_arg(sched), chunk, true, is, ie, mem);
}

bool GOMP_loop_ull_static_next(ull* is, ull* ie) {
  return next_ull(is, ie);
}
bool GOMP_loop_ull_dynamic_next(ull* is, ull* ie) {
  return next_ull(is, ie);
}
bool GOMP_loop_ull_guided_next(ull* is, ull* ie) {
  return next_ull(is, ie);
}
bool GOMP_loop_ull_runtime_next(ull* is, ull* ie) {
  return next_ull(is, ie);
}
bool GOMP_loop_ull_nonmonotonic_dynamic_next(ull* is, ull* ie) {
  return next_ull(is, ie);
}
bool GOMP_loop_ull_nonmonotonic_guided_next(ull* is, ull* ie) {
  return next_ull(is, ie);
}
bool GOMP_loop_ull_nonmonotonic_runtime_next(ull* is, ull* ie) {
  return next_ull(is, ie);
}
bool GOMP_loop_ull_maybe_nonmonotonic_runtime_next(ull* is, ull* ie) {
  return next_ull(is, ie);
}
bool GOMP_loop_ull_ordered_static_next(ull* is, ull* ie) {
  return next_ull(is, ie);
}
bool GOMP_loop_ull_ordered_dynamic_next(ull* is, ull* ie) {
  return next_ull(is, ie);
}
bool GOMP_loop_ull_ordered_guided_next(ull* is, ull* ie) {
  return next_ull(is, ie);
}
bool GOMP_loop_ull_ordered_runtime_next(ull* is, ull* ie) {
  return next_ull(is, ie);
}

void GOMP_loop_end(void) {
  end_loop(true);
}
void GOMP_loop_end_nowait(void) {
  end_loop(false);
}
bool GOMP_loop_end_cancel(void) {
  context& c = current();
  if (c.ws) pass_turn(c, *c.ws);
  release(c);
  if (!c.t) return false;
  note_blocking(c);
  finish_children(c);
  if (c.t->nthreads == 1) return c.t->cancelled.load();
  return c.t->barrier.wait(*c.t, c.active_level == 1 ? settings().spin : 0);
}

void GOMP_parallel_loop_static(void (*fn)(void*), void* data, unsigned n, long s, long e, long i,
                               long chunk, unsigned flags) {
  parallel_preset(fn, data, n, false, i > 0, s, e, i, sched_kind::static_, chunk, flags);
}
void GOMP_parallel_loop_dynamic(void (*fn)(void*), void* data, unsigned n, long s, long e, long i,
                                long chunk, unsigned flags) {
  parallel_preset(fn, data, n, false, i > 0, s, e, i, sched_kind::dynamic, chunk, flags);
}
void GOMP_parallel_loop_guided(void (*fn)(void*), void* data, unsigned n, long s, long e, long i,
                               long chunk, unsigned flags) {
  parallel_preset(fn, data, n, false, i > 0, s, e, i, sched_kind::guided, chunk, flags);
}
void GOMP_parallel_loop_nonmonotonic_dynamic(void (*fn)(void*), void* data, unsigned n, long s,
                                             long e, long i, long chunk, unsigned flags) {
  parallel_preset(fn, data, n, false, i > 0, s, e, i, sched_kind::dynamic, chunk, flags);
}
void GOMP_parallel_loop_nonmonotonic_guided(void (*fn)(void*), void* data, unsigned n, long s,
                                            long e, long i, long chunk, unsigned flags) {
  parallel_preset(fn, data, n, false, i > 0, s, e, i, sched_kind::guided, chunk, flags);
}
void GOMP_parallel_loop_runtime(void (*fn)(void*), void* data, unsigned n, long s, long e, long i,
                                unsigned flags) {
  parallel_preset(fn, data, n, false, i > 0, s, e, i, sched_kind::runtime, 0, flags);
}
void GOMP_parallel_loop_nonmonotonic_runtime(void (*fn)(void*), void* data, unsigned n, long s,
                                             long e, long i, unsigned flags) {
  parallel_preset(fn, data, n, false, i > 0, s, e, i, sched_kind::runtime, 0, flags);
}
void GOMP_parallel_loop_maybe_nonmonotonic_runtime(void (*fn)(void*), void* data, unsigned n,
                                                   long s, long e, long i, unsigned flags) {
  parallel_preset(fn, data, n, false, i > 0, s, e, i, sched_kind::runtime, 0, flags);
}

// The OpenMP 2.5 combined forms: the caller runs fn itself, then calls GOMP_parallel_end.
static void legacy_preset(void (*fn)(void*), void* data, unsigned n, long s, long e, long i,
                          sched_kind k, long chunk) {
  work_share preset;
  std::uint64_t ch = static_cast<std::uint64_t>(chunk);
  k = resolve(current(), k, ch);
  fill_loop(preset, false, i > 0, s, e, i, k, ch, false);
  void* o = legacy_open(fn, data, n, &preset);
  current().legacy = o;  // member 0's context now
}
void GOMP_parallel_loop_static_start(void (*fn)(void*), void* data, unsigned n, long s, long e,
                                     long i, long chunk) {
  legacy_preset(fn, data, n, s, e, i, sched_kind::static_, chunk);
}
void GOMP_parallel_loop_dynamic_start(void (*fn)(void*), void* data, unsigned n, long s, long e,
                                      long i, long chunk) {
  legacy_preset(fn, data, n, s, e, i, sched_kind::dynamic, chunk);
}
void GOMP_parallel_loop_guided_start(void (*fn)(void*), void* data, unsigned n, long s, long e,
                                     long i, long chunk) {
  legacy_preset(fn, data, n, s, e, i, sched_kind::guided, chunk);
}
void GOMP_parallel_loop_runtime_start(void (*fn)(void*), void* data, unsigned n, long s, long e,
                                      long i) {
  legacy_preset(fn, data, n, s, e, i, sched_kind::runtime, 0);
}
void GOMP_parallel_sections_start(void (*fn)(void*), void* data, unsigned n, unsigned count) {
  legacy_preset(fn, data, n, 1, count + 1l, 1, sched_kind::dynamic, 1);
}

// ---- sections ----------------------------------------------------------------------------

unsigned GOMP_sections_start(unsigned count) {
  return sections_start(count, nullptr);
}
unsigned GOMP_sections2_start(unsigned count, std::uintptr_t* reductions, void** mem) {
  if (reductions) unsupported("task reductions on sections (reduction(task, ...))");
  return sections_start(count, mem);
}
unsigned GOMP_sections_next(void) {
  return section_next();
}
void GOMP_sections_end(void) {
  end_loop(true);
}
void GOMP_sections_end_nowait(void) {
  end_loop(false);
}
bool GOMP_sections_end_cancel(void) {
  return GOMP_loop_end_cancel();
}

void GOMP_parallel_sections(void (*fn)(void*), void* data, unsigned n, unsigned count,
                            unsigned flags) {
  parallel_preset(fn, data, n, false, true, 1, count + 1ul, 1, sched_kind::dynamic, 1, flags);
}

// ---- single, copyprivate -----------------------------------------------------------------

bool GOMP_single_start(void) {
  context& c = current();
  if (!c.t || c.t->nthreads == 1) {
    ++c.single_seq;
    return true;
  }
  std::uint64_t seq = c.single_seq++;
  return c.t->single_count.compare_exchange_strong(seq, seq + 1, std::memory_order_acq_rel);
}

void* GOMP_single_copy_start(void) {
  context& c = current();
  bool first = false;
  work_share& ws = enter(c, first);
  if (first) {
    ws.copy = nullptr;
    ws.n = 0;
    publish(c, ws);
    c.ws = &ws;
    return nullptr;
  }
  c.ws = &ws;
  team_wait(c);
  void* data = ws.copy;
  release(c);
  return data;
}

void GOMP_single_copy_end(void* data) {
  context& c = current();
  c.ws->copy = data;
  team_wait(c);
  release(c);
}

// ---- critical, atomic, ordered -----------------------------------------------------------

void GOMP_critical_start(void) {
  note_blocking(current());
  lock_word(g_unnamed_critical);
}
void GOMP_critical_end(void) {
  unlock_word(g_unnamed_critical);
}

// A named critical section's lock is the pointer-sized common symbol GCC passes.
void GOMP_critical_name_start(void** pptr) {
  static_assert(sizeof(std::atomic<std::uint32_t>) <= sizeof(void*));
  note_blocking(current());
  lock_word(*reinterpret_cast<std::atomic<std::uint32_t>*>(pptr));
}
void GOMP_critical_name_end(void** pptr) {
  unlock_word(*reinterpret_cast<std::atomic<std::uint32_t>*>(pptr));
}

void GOMP_atomic_start(void) {
  lock_word(g_atomic_lock);
}
void GOMP_atomic_end(void) {
  unlock_word(g_atomic_lock);
}

void GOMP_ordered_start(void) {
  context& c = current();
  work_share* ws = c.ws;
  if (!ws || !ws->ordered || !c.have_chunk) return;
  const std::uint64_t lo = c.chunk_lo;
  if (ws->ord_turn.load(std::memory_order_acquire) == lo) return;
  note_blocking(c);
  wait_until([&] { return ws->ord_turn.load(std::memory_order_acquire) == lo; });
}
void GOMP_ordered_end(void) {}

// ---- cancellation ------------------------------------------------------------------------

bool GOMP_cancellation_point(int which) {
  return cancellation_point(current(), which);
}

bool GOMP_cancel(int which, bool do_cancel) {
  if (!settings().cancellation) return false;
  context& c = current();
  if (!do_cancel) return cancellation_point(c, which);
  if (which & cancel_taskgroup) return cancel_group(c);
  if (!c.t) return false;
  if (which & cancel_parallel) {
    c.t->cancelled.store(true, std::memory_order_release);
    c.t->barrier.wake_all();
    return true;
  }
  c.t->ws_cancelled.store(c.ws_seq, std::memory_order_release);
  return true;
}

}  // extern "C"
