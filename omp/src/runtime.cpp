// Settings from the environment, starting weft, the current context of a unit, teams and
// parallel regions (GOMP_parallel and its relatives, GOMP_barrier, GOMP_teams).
#include "internal.hpp"

#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <string_view>
#include <thread>

namespace weft::omp {
namespace {

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  while (!r.empty() && std::isspace(static_cast<unsigned char>(r.back()))) r.pop_back();
  while (!r.empty() && std::isspace(static_cast<unsigned char>(r.front()))) r.erase(0, 1);
  return r;
}

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

// Set, even to an empty value (which libgomp reports as invalid).
const char* env_any(const char* name) {
  return std::getenv(name);
}

/// The label of this runtime's waiters, so that a unit dump says what they wait for.
const weft::wait_kind omp_wait = weft::client_wait_kind("OpenMP barrier, lock or task");

// Malformed or out-of-range OMP_* values are reported as libgomp reports them (one line on
// stderr) and leave the setting at its default: they do not stop the program.
void warn_env(const char* what, const char* name) {
  std::fprintf(stderr, "libweft-omp: %s %s\n", what, name);
}

void invalid(const char* name) {
  warn_env("Invalid value for environment variable", name);
}

// OMP_DYNAMIC, OMP_NESTED, OMP_CANCELLATION: "true" or "false", in any case (libgomp accepts
// nothing else).
std::optional<bool> parse_bool(const char* name, const char* v) {
  const std::string s = lower(v);
  if (s == "true") return true;
  if (s == "false") return false;
  invalid(name);
  return std::nullopt;
}

// A decimal integer with surrounding blanks; nullopt when malformed or outside [lo, hi] (above
// hi: clamped to hi when `clamp`).
std::optional<long> parse_long(std::string_view v, long lo, long hi, bool clamp = false) {
  const std::string s = lower(v);
  if (s.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long r = std::strtol(s.c_str(), &end, 10);
  if (*end != '\0') return std::nullopt;
  if (clamp && (r > hi || (errno == ERANGE && r > 0))) return hi;
  if (errno == ERANGE || r < lo || r > hi) return std::nullopt;
  return r;
}

std::optional<long> parse_env_long(const char* name, const char* v, long lo, long hi,
                                   bool clamp = false) {
  std::optional<long> r = parse_long(v, lo, hi, clamp);
  if (!r) invalid(name);
  return r;
}

}  // namespace

std::size_t default_stack_size() {
  static const std::size_t size = [] {
    std::size_t s = 0;
    pthread_attr_t a;
    if (pthread_getattr_default_np(&a) == 0) {
      if (pthread_attr_getstacksize(&a, &s) != 0) s = 0;
      pthread_attr_destroy(&a);
    }
    // glibc's own choice where RLIMIT_STACK is unlimited (x86-64: 2 MiB), for a C library that
    // does not say.
    constexpr std::size_t fallback = std::size_t{2} << 20;
    return std::clamp<std::size_t>(s ? s : fallback, 64 * 1024, max_stack_size);
  }();
  return size;
}

std::size_t ult_stack_size() {
  const globals& g = settings();
  return g.stack_size ? g.stack_size : default_stack_size();
}

namespace {

// OMP_STACKSIZE: a number with an optional B, K, M or G suffix (K when none); 0 when malformed
// or below the 16 KiB libgomp requires (the default stays), clamped to weft's largest stack.
std::size_t parse_stack(const char* v) {
  std::string s = lower(v);
  std::size_t shift = 10;
  if (!s.empty() && std::isalpha(static_cast<unsigned char>(s.back()))) {
    switch (s.back()) {
      case 'b':
        shift = 0;
        break;
      case 'k':
        shift = 10;
        break;
      case 'm':
        shift = 20;
        break;
      case 'g':
        shift = 30;
        break;
      default:
        invalid("OMP_STACKSIZE");
        return 0;
    }
    s.pop_back();
  }
  const std::optional<long> n = parse_long(s, 0, LONG_MAX);
  if (!n || static_cast<unsigned long>(*n) > (ULONG_MAX >> shift)) {
    invalid("OMP_STACKSIZE");
    return 0;
  }
  const std::size_t bytes = static_cast<std::size_t>(*n) << shift;
  if (bytes < 16 * 1024) {
    std::fprintf(stderr, "libweft-omp: Stack size less than minimum of 16k\n");
    return 0;
  }
  if (bytes > max_stack_size) {
    std::fprintf(stderr,
                 "libweft-omp: OMP_STACKSIZE='%s' is more than the largest stack weft maps "
                 "(1G); using 1G\n",
                 v);
    return max_stack_size;
  }
  return bytes;
}

// OMP_SCHEDULE: [monotonic:|nonmonotonic:]kind[,chunk]. An unknown kind leaves the default; a
// bad chunk keeps the kind with the default chunk.
void parse_schedule(const char* v, icvs& icv) {
  std::string s = lower(v);
  for (const char* prefix : {"monotonic:", "nonmonotonic:"}) {
    if (s.rfind(prefix, 0) == 0) s = lower(s.substr(std::strlen(prefix)));
  }
  const std::size_t comma = s.find(',');
  const std::string kind = lower(s.substr(0, comma));
  sched_kind k;
  if (kind == "static") {
    k = sched_kind::static_;
  } else if (kind == "dynamic") {
    k = sched_kind::dynamic;
  } else if (kind == "guided") {
    k = sched_kind::guided;
  } else if (kind == "auto") {
    k = sched_kind::auto_;
  } else {
    warn_env("Unknown value for environment variable", "OMP_SCHEDULE");
    return;
  }
  icv.run_sched = k;
  icv.run_chunk = 0;
  if (comma == std::string::npos) return;
  // libgomp takes 0 and negative chunks as given; a positive chunk is what a loop can use.
  const std::optional<long> chunk = parse_long(s.substr(comma + 1), LONG_MIN, INT_MAX);
  if (!chunk) {
    warn_env("Invalid value for chunk size in environment variable", "OMP_SCHEDULE");
    return;
  }
  icv.run_chunk = *chunk > 0 ? *chunk : 0;
}

int online_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1l, sysconf(_SC_NPROCESSORS_ONLN));
}

