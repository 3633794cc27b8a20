// SPDX-License-Identifier: Apache-2.0
// Shrink/expand events: a resource manager (or the process itself) asks weft to run on fewer or
// more execution streams, and every runtime built on weft gets a say.
//
// Flow of a shrink (003's seven steps): a request is queued; (1) the next stream that checks its
// events picks it up; (2) it asks every registered `ask` callback whether each target stream may
// stop, and one veto fails the whole request; (3) it marks the targets to stop, so that their
// schedulers return at their next check; (4) it calls the `act` callbacks; (5)-(6) the request
// stays pending while the targets end, and every main scheduler's next check looks at it (003
// uses a helper ULT here; one would queue behind every unit of its stream, tens of milliseconds
// under load, and a primary thread blocked in a system call would hold the shrink up); (7) the
// first stream to see a target's thread ended frees it, and the last free answers the request.
// The primary stream never stops.
// A stopped stream's pools become orphaned: every remaining stream serves them (one unit at a
// time, under the orphan lock, so private pools stay single-consumer) until an expand takes them
// over. Nothing queued, blocked or sleeping is lost.
//
// Flow of an expand (five steps): picked up likewise; the `ask` callbacks are asked for each new
// rank; the handling stream's scheduler creates the streams itself (a pthread_create each: no
// helper ULT), placed by the affinity policy; the first new stream adopts the orphaned pools that
// hold units, the `act` callbacks are told, and the request is answered.
//
// Requests are handled one at a time, in arrival order.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace weft {

/// What an event does to the set of streams.
enum class event_kind {
  stop_stream,  ///< a stream is asked to stop (shrink)
  add_stream,   ///< a stream is to be added (expand)
};

/// One registrant's callbacks for one event kind. Both run in the scheduler context of the stream
/// that handles the event: they must not block, yield or throw (an exception counts as a veto from
/// `ask` and is reported from `act`). A wait on a weft primitive that would block there (a held
/// mutex, a sleep, ...) throws errc::invalid_state instead of stalling the stream, and so does
/// add_event_callback or remove_event_callback called from a callback.
struct event_callbacks {
  /// May stream `rank` stop now / may a stream of rank `rank` be added? Return false to veto.
  /// Empty: agrees.
  std::function<bool(event_kind, int rank)> ask;
  /// Stream `rank` is stopping (its scheduler returns at its next check) / was added and runs.
  std::function<void(event_kind, int rank)> act;
};

/// Identifies a registration.
using callback_id = std::uint64_t;

/// Registers callbacks for events of kind `kind` (Argobots' ABT_event_add_callback). Any thread,
/// after init, except inside an event callback (errc::invalid_state). Returns the id that
/// deregisters them.
callback_id add_event_callback(event_kind kind, event_callbacks callbacks);
/// Deregisters (ABT_event_del_callback). Throws errc::invalid_state for an unknown id or when
/// called inside an event callback. When it returns, the callbacks are not running and will not
/// run again.
void remove_event_callback(callback_id id);

/// RAII registration: deregisters on destruction.
class event_registration {
 public:
  event_registration() noexcept = default;
  event_registration(event_kind kind, event_callbacks callbacks)
      : id_(add_event_callback(kind, std::move(callbacks))) {}
  ~event_registration() { reset(); }
  event_registration(event_registration&& o) noexcept : id_(o.id_) { o.id_ = 0; }
  event_registration& operator=(event_registration&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = o.id_;
      o.id_ = 0;
    }
    return *this;
  }
  /// Deregisters now (no-op when empty).
  void reset() noexcept;
  /// The registration's id, 0 when empty.
  callback_id id() const noexcept { return id_; }

 private:
  callback_id id_ = 0;
};

/// How a request ended.
struct resize_result {
  bool ok = false;
  int streams = 0;      ///< live streams when it was answered
  std::string message;  ///< why it failed (empty on success)
};

namespace detail {
struct resize_state;
}

/// A queued shrink or expand. Copies share the request.
class resize_request {
 public:
  resize_request() noexcept = default;
  explicit resize_request(std::shared_ptr<detail::resize_state> s) noexcept : s_(std::move(s)) {}
  /// Blocks until answered (a ULT yields its stream meanwhile) and returns the outcome.
  resize_result wait() const;
  /// Waits at most `timeout`; false if not answered by then.
  bool wait_for(std::chrono::nanoseconds timeout) const;
  /// True once answered.
  bool ready() const noexcept;

 private:
  std::shared_ptr<detail::resize_state> s_;
};

/// Stops the `n` highest-ranked secondary streams.
resize_request request_shrink(int n);
/// Stops the stream of rank `rank` (never 0, the primary).
resize_request request_stop_stream(int rank);
/// Adds `n` streams.
resize_request request_expand(int n);
/// Shrinks or expands to `n` live streams (at least 1).
resize_request request_stream_count(int n);

}  // namespace weft
