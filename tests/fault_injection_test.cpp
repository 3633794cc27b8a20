// SPDX-License-Identifier: Apache-2.0
// Fault injection: the test executable interposes mmap, pthread_create, socket and connect (its
// definitions win over libc's for libweft too), replaces operator new/delete and, in builds
// without a sanitizer, interposes malloc, calloc, realloc, posix_memalign, aligned_alloc and
// memalign; it makes the Nth call of one of them fail, for every N up to the number of such
// calls a scenario makes. An allocation counts when weft asks for it: its caller lies in
// libweft.so or libweft-abt.so, or, for the C allocation functions, in libhwloc or libnuma, which
// weft calls (the test's own allocations do not count). Each run must end either normally or in
// a documented error (weft::error with errc::resource, std::bad_alloc from a C++ call that
// allocates, ABT_ERR_MEM from the C API), leave the runtime finalized, hang nowhere (a watchdog
// fails the process) and run every unit that was created exactly once. Nothing may leak: under
// the ASan configuration LeakSanitizer checks it; without a sanitizer the test keeps the blocks
// weft's C allocation calls return and checks that each run freed them all.
//
// Sanitizers own malloc (ASan and TSan replace it, and TSan also mmap and pthread_create), so
// their builds do not interpose the C allocation functions; TSan builds interpose nothing and
// skip the test.
#include <abt.h>
#include <dlfcn.h>
#include <execinfo.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif
#include <link.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <weft/barrier.hpp>
#include <weft/channel.hpp>
#include <weft/condition_variable.hpp>
#include <weft/events.hpp>
#include <weft/eventual.hpp>
#include <weft/future.hpp>
#include <weft/mutex.hpp>
#include <weft/rwlock.hpp>
#include <weft/schedulers/basic_scheduler.hpp>
#include <weft/schedulers/fifo_pool.hpp>
#include <weft/semaphore.hpp>
#include <weft/unit_local.hpp>

#include <cstdlib>
#include <cstring>
#include <new>

#include "test_support.hpp"
#include "watchdog.hpp"

namespace {

enum class call { mmap, pthread_create, socket, connect, alloc, c_alloc };
constexpr int call_kinds = 6;

/// Per kind: calls seen while armed, and which one (1-based) fails; 0: none.
std::atomic<int> g_seen[call_kinds];
std::atomic<int> g_fail_at[call_kinds];
std::atomic<bool> g_armed{false};
bool g_trace = false;  // FAULT_INJECTION_TRACE set: name each run, show where allocations fail

/// True when this call of `k` is the one to fail.
[[maybe_unused]] bool inject(call k) {
  if (!g_armed.load(std::memory_order_relaxed)) return false;
  const int i = static_cast<int>(k);
  const int n = g_seen[i].fetch_add(1, std::memory_order_relaxed) + 1;
  return n == g_fail_at[i].load(std::memory_order_relaxed);
}

/// The executable segments of libweft.so and libweft-abt.so (an allocation whose caller lies in
/// one of them is weft's), and of the libraries weft calls that allocate with malloc.
struct code_range {
  std::uintptr_t lo = 0, hi = 0;
};
code_range g_weft_code[8];
int g_weft_code_count = 0;
code_range g_dep_code[8];
int g_dep_code_count = 0;

int note_weft_segments(dl_phdr_info* info, std::size_t, void*) {
  const char* name = info->dlpi_name ? info->dlpi_name : "";
  const bool weft = std::strstr(name, "libweft.so") || std::strstr(name, "libweft-abt.so");
  const bool dep = std::strstr(name, "libhwloc.so") || std::strstr(name, "libnuma.so");
  if (!weft && !dep) return 0;
  code_range* ranges = weft ? g_weft_code : g_dep_code;
  int& count = weft ? g_weft_code_count : g_dep_code_count;
  for (int i = 0; i < info->dlpi_phnum && count < 8; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
    const std::uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
    ranges[count++] = {lo, lo + ph.p_memsz};
  }
  return 0;
}

bool in_ranges(const code_range* ranges, int count, void* caller) noexcept {
  const auto a = reinterpret_cast<std::uintptr_t>(caller);
  for (int i = 0; i < count; ++i)
    if (a >= ranges[i].lo && a < ranges[i].hi) return true;
  return false;
}

/// True when `caller` is code of libweft.so or libweft-abt.so.
[[maybe_unused]] bool in_weft(void* caller) noexcept {
  return in_ranges(g_weft_code, g_weft_code_count, caller);
}

/// True when `caller` is code of weft or of a library it allocates through.
[[maybe_unused]] bool in_weft_or_deps(void* caller) noexcept {
  return in_weft(caller) || in_ranges(g_dep_code, g_dep_code_count, caller);
}

/// operator new's body: fails (nullptr) when this is the allocation to fail.
[[maybe_unused]] void* allocate(std::size_t n, std::size_t align, void* caller) noexcept {
  if (g_armed.load(std::memory_order_relaxed) && in_weft(caller) && inject(call::alloc)) {
    if (g_trace) {  // where the failing allocation is, to debug a scenario
      void* frames[16];
      ::backtrace_symbols_fd(frames, ::backtrace(frames, 16), 2);
    }
    return nullptr;
  }
  if (n == 0) n = 1;
  if (align <= alignof(std::max_align_t)) return std::malloc(n);
  void* p = nullptr;
  return ::posix_memalign(&p, align, n) == 0 ? p : nullptr;
}

template <class F>
[[maybe_unused]] F next_symbol(const char* name) {
  return reinterpret_cast<F>(::dlsym(RTLD_NEXT, name));
}

}  // namespace

