// The omp_* user API of OpenMP 4.5 (and the common 5.0 additions libgomp 12 exports), with the
// C types of GCC's omp.h: thread, team and level queries, ICV controls, timing, locks, places,
// devices (the host only). The memory allocators are in allocator.cpp.
#include "internal.hpp"

#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace weft::omp {
namespace {

// omp.h's opaque lock types: 4 bytes, and 8 + sizeof(void*) bytes aligned to a pointer.
struct nest_lock {
  std::atomic<std::uint32_t> word;
  int count;                 // touched by the owner only
  std::atomic<void*> owner;  // read by everyone: only the owner can find itself there
};
static_assert(sizeof(nest_lock) == 16);

std::atomic<std::uint32_t>& simple(void* lock) {
  return *static_cast<std::atomic<std::uint32_t>*>(lock);
}

// The owner of a nest lock is a task (OpenMP 4.5 section 3.3): its context.
void* task_identity() {
  return &current();
}

context* at_level(context& c, int level) {
  if (level < 0 || level > c.level) return nullptr;
  context* x = &c;
  while (x && x->level > level) x = x->parent;
  return x;
}

int cpus_online() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return CPU_COUNT(&set);
  return static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
}

// Places are the streams' bindings (one place per stream when weft binds them).
const std::vector<int>* place_cpus(int place) {
  ensure_runtime();
  execution_stream* s = execution_stream::by_rank(place);
  return s && !s->cpus().empty() ? &s->cpus() : nullptr;
}

int num_places() {
  ensure_runtime();
  const int streams = execution_stream::count();
  return place_cpus(0) ? streams : 0;
}

}  // namespace
}  // namespace weft::omp

using namespace weft;
using namespace weft::omp;

