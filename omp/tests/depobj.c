/* Dependences through depend objects and the other OpenMP 5 forms: the depobj construct (in,
   out, inout, mutexinoutset; update; destroy), depobj items mixed with plain ones, mutexinoutset
   tasks (never two at once, ordered against in and out), depend(iterator(...)) and taskwait with
   depend(depobj: ...). Each task appends its number to a log under a lock and the program checks
   the partial order the dependences imply, and the values the tasks computed; the first task of
   each graph waits until every task is created, so that a missing edge lets its successor run
   first. With an argument it runs one case: `inoutset` (GCC 13's encoding of an inoutset depend
   object, which libgomp 12 rejects: libweft-omp only) or `destroyed` (a destroyed depend object
   in a depend clause: the program stops with a message). */
#include <omp.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static int order[256], logged;
static int gate_open;

static void note(int id) {
#pragma omp critical(depobj_log)
  order[logged++] = id;
}

static int pos(int id) {
  for (int i = 0; i < logged; ++i) {
    if (order[i] == id) return i;
  }
  return -1;
}

/* True when `a` and `b` both ran, `a` first. */
static int before(int a, int b) {
  return pos(a) >= 0 && pos(b) >= 0 && pos(a) < pos(b);
}

static void reset(void) {
  logged = 0;
  __atomic_store_n(&gate_open, 0, __ATOMIC_RELEASE);
}

static void open_gate(void) {
  __atomic_store_n(&gate_open, 1, __ATOMIC_RELEASE);
}

/* Keeps the first task of a graph from completing until the creator has made every task. */
static void wait_gate(void) {
  while (!__atomic_load_n(&gate_open, __ATOMIC_ACQUIRE)) {
#pragma omp taskyield
  }
}

static void yield_a_while(void) {
  for (int i = 0; i < 50; ++i) {
#pragma omp taskyield
  }
}

/* Depend objects of every GCC 12 kind, an update, and plain items joining their runs. */
static void kinds(void) {
  int x = 0, y = 0, r2 = -1, r3 = -1, r6 = -1;
  omp_depend_t o_out, o_in, o_inout, o_mutex;
#pragma omp depobj(o_out) depend(out : x)
#pragma omp depobj(o_in) depend(in : x)
#pragma omp depobj(o_inout) depend(inout : x)
#pragma omp depobj(o_mutex) depend(mutexinoutset : y)
  reset();
#pragma omp parallel num_threads(4)
#pragma omp single
  {
#pragma omp task depend(depobj : o_out) shared(x)
    {
      wait_gate();
      x = 1;
      note(1);
    }
#pragma omp task depend(depobj : o_in) shared(x, r2)
    {
      r2 = x;
      note(2);
    }
#pragma omp task depend(in : x) shared(x, r3)
    {
      r3 = x;
      note(3);
    }
#pragma omp task depend(depobj : o_inout) shared(x)
    {
      x = x * 10 + 4;
      note(4);
    }
#pragma omp depobj(o_in) update(out)
#pragma omp task depend(depobj : o_in) shared(x)
    {
      x = x * 10 + 5;
      note(5);
    }
    /* depobj and plain items in one task: an in item on x and a mutexinoutset object on y. */
#pragma omp task depend(depobj : o_mutex) depend(in : x) shared(x, y, r6)
    {
      r6 = x;
      y = y * 10 + 6;
      note(6);
    }
#pragma omp task depend(inout : y) shared(y)
    {
      y = y * 10 + 7;
      note(7);
    }
    open_gate();
#pragma omp taskwait
  }
#pragma omp depobj(o_out) destroy
#pragma omp depobj(o_in) destroy
#pragma omp depobj(o_inout) destroy
#pragma omp depobj(o_mutex) destroy
  CHECK(logged == 7);
  CHECK(x == 145 && r2 == 1 && r3 == 1 && r6 == 145 && y == 67);
  CHECK(before(1, 2) && before(1, 3) && before(2, 4) && before(3, 4) && before(4, 5));
  CHECK(before(5, 6) && before(6, 7));
}

/* mutexinoutset: never two of a set at once (a read, yields, then a write of y loses updates
   otherwise), after the out before them and before the in after them. */
static void mutexinoutset(void) {
  int y = 0, seen = -1, active = 0, most = 0, early = 0;
  omp_depend_t o_mutex;
#pragma omp depobj(o_mutex) depend(mutexinoutset : y)
  reset();
#pragma omp parallel num_threads(4)
#pragma omp single
  {
#pragma omp task depend(out : y) shared(y)
    {
      wait_gate();
      y = 1;
      note(1);
    }
    for (int i = 0; i < 16; ++i) {
      if (i % 2) {
#pragma omp task depend(depobj : o_mutex) shared(y, active, most, early)
        {
          int now;
#pragma omp atomic capture
          now = ++active;
#pragma omp critical(depobj_most)
          if (now > most) most = now;
          const int v = y;
          if (v == 0) {
#pragma omp atomic
            ++early;
          }
          yield_a_while();
          y = v + 1;
#pragma omp atomic
          --active;
        }
      } else {
#pragma omp task depend(mutexinoutset : y) shared(y, active, most, early)
        {
          int now;
#pragma omp atomic capture
          now = ++active;
#pragma omp critical(depobj_most)
          if (now > most) most = now;
          const int v = y;
          if (v == 0) {
#pragma omp atomic
            ++early;
          }
          yield_a_while();
          y = v + 1;
#pragma omp atomic
          --active;
        }
      }
    }
#pragma omp task depend(in : y) shared(y, seen)
    seen = y;
    open_gate();
#pragma omp taskwait
  }
#pragma omp depobj(o_mutex) destroy
  CHECK(most == 1);
  CHECK(early == 0);
  CHECK(y == 17 && seen == 17);
}