void display_env(const globals& g) {
  static const char* kinds[] = {"RUNTIME", "STATIC", "DYNAMIC", "GUIDED", "AUTO"};
  std::string nt;
  for (std::size_t i = 0; i < g.nthreads_list.size(); ++i) {
    if (i) nt += ',';
    nt += std::to_string(g.nthreads_list[i]);
  }
  if (nt.empty()) nt = std::to_string(g.initial.nthreads);
  std::string sched = kinds[static_cast<int>(g.initial.run_sched)];
  if (g.initial.run_chunk) sched.append(",").append(std::to_string(g.initial.run_chunk));
  std::fprintf(stderr,
               "\nOPENMP DISPLAY ENVIRONMENT BEGIN\n"
               "  _OPENMP = '201511'\n"
               "  OMP_DYNAMIC = '%s'\n"
               "  OMP_NESTED = '%s'\n"
               "  OMP_NUM_THREADS = '%s'\n"
               "  OMP_SCHEDULE = '%s'\n"
               "  OMP_PROC_BIND = '%s'\n"
               "  OMP_STACKSIZE = '%zu'\n"
               "  OMP_WAIT_POLICY = '%s'\n"
               "  OMP_THREAD_LIMIT = '%d'\n"
               "  OMP_MAX_ACTIVE_LEVELS = '%d'\n"
               "  OMP_CANCELLATION = '%s'\n"
               "  OMP_MAX_TASK_PRIORITY = '%d'\n"
               "  WEFT_OMP_STREAMS = '%d'\n"
               "  WEFT_OMP_INNER = '%s'\n"
               "OPENMP DISPLAY ENVIRONMENT END\n",
               g.initial.dynamic ? "TRUE" : "FALSE",
               g.initial.max_active_levels > 1 ? "TRUE" : "FALSE", nt.c_str(), sched.c_str(),
               g.initial.bind ? "TRUE" : "FALSE", g.stack_size,
               g.wait == wait_policy::passive ? "PASSIVE" : "ACTIVE", g.thread_limit,
               g.initial.max_active_levels, g.cancellation ? "TRUE" : "FALSE", g.max_task_priority,
               g.streams, g.inner == inner_units::ult ? "ult" : "tasklet");
}

void read_environment(globals& g) {
  const int cpus = online_cpus();
  icvs& icv = g.initial;
  icv.run_sched = sched_kind::dynamic;
  icv.run_chunk = 0;
  if (const char* v = env_any("OMP_NUM_THREADS")) {
    // A comma-separated list of positive numbers, one per nesting level; all or nothing.
    std::vector<int> list;
    std::string_view rest(v);
    bool ok = true;
    for (;;) {
      const std::size_t comma = rest.find(',');
      const std::optional<long> n = parse_long(rest.substr(0, comma), 1, INT_MAX, true);
      if (!n) {
        ok = false;
        break;
      }
      list.push_back(static_cast<int>(*n));
      if (comma == std::string_view::npos) break;
      rest = rest.substr(comma + 1);
    }
    if (ok) {
      g.nthreads_list = std::move(list);
    } else {
      invalid("OMP_NUM_THREADS");
    }
  }
  if (const char* v = env_any("OMP_THREAD_LIMIT")) {
    if (auto n = parse_env_long("OMP_THREAD_LIMIT", v, 1, INT_MAX, true))
      g.thread_limit = static_cast<int>(*n);
    icv.thread_limit = g.thread_limit;
  }
  if (const char* v = env_any("OMP_NUM_TEAMS")) {
    if (auto n = parse_env_long("OMP_NUM_TEAMS", v, 1, INT_MAX, true))
      g.nteams.store(static_cast<int>(*n), std::memory_order_relaxed);
  }
  if (const char* v = env_any("OMP_TEAMS_THREAD_LIMIT")) {
    if (auto n = parse_env_long("OMP_TEAMS_THREAD_LIMIT", v, 1, INT_MAX, true))
      g.teams_thread_limit.store(static_cast<int>(*n), std::memory_order_relaxed);
  }
  // Streams: WEFT_OMP_STREAMS, else one per CPU, but no more than the threads the levels of
  // OMP_NUM_THREADS can use together.
  long want = cpus;
  if (!g.nthreads_list.empty()) {
    long product = 1;
    for (int n : g.nthreads_list) product = std::min<long>(product * n, cpus);
    want = std::max(1l, std::min<long>(want, product));
  }
  if (const char* v = env("WEFT_OMP_STREAMS")) {
    const std::optional<long> n = parse_long(v, 1, 4096);
    if (!n) fatal(std::string("WEFT_OMP_STREAMS='") + v + "': expected an integer from 1 to 4096");
    want = *n;
    g.widen = false;
  }
  g.streams = static_cast<int>(want);
  icv.nthreads = g.nthreads_list.empty() ? cpus : g.nthreads_list[0];
  icv.nthreads_list = g.nthreads_list.size() > 1 ? &g.nthreads_list : nullptr;
  icv.list_pos = 1;
  icv.max_active_levels = g.nthreads_list.size() > 1 ? 255 : 1;
  if (const char* v = env_any("OMP_NESTED")) {
    if (auto b = parse_bool("OMP_NESTED", v)) icv.max_active_levels = *b ? 255 : 1;
  }
  if (const char* v = env_any("OMP_MAX_ACTIVE_LEVELS")) {
    if (auto n = parse_env_long("OMP_MAX_ACTIVE_LEVELS", v, 0, 255, true))
      icv.max_active_levels = static_cast<int>(*n);
  }
  if (const char* v = env_any("OMP_DISPLAY_AFFINITY")) {
    if (auto b = parse_bool("OMP_DISPLAY_AFFINITY", v)) g.display_affinity = *b;
  }
  if (const char* v = env_any("OMP_AFFINITY_FORMAT")) set_affinity_format(v);
  if (const char* v = env_any("OMP_DYNAMIC")) {
    if (auto b = parse_bool("OMP_DYNAMIC", v)) icv.dynamic = *b;
  }
  if (const char* v = env("OMP_SCHEDULE")) parse_schedule(v, icv);
  if (const char* v = env_any("OMP_STACKSIZE")) g.stack_size = parse_stack(v);
  if (const char* v = env_any("OMP_WAIT_POLICY")) {
    const std::string s = lower(v);
    if (s == "active") {
      g.wait = wait_policy::active;
    } else if (s == "passive") {
      g.wait = wait_policy::passive;
    } else {
      invalid("OMP_WAIT_POLICY");
    }
  }
  if (const char* v = env_any("OMP_PROC_BIND")) {
    // A binding, or a list of close, spread and primary (master): the first applies here.
    static const char* names[] = {"false", "true", "master", "close", "spread", "primary"};
    std::string_view rest(v);
    int first = -1;
    std::vector<int> binds;
    bool ok = true;
    for (bool head = true;; head = false) {
      const std::size_t comma = rest.find(',');
      const std::string s = lower(rest.substr(0, comma));
      int b = -1;
      for (int i = 0; i < 6; ++i) {
        if (s == names[i]) b = i == 5 ? 2 : i;
      }
      if (b < 0 || (!head && b < 2) || (b < 2 && comma != std::string_view::npos)) {
        ok = false;
        break;
      }
      if (head) first = b;
      binds.push_back(b);
      if (comma == std::string_view::npos) break;
      rest = rest.substr(comma + 1);
    }
    if (ok) {
      icv.bind = first;
      g.bind_list = std::move(binds);
      g.proc_bind_false = first == 0;
      // A list (one binding per level) enables nesting unless the variables for it are set.
      if (std::string_view(v).find(',') != std::string_view::npos && !env_any("OMP_NESTED") &&
          !env_any("OMP_MAX_ACTIVE_LEVELS"))
        icv.max_active_levels = 255;
    } else {
      invalid("OMP_PROC_BIND");
    }
  }
  // OMP_PLACES without OMP_PROC_BIND binds (bind-var true), as in libgomp.
  if (icv.bind == 0 && !g.proc_bind_false && env("OMP_PLACES")) icv.bind = 1;
  if (const char* v = env_any("OMP_CANCELLATION")) {
    if (auto b = parse_bool("OMP_CANCELLATION", v)) g.cancellation = *b;
  }
  if (const char* v = env_any("OMP_MAX_TASK_PRIORITY")) {
    if (auto n = parse_env_long("OMP_MAX_TASK_PRIORITY", v, 0, INT_MAX, true))
      g.max_task_priority = static_cast<int>(*n);
  }
  if (const char* v = env_any("OMP_ALLOCATOR")) {
    // A predefined allocator's name, in any case (libgomp 12 accepts nothing else).
    if (const std::uintptr_t a = parse_allocator_name(lower(v))) {
      icv.def_allocator = a;
    } else {
      invalid("OMP_ALLOCATOR");
    }
  }
  if (const char* v = env("WEFT_OMP_INNER")) {
    const std::string s = lower(v);
    if (s == "ult") {
      g.inner = inner_units::ult;
    } else if (s == "tasklet") {
      g.inner = inner_units::tasklet;
    } else {
      fatal(std::string("WEFT_OMP_INNER='") + v + "': expected ult or tasklet");
    }
  }
  // Waiting members spin this many pause rounds before blocking: by default libgomp's default
  // GOMP_SPINCOUNT (about 6 ms here), long enough to cover a barrier's skew between streams even
  // when another process takes a core for a while (blocking, then waking a parked stream, costs a
  // futex wake-up that such a process delays by its time slice); passive blocks at once.
  g.spin = g.wait == wait_policy::passive ? 0 : g.wait == wait_policy::active ? 1l << 22 : 300000;
  if (const char* v = env("OMP_DISPLAY_ENV")) {
    const std::string s = lower(v);
    if (s == "true" || s == "verbose") display_env(g);
  }
}

