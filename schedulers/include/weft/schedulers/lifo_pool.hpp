// SPDX-License-Identifier: Apache-2.0
// The stock LIFO pools.
#pragma once

#include <memory>

#include "weft/pool.hpp"

namespace weft {

/// Creates a LIFO pool for `mode`: the unit pushed last is popped first (a stack, good for cache
/// locality of fork-join code; note that a ULT that yields in a LIFO pool is popped straight back,
/// so yield-based waiting needs another unit's pool to make progress). An intrusive list: push,
/// pop and remove() are O(1) and never allocate; `priv` takes no lock, the other modes a spinlock
/// (one locked instruction per operation). pop_wait() polls (pool's default).
std::shared_ptr<pool> make_lifo_pool(access_mode mode = access_mode::mpmc);

}  // namespace weft
