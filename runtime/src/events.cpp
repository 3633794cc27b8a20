// Shrink/expand events: callbacks, the request queue, and the handling steps (see events.hpp).
#include "events.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <mutex>
#include <vector>

#include "runtime_state.hpp"
#include "stream.hpp"
#include "weft/error.hpp"
#include "weft/rm_protocol.hpp"
#include "weft/runtime.hpp"
#include "weft/ult.hpp"

namespace weft {

namespace detail {

namespace {

int live_streams() {
  return execution_stream::count();
}

void answer(const std::shared_ptr<resize_state>& s, bool ok, std::string message) {
  std::vector<wakeup> wake;
  s->lock.lock();
  s->result.ok = ok;
  s->result.streams = initialized() ? live_streams() : 0;
  s->result.message = std::move(message);
  s->done = true;
  while (wakeup w = s->waiters.take()) wake.push_back(w);
  s->lock.unlock();
  for (auto& w : wake) w();
}

/// Ends the request in progress and lets the next one be picked up.
void finish_event(const std::shared_ptr<resize_state>& s, bool ok, std::string message) {
  answer(s, ok, std::move(message));
  runtime_state& r = rt();
  std::lock_guard lock(r.events_mutex);
  r.event_in_progress = false;
  if (!r.events.empty()) {
    r.events_pending.store(true, std::memory_order_release);
    if (r.primary) r.primary->unpark();
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

void shrink(stream& here, const std::shared_ptr<resize_state>& req, std::vector<stream*> targets) {
  // (2) ask, all targets first: one veto fails the request and changes nothing.
  for (stream* t : targets) {
    std::string why = ask_all(event_kind::stop_stream, t->rank_);
    if (!why.empty()) return finish_event(req, false, why);
  }
  // (3) mark, (4) notify.
  for (stream* t : targets) {
    t->state_.store(static_cast<std::uint32_t>(stream_state::terminating),
                    std::memory_order_release);
    t->request(request_stop);
  }
  for (stream* t : targets) act_all(event_kind::stop_stream, t->rank_);
  // (5) a helper ULT (6) waits for each target to end, (7) frees it and answers. It runs on the
  // stream handling the event, which is alive by definition, unless that stream is itself
  // stopping; then on the primary, which never stops (003 always uses the primary: a primary
  // thread blocked in a system call would then hold every shrink up).
  const bool here_stops = std::find(targets.begin(), targets.end(), &here) != targets.end();
  execution_stream& helper_home = here_stops ? *rt().primary : here;
  try {
    ult::create_on(helper_home, [req, targets] {
      for (stream* t : targets) {
        t->wait_terminated();
        static_cast<execution_stream*>(t)->free();
      }
      finish_event(req, true, {});
    }).detach();
  } catch (const std::exception& e) {
    // No ULT for step 5: the targets still stop (they were told to); answer the failure.
    finish_event(req, false, std::string("cannot create the helper ULT: ") + e.what());
  }
}

void expand(stream& here, const std::shared_ptr<resize_state>& req, int n) {
  const std::vector<int> ranks = next_ranks(n);
  for (int rank : ranks) {
    std::string why = ask_all(event_kind::add_stream, rank);
    if (!why.empty()) return finish_event(req, false, why);
  }
  try {
    ult::create_on(here, [req, n] {
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
        failure = "created " + std::to_string(made) + " of " + std::to_string(n) +
                  " streams: " + e.what();
      }
      finish_event(req, failure.empty(), failure);
    }).detach();
  } catch (const std::exception& e) {
    finish_event(req, false, std::string("cannot create the helper ULT: ") + e.what());
  }
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
      return expand(here, req, req->value);
    case resize_op::set_count: {
      if (req->value == count) return finish_event(req, true, {});
      if (req->value > count) return expand(here, req, req->value - count);
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

void handle_events(stream& here) noexcept {
  runtime_state& r = rt();
  std::shared_ptr<resize_state> req;
  {
    std::unique_lock lock(r.events_mutex, std::try_to_lock);
    if (!lock) return;  // another stream is picking one up
    if (r.event_in_progress || r.events.empty()) {
      r.events_pending.store(false, std::memory_order_relaxed);
      return;
    }
    req = std::move(r.events.front());
    r.events.pop_front();
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
  std::deque<std::shared_ptr<resize_state>> left;
  {
    std::lock_guard lock(r.events_mutex);
    r.events_closed = true;
    left.swap(r.events);
    r.events_pending.store(false, std::memory_order_relaxed);
  }
  for (auto& s : left) answer(s, false, "the runtime is finalizing");
}

resize_request post_resize(resize_op op, int value) {
  runtime_state& r = rt();
  auto s = std::make_shared<resize_state>();
  s->op = op;
  s->value = value;
  {
    std::lock_guard lock(r.events_mutex);
    if (!r.events_closed) {
      r.events.push_back(s);
      if (!r.event_in_progress) r.events_pending.store(true, std::memory_order_release);
      // Some stream must notice: the primary never stops, so wake it if it sleeps.
      if (r.primary) r.primary->unpark();
      return resize_request(s);
    }
  }
  answer(s, false, "the runtime is finalizing");
  return resize_request(s);
}

}  // namespace detail

callback_id add_event_callback(event_kind kind, event_callbacks callbacks) {
  detail::runtime_state& r = detail::rt();
  std::lock_guard lock(r.callbacks_mutex);
  const callback_id id = r.next_callback++;
  r.callbacks.emplace(id, detail::event_entry{kind, std::move(callbacks)});
  return id;
}

void remove_event_callback(callback_id id) {
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
  s_->lock.lock();
  if (!s_->done) {
    waiter w;
    s_->waiters.wait(s_->lock, w);
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
  s_->waiters.wait_for(s_->lock, w, timeout);
  return ready();
}

bool resize_request::ready() const noexcept {
  if (!s_) return false;
  std::lock_guard lock(s_->lock);
  return s_->done;
}

namespace {
void check_count(int n, const char* what) {
  if (n < 1 || n > rm::max_count) {
    throw error(errc::invalid_state, std::string("weft: ") + what + ": " + std::to_string(n) +
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
  if (rank < 0) throw error(errc::invalid_state, "weft: request_stop_stream: negative rank");
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
