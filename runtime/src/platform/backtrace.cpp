// SPDX-License-Identifier: Apache-2.0
#include "platform/backtrace.hpp"

#include <cxxabi.h>
#include <dlfcn.h>
#include <ucontext.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#if __has_include(<libunwind.h>) && defined(__x86_64__)
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#define WEFT_HAVE_LIBUNWIND 1
#endif

namespace weft::detail {

#ifdef WEFT_HAVE_LIBUNWIND

namespace {

/// libunwind's local-unwinding entry points, looked up in a privately loaded libunwind.so.8.
struct unwinder {
  int (*init_local)(unw_cursor_t*, unw_context_t*) = nullptr;
  int (*step)(unw_cursor_t*) = nullptr;
  int (*get_reg)(unw_cursor_t*, unw_regnum_t, unw_word_t*) = nullptr;
  int (*get_proc_name)(unw_cursor_t*, char*, std::size_t, unw_word_t*) = nullptr;
  bool ok = false;
};

const unwinder& the_unwinder() {
  static const unwinder u = [] {
    unwinder w;
    // RTLD_LOCAL: libunwind also defines _Unwind_RaiseException and friends, which must keep
    // resolving to libgcc's for C++ exceptions.
    void* lib = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return w;
    w.init_local = reinterpret_cast<decltype(w.init_local)>(dlsym(lib, "_ULx86_64_init_local"));
    w.step = reinterpret_cast<decltype(w.step)>(dlsym(lib, "_ULx86_64_step"));
    w.get_reg = reinterpret_cast<decltype(w.get_reg)>(dlsym(lib, "_ULx86_64_get_reg"));
    w.get_proc_name =
        reinterpret_cast<decltype(w.get_proc_name)>(dlsym(lib, "_ULx86_64_get_proc_name"));
    w.ok = w.init_local && w.step && w.get_reg && w.get_proc_name;
    return w;
  }();
  return u;
}

/// The word at `base + offset` of a saved fcontext frame.
std::uint64_t frame_word(void* base, std::size_t offset) noexcept {
  std::uint64_t v;
  std::memcpy(&v, static_cast<char*>(base) + offset, sizeof v);
  return v;
}

void write_hex(std::ostream& out, std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  out << buf;
}

}  // namespace

bool write_saved_backtrace(std::ostream& out, void* fctx, const char* indent) {
  const unwinder& w = the_unwinder();
  if (!w.ok) {
    out << indent << "(no backtrace: libunwind.so.8 could not be loaded)\n";
    return false;
  }
  // The frame Boost.Context's jump_fcontext and weft_jump_fcontext save: MXCSR and x87 control
  // words at 0x00, then r12 r13 r14 r15 rbx rbp, the resume address at 0x38; the stack pointer
  // after the resume is just above it.
  unw_context_t ctx;
  std::memset(&ctx, 0, sizeof ctx);
  greg_t* g = ctx.uc_mcontext.gregs;
  g[REG_R12] = static_cast<greg_t>(frame_word(fctx, 0x08));
  g[REG_R13] = static_cast<greg_t>(frame_word(fctx, 0x10));
  g[REG_R14] = static_cast<greg_t>(frame_word(fctx, 0x18));
  g[REG_R15] = static_cast<greg_t>(frame_word(fctx, 0x20));
  g[REG_RBX] = static_cast<greg_t>(frame_word(fctx, 0x28));
  g[REG_RBP] = static_cast<greg_t>(frame_word(fctx, 0x30));
  g[REG_RIP] = static_cast<greg_t>(frame_word(fctx, 0x38));
  const std::uintptr_t resumed_sp = reinterpret_cast<std::uintptr_t>(fctx) + 0x40;
  g[REG_RSP] = static_cast<greg_t>(resumed_sp);
  unw_cursor_t cursor;
  if (w.init_local(&cursor, &ctx) < 0) {
    out << indent << "(no backtrace: libunwind refused the saved context)\n";
    return false;
  }
  constexpr int max_frames = 48;
  char name[512];
  int n = 0;
  do {
    unw_word_t ip = 0;
    if (w.get_reg(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0) break;
    out << indent << '#' << n << ' ';
    write_hex(out, ip);
    unw_word_t offset = 0;
    if (w.get_proc_name(&cursor, name, sizeof name, &offset) == 0) {
      int status = -1;
      char* demangled = abi::__cxa_demangle(name, nullptr, nullptr, &status);
      out << ' ' << (status == 0 && demangled ? demangled : name) << '+' << offset;
      std::free(demangled);
    } else {
      Dl_info info;
      if (dladdr(reinterpret_cast<void*>(ip), &info) && info.dli_fname)
        out << " in " << info.dli_fname;
    }
    out << '\n';
  } while (++n < max_frames && w.step(&cursor) > 0);
  return n > 0;
}

#else

bool write_saved_backtrace(std::ostream& out, void*, const char* indent) {
  out << indent << "(no backtrace: weft was built without libunwind)\n";
  return false;
}

#endif

}  // namespace weft::detail