void start_hot_team();
void stop_hot_team();
void delete_hot_team();

std::once_flag g_init_once;
std::mutex g_runtime_mutex;

// The primary ULT (the thread that started weft), and whether exit() may finalise weft.
work_unit* g_primary_unit = nullptr;
std::atomic<bool> g_abandoned{false};

void finalize_at_exit() {
  // finalize() waits for the units still queued or running, so it runs only when exit() is
  // called by the primary ULT outside any parallel region and task (the end of main). exit()
  // called elsewhere (in a region or a task, on any stream) leaves the streams running until the
  // process ends, as libgomp leaves its threads. (Thread-local storage is gone by now: the
  // region and task counts tell.)
  if (!settings().weft_owned || g_abandoned.load() || !initialized()) return;
  if (this_unit::current() != g_primary_unit || g_outer_busy.load() != 0) return;
  settings().weft_owned = false;
  stop_hot_team();
  weft::finalize();
}

// The current-context slot of units and threads the library did not create: ULT-local storage
// for ULTs (it follows them across streams), a thread_local for threads outside weft.
struct foreign_record {
  context root;
  context* cur = &root;
};

thread_local std::unique_ptr<foreign_record> t_foreign;

// The primary ULT's record (it runs the initial task and member 0 of every top-level team, so
// current() is called from it most): found without a unit-local lookup. Cleared when the record
// is destroyed.
std::atomic<foreign_record*> g_primary_record{nullptr};

const local_key& foreign_key() {
  static const local_key key = local_key::create([](void* p) {
    auto* r = static_cast<foreign_record*>(p);
    foreign_record* expected = r;
    g_primary_record.compare_exchange_strong(expected, nullptr, std::memory_order_acq_rel);
    delete r;
  });
  return key;
}

foreign_record* make_record() {
  auto* r = new foreign_record;
  r->root.icv = settings().initial;
  return r;
}

// `u`: the running unit (null outside any), which callers have looked up already. Out of line:
// current_slot() runs twice per task, and inlined this would make it save registers each time.
[[gnu::noinline]] context** foreign_slot(work_unit* u) {
  if (u && initialized()) {
    const bool primary = u == g_primary_unit;
    if (primary) {
      if (foreign_record* r = g_primary_record.load(std::memory_order_acquire)) return &r->cur;
    }
    void* p = foreign_key().get();
    if (!p) {
      // The thread that started weft carries over what it set before (omp_set_num_threads).
      foreign_record* r = t_foreign ? t_foreign.release() : make_record();
      foreign_key().set(r);
      p = r;
    }
    if (primary) g_primary_record.store(static_cast<foreign_record*>(p), std::memory_order_release);
    return &static_cast<foreign_record*>(p)->cur;
  }
  if (!t_foreign) t_foreign.reset(make_record());
  return &t_foreign->cur;
}

}  // namespace

context** current_slot() {
  work_unit* u = this_unit::current();
  if (!u) return foreign_slot(nullptr);
  // The primary ULT first: it calls most, and its record, while it lives, needs no lookup.
  if (u == g_primary_unit) {
    if (foreign_record* r = g_primary_record.load(std::memory_order_acquire)) return &r->cur;
  }
  // The C entry and argument a unit was created with: the callable part of the descriptor.
  const detail::unit_callable& c = detail::callable_of(u);
  if (c.entry_fn == &unit_entry) return &static_cast<unit_arg*>(c.entry_arg)->cur;
  return foreign_slot(u);
}

std::atomic<int> g_outer_busy{0};
std::atomic<bool> g_oversubscribed{false};

void sched_yield_now() noexcept {
  sched_yield();
}

globals& settings() {
  // Never destroyed: streams and exit handlers may read it while the process exits.
  static globals* const g = [] {
    auto* read = new globals;
    read_environment(*read);
    return read;
  }();
  return *g;
}

void ensure_runtime() {
  if (initialized()) return;
  std::lock_guard lock(g_runtime_mutex);
  if (initialized()) return;
  globals& g = settings();
  config cfg;
  cfg.num_streams = g.streams;
  cfg.stack_size = ult_stack_size();
  if (g.wait == wait_policy::passive) {
    cfg.scheduler = "basic_wait";
    cfg.idle_spin = 64;
  } else if (g.wait == wait_policy::active) {
    cfg.idle_spin = 1u << 24;
  }
  if (g.proc_bind_false) {
    cfg.affinity.how = affinity_policy::kind::none;
  }
  if (const char* v = env("OMP_PLACES")) {
    const std::string s = lower(v);
    if (s == "threads" || s == "cores" || s == "sockets" || s == "ll_caches" ||
        s == "numa_domains") {
      cfg.affinity.how = affinity_policy::kind::compact;
    } else {
      cfg.affinity = affinity_policy::parse(v, "OMP_PLACES");
    }
  }
  try {
    weft::init(cfg);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "libweft-omp: cannot start the runtime: %s\n", e.what());
    std::exit(EXIT_FAILURE);
  }
  g.streams = execution_stream::count();
  g.weft_owned = true;
  g_primary_unit = this_unit::current();
  forget_queued_tasks();  // a stream of an earlier runtime may be named there
  start_hot_team();
  std::call_once(g_init_once, [] { std::atexit(&finalize_at_exit); });
}

