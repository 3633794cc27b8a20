// SPDX-License-Identifier: Apache-2.0
// The stock FIFO pools: one per access mode, all supporting remove() and a sleeping pop_wait().
#pragma once

#include <memory>

#include "weft/pool.hpp"

namespace weft {

/// Creates a FIFO pool for `mode`:
///  - `priv`: a list without a single atomic read-modify-write;
///  - `spsc`, `mpsc`: two lanes; the consumer stream pushes into its private list, other threads
///    onto a lock-free stack the consumer drains at its next pop (per-producer FIFO);
///  - `spmc`, `mpmc`: a spinlock-protected list (one locked instruction per push or pop).
/// All support O(1) remove() (of units the consumer holds) and a pop_wait() that sleeps on a
/// futex, woken by a push only when someone sleeps.
std::shared_ptr<pool> make_fifo_pool(access_mode mode = access_mode::mpsc);

}  // namespace weft
