// SPDX-License-Identifier: Apache-2.0
// The block of rarely needed per-unit state (see unit_extras.hpp).
#include "core/unit_extras.hpp"

#include <cstdio>
#include <cstdlib>
#include <new>

#include "core/unit_local.hpp"

namespace weft::detail {

unit_extras& ensure_extras(work_unit* u) {
  if (!as_unit(u)->extras) as_unit(u)->extras = new unit_extras;
  return *extras_of(u);
}

void capture_error(work_unit* u) noexcept {
  if (!as_unit(u)->extras) as_unit(u)->extras = new (std::nothrow) unit_extras;
  if (!as_unit(u)->extras) {
    std::fprintf(stderr,
                 "weft: out of memory recording the exception that escaped unit %llu; aborting\n",
                 static_cast<unsigned long long>(as_unit(u)->id));
    std::abort();
  }
  extras_of(u)->error = std::current_exception();
}

void settle_extras(work_unit* u) noexcept {
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
  std::exception_ptr e = std::move(x->error);
  run_local_destructors(*x);
  delete x;
  as_unit(u)->extras = nullptr;
  return e;
}

}  // namespace weft::detail