int pause_host() {
  // libgomp frees its threads unless called inside a region. weft's streams are this library's
  // to end only when it started weft, from the primary ULT (finalize() must run there), and
  // while no other thread is in a region.
  if (current().level > 0) return -1;
  if (!initialized()) return 0;
  const std::lock_guard lock(g_runtime_mutex);
  globals& g = settings();
  if (!g.weft_owned) return 0;  // the program's own weft: nothing of this library's to free
  if (this_unit::current() != g_primary_unit || g_outer_busy.load() != 0) return -1;
  stop_hot_team();
  // The initial task's record (its ICVs) outlives the runtime: the thread keeps it as a thread
  // outside weft, and the next ensure_runtime() hands it to the primary ULT again.
  auto* record = static_cast<foreign_record*>(foreign_key().get());
  foreign_key().set(nullptr);
  g_primary_record.store(nullptr, std::memory_order_release);
  if (record) t_foreign.reset(record);
  g.weft_owned = false;
  forget_queued_tasks();
  weft::finalize();
  delete_hot_team();
  g_oversubscribed.store(false, std::memory_order_relaxed);
  return 0;
}

context& current() {
  return **current_slot();
}

context_scope::context_scope(context* c) : context_scope(current_slot(), c) {}

void unit_entry(void* arg) noexcept {
  auto* a = static_cast<unit_arg*>(arg);
  a->run(a);
}

void lock_word(std::atomic<std::uint32_t>& w) noexcept {
  std::uint32_t expected = 0;
  if (w.compare_exchange_strong(expected, 1, std::memory_order_acquire)) return;
  wait_until([&] {
    std::uint32_t e = 0;
    return w.load(std::memory_order_relaxed) == 0 &&
           w.compare_exchange_strong(e, 1, std::memory_order_acquire);
  });
}

void fail_exit(const std::string& message) {
  std::fprintf(stderr, "libweft-omp: %s\n", message.c_str());
  // Members already started wait for the ones that could not be: weft cannot be finalised.
  g_abandoned.store(true);
  std::exit(EXIT_FAILURE);
}

void unsupported(const char* construct) {
  std::fprintf(stderr,
               "libweft-omp: '%s' is not supported by this OpenMP runtime (weft); the program "
               "cannot continue\n",
               construct);
  std::abort();
}

void fatal(const std::string& message) {
  std::fprintf(stderr, "libweft-omp: %s\n", message.c_str());
  std::abort();
}

// ---- teams -------------------------------------------------------------------------------

team::team(int n, context* parent_ctx)
    : nthreads(n), parent(parent_ctx), barrier(n, omp_wait), members(static_cast<std::size_t>(n)) {}

void team::reset(context* parent_ctx) {
  parent = parent_ctx;
  barrier.reset();
  single_count.store(0, std::memory_order_relaxed);
  cancelled.store(false, std::memory_order_relaxed);
  ws_cancelled.store(false, std::memory_order_relaxed);
  for (work_share& w : ws) {
    w.tag.store(0, std::memory_order_relaxed);
    w.users.store(0, std::memory_order_relaxed);
  }
  blocking_flag = nullptr;
  // A region cancelled inside a task reduction scope never closed it.
  red_active.store(0, std::memory_order_relaxed);
}

// ---- parallel regions --------------------------------------------------------------------

