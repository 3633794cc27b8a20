// SPDX-License-Identifier: Apache-2.0
// What few units need, kept out of the descriptor: the exception that escaped a unit and its
// ULT-local values. A fan-out of 10^6 units is bound by descriptor bytes, so these few bytes live
// in a block allocated on first need and hung on work_unit::extras.
#pragma once

#include <exception>

#include "weft/internal/unit.hpp"

namespace weft::detail {

struct local_table;  // unit_local.cpp

/// The block behind work_unit::extras. Invariant: once a unit has run its callable (run_callable
/// or a failed first run), u->extras != nullptr implies an exception escaped it or a value was set
/// for it from outside afterwards, so a join tests one pointer for the common case.
struct unit_extras {
  std::exception_ptr error;       // what escaped the unit, rethrown by join
  local_table* locals = nullptr;  // its ULT-local values (unit_local.cpp)
  const char* name = nullptr;     // the name it was given (interned: never freed), for traces
};

/// u's block, or nullptr if it has none.
inline unit_extras* extras_of(const work_unit* u) noexcept {
  return static_cast<unit_extras*>(as_unit(u)->extras);
}
/// u's block, allocated if it has none. Only the thread that runs u, or one that owns u's
/// handle while u cannot run (set_for on a unit that finished), may call it. Throws bad_alloc.
unit_extras& ensure_extras(work_unit* u);
/// True if an exception escaped u.
inline bool has_error(const work_unit* u) noexcept {
  const unit_extras* x = extras_of(u);
  return x && x->error;
}
/// Throws weft::error with errc::resource and the message `what` (followed by ": " and
/// strerror(errnum) when errnum != 0). When memory is too short to build that error (its message
/// lives on the heap), throws the generic out-of-memory error built at load time instead, so that
/// a failed mapping never becomes std::bad_alloc, or std::terminate, for want of a few bytes.
[[noreturn]] void throw_resource(const char* what, int errnum = 0);
/// Records the exception being handled as u's error (call in a catch block). If even the small
/// block cannot be allocated, u gets a shared one whose error (errc::resource) says so.
void capture_error(work_unit* u) noexcept;
/// Called once u's callable is gone: runs the destructors of u's local values and frees the block
/// unless it holds an error, which keeps it until the join.
void settle_extras(work_unit* u) noexcept;
/// Takes u's error out (empty if none) and frees the block (running any local destructors left).
std::exception_ptr take_error(work_unit* u) noexcept;

}  // namespace weft::detail
