// Worksharing: loops (long and unsigned long long, every schedule, ordered, doacross), sections,
// single and copyprivate, critical, atomic, ordered, cancellation of loops and sections, and the
// combined parallel-loop and parallel-sections entry points.
#include "internal.hpp"

#include <cstdarg>
#include <cstring>
#include <memory>

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
  c.cursor = {};
}

// The team-shared memory GOMP_loop_start and GOMP_sections2_start hand out (*mem holds its size).
void share_memory(work_share& ws, bool first, void** mem) {
  if (!mem) return;
  if (first) ws.mem.assign(reinterpret_cast<std::uintptr_t>(*mem), 0);
  *mem = ws.mem.data();
}

// The schedule a loop runs: a runtime schedule is the ICV's; the rest is the core's.
parallel::loop_schedule resolve(context& c, sched_kind k, std::uint64_t chunk, bool monotonic) {
  if (k == sched_kind::runtime) {
    k = c.icv.run_sched;
    chunk = static_cast<std::uint64_t>(c.icv.run_chunk);
  }
  using pk = parallel::schedule_kind;
  const pk kind = k == sched_kind::static_   ? pk::static_
                  : k == sched_kind::dynamic ? pk::dynamic
                  : k == sched_kind::guided  ? pk::guided
                                             : pk::auto_;
  return {kind, chunk, monotonic};
}

template <class I>
void fill_loop(work_share& ws, const parallel::iteration_space<I>& sp, parallel::loop_schedule s,
               bool ordered) {
  ws.up = sp.up;
  ws.ordered = ordered;
  ws.doacross = false;
  ws.start = static_cast<std::uint64_t>(sp.start);
  ws.end = static_cast<std::uint64_t>(sp.end);
  ws.incr = static_cast<std::uint64_t>(sp.incr);
  ws.copy = nullptr;
  ws.loop.start(sp.count(), s);
  ws.ord_turn.store(0, std::memory_order_relaxed);
}

template <class I>
parallel::iteration_space<I> space_of(const work_share& ws) {
  return {static_cast<I>(ws.start), static_cast<I>(ws.end), static_cast<I>(ws.incr), ws.up};
}

// Hands the calling member its next chunk of logical iterations.
bool take_chunk(context& c, work_share& ws, parallel::chunk& out) {
  team& t = *c.t;
  if (t.ws_cancelled.load(std::memory_order_acquire) ||
      t.cancelled.load(std::memory_order_acquire)) {
    return false;
  }
  return parallel::next_chunk(ws.loop, static_cast<std::uint64_t>(t.nthreads),
                              static_cast<std::uint64_t>(c.num), c.cursor, out);
}

// The calling member is done with its current chunk. Ordered loops: it passes the turn on once
// every earlier chunk has. Doacross loops: the chunk's iterations count as posted, so that no
// team-mate waits for one the program never posted (or skipped by cancellation).
void finish_chunk(context& c, work_share& ws) {
  if (!c.have_chunk) return;
  if (ws.ordered) {
    const std::uint64_t lo = c.chunk_lo;
    if (ws.ord_turn.load(std::memory_order_acquire) != lo) {
      note_blocking(c);
      wait_until([&] { return ws.ord_turn.load(std::memory_order_acquire) == lo; });
    }
    ws.ord_turn.store(c.chunk_hi, std::memory_order_release);
  }
  if (ws.doacross) ws.dx.finish({c.chunk_lo, c.chunk_hi});
  c.have_chunk = false;
}

// GOMP_loop_*_next and GOMP_loop_ull_*_next: the next chunk as the loop's own bounds.
template <class I>
bool next_loop(I* istart, I* iend) {
  context& c = current();
  work_share* ws = c.ws;
  if (!ws) return false;
  finish_chunk(c, *ws);
  parallel::chunk r;
  if (!take_chunk(c, *ws, r)) return false;
  c.chunk_lo = r.lo;
  c.chunk_hi = r.hi;
  c.have_chunk = true;
  const parallel::iteration_space<I> sp = space_of<I>(*ws);
  *istart = sp.at(r.lo);
  *iend = sp.bound(r.hi, ws->loop.count);
  return true;
}

