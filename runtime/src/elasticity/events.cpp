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
#include "elasticity/event_queue.hpp"
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
    failure += "freeing stream " + std::to_string(t->rank()) + ": " + what + "; ";
  } catch (...) {
    failure = "out of memory";
  }
}

/// Ends the request in progress with the given outcome.
void finish_event(const std::shared_ptr<resize_state>& s, bool ok, std::string_view message) {
  rt().events().finish(s, ok, message);
}

/// Callbacks running on this thread (they may not nest, but a guard counts to be safe).
thread_local int t_callbacks_running = 0;

/// Marks the calling thread as running an event callback for its lifetime.
class in_callback {
 public:
  in_callback() noexcept { ++t_callbacks_running; }
  ~in_callback() {
    assert_invariant([] { return t_callbacks_running > 0; },
                     "events: a callback mark is taken back once");
    --t_callbacks_running;
  }
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
  std::string why;
  rt().event_callbacks().for_each([&](callback_id id, event_kind k, event_callbacks& c) {
    if (k != kind || !c.ask) return true;
    bool agreed = false;
    try {
      in_callback mark;
      agreed = c.ask(kind, rank);
    } catch (...) {
      agreed = false;
    }
    if (agreed) return true;
    why = std::string(kind == event_kind::stop_stream ? "stopping" : "adding") + " stream " +
          std::to_string(rank) + " vetoed by callback " + std::to_string(id);
    return false;
  });
  return why;
}

void act_all(event_kind kind, int rank) {
  rt().event_callbacks().for_each([&](callback_id id, event_kind k, event_callbacks& c) {
    if (k != kind || !c.act) return true;
    try {
      in_callback mark;
      c.act(kind, rank);
    } catch (const std::exception& ex) {
      std::fprintf(stderr, "weft: event callback %llu threw: %s\n",
                   static_cast<unsigned long long>(id), ex.what());
    } catch (...) {
      std::fprintf(stderr, "weft: event callback %llu threw\n",
                   static_cast<unsigned long long>(id));
    }
    return true;
  });
}

/// Running secondary streams, highest rank first.
std::vector<stream*> stoppable() {
  std::vector<stream*> out;
  rt().streams().for_each([&out](stream& s) {
    if (!s.is_primary() && s.state() == stream_state::running) out.push_back(&s);
  });
  std::sort(out.begin(), out.end(), [](stream* a, stream* b) { return a->rank() > b->rank(); });
  return out;
}

/// Wakes every running stream, so that whichever is free picks a request up.
void wake_all_streams() {
  rt().streams().for_each([](stream& s) {
    if (s.state() == stream_state::running) s.unpark();
  });
}

/// Wakes a running stream other than the targets, so that one that is awake checks its events
/// soon (the primary first: it never stops).
void wake_one_survivor(const std::vector<stream*>& targets) {
  bool woken = false;
  rt().streams().for_each([&](stream& s) {
    if (woken || s.state() != stream_state::running) return;
    if (std::find(targets.begin(), targets.end(), &s) != targets.end()) return;
    s.unpark();
    woken = true;
  });
}

void shrink(stream& here, const std::shared_ptr<resize_state>& req, std::vector<stream*> targets) {
  // (2) ask, all targets first: one veto fails the request and changes nothing.
  for (stream* t : targets) {
    std::string why = ask_all(event_kind::stop_stream, t->rank());
    if (!why.empty()) return finish_event(req, false, why);
  }
  // (3) mark, (4) notify.
  obs::resized(&here, true, targets.size());
  for (stream* t : targets) t->begin_stop();
  for (stream* t : targets) act_all(event_kind::stop_stream, t->rank());
  // (5)-(7) without a helper ULT: a ULT would queue behind every unit in its stream's pool (and
  // go back behind them at each poll), tens of milliseconds under load. Instead the request stays
  // pending, so every main scheduler's check_events() looks at it and the first to see a target
  // ended frees it; the last free answers. Any surviving stream can finish the job, so neither
  // a busy handling stream nor a primary blocked in a system call holds the shrink up.
  // The handling stream checks again at its next check_events(), unless it is stopping itself:
  // then wake a survivor (a parked one would otherwise wait for its park limit).
  if (std::find(targets.begin(), targets.end(), &here) != targets.end()) wake_one_survivor(targets);
  rt().events().fly_shrink(req, std::move(targets));
}

