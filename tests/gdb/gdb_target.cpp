// SPDX-License-Identifier: Apache-2.0
// The program gdb_check.py debugs: blocks one ULT on a mutex and another on its join, then stops
// itself with SIGTRAP (gdb takes over); once continued, releases them and ends normally.
#include <signal.h>

#include <weft/mutex.hpp>
#include <weft/weft.hpp>

namespace {

// noinline: gdb's backtrace of the blocked ULT must show it.
[[gnu::noinline]] void gdb_blocked_worker(weft::mutex& m) {
  m.lock();
  m.unlock();
  asm volatile("" ::: "memory");
}

}  // namespace

int main() {
  weft::config cfg;
  cfg.num_streams = 2;
  cfg.scheduler = "basic";
  weft::init(cfg);
  int rc = 0;
  {
    weft::mutex m;
    m.lock();
    weft::ult worker = weft::ult::create([&] { gdb_blocked_worker(m); });
    while (worker.state() != weft::unit_state::blocked) weft::this_unit::yield();
    weft::ult joiner = weft::ult::create([&] { worker.join(); });
    while (joiner.state() != weft::unit_state::blocked) weft::this_unit::yield();
    raise(SIGTRAP);  // gdb stops here
    m.unlock();
    joiner.join();
    rc = worker.joinable() ? 1 : 0;  // the joiner joined it
  }
  weft::finalize();
  return rc;
}
