// SPDX-License-Identifier: Apache-2.0
// Initialisation and finalisation of the runtime.
#pragma once

#include <iosfwd>

#include "weft/config.hpp"

namespace weft {

/// Initialises weft on the calling thread, which becomes the primary ULT of the primary stream;
/// `cfg` is completed from the WEFT_* environment and validated. Creates cfg.num_streams - 1
/// secondary streams. Nested calls only count (their configuration is ignored); each needs a
/// matching finalize(). Throws weft::error (errc::invalid_config names the bad variable).
void init(const config& cfg = {});
/// Undoes one init(); the last one drains every stream's pools, joins and frees every stream and
/// releases all memory. Must be called from the primary ULT (the thread that called init).
void finalize();
/// True between the first init() and the last finalize().
bool initialized() noexcept;
/// The effective configuration. Throws errc::not_initialized.
const config& current_config();
/// Writes the effective configuration (one "key = value" per line).
void print_config(std::ostream& out);

/// RAII guard: init() in the constructor, finalize() in the destructor.
class runtime {
 public:
  runtime() { init(); }
  explicit runtime(const config& cfg) { init(cfg); }
  ~runtime() { finalize(); }
  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;
};

}  // namespace weft
