// SPDX-License-Identifier: Apache-2.0
// Shrink/expand events: callbacks, the request queue, and the handling steps (see events.hpp).
#include "elasticity/events.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <mutex>
#include <string_view>
#include <vector>

#include "core/runtime_state.hpp"
#include "core/stream.hpp"
#include "observe/observe.hpp"
#include "platform/assert.hpp"
#include "platform/locks.hpp"
#include "weft/error.hpp"
#include "weft/rm_protocol.hpp"
#include "weft/runtime.hpp"
#include "weft/this_unit.hpp"

namespace weft {

namespace detail {

namespace {

int live_streams() {
  return execution_stream::count();
}

void answer(const std::shared_ptr<resize_state>& s, bool ok, std::string_view message) noexcept {
  // Allocation-free but for the message: out of memory, a failed request says just that (short
  // enough for the string's inline buffer) and a request that succeeded loses nothing.
  std::string text;
  try {
    text.assign(message);
  } catch (...) {
    text = ok ? "" : "out of memory";
  }
  s->lock.lock();
  assert_invariant([done = s->done] { return !done; }, "events: a resize request is answered once");
  s->result.ok = ok;
  s->result.streams = initialized() ? live_streams() : 0;
  s->result.message.swap(text);
  s->done = true;
  // Woken under the lock (no list to allocate); `s` is kept alive by the caller's reference.
  while (wakeup w = s->waiters.take()) w();
  s->lock.unlock();
}

/// Appends why freeing stream `t` failed to `failure`; out of memory, says only that (which fits
/// the string's inline buffer, so it cannot fail), never leaving `failure` empty.
void note_free_failure(std::string& failure, const stream* t, const char* what) noexcept {
  try {
    failure += "freeing stream " + std::to_string(t->rank_) + ": " + what + "; ";
  } catch (...) {
    failure = "out of memory";
  }
}

/// The request being handled, once it has been started. Guarded by runtime_state::events_mutex;
/// reset by close_events() at finalize, so a later init starts clean.
struct in_flight {
  std::shared_ptr<resize_state> req;
  /// Shrink targets told to stop and not yet freed: whichever main scheduler checks its events
  /// next frees those whose thread has ended (steps 6 and 7).
  std::vector<stream*> stopping;
  /// True while one stream works on `stopping` outside the lock (joins and frees streams).
  bool claimed = false;
  /// Why freeing a target failed, if it did (the request then fails).
  std::string failure;
};
in_flight g_flight;

/// Ends the request in progress and lets the next one be picked up. Caller holds events_mutex.
void end_event_locked(runtime_state& r) {
  assert_invariant([&r] { return r.event_in_progress; },
                   "events: only the request in progress is ended");
  g_flight.req.reset();
  g_flight.stopping.clear();
  g_flight.failure.clear();
  r.event_in_progress = false;
  // Pending again only when another request is queued; then some stream must notice it.
  r.events_pending.store(!r.events.empty(), std::memory_order_release);
  if (!r.events.empty() && r.primary) r.primary->unpark();
}

/// Ends the request in progress with the given outcome.
void finish_event(const std::shared_ptr<resize_state>& s, bool ok, std::string_view message) {
  answer(s, ok, message);
  runtime_state& r = rt();
  std::lock_guard lock(r.events_mutex);
  end_event_locked(r);
}

/// Callbacks running on this thread (they may not nest, but a guard counts to be safe).
thread_local int t_callbacks_running = 0;

/// Marks the calling thread as running an event callback for its lifetime.
class in_callback {
 public:
  in_callback() noexcept { ++t_callbacks_running; }
  ~in_callback() { --t_callbacks_running; }
  in_callback(const in_callback&) = delete;
  in_callback& operator=(const in_callback&) = delete;
};

/// Throws errc::invalid_state when called from an event callback; `what` names the operation.
void refuse_in_callback(const char* what) {
  if (t_callbacks_running > 0) {
    throw error(errc::invalid_state, std::string("weft: ") + what +
                                         " cannot be called from an event callback (it would "
                                         "deadlock on the callback lock)");
  }
}

/// Asks every `ask` callback of `kind` about `rank`; returns an empty string or why it failed.
std::string ask_all(event_kind kind, int rank) {
  runtime_state& r = rt();
  std::lock_guard lock(r.callbacks_mutex);
  for (auto& [id, e] : r.callbacks) {
    if (e.kind != kind || !e.callbacks.ask) continue;
    bool agreed = false;
    try {
      in_callback mark;
      agreed = e.callbacks.ask(kind, rank);
    } catch (...) {
      agreed = false;
    }
    if (!agreed) {
      return std::string(kind == event_kind::stop_stream ? "stopping" : "adding") + " stream " +
             std::to_string(rank) + " vetoed by callback " + std::to_string(id);
    }
  }
  return {};
}

void act_all(event_kind kind, int rank) {
  runtime_state& r = rt();
  std::lock_guard lock(r.callbacks_mutex);
  for (auto& [id, e] : r.callbacks) {
    if (e.kind != kind || !e.callbacks.act) continue;
    try {
      in_callback mark;
      e.callbacks.act(kind, rank);
    } catch (const std::exception& ex) {
      std::fprintf(stderr, "weft: event callback %llu threw: %s\n",
                   static_cast<unsigned long long>(id), ex.what());
    } catch (...) {
      std::fprintf(stderr, "weft: event callback %llu threw\n",
                   static_cast<unsigned long long>(id));
    }
  }
}

/// Running secondary streams, highest rank first.
std::vector<stream*> stoppable() {
  runtime_state& r = rt();
  std::vector<stream*> out;
  std::lock_guard lock(r.streams_mutex);
  for (stream* s : r.streams)
    if (s && !s->primary_ && s->state() == stream_state::running) out.push_back(s);
  std::sort(out.begin(), out.end(), [](stream* a, stream* b) { return a->rank_ > b->rank_; });
  return out;
}

/// The ranks the next `n` created streams will take.
std::vector<int> next_ranks(int n) {
  runtime_state& r = rt();
  std::vector<int> out;
  std::lock_guard lock(r.streams_mutex);
  for (int rank = 0; static_cast<int>(out.size()) < n; ++rank) {
    if (rank >= static_cast<int>(r.streams.size()) || !r.streams[static_cast<std::size_t>(rank)])
      out.push_back(rank);
  }
  return out;
}

/// Wakes every running stream, so that whichever is free picks a request up.
void wake_all_streams(runtime_state& r) {
  std::lock_guard lock(r.streams_mutex);
  for (stream* s : r.streams)
    if (s && s->state() == stream_state::running) s->unpark();
}

/// Wakes a running stream other than the targets, so that one that is awake checks its events
/// soon (the primary first: it never stops).
void wake_one_survivor(const std::vector<stream*>& targets) {
  runtime_state& r = rt();
  std::lock_guard lock(r.streams_mutex);
  for (stream* s : r.streams) {
    if (!s || s->state() != stream_state::running) continue;
    if (std::find(targets.begin(), targets.end(), s) != targets.end()) continue;
    s->unpark();
    return;
  }
}

void shrink(stream& here, const std::shared_ptr<resize_state>& req, std::vector<stream*> targets) {
  // (2) ask, all targets first: one veto fails the request and changes nothing.
  for (stream* t : targets) {
    std::string why = ask_all(event_kind::stop_stream, t->rank_);
    if (!why.empty()) return finish_event(req, false, why);
  }
  // (3) mark, (4) notify.
  obs::resized(&here, true, targets.size());
  for (stream* t : targets) {
    t->state_.store(static_cast<std::uint32_t>(stream_state::terminating),
                    std::memory_order_release);
    t->request(request_stop);
  }
  for (stream* t : targets) act_all(event_kind::stop_stream, t->rank_);
  // (5)-(7) without a helper ULT: a ULT would queue behind every unit in its stream's pool (and
  // go back behind them at each poll), tens of milliseconds under load. Instead the request stays
  // pending, so every main scheduler's check_events() looks at it and the first to see a target
  // ended frees it; the last free answers. Any surviving stream can finish the job, so neither
  // a busy handling stream nor a primary blocked in a system call holds the shrink up.
  // The handling stream checks again at its next check_events(), unless it is stopping itself:
  // then wake a survivor (a parked one would otherwise wait for its park limit).
  if (std::find(targets.begin(), targets.end(), &here) != targets.end()) wake_one_survivor(targets);
  runtime_state& r = rt();
  std::lock_guard lock(r.events_mutex);
  assert_invariant(
      [&r] { return r.event_in_progress && !g_flight.req && !g_flight.claimed; },
      "events: one shrink in flight at a time, registered by the stream that started it");
  g_flight.req = req;
  g_flight.stopping = std::move(targets);
  r.events_pending.store(true, std::memory_order_release);
}

/// Steps 6 and 7 of a shrink in flight, from any main scheduler's check_events(): frees every
/// target whose thread has ended (a join that returns at once) and answers once none is left.
/// Called with `lock` held on events_mutex; releases it while joining and freeing.
void advance_shrink(runtime_state& r, std::unique_lock<std::mutex>& lock) {
  assert_invariant([&] { return lock.owns_lock() && !g_flight.claimed && r.event_in_progress; },
                   "events: one stream at a time frees the targets of a shrink in flight");
  // One ended target at a time, taken off the list under the lock: nothing to allocate (this
  // runs in a scheduler's event check, which must not fail out of memory).
  auto& stopping = g_flight.stopping;
  auto take_ended = [&stopping]() -> stream* {
    auto it = std::find_if(stopping.begin(), stopping.end(),
                           [](stream* t) { return t->state() == stream_state::terminated; });
    if (it == stopping.end()) return nullptr;
    stream* t = *it;
    stopping.erase(it);
    return t;
  };
  stream* t = take_ended();
  if (!t) return;
  // Claimed: close_events() waits for us rather than joining these streams a second time.
  g_flight.claimed = true;
  std::string failure;
  for (; t; t = take_ended()) {
    lock.unlock();
    try {
      static_cast<execution_stream*>(t)->free();
    } catch (const std::exception& e) {
      note_free_failure(failure, t, e.what());
    }
    lock.lock();
  }
  g_flight.claimed = false;
  if (!failure.empty()) {
    try {
      g_flight.failure += failure;
    } catch (...) {
      g_flight.failure = "out of memory";  // fits the inline buffer: the request still fails
    }
  }
  if (!g_flight.stopping.empty() || !g_flight.req) return;
  // Answered under the lock, before the next request can start, so that the count it reports
  // is this request's outcome.
  answer(g_flight.req, g_flight.failure.empty(), g_flight.failure);
  end_event_locked(r);
}

/// The five steps of an expand, all in the scheduler context of the handling stream: creating a
/// stream costs a pthread_create (the new thread binds itself), so no helper ULT is needed to
/// keep the stream responsive, and one would wait behind every unit queued on it.
void expand(const std::shared_ptr<resize_state>& req, int n) {
  const std::vector<int> ranks = next_ranks(n);
  for (int rank : ranks) {
    std::string why = ask_all(event_kind::add_stream, rank);
    if (!why.empty()) return finish_event(req, false, why);
  }
  obs::resized(current_stream_no_switch(), false, ranks.size());
  int made = 0;
  std::string failure;
  try {
    for (; made < n; ++made) {
      execution_stream& s = execution_stream::create();
      // The first new stream takes over the orphaned pools that still hold units.
      if (made == 0) impl(s).request(request_adopt_busy);
      act_all(event_kind::add_stream, s.rank());
    }
  } catch (const std::exception& e) {
    failure =
        "created " + std::to_string(made) + " of " + std::to_string(n) + " streams: " + e.what();
  }
  finish_event(req, failure.empty(), failure);
}

/// Fails `req` when adding `n` streams to `count` would pass rm::max_count, the most streams a
/// process may have (a manager asking for more gets an error rather than thousands of threads).
bool refuse_over_limit(const std::shared_ptr<resize_state>& req, int count, int n) {
  if (n <= rm::max_count - count) return false;
  finish_event(req, false,
               "expanding by " + std::to_string(n) + " would make " + std::to_string(count + n) +
                   " streams; at most " + std::to_string(rm::max_count) + " are allowed");
  return true;
}

void start(stream& here, const std::shared_ptr<resize_state>& req) {
  const int count = live_streams();
  switch (req->op) {
    case resize_op::stop_rank: {
      if (req->value == 0)
        return finish_event(req, false, "the primary stream (rank 0) never stops");
      for (stream* s : stoppable())
        if (s->rank_ == req->value) return shrink(here, req, {s});
      return finish_event(req, false, "no running stream of rank " + std::to_string(req->value));
    }
    case resize_op::shrink: {
      std::vector<stream*> all = stoppable();
      if (req->value > static_cast<int>(all.size())) {
        return finish_event(req, false,
                            "cannot stop " + std::to_string(req->value) + " streams: only " +
                                std::to_string(all.size()) +
                                " running besides the primary, which never stops");
      }
      all.resize(static_cast<std::size_t>(req->value));
      return shrink(here, req, std::move(all));
    }
    case resize_op::expand:
      if (refuse_over_limit(req, count, req->value)) return;
      return expand(req, req->value);
    case resize_op::set_count: {
      if (req->value == count) return finish_event(req, true, {});
      if (req->value > count) {
        if (refuse_over_limit(req, count, req->value - count)) return;
        return expand(req, req->value - count);
      }
      std::vector<stream*> all = stoppable();
      const int drop = count - req->value;
      if (drop > static_cast<int>(all.size())) {
        return finish_event(
            req, false,
            "cannot go down to " + std::to_string(req->value) + " streams: some are not running");
      }
      all.resize(static_cast<std::size_t>(drop));
      return shrink(here, req, std::move(all));
    }
  }
}

}  // namespace

void help_events() noexcept {
  runtime_state* r = g_runtime;
  if (!r) return;
  std::unique_lock lock(r->events_mutex, std::try_to_lock);
  if (!lock) return;
  if (r->event_in_progress && g_flight.req && !g_flight.claimed) advance_shrink(*r, lock);
}

bool in_event_callback() noexcept {
  return t_callbacks_running > 0;
}

void handle_events(stream& here) noexcept {
  runtime_state& r = rt();
  std::shared_ptr<resize_state> req;
  {
    std::unique_lock lock(r.events_mutex, std::try_to_lock);
    if (!lock) return;  // another stream is at it
    if (r.event_in_progress) {
      // A shrink waiting for its targets to end: anyone may take it a step further. Otherwise
      // the stream that started the request is still at it, and will set the flag as needed.
      if (!g_flight.req) {
        r.events_pending.store(false, std::memory_order_relaxed);
      } else if (!g_flight.claimed) {
        advance_shrink(r, lock);
      }
      return;
    }
    if (r.events.empty()) {
      r.events_pending.store(false, std::memory_order_relaxed);
      return;
    }
    req = std::move(r.events.front());
    r.events.pop_front();
    assert_invariant([] { return !g_flight.req && g_flight.stopping.empty(); },
                     "events: a request starts only once the previous one has ended");
    r.event_in_progress = true;
    r.events_pending.store(false, std::memory_order_relaxed);
  }
  try {
    start(here, req);
  } catch (const std::exception& e) {
    finish_event(req, false, e.what());
  } catch (...) {
    finish_event(req, false, "unknown error");
  }
}

void close_events() noexcept {
  runtime_state& r = rt();
  // Nothing here allocates: finalize must close the events even out of memory.
  std::shared_ptr<resize_state> req;
  std::vector<stream*> stopping;
  std::string failure;
  std::unique_lock lock(r.events_mutex);
  r.events_closed = true;
  // A request being started elsewhere finishes its start first (it never blocks), and a stream
  // freeing shrink targets finishes that; we are the primary ULT, so yielding lets them run.
  while (r.event_in_progress && (!g_flight.req || g_flight.claimed)) {
    lock.unlock();
    this_unit::yield();
    lock.lock();
  }
  if (r.event_in_progress) {
    // A shrink in flight: finish it here (the targets were told to stop, so they end).
    req = std::move(g_flight.req);
    stopping = std::move(g_flight.stopping);
    failure = std::move(g_flight.failure);
    end_event_locked(r);
  }
  g_flight = in_flight{};
  r.events_pending.store(false, std::memory_order_relaxed);
  lock.unlock();
  for (stream* t : stopping) {
    try {
      static_cast<execution_stream*>(t)->free();
    } catch (const std::exception& e) {
      note_free_failure(failure, t, e.what());
    }
  }
  if (req) answer(req, failure.empty(), failure);
  // Queued requests: closed, so nobody adds any; answered one at a time outside the lock.
  for (;;) {
    lock.lock();
    if (r.events.empty()) break;
    std::shared_ptr<resize_state> s = std::move(r.events.front());
    r.events.pop_front();
    lock.unlock();
    answer(s, false, "the runtime is finalizing");
  }
}

resize_request post_resize(resize_op op, int value) {
  runtime_state& r = rt();
  auto s = std::make_shared<resize_state>();
  s->op = op;
  s->value = value;
  bool queued = false;
  {
    std::lock_guard lock(r.events_mutex);
    if (!r.events_closed) {
      r.events.push_back(s);
      if (!r.event_in_progress) r.events_pending.store(true, std::memory_order_release);
      queued = true;
    }
  }
  if (queued) {
    // Some stream must notice. Not only the primary: its thread may be blocked in a system call
    // (a join, a read) for as long as it likes, so every parked stream is woken.
    wake_all_streams(r);
    return resize_request(s);
  }
  answer(s, false, "the runtime is finalizing");
  return resize_request(s);
}

}  // namespace detail

callback_id add_event_callback(event_kind kind, event_callbacks callbacks) {
  detail::refuse_in_callback("add_event_callback");
  detail::runtime_state& r = detail::rt();
  std::lock_guard lock(r.callbacks_mutex);
  const callback_id id = r.next_callback++;
  r.callbacks.emplace(id, detail::event_entry{kind, std::move(callbacks)});
  return id;
}

void remove_event_callback(callback_id id) {
  detail::refuse_in_callback("remove_event_callback");
  detail::runtime_state& r = detail::rt();
  std::lock_guard lock(r.callbacks_mutex);
  if (r.callbacks.erase(id) == 0) {
    throw error(errc::invalid_state,
                "weft: remove_event_callback: no callback registered as " + std::to_string(id));
  }
}

void event_registration::reset() noexcept {
  if (id_ == 0) return;
  if (initialized()) {
    try {
      remove_event_callback(id_);
    } catch (...) {
    }
  }
  id_ = 0;
}

resize_result resize_request::wait() const {
  if (!s_) throw error(errc::invalid_state, "weft: waiting on an empty resize_request");
  if (!detail::current_stream()) {
    // A kernel thread outside every stream: while it waits, it frees the targets of a shrink in
    // flight that have ended, so that a shrink completes even when every surviving stream is
    // busy or blocked (a primary thread in a system call, when it is the only survivor).
    while (!wait_for(std::chrono::milliseconds(10))) detail::help_events();
  }
  s_->lock.lock();
  if (!s_->done) {
    waiter w;
    w.kind = wait_kind::resize;
    try {
      s_->waiters.wait(s_->lock, w);
    } catch (...) {
      s_->lock.unlock();  // a tasklet: wait() throws with the lock still held
      throw;
    }
    s_->lock.lock();
  }
  resize_result r = s_->result;
  s_->lock.unlock();
  return r;
}

bool resize_request::wait_for(std::chrono::nanoseconds timeout) const {
  if (!s_) throw error(errc::invalid_state, "weft: waiting on an empty resize_request");
  s_->lock.lock();
  if (s_->done) {
    s_->lock.unlock();
    return true;
  }
  waiter w;
  w.kind = wait_kind::resize;
  try {
    s_->waiters.wait_for(s_->lock, w, timeout);
  } catch (...) {
    s_->lock.unlock();  // a tasklet: wait_for() throws with the lock still held
    throw;
  }
  return ready();
}

bool resize_request::ready() const noexcept {
  if (!s_) return false;
  detail::lock_guard lock(s_->lock);
  return s_->done;
}

namespace {
void check_count(int n, const char* what) {
  if (n < 1 || n > rm::max_count) {
    throw error(errc::invalid_config, std::string("weft: ") + what + ": " + std::to_string(n) +
                                          " is out of range [1, " + std::to_string(rm::max_count) +
                                          "]");
  }
}
}  // namespace

resize_request request_shrink(int n) {
  check_count(n, "request_shrink");
  return detail::post_resize(detail::resize_op::shrink, n);
}

resize_request request_stop_stream(int rank) {
  if (rank < 0 || rank > rm::max_count) {
    throw error(errc::invalid_config, "weft: request_stop_stream: rank " + std::to_string(rank) +
                                          " is out of range [0, " + std::to_string(rm::max_count) +
                                          "]");
  }
  return detail::post_resize(detail::resize_op::stop_rank, rank);
}

resize_request request_expand(int n) {
  check_count(n, "request_expand");
  return detail::post_resize(detail::resize_op::expand, n);
}

resize_request request_stream_count(int n) {
  check_count(n, "request_stream_count");
  return detail::post_resize(detail::resize_op::set_count, n);
}

}  // namespace weft
