// C++ exception state per team member and per task: 8 members (on 2 streams under libweft-omp,
// WEFT_OMP_STREAMS in CMakeLists.txt) throw, and inside their catch handlers, and in destructors
// run by unwinding, enter critical sections, take an omp lock, yield (taskyield) and wait for
// tasks (taskwait) that throw and catch exceptions of their own; then they check what
// std::current_exception() holds, what `throw;` rethrows and std::uncaught_exceptions(). On
// libgomp each member is a kernel thread and every exception is caught by its own thread; on
// libweft-omp the members switch inside their handlers, so each must keep its own state.
// Prints the counts and fails on any exception caught wrong, lost, or a wrong state seen.
//
// 8 members x 12500 iterations (each iteration throws 6 exceptions); WEFT_TEST_SCALE (the
// sanitizer runs set 10) divides the iterations.
#include <omp.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>

namespace {

constexpr int members = 8;
constexpr int full_iterations = 12500;

/// What is thrown: who threw it, in which iteration, at which place of the iteration.
struct tagged {
  int member;
  int iteration;
  int place;
  bool operator==(const tagged&) const = default;
};

/// The places of an iteration that throw.
enum place : int {
  in_handler,       // caught, switched inside the handler, rethrown with `throw;`
  unwinding,        // propagates through a destructor that switches
  in_destructor,    // thrown and caught inside that destructor
  around_taskwait,  // a member's handler that waits for a task
  in_task,          // the task's handler that waits for a task of its own
  in_inner_task,    // that inner task's
  places
};

std::atomic<long> thrown{0};
std::atomic<long> caught_right{0};  // caught where expected, with the value thrown
std::atomic<long> caught_wrong{0};  // caught where expected, with another value
std::atomic<long> wrong_state{0};   // a wrong current_exception() or uncaught_exceptions()
omp_lock_t lock;
long critical_count = 0;  // changed only inside the critical sections
long locked_count = 0;    // changed only under the lock
constexpr int switch_points_per_iteration = 5;

void check_state(bool ok) {
  if (!ok) wrong_state.fetch_add(1, std::memory_order_relaxed);
}

void count_caught(const tagged& got, const tagged& want) {
  (got == want ? caught_right : caught_wrong).fetch_add(1, std::memory_order_relaxed);
}

tagged throw_value(int member, int iteration, place p) {
  thrown.fetch_add(1, std::memory_order_relaxed);
  return tagged{member, iteration, p};
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

/// Gives the member's stream away where it can: a contended critical section, a contended lock
/// and a task scheduling point.
void switch_points() {
#pragma omp critical(exception_state)
  ++critical_count;
  omp_set_lock(&lock);
  ++locked_count;
#pragma omp taskyield
  omp_unset_lock(&lock);
#pragma omp taskyield
}

/// Caught, switched inside the handler, rethrown with `throw;` and caught outside.
void handler_then_rethrow(int member, int iteration) {
  const tagged want{member, iteration, in_handler};
  try {
    try {
      throw throw_value(member, iteration, in_handler);
    } catch (const tagged& t) {
      const std::exception_ptr mine = std::current_exception();
      switch_points();
      check_state(std::current_exception() == mine && current_is(want) && t == want);
      check_state(std::uncaught_exceptions() == 0);
      throw;
    }
  } catch (const tagged& t) {
    count_caught(t, want);
    check_state(std::uncaught_exceptions() == 0);
  }
  check_state(!std::current_exception() && std::uncaught_exceptions() == 0);
}

/// Run by unwinding: switches with one exception propagating, and throws and catches one of its
/// own.
struct switching_destructor {
  int member;
  int iteration;
  ~switching_destructor() {
    check_state(std::uncaught_exceptions() == 1);
    switch_points();
    check_state(std::uncaught_exceptions() == 1);
    const tagged want{member, iteration, in_destructor};
    try {
      throw throw_value(member, iteration, in_destructor);
    } catch (const tagged& t) {
      switch_points();
      count_caught(t, want);
      check_state(current_is(want) && std::uncaught_exceptions() == 1);
    }
    check_state(std::uncaught_exceptions() == 1);
  }
};

void unwind_through_destructor(int member, int iteration) {
  const tagged want{member, iteration, unwinding};
  try {
    switching_destructor d{member, iteration};
    throw throw_value(member, iteration, unwinding);
  } catch (const tagged& t) {
    count_caught(t, want);
    check_state(current_is(want) && std::uncaught_exceptions() == 0);
  }
  check_state(!std::current_exception() && std::uncaught_exceptions() == 0);
}

/// A task's handler that waits for a task of its own, which throws and catches inside it.
void task_with_handler(int member, int iteration) {
  const tagged want{member, iteration, in_task};
  try {
    throw throw_value(member, iteration, in_task);
  } catch (const tagged& t) {
#pragma omp task
    {
      const tagged inner{member, iteration, in_inner_task};
      try {
        throw throw_value(member, iteration, in_inner_task);
      } catch (const tagged& u) {
        switch_points();
        count_caught(u, inner);
        check_state(current_is(inner));
      }
    }
#pragma omp taskwait
    switch_points();
    check_state(current_is(want) && std::uncaught_exceptions() == 0);
    try {
      throw;
    } catch (const tagged& again) {
      count_caught(again, want);
      check_state(&again == &t);
    }
  }
}

/// A member's handler that starts a task and waits for it, then rethrows.
void handler_around_taskwait(int member, int iteration) {
  const tagged want{member, iteration, around_taskwait};
  try {
    try {
      throw throw_value(member, iteration, around_taskwait);
    } catch (const tagged&) {
#pragma omp task
      task_with_handler(member, iteration);
#pragma omp taskwait
      check_state(current_is(want) && std::uncaught_exceptions() == 0);
      throw;
    }
  } catch (const tagged& t) {
    count_caught(t, want);
  }
}

int scaled_iterations() {
  const char* v = std::getenv("WEFT_TEST_SCALE");
  const long scale = v && *v ? std::strtol(v, nullptr, 10) : 1;
  const long n = full_iterations / (scale < 1 ? 1 : scale);
  return n < 1 ? 1 : static_cast<int>(n);
}

}  // namespace

int main() {
  const int iterations = scaled_iterations();
  omp_init_lock(&lock);
  int team = 0;
#pragma omp parallel num_threads(members)
  {
#pragma omp single
    team = omp_get_num_threads();
    const int member = omp_get_thread_num();
    for (int i = 0; i < iterations; ++i) {
      handler_then_rethrow(member, i);
      unwind_through_destructor(member, i);
      handler_around_taskwait(member, i);
    }
  }
  omp_destroy_lock(&lock);

  const long expected = static_cast<long>(team) * iterations * places;
  const long lost = thrown.load() - caught_right.load() - caught_wrong.load();
  std::printf(
      "members %d, iterations %d each: exceptions thrown %ld (expected %ld), caught right %ld, "
      "caught wrong %ld, lost %ld, wrong states seen %ld\n",
      team, iterations, thrown.load(), expected, caught_right.load(), caught_wrong.load(), lost,
      wrong_state.load());
  const long switch_points_passed =
      static_cast<long>(team) * iterations * switch_points_per_iteration;
  const bool ok = team == members && thrown.load() == expected && caught_wrong.load() == 0 &&
                  lost == 0 && wrong_state.load() == 0 && critical_count == switch_points_passed &&
                  locked_count == switch_points_passed;
  if (!ok)
    std::fprintf(stderr,
                 "cxx_exception_state: FAILED (critical sections %ld, locks %ld, expected %ld)\n",
                 critical_count, locked_count, switch_points_passed);
  return ok ? 0 : 1;
}
