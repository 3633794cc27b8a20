// SPDX-License-Identifier: Apache-2.0
// The runtime's spellings of the public spinlock and pause hint.
#pragma once

#include "weft/spinlock.hpp"

namespace weft::detail {

using weft::cpu_relax;
using weft::spinlock;

}  // namespace weft::detail