// ThreadSanitizer keeps its own books on mappings and threads through its interceptors of these
// functions; replacing them breaks it, so the TSan build interposes nothing and skips the test.
// The C library's declarations name their parameters with reserved identifiers (__size, ...),
// which a definition outside it must not use.
// NOLINTBEGIN(readability-inconsistent-declaration-parameter-name)
#ifndef __SANITIZE_THREAD__
extern "C" void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
  if (inject(call::mmap)) {
    errno = ENOMEM;
    return MAP_FAILED;
  }
  const long r = ::syscall(SYS_mmap, addr, length, prot, flags, fd, offset);
  if (r < 0 && r > -4096) {
    errno = static_cast<int>(-r);
    return MAP_FAILED;
  }
  return reinterpret_cast<void*>(r);
}

extern "C" int pthread_create(pthread_t* t, const pthread_attr_t* attr, void* (*fn)(void*),
                              void* arg) {
  using real_t = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
  static const real_t real = next_symbol<real_t>("pthread_create");
  if (inject(call::pthread_create)) return EAGAIN;
  return real(t, attr, fn, arg);
}

extern "C" int socket(int domain, int type, int protocol) {
  if (inject(call::socket)) {
    errno = EMFILE;
    return -1;
  }
  return static_cast<int>(::syscall(SYS_socket, domain, type, protocol));
}

extern "C" int connect(int fd, const struct sockaddr* addr, socklen_t len) {
  if (inject(call::connect)) {
    errno = ECONNREFUSED;
    return -1;
  }
  const long r = ::syscall(SYS_connect, fd, addr, len);
  if (r < 0) {
    errno = static_cast<int>(-r);
    return -1;
  }
  return 0;
}

#if !defined(__SANITIZE_ADDRESS__)
// glibc's allocator under its own names: what the interposed C allocation functions call.
extern "C" void* __libc_malloc(size_t);
extern "C" void* __libc_calloc(size_t, size_t);
extern "C" void* __libc_realloc(void*, size_t);
extern "C" void* __libc_memalign(size_t, size_t);
extern "C" void __libc_free(void*);