namespace {

// What the members of one region share besides the team: the body, and the count of members
// still running that the encountering thread waits for.
struct region {
  void (*fn)(void*);
  void* data;
  team* t;
  alignas(64) std::atomic<int> pending;
  spinlock lock;
  wait_queue waiter_q;
  bool done = false;
  bool may_block = false;  // a member reached a blocking construct (tasklet learning)
};

struct member_arg {
  unit_arg hdr;
  region* r;
};

void member_done(region& r) {
  if (r.pending.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  r.lock.lock();
  r.done = true;
  if (wakeup w = r.waiter_q.take()) w();
  r.lock.unlock();
}

void run_member(unit_arg* a) noexcept {
  auto* m = reinterpret_cast<member_arg*>(a);
  region& r = *m->r;
  if (settings().display_affinity) display_affinity_if_changed(*m->hdr.cur);
  r.fn(r.data);
  finish_children(*m->hdr.cur);
  member_done(r);
}

void wait_region(region& r, long spin) {
  for (long i = 0; i < spin; ++i) {
    if (r.pending.load(std::memory_order_acquire) == 0) break;
    cpu_relax();
  }
  r.lock.lock();
  if (!r.done) {
    waiter self;
    self.kind = omp_wait;
    r.waiter_q.wait(r.lock, self);
    r.lock.lock();  // the last member is past its unlock: r may go out of scope
  }
  r.lock.unlock();
}

// The hot team: one persistent worker ULT per secondary stream, which top-level teams no wider
// than the streams use instead of creating a ULT per member and region. A fork then costs one
// store per member (a worker that is still spinning sees it at once); an idle worker spins for
// the wait policy's budget, yielding whenever its stream has other work queued, then blocks.
struct hot_worker {
  unit_arg hdr{};  // hdr.cur: the member it runs now
  alignas(64) std::atomic<std::uint64_t> gen{0};
  member_arg* job = nullptr;  // written before gen
  alignas(64) std::atomic<bool> sleeping{false};
  spinlock lock;
  wait_queue waiters;
  execution_stream* stream = nullptr;
};

struct hot_team {
  std::atomic<bool> busy{false};
  std::atomic<bool> stop{false};
  std::vector<std::unique_ptr<hot_worker>> workers;  // by stream rank; [0] unused
};

hot_team* g_hot = nullptr;

void hot_loop(unit_arg* a) noexcept {
  auto* w = reinterpret_cast<hot_worker*>(a);
  // Taken by another stream before its creator pinned it.
  if (this_unit::stream() != w->stream) this_unit::migrate_to(*w->stream);
  std::uint64_t seen = 0;
  for (;;) {
    std::uint64_t g = w->gen.load(std::memory_order_acquire);
    const long spin = spin_rounds();
    for (long i = 0; g == seen && i < spin; ++i) {
      cpu_relax();
      if ((i & 127) == 127 && !w->stream->main_pool().empty()) this_unit::yield();
      // Tasks of a team still running wait on another stream: block, so this one takes them.
      if ((i & 255) == 255 && tasks_queued_elsewhere()) break;
      g = w->gen.load(std::memory_order_acquire);
    }
    if (g == seen) {
      w->lock.lock();
      w->sleeping.store(true, std::memory_order_seq_cst);
      while ((g = w->gen.load(std::memory_order_seq_cst)) == seen) {
        waiter self;
        self.kind = omp_wait;
        w->waiters.wait(w->lock, self);
        w->lock.lock();
      }
      w->sleeping.store(false, std::memory_order_relaxed);
      w->lock.unlock();
    }
    seen = g;
    if (g_hot->stop.load(std::memory_order_acquire)) return;
    member_arg* m = w->job;
    w->hdr.cur = m->hdr.cur;
    run_member(&m->hdr);  // m and its region may be gone once this returns
    w->hdr.cur = nullptr;
  }
}

void hot_post(hot_worker& w, member_arg* job) {
  w.job = job;
  w.gen.fetch_add(1, std::memory_order_seq_cst);
  if (w.sleeping.load(std::memory_order_seq_cst)) {
    w.lock.lock();
    while (wakeup wk = w.waiters.take()) wk();
    w.lock.unlock();
  }
}

// Gives the hot team a worker on every stream of rank `first` and above that has none.
void add_hot_workers(hot_team& h, std::size_t first) {
  const std::size_t streams = static_cast<std::size_t>(std::max(1, execution_stream::count()));
  if (h.workers.size() < streams) h.workers.resize(streams);
  for (std::size_t r = std::max<std::size_t>(first, 1); r < streams; ++r) {
    execution_stream* s = execution_stream::by_rank(static_cast<int>(r));
    if (!s || h.workers[r]) continue;
    auto w = std::make_unique<hot_worker>();
    w->hdr.run = &hot_loop;
    w->stream = s;
    hot_worker& placed = *(h.workers[r] = std::move(w));
    // Pinned: member w's threadprivate variables are its stream's, and the scheduler steals.
    ult u = ult::create(s->main_pool(), &unit_entry, &placed.hdr);
    u.pin_to(s);
    u.detach();
  }
}

// Starts the workers once weft runs (streams 1..count-1).
void start_hot_team() {
  auto* h = new hot_team;
  g_hot = h;
  add_hot_workers(*h, 1);
}

// Gives a top-level team of `n` a stream per member, as libgomp gives it a thread per member:
// OpenMP lets the members of a team wait for each other outside its constructs (a flag polled
// between flushes, example a.18.1 of the OpenMP examples), which members sharing a stream would
// never finish, and GCC's threadprivate variables belong to the kernel thread. The streams added
// stay until weft is finalised; one beyond the CPUs shares a core, as libgomp's threads then do.
// The caller holds the hot team (hot_team::busy), so no other region reads its workers.
void widen_for(int n) {
  const int have = execution_stream::count();
  if (n <= have) return;
  try {
    for (int r = have; r < n; ++r) execution_stream::create();
  } catch (const std::exception& e) {
    fail_exit("Thread creation failed: a team of " + std::to_string(n) + " threads needs " +
              std::to_string(n - have) + " more execution streams: " + e.what());
  }
  add_hot_workers(*g_hot, static_cast<std::size_t>(have));
  if (n > online_cpus()) g_oversubscribed.store(true, std::memory_order_relaxed);
}

// Ends the workers before weft is finalised (they would keep its streams busy).
void stop_hot_team() {
  if (!g_hot) return;
  g_hot->stop.store(true, std::memory_order_release);
  for (auto& w : g_hot->workers) {
    if (w) hot_post(*w, nullptr);
  }
}

// Frees the hot team once weft was finalised (its workers have ended).
void delete_hot_team() {
  delete g_hot;
  g_hot = nullptr;
}

// Which outlined functions were seen to block (so their inner teams need ULTs): a small
// open-addressing table; 0: unknown, 1: never blocked in a ULT run, 2: blocks.
constexpr std::size_t fn_table_size = 1024;
std::atomic<void (*)(void*)> g_fn_keys[fn_table_size];
std::atomic<int> g_fn_state[fn_table_size];

std::atomic<int>* fn_state(void (*fn)(void*)) {
  std::size_t h = (reinterpret_cast<std::uintptr_t>(fn) >> 4) % fn_table_size;
  for (std::size_t i = 0; i < fn_table_size; ++i, h = (h + 1) % fn_table_size) {
    void (*k)(void*) = g_fn_keys[h].load(std::memory_order_acquire);
    if (k == fn) return &g_fn_state[h];
    if (!k) {
      void (*expected)(void*) = nullptr;
      if (g_fn_keys[h].compare_exchange_strong(expected, fn) || expected == fn)
        return &g_fn_state[h];
    }
  }
  return nullptr;  // full: such functions always get ULTs
}

int team_width(context& enc, unsigned requested, bool active_allowed) {
  const globals& g = settings();
  int n = requested ? static_cast<int>(requested) : enc.icv.nthreads;
  if (!active_allowed) return 1;
  n = std::min(n, enc.icv.thread_limit);
  if (enc.icv.dynamic) n = std::min(n, std::max(1, g.streams));
  return std::max(1, n);
}

// Builds the team's implicit tasks.
void init_members(team& t, context& enc, int level, int active_level, int width_product) {
  for (int i = 0; i < t.nthreads; ++i) {
    context& c = t.members[static_cast<std::size_t>(i)];
    c.t = &t;
    c.parent = &enc;
    c.num = i;
    c.level = level;
    c.active_level = active_level;
    c.icv = enc.icv;
    // The next level's nthreads-var comes from the OMP_NUM_THREADS list.
    if (enc.icv.nthreads_list &&
        enc.icv.list_pos < static_cast<int>(enc.icv.nthreads_list->size())) {
      c.icv.nthreads = (*enc.icv.nthreads_list)[static_cast<std::size_t>(enc.icv.list_pos)];
      c.icv.list_pos = enc.icv.list_pos + 1;
    }
    c.width_product = width_product;
    c.ws_seq = 0;
    c.single_seq = 0;
    c.ws = nullptr;
    c.cursor = {};
    c.have_chunk = false;
    c.final_task = false;
    c.legacy = nullptr;
    c.stack_floor = context::unmeasured_stack_floor;  // this region's member may run elsewhere
  }
}

}  // namespace

void note_blocking_learning(context& c) {
  // Read before writing: every member of a team that waits reaches this, and a store each time
  // would keep the flag's line moving between their streams.
  if (!c.t->blocking_flag->load(std::memory_order_relaxed)) {
    c.t->blocking_flag->store(true, std::memory_order_relaxed);
  }
  if (this_unit::is_tasklet()) {
    fatal(
        "a member of an inner team run as tasklets (WEFT_OMP_INNER=tasklet) reached a construct "
        "that waits (barrier, taskwait, critical, ordered, a nested team, a lock); this region "
        "did not wait on its first run, which is how it was chosen for tasklets. Run with "
        "WEFT_OMP_INNER=ult");
  }
}

namespace {

// A region between its opening (members launched, the caller switched to member 0) and its
// closing (the caller waits for the other members).
struct open_region {
  explicit open_region(int n) : t(n, nullptr), args(static_cast<std::size_t>(n > 1 ? n - 1 : 0)) {}
  team t;
  region r{};
  std::vector<member_arg> args;
  context** slot = nullptr;
  context* saved = nullptr;
  std::atomic<int>* learned = nullptr;
  bool tasklets = false;
  bool top = false;
  bool hot = false;    // members run by the hot team
  bool outer = false;  // opened outside any region (counted in g_outer_busy)
  int reserved = 0;    // threads counted in g_threads_busy for this team (thread-limit-var)
  std::atomic<bool> blocked{false};
  // A top-level team wider than the streams whose members share them (see starvation_watch).
  bool watched = false;
  // Member 0 runs on a ULT of its own (`first`) while the encountering primary ULT waits (see
  // open()).
  bool first_detached = false;
  member_arg first{};
};

// Whether the program keeps thread-local storage of its own (GCC's threadprivate variables,
// C++ thread_local, __thread): a PT_TLS segment in the main program or in a library outside the
// system's library directories (the C and C++ runtimes, and the libraries hwloc and others load,
// live there), other than weft's own. Such a program gets a stream per member of a wide
// top-level team at once, since members sharing a stream would share those variables. A
// library installed in /usr/lib that keeps threadprivate variables is not seen.
bool program_has_tls() {
  static const bool has = [] {
    bool found = false;
    dl_iterate_phdr(
        [](dl_phdr_info* info, std::size_t, void* out) -> int {
          bool tls = false;
          for (int i = 0; i < info->dlpi_phnum; ++i) {
            if (info->dlpi_phdr[i].p_type == PT_TLS && info->dlpi_phdr[i].p_memsz > 0) tls = true;
          }
          if (!tls) return 0;
          const std::string_view path(info->dlpi_name ? info->dlpi_name : "");
          const std::size_t slash = path.rfind('/');
          const std::string_view name =
              slash == std::string_view::npos ? path : path.substr(slash + 1);
          static constexpr std::string_view system_dirs[] = {"/lib/", "/usr/lib/", "/lib64/",
                                                             "/usr/lib64/"};
          bool system = false;
          for (std::string_view d : system_dirs) system = system || path.starts_with(d);
          const bool ours = name.starts_with("libweft") || name.starts_with("libgomp.so");
          // The main program has an empty name.
          if (!system && !ours) *static_cast<bool*>(out) = true;
          return 0;
        },
        &found);
    return found;
  }();
  return has;
}

// Starvation watch. A top-level team wider than the streams, in a program without thread-local
// storage of its own, runs its members as ULTs on the streams it has (cheaper than kernel
// threads when they wait at OpenMP constructs, as nested benchmarks do). But OpenMP also lets
// members wait for each other by polling a flag between flushes (example a.18.1), and a member
// spinning so never lets its stream run the team-mates queued behind it. While such a team is
// open, a thread of its own looks at the streams every `tick`: a stream that has units queued
// and ran none during the whole tick is stuck in one, and for each such stream one more stream
// is started (up to the widest watched team), which steals the queued members (the default
// scheduler steals). libgomp would have given every member a thread from the start; a team whose
// members do long work one after another also ends up with more streams, at what libgomp's
// threads cost.
struct starvation_watch {
  static constexpr std::chrono::milliseconds tick{20};
  std::mutex lock;
  std::condition_variable wake;
  std::vector<open_region*> regions;  // guarded by lock
  std::vector<std::uint64_t> runs;    // units_run of each stream rank at the last look
  bool started = false;               // guarded by lock
  bool asleep = false;                // guarded by lock: waiting for a team, not a tick
  // Ticks without a watched team before the thread sleeps until the next one: programs open
  // wide teams back to back, and waking the thread for each would cost every region a futex.
  static constexpr int linger = 50;
};

starvation_watch& the_watch() {
  static auto* w = new starvation_watch;  // never destroyed: its thread outlives main()
  return *w;
}

// Adds a stream for each stream stuck since the last look. Called with the watch's lock held
// while some watched team is open (so weft runs).
void relieve(starvation_watch& w) {
  int widest = 0;
  for (const open_region* o : w.regions) widest = std::max(widest, o->t.nthreads);
  int stuck = 0;
  for (const stream_stats& s : weft::stats().streams) {
    if (s.rank < 0) continue;
    const auto rank = static_cast<std::size_t>(s.rank);
    if (w.runs.size() <= rank) w.runs.resize(rank + 1, ~std::uint64_t{0});
    execution_stream* x = execution_stream::by_rank(s.rank);
    if (x && !x->main_pool().empty() && s.units_run == w.runs[rank]) ++stuck;
    w.runs[rank] = s.units_run;
  }
  const int room = widest - execution_stream::count();
  for (int i = 0; i < std::min(stuck, room); ++i) {
    try {
      execution_stream::create();
    } catch (const std::exception& e) {
      fail_exit(std::string("Thread creation failed: members of a team of ") +
                std::to_string(widest) + " wait for a stream: " + e.what());
    }
  }
  if (execution_stream::count() > online_cpus()) {
    g_oversubscribed.store(true, std::memory_order_relaxed);
  }
}

void watch_loop() {
  starvation_watch& w = the_watch();
  std::unique_lock hold(w.lock);
  int idle_ticks = 0;
  for (;;) {
    if (w.regions.empty() && idle_ticks >= starvation_watch::linger) {
      w.runs.clear();
      w.asleep = true;
      w.wake.wait(hold, [&] { return !w.regions.empty(); });
      w.asleep = false;
      idle_ticks = 0;
    }
    // A whole tick between looks, whatever teams open and close meanwhile.
    const auto deadline = std::chrono::steady_clock::now() + starvation_watch::tick;
    while (w.wake.wait_until(hold, deadline) != std::cv_status::timeout) {
    }
    if (w.regions.empty()) {
      ++idle_ticks;
      w.runs.clear();  // counts over a tick without a team say nothing
    } else {
      idle_ticks = 0;
      try {
        relieve(w);
      } catch (const std::exception&) {
        // The counters were not readable this time (weft::stats()); look again next tick.
      }
    }
  }
}

void watch_region(open_region& o) {
  starvation_watch& w = the_watch();
  const std::lock_guard hold(w.lock);
  w.regions.push_back(&o);
  if (!w.started) {
    std::thread(&watch_loop).detach();
    w.started = true;
  }
  if (w.asleep) w.wake.notify_one();
}

void unwatch_region(open_region& o) {
  starvation_watch& w = the_watch();
  const std::lock_guard hold(w.lock);
  std::erase(w.regions, &o);
}

// Regions are recycled: a team of n with its members, work-share slots and unit arguments is
// several kilobytes, which a region of an empty body would otherwise allocate and clear each
// time. A few per width are kept per kernel thread (any thread may return one).
constexpr int cached_widths = 65;
constexpr std::size_t cached_per_width = 32;
thread_local std::vector<std::unique_ptr<open_region>> t_region_cache[cached_widths];

struct region_deleter {
  void operator()(open_region* o) const noexcept {
    const int n = o->t.nthreads;
    if (n < cached_widths && t_region_cache[n].size() < cached_per_width) {
      t_region_cache[n].emplace_back(o);
    } else {
      delete o;
    }
  }
};
using region_ptr = std::unique_ptr<open_region, region_deleter>;

region_ptr take_region(int n, context& enc) {
  open_region* o = nullptr;
  if (n < cached_widths && !t_region_cache[n].empty()) {
    o = t_region_cache[n].back().release();
    t_region_cache[n].pop_back();
    o->t.reset(&enc);
    o->r.pending.store(0, std::memory_order_relaxed);
    o->r.done = false;
    o->learned = nullptr;
    o->reserved = 0;
    o->watched = false;
    o->first_detached = false;
    o->tasklets = false;
    o->hot = false;
    o->blocked.store(false, std::memory_order_relaxed);
  } else {
    o = new open_region(n);
    o->t.parent = &enc;
  }
  return region_ptr(o);
}

// A ULT takes its stack when it first runs, so a member that cannot get one never runs and its
// team would wait for it at the first barrier. Before a wide team starts, the address space for
// all its stacks is reserved once and released: where that fails the program ends with one line,
// as libgomp's "Thread creation failed" (teams of up to 64 do not pay for the check).
void check_stacks(int n) {
  if (n <= 64) return;
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t stack = ult_stack_size() + 64 * 1024 + page;
  const std::size_t members = static_cast<std::size_t>(n - 1);
  const std::size_t bytes = members > SIZE_MAX / stack ? SIZE_MAX : members * stack;
  void* p = bytes == SIZE_MAX ? MAP_FAILED
                              : mmap(nullptr, bytes, PROT_NONE,
                                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    const int e = errno;
    fail_exit("Thread creation failed: no address space for the stacks of a team of " +
              std::to_string(n) + " threads (" + std::to_string(bytes >> 20) +
              " MiB): " + std::strerror(e));
  }
  munmap(p, bytes);
}

// The bind-var of a new team's members (libgomp's rule): the encountering task's, replaced by
// the proc_bind clause (`clause`, 0: none) unless either is false, and by OMP_PROC_BIND's entry
// for the new level where the list has one.
int member_bind(const context& enc, int clause) {
  int bind = enc.icv.bind;
  if (bind != 0 && clause != 0) bind = clause;
  const std::vector<int>& list = settings().bind_list;
  const std::size_t level = static_cast<std::size_t>(enc.level) + 1;
  if (level < list.size()) bind = list[level];
  return bind;
}

// Threads beyond the initial one that teams use now, counted only while a thread-limit-var is
// set (OMP_THREAD_LIMIT, a teams construct's thread_limit): a nested team gets no more threads
// than the limit leaves, as libgomp counts its busy threads. One count for the process: the
// contention groups of several initial threads (pthreads of the program) share it.
std::atomic<int> g_threads_busy{0};

// Takes up to `want` threads for a new team under the encountering task's thread limit.
int reserve_threads(const context& enc, int want) {
  if (want <= 0 || enc.icv.thread_limit == INT_MAX) return std::max(want, 0);
  int busy = g_threads_busy.load(std::memory_order_relaxed);
  int take = 0;
  do {
    take = std::clamp(enc.icv.thread_limit - 1 - busy, 0, want);
  } while (!g_threads_busy.compare_exchange_weak(busy, busy + take, std::memory_order_relaxed));
  return take;
}

region_ptr open(void (*fn)(void*), void* data, unsigned nthreads, work_share* preset, int proc_bind,
                bool caller_runs_first) {
  ensure_runtime();
  context** slot = current_slot();
  context& enc = **slot;
  const bool active_allowed = enc.active_level < enc.icv.max_active_levels;
  const int wanted = team_width(enc, nthreads, active_allowed);
  const int reserved = reserve_threads(enc, wanted - 1);
  const int n = reserved + 1;
  if (n > 1) note_blocking(enc);
  region_ptr o;
  try {
    o = take_region(n, enc);
  } catch (const std::bad_alloc&) {
    // As libgomp: a team that cannot be allocated ends the program with one line.
    fail_exit("Out of memory creating a team of " + std::to_string(n) + " threads");
  }
  team& t = o->t;
  const int active_level = enc.active_level + (n > 1 ? 1 : 0);
  init_members(t, enc, enc.level + 1, active_level,
               static_cast<int>(
                   std::min<long>(INT_MAX, static_cast<long>(std::max(1, enc.width_product)) * n)));
  const int bind = member_bind(enc, proc_bind);
  for (context& c : t.members) c.icv.bind = bind;
  if (preset) {
    // A combined parallel loop: every member starts at construct 1, already set up in slot 0.
    work_share& ws = t.ws[0];
    ws.up = preset->up;
    ws.start = preset->start;
    ws.incr = preset->incr;
    ws.end = preset->end;
    ws.ordered = false;
    ws.copy = nullptr;
    ws.loop.start_like(preset->loop);
    ws.ord_turn.store(0, std::memory_order_relaxed);
    ws.tag.store(1, std::memory_order_relaxed);
    ws.users.store(n, std::memory_order_relaxed);
    for (context& c : t.members) {
      c.ws_seq = 1;
      c.ws = &ws;
    }
  }
  o->reserved = enc.icv.thread_limit == INT_MAX ? 0 : reserved;
  o->outer = enc.level == 0;
  if (o->outer) g_outer_busy.fetch_add(1, std::memory_order_relaxed);
  o->slot = slot;
  o->r.fn = fn;
  o->r.data = data;
  o->r.t = &t;
  o->r.pending.store(n - 1, std::memory_order_relaxed);
  o->top = enc.active_level == 0;
  if (n > 1) {
    const globals& g = settings();
    if (!o->top && g.inner == inner_units::tasklet) {
      // Inner teams as tasklets for functions whose first (ULT) run never waited.
      o->learned = fn_state(fn);
      o->tasklets = o->learned && o->learned->load(std::memory_order_relaxed) == 1;
      t.blocking_flag = &o->blocked;
    }
    if (!o->tasklets) check_stacks(n);
    execution_stream* self = this_unit::stream();
    bool expected = false;
    const bool hot = o->top && g_hot &&
                     g_hot->busy.compare_exchange_strong(expected, true, std::memory_order_acquire);
    const bool widen = g.widen && g.weft_owned && n > execution_stream::count();
    if (hot && widen && program_has_tls()) widen_for(n);
    if (hot && g_hot->workers.size() < static_cast<std::size_t>(execution_stream::count())) {
      add_hot_workers(*g_hot, 1);  // streams the starvation watch added
    }
    o->watched = o->top && widen && !program_has_tls();
    // A member of a watched team may spin until a team-mate runs (example a.18.1), and the watch
    // relieves a stuck stream by adding streams that steal its queued members. The primary ULT
    // cannot be stolen (its stack is its thread's): as member 0 it would wait behind such a
    // spinner on its own stream for good. So there member 0 runs on a ULT like the others, and
    // the primary ULT only waits for the region's end.
    o->first_detached =
        o->watched && !caller_runs_first && !o->tasklets && this_unit::current() == g_primary_unit;
    if (o->first_detached) o->r.pending.fetch_add(1, std::memory_order_relaxed);
    const int streams = std::max(1, execution_stream::count());
    const int base = self ? self->rank() : 0;
    // Members go round-robin over the streams while the enclosing teams do not cover them all;
    // once they do, a nested team stays in its caller's stream (the others are busy).
    const bool spread = std::max(1, enc.width_product) < streams;
    pool& local = self ? self->main_pool() : execution_stream::primary().main_pool();
    if (hot) {
      const int workers = static_cast<int>(g_hot->workers.size());
      bool all = n <= workers && workers == streams;
      for (int w = 1; w < n && all; ++w)
        all = g_hot->workers[static_cast<std::size_t>((base + w) % streams)] != nullptr;
      if (all) {
        o->hot = true;
        for (int w = 1; w < n; ++w) {
          member_arg& a = o->args[static_cast<std::size_t>(w - 1)];
          a.hdr.cur = &t.members[static_cast<std::size_t>(w)];
          a.hdr.run = &run_member;
          a.r = &o->r;
          hot_post(*g_hot->workers[static_cast<std::size_t>((base + w) % streams)], &a);
        }
        o->saved = std::exchange(*slot, &t.members[0]);
        if (g.display_affinity) display_affinity_if_changed(t.members[0]);
        return o;
      }
      g_hot->busy.store(false, std::memory_order_release);
    }
    for (int w = 1; w < n; ++w) {
      member_arg& a = o->args[static_cast<std::size_t>(w - 1)];
      a.hdr.cur = &t.members[static_cast<std::size_t>(w)];
      a.hdr.run = &run_member;
      a.r = &o->r;
      pool* p = &local;
      if (spread) {
        if (execution_stream* s = execution_stream::by_rank((base + w) % streams))
          p = &s->main_pool();
      }
      try {
        if (o->tasklets) {
          tasklet::create_detached(*p, &unit_entry, &a);
        } else {
          ult::create_detached(*p, &unit_entry, &a);
        }
      } catch (const std::exception& e) {
        // As libgomp's "Thread creation failed": the members started cannot be taken back.
        fail_exit("Thread creation failed for member " + std::to_string(w) + " of a team of " +
                  std::to_string(n) + ": " + e.what());
      }
    }
    if (o->first_detached) {
      member_arg& a = o->first;
      a.hdr.cur = &t.members[0];
      a.hdr.run = &run_member;
      a.r = &o->r;
      try {
        ult::create_detached(local, &unit_entry, &a);
      } catch (const std::exception& e) {
        fail_exit("Thread creation failed for member 0 of a team of " + std::to_string(n) + ": " +
                  e.what());
      }
    }
    if (o->watched) watch_region(*o);
  }
  o->saved = std::exchange(*slot, &t.members[0]);
  if (settings().display_affinity) display_affinity_if_changed(t.members[0]);
  return o;
}

void close(open_region& o) {
  // A detached member 0 finishes its children on its own ULT (run_member), perhaps still now.
  if (!o.first_detached) finish_children(o.t.members[0]);
  *o.slot = o.saved;
  struct outer_done {
    bool outer;
    ~outer_done() {
      if (outer) g_outer_busy.fetch_sub(1, std::memory_order_relaxed);
    }
  } done{o.outer};
  if (o.t.nthreads == 1) return;
  const globals& g = settings();
  wait_region(o.r, o.top && o.t.nthreads <= g.streams ? g.spin : 0);
  if (o.watched) {
    unwatch_region(o);
    o.watched = false;
  }
  if (o.reserved) g_threads_busy.fetch_sub(o.reserved, std::memory_order_relaxed);
  if (o.hot) g_hot->busy.store(false, std::memory_order_release);
  if (o.learned && !o.tasklets) {
    // "Blocks" is final; "never blocked" is recorded only while nothing is known, so that a run
    // that waited is never overwritten by a concurrent one that did not.
    if (o.blocked.load(std::memory_order_relaxed)) {
      o.learned->store(2, std::memory_order_relaxed);
    } else {
      int unknown = 0;
      o.learned->compare_exchange_strong(unknown, 1, std::memory_order_relaxed);
    }
  }
}

}  // namespace

void run_parallel(void (*fn)(void*), void* data, unsigned nthreads, unsigned flags,
                  work_share* preset) {
  // proc_bind (flags & 7) sets the members' bind-var; members are placed round-robin whatever
  // it says (weft's streams are bound once, from OMP_PROC_BIND/OMP_PLACES).
  region_ptr o = open(fn, data, nthreads, preset, static_cast<int>(flags & 7), false);
  if (!o->first_detached) fn(data);
  close(*o);
}

void* legacy_open(void (*fn)(void*), void* data, unsigned nthreads, work_share* preset) {
  return open(fn, data, nthreads, preset, 0, true).release();
}

void legacy_close(void* region) {
  region_ptr p(static_cast<open_region*>(region));
  close(*p);
}

}  // namespace weft::omp

