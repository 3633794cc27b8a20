// SPDX-License-Identifier: Apache-2.0
// ULT stacks that cannot be mapped: the test replaces mmap (the executable's definition interposes
// on libc's for libweft too) so that large mappings fail on demand. A ULT that gets no stack ends
// at once and its join rethrows errc::resource; the ULTs around it, blocked or running, must not
// notice.
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <weft/eventual.hpp>

#include "test_support.hpp"
#include "watchdog.hpp"

namespace {

/// While set, every anonymous mapping of at least 512 KiB (a ULT stack arena, never a small
/// allocation of the test itself) fails with ENOMEM.
std::atomic<bool> g_fail_large_maps{false};
std::atomic<int> g_failed_maps{0};

}  // namespace

// ThreadSanitizer keeps its own books on mappings and threads through its interceptors of these
// functions; replacing them breaks it, so the TSan build interposes nothing and skips the test.
#ifndef __SANITIZE_THREAD__
extern "C" void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
  if (g_fail_large_maps.load(std::memory_order_relaxed) && (flags & MAP_ANONYMOUS) &&
      length >= (std::size_t{512} << 10)) {
    g_failed_maps.fetch_add(1, std::memory_order_relaxed);
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

#endif  // __SANITIZE_THREAD__

namespace {

using namespace weft_test;

class StackExhaustionTest : public env_test {};

// ULTs block on one eventual while the stacks run out: the stream switches from a blocking ULT
// straight to the next queued one, which cannot get a stack. The blocking ULT must still block
// (not return with the eventual's lock held), the stackless one must end with errc::resource, and
// every ULT must be accounted for once the eventual is set.
// Without stream::switch_to_unit going through the scheduler when the unit it switches to cannot
// get a stack, this livelocks (its watchdog fails it after 30 s).
TEST_F(StackExhaustionTest, UltsWithoutAStackFailTheirJoinAndWaitersStillBlock) {
#ifdef __SANITIZE_THREAD__
  GTEST_SKIP() << "no interposition under ThreadSanitizer";
#endif
  weft::init(test_config(1));
  watchdog w("ULTs blocked on an eventual while stacks run out");
  weft::eventual<int> ev;
  std::atomic<int> started{0}, woke{0};
  auto body = [&] {
    started.fetch_add(1);
    if (ev.wait() == 7) woke.fetch_add(1);
  };
  std::vector<weft::ult> us;
  us.push_back(weft::ult::create(body));
  while (started.load() == 0) weft::this_unit::yield();
  // The first ULT holds a stack; the stream's cache and the first arena hold a few dozen more.
  // From now on no arena can be mapped.
  g_fail_large_maps.store(true);
  const int n = 300;
  for (int i = 1; i < n; ++i) us.push_back(weft::ult::create(body));
  for (int i = 0; i < 4; ++i) weft::this_unit::yield();  // every queued ULT runs or fails
  g_fail_large_maps.store(false);
  const int blocked = started.load();
  ev.set(7);
  int ok = 0, no_stack = 0;
  for (auto& u : us) {
    const auto e = errc_of([&] { u.join(); });
    if (!e) {
      ++ok;
    } else {
      EXPECT_EQ(*e, weft::errc::resource) << describe(e);
      ++no_stack;
    }
  }
  weft::finalize();
  w.disarm();
  EXPECT_GT(g_failed_maps.load(), 0) << "no stack mapping failed: the test tested nothing";
  EXPECT_GT(no_stack, 0);
  EXPECT_GT(blocked, 1);
  EXPECT_EQ(ok + no_stack, n);
  EXPECT_EQ(woke.load(), ok);
  EXPECT_EQ(started.load(), ok);
}

}  // namespace
