/* The internal control variables after the environment was read, printed for env_compare.sh,
   which runs this program with malformed or out-of-range OMP_* values on libgomp and on
   libweft-omp and compares the two. With an argument, every member of a parallel region and a
   task use that many KiB of stack (OMP_STACKSIZE must allow it). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int use_stack(size_t kib) {
  if (kib == 0) return 0;
  volatile char* buf = __builtin_alloca(kib * 1024);
  memset((char*)buf, 1, kib * 1024);
  int sum = 0;
  for (size_t i = 0; i < kib * 1024; i += 4096) sum += buf[i];
  return sum;
}

int main(int argc, char** argv) {
  const size_t kib = argc > 1 ? strtoul(argv[1], NULL, 10) : 0;
  omp_sched_t kind;
  int chunk;
  omp_get_schedule(&kind, &chunk);
  printf("max_threads=%d dynamic=%d max_active_levels=%d nested=%d\n", omp_get_max_threads(),
         omp_get_dynamic(), omp_get_max_active_levels(), omp_get_nested());
  printf("schedule=%d,%d proc_bind=%d thread_limit=%d cancellation=%d max_task_priority=%d\n",
         (int)(kind & ~omp_sched_monotonic), chunk, (int)omp_get_proc_bind(),
         omp_get_thread_limit(), omp_get_cancellation(), omp_get_max_task_priority());
  int team = 0, pages = 0;
#pragma omp parallel reduction(+ : team, pages)
  {
    team = 1;
    pages = use_stack(kib);
#pragma omp task shared(pages)
    {
      int p = use_stack(kib);
#pragma omp atomic
      pages += p;
    }
#pragma omp taskwait
  }
  printf("team=%d stack_pages_touched=%d\n", team, pages);
  return 0;
}