struct no_setup {
  void operator()(const context&, work_share&) const noexcept {}
};

// GOMP_loop_*_start and GOMP_loop_ull_*_start: joins (or sets up) the loop, then takes the first
// chunk unless istart is null. The first member also runs setup(c, ws) on the filled slot.
template <class I, class Setup = no_setup>
bool start_loop(const parallel::iteration_space<I>& sp, sched_kind k, std::uint64_t chunk,
                bool ordered, I* istart, I* iend, void** mem = nullptr, bool monotonic = false,
                Setup setup = {}, std::uintptr_t* reductions = nullptr) {
  context& c = current();
  bool first = false;
  work_share& ws = enter(c, first);
  if (first) {
    fill_loop(ws, sp, resolve(c, k, chunk, monotonic || ordered), ordered);
    setup(c, ws);
    // reduction(task, ...): the first member allocates the copies, the others share them.
    if (reductions) {
      ws_register_reductions(c, reductions, nullptr);
      ws.reds = reductions;
    }
    share_memory(ws, true, mem);
    publish(c, ws);
  } else {
    if (reductions) ws_register_reductions(c, reductions, ws.reds);
    share_memory(ws, false, mem);
  }
  c.ws = &ws;
  c.cursor = {};
  c.have_chunk = false;
  if (!istart) return true;
  return next_loop(istart, iend);
}

using parallel::make_space;
using ull = unsigned long long;

// Doacross loops (ordered(n) with depend(sink)/depend(source)), as GCC lowers them: the team
// shares out the outermost of the ncounts dimensions, logical iterations 0..counts[0]-1 (the
// compiler walks the inner ones and converts every index to a logical one itself), under any
// schedule. C is the counters' type, long or unsigned long long (the _ull entry points).
template <class C>
bool start_doacross(unsigned ncounts, const C* counts, sched_kind k, C chunk, C* istart, C* iend,
                    void** mem = nullptr, std::uintptr_t* reductions = nullptr) {
  const parallel::iteration_space<C> sp{C{0}, counts[0], C{1}, true};
  // Members run their chunks in increasing order (the dispatch's monotonic order), which the
  // progress words rely on.
  return start_loop(
      sp, k, static_cast<std::uint64_t>(chunk), false, istart, iend, mem, true,
      [&](const context& c, work_share& ws) {
        // A team of one runs the iterations in order: nothing to post or wait for.
        if (c.t->nthreads == 1 || ncounts == 0) return;
        ws.dx.start(ws.loop, static_cast<std::uint64_t>(c.t->nthreads), ncounts, counts);
        ws.doacross = true;
      },
      reductions);
}

// The doacross loop the calling member works on, or null where there is nothing to track.
work_share* doacross_share(context& c) {
  work_share* ws = c.ws;
  if (ws && ws->doacross) return ws;
  // As libgomp: the construct still orders memory.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return nullptr;
}

// An iteration vector with room for the usual few dimensions in place, left uninitialised: the
// caller fills all of it, and the stores of clearing it would queue behind a post's store, which
// waits for its line while the member waiting for it reads the line.
class index_vector {
 public:
  explicit index_vector(unsigned n)
      : heap_(n > in_place ? std::make_unique_for_overwrite<std::uint64_t[]>(n) : nullptr) {}
  std::uint64_t* data() noexcept { return heap_ ? heap_.get() : local_; }

 private:
  static constexpr unsigned in_place = 8;
  std::uint64_t local_[in_place];
  std::unique_ptr<std::uint64_t[]> heap_;
};

// depend(source): the calling member finished iteration `counts`.
template <class C>
void doacross_post(const C* counts) {
  context& c = current();
  work_share* ws = doacross_share(c);
  if (!ws) return;
  if (ws->dx.in_range(counts)) ws->dx.post(counts);
}

