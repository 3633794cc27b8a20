// The stock FIFO pools: one per access mode, all supporting remove() and a sleeping pop_wait().
#pragma once

#include <memory>

#include "weft/pool.hpp"

namespace weft {

/// Creates a FIFO pool for `mode`. `priv` gives a pool without a single atomic instruction; the
/// shared modes give a spinlock-protected doubly linked list (one locked instruction per push or
/// pop, O(1) remove) whose pop_wait sleeps on a futex that push wakes only when someone sleeps.
std::shared_ptr<pool> make_fifo_pool(access_mode mode = access_mode::mpsc);

}  // namespace weft
