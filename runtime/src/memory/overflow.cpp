// SPDX-License-Identifier: Apache-2.0
#include "memory/overflow.hpp"

#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "core/stream.hpp"
#include "core/unit.hpp"
#include "memory/stack.hpp"

namespace weft::detail {

namespace {

struct sigaction previous_segv {};
struct sigaction previous_bus {};
bool installed = false;

/// The whole stack of the thread that called init (the primary ULT's), which its stack_region
/// describes only by the top 2 GiB under a larger ulimit -s; and whether RLIMIT_STACK was
/// unlimited then (Linux then lets the stack grow until the address space runs out).
stack_bounds primary_stack{};
bool primary_stack_unlimited = false;

/// Async-signal-safe decimal formatting.
char* format_u64(char* end, std::uint64_t v) noexcept {
  *--end = '\0';
  do {
    *--end = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v);
  return end;
}

void write_all(const char* s) noexcept {
  std::size_t n = std::strlen(s);
  while (n) {
    const ssize_t w = ::write(STDERR_FILENO, s, n);
    if (w <= 0) return;
    s += w;
    n -= static_cast<std::size_t>(w);
  }
}

/// The stack pointer of the interrupted context (0 where the architecture is not known).
std::uintptr_t fault_sp(void* uctx) noexcept {
  const auto* uc = static_cast<const ucontext_t*>(uctx);
  if (!uc) return 0;
#if defined(__x86_64__)
  return static_cast<std::uintptr_t>(uc->uc_mcontext.gregs[REG_RSP]);
#elif defined(__aarch64__)
  return static_cast<std::uintptr_t>(uc->uc_mcontext.sp);
#else
  return 0;
#endif
}

/// Whether a fault at `addr` with stack pointer `sp` is an overflow of `s`: the address is in the
/// guard page or a little below it (a large frame can jump over the guard; a thread's own stack
/// has the kernel's or glibc's guard there), or the stack pointer itself has left the stack
/// downwards. The second catches stacks without a guard page (canary stacks), whose overflow
/// runs through the memory below until something faults.
bool overflowed(const stack_region& s, std::uintptr_t addr, std::uintptr_t sp) noexcept {
  if (!s.lo) return false;
  const auto lo = reinterpret_cast<std::uintptr_t>(s.lo);
  if (addr < lo && addr + 64 * page_size() >= lo) return true;
  constexpr std::uintptr_t max_run = std::uintptr_t{1} << 30;  // past this, not our stack's run
  return sp != 0 && sp < lo && lo - sp <= max_run;
}

/// Whether `s` is (a part of) the primary thread's stack: the primary ULT's own, or lent by it to
/// a joined child running on it.
bool on_primary_stack(const stack_region& s) noexcept {
  const auto lo = reinterpret_cast<std::uintptr_t>(s.lo);
  return (s.flags & (stack_foreign | stack_borrowed)) && primary_stack.lo <= lo &&
         lo < primary_stack.hi;
}

/// Whether a fault at `addr` with stack pointer `sp` is an overflow of the primary thread's whole
/// stack: at or a little below its RLIMIT_STACK bottom, or anywhere in its range below the stack
/// pointer (the part below the stack pointer is mapped on demand, so a fault there is a growth
/// the kernel refused: the address space ran out, as under ulimit -v with ulimit -s unlimited).
bool overflowed_primary(std::uintptr_t addr, std::uintptr_t sp) noexcept {
  const stack_bounds& b = primary_stack;
  if (!b.lo) return false;
  if (addr < b.lo && addr + 64 * page_size() >= b.lo) return true;
  if (sp != 0 && sp < b.lo && b.lo - sp <= (std::uintptr_t{1} << 30)) return true;
  return addr >= b.lo && addr < b.hi && sp != 0 && addr < sp + page_size();
}

void chain(int sig, siginfo_t* info, void* uctx) noexcept {
  const struct sigaction& prev = sig == SIGSEGV ? previous_segv : previous_bus;
  if (prev.sa_flags & SA_SIGINFO) {
    if (prev.sa_sigaction) {
      prev.sa_sigaction(sig, info, uctx);
      return;
    }
  } else if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
    prev.sa_handler(sig);
    return;
  }
  // Default action: re-raise with the default disposition once we return.
  signal(sig, SIG_DFL);
}

void on_fault(int sig, siginfo_t* info, void* uctx) noexcept {
  const auto addr = reinterpret_cast<std::uintptr_t>(info->si_addr);
  const std::uintptr_t sp = fault_sp(uctx);
  if (stream* s = current_stream()) {
    work_unit* u = s->current();
    if (u && as_unit(u)->kind == unit_kind::ult) {
      // A canary overwritten by the time anything faults is an overflow too.
      const stack_region& st = as_unit(u)->stack;
      if (on_primary_stack(st) ? overflowed_primary(addr, sp)
                               : overflowed(st, addr, sp) || !stack_intact(st))
        report_stack_overflow(u);
    } else if (overflowed(s->switch_state().scheduler_stack(), addr, sp)) {
      // Tasklets run on the scheduler's stack: the primary's is mapped with a guard page, a
      // secondary's is its thread's own stack with glibc's guard below it.
      char buf[32];
      if (u) {
        write_all("weft: stack overflow in tasklet ");
        write_all(format_u64(buf + sizeof buf, as_unit(u)->id));
        write_all(", on the scheduler stack of execution stream ");
      } else {
        write_all("weft: stack overflow in the scheduler of execution stream ");
      }
      write_all(format_u64(buf + sizeof buf, static_cast<std::uint64_t>(s->rank())));
      write_all(" (");
      write_all(format_u64(buf + sizeof buf, s->switch_state().scheduler_stack().size));
      write_all(" bytes)\n");
      abort();
    }
  }
  chain(sig, info, uctx);
}

}  // namespace

