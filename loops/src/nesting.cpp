// SPDX-License-Identifier: Apache-2.0
// The per-unit nesting frame of the loop layer.
#include <weft/loops/nesting.hpp>
#include <weft/loops/worker_unit.hpp>

#include <weft/error.hpp>
#include <weft/execution_stream.hpp>
#include <weft/runtime.hpp>
#include <weft/this_unit.hpp>
#include <weft/unit_local.hpp>

#include <algorithm>
#include <string>

namespace weft::loops {
namespace {

const nesting_frame top_frame{};

// The key lives for the whole process: frames are borrowed pointers, nothing to destroy.
const local_key& frame_key() {
  static const local_key key = local_key::create();
  return key;
}

}  // namespace

namespace detail {

void worker_entry(void* arg) noexcept {
  auto* slot = static_cast<worker_slot*>(arg);
  team_work* team = slot->team;
  team->run(team->work, slot->w);
  team->done.worker_done();  // last touch of the team: the caller may return once all are done
}

worker_slot* current_worker() noexcept {
  // A unit's C entry point and argument are what unit_handle::function()/argument() report.
  const work_unit* u = this_unit::current();
  if (!u) return nullptr;
  const weft::detail::unit_callable& c = weft::detail::callable_of(u);
  return c.entry_fn == &worker_entry ? static_cast<worker_slot*>(c.entry_arg) : nullptr;
}

}  // namespace detail

// Units the layer created keep their frame in their worker_slot; everything else (the primary
// ULT, user ULTs, external threads) in ULT-local storage, whose table is allocated once per such
// unit or thread.
const nesting_frame& current_frame() noexcept {
  if (const detail::worker_slot* slot = detail::current_worker()) return *slot->frame;
  const void* p = frame_key().get();
  return p ? *static_cast<const nesting_frame*>(p) : top_frame;
}

frame_scope::frame_scope(const nesting_frame* f) : slot_(detail::current_worker()) {
  if (slot_) {
    saved_ = slot_->frame;
    slot_->frame = f;
    return;
  }
  saved_ = static_cast<const nesting_frame*>(frame_key().get());
  frame_key().set(const_cast<nesting_frame*>(f));
}

frame_scope::~frame_scope() {
  if (slot_) {
    slot_->frame = saved_;
    return;
  }
  frame_key().set(const_cast<nesting_frame*>(saved_));
}

int stream_count() noexcept {
  return std::max(1, execution_stream::count());
}

int default_team_width(const nesting_frame& outer) noexcept {
  return std::max(1, stream_count() / std::max(1, outer.active_width));
}

void require_blocking_caller(const char* what) {
  if (this_unit::is_tasklet() || current_frame().cannot_block) {
    throw error(errc::tasklet_cannot_block,
                std::string("weft::loops: ") + what +
                    " waits for other workers, which a tasklet cannot do; make the enclosing "
                    "team's units ULTs (options::units = unit_type::ult)");
  }
}

void require_runtime(const char* what) {
  if (!initialized()) {
    throw error(errc::not_initialized,
                std::string("weft::loops: ") + what + " needs weft initialised (weft::runtime)");
  }
}

}  // namespace weft::loops
