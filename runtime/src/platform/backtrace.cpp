// SPDX-License-Identifier: Apache-2.0
#include "platform/backtrace.hpp"

#include <cxxabi.h>
#include <dlfcn.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <type_traits>

#if __has_include(<libunwind.h>) && defined(__x86_64__)
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#define WEFT_HAVE_LIBUNWIND 1
#endif

// libdw's declarations (Debian libdw-dev) for file:line; the library itself is loaded at run time.
#if __has_include(<elfutils/libdwfl.h>)
#include <elfutils/libdwfl.h>
#define WEFT_HAVE_LIBDW 1
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

#ifdef WEFT_HAVE_LIBDW

/// libdw's (elfutils) DWARF line lookup, looked up in a privately loaded libdw.so.1 on first use
/// (RTLD_LOCAL, like libunwind: weft has no link-time dependency on it). Without it, frames have
/// names only.
struct line_finder {
  decltype(&dwfl_begin) begin = nullptr;
  decltype(&dwfl_end) end = nullptr;
  decltype(&dwfl_linux_proc_report) proc_report = nullptr;
  decltype(&dwfl_report_end) report_end = nullptr;
  decltype(&dwfl_addrmodule) addrmodule = nullptr;
  decltype(&dwfl_module_getsrc) getsrc = nullptr;
  decltype(&dwfl_lineinfo) lineinfo = nullptr;
  Dwfl_Callbacks callbacks{};
  bool ok = false;
};

/// Where dwfl_standard_find_debuginfo looks for separate debug files: null, its default.
char* debuginfo_path = nullptr;

const line_finder& the_line_finder() {
  static const line_finder f = [] {
    line_finder l;
    void* lib = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return l;
    const auto sym = [lib](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      return fn != nullptr;
    };
    l.ok = sym(l.begin, "dwfl_begin") && sym(l.end, "dwfl_end") &&
           sym(l.proc_report, "dwfl_linux_proc_report") && sym(l.report_end, "dwfl_report_end") &&
           sym(l.addrmodule, "dwfl_addrmodule") && sym(l.getsrc, "dwfl_module_getsrc") &&
           sym(l.lineinfo, "dwfl_lineinfo") &&
           sym(l.callbacks.find_elf, "dwfl_linux_proc_find_elf") &&
           sym(l.callbacks.find_debuginfo, "dwfl_standard_find_debuginfo");
    l.callbacks.debuginfo_path = &debuginfo_path;
    return l;
  }();
  return f;
}

/// A libdw session over this process's modules, for one backtrace. It reads /proc/self/maps and
/// the ELF and DWARF files, and allocates: not async-signal-safe. Backtraces are written by dumps
/// only (weft::dump_units, the dump signal's thread, finalize's report, weft_debug_dump), never
/// in a signal handler; the stack-overflow handler does not write one.
class source_lines {
 public:
  source_lines() : f_(the_line_finder()) {
    if (!f_.ok) return;
    dwfl_ = f_.begin(&f_.callbacks);
    if (dwfl_ &&
        (f_.proc_report(dwfl_, getpid()) != 0 || f_.report_end(dwfl_, nullptr, nullptr) != 0)) {
      f_.end(dwfl_);
      dwfl_ = nullptr;
    }
  }
  ~source_lines() {
    if (dwfl_) f_.end(dwfl_);
  }
  source_lines(const source_lines&) = delete;
  source_lines& operator=(const source_lines&) = delete;

  /// Writes " at FILE:LINE" for the call that returns to `return_address`, if debug information
  /// covers it.
  void write(std::ostream& out, std::uint64_t return_address) const {
    if (!dwfl_ || return_address == 0) return;
    // The call instruction ends just before the return address: its last byte is in the call's
    // line, the return address may already be in the next one.
    const Dwarf_Addr pc = return_address - 1;
    Dwfl_Module* mod = f_.addrmodule(dwfl_, pc);
    Dwfl_Line* line = mod ? f_.getsrc(mod, pc) : nullptr;
    int lineno = 0;
    const char* file =
        line ? f_.lineinfo(line, nullptr, &lineno, nullptr, nullptr, nullptr) : nullptr;
    if (file && lineno > 0) out << " at " << file << ':' << lineno;
  }

 private:
  const line_finder& f_;
  Dwfl* dwfl_ = nullptr;
};

#else

class source_lines {
 public:
  void write(std::ostream&, std::uint64_t) const {}
};

#endif

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
  const source_lines lines;
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
    lines.write(out, ip);
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
