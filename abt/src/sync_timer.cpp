// SPDX-License-Identifier: Apache-2.0
// ABT_timer_* and ABT_get_wtime: wall-clock timing, as in Argobots.
//
// Times come from CLOCK_MONOTONIC (seconds since an arbitrary point, nanosecond resolution,
// unaffected by changes of the wall clock). Timers need no runtime (usable before ABT_init and
// after ABT_finalize) and are not synchronised: one timer belongs to one caller at a time. A new
// timer starts and stops at 0, so reading it before start/stop gives 0 rather than garbage.
#include <time.h>

#include "sync_common.hpp"

namespace weft::abt_sync {
namespace {

struct timer_object {
  double start = 0;
  double stop = 0;
};

timer_object* timer_ptr(ABT_timer h) noexcept {
  return object_of<timer_object>(h);
}

double now_seconds() noexcept {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace
}  // namespace weft::abt_sync

using weft::abt_sync::now_seconds;
using weft::abt_sync::timer_object;
using weft::abt_sync::timer_ptr;

extern "C" {

double ABT_get_wtime(void) {
  return now_seconds();
}

int ABT_timer_create(ABT_timer* newtimer) {
  if (!newtimer) return ABT_ERR_INV_ARG;
  *newtimer = ABT_TIMER_NULL;
  auto* t = new (std::nothrow) timer_object;
  if (!t) return ABT_ERR_MEM;
  *newtimer = weft::abt_sync::handle_of<ABT_timer>(t);
  return ABT_SUCCESS;
}

int ABT_timer_dup(ABT_timer timer, ABT_timer* newtimer) {
  if (!newtimer) return ABT_ERR_INV_ARG;
  *newtimer = ABT_TIMER_NULL;
  const timer_object* t = timer_ptr(timer);
  if (!t) return ABT_ERR_INV_TIMER;
  auto* copy = new (std::nothrow) timer_object(*t);
  if (!copy) return ABT_ERR_MEM;
  *newtimer = weft::abt_sync::handle_of<ABT_timer>(copy);
  return ABT_SUCCESS;
}

int ABT_timer_free(ABT_timer* timer) {
  if (!timer) return ABT_ERR_INV_ARG;
  timer_object* t = timer_ptr(*timer);
  if (!t) return ABT_ERR_INV_TIMER;
  delete t;
  *timer = ABT_TIMER_NULL;
  return ABT_SUCCESS;
}

int ABT_timer_start(ABT_timer timer) {
  timer_object* t = timer_ptr(timer);
  if (!t) return ABT_ERR_INV_TIMER;
  t->start = now_seconds();
  return ABT_SUCCESS;
}

int ABT_timer_stop(ABT_timer timer) {
  timer_object* t = timer_ptr(timer);
  if (!t) return ABT_ERR_INV_TIMER;
  t->stop = now_seconds();
  return ABT_SUCCESS;
}

int ABT_timer_read(ABT_timer timer, double* secs) {
  if (!secs) return ABT_ERR_INV_ARG;
  const timer_object* t = timer_ptr(timer);
  if (!t) return ABT_ERR_INV_TIMER;
  *secs = t->stop - t->start;
  return ABT_SUCCESS;
}

int ABT_timer_stop_and_read(ABT_timer timer, double* secs) {
  if (!secs) return ABT_ERR_INV_ARG;
  timer_object* t = timer_ptr(timer);
  if (!t) return ABT_ERR_INV_TIMER;
  t->stop = now_seconds();
  *secs = t->stop - t->start;
  return ABT_SUCCESS;
}

int ABT_timer_stop_and_add(ABT_timer timer, double* secs) {
  if (!secs) return ABT_ERR_INV_ARG;
  timer_object* t = timer_ptr(timer);
  if (!t) return ABT_ERR_INV_TIMER;
  t->stop = now_seconds();
  *secs += t->stop - t->start;
  return ABT_SUCCESS;
}

int ABT_timer_get_overhead(double* overhead) {
  if (!overhead) return ABT_ERR_INV_ARG;
  // As Argobots: the mean of back-to-back start/stop pairs.
  constexpr int rounds = 5000;
  timer_object t;
  double sum = 0;
  for (int i = 0; i < rounds; ++i) {
    t.start = now_seconds();
    t.stop = now_seconds();
    sum += t.stop - t.start;
  }
  *overhead = sum / rounds;
  return ABT_SUCCESS;
}

}  // extern "C"
