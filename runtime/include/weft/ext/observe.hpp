// SPDX-License-Identifier: Apache-2.0
// What a scheduler reports to the runtime's counters and traces (weft::stats, weft::trace).
#pragma once

#include <cstddef>

#include "weft/work_unit.hpp"

namespace weft::ext {

/// The calling stream tries to steal from another stream's pool (counted in
/// stream_stats::steal_attempts). Nothing on an external thread.
void note_steal_attempt() noexcept;

/// The calling stream stole `n` units, the first of them `first` (counted in
/// stream_stats::steals, and a steal event in a recording trace). Nothing on an external thread.
void note_stolen(work_unit* first, std::size_t n) noexcept;

}  // namespace weft::ext
