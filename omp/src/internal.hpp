// libweft-omp's internal state: internal control variables, teams, the per-task context every
// GOMP_* and omp_* entry point works on, the worksharing slots, waiting and locks.
#pragma once

#include <weft/parallel/dispatch.hpp>
#include <weft/parallel/doacross.hpp>
#include <weft/parallel/iteration_space.hpp>
#include <weft/parallel/team_barrier.hpp>
#include <weft/weft.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace weft::omp {

/// Schedule kinds, numbered as omp_sched_t (omp.h) and GCC's GOMP_loop_start `sched` argument.
enum class sched_kind : int { runtime = 0, static_ = 1, dynamic = 2, guided = 3, auto_ = 4 };

/// How a thread waits for its team-mates (OMP_WAIT_POLICY).
enum class wait_policy { unset, active, passive };

/// What inner teams' members are made of (WEFT_OMP_INNER).
enum class inner_units { ult, tasklet };

/// The internal control variables a task carries (OpenMP 4.5, section 2.3).
/// Words first, then the narrower fields: every explicit task copies the whole set.
struct icvs {
  const std::vector<int>* nthreads_list = nullptr;  ///< OMP_NUM_THREADS list, or null
  long run_chunk = 0;                               ///< run-sched-var chunk (0: default)
  std::uintptr_t def_allocator = 1;  ///< def-allocator-var (omp_default_mem_alloc, OMP_ALLOCATOR)
  int nthreads = 1;                  ///< nthreads-var of the current level
  int list_pos = 0;                  ///< index into nthreads_list for the next level
  int max_active_levels = 1;         ///< max-active-levels-var
  sched_kind run_sched = sched_kind::dynamic;  ///< run-sched-var kind
  int bind = 0;                                ///< bind-var (omp_proc_bind_t)
  int thread_limit = 2147483647;  ///< thread-limit-var (OMP_THREAD_LIMIT; a teams' thread_limit)
  int team_num = 0;               ///< omp_get_team_num() in a host teams region
  int num_teams = 1;              ///< omp_get_num_teams()
  bool dynamic = false;           ///< dyn-var
};

/// The process-wide settings read from the environment at the first use.
struct globals {
  icvs initial;                            ///< the initial task's ICVs
  std::vector<int> nthreads_list;          ///< OMP_NUM_THREADS, one entry per level
  int thread_limit = 2147483647;           ///< OMP_THREAD_LIMIT
  std::atomic<int> nteams{0};              ///< nteams-var (OMP_NUM_TEAMS, omp_set_num_teams)
  std::atomic<int> teams_thread_limit{0};  ///< teams-thread-limit-var (OMP_TEAMS_THREAD_LIMIT)
  bool cancellation = false;               ///< OMP_CANCELLATION
  int max_task_priority = 0;               ///< OMP_MAX_TASK_PRIORITY
  std::size_t stack_size = 0;              ///< OMP_STACKSIZE (0: weft's default for ULTs we create)
  bool proc_bind_false = false;            ///< OMP_PROC_BIND=false: streams are not bound
  std::vector<int> bind_list;  ///< OMP_PROC_BIND, one entry per level (index 0: initial)
  wait_policy wait = wait_policy::unset;
  inner_units inner = inner_units::ult;
  bool display_affinity = false;  ///< OMP_DISPLAY_AFFINITY
  int streams = 0;                ///< execution streams weft was started with (one per CPU)
  /// WEFT_OMP_STREAMS was not set: a top-level team wider than the streams gets more of them.
  bool widen = true;
  long spin = 0;            ///< pause rounds before a waiting member blocks
  bool weft_owned = false;  ///< this library called weft::init()
};

/// The largest stack weft maps for a ULT (its config's limit).
inline constexpr std::size_t max_stack_size = std::size_t{1} << 30;

/// The stack of the ULTs this library creates when OMP_STACKSIZE is not set: the process's
/// default thread stack (glibc's, from RLIMIT_STACK: 8 MiB on most systems), which is what
/// libgomp's threads have and so what every task libgomp runs has. A stack is address space,
/// touched a page at a time, and reused from weft's stack caches, so only the pages tasks touch
/// cost memory.
std::size_t default_stack_size();

/// The stack of the ULTs this library creates: OMP_STACKSIZE, else default_stack_size().
std::size_t ult_stack_size();

/// The settings, read once (thread-safe).
globals& settings();

