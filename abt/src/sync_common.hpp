// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the synchronisation objects of the Argobots layer (abt/src/sync_*.cpp).
//
// Every sync object of abt.h is a plain struct behind its handle (ABT_mutex, ABT_cond, ...): the
// handle is the object's address, so ABT_MUTEX_MEMORY_GET_HANDLE & co. can turn statically
// initialised memory into a handle without a call. Objects made by a *_create call carry
// `heap_flag` so that *_free can refuse memory it did not allocate instead of corrupting the heap.
#pragma once

#include <time.h>

#include <chrono>
#include <cstdint>
#include <new>

#include "abt_internal.hpp"
#include "units.hpp"
#include "weft/detail/sync.hpp"

namespace weft::abt_sync {

/// Marks an object that a *_create call allocated (and *_free may release).
inline constexpr std::uint32_t heap_flag = 1u << 31;

/// The object behind a handle of a sync type. Static memory is never constructed as a C++ object:
/// every object type is valid when all its bytes are zero, which is what the C initialisers give.
template <class Obj, class Handle>
inline Obj* object_of(Handle h) noexcept {
  return std::launder(reinterpret_cast<Obj*>(h));
}

/// The handle of an object.
template <class Handle, class Obj>
inline Handle handle_of(Obj* o) noexcept {
  return reinterpret_cast<Handle>(o);
}

/// True when the caller is a tasklet: Argobots 1.x refuses the blocking calls of cond, rwlock,
/// eventual, future and barrier from tasklets (with the object's ABT_ERR_* code), even when they
/// would not block.
inline bool caller_is_tasklet() noexcept {
  return abt::calling_context() == abt::context::tasklet;
}

/// The Argobots code for the exception being handled (call only inside a catch block): memory
/// exhaustion is ABT_ERR_MEM (see abt::current_exception_code), a context error or anything
/// else `fallback`, the object's ABT_ERR_* code.
inline int current_exception_code(int fallback) noexcept {
  return abt::current_exception_code(fallback, fallback);
}

/// An absolute CLOCK_REALTIME deadline (Argobots' timed waits take one) as a steady_clock deadline,
/// converted now: later changes of the wall clock do not move it. A deadline in the past becomes
/// "now" (the wait is a non-blocking attempt); a huge one saturates instead of overflowing.
inline std::chrono::steady_clock::time_point steady_deadline(const struct timespec& abstime) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  long double remaining = (static_cast<long double>(abstime.tv_sec) - now.tv_sec) +
                          (static_cast<long double>(abstime.tv_nsec) - now.tv_nsec) * 1e-9L;
  if (remaining < 0) remaining = 0;
  return weft::detail::deadline_after(std::chrono::duration<long double>(remaining));
}

}  // namespace weft::abt_sync
