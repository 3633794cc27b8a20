// SPDX-License-Identifier: Apache-2.0
// Calling contexts, the initialisation check and the exception-to-error-code mapping.
#include <new>

#include "abt_internal.hpp"
#include "state.hpp"
#include "weft/error.hpp"
#include "weft/runtime.hpp"
#include "weft/this_unit.hpp"

namespace abt {

layer_state& state() noexcept {
  static layer_state* s = new layer_state;  // never destroyed: handles may outlive static dtors
  return *s;
}

std::atomic<int> g_init_count{0};
std::atomic<weft::work_unit*> g_primary_unit{nullptr};
std::atomic<std::uint32_t> g_slow_paths{slow_uninitialized | slow_full_fence};

int current_exception_code(int fallback, int context_error) noexcept {
  try {
    throw;
  } catch (const weft::error& e) {
    switch (e.condition()) {
      case weft::errc::ok:
        return ABT_SUCCESS;
      case weft::errc::not_initialized:
        return ABT_ERR_UNINITIALIZED;
      case weft::errc::resource:
        return ABT_ERR_MEM;
      case weft::errc::unsupported:
        return ABT_ERR_FEATURE_NA;
      case weft::errc::invalid_config:
        return ABT_ERR_INV_ARG;
      case weft::errc::primary_stream:
        return ABT_ERR_INV_XSTREAM;
      case weft::errc::not_in_ult:
      case weft::errc::tasklet_cannot_block:
        return context_error;
      default:
        return fallback;
    }
  } catch (const std::bad_alloc&) {
    return ABT_ERR_MEM;
  } catch (...) {
    return fallback;
  }
}

context calling_context() noexcept {
  weft::work_unit* u = weft::this_unit::current();
  if (!u) return weft::this_unit::stream() ? context::scheduler : context::external;
  if (unit_view::kind(u) == weft::unit_kind::tasklet) return context::tasklet;
  return u == primary_unit() ? context::primary_ult : context::ult;
}

}  // namespace abt
