// SPDX-License-Identifier: Apache-2.0
// Turning a ULT stack overflow into a clear message instead of silent corruption.
#pragma once

#include <signal.h>

#include "weft/work_unit.hpp"

namespace weft::detail {

/// Installs the process-wide SIGSEGV/SIGBUS handler (chaining to the previous one for faults that
/// are not stack overflows). Called by init; undone by uninstall_overflow_handler at finalize.
void install_overflow_handler();
void uninstall_overflow_handler() noexcept;

/// An alternate signal stack for the calling thread, so the handler can run when the fault was
/// caused by a full stack. Every stream thread (and the primary, during init..finalize) has one.
class alt_signal_stack {
 public:
  alt_signal_stack();
  ~alt_signal_stack();
  alt_signal_stack(const alt_signal_stack&) = delete;
  alt_signal_stack& operator=(const alt_signal_stack&) = delete;

 private:
  void* memory_ = nullptr;
  std::size_t size_ = 0;
  bool installed_ = false;
  stack_t previous_{};
};

/// Prints "weft: stack overflow in ULT <id>" and aborts.
[[noreturn]] void report_stack_overflow(const work_unit* u) noexcept;

}  // namespace weft::detail