/// Set while weft runs more streams than the CPUs (a top-level team wider than them added
/// streams): waiting members then spin no more than libgomp's throttled spin count, since a
/// spinning member holds a core a team-mate needs.
extern std::atomic<bool> g_oversubscribed;

/// Pause rounds a waiting member spins before it blocks: the wait policy's, or libgomp's
/// throttled count (1000) while the streams outnumber the CPUs.
inline long spin_rounds() {
  const long spin = settings().spin;
  return g_oversubscribed.load(std::memory_order_relaxed) ? std::min(spin, 1000l) : spin;
}

/// The handle of the predefined allocator `name` (lower case, as OMP_ALLOCATOR names it), or 0
/// (omp_null_allocator) for any other name.
std::uintptr_t parse_allocator_name(std::string_view name);

/// Makes sure weft runs (initialising it on the calling thread the first time).
void ensure_runtime();

/// omp_pause_resource on the host: ends weft's streams if this library started weft and the
/// caller is its primary ULT outside any region (while no other thread is in one); 0 when
/// paused or nothing of this library's runs, -1 otherwise (also inside a region, as libgomp).
int pause_host();

struct team;
struct task_rec;
struct queued_task;
struct taskgroup;
struct prio_queue;
struct dep_table;

/// Worksharing state of one loop, sections or single-copy construct, shared by a team.
struct work_share {
  std::atomic<std::uint64_t> tag{0};  ///< 1 + sequence number of the construct it serves
  std::atomic<int> users{0};          ///< team members that have not released it yet
  spinlock init_lock;
  bool up = true;  ///< the loop counts up
  bool ordered = false;
  bool doacross = false;           ///< an ordered(n) loop whose members post and wait (`dx`)
  std::uint64_t start = 0;         ///< first value (long or ull bits)
  std::uint64_t incr = 0;          ///< increment (long or ull bits)
  std::uint64_t end = 0;           ///< the user's end value, returned for the last chunk
  void* copy = nullptr;            ///< single copyprivate data
  std::vector<unsigned char> mem;  ///< GOMP_loop_start's team-shared memory
  parallel::loop_dispatch loop;    ///< logical iterations (sections: one per section)
  parallel::doacross dx;           ///< posted iterations of a doacross loop
  std::uintptr_t* reds = nullptr;  ///< reduction(task, ...): the first member's descriptor
  alignas(64) std::atomic<std::uint64_t> ord_turn{0};  ///< first iteration not yet ordered
};

/// A stack with its first two elements in place, newest last: a task's children not yet finished,
/// since most tasks create a few, and a heap block per task that has any would cost a malloc and
/// a free per task in a recursion.
template <class T>
class small_stack {
 public:
  bool empty() const noexcept { return size_ == 0; }
  std::size_t size() const noexcept { return size_; }
  void push_back(T&& v) {
    if (size_ < in_place) {
      place_[size_] = std::move(v);
    } else {
      // Room for a typical loop of tasks at once (BOTS nqueens: 14 per level), not a doubling
      // from one.
      if (rest_.empty()) rest_.reserve(14);
      rest_.push_back(std::move(v));
    }
    ++size_;
  }
  /// Removes the newest element and returns it.
  T take_back() noexcept {
    T v;
    if (size_ > in_place) {
      v = std::move(rest_.back());
      rest_.pop_back();
    } else {
      v = std::move(place_[size_ - 1]);
      place_[size_ - 1] = T{};
    }
    --size_;
    return v;
  }

 private:
  static constexpr std::size_t in_place = 2;
  T place_[in_place]{};
  std::vector<T> rest_;
  std::size_t size_ = 0;
};

/// Queued tasks of a team of one (tasks.cpp, queued_task) linked through themselves, newest
/// first, with their count: two words in a context, which every explicit task builds.
class task_list {
 public:
  bool empty() const noexcept { return count_ == 0; }
  std::size_t size() const noexcept { return count_; }
  void push(queued_task* t) noexcept;  // tasks.cpp
  queued_task* pop() noexcept;         // tasks.cpp; the newest

 private:
  queued_task* head_ = nullptr;
  std::size_t count_ = 0;
};