// depend(sink: vec): waits until iteration (first, ...) has been posted. The waiting member lets
// units queued on its stream run while it waits, so the member it waits for runs even when it
// shares the stream.
template <class C>
void doacross_wait(C first, std::va_list ap) {
  context& c = current();
  work_share* ws = doacross_share(c);
  if (!ws) return;
  const unsigned n = ws->dx.dims();
  index_vector v(n);
  std::uint64_t* p = v.data();
  p[0] = static_cast<std::uint64_t>(first);
  for (unsigned k = 1; k < n; ++k) p[k] = static_cast<std::uint64_t>(va_arg(ap, C));
  // A sink outside the iteration space names no iteration (negative indices wrap past the
  // counts); one of the caller's own is done since sinks point backwards.
  const parallel::doacross::sink s =
      ws->dx.sink_of(p, static_cast<std::uint64_t>(c.num), {c.chunk_lo, c.chunk_hi});
  if (!s.word || s.reached()) return;
  note_blocking(c);
  // A cancelled loop never runs the iterations its members had not reached.
  const team& t = *c.t;
  const auto posted = [&] {
    return s.reached() || t.ws_cancelled.load(std::memory_order_acquire) ||
           t.cancelled.load(std::memory_order_acquire);
  };
  // The sink is usually a hand-off away: spin for the wait policy's budget as libgomp does (it
  // never blocks here, so a post costs one store), letting units queued on this stream (a
  // team-mate, maybe the one waited for) run meanwhile; then poll, yielding between checks.
  const bool ult = this_unit::is_ult();
  const long spin = spin_rounds();
  for (long i = 0; i < spin; ++i) {
    if (posted()) return;
    if ((i & 15) == 15 && ult) {
      execution_stream* es = this_unit::stream();
      if (es && !es->main_pool().empty()) this_unit::yield();
    }
    cpu_relax();
  }
  wait_until(posted);
}

// GOMP_loop_start's schedule argument: the kind, with GFS_MONOTONIC in bit 31.
constexpr long monotonic_bit = 0x80000000l;

sched_kind sched_arg(long sched) {
  return static_cast<sched_kind>(sched & 0x7fffffff);
}

void end_loop(bool wait) {
  context& c = current();
  if (c.ws) finish_chunk(c, *c.ws);
  release(c);
  if (wait) team_wait(c);
}

// The preset slot of a combined parallel loop or sections construct.
template <class I>
void parallel_preset(void (*fn)(void*), void* data, unsigned nthreads,
                     const parallel::iteration_space<I>& sp, sched_kind k, std::uint64_t chunk,
                     unsigned flags) {
  work_share preset;
  fill_loop(preset, sp, resolve(current(), k, chunk, false), false);
  run_parallel(fn, data, nthreads, flags, &preset);
}

unsigned section_next() {
  long s = 0, e = 0;
  return next_loop(&s, &e) ? static_cast<unsigned>(s) : 0;
}

unsigned sections_start(unsigned count, void** mem, std::uintptr_t* reductions = nullptr) {
  long s = 0, e = 0;
  const bool r = start_loop(make_space(1l, count + 1l, 1l), sched_kind::dynamic, 1, false, &s, &e,
                            mem, false, no_setup{}, reductions);
  return r ? static_cast<unsigned>(s) : 0;
}

}  // namespace

void team_wait(context& c) {
  if (!c.t) return;
  note_blocking(c);
  const slot_pause pause(c);
  finish_children(c);
  const bool spin = c.active_level == 1 && c.t->nthreads <= settings().streams;
  c.t->wait_barrier(spin ? spin_rounds() : 0);
}

bool cancellation_point(context& c, int which) {
  if (!settings().cancellation) return false;
  if (which & cancel_taskgroup) return cancelled_group(c);
  if (!c.t) return false;
  if (c.t->cancelled.load(std::memory_order_acquire)) return true;
  if (which & (cancel_loop | cancel_sections)) {
    return c.t->ws_cancelled.load(std::memory_order_acquire);
  }
  return false;
}

}  // namespace weft::omp

using namespace weft;
using namespace weft::omp;

