// SPDX-License-Identifier: Apache-2.0
// The weft parallel-loop layer: parallel regions, parallel_for with static/dynamic/guided
// schedules, scalar and array reductions, barriers, nested teams of ULTs or tasklets.
// docs/loops.md describes it; weft/loops/mpi.hpp (separate, needs MPI) adds ULT-aware MPI waits.
#pragma once

#include <weft/loops/options.hpp>
#include <weft/loops/parallel.hpp>
#include <weft/loops/schedule.hpp>
#include <weft/loops/team.hpp>
