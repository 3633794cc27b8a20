// ABT_thread_*: work units created by the ABT layer.
#include "abt_internal.hpp"
#include "state.hpp"

namespace abt {

void invoke_entry(weft::work_unit* u) {
  thread_ext* e = ext_of(u);
  // A unit cancelled before it started terminates without running (Argobots' cancellation).
  if (e->flags.fetch_or(flag_started, std::memory_order_acq_rel) & flag_cancel) return;
  u->entry_fn(u->entry_arg);
}

}  // namespace abt
