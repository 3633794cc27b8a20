// SPDX-License-Identifier: Apache-2.0
// The extension API: everything a pool or a scheduler written outside the runtime includes,
// the stock ones of schedulers/ included (docs/schedulers.md, "Writing a pool or a scheduler").
#pragma once

#include "weft/execution_stream.hpp"
#include "weft/ext/assert.hpp"
#include "weft/ext/locks.hpp"
#include "weft/ext/observe.hpp"
#include "weft/ext/park.hpp"
#include "weft/ext/stream.hpp"
#include "weft/ext/unit_list.hpp"
#include "weft/pool.hpp"
#include "weft/scheduler.hpp"
#include "weft/spinlock.hpp"
#include "weft/work_unit.hpp"