namespace {

/// The blocks weft's C allocation calls returned while armed and nobody has freed yet: a run must
/// leave none (the leak check of builds without LeakSanitizer). A small table under a spin lock:
/// weft makes few such calls.
class block_table {
 public:
  void add(void* p) noexcept {
    if (!p) return;
    lock();
    for (void*& slot : slots_) {
      if (!slot) {
        slot = p;
        live_.fetch_add(1, std::memory_order_relaxed);
        break;
      }
    }
    unlock();
  }
  /// Forgets `p` if it is listed; true if it was.
  bool remove(void* p) noexcept {
    if (!p || live_.load(std::memory_order_relaxed) == 0) return false;
    bool found = false;
    lock();
    for (void*& slot : slots_) {
      if (slot == p) {
        slot = nullptr;
        live_.fetch_sub(1, std::memory_order_relaxed);
        found = true;
        break;
      }
    }
    unlock();
    return found;
  }
  int live() const noexcept { return live_.load(std::memory_order_relaxed); }
  void clear() noexcept {
    lock();
    for (void*& slot : slots_) slot = nullptr;
    live_.store(0, std::memory_order_relaxed);
    unlock();
  }

 private:
  void lock() noexcept {
    while (busy_.test_and_set(std::memory_order_acquire)) {
    }
  }
  void unlock() noexcept { busy_.clear(std::memory_order_release); }
  std::atomic_flag busy_ = ATOMIC_FLAG_INIT;
  std::atomic<int> live_{0};
  void* slots_[4096] = {};
};
block_table g_blocks;

/// True when this C allocation call, made from `caller`, is the one to fail; otherwise notes
/// whether to keep the block it returns (`keep`).
bool c_alloc_fails(void* caller, bool& keep) noexcept {
  keep = false;
  if (!g_armed.load(std::memory_order_relaxed) || !in_weft_or_deps(caller)) return false;
  if (inject(call::c_alloc)) return true;
  keep = true;
  return false;
}

void* kept(void* p, bool keep) noexcept {
  if (keep) g_blocks.add(p);
  return p;
}

}  // namespace

extern "C" void* malloc(size_t n) {
  bool keep;
  if (c_alloc_fails(__builtin_return_address(0), keep)) {
    errno = ENOMEM;
    return nullptr;
  }
  return kept(__libc_malloc(n), keep);
}

extern "C" void* calloc(size_t n, size_t size) {
  bool keep;
  if (c_alloc_fails(__builtin_return_address(0), keep)) {
    errno = ENOMEM;
    return nullptr;
  }
  return kept(__libc_calloc(n, size), keep);
}

extern "C" void* realloc(void* p, size_t n) {
  bool keep;
  if (c_alloc_fails(__builtin_return_address(0), keep)) {
    errno = ENOMEM;
    return nullptr;  // `p` stays valid, as realloc promises
  }
  const bool listed = g_blocks.remove(p);
  void* q = __libc_realloc(p, n);
  if (!q && n != 0 && listed) g_blocks.add(p);  // failed: `p` is still the caller's
  return kept(q, keep || listed);
}

extern "C" int posix_memalign(void** out, size_t align, size_t n) {
  if (align % sizeof(void*) != 0 || (align & (align - 1)) != 0) return EINVAL;
  bool keep;
  if (c_alloc_fails(__builtin_return_address(0), keep)) return ENOMEM;
  void* p = __libc_memalign(align, n);
  if (!p) return ENOMEM;
  *out = kept(p, keep);
  return 0;
}

extern "C" void* aligned_alloc(size_t align, size_t n) {
  bool keep;
  if (c_alloc_fails(__builtin_return_address(0), keep)) {
    errno = ENOMEM;
    return nullptr;
  }
  return kept(__libc_memalign(align, n), keep);
}

extern "C" void* memalign(size_t align, size_t n) {
  bool keep;
  if (c_alloc_fails(__builtin_return_address(0), keep)) {
    errno = ENOMEM;
    return nullptr;
  }
  return kept(__libc_memalign(align, n), keep);
}

