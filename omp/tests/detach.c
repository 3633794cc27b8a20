/* task detach(evt) and omp_fulfill_event: a detached task completes (for taskwait, taskgroup,
   the region's barrier and its dependence successors) only once its body has returned and its
   event was fulfilled, from another task, the task itself, another member or a plain pthread.
   Every wait below is a handshake on a flag, never a sleep: each check holds whatever the timing.
   Run with OMP_CANCELLATION=true (a task cancelled before it starts).

   With the argument "twice" the program fulfils one event twice, which libweft-omp reports
   and aborts on (omp.detach_twice.weft). */
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

enum { many = 1000 };

/* A plain pthread (not an OpenMP thread) that fulfils `n` events once `go` is set, after
   setting `marker`. */
struct fulfiller {
  atomic_int go;
  atomic_int marker;
  omp_event_handle_t events[8];
  int n;
};

static void* fulfil_later(void* p) {
  struct fulfiller* f = p;
  while (!atomic_load(&f->go)) sched_yield();
  atomic_store(&f->marker, 1);
  for (int i = 0; i < f->n; ++i) omp_fulfill_event(f->events[i]);
  return NULL;
}

/* Spins in a task or member until *flag is set, letting other tasks run meanwhile. */
static void await_flag(atomic_int* flag) {
  while (!atomic_load(flag)) {
#pragma omp taskyield
  }
}

static void from_other_task(void) {
  atomic_int ran = 0, fulfilled = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  {
    omp_event_handle_t e;
#pragma omp task detach(e) shared(ran)
    atomic_fetch_add(&ran, 1);
#pragma omp task firstprivate(e) shared(fulfilled)
    {
      atomic_store(&fulfilled, 1);
      omp_fulfill_event(e);
    }
#pragma omp taskwait
    CHECK(atomic_load(&ran) == 1 && atomic_load(&fulfilled) == 1);
  }
}

static void from_itself(void) {
  atomic_int ran = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  {
    for (int i = 0; i < 10; ++i) {
      omp_event_handle_t e;
#pragma omp task detach(e) shared(ran)
      {
        omp_fulfill_event(e);
        atomic_fetch_add(&ran, 1);
      }
    }
#pragma omp taskwait
    CHECK(atomic_load(&ran) == 10);
  }
}

/* taskwait returns only after the pthread fulfilled the event, which it does only after the
   body ran and the creator reached the taskwait. */
static void taskwait_waits_for_pthread(void) {
  struct fulfiller f = {.n = 1};
  atomic_int body = 0;
  pthread_t th;
  CHECK(pthread_create(&th, NULL, fulfil_later, &f) == 0);
#pragma omp parallel num_threads(2) shared(f, body)
#pragma omp single
  {
    omp_event_handle_t e;
#pragma omp task detach(e) shared(f, body)
    {
      f.events[0] = e;
      atomic_store(&body, 1);
    }
    await_flag(&body);
    atomic_store(&f.go, 1);
#pragma omp taskwait
    CHECK(atomic_load(&f.marker) == 1);
  }
  pthread_join(th, NULL);
}

/* The successor of a detached task (depend(out) then depend(in)) starts after the fulfilment:
   the creator fulfils only after seeing the body run, and sets `fulfilled` first. */
static void dependence_successor(void) {
  int x = 0, seen = -1;
  atomic_int body = 0, fulfilled = 0;
#pragma omp parallel num_threads(2) shared(x, seen, body, fulfilled)
#pragma omp single
  {
    omp_event_handle_t e;
#pragma omp task detach(e) depend(out : x) shared(x, body)
    {
      x = 1;
      atomic_store(&body, 1);
    }
#pragma omp task depend(in : x) shared(x, seen, fulfilled)
    seen = atomic_load(&fulfilled) * 10 + x;
    await_flag(&body);
    atomic_store(&fulfilled, 1);
    omp_fulfill_event(e);
#pragma omp taskwait
    CHECK(seen == 11);
  }
}

/* Another member of the team fulfils; the region's end waits for the task. */
static void from_other_member(void) {
  atomic_int handed = 0, fulfilled = 0, ran = 0;
  omp_event_handle_t shared_e = 0;
#pragma omp parallel num_threads(2) shared(handed, fulfilled, ran, shared_e)
  {
    if (omp_get_thread_num() == 0) {
      omp_event_handle_t e;
#pragma omp task detach(e) shared(ran)
      atomic_fetch_add(&ran, 1);
      shared_e = e;
      atomic_store(&handed, 1);
    } else if (omp_get_num_threads() == 2) {
      await_flag(&handed);
      atomic_store(&fulfilled, 1);
      omp_fulfill_event(shared_e);
    }
    if (omp_get_num_threads() == 1) {
      atomic_store(&fulfilled, 1);
      omp_fulfill_event(shared_e);
    }
  }
  CHECK(atomic_load(&ran) == 1 && atomic_load(&fulfilled) == 1);
}

