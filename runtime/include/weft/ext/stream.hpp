// SPDX-License-Identifier: Apache-2.0
// The calling stream as a pool or scheduler sees it.
#pragma once

#include "weft/detail/current_stream.hpp"
#include "weft/execution_stream.hpp"

namespace weft::ext {

/// True when the calling thread is one of the runtime's execution streams, false on an external
/// thread. One thread-local load; never switches context.
inline bool on_stream() noexcept {
  return detail::tls_stream != nullptr;
}

/// The stream the calling thread runs on, or nullptr on an external thread
/// (execution_stream::self()). Pools compare streams with pool::caller_is_consumer() and
/// pool::caller_is_owner(), which stay inline.
inline execution_stream* current_stream() noexcept {
  return execution_stream::self();
}

/// The calling stream's rank, or -1 on an external thread.
inline int current_rank() noexcept {
  const execution_stream* s = execution_stream::self();
  return s ? s->rank() : -1;
}

/// Wakes `s` if it sleeps in a deep park (an idle stream's long sleep, which only a push into one
/// of its pools, a delivery or a request ends early): a policy that adds a pool its peers should
/// steal from calls it for each peer, so that they look at the new pool. Any thread; a few loads
/// when `s` is not deep-parked.
void wake_if_deep_parked(execution_stream& s) noexcept;

}  // namespace weft::ext