extern "C" void free(void* p) {
  (void)g_blocks.remove(p);
  __libc_free(p);
}
#endif  // !__SANITIZE_ADDRESS__
// NOLINTEND(readability-inconsistent-declaration-parameter-name)

// Replaceable allocation functions (every form, so that new and delete always pair up).
void* operator new(std::size_t n) {
  if (void* p = allocate(n, 0, __builtin_return_address(0))) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  if (void* p = allocate(n, 0, __builtin_return_address(0))) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, std::align_val_t a) {
  if (void* p = allocate(n, static_cast<std::size_t>(a), __builtin_return_address(0))) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n, std::align_val_t a) {
  if (void* p = allocate(n, static_cast<std::size_t>(a), __builtin_return_address(0))) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  return allocate(n, 0, __builtin_return_address(0));
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  return allocate(n, 0, __builtin_return_address(0));
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate(n, static_cast<std::size_t>(a), __builtin_return_address(0));
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate(n, static_cast<std::size_t>(a), __builtin_return_address(0));
}
// The replaced new allocates with malloc (allocate()); the deletes free through this
// out-of-line function so that GCC, which takes ::operator new for its own allocator, does not
// see a free() inlined where it sees the new (-Wmismatched-new-delete on a correct pair).
namespace {
[[gnu::noinline]] void release(void* p) noexcept {
  std::free(p);
}
}  // namespace
void operator delete(void* p) noexcept {
  release(p);
}
void operator delete[](void* p) noexcept {
  release(p);
}
void operator delete(void* p, std::size_t) noexcept {
  release(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  release(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  release(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  release(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  release(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  release(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  release(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  release(p);
}
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  release(p);
}
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  release(p);
}

#endif  // __SANITIZE_THREAD__

namespace {

using namespace weft_test;

const char* kind_name(call k) {
  switch (k) {
    case call::mmap:
      return "mmap";
    case call::pthread_create:
      return "pthread_create";
    case call::socket:
      return "socket";
    case call::connect:
      return "connect";
    case call::alloc:
      return "operator new";
    case call::c_alloc:
      return "malloc";
  }
  return "?";
}

/// A failed allocation inside a C++ call surfaces as std::bad_alloc; the scenarios report it as
/// the resource error it is.
weft::error out_of_memory() {
  return weft::error(weft::errc::resource, "std::bad_alloc");
}

/// A scenario: runs from init to finalize and returns normally, or throws weft::error.
/// `ran` counts unit bodies, `created` the units whose creation returned.
struct counts {
  std::atomic<int> ran{0};
  int created = 0;
};

void scenario_init(counts&) {
  weft::init(test_config(2));
  weft::finalize();
}

void scenario_units(counts& c) {
  weft::init(test_config(2));
  std::vector<weft::ult> us;
  std::vector<weft::tasklet> ts;
  std::optional<weft::error> failed;
  try {
    for (int i = 0; i < 40; ++i) {
      us.push_back(weft::ult::create([&] { c.ran.fetch_add(1); }));
      ++c.created;
      ts.push_back(weft::tasklet::create([&] { c.ran.fetch_add(1); }));
      ++c.created;
    }
  } catch (const weft::error& e) {
    failed = e;
  } catch (const std::bad_alloc&) {
    failed = out_of_memory();
  }
  int lost = 0;
  for (auto& u : us) {
    try {
      u.join();
    } catch (const weft::error& e) {
      // A ULT that got no stack never ran: its body is not counted.
      EXPECT_EQ(e.condition(), weft::errc::resource) << e.what();
      ++lost;
    }
  }
  for (auto& t : ts) t.join();
  c.created -= lost;
  weft::finalize();
  if (failed) throw *failed;
}

void scenario_streams(counts&) {
  weft::init(test_config(1));
  std::optional<weft::error> failed;
  try {
    auto& s = weft::execution_stream::create();
    s.free();
  } catch (const weft::error& e) {
    failed = e;
  } catch (const std::bad_alloc&) {
    failed = out_of_memory();
  }
  weft::finalize();
  if (failed) throw *failed;
}

void scenario_resize(counts&) {
  weft::init(test_config(2));
  std::optional<weft::error> failed;
  try {
    const weft::resize_result up = weft::request_expand(2).wait();
    // A failed request says why; either way the count it reports is the live count.
    if (!up.ok) {
      EXPECT_FALSE(up.message.empty());
    }
    const weft::resize_result down = weft::request_stream_count(1).wait();
    EXPECT_TRUE(down.ok || g_seen[static_cast<int>(call::alloc)] > 0) << down.message;
    if (down.ok) {
      EXPECT_EQ(weft::execution_stream::count(), 1);
    }
  } catch (const weft::error& e) {
    failed = e;
  } catch (const std::bad_alloc&) {
    failed = out_of_memory();  // posting a request: nothing was queued
  }
  weft::finalize();
  if (failed) throw *failed;
}

void scenario_manager(counts&) {
  weft::config c = test_config(1);
  c.resource_manager = "unix:/nonexistent-weft-fault-dir/rm.sock";
  weft::init(c);
  // Let the connection thread try at least once (a failed socket() is retried after a second).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (g_seen[static_cast<int>(call::connect)].load() == 0 &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  weft::finalize();
}

/// Joins every handle; what escaped a unit must be a resource failure (weft::error or
/// std::bad_alloc). A ULT that got no stack never ran: it is taken off `created`.
template <class H>
void join_all(std::vector<H>& hs, counts& c) {
  for (auto& h : hs) {
    try {
      h.join();
    } catch (const weft::error& e) {
      EXPECT_EQ(e.condition(), weft::errc::resource) << e.what();
      if (std::strstr(e.what(), "stack")) --c.created;
    } catch (const std::bad_alloc&) {
    }
  }
}

// Every synchronisation primitive, on two streams, with timed waits (each arms a timer): the
// blocking calls have deadlines, so a partner that failed cannot leave a waiter hanging.
void scenario_sync(counts& c) {
  using namespace std::chrono_literals;
  weft::init(test_config(2));
  std::optional<weft::error> failed;
  std::atomic<bool> go{false}, stop{false};
  {
    weft::mutex m;
    weft::condition_variable cv;
    bool flag = false;
    weft::rwlock rw;
    weft::counting_semaphore<8> sem(0);
    weft::barrier bar(2);
    weft::eventual<int> ev;
    weft::channel<int> ch(1);
    std::optional<weft::unit_local<int>> local;
    std::vector<weft::ult> us;
    us.reserve(6);
    auto op = [&](int i) {
      c.ran.fetch_add(1);
      while (!go.load() && !stop.load()) weft::this_unit::yield();
      if (stop.load()) return;
      **local = i;
      switch (i) {
        case 0: {
          std::unique_lock lock(m);
          (void)cv.wait_for(lock, 50ms, [&] { return flag; });
          break;
        }
        case 1:
          weft::this_unit::sleep_for(1ms);
          {
            std::lock_guard lock(m);
            flag = true;
          }
          cv.notify_all();
          break;
        case 2:
          rw.lock_shared();
          rw.unlock_shared();
          rw.lock();
          rw.unlock();
          sem.release(1);
          break;
        case 3:
          (void)sem.try_acquire_for(50ms);
          ev.set(1);
          (void)ch.try_send(5);
          break;
        case 4:
          (void)ev.wait_for(50ms);
          (void)bar.arrive_and_wait_for(50ms);
          break;
        case 5:
          (void)bar.arrive_and_wait_for(50ms);
          (void)ch.try_recv();
          break;
      }
      EXPECT_EQ(**local, i);
    };
    try {
      local.emplace();
      for (int i = 0; i < 6; ++i) {
        us.push_back(
            weft::ult::create_on(*weft::execution_stream::by_rank(i % 2), [&op, i] { op(i); }));
        ++c.created;
      }
    } catch (const weft::error& e) {
      failed = e;
    } catch (const std::bad_alloc&) {
      failed = out_of_memory();
    }
    (failed ? stop : go).store(true);
    join_all(us, c);
  }
  weft::finalize();
  if (failed) throw *failed;
}

// A stream over pools the program made (a scheduler of its own), units pushed into them, the
// stream joined and freed.
void scenario_pools(counts& c) {
  weft::init(test_config(1));
  std::optional<weft::error> failed;
  weft::execution_stream* s = nullptr;
  std::vector<weft::ult> us;
  std::vector<weft::tasklet> ts;
  us.reserve(8);
  ts.reserve(8);
  try {
    std::shared_ptr<weft::pool> p = weft::make_fifo_pool(weft::access_mode::mpmc);
    s = &weft::execution_stream::create(
        std::make_unique<weft::basic_scheduler>(std::vector<std::shared_ptr<weft::pool>>{p}));
    for (int i = 0; i < 8; ++i) {
      us.push_back(weft::ult::create(*p, [&] { c.ran.fetch_add(1); }));
      ++c.created;
      ts.push_back(weft::tasklet::create(*p, [&] { c.ran.fetch_add(1); }));
      ++c.created;
    }
  } catch (const weft::error& e) {
    failed = e;
  } catch (const std::bad_alloc&) {
    failed = out_of_memory();
  }
  join_all(us, c);
  join_all(ts, c);
  try {
    if (s) {
      s->join();
      s->free();
    }
  } catch (const weft::error& e) {
    failed = e;
  } catch (const std::bad_alloc&) {
    failed = out_of_memory();
  }
  weft::finalize();
  if (failed) throw *failed;
}

/// Streams bound to CPUs: hwloc binds each thread, descriptors are placed on the streams' NUMA
/// node; units run, a stream is created and freed.
weft::config bound_config() {
  weft::config c = test_config(2);
  c.affinity = weft::affinity_policy::parse("compact");
  return c;
}

void scenario_affinity(counts& c) {
  weft::init(bound_config());
  std::optional<weft::error> failed;
  std::vector<weft::ult> us;
  us.reserve(8);
  try {
    for (int i = 0; i < 8; ++i) {
      us.push_back(weft::ult::create([&] { c.ran.fetch_add(1); }));
      ++c.created;
    }
    auto& s = weft::execution_stream::create();
    s.free();
  } catch (const weft::error& e) {
    failed = e;
  } catch (const std::bad_alloc&) {
    failed = out_of_memory();
  }
  join_all(us, c);
  weft::finalize();
  if (failed) throw *failed;
}

std::atomic<int>* g_abt_ran = nullptr;
void abt_body(void*) {
  g_abt_ran->fetch_add(1);
}

/// The C API: ABT_init, ULTs and tasklets, a stream, a pool, every primitive, ABT_finalize. A
/// call may fail only with ABT_ERR_MEM (reported as a resource error); everything made is freed.
void scenario_abt(counts& c) {
  g_abt_ran = &c.ran;
  bool failed = false;
  auto ok = [&](int rc, const char* what) {
    if (rc == ABT_SUCCESS) return true;
    EXPECT_EQ(rc, ABT_ERR_MEM) << what;
    failed = true;
    return false;
  };
  // A call that fails with ABT_ERR_MEM leaves its object as it was: the retry (no fault left)
  // succeeds, so nothing is lost or leaked.
  auto done = [&](auto&& call, const char* what) {
    const int rc = call();
    if (rc == ABT_SUCCESS) return;
    EXPECT_EQ(rc, ABT_ERR_MEM) << what;
    failed = true;
    EXPECT_EQ(call(), ABT_SUCCESS) << what << ", tried again";
  };
  if (!ok(ABT_init(0, nullptr), "ABT_init")) {
    EXPECT_EQ(ABT_initialized(), ABT_ERR_UNINITIALIZED);
    throw out_of_memory();
  }
  ABT_xstream self;
  ABT_pool main_pool = ABT_POOL_NULL;
  if (ok(ABT_xstream_self(&self), "ABT_xstream_self"))
    (void)ok(ABT_xstream_get_main_pools(self, 1, &main_pool), "ABT_xstream_get_main_pools");
  if (main_pool != ABT_POOL_NULL) {
    ABT_thread ts[6];
    int made = 0;
    for (int i = 0; i < 6; ++i) {
      const int rc =
          i % 2 ? ABT_task_create(main_pool, abt_body, nullptr, &ts[made])
                : ABT_thread_create(main_pool, abt_body, nullptr, ABT_THREAD_ATTR_NULL, &ts[made]);
      if (!ok(rc, "ABT_thread_create/ABT_task_create")) continue;
      ++made;
      ++c.created;
    }
    for (int i = 0; i < made; ++i) {
      // ABT_ERR_MEM: the ULT was freed but never ran, as no stack could be allocated for it.
      const int rc = ABT_thread_free(&ts[i]);
      if (rc == ABT_ERR_MEM) {
        --c.created;
        failed = true;
      } else {
        EXPECT_EQ(rc, ABT_SUCCESS) << "ABT_thread_free";
      }
    }
  }
  ABT_xstream xs;
  if (ok(ABT_xstream_create(ABT_SCHED_NULL, &xs), "ABT_xstream_create")) {
    done([&] { return ABT_xstream_join(xs); }, "ABT_xstream_join");
    done([&] { return ABT_xstream_free(&xs); }, "ABT_xstream_free");
  }
  ABT_pool pool;
  if (ok(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_FALSE, &pool),
         "ABT_pool_create_basic"))
    done([&] { return ABT_pool_free(&pool); }, "ABT_pool_free");
  ABT_mutex m;
  if (ok(ABT_mutex_create(&m), "ABT_mutex_create")) {
    done([&] { return ABT_mutex_lock(m); }, "ABT_mutex_lock");
    done([&] { return ABT_mutex_unlock(m); }, "ABT_mutex_unlock");
    done([&] { return ABT_mutex_free(&m); }, "ABT_mutex_free");
  }
  ABT_cond cv;
  if (ok(ABT_cond_create(&cv), "ABT_cond_create")) {
    done([&] { return ABT_cond_signal(cv); }, "ABT_cond_signal");
    done([&] { return ABT_cond_free(&cv); }, "ABT_cond_free");
  }
  ABT_rwlock rw;
  if (ok(ABT_rwlock_create(&rw), "ABT_rwlock_create"))
    done([&] { return ABT_rwlock_free(&rw); }, "ABT_rwlock_free");
  ABT_eventual ev;
  if (ok(ABT_eventual_create(sizeof(int), &ev), "ABT_eventual_create")) {
    int v = 3;
    void* got = nullptr;
    done([&] { return ABT_eventual_set(ev, &v, sizeof v); }, "ABT_eventual_set");
    done([&] { return ABT_eventual_wait(ev, &got); }, "ABT_eventual_wait");
    done([&] { return ABT_eventual_free(&ev); }, "ABT_eventual_free");
  }
  ABT_barrier bar;
  if (ok(ABT_barrier_create(1, &bar), "ABT_barrier_create")) {
    done([&] { return ABT_barrier_wait(bar); }, "ABT_barrier_wait");
    done([&] { return ABT_barrier_free(&bar); }, "ABT_barrier_free");
  }
  ABT_key key;
  if (ok(ABT_key_create(nullptr, &key), "ABT_key_create")) {
    (void)ok(ABT_key_set(key, &key), "ABT_key_set");
    done([&] { return ABT_key_free(&key); }, "ABT_key_free");
  }
  // A failed finalize leaves the runtime as it was; the next one (no fault left) succeeds.
  done([] { return ABT_finalize(); }, "ABT_finalize");
  EXPECT_EQ(ABT_initialized(), ABT_ERR_UNINITIALIZED);
  if (failed) throw out_of_memory();
}

struct named_scenario {
  const char* name;
  void (*run)(counts&);
};
const named_scenario scenarios[] = {
    {"init", scenario_init},     {"units", scenario_units},     {"streams", scenario_streams},
    {"resize", scenario_resize}, {"manager", scenario_manager}, {"sync", scenario_sync},
    {"pools", scenario_pools},   {"abt", scenario_abt},         {"affinity", scenario_affinity},
};

class FaultInjectionTest : public env_test {};

TEST_F(FaultInjectionTest, EveryNthCallFailsCleanly) {
#ifdef __SANITIZE_THREAD__
  GTEST_SKIP() << "no interposition under ThreadSanitizer";
#endif
  dl_iterate_phdr(note_weft_segments, nullptr);
  ASSERT_GT(g_weft_code_count, 0) << "libweft.so is not loaded: allocations cannot be told apart";
  // The first init of the process loads hwloc's topology, which stays for the process: load it
  // before counting (libhwloc's allocations for it would otherwise look leaked).
  weft::init(bound_config());
  weft::finalize();
  int tried = 0;
  g_trace = std::getenv("FAULT_INJECTION_TRACE") != nullptr;
  const char* only = std::getenv("FAULT_INJECTION_ONLY");  // a scenario's name, to debug it
  for (const named_scenario& sc : scenarios) {
    if (only && std::strcmp(only, sc.name) != 0) continue;
    for (int k = 0; k < call_kinds; ++k) {
      for (int n = 1;; ++n) {
        SCOPED_TRACE(std::string(sc.name) + ": call " + std::to_string(n) + " of " +
                     kind_name(static_cast<call>(k)) + " fails");
        for (int i = 0; i < call_kinds; ++i) {
          g_seen[i] = 0;
          g_fail_at[i] = 0;
        }
        g_fail_at[k] = n;
        if (g_trace)
          std::fprintf(stderr, "%s: call %d of %s fails\n", sc.name, n,
                       kind_name(static_cast<call>(k)));
        counts c;
        std::optional<weft::errc> error;
        {
          watchdog w("a fault-injection run");
          g_armed = true;
          try {
            sc.run(c);
          } catch (const weft::error& e) {
            error = e.condition();
          } catch (const std::bad_alloc&) {
            // A C++ call that allocates reports memory exhaustion as the standard library does.
            error = weft::errc::resource;
          } catch (const std::exception& e) {
            g_armed = false;
            ADD_FAILURE() << "not a weft::error: " << e.what();
          }
          g_armed = false;
          w.disarm();
        }
        EXPECT_FALSE(weft::initialized());
        while (weft::initialized()) weft::finalize();
#if defined(__SANITIZE_ADDRESS__)
        // Tracing under ASan: a leak check after every run names the run that leaked.
        if (g_trace && __lsan_do_recoverable_leak_check() != 0)
          std::fprintf(stderr, "the run above leaked\n");
#endif
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
        EXPECT_EQ(g_blocks.live(), 0) << "blocks weft allocated with malloc were not freed";
        g_blocks.clear();
#endif
        if (error) {
          EXPECT_EQ(*error, weft::errc::resource) << describe(error);
        }
        EXPECT_EQ(c.ran.load(), c.created) << "a unit was lost or ran twice";
        if (g_seen[k] < n) {  // the scenario made fewer calls: every N was tried
          std::printf("%-8s %-15s %d calls, each failed once\n", sc.name,
                      kind_name(static_cast<call>(k)), n - 1);
          tried += n - 1;
          break;
        }
        if (n > 2000) {
          ADD_FAILURE() << "more than 2000 calls";
          break;
        }
      }
    }
  }
  if (!only) {
    EXPECT_GT(tried, 20) << "the interposed functions were hardly called: nothing was tested";
  }
}

}  // namespace