/* depend(iterator(...)): GCC fills the depend array with one item per iteration. */
static void iterators(void) {
  int a[8] = {0}, sum = -1, evens = -1;
  reset();
#pragma omp parallel num_threads(4)
#pragma omp single
  {
    for (int i = 0; i < 8; ++i) {
#pragma omp task depend(out : a[i]) shared(a) firstprivate(i)
      {
        if (i == 7) wait_gate();
        a[i] = i + 1;
        note(i);
      }
    }
#pragma omp task depend(iterator(j = 0 : 8), in : a[j]) shared(a, sum)
    {
      int s = 0;
      for (int j = 0; j < 8; ++j) s += a[j];
      sum = s;
      note(100);
    }
#pragma omp task depend(iterator(j = 0 : 8 : 2), out : a[j]) shared(a)
    {
      for (int j = 0; j < 8; j += 2) a[j] *= 100;
      note(101);
    }
#pragma omp task depend(iterator(j = 0 : 4), in : a[2 * j]) shared(a, evens)
    {
      evens = a[0] + a[2] + a[4] + a[6];
      note(102);
    }
    open_gate();
#pragma omp taskwait
  }
  CHECK(sum == 36);
  CHECK(evens == 1600);
  CHECK(a[1] == 2 && a[2] == 300 && a[7] == 8);
  for (int i = 0; i < 8; ++i) CHECK(before(i, 100));
  CHECK(before(100, 101) && before(101, 102));
}

/* taskwait depend(depobj: ...) waits for the tasks the object names. */
static void taskwait_depobj(void) {
  int z = 0, w = 0, seen = -1;
  omp_depend_t o_z;
#pragma omp depobj(o_z) depend(in : z)
  reset();
#pragma omp parallel num_threads(4)
#pragma omp single
  {
#pragma omp task depend(out : z) shared(z)
    {
      wait_gate();
      z = 5;
    }
#pragma omp task depend(out : w) shared(w)
    {
      wait_gate();
      w = 6;
    }
    open_gate();
#pragma omp taskwait depend(depobj : o_z)
    seen = z;
#pragma omp taskwait
  }
#pragma omp depobj(o_z) destroy
  CHECK(seen == 5);
  CHECK(z == 5 && w == 6);
}

/* GCC 13's inoutset depend object: {address, 5}. */
static void set_inoutset(omp_depend_t* o, void* addr) {
  void* words[2] = {addr, (void*)(uintptr_t)5};
  memcpy(o, words, sizeof words);
}

static void meet(int* arrived, int n) {
#pragma omp atomic
  ++*arrived;
  while (__atomic_load_n(arrived, __ATOMIC_ACQUIRE) < n) {
#pragma omp taskyield
  }
}

/* inoutset: the tasks of one set run concurrently (each waits for the other to start: serialized,
   they would deadlock, and the alarm fails the test), after the out before them; in tasks after
   the set run concurrently with each other after the whole set; a second set after the ins, an
   out after everything. */
static int inoutset(void) {
  alarm(30);
  int x = 0, set1 = 0, set1_done = 0, ins = 0, ins_done = 0, set2_done = 0, wrong = 0;
  omp_depend_t o_set;
  set_inoutset(&o_set, &x);
  reset();
#pragma omp parallel num_threads(4)
#pragma omp single
  {
#pragma omp task depend(out : x) shared(x)
    {
      wait_gate();
      x = 1;
      note(1);
    }
    for (int i = 0; i < 2; ++i) {
#pragma omp task depend(depobj : o_set) shared(x, set1, set1_done, wrong) firstprivate(i)
      {
        if (x != 1) {
#pragma omp atomic
          ++wrong;
        }
        meet(&set1, 2);
        note(10 + i);
#pragma omp atomic
        ++set1_done;
      }
    }
    for (int i = 0; i < 2; ++i) {
#pragma omp task depend(in : x) shared(ins, ins_done, set1_done, wrong) firstprivate(i)
      {
        if (__atomic_load_n(&set1_done, __ATOMIC_ACQUIRE) != 2) {
#pragma omp atomic
          ++wrong;
        }
        meet(&ins, 2);
        note(20 + i);
#pragma omp atomic
        ++ins_done;
      }
    }
#pragma omp task depend(depobj : o_set) shared(ins_done, set2_done, wrong)
    {
      if (__atomic_load_n(&ins_done, __ATOMIC_ACQUIRE) != 2) ++wrong;
      set2_done = 1;
      note(30);
    }
#pragma omp task depend(out : x) shared(x, set2_done, wrong)
    {
      if (!set2_done) ++wrong;
      x = 2;
      note(40);
    }
    open_gate();
#pragma omp taskwait
  }
  CHECK(wrong == 0);
  CHECK(logged == 7 && x == 2);
  for (int i = 10; i < 12; ++i) {
    CHECK(before(1, i));
    for (int j = 20; j < 22; ++j) CHECK(before(i, j) && before(j, 30));
  }
  CHECK(before(30, 40));
  return failures;
}

static int destroyed(void) {
  int x = 0;
  omp_depend_t o;
#pragma omp depobj(o) depend(inout : x)
#pragma omp depobj(o) destroy
#pragma omp parallel num_threads(2)
#pragma omp single
  {
#pragma omp task depend(depobj : o) shared(x)
    x = 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "inoutset") == 0) return inoutset();
  if (argc > 1 && strcmp(argv[1], "destroyed") == 0) return destroyed();
  alarm(60);
  kinds();
  mutexinoutset();
  iterators();
  taskwait_depobj();
  return failures;
}
