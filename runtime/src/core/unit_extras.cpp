// SPDX-License-Identifier: Apache-2.0
// The block of rarely needed per-unit state (see unit_extras.hpp).
#include "core/unit_extras.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "core/unit_local.hpp"
#include "platform/assert.hpp"
#include "weft/error.hpp"

namespace weft::detail {

namespace {

/// The block of every unit whose error could not get a block of its own: memory ran out, as when
/// many units cannot get their stacks under an address-space limit. Shared, and never freed or
/// written after load: it holds an error made while memory was there, and no locals.
unit_extras* const out_of_memory_extras = [] {
  auto* x = new unit_extras;
  x->error = std::make_exception_ptr(
      error(errc::resource,
            "weft: out of memory (the exception that escaped the unit could not be recorded: "
            "memory or the address space (ulimit -v) is exhausted)"));
  return x;
}();

/// What throw_resource() throws when it cannot build its own error: made while memory was there.
const std::exception_ptr out_of_memory_error =
    std::make_exception_ptr(error(errc::resource,
                                  "weft: out of memory (memory or the address space (ulimit -v) is "
                                  "exhausted; the error's own message could not be built)"));

}  // namespace

void throw_resource(const char* what, int errnum) {
  try {
    if (errnum == 0) throw error(errc::resource, what);
    throw error(errc::resource, std::string(what) + ": " + std::strerror(errnum));
  } catch (const std::bad_alloc&) {
    std::rethrow_exception(out_of_memory_error);
  }
}

unit_extras& ensure_extras(work_unit* u) {
  if (!as_unit(u)->extras) {
    as_unit(u)->extras = new unit_extras;
  } else if (extras_of(u) == out_of_memory_extras) {
    auto* x = new unit_extras;
    x->error = out_of_memory_extras->error;
    as_unit(u)->extras = x;
  }
  assert_invariant([u] { return extras_of(u) != out_of_memory_extras; },
                   "unit extras: the shared out-of-memory block is never handed out for writing");
  return *extras_of(u);
}

void capture_error(work_unit* u) noexcept {
  if (!as_unit(u)->extras) as_unit(u)->extras = new (std::nothrow) unit_extras;
  if (!as_unit(u)->extras) {
    // The join still reports an error: a generic one, since this one could not be kept.
    as_unit(u)->extras = out_of_memory_extras;
    return;
  }
  assert_invariant(
      [u] { return extras_of(u) != out_of_memory_extras; },
      "unit extras: one error per unit (the shared block is never written after load)");
  extras_of(u)->error = std::current_exception();
}

void settle_extras(work_unit* u) noexcept {
  assert_invariant([u] { return as_unit(u)->callable.destroy == nullptr; },
                   "unit extras: settled once the unit's callable is gone");
  unit_extras* x = extras_of(u);
  if (!x) return;
  run_local_destructors(*x);
  if (x->error) return;
  delete x;
  as_unit(u)->extras = nullptr;
}

std::exception_ptr take_error(work_unit* u) noexcept {
  unit_extras* x = extras_of(u);
  if (!x) return nullptr;
  if (x == out_of_memory_extras) {
    as_unit(u)->extras = nullptr;
    return x->error;
  }
  std::exception_ptr e = std::move(x->error);
  run_local_destructors(*x);
  delete x;
  as_unit(u)->extras = nullptr;
  return e;
}

}  // namespace weft::detail