/// The five steps of an expand, all in the scheduler context of the handling stream: creating a
/// stream costs a pthread_create (the new thread binds itself), so no helper ULT is needed to
/// keep the stream responsive, and one would wait behind every unit queued on it.
void expand(const std::shared_ptr<resize_state>& req, int n) {
  const std::vector<int> ranks = rt().streams().free_ranks(n);
  assert_invariant([&ranks, n] { return n > 0 && ranks.size() == static_cast<std::size_t>(n); },
                   "events: an expand asks about each of the streams it adds");
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
        if (s->rank() == req->value) return shrink(here, req, {s});
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
  if (runtime_state* r = g_runtime) r->events().help();
}

bool in_event_callback() noexcept {
  return t_callbacks_running > 0;
}

void handle_events(stream& here) noexcept {
  rt().events().handle(here);
}

void close_events() noexcept {
  rt().events().close();
}

resize_request post_resize(resize_op op, int value) {
  // Validated by the request_* functions and by rm::parse_command: `start` relies on the range.
  assert_invariant(
      [op, value] {
        return value >= (op == resize_op::stop_rank ? 0 : 1) && value <= rm::max_count;
      },
      "events: a resize request carries a count in [1, max_count] or a rank in [0, max_count]");
  auto s = std::make_shared<resize_state>();
  s->op = op;
  s->value = value;
  if (rt().events().post(s)) {
    // Some stream must notice. Not only the primary: its thread may be blocked in a system call
    // (a join, a read) for as long as it likes, so every parked stream is woken.
    wake_all_streams();
    return resize_request(s);
  }
  answer(s, false, "the runtime is finalizing");
  return resize_request(s);
}

// --- callback_registry ---

callback_id callback_registry::add(event_kind kind, event_callbacks callbacks) {
  std::lock_guard lock(mutex_);
  const callback_id id = next_++;
  const bool fresh = entries_.emplace(id, entry{kind, std::move(callbacks)}).second;
  assert_invariant([fresh] { return fresh; }, "events: callback ids are never reused");
  return id;
}

bool callback_registry::remove(callback_id id) {
  std::lock_guard lock(mutex_);
  return entries_.erase(id) != 0;
}

// --- event_queue ---

void event_queue::end_locked() noexcept {
  assert_invariant([this] { return in_progress_; },
                   "events: only the request in progress is ended");
  assert_invariant([this] { return !flight_.claimed; },
                   "events: a request ends only once no stream frees its shrink's targets");
  flight_.req.reset();
  flight_.stopping.clear();
  flight_.failure.clear();
  in_progress_ = false;
  // Pending again only when another request is queued; then some stream must notice it.
  pending_.store(!queue_.empty(), std::memory_order_release);
  if (!queue_.empty() && rt().primary()) rt().primary()->unpark();
}

void event_queue::finish(const std::shared_ptr<resize_state>& s, bool ok,
                         std::string_view message) {
  answer(s, ok, message);
  std::lock_guard lock(mutex_);
  end_locked();
}

void event_queue::fly_shrink(const std::shared_ptr<resize_state>& req,
                             std::vector<stream*> targets) {
  std::lock_guard lock(mutex_);
  assert_invariant(
      [this] { return in_progress_ && !flight_.req && !flight_.claimed; },
      "events: one shrink in flight at a time, registered by the stream that started it");
  assert_invariant(
      [&targets] {
        return !targets.empty() && std::none_of(targets.begin(), targets.end(),
                                                [](const stream* t) { return t->is_primary(); });
      },
      "events: a shrink stops secondary streams only, at least one");
  flight_.req = req;
  flight_.stopping = std::move(targets);
  pending_.store(true, std::memory_order_release);
}

