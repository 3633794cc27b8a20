/* Tasks that need more stack than a small ULT stack and no more than a libgomp thread has (its
   default stack: 8 MiB from RLIMIT_STACK, 2 MiB where that is unlimited): a task with a 400 KiB
   local array, and recursions of undeferred tasks (if(0), final, and past the limit of live
   tasks) over a MiB deep, each started inside a deferred task. Under
   OMP_STACKSIZE smaller than the recursions (a run registered for libweft-omp only), the
   undeferred tasks move to stacks of their own as their creators' stacks run low. */
#include <omp.h>
#include <string.h>

#include "check.h"

#define DEPTH 1200
#define FRAME 512

/* One level per call: a frame of FRAME bytes, then the next level as an undeferred task: an
   if(0) task, or (`final_mode`) a final task, whose own children are included tasks. */
static long nest(int depth, int final_mode) {
  volatile char frame[FRAME];
  memset((char*)frame, depth & 0x7f, sizeof frame);
  long below = 0;
  if (depth > 0) {
#pragma omp task if (final_mode) final(final_mode) shared(below)
    below = nest(depth - 1, final_mode);
#pragma omp taskwait
  }
  return below + frame[depth % FRAME] + 1;
}

/* Many deferred tasks per level: past the live limit (64 per thread in libgomp) the rest run
   undeferred, nested on their creator's stack. */
static long nest_wide(int depth) {
  volatile char frame[FRAME];
  memset((char*)frame, depth & 0x7f, sizeof frame);
  long below[4] = {0, 0, 0, 0};
  if (depth > 0) {
    for (int i = 0; i < 4; ++i) {
#pragma omp task shared(below) firstprivate(i)
      below[i] = i == 0 ? nest_wide(depth - 1) : 1;
    }
#pragma omp taskwait
  }
  return below[0] + below[1] + below[2] + below[3] + frame[depth % FRAME] + 1;
}

static long expected(int depth, long extra_per_level) {
  long sum = 0;
  for (int d = 0; d <= depth; ++d) sum += (d & 0x7f) + 1 + (d > 0 ? extra_per_level : 0);
  return sum;
}

/* A task whose own frame is 400 KiB (BOTS alignment's tasks use about as much). */
static long big_frame(int seed) {
  volatile int a[100 * 1024];
  for (int i = 0; i < 100 * 1024; ++i) a[i] = seed + i;
  long s = 0;
  for (int i = 0; i < 100 * 1024; i += 1024) s += a[i];
  return s;
}

int main(void) {
  long r_if0 = 0, r_final = 0, r_wide = 0, r_big[4] = {0, 0, 0, 0};
  /* Created by the last member (on libweft-omp a ULT with a stack of OMP_STACKSIZE, not the
     primary thread's), which waits for them itself. */
#pragma omp parallel num_threads(2)
  if (omp_get_thread_num() == omp_get_num_threads() - 1) {
#pragma omp task shared(r_if0)
    r_if0 = nest(DEPTH, 0);
#pragma omp task shared(r_final)
    r_final = nest(DEPTH, 1);
#pragma omp task shared(r_wide)
    r_wide = nest_wide(DEPTH / 2);
    for (int i = 0; i < 4; ++i) {
#pragma omp task shared(r_big) firstprivate(i)
      r_big[i] = big_frame(i);
    }
#pragma omp taskwait
  }
  CHECK(r_if0 == expected(DEPTH, 0));
  CHECK(r_final == expected(DEPTH, 0));
  CHECK(r_wide == expected(DEPTH / 2, 3));
  for (int i = 0; i < 4; ++i) {
    long want = 0;
    for (int j = 0; j < 100 * 1024; j += 1024) want += i + j;
    CHECK(r_big[i] == want);
  }
  return failures;
}