/// A task's view: an implicit task (team member) or an explicit task. Every OpenMP call made by a
/// unit looks up its current context.
struct context {
  team* t = nullptr;          ///< the team it belongs to (null for the initial task)
  context* parent = nullptr;  ///< the encountering implicit task of the enclosing team
  int num = 0;                ///< omp_get_thread_num()
  int level = 0;              ///< nested parallel regions enclosing it
  int active_level = 0;       ///< active (more than one thread) regions enclosing it
  int width_product = 1;      ///< product of the enclosing teams' sizes
  icvs icv;
  void* legacy = nullptr;  ///< the region GOMP_parallel_start opened
  // Implicit tasks only: worksharing progress.
  std::uint64_t ws_seq = 0;                  ///< constructs encountered so far
  std::uint64_t single_seq = 0;              ///< single constructs encountered so far
  work_share* ws = nullptr;                  ///< the loop or sections being worked on
  parallel::worker_cursor cursor;            ///< static chunks taken from `ws`
  std::uint64_t chunk_lo = 0, chunk_hi = 0;  ///< logical range of the current chunk
  bool have_chunk = false;
  // Tasks.
  bool final_task = false;  ///< omp_in_final()
  bool explicit_task = false;
  /// Undeferred tasks it is nested in on its stack (0: a member, or a deferred task).
  std::uint32_t undeferred_depth = 0;
  small_stack<ult> children;  ///< ULTs of its deferred tasks, not yet joined
  /// Its deferred tasks in a team of one, not yet run: no other thread may run them, so they wait
  /// here without a ULT until a scheduling point of this task runs them (run_queued).
  task_list queued;
  std::vector<task_rec*> detached;  ///< detached tasks among them, not yet seen complete
  taskgroup* group = nullptr;       ///< innermost taskgroup
  dep_table* deps = nullptr;        ///< dependences among its children (lazy)
  prio_queue* prio = nullptr;       ///< its children with a priority, outside taskgroups (lazy)
  std::unique_ptr<team> solo;       ///< the team of one of orphaned constructs
  // Task reductions: the private copies are indexed by member number, so a unit updating them
  // holds that member's slot (see slot_pause).
  std::atomic<int> slot_state{0};  ///< members only: who holds slot `num` (slot_* values)
  int held = -1;                   ///< explicit tasks: the slot it runs on (-1: none)
  int held_kind = 0;               ///< the slot_state `held` is restored to after a pause
  bool red_task = false;           ///< deferred task created while task reductions were open
  bool paused = false;             ///< its slot is released for a scheduling point
  /// Where the stack it runs on counts as low (tasks.cpp, stack_floor()): measured at its first
  /// need, or its creator's when it runs on its creator's stack (undeferred, or queued).
  std::uintptr_t stack_floor = unmeasured_stack_floor;
  static constexpr std::uintptr_t unmeasured_stack_floor = ~std::uintptr_t{0};
  context() = default;
  /// The context of an explicit task that `creator` encounters: the same team, member number,
  /// levels, ICVs and taskgroup. Its own fields start empty. `undeferred_depth_` > 0: it runs
  /// on its creator's stack. Built in the member initialisers:
  /// default construction followed by assignments clears the whole record first (`rep stos` on
  /// x86: a quarter of the run of 10^6 undeferred `in_reduction` tasks, perf).
  context(const context& creator, bool final, std::uint32_t undeferred_depth_) noexcept
      : context(creator, creator.icv, creator.group, final, undeferred_depth_) {}
  /// The same for a task that waited in `creator`'s list: with the ICVs and taskgroup it was
  /// created with, which may since have changed in `creator`.
  context(const context& creator, const icvs& icv_, taskgroup* group_, bool final,
          std::uint32_t undeferred_depth_) noexcept
      : t(creator.t),
        parent(creator.parent),
        num(creator.num),
        level(creator.level),
        active_level(creator.active_level),
        width_product(creator.width_product),
        icv(icv_),
        final_task(final),
        explicit_task(true),
        undeferred_depth(undeferred_depth_),
        group(group_),
        stack_floor(undeferred_depth_ > 0 ? creator.stack_floor : unmeasured_stack_floor) {}
  context(const context&) = delete;
  context& operator=(const context&) = delete;
  /// Inline: every task destroys one, and most never made the tables.
  ~context() {
    if (deps || prio) [[unlikely]]
      free_tables();
  }

 private:
  void free_tables() noexcept;  // tasks.cpp
};

/// True when a stream that queued deferred tasks still holds queued units and is not the
/// caller's. A member that waits (at a barrier, or a hot worker between regions) then blocks
/// rather than spin, so that its stream takes those tasks, as libgomp's waiting threads run the
/// team's queued tasks. Asked every few hundred spin rounds; a hint, never a correctness matter.
bool tasks_queued_elsewhere() noexcept;
/// Records that the calling unit's stream `s` queued a deferred task (kept unless another
/// stream's queued units are already known).
void note_task_queued(execution_stream* s) noexcept;
/// Forgets that stream, before the runtime that owns it ends (or after another one started).
void forget_queued_tasks() noexcept;

