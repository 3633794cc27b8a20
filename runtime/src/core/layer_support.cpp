// SPDX-License-Identifier: Apache-2.0
// The descriptor changes a layer built on weft makes (weft/internal/layer_support.hpp), kept in
// the runtime so that the layer reads descriptors only (weft/internal/unit_view.hpp). None is on a
// path where a call's cost shows: the hot ones (a create, a free) stay in unit.cpp.
#include <atomic>

#include "platform/assert.hpp"
#include "weft/internal/layer_support.hpp"
#include "weft/this_unit.hpp"
#include "weft/unit_handle.hpp"

namespace weft::detail {

void set_home(work_unit* u, pool& p) noexcept {
  as_unit(u)->home.store(&p, std::memory_order_relaxed);
}

void pin_unit(work_unit* u, execution_stream& s) noexcept {
  assert_invariant(
      [u] {
        return u->pool_holder.load(std::memory_order_relaxed) == nullptr &&
               as_unit(u)->last_stream.load(std::memory_order_relaxed) == nullptr;
      },
      "a unit is pinned before it is submitted: in no pool, never run");
  as_unit(u)->pinned_to.store(&s, std::memory_order_relaxed);
}

work_unit* allocate_stand_in() {
  work_unit* const u = allocate_unit(unit_kind::ult, 0);
  as_unit(u)->state.store(unit_state::running, std::memory_order_relaxed);
  as_unit(u)->last_stream.store(this_unit::stream(), std::memory_order_relaxed);
  return u;
}

}  // namespace weft::detail