// ---- the GOMP entry points of this file ----------------------------------------------------

using namespace weft;
using namespace weft::omp;

extern "C" {

void GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags) {
  run_parallel(fn, data, num_threads, flags, nullptr);
}

// The OpenMP 2.5 form: the caller runs fn itself between start and end; the team's other
// members run as usual. Kept for binaries built by old GCC versions.
void GOMP_parallel_start(void (*fn)(void*), void* data, unsigned num_threads) {
  void* o = legacy_open(fn, data, num_threads, nullptr);
  current().legacy = o;
}

void GOMP_parallel_end(void) {
  context& c = current();
  legacy_close(std::exchange(c.legacy, nullptr));
}

void GOMP_barrier(void) {
  team_wait(current());
}

bool GOMP_barrier_cancel(void) {
  context& c = current();
  if (!c.t) return false;
  note_blocking(c);
  const slot_pause pause(c);
  finish_children(c);
  return c.t->wait_barrier(c.active_level == 1 ? spin_rounds() : 0);
}

void GOMP_teams_reg(void (*fn)(void*), void* data, unsigned num_teams, unsigned thread_limit,
                    unsigned flags) {
  (void)flags;
  // Host teams as libgomp 12 runs them: the league's teams one after another on the encountering
  // thread (num_teams: the clause's upper bound; 0: nteams-var, else 3), each seeing its team
  // number; thread_limit (or teams-thread-limit-var) bounds the teams' parallel regions.
  context& c = current();
  const globals& g = settings();
  const icvs saved = c.icv;
  if (thread_limit == 0) thread_limit = static_cast<unsigned>(g.teams_thread_limit.load());
  if (thread_limit)
    c.icv.thread_limit = static_cast<int>(std::min<unsigned>(thread_limit, INT_MAX));
  if (num_teams == 0) {
    const int n = g.nteams.load(std::memory_order_relaxed);
    num_teams = n > 0 ? static_cast<unsigned>(n) : 3;
  }
  c.icv.num_teams = static_cast<int>(std::min<unsigned>(num_teams, INT_MAX));
  for (unsigned i = 0; i < num_teams; ++i) {
    c.icv.team_num = static_cast<int>(i);
    fn(data);
  }
  c.icv.thread_limit = saved.thread_limit;
  c.icv.team_num = saved.team_num;
  c.icv.num_teams = saved.num_teams;
}

}  // extern "C"