void report_stack_overflow(const work_unit* u) noexcept {
  char buf[32];
  const stack_region& st = as_unit(u)->stack;
  const bool primary = on_primary_stack(st);
  // The primary thread's stack may be larger than its stack_region says.
  const std::uint64_t size = primary ? primary_stack.hi - primary_stack.lo : st.size;
  if (st.flags & stack_borrowed) {
    // A joined ULT running as a call on its joiner's stack: the stack is the joiner's.
    write_all("weft: stack overflow in ULT ");
    write_all(format_u64(buf + sizeof buf, as_unit(u)->id));
    write_all(primary ? ", running on its joiner's stack (the primary thread's, "
                      : ", running on its joiner's stack (");
    write_all(format_u64(buf + sizeof buf, size));
    write_all(
        " bytes; raise WEFT_STACK_SIZE or ult_attributes::stack_size, or ulimit -s for the "
        "primary ULT's)\n");
    abort();
  }
  if (st.flags & stack_foreign) {
    // The primary ULT runs on the primary thread's own stack, sized by RLIMIT_STACK.
    write_all("weft: stack overflow in the primary ULT (the primary thread's stack of ");
    write_all(format_u64(buf + sizeof buf, size));
    write_all(primary && primary_stack_unlimited
                  ? " bytes, ulimit -s unlimited: the address space ran out)\n"
                  : " bytes; raise ulimit -s)\n");
    abort();
  }
  write_all("weft: stack overflow in ULT ");
  write_all(format_u64(buf + sizeof buf, as_unit(u)->id));
  write_all(" (stack of ");
  write_all(format_u64(buf + sizeof buf, as_unit(u)->stack.size));
  write_all(" bytes; raise WEFT_STACK_SIZE or ult_attributes::stack_size)\n");
  abort();
}

void install_overflow_handler() {
  if (installed) return;
  // init runs on the thread whose stack becomes the primary ULT's.
  primary_stack = native_stack_bounds();
  rlimit rl{};
  primary_stack_unlimited = ::getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur == RLIM_INFINITY;
  struct sigaction sa {};
  sa.sa_sigaction = &on_fault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, &previous_segv);
  sigaction(SIGBUS, &sa, &previous_bus);
  installed = true;
}

void uninstall_overflow_handler() noexcept {
  if (!installed) return;
  sigaction(SIGSEGV, &previous_segv, nullptr);
  sigaction(SIGBUS, &previous_bus, nullptr);
  installed = false;
}

alt_signal_stack::alt_signal_stack() {
  size_ = 64 * 1024;
  memory_ = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory_ == MAP_FAILED) {
    memory_ = nullptr;
    return;
  }
  stack_t st{};
  st.ss_sp = memory_;
  st.ss_size = size_;
  st.ss_flags = 0;
  installed_ = sigaltstack(&st, &previous_) == 0;
}

alt_signal_stack::~alt_signal_stack() {
  if (installed_) {
    previous_.ss_flags &= SS_DISABLE;  // restore as it was (SS_ONSTACK is a status, not a flag)
    sigaltstack(&previous_, nullptr);
  }
  if (memory_) munmap(memory_, size_);
}

}  // namespace weft::detail
