// SPDX-License-Identifier: Apache-2.0
// Fault injection: the test executable interposes mmap, pthread_create, socket and connect (its
// definitions win over libc's for libweft too) and makes the Nth call of one of them fail, for
// every N up to the number of such calls a scenario makes. Each run must end either normally or
// in a documented weft::error (errc::resource), leave the runtime finalized, hang nowhere (a
// watchdog fails the process) and run every unit that was created exactly once. Under the ASan
// configuration LeakSanitizer checks that nothing leaks.
#include <dlfcn.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <weft/events.hpp>

#include "test_support.hpp"
#include "watchdog.hpp"

namespace {

enum class call { mmap, pthread_create, socket, connect };
constexpr int call_kinds = 4;

/// Per kind: calls seen while armed, and which one (1-based) fails; 0: none.
std::atomic<int> g_seen[call_kinds];
std::atomic<int> g_fail_at[call_kinds];
std::atomic<bool> g_armed{false};

/// True when this call of `k` is the one to fail.
[[maybe_unused]] bool inject(call k) {
  if (!g_armed.load(std::memory_order_relaxed)) return false;
  const int i = static_cast<int>(k);
  const int n = g_seen[i].fetch_add(1, std::memory_order_relaxed) + 1;
  return n == g_fail_at[i].load(std::memory_order_relaxed);
}

template <class F>
[[maybe_unused]] F next_symbol(const char* name) {
  return reinterpret_cast<F>(::dlsym(RTLD_NEXT, name));
}

}  // namespace

// ThreadSanitizer keeps its own books on mappings and threads through its interceptors of these
// functions; replacing them breaks it, so the TSan build interposes nothing and skips the test.
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
  }
  return "?";
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
  }
  weft::finalize();
  if (failed) throw *failed;
}

void scenario_resize(counts&) {
  weft::init(test_config(2));
  const weft::resize_result up = weft::request_expand(2).wait();
  const weft::resize_result down = weft::request_stream_count(1).wait();
  // A failed request says why; either way the count it reports is the live count.
  if (!up.ok) {
    EXPECT_FALSE(up.message.empty());
  }
  EXPECT_TRUE(down.ok) << down.message;
  EXPECT_EQ(weft::execution_stream::count(), 1);
  weft::finalize();
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

struct named_scenario {
  const char* name;
  void (*run)(counts&);
};
const named_scenario scenarios[] = {
    {"init", scenario_init},     {"units", scenario_units},     {"streams", scenario_streams},
    {"resize", scenario_resize}, {"manager", scenario_manager},
};

class FaultInjectionTest : public env_test {};

TEST_F(FaultInjectionTest, EveryNthCallFailsCleanly) {
#ifdef __SANITIZE_THREAD__
  GTEST_SKIP() << "no interposition under ThreadSanitizer";
#endif
  int tried = 0;
  for (const named_scenario& sc : scenarios) {
    for (int k = 0; k < call_kinds; ++k) {
      for (int n = 1;; ++n) {
        SCOPED_TRACE(std::string(sc.name) + ": call " + std::to_string(n) + " of " +
                     kind_name(static_cast<call>(k)) + " fails");
        for (int i = 0; i < call_kinds; ++i) {
          g_seen[i] = 0;
          g_fail_at[i] = 0;
        }
        g_fail_at[k] = n;
        counts c;
        std::optional<weft::errc> error;
        {
          watchdog w("a fault-injection run");
          g_armed = true;
          try {
            sc.run(c);
          } catch (const weft::error& e) {
            error = e.condition();
          } catch (const std::exception& e) {
            g_armed = false;
            ADD_FAILURE() << "not a weft::error: " << e.what();
          }
          g_armed = false;
          w.disarm();
        }
        EXPECT_FALSE(weft::initialized());
        while (weft::initialized()) weft::finalize();
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
        if (n > 400) {
          ADD_FAILURE() << "more than 400 calls";
          break;
        }
      }
    }
  }
  EXPECT_GT(tried, 20) << "the interposed functions were hardly called: nothing was tested";
}

}  // namespace