/// A team of one parallel region.
struct team {
  team(int n, context* parent_ctx);
  /// Readies a finished team for another region of the same width.
  void reset(context* parent_ctx);
  /// The team of one that orphaned constructs outside every parallel region bind to: it has no
  /// encountering task, and no streams may be running to defer its tasks to.
  bool orphaned() const noexcept { return parent == nullptr; }
  /// Waits at the barrier, spinning `spin` rounds first; true if the region was cancelled.
  /// Its last arrival also ends a cancellation of the loop or sections the team was in, which
  /// every member has then left (a cancelled construct cannot be nowait): GCC's static loops
  /// tell the runtime nothing when they start, so a barrier is the only point where a construct
  /// is known to be over (libgomp clears its flag there too).
  bool wait_barrier(long spin) {
    if (nthreads == 1) {
      end_ws_cancel();
      return cancelled.load(std::memory_order_acquire);
    }
    return !barrier.arrive_and_wait(
               spin, [this] { end_ws_cancel(); }, [] { return tasks_queued_elsewhere(); }) ||
           cancelled.load(std::memory_order_relaxed);
  }
  void end_ws_cancel() noexcept {
    if (ws_cancelled.load(std::memory_order_relaxed)) {
      ws_cancelled.store(false, std::memory_order_relaxed);
    }
  }
  int nthreads;
  context* parent;                 ///< the encountering task
  parallel::team_barrier barrier;  ///< aborted by cancellation of the region
  std::atomic<std::uint64_t> single_count{0};
  std::atomic<bool> cancelled{false};  ///< parallel region cancelled
  /// The current loop or sections was cancelled; cleared at the barrier that ends it.
  std::atomic<bool> ws_cancelled{false};
  static constexpr int ws_slots = 16;
  work_share ws[ws_slots];
  std::vector<context> members;                ///< implicit tasks, one per thread
  std::atomic<bool>* blocking_flag = nullptr;  ///< set when a member waits (tasklet learning)
  std::atomic<int> red_active{0};              ///< task reduction scopes open in the team
};

/// slot_state values: a member's slot of task reduction copies is held by the member while it
/// runs, free while it waits at a scheduling point, or held by a task running in its place.
inline constexpr int slot_member = 0;
inline constexpr int slot_free = 1;
inline constexpr int slot_task = 2;

/// Releases the slot `c` holds while it waits (taskwait, taskgroup end, a barrier, the end of a
/// task or member, taskwait with depend), so that tasks with reductions can run in its place, as
/// libgomp runs them on the waiting thread; takes it back when destroyed. A member releases its
/// slot even when no reduction is open yet: one may open while it waits (in a task it waits
/// for), and that task's children need a slot to run.
class slot_pause {
 public:
  explicit slot_pause(context& c) {
    if (c.t && !c.paused && (!c.explicit_task || c.held >= 0)) pause(c);
  }
  ~slot_pause() {
    if (c_) resume();
  }
  slot_pause(const slot_pause&) = delete;
  slot_pause& operator=(const slot_pause&) = delete;

 private:
  void pause(context& c);
  void resume();
  context* c_ = nullptr;
  std::atomic<int>* word_ = nullptr;
  int own_ = 0;
};

/// Takes a free slot of `t` for a task with reductions, preferring `prefer`; waits for one.
int acquire_slot(team& t, int prefer);

/// A worksharing construct's reduction(task, ...) for member `c` (the current context): opens its
/// taskgroup and registers GCC's descriptor `data`, allocating the copies (`orig` null: the
/// first member) or sharing those of `orig` (the first member's descriptor).
void ws_register_reductions(context& c, std::uintptr_t* data, const std::uintptr_t* orig);

/// A unit created by this library (team member or explicit task). current() recognises these
/// by their entry point; `cur` is the unit's current context (a member opening a nested region
/// runs the inner team's member 0 in place, so it changes).
struct unit_arg {
  context* cur;
  void (*run)(unit_arg*) noexcept;  ///< what the unit does
};

/// Where the calling unit's or thread's current context is recorded (never null).
context** current_slot();

/// The calling unit's or thread's current context (never null).
context& current();