/* The end of a taskgroup waits for its detached tasks, fulfilled by a pthread. */
static void taskgroup_waits(void) {
  struct fulfiller f = {.n = 8};
  atomic_int ran = 0, inside = 0;
  pthread_t th;
  CHECK(pthread_create(&th, NULL, fulfil_later, &f) == 0);
#pragma omp parallel num_threads(2) shared(f, ran, inside)
#pragma omp single
  {
#pragma omp taskgroup
    {
      for (int i = 0; i < 8; ++i) {
        omp_event_handle_t e;
#pragma omp task detach(e) shared(ran)
        atomic_fetch_add(&ran, 1);
        f.events[i] = e;
      }
      atomic_store(&f.go, 1);
    }
    inside = atomic_load(&f.marker);
    CHECK(atomic_load(&ran) == 8);
  }
  CHECK(inside == 1);
  pthread_join(th, NULL);
}

/* Many detached tasks, fulfilled by their creator in reverse order of creation, some before
   their bodies ran. (A team of 16: libgomp runs a task undeferred past 64 unfinished tasks per
   thread, and an undeferred detached task would wait for a fulfilment its creator has not made
   yet.) */
static void many_reversed(void) {
  static omp_event_handle_t ev[many];
  atomic_int ran = 0;
  int after = -1;
#pragma omp parallel num_threads(16) shared(ran, after)
#pragma omp single
  {
    for (int i = 0; i < many; ++i) {
      omp_event_handle_t e;
#pragma omp task detach(e) shared(ran)
      atomic_fetch_add(&ran, 1);
      ev[i] = e;
    }
    for (int i = many - 1; i >= 0; --i) omp_fulfill_event(ev[i]);
#pragma omp taskwait
    after = atomic_load(&ran);
  }
  CHECK(after == many);
}

/* An undeferred detached task whose event a pthread fulfils once the body started it: the
   creator goes on only after the fulfilment. */
static int undeferred_by_pthread(void) {
  struct fulfiller f = {.n = 1};
  pthread_t th;
  CHECK(pthread_create(&th, NULL, fulfil_later, &f) == 0);
  omp_event_handle_t e;
#pragma omp task detach(e) if (0) shared(f)
  {
    f.events[0] = e;
    atomic_store(&f.go, 1);
  }
  const int after = atomic_load(&f.marker);
  pthread_join(th, NULL);
  return after;
}

/* Undeferred (if(0) and in a final task), outside any region and in one. */
static void undeferred(void) {
  CHECK(undeferred_by_pthread() == 1);
  int after = -1;
#pragma omp parallel num_threads(2) shared(after)
#pragma omp single
  after = undeferred_by_pthread();
  CHECK(after == 1);
  /* Fulfilled by the task itself, in a final task (included, so undeferred). */
  int ran = 0;
#pragma omp parallel num_threads(2) shared(ran)
#pragma omp single
#pragma omp task final(1) shared(ran)
  {
    omp_event_handle_t e;
#pragma omp task detach(e) shared(ran)
    {
      ran = 1;
      omp_fulfill_event(e);
    }
    CHECK(ran == 1);
  }
  CHECK(ran == 1);
}

/* A detached task whose taskgroup is cancelled before it starts (its predecessor cancels the
   group) completes without its event, as the end of the taskgroup shows. Run with
   OMP_CANCELLATION=true; without it the task runs and fulfils its own event. */
static void cancelled_before_start(void) {
  int x = 0;
  atomic_int ran = 0;
#pragma omp parallel num_threads(2) shared(x, ran)
#pragma omp single
#pragma omp taskgroup
  {
#pragma omp task depend(out : x) shared(x)
    {
      x = 1;
#pragma omp cancel taskgroup
    }
    omp_event_handle_t e;
#pragma omp task detach(e) depend(in : x) shared(ran)
    {
      atomic_store(&ran, 1);
      omp_fulfill_event(e);
    }
  }
  CHECK(atomic_load(&ran) == (omp_get_cancellation() ? 0 : 1));
}

static void fulfil_twice(void) {
#pragma omp parallel num_threads(2)
#pragma omp single
  {
    omp_event_handle_t e;
#pragma omp task detach(e)
    omp_fulfill_event(e);
#pragma omp taskwait
    omp_fulfill_event(e);
  }
}

int main(int argc, char** argv) {
  alarm(30); /* a completion that never comes hangs: fail instead */
  if (argc > 1 && strcmp(argv[1], "twice") == 0) {
    fulfil_twice();
    return 0;
  }
  from_other_task();
  from_itself();
  taskwait_waits_for_pthread();
  dependence_successor();
  from_other_member();
  taskgroup_waits();
  many_reversed();
  undeferred();
  cancelled_before_start();
  return failures;
}