extern "C" {

// ---- loops -------------------------------------------------------------------------------

bool GOMP_loop_static_start(long s, long e, long i, long chunk, long* is, long* ie) {
  return start_loop(make_space(s, e, i), sched_kind::static_, chunk, false, is, ie);
}
bool GOMP_loop_dynamic_start(long s, long e, long i, long chunk, long* is, long* ie) {
  return start_loop(make_space(s, e, i), sched_kind::dynamic, chunk, false, is, ie);
}
bool GOMP_loop_guided_start(long s, long e, long i, long chunk, long* is, long* ie) {
  return start_loop(make_space(s, e, i), sched_kind::guided, chunk, false, is, ie);
}
bool GOMP_loop_nonmonotonic_dynamic_start(long s, long e, long i, long chunk, long* is, long* ie) {
  return start_loop(make_space(s, e, i), sched_kind::dynamic, chunk, false, is, ie);
}
bool GOMP_loop_nonmonotonic_guided_start(long s, long e, long i, long chunk, long* is, long* ie) {
  return start_loop(make_space(s, e, i), sched_kind::guided, chunk, false, is, ie);
}
bool GOMP_loop_runtime_start(long s, long e, long i, long* is, long* ie) {
  return start_loop(make_space(s, e, i), sched_kind::runtime, 0, false, is, ie);
}
bool GOMP_loop_nonmonotonic_runtime_start(long s, long e, long i, long* is, long* ie) {
  return start_loop(make_space(s, e, i), sched_kind::runtime, 0, false, is, ie);
}
bool GOMP_loop_maybe_nonmonotonic_runtime_start(long s, long e, long i, long* is, long* ie) {
  return start_loop(make_space(s, e, i), sched_kind::runtime, 0, false, is, ie);
}
bool GOMP_loop_ordered_static_start(long s, long e, long i, long chunk, long* is, long* ie) {
  return start_loop(make_space(s, e, i), sched_kind::static_, chunk, true, is, ie);
}
bool GOMP_loop_ordered_dynamic_start(long s, long e, long i, long chunk, long* is, long* ie) {
  return start_loop(make_space(s, e, i), sched_kind::dynamic, chunk, true, is, ie);
}
bool GOMP_loop_ordered_guided_start(long s, long e, long i, long chunk, long* is, long* ie) {
  return start_loop(make_space(s, e, i), sched_kind::guided, chunk, true, is, ie);
}
bool GOMP_loop_ordered_runtime_start(long s, long e, long i, long* is, long* ie) {
  return start_loop(make_space(s, e, i), sched_kind::runtime, 0, true, is, ie);
}
bool GOMP_loop_start(long s, long e, long i, long sched, long chunk, long* is, long* ie,
                     std::uintptr_t* reductions, void** mem) {
  return start_loop(make_space(s, e, i), sched_arg(sched), chunk, false, is, ie, mem,
                    (sched & monotonic_bit) != 0, no_setup{}, reductions);
}
bool GOMP_loop_ordered_start(long s, long e, long i, long sched, long chunk, long* is, long* ie,
                             std::uintptr_t* reductions, void** mem) {
  return start_loop(make_space(s, e, i), sched_arg(sched), chunk, true, is, ie, mem,
                    (sched & monotonic_bit) != 0, no_setup{}, reductions);
}

bool GOMP_loop_static_next(long* is, long* ie) {
  return next_loop(is, ie);
}
bool GOMP_loop_dynamic_next(long* is, long* ie) {
  return next_loop(is, ie);
}
bool GOMP_loop_guided_next(long* is, long* ie) {
  return next_loop(is, ie);
}
bool GOMP_loop_runtime_next(long* is, long* ie) {
  return next_loop(is, ie);
}
bool GOMP_loop_nonmonotonic_dynamic_next(long* is, long* ie) {
  return next_loop(is, ie);
}
bool GOMP_loop_nonmonotonic_guided_next(long* is, long* ie) {
  return next_loop(is, ie);
}
bool GOMP_loop_nonmonotonic_runtime_next(long* is, long* ie) {
  return next_loop(is, ie);
}
bool GOMP_loop_maybe_nonmonotonic_runtime_next(long* is, long* ie) {
  return next_loop(is, ie);
}
bool GOMP_loop_ordered_static_next(long* is, long* ie) {
  return next_loop(is, ie);
}
bool GOMP_loop_ordered_dynamic_next(long* is, long* ie) {
  return next_loop(is, ie);
}
bool GOMP_loop_ordered_guided_next(long* is, long* ie) {
  return next_loop(is, ie);
}
bool GOMP_loop_ordered_runtime_next(long* is, long* ie) {
  return next_loop(is, ie);
}

bool GOMP_loop_ull_static_start(bool up, ull s, ull e, ull i, ull chunk, ull* is, ull* ie) {
  return start_loop(make_space(up, s, e, i), sched_kind::static_, chunk, false, is, ie);
}
bool GOMP_loop_ull_dynamic_start(bool up, ull s, ull e, ull i, ull chunk, ull* is, ull* ie) {
  return start_loop(make_space(up, s, e, i), sched_kind::dynamic, chunk, false, is, ie);
}
bool GOMP_loop_ull_guided_start(bool up, ull s, ull e, ull i, ull chunk, ull* is, ull* ie) {
  return start_loop(make_space(up, s, e, i), sched_kind::guided, chunk, false, is, ie);
}
bool GOMP_loop_ull_nonmonotonic_dynamic_start(bool up, ull s, ull e, ull i, ull chunk, ull* is,
                                              ull* ie) {
  return start_loop(make_space(up, s, e, i), sched_kind::dynamic, chunk, false, is, ie);
}
bool GOMP_loop_ull_nonmonotonic_guided_start(bool up, ull s, ull e, ull i, ull chunk, ull* is,
                                             ull* ie) {
  return start_loop(make_space(up, s, e, i), sched_kind::guided, chunk, false, is, ie);
}
bool GOMP_loop_ull_runtime_start(bool up, ull s, ull e, ull i, ull* is, ull* ie) {
  return start_loop(make_space(up, s, e, i), sched_kind::runtime, 0, false, is, ie);
}
bool GOMP_loop_ull_nonmonotonic_runtime_start(bool up, ull s, ull e, ull i, ull* is, ull* ie) {
  return start_loop(make_space(up, s, e, i), sched_kind::runtime, 0, false, is, ie);
}
bool GOMP_loop_ull_maybe_nonmonotonic_runtime_start(bool up, ull s, ull e, ull i, ull* is,
                                                    ull* ie) {
  return start_loop(make_space(up, s, e, i), sched_kind::runtime, 0, false, is, ie);
}
bool GOMP_loop_ull_ordered_static_start(bool up, ull s, ull e, ull i, ull chunk, ull* is, ull* ie) {
  return start_loop(make_space(up, s, e, i), sched_kind::static_, chunk, true, is, ie);
}
bool GOMP_loop_ull_ordered_dynamic_start(bool up, ull s, ull e, ull i, ull chunk, ull* is,
                                         ull* ie) {
  return start_loop(make_space(up, s, e, i), sched_kind::dynamic, chunk, true, is, ie);
}
bool GOMP_loop_ull_ordered_guided_start(bool up, ull s, ull e, ull i, ull chunk, ull* is, ull* ie) {
  return start_loop(make_space(up, s, e, i), sched_kind::guided, chunk, true, is, ie);
}
bool GOMP_loop_ull_ordered_runtime_start(bool up, ull s, ull e, ull i, ull* is, ull* ie) {
  return start_loop(make_space(up, s, e, i), sched_kind::runtime, 0, true, is, ie);
}
bool GOMP_loop_ull_start(bool up, ull s, ull e, ull i, long sched, ull chunk, ull* is, ull* ie,
                         std::uintptr_t* reductions, void** mem) {
  return start_loop(make_space(up, s, e, i), sched_arg(sched), chunk, false, is, ie, mem,
                    (sched & monotonic_bit) != 0, no_setup{}, reductions);
}
bool GOMP_loop_ull_ordered_start(bool up, ull s, ull e, ull i, long sched, ull chunk, ull* is,
                                 ull* ie, std::uintptr_t* reductions, void** mem) {
  return start_loop(make_space(up, s, e, i), sched_arg(sched), chunk, true, is, ie, mem,
                    (sched & monotonic_bit) != 0, no_setup{}, reductions);
}

bool GOMP_loop_ull_static_next(ull* is, ull* ie) {
  return next_loop(is, ie);
}
bool GOMP_loop_ull_dynamic_next(ull* is, ull* ie) {
  return next_loop(is, ie);
}
bool GOMP_loop_ull_guided_next(ull* is, ull* ie) {
  return next_loop(is, ie);
}
bool GOMP_loop_ull_runtime_next(ull* is, ull* ie) {
  return next_loop(is, ie);
}
bool GOMP_loop_ull_nonmonotonic_dynamic_next(ull* is, ull* ie) {
  return next_loop(is, ie);
}
bool GOMP_loop_ull_nonmonotonic_guided_next(ull* is, ull* ie) {
  return next_loop(is, ie);
}
bool GOMP_loop_ull_nonmonotonic_runtime_next(ull* is, ull* ie) {
  return next_loop(is, ie);
}
bool GOMP_loop_ull_maybe_nonmonotonic_runtime_next(ull* is, ull* ie) {
  return next_loop(is, ie);
}
bool GOMP_loop_ull_ordered_static_next(ull* is, ull* ie) {
  return next_loop(is, ie);
}
bool GOMP_loop_ull_ordered_dynamic_next(ull* is, ull* ie) {
  return next_loop(is, ie);
}
bool GOMP_loop_ull_ordered_guided_next(ull* is, ull* ie) {
  return next_loop(is, ie);
}
bool GOMP_loop_ull_ordered_runtime_next(ull* is, ull* ie) {
  return next_loop(is, ie);
}

// ---- doacross loops: ordered(n) with depend(sink) and depend(source) ---------------------

bool GOMP_loop_doacross_static_start(unsigned n, long* counts, long chunk, long* is, long* ie) {
  return start_doacross(n, counts, sched_kind::static_, chunk, is, ie);
}
bool GOMP_loop_doacross_dynamic_start(unsigned n, long* counts, long chunk, long* is, long* ie) {
  return start_doacross(n, counts, sched_kind::dynamic, chunk, is, ie);
}
bool GOMP_loop_doacross_guided_start(unsigned n, long* counts, long chunk, long* is, long* ie) {
  return start_doacross(n, counts, sched_kind::guided, chunk, is, ie);
}
bool GOMP_loop_doacross_runtime_start(unsigned n, long* counts, long* is, long* ie) {
  return start_doacross(n, counts, sched_kind::runtime, 0l, is, ie);
}
// GCC 9+: the schedule comes before the chunk size (as in GOMP_loop_ull_doacross_start).
bool GOMP_loop_doacross_start(unsigned n, long* counts, long sched, long chunk, long* is, long* ie,
                              std::uintptr_t* reductions, void** mem) {
  return start_doacross(n, counts, sched_arg(sched), chunk, is, ie, mem, reductions);
}
bool GOMP_loop_ull_doacross_static_start(unsigned n, ull* counts, ull chunk, ull* is, ull* ie) {
  return start_doacross(n, counts, sched_kind::static_, chunk, is, ie);
}
bool GOMP_loop_ull_doacross_dynamic_start(unsigned n, ull* counts, ull chunk, ull* is, ull* ie) {
  return start_doacross(n, counts, sched_kind::dynamic, chunk, is, ie);
}
bool GOMP_loop_ull_doacross_guided_start(unsigned n, ull* counts, ull chunk, ull* is, ull* ie) {
  return start_doacross(n, counts, sched_kind::guided, chunk, is, ie);
}
bool GOMP_loop_ull_doacross_runtime_start(unsigned n, ull* counts, ull* is, ull* ie) {
  return start_doacross(n, counts, sched_kind::runtime, 0ull, is, ie);
}
bool GOMP_loop_ull_doacross_start(unsigned n, ull* counts, long sched, ull chunk, ull* is, ull* ie,
                                  std::uintptr_t* reductions, void** mem) {
  return start_doacross(n, counts, sched_arg(sched), chunk, is, ie, mem, reductions);
}

void GOMP_doacross_post(long* counts) {
  doacross_post(counts);
}
void GOMP_doacross_ull_post(ull* counts) {
  doacross_post(counts);
}
void GOMP_doacross_wait(long first, ...) {
  std::va_list ap;
  va_start(ap, first);
  doacross_wait(first, ap);
  va_end(ap);
}
void GOMP_doacross_ull_wait(ull first, ...) {
  std::va_list ap;
  va_start(ap, first);
  doacross_wait(first, ap);
  va_end(ap);
}

void GOMP_loop_end(void) {
  end_loop(true);
}
void GOMP_loop_end_nowait(void) {
  end_loop(false);
}
bool GOMP_loop_end_cancel(void) {
  context& c = current();
  if (c.ws) finish_chunk(c, *c.ws);
  release(c);
  if (!c.t) return false;
  note_blocking(c);
  const slot_pause pause(c);
  finish_children(c);
  return c.t->wait_barrier(c.active_level == 1 ? spin_rounds() : 0);
}

void GOMP_parallel_loop_static(void (*fn)(void*), void* data, unsigned n, long s, long e, long i,
                               long chunk, unsigned flags) {
  parallel_preset(fn, data, n, make_space(s, e, i), sched_kind::static_, chunk, flags);
}
void GOMP_parallel_loop_dynamic(void (*fn)(void*), void* data, unsigned n, long s, long e, long i,
                                long chunk, unsigned flags) {
  parallel_preset(fn, data, n, make_space(s, e, i), sched_kind::dynamic, chunk, flags);
}
void GOMP_parallel_loop_guided(void (*fn)(void*), void* data, unsigned n, long s, long e, long i,
                               long chunk, unsigned flags) {
  parallel_preset(fn, data, n, make_space(s, e, i), sched_kind::guided, chunk, flags);
}
void GOMP_parallel_loop_nonmonotonic_dynamic(void (*fn)(void*), void* data, unsigned n, long s,
                                             long e, long i, long chunk, unsigned flags) {
  parallel_preset(fn, data, n, make_space(s, e, i), sched_kind::dynamic, chunk, flags);
}
void GOMP_parallel_loop_nonmonotonic_guided(void (*fn)(void*), void* data, unsigned n, long s,
                                            long e, long i, long chunk, unsigned flags) {
  parallel_preset(fn, data, n, make_space(s, e, i), sched_kind::guided, chunk, flags);
}
void GOMP_parallel_loop_runtime(void (*fn)(void*), void* data, unsigned n, long s, long e, long i,
                                unsigned flags) {
  parallel_preset(fn, data, n, make_space(s, e, i), sched_kind::runtime, 0, flags);
}
void GOMP_parallel_loop_nonmonotonic_runtime(void (*fn)(void*), void* data, unsigned n, long s,
                                             long e, long i, unsigned flags) {
  parallel_preset(fn, data, n, make_space(s, e, i), sched_kind::runtime, 0, flags);
}
void GOMP_parallel_loop_maybe_nonmonotonic_runtime(void (*fn)(void*), void* data, unsigned n,
                                                   long s, long e, long i, unsigned flags) {
  parallel_preset(fn, data, n, make_space(s, e, i), sched_kind::runtime, 0, flags);
}

// The OpenMP 2.5 combined forms: the caller runs fn itself, then calls GOMP_parallel_end.
static void legacy_preset(void (*fn)(void*), void* data, unsigned n, long s, long e, long i,
                          sched_kind k, long chunk) {
  work_share preset;
  fill_loop(preset, make_space(s, e, i),
            resolve(current(), k, static_cast<std::uint64_t>(chunk), false), false);
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
  return sections_start(count, mem, reductions);
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
  parallel_preset(fn, data, n, make_space(1l, count + 1l, 1l), sched_kind::dynamic, 1, flags);
}

// ---- scope (OpenMP 5.1) -------------------------------------------------------------------

// GCC calls it only for reduction(task, ...) on a scope: a worksharing construct with nothing to
// share but the copies. GCC's code then waits at a barrier, combines (member 0) and calls
// GOMP_workshare_task_reduction_unregister.
void GOMP_scope_start(std::uintptr_t* reductions) {
  if (!reductions) return;
  context& c = current();
  bool first = false;
  work_share& ws = enter(c, first);
  if (first) {
    ws_register_reductions(c, reductions, nullptr);
    ws.reds = reductions;
    publish(c, ws);
  } else {
    ws_register_reductions(c, reductions, ws.reds);
  }
  ws.users.fetch_sub(1, std::memory_order_acq_rel);
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
    c.t->barrier.abort();
    return true;
  }
  c.t->ws_cancelled.store(true, std::memory_order_release);
  return true;
}

}  // extern "C"