/// Points the calling unit's current context at `c` until destroyed.
class context_scope {
 public:
  explicit context_scope(context* c);
  /// The same, given current_slot() (looked up by the caller already).
  context_scope(context** slot, context* c) : slot_(slot), saved_(*slot) { *slot_ = c; }
  ~context_scope() { *slot_ = saved_; }
  context_scope(const context_scope&) = delete;
  context_scope& operator=(const context_scope&) = delete;

 private:
  context** slot_;
  context* saved_;
};

/// The entry point of every unit the library creates; its argument starts with a unit_arg.
void unit_entry(void* arg) noexcept;

/// Runs fn(data) as a parallel region of `nthreads` (0: the ICV) threads.
void run_parallel(void (*fn)(void*), void* data, unsigned nthreads, unsigned flags,
                  work_share* preset);

/// Parallel regions opened and undeferred tasks started outside any region, not yet ended: exit()
/// finalises weft only when there are none (it is then called at the end of main, not in them).
extern std::atomic<int> g_outer_busy;

/// sched_yield(), kept out of the header's includes.
void sched_yield_now() noexcept;

/// note_blocking() for a team that learns whether its members may be tasklets.
void note_blocking_learning(context& c);

/// Records that the calling member reaches a construct that waits, for a team that learns whether
/// its members may be tasklets; aborts with a message in a tasklet (which cannot wait). Inline:
/// every task creation comes here, and only teams whose members may be tasklets have the flag.
inline void note_blocking(context& c) {
  if (c.t && c.t->blocking_flag) [[unlikely]]
    note_blocking_learning(c);
}

/// GOMP_parallel_start's half of a region: returns what legacy_close() needs.
void* legacy_open(void (*fn)(void*), void* data, unsigned nthreads, work_share* preset);
/// GOMP_parallel_end's half.
void legacy_close(void* region);

/// Waits (spinning, then yielding its ULT or thread) until pred() holds.
template <class Pred>
void wait_until(Pred pred) {
  for (int i = 0; i < 64; ++i) {
    if (pred()) return;
    cpu_relax();
  }
  while (!pred()) {
    if (this_unit::is_ult()) {
      this_unit::yield();
    } else {
      std::atomic_thread_fence(std::memory_order_seq_cst);
      sched_yield_now();
    }
  }
}

/// A lock word of 4 bytes (omp_lock_t, critical sections): spins, then yields.
void lock_word(std::atomic<std::uint32_t>& w) noexcept;
/// Releases a lock word. An exchange, not a store, as libgomp's mutex: under contention (the
/// releaser takes the lock again at once while another member spins on it) a plain store's
/// hand-off measured about 2x slower per lock and unlock (EPCC syncbench LOCK_CONTENDED).
inline void unlock_word(std::atomic<std::uint32_t>& w) noexcept {
  (void)w.exchange(0, std::memory_order_release);
}

/// Completes every explicit task `c` created (joining them), as a barrier or region end must.
void finish_children(context& c);

/// omp_fulfill_event: the second of a detached task's body return and fulfilment completes it.
/// Any thread, a plain pthread included; aborts with a message for a handle that is not pending.
void fulfill_event(std::uintptr_t handle);

/// Waits at the team barrier of `c`'s team (completing `c`'s tasks first).
void team_wait(context& c);

/// True when cancellation of kind `which` (GOMP_CANCEL_* bits) is pending for `c`.
bool cancellation_point(context& c, int which);

/// True when `c`'s innermost taskgroup was cancelled.
bool cancelled_group(context& c);

/// Cancels `c`'s innermost taskgroup; false if there is none.
bool cancel_group(context& c);

/// Reports an unsupported construct on stderr and aborts the process.
[[noreturn]] void unsupported(const char* construct);

/// Reports a resource failure (a team that cannot be made) on stderr and exits with
/// EXIT_FAILURE, as libgomp does.
[[noreturn]] void fail_exit(const std::string& message);

/// Reports misuse on stderr and aborts the process.
[[noreturn]] void fatal(const std::string& message);

/// Sets the affinity-format-var (OMP_AFFINITY_FORMAT, omp_set_affinity_format).
void set_affinity_format(const char* format);

/// OMP_DISPLAY_AFFINITY: prints the affinity line of member `c` (the calling unit's context) when
/// its level, number or team size differ from what its stream printed last, as libgomp prints a
/// thread's line when they change.
void display_affinity_if_changed(const context& c);

}  // namespace weft::omp
