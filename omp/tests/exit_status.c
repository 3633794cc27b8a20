/* exit() called inside a task or a parallel region ends the process with that status, as at the
   end of main: each case runs in a child process (forked before any OpenMP call) whose status is
   checked. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static void in_task_of_region(void) {
#pragma omp parallel num_threads(2)
#pragma omp single
  {
#pragma omp task
    exit(3);
#pragma omp taskwait
  }
}

static void in_secondary_member(void) {
#pragma omp parallel num_threads(2)
  {
    if (omp_get_thread_num() == 1) exit(4);
#pragma omp barrier
  }
}

static void in_primary_member(void) {
#pragma omp parallel num_threads(2)
  {
    if (omp_get_thread_num() == 0) exit(5);
#pragma omp barrier
  }
}

static void in_orphaned_task(void) {
#pragma omp task
  exit(6);
#pragma omp taskwait
}

static void in_nested_region(void) {
  omp_set_max_active_levels(2);
#pragma omp parallel num_threads(2)
#pragma omp parallel num_threads(2)
  {
    if (omp_get_ancestor_thread_num(1) == 1 && omp_get_thread_num() == 1) exit(7);
#pragma omp barrier
  }
}

static void after_region(void) {
  int n = 0;
#pragma omp parallel num_threads(2) reduction(+ : n)
  n = 1;
  exit(n == 2 ? 8 : 1);
}

static void run(void (*body)(void), int status, const char* name) {
  fflush(NULL);
  const pid_t pid = fork();
  if (pid == 0) {
    alarm(30); /* a hang fails the case (SIGALRM) */
    body();
    _exit(99); /* not reached */
  }
  int st = 0;
  CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != status) {
    fprintf(stderr, "%s: expected exit status %d, got %s %d\n", name, status,
            WIFEXITED(st) ? "status" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
    ++failures;
  }
}

int main(void) {
  run(in_task_of_region, 3, "exit in a task");
  run(in_secondary_member, 4, "exit in member 1");
  run(in_primary_member, 5, "exit in member 0");
  run(in_orphaned_task, 6, "exit in an orphaned task");
  run(in_nested_region, 7, "exit in a nested region");
  run(after_region, 8, "exit after a region");
  return failures;
}
