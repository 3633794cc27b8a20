/* Smoke test of the synchronisation part of weft's Argobots layer (abt/src/sync_*.cpp), from C:
 * every primitive used by ULTs spread over two execution streams, statically initialised mutexes
 * and condition variables, the error codes of null handles and of tasklet callers, an external
 * thread, and a contended counter that must come out exact. The full C suite is in tests/abt/.
 * Exits non-zero (after printing the failed check) on the first failure; asserts only counts and
 * orders the primitives promise, never timings. Stress sizes are divided by WEFT_TEST_SCALE. */
#include <abt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

/* Fails unless `call` returns `expected` (printing both codes). */
#define CHECK_RC(call, expected)                                                               \
  do {                                                                                         \
    int got_ = (call);                                                                         \
    if (got_ != (expected)) {                                                                  \
      fprintf(stderr, "%s:%d: %s returned %d, expected %d\n", __FILE__, __LINE__, #call, got_, \
              (int)(expected));                                                                \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)

#define OK(call) CHECK_RC(call, ABT_SUCCESS)

enum { num_streams = 2 };
static ABT_xstream streams[num_streams];
static ABT_pool pools[num_streams];

/* A stress size divided by WEFT_TEST_SCALE, at least 1. */
static int scaled(int n) {
  const char* v = getenv("WEFT_TEST_SCALE");
  const int s = v ? atoi(v) : 1;
  const int r = s > 1 ? n / s : n;
  return r < 1 ? 1 : r;
}

/* Runs fn(arg) in `n` ULTs spread round-robin over the streams, and joins and frees them. */
static void run_ults(int n, void (*fn)(void*), void* arg) {
  ABT_thread* threads = malloc(sizeof(ABT_thread) * (size_t)n);
  CHECK(threads != NULL);
  for (int i = 0; i < n; i++) {
    OK(ABT_thread_create(pools[i % num_streams], fn, arg, ABT_THREAD_ATTR_NULL, &threads[i]));
  }
  for (int i = 0; i < n; i++) OK(ABT_thread_free(&threads[i]));
  free(threads);
}

/* Runs fn(arg) in one tasklet on stream 1 and waits for it. */
static void run_tasklet(void (*fn)(void*), void* arg) {
  ABT_task task;
  OK(ABT_task_create(pools[1], fn, arg, &task));
  OK(ABT_task_free(&task));
}

/* ---- null handles ------------------------------------------------------------------------- */

static ABT_mutex_memory static_mutex_mem = ABT_MUTEX_INITIALIZER;
static ABT_mutex_memory static_recursive_mem = ABT_RECURSIVE_MUTEX_INITIALIZER;
static ABT_cond_memory static_cond_mem = ABT_COND_INITIALIZER;
static ABT_eventual_memory static_eventual_mem = ABT_EVENTUAL_INITIALIZER;

static void test_invalid_handles(void) {
  ABT_mutex mutex = ABT_MUTEX_NULL;
  ABT_mutex_attr attr = ABT_MUTEX_ATTR_NULL;
  ABT_cond cond = ABT_COND_NULL;
  ABT_rwlock rwlock = ABT_RWLOCK_NULL;
  ABT_eventual eventual = ABT_EVENTUAL_NULL;
  ABT_future future = ABT_FUTURE_NULL;
  ABT_barrier barrier = ABT_BARRIER_NULL;
  ABT_xstream_barrier xbarrier = ABT_XSTREAM_BARRIER_NULL;
  ABT_timer timer = ABT_TIMER_NULL;
  struct timespec ts = {0, 0};
  void* value;
  ABT_bool flag;
  uint32_t n;
  double secs;

  CHECK_RC(ABT_mutex_lock(mutex), ABT_ERR_INV_MUTEX);
  CHECK_RC(ABT_mutex_lock_low(mutex), ABT_ERR_INV_MUTEX);
  CHECK_RC(ABT_mutex_lock_high(mutex), ABT_ERR_INV_MUTEX);
  CHECK_RC(ABT_mutex_spinlock(mutex), ABT_ERR_INV_MUTEX);
  CHECK_RC(ABT_mutex_trylock(mutex), ABT_ERR_INV_MUTEX);
  CHECK_RC(ABT_mutex_unlock(mutex), ABT_ERR_INV_MUTEX);
  CHECK_RC(ABT_mutex_unlock_se(mutex), ABT_ERR_INV_MUTEX);
  CHECK_RC(ABT_mutex_unlock_de(mutex), ABT_ERR_INV_MUTEX);
  CHECK_RC(ABT_mutex_get_attr(mutex, &attr), ABT_ERR_INV_MUTEX);
  CHECK_RC(ABT_mutex_free(&mutex), ABT_ERR_INV_MUTEX);
  CHECK_RC(ABT_mutex_attr_set_recursive(attr, ABT_TRUE), ABT_ERR_INV_MUTEX_ATTR);
  CHECK_RC(ABT_mutex_attr_get_recursive(attr, &flag), ABT_ERR_INV_MUTEX_ATTR);
  CHECK_RC(ABT_mutex_attr_free(&attr), ABT_ERR_INV_MUTEX_ATTR);
  CHECK_RC(ABT_cond_wait(cond, ABT_MUTEX_MEMORY_GET_HANDLE(&static_mutex_mem)), ABT_ERR_INV_COND);
  CHECK_RC(ABT_cond_wait(ABT_COND_MEMORY_GET_HANDLE(&static_cond_mem), mutex), ABT_ERR_INV_MUTEX);
  CHECK_RC(ABT_cond_timedwait(cond, mutex, &ts), ABT_ERR_INV_COND);
  CHECK_RC(ABT_cond_signal(cond), ABT_ERR_INV_COND);
  CHECK_RC(ABT_cond_broadcast(cond), ABT_ERR_INV_COND);
  CHECK_RC(ABT_cond_free(&cond), ABT_ERR_INV_COND);
  CHECK_RC(ABT_rwlock_rdlock(rwlock), ABT_ERR_INV_RWLOCK);
  CHECK_RC(ABT_rwlock_wrlock(rwlock), ABT_ERR_INV_RWLOCK);
  CHECK_RC(ABT_rwlock_unlock(rwlock), ABT_ERR_INV_RWLOCK);
  CHECK_RC(ABT_rwlock_free(&rwlock), ABT_ERR_INV_RWLOCK);
  CHECK_RC(ABT_eventual_wait(eventual, &value), ABT_ERR_INV_EVENTUAL);
  CHECK_RC(ABT_eventual_test(eventual, &value, &flag), ABT_ERR_INV_EVENTUAL);
  CHECK_RC(ABT_eventual_set(eventual, NULL, 0), ABT_ERR_INV_EVENTUAL);
  CHECK_RC(ABT_eventual_reset(eventual), ABT_ERR_INV_EVENTUAL);
  CHECK_RC(ABT_eventual_free(&eventual), ABT_ERR_INV_EVENTUAL);
  CHECK_RC(ABT_future_wait(future), ABT_ERR_INV_FUTURE);
  CHECK_RC(ABT_future_test(future, &flag), ABT_ERR_INV_FUTURE);
  CHECK_RC(ABT_future_set(future, NULL), ABT_ERR_INV_FUTURE);
  CHECK_RC(ABT_future_reset(future), ABT_ERR_INV_FUTURE);
  CHECK_RC(ABT_future_free(&future), ABT_ERR_INV_FUTURE);
  CHECK_RC(ABT_barrier_wait(barrier), ABT_ERR_INV_BARRIER);
  CHECK_RC(ABT_barrier_reinit(barrier, 2), ABT_ERR_INV_BARRIER);
  CHECK_RC(ABT_barrier_get_num_waiters(barrier, &n), ABT_ERR_INV_BARRIER);
  CHECK_RC(ABT_barrier_free(&barrier), ABT_ERR_INV_BARRIER);
  CHECK_RC(ABT_xstream_barrier_wait(xbarrier), ABT_ERR_INV_XSTREAM_BARRIER);
  CHECK_RC(ABT_xstream_barrier_free(&xbarrier), ABT_ERR_INV_XSTREAM_BARRIER);
  CHECK_RC(ABT_timer_start(timer), ABT_ERR_INV_TIMER);
  CHECK_RC(ABT_timer_stop(timer), ABT_ERR_INV_TIMER);
  CHECK_RC(ABT_timer_read(timer, &secs), ABT_ERR_INV_TIMER);
  CHECK_RC(ABT_timer_stop_and_read(timer, &secs), ABT_ERR_INV_TIMER);
  CHECK_RC(ABT_timer_stop_and_add(timer, &secs), ABT_ERR_INV_TIMER);
  CHECK_RC(ABT_timer_dup(timer, &timer), ABT_ERR_INV_TIMER);
  CHECK_RC(ABT_timer_free(&timer), ABT_ERR_INV_TIMER);

  /* Bad arguments. */
  CHECK_RC(ABT_barrier_create(0, &barrier), ABT_ERR_INV_ARG);
  CHECK(barrier == ABT_BARRIER_NULL);
  CHECK_RC(ABT_xstream_barrier_create(0, &xbarrier), ABT_ERR_INV_ARG);
  CHECK_RC(ABT_eventual_create(-1, &eventual), ABT_ERR_INV_ARG);
  CHECK(eventual == ABT_EVENTUAL_NULL);

  /* Static memory is not the library's to free. */
  mutex = ABT_MUTEX_MEMORY_GET_HANDLE(&static_mutex_mem);
  CHECK_RC(ABT_mutex_free(&mutex), ABT_ERR_INV_MUTEX);
  cond = ABT_COND_MEMORY_GET_HANDLE(&static_cond_mem);
  CHECK_RC(ABT_cond_free(&cond), ABT_ERR_INV_COND);
  eventual = ABT_EVENTUAL_MEMORY_GET_HANDLE(&static_eventual_mem);
  CHECK_RC(ABT_eventual_free(&eventual), ABT_ERR_INV_EVENTUAL);
}

/* ---- mutex -------------------------------------------------------------------------------- */

struct counter {
  ABT_mutex mutex;
  int rounds;
  long value;
};

/* Increments under the mutex with each locking form in turn. */
static void bump_every_form(void* arg) {
  struct counter* c = arg;
  for (int i = 0; i < c->rounds; i++) {
    switch (i % 5) {
      case 0:
        OK(ABT_mutex_lock(c->mutex));
        break;
      case 1:
        OK(ABT_mutex_lock_low(c->mutex));
        break;
      case 2:
        OK(ABT_mutex_lock_high(c->mutex));
        break;
      case 3:
        OK(ABT_mutex_spinlock(c->mutex));
        break;
      default:
        while (ABT_mutex_trylock(c->mutex) == ABT_ERR_MUTEX_LOCKED) OK(ABT_thread_yield());
        break;
    }
    c->value++;
    if (i % 5 == 0 && (i & 1)) ABT_thread_yield(); /* hold it across a switch now and then */
    switch (i % 3) {
      case 0:
        OK(ABT_mutex_unlock(c->mutex));
        break;
      case 1:
        OK(ABT_mutex_unlock_se(c->mutex));
        break;
      default:
        OK(ABT_mutex_unlock_de(c->mutex));
        break;
    }
  }
}

/* A recursive mutex taken twice per increment. */
static void bump_recursive(void* arg) {
  struct counter* c = arg;
  for (int i = 0; i < c->rounds; i++) {
    OK(ABT_mutex_lock(c->mutex));
    OK(ABT_mutex_trylock(c->mutex));
    c->value++;
    OK(ABT_mutex_unlock(c->mutex));
    OK(ABT_mutex_unlock(c->mutex));
  }
}

static void bump_in_tasklet(void* arg) {
  struct counter* c = arg;
  OK(ABT_mutex_lock(c->mutex)); /* tasklets may lock: they spin instead of blocking */
  c->value++;
  OK(ABT_mutex_unlock(c->mutex));
}

static void test_mutex(void) {
  const int ults = 8;
  /* The contended counter: created mutex, every locking form, exact count. */
  struct counter c = {ABT_MUTEX_NULL, scaled(20000), 0};
  OK(ABT_mutex_create(&c.mutex));
  run_ults(ults, bump_every_form, &c);
  CHECK(c.value == (long)ults * c.rounds);
  const int tasklets = scaled(200);
  for (int i = 0; i < tasklets; i++) run_tasklet(bump_in_tasklet, &c);
  CHECK(c.value == (long)ults * c.rounds + tasklets);
  OK(ABT_mutex_lock(c.mutex));
  CHECK_RC(ABT_mutex_trylock(c.mutex), ABT_ERR_MUTEX_LOCKED); /* not recursive */
  OK(ABT_mutex_unlock(c.mutex));
  ABT_bool equal = ABT_FALSE;
  OK(ABT_mutex_equal(c.mutex, c.mutex, &equal));
  CHECK(equal == ABT_TRUE);
  OK(ABT_mutex_free(&c.mutex));
  CHECK(c.mutex == ABT_MUTEX_NULL);

  /* A statically initialised mutex, with no create call. */
  struct counter s = {ABT_MUTEX_MEMORY_GET_HANDLE(&static_mutex_mem), scaled(20000), 0};
  run_ults(ults, bump_every_form, &s);
  CHECK(s.value == (long)ults * s.rounds);

  /* Recursive: from attributes, and statically initialised. */
  ABT_mutex_attr attr;
  ABT_bool recursive = ABT_FALSE;
  OK(ABT_mutex_attr_create(&attr));
  OK(ABT_mutex_attr_set_recursive(attr, ABT_TRUE));
  OK(ABT_mutex_attr_get_recursive(attr, &recursive));
  CHECK(recursive == ABT_TRUE);
  struct counter r = {ABT_MUTEX_NULL, scaled(10000), 0};
  OK(ABT_mutex_create_with_attr(attr, &r.mutex));
  OK(ABT_mutex_attr_free(&attr));
  CHECK(attr == ABT_MUTEX_ATTR_NULL);
  run_ults(ults, bump_recursive, &r);
  CHECK(r.value == (long)ults * r.rounds);
  OK(ABT_mutex_get_attr(r.mutex, &attr));
  recursive = ABT_FALSE;
  OK(ABT_mutex_attr_get_recursive(attr, &recursive));
  CHECK(recursive == ABT_TRUE);
  OK(ABT_mutex_attr_free(&attr));
  OK(ABT_mutex_free(&r.mutex));
  struct counter sr = {ABT_MUTEX_MEMORY_GET_HANDLE(&static_recursive_mem), scaled(10000), 0};
  run_ults(ults, bump_recursive, &sr);
  CHECK(sr.value == (long)ults * sr.rounds);
}

/* ---- condition variable ------------------------------------------------------------------- */

/* A gate on the static mutex and condition: ULTs wait until `open`, counting themselves. */
struct gate {
  int open;
  int waiting;
  int passed;
};

static void wait_at_gate(void* arg) {
  struct gate* g = arg;
  ABT_mutex m = ABT_MUTEX_MEMORY_GET_HANDLE(&static_mutex_mem);
  ABT_cond c = ABT_COND_MEMORY_GET_HANDLE(&static_cond_mem);
  OK(ABT_mutex_lock(m));
  g->waiting++;
  OK(ABT_cond_broadcast(c)); /* tells the opener one more is in */
  while (!g->open) OK(ABT_cond_wait(c, m));
  g->passed++;
  OK(ABT_mutex_unlock(m));
}

/* A bounded queue of one slot handed between producers and consumers with signal. */
struct slot {
  ABT_mutex mutex;
  ABT_cond not_empty;
  ABT_cond not_full;
  int full;
  long item;
  int per_producer;
  long sum;
  long taken;
};

static void produce(void* arg) {
  struct slot* q = arg;
  for (int i = 1; i <= q->per_producer; i++) {
    OK(ABT_mutex_lock(q->mutex));
    while (q->full) OK(ABT_cond_wait(q->not_full, q->mutex));
    q->item = i;
    q->full = 1;
    OK(ABT_cond_signal(q->not_empty));
    OK(ABT_mutex_unlock(q->mutex));
  }
}

static void consume(void* arg) {
  struct slot* q = arg;
  for (int i = 1; i <= q->per_producer; i++) {
    OK(ABT_mutex_lock(q->mutex));
    while (!q->full) OK(ABT_cond_wait(q->not_empty, q->mutex));
    q->sum += q->item;
    q->taken++;
    q->full = 0;
    OK(ABT_cond_signal(q->not_full));
    OK(ABT_mutex_unlock(q->mutex));
  }
}

static void test_cond(void) {
  /* Static mutex and cond: a gate opened by broadcast once every waiter is in. */
  struct gate g = {0, 0, 0};
  const int waiters = 6;
  ABT_thread threads[6];
  for (int i = 0; i < waiters; i++) {
    OK(ABT_thread_create(pools[i % num_streams], wait_at_gate, &g, ABT_THREAD_ATTR_NULL,
                         &threads[i]));
  }
  ABT_mutex m = ABT_MUTEX_MEMORY_GET_HANDLE(&static_mutex_mem);
  ABT_cond c = ABT_COND_MEMORY_GET_HANDLE(&static_cond_mem);
  OK(ABT_mutex_lock(m));
  while (g.waiting < waiters) OK(ABT_cond_wait(c, m));
  CHECK(g.passed == 0);
  g.open = 1;
  OK(ABT_cond_broadcast(c));
  OK(ABT_mutex_unlock(m));
  for (int i = 0; i < waiters; i++) OK(ABT_thread_free(&threads[i]));
  CHECK(g.passed == waiters);

  /* One slot, producers and consumers on both streams, woken one at a time. */
  struct slot q = {ABT_MUTEX_NULL, ABT_COND_NULL, ABT_COND_NULL, 0, 0, scaled(2000), 0, 0};
  OK(ABT_mutex_create(&q.mutex));
  OK(ABT_cond_create(&q.not_empty));
  OK(ABT_cond_create(&q.not_full));
  const int pairs = 2;
  ABT_thread workers[4];
  for (int i = 0; i < 2 * pairs; i++) {
    OK(ABT_thread_create(pools[i % num_streams], (i & 1) ? consume : produce, &q,
                         ABT_THREAD_ATTR_NULL, &workers[i]));
  }
  for (int i = 0; i < 2 * pairs; i++) OK(ABT_thread_free(&workers[i]));
  CHECK(q.taken == (long)pairs * q.per_producer);
  CHECK(q.sum == (long)pairs * q.per_producer * (q.per_producer + 1) / 2);

  /* A timed wait nobody signals times out with the mutex held again. */
  struct timespec deadline;
  CHECK(clock_gettime(CLOCK_REALTIME, &deadline) == 0);
  deadline.tv_nsec += 10 * 1000 * 1000;
  if (deadline.tv_nsec >= 1000000000L) {
    deadline.tv_sec++;
    deadline.tv_nsec -= 1000000000L;
  }
  OK(ABT_mutex_lock(q.mutex));
  CHECK_RC(ABT_cond_timedwait(q.not_empty, q.mutex, &deadline), ABT_ERR_COND_TIMEDOUT);
  CHECK_RC(ABT_mutex_trylock(q.mutex), ABT_ERR_MUTEX_LOCKED);
  OK(ABT_mutex_unlock(q.mutex));
  OK(ABT_cond_free(&q.not_empty));
  OK(ABT_cond_free(&q.not_full));
  OK(ABT_mutex_free(&q.mutex));
  CHECK(q.not_empty == ABT_COND_NULL && q.mutex == ABT_MUTEX_NULL);
}

/* ---- rwlock ------------------------------------------------------------------------------- */

struct shared_pair {
  ABT_rwlock lock;
  int rounds;
  long a, b;
  long torn;
  int started;
};

/* Every third ULT writes (a and b together), the others read and count torn pairs. */
static void read_or_write(void* arg) {
  struct shared_pair* p = arg;
  const int writer = __atomic_fetch_add(&p->started, 1, __ATOMIC_RELAXED) % 3 == 0;
  for (int i = 0; i < p->rounds; i++) {
    if (writer) {
      OK(ABT_rwlock_wrlock(p->lock));
      p->a++;
      ABT_thread_yield(); /* a reader running now would see a torn pair */
      p->b++;
      OK(ABT_rwlock_unlock(p->lock));
    } else {
      OK(ABT_rwlock_rdlock(p->lock));
      long a = p->a;
      ABT_thread_yield();
      if (a != p->b) __atomic_add_fetch(&p->torn, 1, __ATOMIC_RELAXED);
      OK(ABT_rwlock_unlock(p->lock));
    }
  }
}

static void test_rwlock(void) {
  struct shared_pair p = {ABT_RWLOCK_NULL, scaled(500), 0, 0, 0, 0};
  OK(ABT_rwlock_create(&p.lock));
  CHECK_RC(ABT_rwlock_unlock(p.lock), ABT_ERR_RWLOCK); /* nobody holds it */
  run_ults(9, read_or_write, &p);
  CHECK(p.torn == 0);
  CHECK(p.a == 3L * p.rounds && p.b == p.a);
  /* Readers share it. */
  OK(ABT_rwlock_rdlock(p.lock));
  OK(ABT_rwlock_rdlock(p.lock));
  OK(ABT_rwlock_unlock(p.lock));
  OK(ABT_rwlock_unlock(p.lock));
  OK(ABT_rwlock_free(&p.lock));
  CHECK(p.lock == ABT_RWLOCK_NULL);
}

/* ---- eventual and future ------------------------------------------------------------------ */

struct eventual_round {
  ABT_eventual eventual;
  int seen; /* waiters that saw 42 */
};

static void wait_for_42(void* arg) {
  struct eventual_round* r = arg;
  void* value = NULL;
  OK(ABT_eventual_wait(r->eventual, &value));
  CHECK(value != NULL && *(int*)value == 42);
  __atomic_add_fetch(&r->seen, 1, __ATOMIC_RELAXED);
}

static void* external_waiter(void* arg) {
  wait_for_42(arg); /* an external thread blocks on a futex */
  return NULL;
}

static void wait_static_eventual(void* arg) {
  (void)arg;
  void* value = &value;
  OK(ABT_eventual_wait(ABT_EVENTUAL_MEMORY_GET_HANDLE(&static_eventual_mem), &value));
  CHECK(value == NULL); /* no buffer */
}

static void test_eventual(void) {
  struct eventual_round r = {ABT_EVENTUAL_NULL, 0};
  OK(ABT_eventual_create(sizeof(int), &r.eventual));
  for (int round = 0; round < 2; round++) {
    r.seen = 0;
    ABT_bool ready = ABT_TRUE;
    OK(ABT_eventual_test(r.eventual, NULL, &ready));
    CHECK(ready == ABT_FALSE);
    pthread_t external;
    CHECK(pthread_create(&external, NULL, external_waiter, &r) == 0);
    ABT_thread threads[4];
    for (int i = 0; i < 4; i++) {
      OK(ABT_thread_create(pools[i % num_streams], wait_for_42, &r, ABT_THREAD_ATTR_NULL,
                           &threads[i]));
    }
    int v = 42;
    OK(ABT_eventual_set(r.eventual, &v, sizeof v));
    CHECK_RC(ABT_eventual_set(r.eventual, &v, sizeof v), ABT_ERR_EVENTUAL);
    for (int i = 0; i < 4; i++) OK(ABT_thread_free(&threads[i]));
    CHECK(pthread_join(external, NULL) == 0);
    CHECK(r.seen == 5);
    void* value = NULL;
    OK(ABT_eventual_test(r.eventual, &value, &ready));
    CHECK(ready == ABT_TRUE && *(int*)value == 42);
    OK(ABT_eventual_reset(r.eventual));
  }
  /* More bytes than the buffer holds: Argobots 1.x's code. */
  long long big = 0;
  CHECK_RC(ABT_eventual_set(r.eventual, &big, (int)sizeof big), ABT_ERR_INV_EVENTUAL);
  OK(ABT_eventual_free(&r.eventual));
  CHECK(r.eventual == ABT_EVENTUAL_NULL);

  /* The statically initialised eventual: no buffer, set with 0 bytes. */
  ABT_thread t;
  OK(ABT_thread_create(pools[1], wait_static_eventual, NULL, ABT_THREAD_ATTR_NULL, &t));
  OK(ABT_eventual_set(ABT_EVENTUAL_MEMORY_GET_HANDLE(&static_eventual_mem), NULL, 0));
  OK(ABT_thread_free(&t));
}

static int callback_calls;
static long callback_sum;

static void sum_compartments(void** values) {
  callback_calls++;
  for (int i = 0; i < 4; i++) callback_sum += (long)(intptr_t)values[i];
}

struct future_round {
  ABT_future future;
  int waited;
};

static void wait_future(void* arg) {
  struct future_round* r = arg;
  OK(ABT_future_wait(r->future));
  __atomic_add_fetch(&r->waited, 1, __ATOMIC_RELAXED);
}

static void set_one(void* arg) {
  static int next = 0;
  struct future_round* r = arg;
  const int mine = __atomic_add_fetch(&next, 1, __ATOMIC_RELAXED);
  OK(ABT_future_set(r->future, (void*)(intptr_t)(((mine - 1) % 4) + 1)));
}

static void test_future(void) {
  struct future_round r = {ABT_FUTURE_NULL, 0};
  OK(ABT_future_create(4, sum_compartments, &r.future));
  ABT_thread waiters[3];
  for (int i = 0; i < 3; i++) {
    OK(ABT_thread_create(pools[i % num_streams], wait_future, &r, ABT_THREAD_ATTR_NULL,
                         &waiters[i]));
  }
  run_ults(4, set_one, &r);
  for (int i = 0; i < 3; i++) OK(ABT_thread_free(&waiters[i]));
  CHECK(r.waited == 3);
  CHECK(callback_calls == 1 && callback_sum == 1 + 2 + 3 + 4);
  ABT_bool ready = ABT_FALSE;
  OK(ABT_future_test(r.future, &ready));
  CHECK(ready == ABT_TRUE);
  CHECK_RC(ABT_future_set(r.future, NULL), ABT_ERR_FUTURE); /* all compartments are set */
  OK(ABT_future_reset(r.future));
  OK(ABT_future_test(r.future, &ready));
  CHECK(ready == ABT_FALSE);
  OK(ABT_future_free(&r.future));
  CHECK(r.future == ABT_FUTURE_NULL);

  /* No compartment: ready from the start, and set is an error. */
  OK(ABT_future_create(0, NULL, &r.future));
  OK(ABT_future_wait(r.future));
  CHECK_RC(ABT_future_set(r.future, NULL), ABT_ERR_FUTURE);
  OK(ABT_future_free(&r.future));
}

/* ---- barriers ----------------------------------------------------------------------------- */

struct rounds {
  ABT_barrier barrier;
  int parties;
  int rounds;
  int arrived;
  int early; /* a party that saw fewer arrivals than the round needs after the barrier */
};

static void meet(void* arg) {
  struct rounds* r = arg;
  for (int i = 0; i < r->rounds; i++) {
    __atomic_add_fetch(&r->arrived, 1, __ATOMIC_RELAXED);
    OK(ABT_barrier_wait(r->barrier));
    if (__atomic_load_n(&r->arrived, __ATOMIC_RELAXED) != r->parties * (i + 1)) {
      __atomic_add_fetch(&r->early, 1, __ATOMIC_RELAXED);
    }
    OK(ABT_barrier_wait(r->barrier)); /* nobody starts round i+1 before all checked round i */
  }
}

static void test_barrier(void) {
  struct rounds r = {ABT_BARRIER_NULL, 4, scaled(200), 0, 0};
  OK(ABT_barrier_create((uint32_t)r.parties, &r.barrier));
  run_ults(r.parties, meet, &r);
  CHECK(r.early == 0 && r.arrived == r.parties * r.rounds);
  /* Reinitialised with another count. */
  r.parties = 6;
  r.arrived = 0;
  OK(ABT_barrier_reinit(r.barrier, (uint32_t)r.parties));
  uint32_t n = 0;
  OK(ABT_barrier_get_num_waiters(r.barrier, &n));
  CHECK(n == 6);
  run_ults(r.parties, meet, &r);
  CHECK(r.early == 0 && r.arrived == r.parties * r.rounds);
  OK(ABT_barrier_free(&r.barrier));
  CHECK(r.barrier == ABT_BARRIER_NULL);
}

struct stream_meeting {
  ABT_xstream_barrier barrier;
  int flags[num_streams];
  int saw_other;
};

/* Runs on stream `rank`: sets its flag, meets the other stream, then reads the other's flag. */
static void meet_streams(struct stream_meeting* s, int rank) {
  __atomic_store_n(&s->flags[rank], 1, __ATOMIC_RELAXED);
  OK(ABT_xstream_barrier_wait(s->barrier));
  if (__atomic_load_n(&s->flags[1 - rank], __ATOMIC_RELAXED)) {
    __atomic_add_fetch(&s->saw_other, 1, __ATOMIC_RELAXED);
  }
}

static void meet_from_stream1(void* arg) {
  meet_streams(arg, 1);
}

static void test_xstream_barrier(void) {
  struct stream_meeting s = {ABT_XSTREAM_BARRIER_NULL, {0, 0}, 0};
  OK(ABT_xstream_barrier_create(num_streams, &s.barrier));
  ABT_thread t;
  OK(ABT_thread_create(pools[1], meet_from_stream1, &s, ABT_THREAD_ATTR_NULL, &t));
  meet_streams(&s, 0); /* the primary ULT blocks the primary stream until stream 1 arrives */
  OK(ABT_thread_free(&t));
  CHECK(s.saw_other == 2);
  OK(ABT_xstream_barrier_free(&s.barrier));
  CHECK(s.barrier == ABT_XSTREAM_BARRIER_NULL);
}

/* ---- tasklets and timers ------------------------------------------------------------------ */

struct tasklet_probe {
  ABT_cond cond;
  ABT_mutex mutex;
  ABT_rwlock rwlock;
  ABT_eventual eventual;
  ABT_future future;
  ABT_barrier barrier;
  int done;
};

/* Argobots 1.x refuses blocking waits from tasklets, with each object's error code. */
static void probe_in_tasklet(void* arg) {
  struct tasklet_probe* p = arg;
  OK(ABT_mutex_lock(p->mutex));
  CHECK_RC(ABT_cond_wait(p->cond, p->mutex), ABT_ERR_COND);
  OK(ABT_mutex_unlock(p->mutex));
  CHECK_RC(ABT_rwlock_rdlock(p->rwlock), ABT_ERR_RWLOCK);
  CHECK_RC(ABT_rwlock_wrlock(p->rwlock), ABT_ERR_RWLOCK);
  CHECK_RC(ABT_eventual_wait(p->eventual, NULL), ABT_ERR_EVENTUAL);
  CHECK_RC(ABT_future_wait(p->future), ABT_ERR_FUTURE);
  CHECK_RC(ABT_barrier_wait(p->barrier), ABT_ERR_BARRIER);
  OK(ABT_eventual_set(p->eventual, NULL, 0)); /* non-blocking calls are fine */
  p->done = 1;
}

static void test_tasklet_context(void) {
  struct tasklet_probe p;
  OK(ABT_cond_create(&p.cond));
  OK(ABT_mutex_create(&p.mutex));
  OK(ABT_rwlock_create(&p.rwlock));
  OK(ABT_eventual_create(0, &p.eventual));
  OK(ABT_future_create(1, NULL, &p.future));
  OK(ABT_barrier_create(2, &p.barrier));
  p.done = 0;
  run_tasklet(probe_in_tasklet, &p);
  CHECK(p.done == 1);
  OK(ABT_eventual_wait(p.eventual, NULL));
  OK(ABT_cond_free(&p.cond));
  OK(ABT_mutex_free(&p.mutex));
  OK(ABT_rwlock_free(&p.rwlock));
  OK(ABT_eventual_free(&p.eventual));
  OK(ABT_future_free(&p.future));
  OK(ABT_barrier_free(&p.barrier));
}

static void test_timer(void) {
  ABT_timer timer, copy;
  double secs = -1, total = 1.0, overhead = -1;
  const double t0 = ABT_get_wtime();
  OK(ABT_timer_create(&timer));
  OK(ABT_timer_read(timer, &secs));
  CHECK(secs == 0); /* a new timer reads 0 */
  OK(ABT_timer_start(timer));
  OK(ABT_timer_stop(timer));
  OK(ABT_timer_read(timer, &secs));
  CHECK(secs >= 0);
  OK(ABT_timer_dup(timer, &copy));
  double copied = -1;
  OK(ABT_timer_read(copy, &copied));
  CHECK(copied == secs);
  OK(ABT_timer_stop_and_read(timer, &secs));
  CHECK(secs >= 0);
  OK(ABT_timer_stop_and_add(timer, &total));
  CHECK(total >= 1.0);
  OK(ABT_timer_get_overhead(&overhead));
  CHECK(overhead >= 0);
  OK(ABT_timer_free(&copy));
  OK(ABT_timer_free(&timer));
  CHECK(timer == ABT_TIMER_NULL);
  CHECK(ABT_get_wtime() >= t0);
}

int main(void) {
  OK(ABT_init(0, NULL));
  OK(ABT_xstream_self(&streams[0]));
  for (int i = 1; i < num_streams; i++) OK(ABT_xstream_create(ABT_SCHED_NULL, &streams[i]));
  for (int i = 0; i < num_streams; i++) OK(ABT_xstream_get_main_pools(streams[i], 1, &pools[i]));

  test_invalid_handles();
  test_mutex();
  test_cond();
  test_rwlock();
  test_eventual();
  test_future();
  test_barrier();
  test_xstream_barrier();
  test_tasklet_context();
  test_timer();

  for (int i = 1; i < num_streams; i++) {
    OK(ABT_xstream_join(streams[i]));
    OK(ABT_xstream_free(&streams[i]));
  }
  OK(ABT_finalize());
  puts("weft_abt_sync_smoke: ok");
  return 0;
}
