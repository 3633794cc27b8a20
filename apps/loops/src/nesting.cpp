// The per-unit nesting frame of the loop layer.
#include <weft/loops/nesting.hpp>

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

const nesting_frame& current_frame() noexcept {
  const void* p = frame_key().get();
  return p ? *static_cast<const nesting_frame*>(p) : top_frame;
}

frame_scope::frame_scope(const nesting_frame* f) : saved_(frame_key().get()) {
  frame_key().set(const_cast<nesting_frame*>(f));
}

frame_scope::~frame_scope() {
  frame_key().set(const_cast<void*>(saved_));
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
