// SPDX-License-Identifier: Apache-2.0
// Runtime configuration: set from code, overridden by WEFT_* environment variables at init.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace weft {

/// Where execution streams are bound. A place is a set of OS CPU numbers; stream r is bound to
/// place r modulo the number of places.
struct affinity_policy {
  /// How places are chosen.
  enum class kind { none, compact, scatter, places };
  kind how = kind::compact;
  /// The explicit places, for kind::places.
  std::vector<std::vector<int>> places;

  /// Parses "none", "compact", "scatter" or an OMP_PLACES-style list such as "{0,1},{2,3}",
  /// "0:4:2" (four places {0},{2},{4},{6}), "{0:2}:2:2" (places {0,1},{2,3}). Throws
  /// weft::error(errc::invalid_config) naming `origin` and the text on malformed input.
  static affinity_policy parse(std::string_view text, std::string_view origin = "affinity");
  /// The policy written back in the syntax parse() accepts.
  std::string to_string() const;
};

/// Everything weft::init needs. init() starts from these values and lets every WEFT_* variable
/// that is set override its field.
struct config {
  /// Number of execution streams including the primary; 0 means one per CPU in the process's
  /// affinity mask. Variable WEFT_NUM_STREAMS.
  int num_streams = 0;
  /// Default ULT stack size in bytes (rounded up to pages). WEFT_STACK_SIZE, accepts K/M/G
  /// suffixes (either case).
  std::size_t stack_size = 16 * 1024;
  /// Bytes mapped beyond stack_size for every ULT stack of the default size (rounded up to pages;
  /// virtual memory until used). A joined ULT that never ran runs as a call on its joiner's stack
  /// when that stack has the joined ULT's own stack size left: the reserve is what lets a ULT's
  /// children do so (the primary ULT's stack always can). 0: no reserve. WEFT_STACK_RESERVE,
  /// accepts K/M/G suffixes.
  std::size_t stack_reserve = 48 * 1024;
  /// Most ULT stacks that have a guard page at once; past it, new stacks get a canary word instead
  /// (an overflow is then reported when the ULT ends rather than when it happens). Each guard page
  /// costs two kernel mappings: -1 (the default) allows 3/8 of vm.max_map_count; 0 means canaries
  /// only. WEFT_STACK_GUARDS, a count or "auto".
  long stack_guards = -1;
  /// Binding of streams to CPUs. WEFT_AFFINITY.
  affinity_policy affinity;
  /// Name of the default main scheduler of every stream. WEFT_SCHED.
  std::string scheduler = "randws";
  /// Stock schedulers call check_events() every this many pops. WEFT_EVENT_FREQ.
  unsigned event_freq = 64;
  /// Spin iterations an idle stock scheduler makes before it starts to yield its core.
  /// WEFT_IDLE_SPIN.
  unsigned idle_spin = 256;
  /// Longest a parked stream sleeps before it looks at its pools again, in ms (1 to 3,600,000;
  /// a stream idle for long doubles it per idle park, up to 1 s). Pushes, deliveries, requests and
  /// due timers wake it at once; the limit is a safety net for what wakes nobody (a user pool that
  /// breaks pool::size()'s contract, a shared pool emptied by another). WEFT_PARK_LIMIT_MS.
  unsigned park_limit_ms = 100;
  /// Print the effective configuration to stderr at init. WEFT_PRINT_CONFIG=1.
  bool print = false;
  /// The resource manager to connect to for shrink/expand events (see events.hpp and
  /// rm_protocol.hpp): "unix:/path/to.sock" or "tcp:127.0.0.1:PORT"; empty (the default) means
  /// none. WEFT_RM.
  std::string resource_manager;
  /// A signal that prints a unit dump (weft/debug.hpp) to stderr, or 0 (the default) for none.
  /// One of SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2, SIGTERM, SIGWINCH; the handler is
  /// installed at init and the previous one restored at finalize. WEFT_DUMP_SIGNAL, a name
  /// ("SIGQUIT" or "QUIT", either case), a number, or "none".
  int dump_signal = 0;
  /// Records a trace of the whole run (weft/trace.hpp) and writes it to this file at finalize, in
  /// the Chrome trace event format; empty (the default) means none. WEFT_TRACE.
  std::string trace;
  /// Print each stream's counters (weft::stats()) to stderr at finalize. WEFT_STATS=1.
  bool stats = false;

  /// Overrides the fields whose WEFT_* variable is set. Throws weft::error(errc::invalid_config)
  /// naming the variable and its value when one is malformed; nothing is ignored silently.
  void apply_environment();
  /// Throws weft::error(errc::invalid_config) if a field is out of range.
  void validate() const;
  /// A multi-line, human-readable description ("key = value").
  std::string describe() const;
};

/// Parses a byte size such as "16384", "64K", "2M". Throws errc::invalid_config naming `origin`.
std::size_t parse_size(std::string_view text, std::string_view origin);

}  // namespace weft
