// SPDX-License-Identifier: Apache-2.0
// The state of shrink/expand events: the registered callbacks, the queue of requests and the one
// in progress. The steps that act on it are in events.cpp.
#pragma once

#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "weft/events.hpp"

namespace weft::detail {

class stream;
struct resize_state;

/// The event callbacks registered with add_event_callback(). Any thread; for_each() holds the
/// registry's lock while the callbacks run, so a removal waits until no callback of it runs.
class callback_registry {
 public:
  /// Registers `callbacks` for `kind`; returns its id (ids start at 1 and are never reused).
  callback_id add(event_kind kind, event_callbacks callbacks);
  /// Removes the callbacks of `id`; false when none are registered under it.
  bool remove(callback_id id);
  /// Calls `f(id, kind, callbacks)` for each registration in id order, under the lock; stops
  /// early when `f` returns false.
  template <class F>
  void for_each(F&& f) {
    std::lock_guard lock(mutex_);
    for (auto& [id, e] : entries_)
      if (!f(id, e.kind, e.callbacks)) return;
  }

 private:
  struct entry {
    event_kind kind;
    event_callbacks callbacks;
  };
  std::mutex mutex_;
  std::map<callback_id, entry> entries_;
  callback_id next_ = 1;
};

/// The resize requests: queued by post() (any thread), started one at a time by the first main
/// scheduler whose event check calls handle(), and ended by finish(). A shrink stays in flight
/// after its start until its targets have ended: any main scheduler's check (or help()) frees
/// those, and the last free answers the request. close() at finalize ends everything.
///
/// One mutex guards the queue and the request in flight; it is never held while a stream is
/// joined or freed, nor while a callback runs.
class event_queue {
 public:
  /// True while a request waits to be started or a shrink waits for its targets: main
  /// schedulers then call handle() at their next check. Any thread; one relaxed load.
  bool pending() const noexcept { return pending_.load(std::memory_order_relaxed); }

  /// Queues `s`; false (nothing queued) once close() has run.
  bool post(const std::shared_ptr<resize_state>& s);
  /// From a main scheduler's event check on `here`: starts the next request (outside the lock),
  /// or takes a shrink in flight a step further. Returns at once if another stream is at it.
  void handle(stream& here) noexcept;
  /// Takes a shrink in flight a step further if nobody is at it (a stream blocked on a join).
  void help() noexcept;
  /// Answers `s` (the request in progress) with the outcome and lets the next one start.
  void finish(const std::shared_ptr<resize_state>& s, bool ok, std::string_view message);
  /// The started shrink `req` is in flight: `targets` were told to stop; they are freed as they
  /// end, and the last free answers `req`.
  void fly_shrink(const std::shared_ptr<resize_state>& req, std::vector<stream*> targets);
  /// finalize: no more requests; finishes a shrink in flight and answers every queued request
  /// with a refusal. Allocates nothing.
  void close() noexcept;

 private:
  /// The request being handled once it has been started, and a shrink's targets.
  struct in_flight {
    std::shared_ptr<resize_state> req;
    /// Shrink targets told to stop and not yet freed.
    std::vector<stream*> stopping;
    /// True while one stream works on `stopping` outside the lock (joins and frees streams).
    bool claimed = false;
    /// Why freeing a target failed, if it did (the request then fails).
    std::string failure;
  };

  /// Ends the request in progress; the caller holds mutex_.
  void end_locked() noexcept;
  /// Frees the ended targets of the shrink in flight (releasing `lock` while it does) and
  /// answers the request when none is left.
  void advance_shrink(std::unique_lock<std::mutex>& lock) noexcept;

  std::mutex mutex_;
  std::deque<std::shared_ptr<resize_state>> queue_;  // under mutex_
  in_flight flight_;                                 // under mutex_
  bool in_progress_ = false;                         // under mutex_
  bool closed_ = false;                              // under mutex_
  std::atomic<bool> pending_{false};
};

}  // namespace weft::detail
