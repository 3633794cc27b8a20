// SPDX-License-Identifier: Apache-2.0
// ABT_init, ABT_finalize, ABT_initialized, and the Argobots environment variables.
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "abt_internal.hpp"
#include "asymmetric_fence.hpp"
#include "objects.hpp"
#include "state.hpp"
#include "weft/config.hpp"
#include "weft/error.hpp"
#include "weft/rm_protocol.hpp"
#include "weft/runtime.hpp"
#include "weft/this_unit.hpp"

namespace abt {

namespace {

/// Argobots reads each variable as ABT_<NAME> and, for older programs, ABT_ENV_<NAME>.
const char* abt_env(const char* name) {
  std::string a = std::string("ABT_") + name;
  if (const char* v = std::getenv(a.c_str())) return v;
  std::string b = std::string("ABT_ENV_") + name;
  return std::getenv(b.c_str());
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

/// Argobots' power-event server, which weft's resource-manager protocol stands in for: a TCP
/// address for `cfg.resource_manager` (WEFT_RM, read by weft::init, still wins). Unlike the other
/// variables, a bad value fails ABT_init: a program that asked for a manager would otherwise run
/// without one unnoticed.
void apply_power_event_server(weft::config& cfg) {
  const char* host = std::getenv("ABT_ENV_POWER_EVENT_HOSTNAME");
  const char* port = std::getenv("ABT_ENV_POWER_EVENT_PORT");
  if (!host && !port) return;
  if (!host || !port) {
    throw weft::error(weft::errc::invalid_config,
                      "weft: ABT_ENV_POWER_EVENT_HOSTNAME and ABT_ENV_POWER_EVENT_PORT must be set "
                      "together");
  }
  const std::string h(trim(host));
  cfg.resource_manager = "tcp:" + (h.find(':') != std::string::npos ? "[" + h + "]" : h) + ":" +
                         std::string(trim(port));
  (void)weft::rm::parse_address(cfg.resource_manager, "ABT_ENV_POWER_EVENT_HOSTNAME/PORT");
}

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

/// A malformed Argobots variable is reported and skipped: Argobots ignores it, and a program that
/// ran there should start here too.
void report_ignored(const char* name, const char* value, const char* why) {
  std::fprintf(stderr, "weft-abt: ignoring ABT_%s=\"%s\": %s\n", name, value, why);
}

bool parse_unsigned(const char* text, unsigned long long& out) {
  if (!text || !*text) return false;
  char* end = nullptr;
  errno = 0;
  out = std::strtoull(text, &end, 10);
  return errno == 0 && end && *end == '\0';
}

/// Fills `cfg` and the layer's settings from the ABT_* variables that map onto weft.
void apply_abt_environment(weft::config& cfg, layer_state& st) {
  unsigned long long n = 0;
  if (const char* v = abt_env("THREAD_STACKSIZE")) {
    if (parse_unsigned(v, n) && n > 0)
      cfg.stack_size = static_cast<std::size_t>(n);
    else
      report_ignored("THREAD_STACKSIZE", v, "not a positive number of bytes");
  }
  if (const char* v = abt_env("SCHED_EVENT_FREQ")) {
    if (parse_unsigned(v, n) && n > 0 && n <= 0xffffffffull)
      cfg.event_freq = static_cast<unsigned>(n);
    else
      report_ignored("SCHED_EVENT_FREQ", v, "not a positive number");
  }
  if (const char* v = abt_env("MAX_NUM_XSTREAMS")) {
    if (parse_unsigned(v, n) && n > 0 && n < 1u << 20)
      st.max_xstreams = static_cast<int>(n);
    else
      report_ignored("MAX_NUM_XSTREAMS", v, "not a positive number");
  }
  // Argobots: "mprotect" and "mprotect_strict" turn the guard on, anything else leaves it off.
  {
    const char* v = abt_env("STACK_OVERFLOW_CHECK");
    const std::string s = v ? lower(v) : std::string();
    st.guard_user_stacks.store(s == "mprotect" || s == "mprotect_strict",
                               std::memory_order_relaxed);
  }
  if (const char* v = abt_env("PRINT_CONFIG")) {
    const std::string s = lower(v);
    cfg.print = s == "1" || s == "true" || s == "yes" || s == "on";
  }
  if (const char* v = abt_env("SET_AFFINITY")) {
    const std::string s = lower(v);
    if (s == "0" || s == "false" || s == "no" || s == "off") {
      cfg.affinity = weft::affinity_policy{};
      cfg.affinity.how = weft::affinity_policy::kind::none;
    } else if (s == "1" || s == "true" || s == "yes" || s == "on") {
      cfg.affinity = weft::affinity_policy{};
    } else {
      try {
        cfg.affinity = weft::affinity_policy::parse(v, "ABT_SET_AFFINITY");
      } catch (const weft::error&) {
        report_ignored("SET_AFFINITY", v, "not a boolean or a list of CPU sets");
      }
    }
  }
}

}  // namespace

void close_layer() noexcept {
  // A nested ABT_init made by a unit while the streams drained is dropped with the rest: the
  // last ABT_finalize ends the layer (Argobots would deadlock on its init lock there).
  state().init_count.store(0, std::memory_order_release);
  g_slow_paths.fetch_or(slow_uninitialized, std::memory_order_acq_rel);
}

}  // namespace abt

using namespace abt;

extern "C" {

int ABT_init(int, char**) {
  layer_state& st = state();
  if (st.init_count.load(std::memory_order_acquire) > 0) {
    st.init_count.fetch_add(1, std::memory_order_acq_rel);
    return ABT_SUCCESS;
  }
  return guarded(ABT_ERR_OTHER, [&] {
    if (!weft::initialized()) {
      weft::config cfg;
      cfg.num_streams = 1;  // Argobots starts with the primary stream only
      // Argobots' default scheduler: FIFO pools, no stealing (programs count on the stream whose
      // pool a unit was pushed to running it). WEFT_SCHED still chooses another.
      cfg.scheduler = "basic";
      apply_abt_environment(cfg, st);
      apply_power_event_server(cfg);
      weft::init(cfg);  // WEFT_* variables, when set, override the ABT_* ones
      st.owns_runtime = true;
    } else {
      st.owns_runtime = false;
      if (weft::this_unit::stream() != &weft::execution_stream::primary()) {
        // weft is running but this is not its primary ULT: Argobots' primary ULT is the caller.
        return ABT_ERR_INV_XSTREAM;
      }
    }
    const weft::config& cfg = weft::current_config();
    st.default_stack_size = cfg.stack_size;
    st.event_freq = cfg.event_freq;
    st.primary_unit.store(weft::this_unit::current(), std::memory_order_release);
    st.primary_arg.store(nullptr, std::memory_order_relaxed);
    init_asymmetric_fence();  // before the first unit of the layer exists
    // No unit of this initialisation has been asked to cancel yet.
    g_slow_paths.fetch_and(~std::uint32_t{slow_cancel | slow_user_pool}, std::memory_order_relaxed);
    try {
      register_existing_streams();
    } catch (...) {
      // Out of memory registering the handles: undo everything, weft's init included, so that
      // a failed ABT_init leaves nothing initialised (as Argobots).
      try {
        release_all_objects(st.owns_runtime);
      } catch (...) {
        if (st.owns_runtime && weft::initialized()) weft::finalize();
      }
      throw;
    }
    st.init_count.store(1, std::memory_order_release);
    // The entry points' fast forms open from here (after the count: one that sees the bit
    // cleared sees the layer initialised).
    g_slow_paths.fetch_and(~std::uint32_t{slow_uninitialized}, std::memory_order_release);
    return ABT_SUCCESS;
  });
}

int ABT_finalize(void) {
  layer_state& st = state();
  // As Argobots: the reference count comes first, so a nested finalize succeeds from any caller;
  // only the last one must come from the primary ULT.
  int count = st.init_count.load(std::memory_order_acquire);
  while (count > 1) {
    if (st.init_count.compare_exchange_weak(count, count - 1, std::memory_order_acq_rel))
      return ABT_SUCCESS;
  }
  if (count == 0) return ABT_ERR_UNINITIALIZED;
  const context c = calling_context();
  if (c != context::primary_ult) {
    return c == context::external || c == context::scheduler ? ABT_ERR_INV_XSTREAM
                                                             : ABT_ERR_INV_THREAD;
  }
  // A nested ABT_init may have come in since the count was read.
  count = st.init_count.load(std::memory_order_acquire);
  while (count > 1) {
    if (st.init_count.compare_exchange_weak(count, count - 1, std::memory_order_acq_rel))
      return ABT_SUCCESS;
  }
  // The layer stays initialised while weft drains the streams, as Argobots stays until its
  // schedulers have finished: a user scheduler still runs its units and polls
  // ABT_xstream_check_events/ABT_sched_has_to_stop until its pools are empty, and the units
  // it runs may call the whole API. release_all_objects() closes the layer (close_layer) once
  // the streams have ended, before it frees any handle.
  const int rc = guarded(ABT_ERR_OTHER, [&] {
    release_all_objects(st.owns_runtime);
    st.primary_unit.store(nullptr, std::memory_order_release);
    return ABT_SUCCESS;
  });
  // release_all_objects fails (out of memory) only before it has released anything: the layer
  // is still initialised, and a later ABT_finalize can succeed.
  return rc;
}

int ABT_initialized(void) {
  return state().init_count.load(std::memory_order_acquire) > 0 ? ABT_SUCCESS
                                                                : ABT_ERR_UNINITIALIZED;
}

}  // extern "C"
