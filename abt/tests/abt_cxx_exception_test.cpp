// SPDX-License-Identifier: Apache-2.0
// C++ exception state per ULT through abt.h: ULTs on every test stream throw, and inside their
// catch handlers and in destructors run by unwinding they block on an ABT_mutex, an ABT_cond and
// an ABT_eventual (set by helper ULTs on other streams), yield, migrate to another stream and
// join a helper (which may run on the joiner's stack); then they check what
// std::current_exception() holds, what `throw;` rethrows and std::uncaught_exceptions(). The
// helpers throw and catch their own exceptions, and must start with none. 10^5 exceptions in
// all (divided by WEFT_TEST_SCALE); the counts are printed, and any exception caught wrong or
// lost, or a wrong state seen, fails the test.
#include <atomic>
#include <cstdio>
#include <exception>

extern "C" {
#include "abt_test.h"
}

namespace {

constexpr int ults = 8;
constexpr int total_exceptions = 100000;

/// What is thrown: by which ULT (or its helper), in which iteration, at which place.
struct tagged {
  int ult;
  int iteration;
  int place;
  bool operator==(const tagged&) const = default;
};

/// The places that throw, per iteration of a ULT, and one per helper started.
enum place : int {
  in_handler,     // caught, switched inside the handler, rethrown with `throw;`
  unwinding,      // propagates through a destructor that switches
  in_destructor,  // thrown and caught inside that destructor
  per_iteration,
  in_helper = per_iteration,  // a helper ULT's own
};

/// The ways of giving the stream away; a helper is started for the last three.
enum switch_kind : int {
  yield,
  contended_mutex,
  migration,
  eventual_from_helper,
  cond_from_helper,
  joined_helper,
  switch_kinds
};

std::atomic<long> thrown{0};
std::atomic<long> caught_right{0};  // caught where expected, with the value thrown
std::atomic<long> caught_wrong{0};  // caught where expected, with another value
std::atomic<long> wrong_state{0};   // a wrong current_exception() or uncaught_exceptions()
std::atomic<long> helpers{0};
ABT_mutex shared_mutex;

void check_state(bool ok) {
  if (!ok) wrong_state.fetch_add(1, std::memory_order_relaxed);
}

void count_caught(const tagged& got, const tagged& want) {
  (got == want ? caught_right : caught_wrong).fetch_add(1, std::memory_order_relaxed);
}

tagged throw_value(int ult, int iteration, int p) {
  thrown.fetch_add(1, std::memory_order_relaxed);
  return tagged{ult, iteration, p};
}

/// Whether the exception being handled is `want`: rethrown and caught again.
bool current_is(const tagged& want) {
  const std::exception_ptr p = std::current_exception();
  if (!p) return false;
  try {
    std::rethrow_exception(p);
  } catch (const tagged& t) {
    return t == want;
  } catch (...) {
    return false;
  }
}

int self_rank() {
  int rank = 0;
  OK(ABT_self_get_xstream_rank(&rank));
  return rank;
}

/// A helper ULT's work: starts with no exception state, throws and catches its own across a
/// yield, then sets `eventual` or signals `cond` (under `mutex`, with `*flag`), if given.
struct helper_job {
  int ult;
  int iteration;
  ABT_eventual eventual = ABT_EVENTUAL_NULL;
  ABT_mutex mutex = ABT_MUTEX_NULL;
  ABT_cond cond = ABT_COND_NULL;
  int flag = 0;
};

void helper_body(void* arg) {
  auto* job = static_cast<helper_job*>(arg);
  check_state(!std::current_exception() && std::uncaught_exceptions() == 0);
  const tagged want{job->ult, job->iteration, in_helper};
  try {
    throw throw_value(job->ult, job->iteration, in_helper);
  } catch (const tagged& t) {
    OK(ABT_thread_yield());
    count_caught(t, want);
    check_state(current_is(want) && std::uncaught_exceptions() == 0);
  }
  if (job->eventual != ABT_EVENTUAL_NULL) OK(ABT_eventual_set(job->eventual, nullptr, 0));
  if (job->cond != ABT_COND_NULL) {
    OK(ABT_mutex_lock(job->mutex));
    job->flag = 1;
    OK(ABT_cond_signal(job->cond));
    OK(ABT_mutex_unlock(job->mutex));
  }
}

/// Starts a helper on `pool` and returns its handle (to be freed by the caller).
ABT_thread start_helper(helper_job& job, ABT_pool pool) {
  helpers.fetch_add(1, std::memory_order_relaxed);
  ABT_thread t = ABT_THREAD_NULL;
  OK(ABT_thread_create(pool, helper_body, &job, ABT_THREAD_ATTR_NULL, &t));
  return t;
}

/// Gives the calling ULT's stream away the way `kind` says.
void give_away(int kind, int ult, int iteration) {
  const int n = abt_test_num_xstreams;
  const int here = self_rank();
  ABT_pool other = abt_test_pools[(here + 1) % n];
  switch (kind % switch_kinds) {
    case yield:
      OK(ABT_thread_yield());
      break;
    case contended_mutex:
      OK(ABT_mutex_lock(shared_mutex));  // the other ULTs block on it meanwhile
      OK(ABT_thread_yield());
      OK(ABT_mutex_unlock(shared_mutex));
      break;
    case migration: {
      if (n == 1) {
        OK(ABT_thread_yield());
        break;
      }
      ABT_thread self = ABT_THREAD_NULL;
      OK(ABT_thread_self(&self));
      const int rc = ABT_thread_migrate_to_xstream(self, abt_test_xstreams[(here + 1) % n]);
      CHECK(rc == ABT_SUCCESS || rc == ABT_ERR_MIGRATION_TARGET);
      break;
    }
    case eventual_from_helper: {
      helper_job job{ult, iteration};
      OK(ABT_eventual_create(0, &job.eventual));
      ABT_thread t = start_helper(job, other);
      OK(ABT_eventual_wait(job.eventual, nullptr));
      OK(ABT_thread_free(&t));
      OK(ABT_eventual_free(&job.eventual));
      break;
    }
    case cond_from_helper: {
      helper_job job{ult, iteration};
      OK(ABT_mutex_create(&job.mutex));
      OK(ABT_cond_create(&job.cond));
      ABT_thread t = start_helper(job, other);
      OK(ABT_mutex_lock(job.mutex));
      while (!job.flag) OK(ABT_cond_wait(job.cond, job.mutex));
      OK(ABT_mutex_unlock(job.mutex));
      OK(ABT_thread_free(&t));
      OK(ABT_cond_free(&job.cond));
      OK(ABT_mutex_free(&job.mutex));
      break;
    }
    default: {  // joined_helper: on this stream's pool, so the join may run it on this stack
      helper_job job{ult, iteration};
      ABT_thread t = start_helper(job, abt_test_pools[here]);
      OK(ABT_thread_free(&t));
      break;
    }
  }
}

/// Caught, switched twice inside the handler, rethrown with `throw;`, switched in the inner
/// handler, and caught outside.
void handler_then_rethrow(int ult, int iteration) {
  const tagged want{ult, iteration, in_handler};
  try {
    try {
      throw throw_value(ult, iteration, in_handler);
    } catch (const tagged& t) {
      const std::exception_ptr mine = std::current_exception();
      give_away(ult + iteration, ult, iteration);
      check_state(std::current_exception() == mine && current_is(want) && t == want);
      check_state(std::uncaught_exceptions() == 0);
      try {
        throw;
      } catch (const tagged& again) {
        check_state(&again == &t);
        give_away(ult + iteration + 1, ult, iteration);
        check_state(std::current_exception() == mine);
      }
      throw;
    }
  } catch (const tagged& t) {
    count_caught(t, want);
    check_state(std::uncaught_exceptions() == 0);
  }
  check_state(!std::current_exception() && std::uncaught_exceptions() == 0);
}

/// Run by unwinding: switches with one exception propagating, and throws and catches one of its
/// own, switching in that handler too.
struct switching_destructor {
  int ult;
  int iteration;
  ~switching_destructor() {
    check_state(std::uncaught_exceptions() == 1);
    give_away(ult + iteration + 2, ult, iteration);
    check_state(std::uncaught_exceptions() == 1);
    const tagged want{ult, iteration, in_destructor};
    try {
      throw throw_value(ult, iteration, in_destructor);
    } catch (const tagged& t) {
      give_away(ult + iteration + 3, ult, iteration);
      count_caught(t, want);
      check_state(current_is(want) && std::uncaught_exceptions() == 1);
    }
    check_state(!std::current_exception() && std::uncaught_exceptions() == 1);
  }
};

void unwind_through_destructor(int ult, int iteration) {
  const tagged want{ult, iteration, unwinding};
  try {
    switching_destructor d{ult, iteration};
    throw throw_value(ult, iteration, unwinding);
  } catch (const tagged& t) {
    count_caught(t, want);
    check_state(current_is(want) && std::uncaught_exceptions() == 0);
  }
  check_state(!std::current_exception() && std::uncaught_exceptions() == 0);
}

struct ult_args {
  int ult;
  int iterations;
};

void ult_body(void* arg) {
  const auto* a = static_cast<const ult_args*>(arg);
  for (int i = 0; i < a->iterations; ++i) {
    handler_then_rethrow(a->ult, i);
    unwind_through_destructor(a->ult, i);
  }
}

/// The helpers the ULTs start: iteration i of ULT u gives the stream away the ways u + i, ... ,
/// u + i + 3 (mod switch_kinds), and the last three ways start one each.
long helpers_started(int iterations) {
  long n = 0;
  for (int u = 0; u < ults; ++u) {
    for (int i = 0; i < iterations; ++i) {
      for (int k = 0; k < 4; ++k) n += (u + i + k) % switch_kinds >= eventual_from_helper;
    }
  }
  return n;
}

void test_exception_state() {
  abt_test_start();
  OK(ABT_mutex_create(&shared_mutex));
  // Four give_away() calls per iteration, of which half start a helper that throws one more.
  const int iterations = abt_test_scaled(total_exceptions / ults / (per_iteration + 2));
  ult_args args[ults];
  ABT_thread threads[ults];
  for (int u = 0; u < ults; ++u) {
    args[u] = ult_args{u, iterations};
    OK(ABT_thread_create(abt_test_pools[u % abt_test_num_xstreams], ult_body, &args[u],
                         ABT_THREAD_ATTR_NULL, &threads[u]));
  }
  OK(ABT_thread_free_many(ults, threads));
  OK(ABT_mutex_free(&shared_mutex));

  const long lost = thrown.load() - caught_right.load() - caught_wrong.load();
  const long expected =
      static_cast<long>(ults) * iterations * per_iteration + helpers_started(iterations);
  std::printf(
      "%d ULTs, %d iterations each, %ld helpers: exceptions thrown %ld (expected %ld), "
      "caught right %ld, caught wrong %ld, lost %ld, wrong states seen %ld\n",
      ults, iterations, helpers.load(), thrown.load(), expected, caught_right.load(),
      caught_wrong.load(), lost, wrong_state.load());
  std::fflush(stdout);  // a failed check ends the process at once
  CHECK(helpers.load() == helpers_started(iterations));
  CHECK(thrown.load() == expected);
  CHECK(caught_wrong.load() == 0);
  CHECK(lost == 0);
  CHECK(wrong_state.load() == 0);
  abt_test_stop();
}

}  // namespace

int main(int argc, char** argv) {
  static const abt_test_case cases[] = {{"exception_state", test_exception_state}};
  return abt_test_main(argc, argv, cases, ABT_TEST_COUNT(cases));
}
