/* Teams larger than can be made: omp_set_num_threads(INT_MAX), num_threads(INT_MAX), and 1000
   threads with 16 MiB stacks under a 2 GiB address-space limit. Either the team is made (as large
   as asked) or the program ends with EXIT_FAILURE and one line on stderr, as libgomp does ("Out
   of memory", "Thread creation failed") -- within seconds, never hanging, never one line per
   member. With dyn-var true the team is made smaller instead. Each case runs in a child process
   (forked before any OpenMP call) with its stderr in a file. */
#include <limits.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static int requested;

/* Starts the runtime (threads, streams) before the limit, so that only the big team hits it. */
static void limit_address_space(void) {
  int n = 0;
#pragma omp parallel num_threads(2) reduction(+ : n)
  n = 1;
  if (n != 2) _exit(98);
  struct rlimit lim;
  if (getrlimit(RLIMIT_AS, &lim) != 0) _exit(97);
  const rlim_t two_gib = (rlim_t)2 << 30;
  if (lim.rlim_cur == RLIM_INFINITY || lim.rlim_cur > two_gib) lim.rlim_cur = two_gib;
  if (setrlimit(RLIMIT_AS, &lim) != 0) _exit(97);
}

static void big_team(void) {
  int n = 0;
#pragma omp parallel reduction(+ : n)
  {
    n = 1;
#pragma omp barrier /* every member alive at once */
  }
  printf("team of %d\n", n);
  _exit(n >= 1 && n <= requested ? (n == requested ? 0 : 10) : 11);
}

static void int_max_threads(void) {
  limit_address_space();
  requested = INT_MAX;
  omp_set_num_threads(INT_MAX);
  big_team();
}

static void int_max_clause(void) {
  limit_address_space();
  int n = 0;
#pragma omp parallel num_threads(INT_MAX) reduction(+ : n)
  {
    n = 1;
#pragma omp barrier
  }
  printf("team of %d\n", n);
  _exit(n >= 1 ? 0 : 11);
}

static void thousand_big_stacks(void) {
  setenv("OMP_STACKSIZE", "16M", 1);
  limit_address_space();
  requested = 1000;
  omp_set_num_threads(1000);
  big_team();
}

static void thousand_big_stacks_dynamic(void) {
  setenv("OMP_STACKSIZE", "16M", 1);
  limit_address_space();
  requested = 1000;
  omp_set_dynamic(1);
  omp_set_num_threads(1000);
  big_team();
}

/* allowed: 0 the team as asked, 1 EXIT_FAILURE with one line, 10 a smaller team. */
static void run(void (*body)(void), int allow_failure, int allow_smaller, const char* name) {
  fflush(NULL);
  FILE* err = tmpfile();
  CHECK(err != NULL);
  if (!err) return;
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fileno(err), 2);
    alarm(30); /* a hang fails the case (SIGALRM) */
    body();
    _exit(99);
  }
  int st = 0;
  CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
  rewind(err);
  char line[512];
  int lines = 0;
  while (fgets(line, sizeof line, err)) {
    if (line[0] != '\n') ++lines;
    if (lines <= 3) fprintf(stderr, "  %s: stderr: %s", name, line);
  }
  fclose(err);
  const int status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  int ok = 0;
  if (status == 0 || (status == 10 && allow_smaller)) ok = lines == 0;
  if (status == EXIT_FAILURE && allow_failure) ok = lines == 1;
  if (!ok) {
    fprintf(stderr, "%s: %s %d with %d lines on stderr\n", name,
            WIFEXITED(st) ? "exit status" : "signal", WIFEXITED(st) ? status : WTERMSIG(st), lines);
    ++failures;
  } else {
    fprintf(stderr, "%s: exit status %d\n", name, status);
  }
}

int main(void) {
  run(int_max_threads, 1, 0, "omp_set_num_threads(INT_MAX)");
  run(int_max_clause, 1, 0, "num_threads(INT_MAX)");
  run(thousand_big_stacks, 1, 0, "1000 threads of 16 MiB stacks in 2 GiB");
  run(thousand_big_stacks_dynamic, 0, 1, "the same with dyn-var true");
  return failures;
}