extern "C" {

// ---- threads, teams, levels --------------------------------------------------------------

void omp_set_num_threads(int n) {
  current().icv.nthreads = n > 0 ? n : 1;
}
int omp_get_num_threads(void) {
  const context& c = current();
  return c.t ? c.t->nthreads : 1;
}
int omp_get_max_threads(void) {
  return current().icv.nthreads;
}
int omp_get_thread_num(void) {
  return current().num;
}
int omp_get_num_procs(void) {
  return cpus_online();
}
int omp_in_parallel(void) {
  return current().active_level > 0;
}
void omp_set_dynamic(int d) {
  current().icv.dynamic = d != 0;
}
int omp_get_dynamic(void) {
  return current().icv.dynamic;
}
void omp_set_nested(int n) {
  current().icv.max_active_levels = n ? 255 : 1;
}
int omp_get_nested(void) {
  return current().icv.max_active_levels > 1;
}
int omp_get_level(void) {
  return current().level;
}
int omp_get_active_level(void) {
  return current().active_level;
}
int omp_get_ancestor_thread_num(int level) {
  context* x = at_level(current(), level);
  return x ? x->num : -1;
}
int omp_get_team_size(int level) {
  context* x = at_level(current(), level);
  if (!x) return -1;
  return x->t && x->level > 0 ? x->t->nthreads : 1;
}
int omp_get_thread_limit(void) {
  return current().icv.thread_limit;
}
void omp_set_max_active_levels(int n) {
  if (n >= 0) current().icv.max_active_levels = n > 255 ? 255 : n;
}
int omp_get_max_active_levels(void) {
  return current().icv.max_active_levels;
}
int omp_get_supported_active_levels(void) {
  return 255;
}
void omp_set_schedule(int kind, int chunk) {
  icvs& icv = current().icv;
  const int k = kind & 0x7fffffff;
  if (k < 1 || k > 4) return;
  icv.run_sched = static_cast<sched_kind>(k);
  icv.run_chunk = chunk > 0 ? chunk : 0;
}
void omp_get_schedule(int* kind, int* chunk) {
  const icvs& icv = current().icv;
  *kind = static_cast<int>(icv.run_sched);
  *chunk = icv.run_chunk ? static_cast<int>(icv.run_chunk)
                         : (icv.run_sched == sched_kind::static_ ? 0 : 1);
}
int omp_in_final(void) {
  return current().final_task;
}
int omp_get_cancellation(void) {
  return settings().cancellation;
}
int omp_get_proc_bind(void) {
  return current().icv.bind;
}
int omp_get_max_task_priority(void) {
  return settings().max_task_priority;
}

// ---- time ---------------------------------------------------------------------------------

double omp_get_wtime(void) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
double omp_get_wtick(void) {
  timespec ts{};
  clock_getres(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// ---- locks --------------------------------------------------------------------------------

void omp_init_lock(void* lock) {
  new (lock) std::atomic<std::uint32_t>(0);
}
void omp_init_lock_with_hint(void* lock, int) {
  omp_init_lock(lock);
}
void omp_destroy_lock(void*) {}
void omp_set_lock(void* lock) {
  std::atomic<std::uint32_t>& w = simple(lock);
  std::uint32_t expected = 0;
  if (w.compare_exchange_strong(expected, 1, std::memory_order_acquire)) return;
  note_blocking(current());
  lock_word(w);
}
void omp_unset_lock(void* lock) {
  unlock_word(simple(lock));
}
int omp_test_lock(void* lock) {
  std::uint32_t expected = 0;
  return simple(lock).compare_exchange_strong(expected, 1, std::memory_order_acquire);
}

void omp_init_nest_lock(void* lock) {
  new (lock) nest_lock{{0}, 0, nullptr};
}
void omp_init_nest_lock_with_hint(void* lock, int) {
  omp_init_nest_lock(lock);
}
void omp_destroy_nest_lock(void*) {}
void omp_set_nest_lock(void* lock) {
  auto* l = static_cast<nest_lock*>(lock);
  void* me = task_identity();
  if (l->owner.load(std::memory_order_relaxed) == me) {
    ++l->count;
    return;
  }
  std::uint32_t expected = 0;
  if (!l->word.compare_exchange_strong(expected, 1, std::memory_order_acquire)) {
    note_blocking(current());
    lock_word(l->word);
  }
  l->owner.store(me, std::memory_order_relaxed);
  l->count = 1;
}
void omp_unset_nest_lock(void* lock) {
  auto* l = static_cast<nest_lock*>(lock);
  if (--l->count == 0) {
    l->owner.store(nullptr, std::memory_order_relaxed);
    unlock_word(l->word);
  }
}
int omp_test_nest_lock(void* lock) {
  auto* l = static_cast<nest_lock*>(lock);
  void* me = task_identity();
  if (l->owner.load(std::memory_order_relaxed) == me) return ++l->count;
  std::uint32_t expected = 0;
  if (!l->word.compare_exchange_strong(expected, 1, std::memory_order_acquire)) return 0;
  l->owner.store(me, std::memory_order_relaxed);
  l->count = 1;
  return 1;
}

// ---- places ---------------------------------------------------------------------------------

int omp_get_num_places(void) {
  return num_places();
}
int omp_get_place_num_procs(int place) {
  if (place < 0 || place >= num_places()) return 0;
  return static_cast<int>(place_cpus(place)->size());
}
void omp_get_place_proc_ids(int place, int* ids) {
  if (place < 0 || place >= num_places()) return;
  const std::vector<int>& cpus = *place_cpus(place);
  std::copy(cpus.begin(), cpus.end(), ids);
}
int omp_get_place_num(void) {
  if (num_places() == 0) return -1;
  execution_stream* s = this_unit::stream();
  return s ? s->rank() : -1;
}
int omp_get_partition_num_places(void) {
  return num_places();
}
void omp_get_partition_place_nums(int* nums) {
  const int n = num_places();
  for (int i = 0; i < n; ++i) nums[i] = i;
}

// ---- devices and teams: the host only -----------------------------------------------------

void omp_set_default_device(int) {}
int omp_get_default_device(void) {
  return 0;
}
int omp_get_num_devices(void) {
  return 0;
}
int omp_get_num_teams(void) {
  return current().icv.num_teams;
}
int omp_get_team_num(void) {
  return current().icv.team_num;
}
int omp_is_initial_device(void) {
  return 1;
}
int omp_get_initial_device(void) {
  return 0;
}
int omp_get_device_num(void) {
  return 0;
}

void* omp_target_alloc(std::size_t size, int device) {
  return device == 0 ? std::malloc(size) : nullptr;
}
void omp_target_free(void* p, int device) {
  if (device == 0) std::free(p);
}
int omp_target_is_present(const void*, int device) {
  return device == 0;
}
int omp_target_memcpy(void* dst, const void* src, std::size_t length, std::size_t dst_offset,
                      std::size_t src_offset, int dst_device, int src_device) {
  if (dst_device != 0 || src_device != 0) return -1;
  std::memcpy(static_cast<char*>(dst) + dst_offset, static_cast<const char*>(src) + src_offset,
              length);
  return 0;
}
int omp_target_associate_ptr(const void*, const void*, std::size_t, std::size_t, int) {
  return -1;  // no device memory to associate with
}
int omp_target_disassociate_ptr(const void*, int) {
  return -1;
}
int omp_target_memcpy_rect(void*, const void*, std::size_t, int, const std::size_t*,
                           const std::size_t*, const std::size_t*, const std::size_t*,
                           const std::size_t*, int, int) {
  unsupported("omp_target_memcpy_rect");
}

// Both kinds (soft and hard) end weft's streams when this library started them; the next region
// starts them again. Threadprivate copies of the other streams go with them, as with libgomp.
int omp_pause_resource(int kind, int device) {
  if (kind != 1 && kind != 2) return -1;  // omp_pause_soft, omp_pause_hard
  if (device != omp_get_initial_device()) return -1;
  return pause_host();
}
int omp_pause_resource_all(int kind) {
  if (kind != 1 && kind != 2) return -1;
  return pause_host();
}

void omp_display_env(int) {
  const globals& g = settings();
  std::fprintf(stderr,
               "\nOPENMP DISPLAY ENVIRONMENT BEGIN\n  _OPENMP = '201511'\n  OMP_NUM_THREADS = "
               "'%d'\n  OMP_MAX_ACTIVE_LEVELS = '%d'\n  WEFT_OMP_STREAMS = '%d'\nOPENMP DISPLAY "
               "ENVIRONMENT END\n",
               g.initial.nthreads, g.initial.max_active_levels, g.streams);
}

}  // extern "C"

extern "C" {

// ---- OpenMP 5.0/5.1 routines libgomp 12 exports ----------------------------------------------

int omp_get_max_teams(void) {
  return settings().nteams.load(std::memory_order_relaxed);
}
void omp_set_num_teams(int n) {
  if (n >= 0) settings().nteams.store(n, std::memory_order_relaxed);
}
int omp_get_teams_thread_limit(void) {
  return settings().teams_thread_limit.load(std::memory_order_relaxed);
}
void omp_set_teams_thread_limit(int n) {
  if (n >= 0) settings().teams_thread_limit.store(n, std::memory_order_relaxed);
}
void omp_fulfill_event(std::uintptr_t event) {
  fulfill_event(event);
}

}  // extern "C"
