// SPDX-License-Identifier: Apache-2.0
// Shrink/expand events: the runtime's side (events.cpp).
#pragma once

#include <string>

#include "weft/detail/thread_annotations.hpp"
#include "weft/events.hpp"
#include "weft/spinlock.hpp"
#include "weft/wait_queue.hpp"

namespace weft::detail {

class stream;

/// What a request asks, in terms of the target count or ranks.
enum class resize_op { shrink, stop_rank, expand, set_count };

/// The shared state of a resize_request.
struct resize_state {
  resize_op op;
  int value;
  spinlock lock;
  wait_queue waiters;
  bool done WEFT_GUARDED_BY(lock) = false;
  resize_result result WEFT_GUARDED_BY(lock);
};

/// Called by check_events() of a main scheduler when events are pending: takes the next request,
/// if no other is in progress, and starts handling it on stream `here`.
void handle_events(stream& here) noexcept;
/// finalize(): answers queued requests with an error and refuses new ones.
void close_events() noexcept;
/// For kernel threads outside the streams that wait for a request: takes a shrink in flight a
/// step further (frees the targets that have ended, answers when none is left), as a stream's
/// check_events() would. Never blocks on the events lock.
void help_events() noexcept;
/// True on a thread that is running an event callback (ask or act): blocking there would stall the
/// stream that handles the event, and (de)registering would deadlock on the callback lock.
bool in_event_callback() noexcept;
/// Queues a request (also used by the resource-manager connection).
resize_request post_resize(resize_op op, int value);

}  // namespace weft::detail