/// Steps 6 and 7 of a shrink in flight, from any main scheduler's check_events(): frees every
/// target whose thread has ended (a join that returns at once) and answers once none is left.
/// Called with `lock` held on mutex_; releases it while joining and freeing.
void event_queue::advance_shrink(std::unique_lock<std::mutex>& lock) noexcept {
  assert_invariant([&] { return lock.owns_lock() && !flight_.claimed && in_progress_; },
                   "events: one stream at a time frees the targets of a shrink in flight");
  // One ended target at a time, taken off the list under the lock: nothing to allocate (this
  // runs in a scheduler's event check, which must not fail out of memory).
  auto& stopping = flight_.stopping;
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
  flight_.claimed = true;
  std::string failure;
  for (; t; t = take_ended()) {
    assert_invariant([t] { return t != current_stream_no_switch(); },
                     "events: a shrink's target is freed by another stream");
    lock.unlock();
    try {
      static_cast<execution_stream*>(t)->free();
    } catch (const std::exception& e) {
      note_free_failure(failure, t, e.what());
    }
    lock.lock();
    assert_invariant([this] { return flight_.claimed && in_progress_; },
                     "events: a shrink's claim holds while its targets are freed outside the lock");
  }
  flight_.claimed = false;
  if (!failure.empty()) {
    try {
      flight_.failure += failure;
    } catch (...) {
      flight_.failure = "out of memory";  // fits the inline buffer: the request still fails
    }
  }
  if (!flight_.stopping.empty() || !flight_.req) return;
  // Answered under the lock, before the next request can start, so that the count it reports
  // is this request's outcome.
  answer(flight_.req, flight_.failure.empty(), flight_.failure);
  end_locked();
}

void event_queue::handle(stream& here) noexcept {
  assert_invariant([&here] { return current_stream_no_switch() == &here; },
                   "events: a stream handles requests from its own event check");
  std::shared_ptr<resize_state> req;
  {
    std::unique_lock lock(mutex_, std::try_to_lock);
    if (!lock) return;  // another stream is at it
    if (in_progress_) {
      // A shrink waiting for its targets to end: anyone may take it a step further. Otherwise
      // the stream that started the request is still at it, and will set the flag as needed.
      if (!flight_.req) {
        pending_.store(false, std::memory_order_relaxed);
      } else if (!flight_.claimed) {
        advance_shrink(lock);
      }
      return;
    }
    if (queue_.empty()) {
      pending_.store(false, std::memory_order_relaxed);
      return;
    }
    req = std::move(queue_.front());
    queue_.pop_front();
    assert_invariant([&req] { return req != nullptr; }, "events: a queued request has its state");
    assert_invariant([this] { return !flight_.req && flight_.stopping.empty(); },
                     "events: a request starts only once the previous one has ended");
    in_progress_ = true;
    pending_.store(false, std::memory_order_relaxed);
  }
  try {
    start(here, req);
  } catch (const std::exception& e) {
    finish(req, false, e.what());
  } catch (...) {
    finish(req, false, "unknown error");
  }
}

void event_queue::close() noexcept {
  // Nothing here allocates: finalize must close the events even out of memory.
  std::shared_ptr<resize_state> req;
  std::vector<stream*> stopping;
  std::string failure;
  std::unique_lock lock(mutex_);
  closed_ = true;
  // A request being started elsewhere finishes its start first (it never blocks), and a stream
  // freeing shrink targets finishes that; we are the primary ULT, so yielding lets them run.
  while (in_progress_ && (!flight_.req || flight_.claimed)) {
    lock.unlock();
    this_unit::yield();
    lock.lock();
  }
  if (in_progress_) {
    // A shrink in flight: finish it here (the targets were told to stop, so they end).
    req = std::move(flight_.req);
    stopping = std::move(flight_.stopping);
    failure = std::move(flight_.failure);
    end_locked();
  }
  assert_invariant([this] { return !in_progress_; },
                   "events: finalize closes the queue with no request in flight");
  flight_ = in_flight{};
  pending_.store(false, std::memory_order_relaxed);
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
    if (queue_.empty()) break;
    std::shared_ptr<resize_state> s = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    answer(s, false, "the runtime is finalizing");
  }
}

void event_queue::help() noexcept {
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock) return;
  if (in_progress_ && flight_.req && !flight_.claimed) advance_shrink(lock);
}

bool event_queue::post(const std::shared_ptr<resize_state>& s) {
  assert_invariant([&s] { return s != nullptr; }, "events: a request is posted with its state");
  std::lock_guard lock(mutex_);
  if (closed_) return false;
  queue_.push_back(s);
  if (!in_progress_) pending_.store(true, std::memory_order_release);
  return true;
}

}  // namespace detail

callback_id add_event_callback(event_kind kind, event_callbacks callbacks) {
  detail::refuse_in_callback("add_event_callback");
  return detail::rt().event_callbacks().add(kind, std::move(callbacks));
}

void remove_event_callback(callback_id id) {
  detail::refuse_in_callback("remove_event_callback");
  if (!detail::rt().event_callbacks().remove(id)) {
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
