// Explicit tasks on weft ULTs: GOMP_task (if, final, untied, mergeable, priority, depend with
// depobj, detach), taskwait, taskyield, taskgroup (with cancellation), taskloop and task reductions
// (task_reduction, in_reduction, reduction(task, ...), taskloop reduction). A deferred task is a
// ULT the creating task joins at taskwait, at the end of a taskgroup, at a barrier or when it ends
// itself; weft's join runs a child that has not started yet on the joiner's stream. A detached
// task's ULT may end before the task completes: its creator also waits for its completion event.
#include "internal.hpp"

#include <weft/ext/locks.hpp>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <unordered_map>

namespace weft::omp {

/// A taskgroup: the children created inside it are those from index `first` of the creating
/// task's list (and from `first_detached` of its detached ones).
struct taskgroup {
  taskgroup* outer;
  std::size_t first;
  std::size_t first_detached;
  std::size_t first_queued;
  std::atomic<bool> cancelled{false};
  std::uintptr_t* reductions = nullptr;  ///< GCC's task reduction descriptors in scope, or null
  /// Opened by a worksharing construct's reduction(task, ...), not by the program: for
  /// cancellation it stands for the taskgroup around it, as in libgomp.
  bool workshare = false;
  prio_queue* prio = nullptr;  ///< tasks with a priority created in it (lazy)
  ~taskgroup();
};

/// Deferred tasks with a priority (OMP_MAX_TASK_PRIORITY > 0) created by one task within one
/// taskgroup, not started yet. Each such task gets a ULT as any task does, but the ULT runs the
/// queue's highest-priority task (oldest first among equals), not necessarily its own: the
/// first ULTs to run take the most urgent tasks. A queue per creator and taskgroup keeps the
/// ULTs a taskwait or taskgroup end joins exactly those that run the tasks it waits for.
/// Priority is thus honoured among siblings (libgomp orders a team's queue; OpenMP makes it a
/// hint). A task without a priority comes here only once a sibling has one (it then runs after
/// them); tasks with dependences or an event never do.
///
/// Invariant: the queue holds as many tasks as there are ULTs of its tasks that have not yet
/// taken one, so a ULT always finds one.
struct prio_queue {
  struct entry {
    int priority;
    std::uint64_t seq;
    task_rec* task;
    bool operator<(const entry& o) const noexcept {
      return priority != o.priority ? priority < o.priority : seq > o.seq;
    }
  };
  spinlock lock;
  std::vector<entry> heap WEFT_GUARDED_BY(lock);
  std::uint64_t next WEFT_GUARDED_BY(lock) = 0;
  void push(int priority, task_rec* t) {
    const ext::lock_guard hold(lock);
    heap.push_back({priority, next++, t});
    std::push_heap(heap.begin(), heap.end());
  }
  task_rec* pop() {
    const ext::lock_guard hold(lock);
    std::pop_heap(heap.begin(), heap.end());
    task_rec* t = heap.back().task;
    heap.pop_back();
    return t;
  }
};

taskgroup::~taskgroup() {
  delete prio;
}

namespace {

// Set once a task with a priority was created: before that no task looks for a queue.
std::atomic<bool> g_priority_used{false};

// Whether the tasks of taskgroup `g` (null: none) are cancelled.
bool group_cancelled(const taskgroup* g) {
  if (!g) return false;
  if (g->cancelled.load(std::memory_order_acquire)) return true;
  return g->workshare && g->outer && g->outer->cancelled.load(std::memory_order_acquire);
}

}  // namespace

/// The completion of a detached task (`detach(evt)`): it completes when both its body has
/// returned and omp_fulfill_event(evt) was called, in either order and from any thread (a plain
/// pthread included), so whichever of the two comes second completes it.
struct detach_state {
  std::atomic<int> pending{2};  ///< body return and fulfilment still to come
  eventual<void> completed;     ///< set when the task completes; its creator waits on it
  task_rec* task = nullptr;     ///< the deferred task (null: an undeferred one, on the stack)
  std::uintptr_t handle = 0;    ///< its omp_event_handle_t
};

/// A stream's count of the deferred tasks it created that have not started (see g_live): its
/// own thread adds a task when it creates one and takes it off when it starts one of its own,
/// with plain loads and stores (one writer: no locked instruction per task); another thread that
/// starts one of them counts it in `started_elsewhere`, on a line of its own. A count that
/// threads share (threads outside weft, streams past the table) takes every update atomically.
struct alignas(64) live_count {
  constexpr live_count() noexcept = default;
  constexpr explicit live_count(bool is_shared) noexcept : shared(is_shared) {}
  std::atomic<long> n{0};  ///< created minus started on the owning thread
  const bool shared = false;
  /// On a line of its own: on the owner's, every theft takes the line the owner writes at every
  /// creation (BOTS floorplan input.15, 2 threads: 1.95-2.11 s here, 2.00-2.14 there).
  alignas(64) std::atomic<long> started_elsewhere{0};
  long queued() const noexcept {
    return n.load(std::memory_order_relaxed) - started_elsewhere.load(std::memory_order_relaxed);
  }
};

/// A deferred task: its context, body and argument block (allocated right after it), completion
/// flag and event for tasks that depend on it, and a reference count (the task itself, the
/// dependence table of its parent, its dependants).
struct task_rec {
  unit_arg hdr;
  context ctx;
  void (*fn)(void*) = nullptr;
  void* data = nullptr;
  std::atomic<bool> done{false};
  /// Whether the task was recorded in a dependence table (set by its creator before the task
  /// starts): only then may others wait for it, and only then is `completed` set.
  bool tracked = false;
  bool block = false;  ///< its memory is a task block (see take_task_block), not malloc's
  /// Its argument block was built by GCC's copy function (C++ copy constructors): it runs even
  /// once cancelled, since only its body destroys the copies (libgomp's rule).
  bool copied = false;
  /// A task with a priority: the queue it waits in until a ULT of its queue takes it.
  prio_queue* queue = nullptr;
  /// Set after `done` for a tracked task: dependants whose predecessor has not completed block on
  /// it (instead of polling, which keeps every blocked dependant cycling through the pools).
  eventual<void> completed;
  std::atomic<int> refs{1};
  std::vector<task_rec*> preds;
  detach_state* detach = nullptr;   ///< detached tasks only
  live_count* counted = nullptr;    ///< its creator's count of queued tasks
  task_rec(const context& creator, bool final_task) noexcept : ctx(creator, final_task, 0) {}
  ~task_rec() { delete detach; }
};

/// A deferred task of a team of one, waiting in its creator's `queued` list until a scheduling
/// point of the creator runs it there (run_queued): no other thread may run it, nothing waits
/// for it but its creator, so it needs no task record, only what its context takes from the
/// creator at creation that the creator's may no longer hold when it runs (the ICVs and the
/// taskgroup), its body, and its argument block (allocated right after it). 112 bytes against a
/// task record's 472: building the record was 170 of the 600 instructions a task cost here
/// (callgrind, BOTS nqueens on one thread).
struct queued_task {
  queued_task* next;  ///< the next older task of the list
  void (*fn)(void*);
  void* data;
  taskgroup* group;
  live_count* counted;  ///< its creator's count of queued tasks
  icvs icv;
  bool final_task;
  bool block;   ///< its memory is a task block (see take_task_block), not malloc's
  bool copied;  ///< built by GCC's copy function: runs even once cancelled (see task_rec)
};

namespace {

constexpr unsigned flag_untied = 1;
constexpr unsigned flag_final = 2;
constexpr unsigned flag_depend = 8;
constexpr unsigned flag_priority = 16;
constexpr unsigned flag_up = 1u << 8;
constexpr unsigned flag_grainsize = 1u << 9;
constexpr unsigned flag_if = 1u << 10;
constexpr unsigned flag_nogroup = 1u << 11;
constexpr unsigned flag_reduction = 1u << 12;
constexpr unsigned flag_detach = 1u << 13;
constexpr unsigned flag_strict = 1u << 14;

// A task's priority as libgomp takes it: the clause's value (GCC sets the flag when there is
// one), at most OMP_MAX_TASK_PRIORITY, so 0 unless that variable is set.
int task_priority(unsigned flags, int priority) {
  if (!(flags & flag_priority) || priority <= 0) return 0;
  return std::min(priority, settings().max_task_priority);
}

// Deferred tasks created and not yet started (or waiting for their predecessors), counted per
// creating stream. Past a limit a stream's new tasks run undeferred: it bounds the ULTs queued
// when a program creates tasks much faster than the streams run them. Queued tasks only, as LLVM
// libomp bounds each thread's deque: libgomp counts every unfinished task, and in a deep task
// tree (BOTS uts, depth 17844) the started tasks waiting for their children then reach the
// limit, every later task runs undeferred on its creator's stream and the other streams find
// nothing to take (uts on 2 streams used one CPU, 12.8 s; counting queued tasks, 7.9 s). One count
// per stream, each on its own cache line: a process-wide count took a line from the other stream
// at every creation and every start (fib with a task per level on 2 streams spent most of its task
// creation and ending on that line). A task's start lowers its creator's count, so only stolen
// tasks touch another stream's line. Neither touches a count with a locked instruction unless
// the count is shared: perf put 17% of a team of one's time in BOTS nqueens on a locked add at
// creation and a locked sub at the start (the stores before them drain there); without them
// the run took 3-5% less.
//
// A team of one's tasks that wait in their creator's list (queued_task) count until they end,
// against libgomp's limit for a team of one (64), as libgomp counts them: no other thread can
// take them, and in a deep recursion the tasks past the limit then run undeferred, without an
// allocation or a copy of their arguments into it (BOTS floorplan copies 4 KiB per task).
constexpr std::size_t live_counts = 64;  // streams of rank 0-62 have their own
live_count g_live[live_counts - 1];
live_count g_live_shared{true};  // threads outside weft, streams of rank 63 and up

// The calling thread's count, found once per thread: a stream is one kernel thread for its whole
// life, and no two live streams have one rank. Initial-exec, as t_task_blocks below.
[[gnu::tls_model("initial-exec")]] constinit thread_local live_count* t_live = nullptr;

[[gnu::noinline]] live_count& find_live_count() noexcept {
  const execution_stream* s = this_unit::stream();
  const int rank = s ? s->rank() : -1;
  t_live = rank >= 0 && static_cast<std::size_t>(rank) < live_counts - 1
               ? &g_live[static_cast<std::size_t>(rank)]
               : &g_live_shared;
  return *t_live;
}

// Read where nothing switches between the read and the use: a ULT may resume on another thread.
inline live_count& live_count_here() noexcept {
  live_count* c = t_live;
  return c ? *c : find_live_count();
}

// A deferred task created on the calling thread (whose count `c` is, live_count_here()).
inline void count_created(live_count& c) noexcept {
  if (c.shared) [[unlikely]] {
    c.n.fetch_add(1, std::memory_order_relaxed);
  } else {
    c.n.store(c.n.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
}

// A deferred task counted in `c` starts (a queued_task: ends) on the calling thread.
inline void count_started(live_count& c) noexcept {
  if (c.shared) [[unlikely]] {
    c.n.fetch_sub(1, std::memory_order_relaxed);
  } else if (&c == t_live) {
    c.n.store(c.n.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
  } else {
    c.started_elsewhere.fetch_add(1, std::memory_order_relaxed);
  }
}

// The limit of one stream's count: a single producer (a `single` creating every task) may keep
// as many queued as libgomp lets a whole team hold (64 per thread, one thread per stream here).
long queued_task_limit() {
  static const long limit = 64l * std::max(1, settings().streams);
  return limit;
}

// The limit of the calling stream's count for a deferred task of `parent`'s team (not orphaned).
inline long task_limit(const context& parent) {
  constexpr long team_of_one_limit = 64;
  return parent.t->nthreads == 1 ? team_of_one_limit : queued_task_limit();
}

// A stream that queued a deferred task and, when a waiter last looked, still held queued units
// (tasks_queued_elsewhere()); null when none is known. Streams are not destroyed while their
// runtime runs (a freed one is retired; its main_pool() then throws), and the library forgets
// the pointer before it ends a runtime and after it starts one. On a line of its own, and
// written only when empty: with every stream creating tasks (fib with a task per level on 2
// streams), naming the last creator wrote the line at nearly every task and took most of the
// creation's time.
struct alignas(64) task_stream_hint {
  std::atomic<execution_stream*> s{nullptr};
};
task_stream_hint g_task_stream;

// Completes `t` for its dependants. The caller holds a reference to `t`.
void mark_done(task_rec* t) {
  t->done.store(true, std::memory_order_release);
  if (t->tracked) t->completed.set();
}

// Task records of up to task_block_bytes (with a small argument block, most of them) come from
// a list of free blocks kept per kernel thread: a task program creates and frees a record per
// task, at rates where malloc's per-thread cache (7 blocks of a size) overflows into its arena.
// The list is the thread's whatever ULT runs there (a block freed on another thread than the
// one that took it joins that thread's list), bounded, and freed when the thread ends. Blocks
// flow from the threads that run tasks to the ones that create them through task_block_depot.
constexpr std::size_t task_block_bytes = 640;
// Room for the argument blocks GCC builds (a few pointers and firstprivate values): a task whose
// record and arguments do not fit goes to malloc (BOTS nqueens on 2 threads ran a third slower
// when its records with their arguments outgrew a block).
static_assert(sizeof(task_rec) + 128 <= task_block_bytes,
              "a task record and a 128-byte argument block fit a task block");

// Full batches of free task blocks, passed between threads. One thread often creates the tasks
// and another runs them: the runner's list fills with the creator's blocks while the creator's
// runs dry. Through malloc, each block would cross the arena lock twice (the creator's malloc,
// the runner's free), and the two threads contend on it: in a 10^6-task reduction about 1,700
// futex calls, which perf put at 29% of the run. Here one lock moves a batch of `batch` blocks.
//
// A batch is a chain of blocks linked through their first word; the depot chains batches
// through the second word of each first block. Bounded: past max_batches the giver frees.
class task_block_depot {
 public:
  static constexpr int batch = 64;
  static constexpr int max_batches = 64;

  /// Moves `batch` blocks into `out`; false (nothing moved) when the depot is empty.
  bool take(void** out) noexcept {
    node* b;
    {
      const ext::lock_guard hold(lock_);
      b = head_;
      if (!b) return false;
      head_ = b->next_batch;
      --batches_;
    }
    for (int i = 0; i < batch; ++i) {
      out[i] = b;
      b = b->next_block;
    }
    return true;
  }

  /// Takes the `batch` blocks of `in`; false (nothing taken) when the depot is full.
  bool give(void* const* in) noexcept {
    auto* first = static_cast<node*>(in[0]);
    for (int i = 0; i < batch; ++i)
      static_cast<node*>(in[i])->next_block =
          i + 1 < batch ? static_cast<node*>(in[i + 1]) : nullptr;
    const ext::lock_guard hold(lock_);
    if (batches_ == max_batches) return false;
    first->next_batch = head_;
    head_ = first;
    ++batches_;
    return true;
  }

 private:
  struct node {
    node* next_block;
    node* next_batch;
  };
  static_assert(sizeof(node) <= task_block_bytes);
  spinlock lock_;
  node* head_ WEFT_GUARDED_BY(lock_) = nullptr;
  int batches_ WEFT_GUARDED_BY(lock_) = 0;
};

// Constant-initialised and trivially destroyed: threads give blocks back until the process
// ends. Blocks left in it at exit are reclaimed with the process.
constinit task_block_depot g_block_depot;

struct task_block_list;
[[gnu::tls_model("initial-exec")]] extern constinit thread_local task_block_list* t_task_blocks;
[[gnu::tls_model("initial-exec")]] extern constinit thread_local bool t_task_blocks_gone;

struct task_block_list {
  static constexpr int capacity = 128;
  static_assert(capacity >= 2 * task_block_depot::batch,
                "a full list keeps a batch after giving one");
  void* blocks[capacity];
  int count = 0;
  task_block_list() = default;
  task_block_list(const task_block_list&) = delete;
  task_block_list& operator=(const task_block_list&) = delete;
  ~task_block_list() {
    // Blocks freed later in the thread's exit (by exit handlers) go to free().
    t_task_blocks = nullptr;
    t_task_blocks_gone = true;
    while (count > 0) std::free(blocks[--count]);
  }
};

// The calling thread's list: initial-exec, one %fs-relative load (as libweft's current stream
// and libgomp's own thread data; this library is linked at startup, not dlopen'ed), of a pointer
// to a list its owner, a thread_local with a destructor, frees when the thread ends.
[[gnu::tls_model("initial-exec")]] constinit thread_local task_block_list* t_task_blocks = nullptr;
[[gnu::tls_model("initial-exec")]] constinit thread_local bool t_task_blocks_gone = false;
thread_local std::unique_ptr<task_block_list> t_task_blocks_owner;

[[gnu::noinline]] task_block_list& make_task_block_list() {
  t_task_blocks_owner = std::make_unique<task_block_list>();
  t_task_blocks = t_task_blocks_owner.get();
  return *t_task_blocks;
}

// Out of line: the list's address is the calling thread's only until the caller next switches.
[[gnu::noinline]] void* take_task_block() {
  task_block_list* l = t_task_blocks;
  if (l && l->count > 0) return l->blocks[--l->count];
  if (!l && !t_task_blocks_gone) l = &make_task_block_list();
  if (l && g_block_depot.take(l->blocks)) {
    l->count = task_block_depot::batch - 1;
    return l->blocks[task_block_depot::batch - 1];
  }
  return std::malloc(task_block_bytes);
}

[[gnu::noinline]] void give_task_block(void* p) {
  if (!t_task_blocks && t_task_blocks_gone) {
    std::free(p);
    return;
  }
  task_block_list& l = t_task_blocks ? *t_task_blocks : make_task_block_list();
  if (l.count == task_block_list::capacity) {
    // Full: the newest batch goes to the depot, for a thread whose list runs dry.
    void* const* top = l.blocks + l.count - task_block_depot::batch;
    if (g_block_depot.give(top)) {
      l.count -= task_block_depot::batch;
    } else {
      std::free(p);
      return;
    }
  }
  l.blocks[l.count++] = p;
}

void unref(task_rec* t) {
  // A count of 1 is the caller's own reference: only a holder adds one, so none can appear now,
  // and the record is freed without a locked instruction (most tasks have no other reference).
  // The acquire orders the frees after every other holder's last use, as the sub's would.
  if (t->refs.load(std::memory_order_acquire) != 1 &&
      t->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) {
    return;
  }
  for (task_rec* p : t->preds) unref(p);
  const bool block = t->block;
  t->~task_rec();
  if (block) {
    give_task_block(t);
  } else {
    std::free(t);
  }
}

// The events of detached tasks not yet fulfilled, by handle. A handle is a number never reused,
// so that fulfilling an event twice, or one that was never handed out, is reported instead of
// touching freed memory; the map costs a lock per detached task only. The event of a task
// cancelled before it ran maps to null until it is fulfilled.
spinlock g_events_lock;
std::unordered_map<std::uintptr_t, detach_state*> g_events;
std::uintptr_t g_next_event = 1;

std::uintptr_t register_event(detach_state* s) {
  std::lock_guard lock(g_events_lock);
  s->handle = g_next_event++;
  g_events.emplace(s->handle, s);
  return s->handle;
}

// A task cancelled before its body ran completes without waiting for its event, since nothing
// is bound to fulfil it; a later omp_fulfill_event on it does nothing. True when the event was
// not fulfilled yet (the caller then stands in for the fulfilment).
bool cancel_event(detach_state* s) {
  std::lock_guard lock(g_events_lock);
  const auto it = g_events.find(s->handle);
  if (it == g_events.end()) return false;
  it->second = nullptr;
  return true;
}

// One of the two halves of a detached task's completion; the second completes it.
void arrive(detach_state* s) {
  if (s->pending.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  task_rec* t = s->task;
  if (t) mark_done(t);
  s->completed.set();
  // The creator holds its own reference until it has seen the completion.
  if (t) unref(t);
}

}  // namespace

void note_task_queued(execution_stream* s) noexcept {
  if (g_task_stream.s.load(std::memory_order_relaxed) == nullptr)
    g_task_stream.s.store(s, std::memory_order_relaxed);
}

void forget_queued_tasks() noexcept {
  g_task_stream.s.store(nullptr, std::memory_order_relaxed);
}

bool tasks_queued_elsewhere() noexcept {
  execution_stream* there = g_task_stream.s.load(std::memory_order_relaxed);
  if (!there) return false;
  bool empty = true;
  try {
    empty = there->main_pool().empty();
  } catch (const weft::error&) {
    // freed by a shrink: nothing queued there any more
  }
  if (!empty) return there != this_unit::stream();
  // Drained: the next stream to queue a task takes its place.
  g_task_stream.s.compare_exchange_strong(there, nullptr, std::memory_order_relaxed);
  return false;
}

/// How a depend clause item orders its task against earlier siblings naming the same address.
/// mutexinoutset is recorded as out: its tasks then run one at a time in creation order, one
/// of the schedules OpenMP allows (libgomp 12 does the same).
enum class dep_kind {
  out,       ///< out, inout, mutexinoutset: after every earlier item
  in,        ///< after earlier out and inoutset items
  inoutset,  ///< after earlier out and in items
};

/// The dependences among the children of one task: per address, the last out task, the newest
/// run of consecutive in (or inoutset) tasks since it, and the run of the other kind before that
/// one (which the newest run's tasks wait for). Waiting for the newest run covers every older
/// task transitively, since a task starts only after its predecessors completed.
struct dep_table {
  struct entry {
    task_rec* out = nullptr;
    dep_kind run_kind = dep_kind::in;
    std::vector<task_rec*> run;     ///< the newest run of `run_kind` tasks since `out`
    std::vector<task_rec*> before;  ///< the run before `run`, of the other kind
  };
  std::unordered_map<std::uintptr_t, entry> map;
  ~dep_table() {
    for (auto& [addr, e] : map) {
      if (e.out) unref(e.out);
      for (task_rec* r : e.run) unref(r);
      for (task_rec* r : e.before) unref(r);
    }
  }
};

namespace {

struct dep_list {
  std::vector<std::pair<std::uintptr_t, dep_kind>> items;
};

// omp_depend_t as GCC writes it (the depobj construct): the address, then a GOMP_DEPEND_* kind.
// GCC 12 writes in (1), out (2), inout (3) and mutexinoutset (4), and all ones once destroyed;
// GCC 13 adds inoutset (5).
dep_kind depobj_kind(void* const* obj) {
  const auto kind = reinterpret_cast<std::uintptr_t>(obj[1]);
  switch (kind) {
    case 1:
      return dep_kind::in;
    case 2:
    case 3:
    case 4:
      return dep_kind::out;
    case 5:
      return dep_kind::inoutset;
    default: {
      char line[160];
      std::snprintf(line, sizeof line,
                    "depend(depobj: ...): the omp_depend_t at %p holds no dependence (kind %ld): "
                    "it was destroyed, or never set by a depobj construct",
                    static_cast<const void*>(obj), static_cast<long>(kind));
      fatal(line);
    }
  }
}

// GCC's depend array: either {n, nout, addr...} (out and inout first) or
// {0, n, nout, nmutexinoutset, nin, addr..., depobj...} where the last n - nout - nmutexinoutset
// - nin items point to omp_depend_t objects. Items come out in libgomp's order: out-like depobjs,
// the addresses, then in-like depobjs, so that an address named twice by one task keeps its
// first (strongest) item.
[[gnu::noinline]] dep_list read_depend(void** depend) {
  dep_list d;
  auto count = [&](std::size_t i) { return reinterpret_cast<std::uintptr_t>(depend[i]); };
  if (count(0) != 0) {
    const std::size_t n = count(0), nout = count(1);
    for (std::size_t i = 0; i < n; ++i) {
      d.items.emplace_back(count(2 + i), i < nout ? dep_kind::out : dep_kind::in);
    }
    return d;
  }
  // GCC 12 fills the per-kind counts of an iterator whose range is empty inconsistently (a
  // total of 0 beside non-zero counts): the total bounds what is read, as in libgomp.
  const std::size_t n = count(1);
  const std::size_t nwrite = std::min(n, count(2) + count(3));
  const std::size_t normal = std::min(n, nwrite + count(4));
  auto depobj = [&](std::size_t i) { return static_cast<void* const*>(depend[5 + i]); };
  for (std::size_t i = normal; i < n; ++i) {
    if (depobj_kind(depobj(i)) == dep_kind::out) {
      d.items.emplace_back(reinterpret_cast<std::uintptr_t>(depobj(i)[0]), dep_kind::out);
    }
  }
  for (std::size_t i = 0; i < normal; ++i) {
    d.items.emplace_back(count(5 + i), i < nwrite ? dep_kind::out : dep_kind::in);
  }
  for (std::size_t i = normal; i < n; ++i) {
    const dep_kind k = depobj_kind(depobj(i));
    if (k != dep_kind::out) d.items.emplace_back(reinterpret_cast<std::uintptr_t>(depobj(i)[0]), k);
  }
  return d;
}

void unref_all(std::vector<task_rec*>& tasks) {
  for (task_rec* r : tasks) unref(r);
  tasks.clear();
}

// Collects the tasks `d` must wait for among the siblings, and (when `t` is not null) records t
// as the new out task or run member.
std::vector<task_rec*> link_deps(context& parent, const dep_list& d, task_rec* t) {
  if (!parent.deps) parent.deps = new dep_table;
  std::vector<task_rec*> preds;
  // `t` itself is skipped: an address named twice (depend(out: x, x), or in and out) finds the
  // task recorded by its first occurrence.
  auto add = [&](task_rec* p) {
    if (!p || p == t || p->done.load(std::memory_order_acquire)) return;
    for (task_rec* q : preds) {
      if (q == p) return;
    }
    p->refs.fetch_add(1, std::memory_order_relaxed);
    preds.push_back(p);
  };
  auto add_all = [&](const std::vector<task_rec*>& tasks) {
    for (task_rec* p : tasks) add(p);
  };
  for (const auto& [addr, kind] : d.items) {
    dep_table::entry& e = parent.deps->map[addr];
    // A later item of `t` on an address it already holds is redundant (libgomp's rule).
    if (t && (e.out == t || (!e.run.empty() && e.run.back() == t))) continue;
    add(e.out);
    const bool joins = kind != dep_kind::out && !e.run.empty() && e.run_kind == kind;
    if (kind == dep_kind::out) {
      add_all(e.run);
    } else if (joins) {
      add_all(e.before);
    } else {
      add_all(e.run);
    }
    if (!t) continue;
    t->tracked = true;
    t->refs.fetch_add(1, std::memory_order_relaxed);
    if (kind == dep_kind::out) {
      if (e.out) unref(e.out);
      unref_all(e.run);
      unref_all(e.before);
      e.out = t;
    } else if (joins) {
      e.run.push_back(t);
    } else {
      unref_all(e.before);
      e.before = std::move(e.run);
      e.run.assign(1, t);
      e.run_kind = kind;
    }
  }
  return preds;
}

// Blocks until every task of `preds` (tracked tasks the caller holds references to) completed.
void wait_preds(const std::vector<task_rec*>& preds) {
  for (task_rec* p : preds) {
    if (!p->done.load(std::memory_order_acquire)) p->completed.wait();
  }
}

bool skipped(const context& c) {
  return group_cancelled(c.group) || (c.t && c.t->cancelled.load(std::memory_order_acquire));
}

// `n` rounded up to a multiple of `align`: a mask for the powers of two GCC passes as argument
// alignments (two divisions were a tenth of an undeferred task), a division otherwise. The
// power-of-two test is written out: std::has_single_bit is a call into libgcc without -mpopcnt.
constexpr std::uintptr_t round_up(std::uintptr_t n, std::uintptr_t align) noexcept {
  return align != 0 && (align & (align - 1)) == 0 ? (n + align - 1) & ~(align - 1)
                                                  : (n + align - 1) / align * align;
}

// The largest argument block (with its alignment) an undeferred task copies onto the stack.
constexpr std::size_t max_stack_copy = 128;

// Copies the argument block `data` (by GCC's copy function `cpyfn` when it has one, else its
// `size` bytes) into `room`, at the first address aligned to `align`; returns that address.
inline void* copy_arguments(unsigned char* room, void* data, void (*cpyfn)(void*, void*),
                            std::size_t size, std::size_t align) {
  void* buf = room + (round_up(reinterpret_cast<std::uintptr_t>(room), align) -
                      reinterpret_cast<std::uintptr_t>(room));
  if (cpyfn) {
    cpyfn(buf, data);
  } else {
    std::memcpy(buf, data, size);
  }
  return buf;
}

// The largest argument block copied onto a stack below an undeferred task's frame.
constexpr std::size_t max_alloca_copy = std::size_t{64} << 10;

// Below this address the stack that context `c` runs on has less than a quarter of a ULT stack
// left (0: a thread's stack, whose size weft does not know, taken to have room, as libgomp takes
// it). Measured once per context: the stack a context runs on never changes, and one that runs on
// its creator's stack takes its creator's floor, so a recursion of undeferred tasks measures once
// (measuring at every level, a call into weft and a look at the unit's descriptor, was 5% of BOTS
// nqueens on one thread, perf).
[[gnu::noinline]] std::uintptr_t measure_stack_floor() {
  static const std::size_t quarter = ult_stack_size() / 4;
  const std::size_t left = this_unit::stack_left();
  if (left == 0) return 0;
  return reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0)) - left + quarter;
}

inline std::uintptr_t stack_floor(context& c) {
  if (c.stack_floor == context::unmeasured_stack_floor) [[unlikely]]
    c.stack_floor = measure_stack_floor();
  return c.stack_floor;
}

// Whether `bytes` more of the calling unit's stack, which context `c` runs on, leave it above
// its floor: an undeferred task then runs on it, its arguments copied there; otherwise it gets a
// stack of its own, its arguments a heap block.
inline bool stack_room_for(context& c, std::size_t bytes) {
  if (bytes > max_alloca_copy) return false;
  const std::uintptr_t floor = stack_floor(c);
  const auto here = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
  return here >= floor && here - floor >= bytes;
}

// Whether the calling unit, running context `c`, has less than a quarter of a ULT stack left.
inline bool low_on_stack(context& c) {
  return !stack_room_for(c, 0);
}

// A task created while task reductions are open may update a member's private copies (found by
// omp_get_thread_num() or GOMP_task_reduction_remap): it runs in the place of a member that waits
// at a scheduling point, taking that member's number, so that no two units update one copy at
// the same time.
void take_slot(context& c) {
  c.held = acquire_slot(*c.t, c.num);
  c.held_kind = slot_task;
  c.num = c.held;
}

void drop_slot(context& c) {
  c.t->members[static_cast<std::size_t>(c.held)].slot_state.store(slot_free,
                                                                  std::memory_order_release);
  c.held = -1;
}

void run_task(unit_arg* a) noexcept {
  auto* t = reinterpret_cast<task_rec*>(a);
  wait_preds(t->preds);
  count_started(*t->counted);
  const bool run = !skipped(t->ctx) || t->copied;
  if (run) {
    if (t->ctx.red_task) take_slot(t->ctx);
    t->fn(t->data);
    if (t->ctx.held >= 0) drop_slot(t->ctx);
  }
  finish_children(t->ctx);
  if (detach_state* s = t->detach) {
    if (!run && cancel_event(s)) arrive(s);
    arrive(s);
    return;
  }
  mark_done(t);
  unref(t);
}

// The body of the ULT of a task with a priority (`a`: its own record): runs the most urgent task
// of its queue, as the current context of this ULT while it runs.
void run_prioritized(unit_arg* a) noexcept {
  auto* own = reinterpret_cast<task_rec*>(a);
  task_rec* t = own->queue->pop();
  own->hdr.cur = &t->ctx;
  run_task(&t->hdr);
  unref(own);  // this ULT's reference: `own` itself may have run on another ULT
}

// A deferred task `t` of `parent` with a priority, or without one (0) while siblings may have
// one: its ULT runs the most urgent task of the queue (see prio_queue). Once a task has siblings
// with a priority, it waits in their queue too (0 is the lowest), so that it runs after them.
// -1: its creator joins it at once, it is never queued.
[[gnu::noinline]] void queue_by_priority(context& parent, task_rec* t, int priority) {
  prio_queue*& q = parent.group ? parent.group->prio : parent.prio;
  if (priority < 0 || (priority == 0 && !q)) return;
  g_priority_used.store(true, std::memory_order_relaxed);
  if (!q) q = new prio_queue;
  t->queue = q;
  t->hdr.run = &run_prioritized;
  // Its ULT may run a sibling instead, so it holds a reference of its own to this record.
  t->refs.fetch_add(1, std::memory_order_relaxed);
  q->push(priority, t);
}

void run_queued(context& c, std::size_t first);

// The waits of an undeferred task, out of line so that the frame every level of undeferred tasks
// adds stays small: its predecessors, before it runs; its fulfilment (a detached task), after.
[[gnu::noinline]] void wait_undeferred_deps(context& parent, const dep_list& deps) {
  std::vector<task_rec*> preds = link_deps(parent, deps, nullptr);
  if (!preds.empty()) {
    const slot_pause pause(parent);
    run_queued(parent, 0);
    wait_preds(preds);
  }
  for (task_rec* p : preds) unref(p);
}

[[gnu::noinline]] void wait_undeferred_event(context& child, detach_state* event, bool run) {
  if (!run && cancel_event(event)) arrive(event);
  arrive(event);
  const slot_pause pause(child);
  event->completed.wait();
}

// Runs a task of context `parent` at once (undeferred): on the caller's stack, as libgomp runs it,
// so a recursion of undeferred tasks (every task past the queued limit) nests as deeply as it
// would on libgomp; this frame, which every level adds, holds little beyond the child's context
// and its argument copy. `deps`: null, or the dependences.
// `hand_out` gives the event handle of a detached task out.
template <class Prepare, class HandOut>
void run_undeferred(context** slot, context& parent, void (*fn)(void*), void* data,
                    void (*cpyfn)(void*, void*), std::size_t size, std::size_t align,
                    bool final_task, const dep_list* deps, bool detach, Prepare& prepare,
                    HandOut& hand_out) {
  if (deps) wait_undeferred_deps(parent, *deps);
  context child(parent, final_task, parent.undeferred_depth + 1);
  // With task reductions open the child runs on its creator's slot, or takes one.
  bool own_slot = false;
  if (parent.t && parent.t->red_active.load(std::memory_order_acquire) > 0) {
    if (!parent.explicit_task) {
      child.held = parent.num;
      child.held_kind = slot_member;
    } else if (parent.held >= 0) {
      child.held = parent.held;
      child.held_kind = parent.held_kind;
    } else {
      take_slot(child);
      own_slot = true;
    }
    child.num = child.held;
  }
  // On the heap: rare, and an optional here would be cleared for every undeferred task.
  std::unique_ptr<detach_state> event;
  if (detach) {
    event = std::make_unique<detach_state>();
    hand_out(event.get());
  }
  void* buf = data;
  // The copy of the argument block: on the stack when it fits (GCC's blocks are a few pointers
  // and firstprivate values), else on the heap (a larger block of a plain undeferred task goes
  // onto the stack in run_undeferred_plain(); this path is for the tasks that wait for
  // predecessors or an event, or hold a task reduction slot).
  alignas(16) unsigned char local[max_stack_copy];
  std::unique_ptr<unsigned char[]> heap;
  if (cpyfn || size) {
    const std::size_t room_size = size + align - 1;
    unsigned char* room = local;
    if (room_size > sizeof local) {
      heap = std::make_unique_for_overwrite<unsigned char[]>(room_size);
      room = heap.get();
    }
    buf = copy_arguments(room, data, cpyfn, size, align);
  }
  prepare(buf);
  struct outer_task {
    bool outer;
    explicit outer_task(bool o) : outer(o) {
      if (outer) g_outer_busy.fetch_add(1, std::memory_order_relaxed);
    }
    ~outer_task() {
      if (outer) g_outer_busy.fetch_sub(1, std::memory_order_relaxed);
    }
  } counted(parent.level == 0);
  context_scope scope(slot, &child);
  const bool run = !skipped(child) || cpyfn != nullptr;
  if (run) fn(buf);
  if (own_slot) drop_slot(child);
  finish_children(child);
  if (event) wait_undeferred_event(child, event.get(), run);
}

// The memory of a deferred task: a `Record` and, at `data`, an argument block of `size` bytes
// aligned to `align`, in one allocation: a task block from the thread's list where it fits (most
// tasks), else malloc where its alignment suffices (glibc serves it from the thread's cache, while
// aligned_alloc takes the arena's lock, which the streams freeing tasks contend for). Freed by
// give_task_block() when `block`, else by free().
struct task_memory {
  void* mem;
  void* data;
  bool block;
};

template <class Record>
task_memory take_task_memory(std::size_t size, std::size_t align) {
  const std::size_t offset = round_up(sizeof(Record), align);
  const std::size_t mem_align = std::max(alignof(Record), align);
  const std::size_t mem_size = (offset + size + 63) / 64 * 64;
  const bool block = mem_align <= alignof(std::max_align_t) && mem_size <= task_block_bytes;
  void* mem = block                                    ? take_task_block()
              : mem_align <= alignof(std::max_align_t) ? std::malloc(mem_size)
                                                       : std::aligned_alloc(mem_align, mem_size);
  if (!mem) fatal("out of memory creating a task");
  return {mem, static_cast<unsigned char*>(mem) + offset, block};
}

// Whether a deferred task waits in its creator's list (queue_task) rather than on a ULT: in a
// team of one no other thread may run it, and its creator runs it at its next scheduling point,
// as libgomp's thread runs its team's queue. Tasks with dependences, an event or task reductions
// take the general path, whose waits and slots they need, and so do all tasks where priorities
// are in use (OMP_MAX_TASK_PRIORITY > 0: a task without one must run after its siblings with
// one).
inline bool waits_in_creator(const context& parent, int priority, const void* depend,
                             const void* detach) {
  static const bool priorities = settings().max_task_priority > 0;
  return parent.t->nthreads == 1 && priority == 0 && !depend && !detach && !priorities &&
         parent.t->red_active.load(std::memory_order_acquire) == 0;
}

// Which path GOMP_task takes for a task of `parent` (`room`: the bytes its argument copy needs,
// with its alignment). `queue`: deferred, waiting in its creator's list (waits_in_creator());
// `undeferred`: run at once on this stack by run_undeferred_plain(), with nothing to wait for
// and its arguments in that frame; `general`: everything else (GOMP_task's inline path), where
// spawn() decides. The first two are what spawn() would decide: none of its checks (cancellation, a
// team learning whether its members may be tasklets, orphaned constructs and tasks outside any
// region, task reductions, the stack left) has anything to do.
enum class task_path { queue, undeferred, general };

inline task_path quick_path(context& parent, bool if_clause, unsigned flags, std::size_t room) {
  const team* t = parent.t;
  const bool deferred = if_clause && !parent.final_task;
  // A deferred task of a wider team (a ULT) is decided first: the general path is its own.
  if (!t || (deferred && t->nthreads != 1) || (flags & (flag_depend | flag_detach)))
    return task_path::general;
  static const bool cancellation = settings().cancellation;
  if (cancellation || t->orphaned() || parent.level == 0 || t->blocking_flag ||
      t->red_active.load(std::memory_order_acquire) != 0) {
    return task_path::general;
  }
  if (deferred && live_count_here().queued() < task_limit(parent)) {
    return !(flags & flag_priority) && waits_in_creator(parent, 0, nullptr, nullptr)
               ? task_path::queue
               : task_path::general;
  }
  // The stack is looked at from the second level of undeferred tasks on (see spawn()), and for an
  // argument block larger than run_undeferred_plain()'s frame holds.
  if ((parent.undeferred_depth > 0 || room > max_stack_copy) &&
      !stack_room_for(parent, room > max_stack_copy ? room : 0)) {
    return task_path::general;
  }
  return task_path::undeferred;
}

// An undeferred task of `parent` on quick_path()'s `undeferred` path: run_undeferred() without
// the waits, events and task reduction slots it never has. Never inlined: a large argument block
// is copied into this frame's stack (alloca).
[[gnu::noinline]] void run_undeferred_plain(context** slot, context& parent, void (*fn)(void*),
                                            void* data, void (*cpyfn)(void*, void*),
                                            std::size_t size, std::size_t align, bool final_task) {
  context child(parent, final_task, parent.undeferred_depth + 1);
  alignas(16) unsigned char local[max_stack_copy];
  void* buf = data;
  if (cpyfn || size) {
    const std::size_t room_size = size + align - 1;
    unsigned char* const room = room_size <= sizeof local
                                    ? local
                                    : static_cast<unsigned char*>(__builtin_alloca(room_size));
    buf = copy_arguments(room, data, cpyfn, size, align);
  }
  const context_scope scope(slot, &child);
  if (!skipped(child) || cpyfn) fn(buf);
  finish_children(child);
}

// Creates a deferred task of context `parent` in a team of one (waits_in_creator()): a
// queued_task in the creator's list. Parameters as run_undeferred's.
template <class Prepare>
[[gnu::noinline]] void queue_task(context& parent, void (*fn)(void*), void* data,
                                  void (*cpyfn)(void*, void*), std::size_t size, std::size_t align,
                                  bool final_task, Prepare& prepare) {
  const task_memory m = take_task_memory<queued_task>(size, align);
  auto* q = ::new (m.mem) queued_task{nullptr,    fn,         m.data,  parent.group,    nullptr,
                                      parent.icv, final_task, m.block, cpyfn != nullptr};
  if (cpyfn) {
    cpyfn(q->data, data);
  } else if (size) {
    std::memcpy(q->data, data, size);
  }
  prepare(q->data);
  q->counted = &live_count_here();
  count_created(*q->counted);
  parent.queued.push(q);
}

// Creates a deferred task of context `parent`: a ULT in the calling stream's main pool, with its
// record and argument block in one allocation. Parameters as run_undeferred's.
template <class Prepare, class HandOut>
[[gnu::noinline]] void spawn_deferred(context& parent, void (*fn)(void*), void* data,
                                      void (*cpyfn)(void*, void*), std::size_t size,
                                      std::size_t align, bool final_task, int priority,
                                      const dep_list* deps, bool detach, Prepare& prepare,
                                      HandOut& hand_out) {
  const task_memory m = take_task_memory<task_rec>(size, align);
  auto* t = ::new (m.mem) task_rec(parent, final_task);
  t->block = m.block;
  t->hdr.cur = &t->ctx;
  t->hdr.run = &run_task;
  t->fn = fn;
  t->data = m.data;
  t->ctx.red_task = parent.t && parent.t->red_active.load(std::memory_order_acquire) > 0;
  if (detach) {
    t->detach = new detach_state;
    t->detach->task = t;
    hand_out(t->detach);
  }
  if (cpyfn) {
    cpyfn(t->data, data);
    t->copied = true;
  } else if (size) {
    std::memcpy(t->data, data, size);
  }
  prepare(t->data);
  t->counted = &live_count_here();
  count_created(*t->counted);
  if (deps) t->preds = link_deps(parent, *deps, t);
  execution_stream* self = this_unit::stream();
  pool& p = self ? self->main_pool() : execution_stream::primary().main_pool();
  // Only tasks free of dependences call waiting members over: those are runnable whoever takes
  // them, while a stolen task with predecessors mostly blocks on them on the thief's stream, and
  // a fine-grained dependence graph (omp/bench wavefront, 4096 tasks of about 1 us) ran 17%
  // slower with its waiting member's stream stealing from the creator than without.
  if (!deps) note_task_queued(self);
  if (detach) {
    // The creator's reference: it waits for the completion, which may come after the ULT ended.
    t->refs.fetch_add(1, std::memory_order_relaxed);
    parent.detached.push_back(t);
  }
  if ((priority > 0 || g_priority_used.load(std::memory_order_relaxed)) && !deps && !detach)
      [[unlikely]] {
    queue_by_priority(parent, t, priority);
  }
  parent.children.push_back(ult::create(p, &unit_entry, t));
}

// Creates one task of the calling unit's current context (`slot`: current_slot()): deferred as
// a ULT, or run at once (undeferred) when `deferred` is false.
// `prepare` fills the argument block (after cpyfn or the copy). `detach`, when not null, is where
// the encountering task's event handle lives (the task's own copy is the first word of `data`).
// Inline in its callers: GOMP_task's call passed twelve arguments for every task.
template <class Prepare>
[[gnu::always_inline]] inline void spawn(context** slot, void (*fn)(void*), void* data,
                                         void (*cpyfn)(void*, void*), long arg_size, long arg_align,
                                         bool deferred, bool final_task, int priority,
                                         void** depend, void* detach, Prepare prepare) {
  context& parent = **slot;
  // A task created in a cancelled taskgroup or region is discarded, as libgomp does.
  static const bool cancellation = settings().cancellation;
  if (cancellation && skipped(parent)) [[unlikely]]
    return;
  note_blocking(parent);
  const std::size_t align = arg_align > 0 ? static_cast<std::size_t>(arg_align) : 1;
  const std::size_t size = arg_size > 0 ? static_cast<std::size_t>(arg_size) : 0;
  // Outside any parallel region a task runs at once, as in libgomp (no team to run it later),
  // also within an orphaned worksharing construct there; it has no sibling to depend on.
  const bool orphaned = !parent.t || parent.t->orphaned();
  if (orphaned) {
    deferred = false;
    depend = nullptr;
  }
  dep_list deps;
  if (depend) deps = read_depend(depend);
  // A detached task is never made undeferred for the limit: its creator would wait for a
  // fulfilment that the creator itself may be about to make.
  if (deferred && !detach && live_count_here().queued() >= task_limit(parent)) {
    deferred = false;
  }
  // The handle is written where the encountering task reads it and into the task's data before
  // the copy, as libgomp does (GCC places the event first in the data block).
  auto hand_out = [&](detach_state* s) {
    const std::uintptr_t h = register_event(s);
    *static_cast<std::uintptr_t*>(detach) = h;
    if (data) *static_cast<std::uintptr_t*>(data) = h;
  };
  if (!deferred) {
    // An undeferred task nests on its creator's stack, as on libgomp's thread. Where that stack
    // runs low in a recursion of undeferred tasks (past the queued limit, if(0), final tasks) the
    // task gets a stack of its own instead and its creator waits for it: a recursion that fits
    // a libgomp thread's stack fits here whatever weft's frames add per level, and one deeper
    // still completes. The stack is measured from the second level on: one undeferred task
    // below a member or a deferred task (most of them) costs no lookup.
    if (!detach && !orphaned && parent.undeferred_depth > 0 && low_on_stack(parent)) {
      spawn_deferred(parent, fn, data, cpyfn, size, align, final_task, -1, depend ? &deps : nullptr,
                     false, prepare, hand_out);
      ult child = parent.children.take_back();
      const slot_pause pause(parent);
      child.join();
      return;
    }
    run_undeferred(slot, parent, fn, data, cpyfn, size, align, final_task, depend ? &deps : nullptr,
                   detach != nullptr, prepare, hand_out);
    return;
  }
  if (waits_in_creator(parent, priority, depend, detach)) {
    queue_task(parent, fn, data, cpyfn, size, align, final_task, prepare);
    return;
  }
  spawn_deferred(parent, fn, data, cpyfn, size, align, final_task, priority,
                 depend ? &deps : nullptr, detach != nullptr, prepare, hand_out);
}

}  // namespace

void task_list::push(queued_task* t) noexcept {
  t->next = head_;
  head_ = t;
  ++count_;
}

queued_task* task_list::pop() noexcept {
  queued_task* t = head_;
  head_ = t->next;
  --count_;
  return t;
}

namespace {

// Runs the queued task `q` of `creator` (whose list no longer holds it) with its own context
// current in `slot`, the calling unit's, and frees it. `depth`: its undeferred_depth (1 nested
// on the creator's stack: its own undeferred children measure what is left).
void run_queued_task(context** slot, context& creator, queued_task* q,
                     std::uint32_t depth) noexcept {
  {
    context child(creator, q->icv, q->group, q->final_task, depth);
    const context_scope scope(slot, &child);
    if (!skipped(child) || q->copied) q->fn(q->data);
    finish_children(child);
  }
  count_started(*q->counted);
  const bool block = q->block;
  q->~queued_task();
  if (block) {
    give_task_block(q);
  } else {
    std::free(q);
  }
}

// A queued task on a ULT of its own (run_queued, low on stack): the ULT's argument.
struct queued_on_ult {
  unit_arg hdr;
  context* creator;
  queued_task* task;
};

void run_queued_on_ult(unit_arg* a) noexcept {
  auto* r = reinterpret_cast<queued_on_ult*>(a);
  run_queued_task(&r->hdr.cur, *r->creator, r->task, 0);
}

// Runs the queued tasks of `c`, the calling unit's current task, from index `first` on, newest
// first: each here, on the caller's stack, with its context current (where the stack runs low, on
// a ULT of its own that the caller joins, as an undeferred task). First at every point where `c`
// waits: a sibling with a ULT may wait for one of them (for the event of a detached task it
// depends on), and nothing else runs them. The stack left and the slot are the same for every
// task of the loop: each returns before the next.
void run_queued(context& c, std::size_t first) {
  if (c.queued.size() <= first) return;
  if (low_on_stack(c)) {
    while (c.queued.size() > first) {
      queued_on_ult r{{&c, &run_queued_on_ult}, &c, c.queued.pop()};
      execution_stream* self = this_unit::stream();
      pool& p = self ? self->main_pool() : execution_stream::primary().main_pool();
      ult::create(p, &unit_entry, &r).join();
    }
    return;
  }
  context** const slot = current_slot();
  while (c.queued.size() > first) run_queued_task(slot, c, c.queued.pop(), 1);
}

// Waits for the detached children of `c` from index `first` on, newest first.
void finish_detached(context& c, std::size_t first) {
  while (c.detached.size() > first) {
    task_rec* t = c.detached.back();
    c.detached.pop_back();
    t->detach->completed.wait();
    unref(t);
  }
}

}  // namespace

void finish_children(context& c) {
  if (c.children.empty() && c.queued.empty()) return;
  const slot_pause pause(c);
  run_queued(c, 0);
  // Joined newest first: the newest children are the likeliest to sit unstarted in this stream's
  // pool, where a join runs them at once.
  while (!c.children.empty()) c.children.take_back().join();
  if (!c.detached.empty()) finish_detached(c, 0);
  delete c.deps;
  c.deps = nullptr;
}

void context::free_tables() noexcept {
  delete deps;
  delete prio;
}

void fulfill_event(std::uintptr_t handle) {
  bool found = false;
  detach_state* s = nullptr;
  {
    std::lock_guard lock(g_events_lock);
    const auto it = g_events.find(handle);
    if (it != g_events.end()) {
      found = true;
      s = it->second;
      g_events.erase(it);
    }
  }
  if (!found) {
    fatal("omp_fulfill_event: " + std::to_string(handle) +
          " is not the event of a detached task waiting to be fulfilled (fulfilled twice, or "
          "never handed out by detach)");
  }
  if (s) arrive(s);
}

void slot_pause::pause(context& c) {
  std::size_t slot;
  if (!c.explicit_task) {
    slot = static_cast<std::size_t>(c.num);
    own_ = slot_member;
  } else if (c.held >= 0) {
    slot = static_cast<std::size_t>(c.held);
    own_ = c.held_kind;
  } else {
    return;
  }
  c_ = &c;
  c.paused = true;
  word_ = &c.t->members[slot].slot_state;
  word_->store(slot_free, std::memory_order_release);
}

void slot_pause::resume() {
  // A task may have taken the slot meanwhile: it releases it when it ends or waits itself.
  wait_until([w = word_, own = own_] {
    int e = slot_free;
    return w->compare_exchange_strong(e, own, std::memory_order_acquire);
  });
  c_->paused = false;
}

int acquire_slot(team& t, int prefer) {
  const int n = t.nthreads;
  int got = -1;
  wait_until([&] {
    for (int i = 0; i < n; ++i) {
      const int k = (prefer + i) % n;
      int e = slot_free;
      if (t.members[static_cast<std::size_t>(k)].slot_state.compare_exchange_strong(
              e, slot_task, std::memory_order_acquire)) {
        got = k;
        return true;
      }
    }
    return false;
  });
  return got;
}

namespace {

// GCC's task reduction descriptor (libgomp's layout): a chain of blocks, each
//   d[0] number of reductions, d[1] bytes of one member's chunk, d[2] alignment (on return: the
//   array of nthreads chunks), d[3] allocator, d[4] next block (on return: the chain registered
//   before), d[5] nonzero on the first block of one registration, d[6] end of the array,
//   then per reduction: original address, offset in the chunk, its block (filled here).
// GCC's code initialises and combines the copies itself; the runtime allocates them zeroed and
// maps addresses to the copy of the calling member.
void register_reductions(std::uintptr_t* data, std::uintptr_t* old, const std::uintptr_t* orig,
                         int nthreads) {
  std::uintptr_t* d = data;
  for (;;) {
    if (orig) {
      // A worksharing construct's members share the array the first of them allocated.
      d[2] = orig[2];
      d[6] = orig[6];
      orig = reinterpret_cast<const std::uintptr_t*>(orig[4]);
    } else {
      const std::size_t align = std::max<std::size_t>(d[2], alignof(std::max_align_t));
      const std::size_t size = d[1] * static_cast<std::size_t>(nthreads);
      void* mem = std::aligned_alloc(align, (size + align - 1) / align * align);
      if (!mem) fatal("out of memory allocating task reduction copies");
      std::memset(mem, 0, size);
      d[2] = reinterpret_cast<std::uintptr_t>(mem);
      d[6] = d[2] + size;
    }
    d[5] = 0;
    for (std::size_t j = 0; j < d[0]; ++j) d[7 + 3 * j + 2] = reinterpret_cast<std::uintptr_t>(d);
    if (d[4] == 0) {
      d[4] = reinterpret_cast<std::uintptr_t>(old);
      break;
    }
    d = reinterpret_cast<std::uintptr_t*>(d[4]);
  }
  data[5] = 1;
}

// Frees the arrays of one registration (its blocks up to the chain registered before).
void free_reductions(std::uintptr_t* data) {
  std::uintptr_t* d = data;
  do {
    std::free(reinterpret_cast<void*>(d[2]));
    d = reinterpret_cast<std::uintptr_t*>(d[4]);
  } while (d && !d[5]);
}

int team_width(const context& c) {
  return c.t ? c.t->nthreads : 1;
}

void open_scope(context& c) {
  if (c.t) c.t->red_active.fetch_add(1, std::memory_order_acq_rel);
}

void close_scope(context& c) {
  if (c.t) c.t->red_active.fetch_sub(1, std::memory_order_acq_rel);
}

// The implicit task of a member of a region with reduction(task, ...): its tasks see the
// region's reductions as if in a taskgroup around the region body.
struct parallel_red {
  void (*fn)(void*);
  void* data;
  std::atomic<int> width{0};
  std::atomic<int> state{0};  // 0: no copies yet, 1: being allocated, 2: allocated
};

void parallel_red_member(void* arg) {
  auto* p = static_cast<parallel_red*>(arg);
  context& c = current();
  // Members wait for the copies below (and such regions make tasks): never tasklets.
  note_blocking(c);
  auto* rdata = *static_cast<std::uintptr_t**>(p->data);
  // The first member to start allocates the copies, one chunk per member of the team.
  int s = 0;
  if (p->state.compare_exchange_strong(s, 1, std::memory_order_acq_rel)) {
    p->width.store(team_width(c), std::memory_order_relaxed);
    register_reductions(rdata, nullptr, nullptr, team_width(c));
    p->state.store(2, std::memory_order_release);
  } else {
    wait_until([p] { return p->state.load(std::memory_order_acquire) == 2; });
  }
  taskgroup g{c.group, c.children.size(), c.detached.size(), c.queued.size()};
  g.reductions = rdata;
  c.group = &g;
  open_scope(c);
  p->fn(p->data);
  // Its tasks refer to `g`: they end here.
  finish_children(c);
  close_scope(c);
  c.group = g.outer;
}

}  // namespace

bool cancelled_group(context& c) {
  return group_cancelled(c.group);
}

bool cancel_group(context& c) {
  taskgroup* g = c.group;
  if (!g) return false;
  if (g->workshare && g->outer) g = g->outer;
  g->cancelled.store(true, std::memory_order_release);
  return true;
}

}  // namespace weft::omp

using namespace weft;
using namespace weft::omp;

extern "C" {

void GOMP_task(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size,
               long arg_align, bool if_clause, unsigned flags, void** depend, int priority,
               void* detach) {
  context** slot = current_slot();
  context& c = **slot;
  (void)flag_untied;
  // The two commonest cases of a team of one leave from here for paths of their own: a deferred
  // task that waits in its creator's list, and an undeferred task with nothing to wait for.
  // Everything else (ULTs, dependences, task reductions, ...) takes the general path inline,
  // without a second call and a second look-up of the slot (out of line, the general path cost
  // a task with task reductions about 100 instructions more, callgrind).
  const std::size_t size = arg_size > 0 ? static_cast<std::size_t>(arg_size) : 0;
  const std::size_t align = arg_align > 0 ? static_cast<std::size_t>(arg_align) : 1;
  switch (quick_path(c, if_clause, flags, cpyfn || size ? size + align - 1 : 0)) {
    case task_path::queue: {
      auto no_prepare = [](void*) {};
      queue_task(c, fn, data, cpyfn, size, align, (flags & flag_final) != 0, no_prepare);
      return;
    }
    case task_path::undeferred:
      run_undeferred_plain(slot, c, fn, data, cpyfn, size, align,
                           c.final_task || (flags & flag_final));
      return;
    case task_path::general:
      break;
  }
  const bool final_task = c.final_task || (flags & flag_final);
  const bool deferred = if_clause && !c.final_task;
  spawn(slot, fn, data, cpyfn, arg_size, arg_align, deferred, final_task,
        task_priority(flags, priority), (flags & flag_depend) ? depend : nullptr,
        (flags & flag_detach) ? detach : nullptr, [](void*) {});
}

void GOMP_taskwait(void) {
  context& c = current();
  note_blocking(c);
  finish_children(c);
}

void GOMP_taskwait_depend(void** depend) {
  context& c = current();
  note_blocking(c);
  const std::vector<task_rec*> preds = link_deps(c, read_depend(depend), nullptr);
  const slot_pause pause(c);
  if (!preds.empty()) run_queued(c, 0);
  wait_preds(preds);
  for (task_rec* p : preds) unref(p);
}

void GOMP_taskyield(void) {
  if (this_unit::is_ult()) this_unit::yield();
}

void GOMP_taskgroup_start(void) {
  context& c = current();
  c.group = new taskgroup{c.group, c.children.size(), c.detached.size(), c.queued.size()};
  if (c.group->outer) c.group->reductions = c.group->outer->reductions;
}

void GOMP_taskgroup_end(void) {
  context& c = current();
  taskgroup* g = c.group;
  if (!g) return;
  note_blocking(c);
  {
    const slot_pause pause(c);
    run_queued(c, g->first_queued);
    while (c.children.size() > g->first) c.children.take_back().join();
    finish_detached(c, g->first_detached);
  }
  c.group = g->outer;
  delete g;
}

void GOMP_taskgroup_reduction_register(std::uintptr_t* data) {
  context& c = current();
  register_reductions(data, c.group->reductions, nullptr, team_width(c));
  c.group->reductions = data;
  open_scope(c);
}

void GOMP_workshare_task_reduction_unregister(bool cancelled) {
  context& c = current();
  std::uintptr_t* const data = c.group->reductions;
  GOMP_taskgroup_end();
  close_scope(c);
  // The first member's descriptor owns the copies; member 0 combined them after the loop's
  // barrier, and the others never read them again.
  if (c.num == 0) free_reductions(data);
  if (!cancelled) team_wait(c);
}

void GOMP_taskgroup_reduction_unregister(std::uintptr_t* data) {
  close_scope(current());
  free_reductions(data);
}

void GOMP_task_reduction_remap(std::size_t cnt, std::size_t cntorig, void** ptrs) {
  const context& c = current();
  std::uintptr_t* const data = c.group ? c.group->reductions : nullptr;
  const auto id = static_cast<std::uintptr_t>(c.num);
  for (std::size_t i = 0; i < cnt; ++i) {
    const auto p = reinterpret_cast<std::uintptr_t>(ptrs[i]);
    bool found = false;
    // An original list item.
    for (std::uintptr_t* d = data; d && !found; d = reinterpret_cast<std::uintptr_t*>(d[4])) {
      for (std::size_t j = 0; j < d[0]; ++j) {
        const std::uintptr_t* e = d + 7 + 3 * j;
        if (e[0] != p) continue;
        ptrs[i] = reinterpret_cast<void*>(d[2] + id * d[1] + e[1]);
        if (i < cntorig) ptrs[cnt + i] = reinterpret_cast<void*>(e[0]);
        found = true;
        break;
      }
    }
    if (found) continue;
    // A copy an enclosing task was given: the same item in this member's chunk.
    for (std::uintptr_t* d = data; d; d = reinterpret_cast<std::uintptr_t*>(d[4])) {
      if (p < d[2] || p >= d[6]) continue;
      const std::uintptr_t off = (p - d[2]) % d[1];
      ptrs[i] = reinterpret_cast<void*>(d[2] + id * d[1] + off);
      if (i < cntorig) {
        for (std::size_t j = 0; j < d[0] && !found; ++j) {
          if (d[7 + 3 * j + 1] == off) {
            ptrs[cnt + i] = reinterpret_cast<void*>(d[7 + 3 * j]);
            found = true;
          }
        }
      } else {
        found = true;
      }
      break;
    }
    if (!found) {
      fatal(
          "in_reduction: no task_reduction or reduction(task, ...) in scope for the list "
          "item at " +
          std::to_string(p));
    }
  }
}

unsigned GOMP_parallel_reductions(void (*fn)(void*), void* data, unsigned num_threads,
                                  unsigned flags) {
  parallel_red p{fn, data};
  run_parallel(&parallel_red_member, &p, num_threads, flags, nullptr);
  return static_cast<unsigned>(p.width.load(std::memory_order_relaxed));
}

}  // extern "C"

namespace weft::omp {

void ws_register_reductions(context& c, std::uintptr_t* data, const std::uintptr_t* orig) {
  GOMP_taskgroup_start();
  c.group->workshare = true;
  register_reductions(data, c.group->reductions, orig, team_width(c));
  c.group->reductions = data;
  open_scope(c);
}

}  // namespace weft::omp

namespace {

// GOMP_taskloop and GOMP_taskloop_ull: the loop's iterations split into tasks of nearly equal
// sizes, each given its bounds in the first two words of its data.
template <class I>
void taskloop(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size,
              long arg_align, unsigned flags, unsigned long num_tasks, int priority,
              const parallel::iteration_space<I>& sp) {
  const int prio = task_priority(flags, priority);
  const std::uint64_t n = sp.count();
  if (n == 0) {
    // No copies: GCC's code skips the combination when the array pointer is null.
    if (!(flags & flag_nogroup) && (flags & flag_reduction)) {
      reinterpret_cast<std::uintptr_t**>(data)[2][2] = 0;
    }
    return;
  }
  context** slot = current_slot();
  context& c = **slot;
  // Task sizes: `tasks` tasks, the first `r` of them one iteration longer; with a strict
  // grainsize, tasks of exactly the grainsize and a shorter last one (GOMP_TASK_FLAG_STRICT).
  std::uint64_t tasks, q, r = 0, last = 0;
  if ((flags & flag_grainsize) && (flags & flag_strict)) {
    const std::uint64_t grain = num_tasks ? num_tasks : 1;
    tasks = n / grain;
    q = grain;
    last = n % grain;
    if (last) ++tasks;
  } else {
    if (flags & flag_grainsize) {
      tasks = num_tasks ? n / num_tasks : n;
    } else {
      tasks = num_tasks ? num_tasks : static_cast<std::uint64_t>(c.t ? c.t->nthreads : 1);
    }
    if (tasks == 0) tasks = 1;
    if (tasks > n) tasks = n;
    q = n / tasks;
    r = n % tasks;
  }
  const bool group = !(flags & flag_nogroup);
  if (group) GOMP_taskgroup_start();
  // reduction(...): the descriptor follows the two bounds in the data block; GCC combines the
  // copies after the call. (taskloop in_reduction sets no flag: its tasks remap themselves.)
  if (group && (flags & flag_reduction)) {
    GOMP_taskgroup_reduction_register(reinterpret_cast<std::uintptr_t**>(data)[2]);
  }
  const bool final_task = c.final_task || (flags & flag_final);
  const bool deferred = (flags & flag_if) && !c.final_task;
  std::uint64_t lo = 0;
  for (std::uint64_t k = 0; k < tasks; ++k) {
    const std::uint64_t hi = last && k + 1 == tasks ? n : lo + q + (k < r ? 1 : 0);
    const I s = sp.at(lo), e = sp.bound(hi, n);
    spawn(slot, fn, data, cpyfn, arg_size, arg_align, deferred, final_task, prio, nullptr, nullptr,
          [s, e](void* buf) {
            I* bounds = static_cast<I*>(buf);
            bounds[0] = s;
            bounds[1] = e;
          });
    lo = hi;
  }
  if (group) GOMP_taskgroup_end();
}

}  // namespace

extern "C" {

void GOMP_taskloop(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size,
                   long arg_align, unsigned flags, unsigned long num_tasks, int priority,
                   long start, long end, long step) {
  taskloop(fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, priority,
           parallel::make_space(start, end, step));
}

void GOMP_taskloop_ull(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size,
                       long arg_align, unsigned flags, unsigned long num_tasks, int priority,
                       unsigned long long start, unsigned long long end, unsigned long long step) {
  taskloop(fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, priority,
           parallel::make_space(static_cast<bool>(flags & flag_up), start, end, step));
}

}  // extern "C"
