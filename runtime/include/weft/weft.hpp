// weft: a user-level threading runtime. The umbrella header of the C++ API.
#pragma once

#include "weft/config.hpp"
#include "weft/error.hpp"
#include "weft/execution_stream.hpp"
#include "weft/pool.hpp"
#include "weft/runtime.hpp"
#include "weft/scheduler.hpp"
#include "weft/schedulers/basic_scheduler.hpp"
#include "weft/schedulers/fifo_pool.hpp"
#include "weft/stacking.hpp"
#include "weft/tasklet.hpp"
#include "weft/this_unit.hpp"
#include "weft/ult.hpp"
#include "weft/unit_handle.hpp"
#include "weft/work_unit.hpp"
