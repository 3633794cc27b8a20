// SPDX-License-Identifier: Apache-2.0
// Each ULT has its own C++ exception state: it may yield, block on a mutex, sleep and migrate
// inside a catch handler or in a destructor run by unwinding, and keeps its current exception,
// what `throw;` rethrows and its std::uncaught_exceptions(), while other ULTs throw and catch on
// the same kernel threads. A child run as a call on its joiner's stack starts with none.
#include <chrono>
#include <exception>
#include <mutex>

#include "test_support.hpp"

namespace {

using namespace std::chrono_literals;
using weft_test::scaled;

class ExceptionStateTest : public weft_test::streams_test {
 protected:
  // The default configuration: its work-stealing scheduler makes direct switches and runs a
  // joined child that never ran on its joiner's stack.
  void SetUp() override { init(weft_test::default_config(GetParam())); }
};
WEFT_INSTANTIATE_STREAMS(ExceptionStateTest);

struct tagged {
  int id;
};

/// What the ULTs of a test share.
struct shared {
  weft::mutex m;
  int streams = 1;
  std::atomic<int> bad{0};  // failed checks
  std::atomic<int> done{0};
  void check(bool ok) {
    if (!ok) bad.fetch_add(1, std::memory_order_relaxed);
  }
};

/// Gives the stream away, the way `k` picks: a yield, a wait on a held mutex, a sleep, a
/// migration (to a stream chosen by `k`: on one stream, to itself).
void give_away(shared& s, int k) {
  switch (k % 4) {
    case 0:
      weft::this_unit::yield();
      break;
    case 1: {
      std::lock_guard g(s.m);  // others wait for it, blocked
      weft::this_unit::yield();
      break;
    }
    case 2:
      weft::this_unit::sleep_for(20us);
      break;
    default:
      weft::this_unit::migrate_to(*weft::execution_stream::by_rank(k % s.streams));
      break;
  }
}

/// Throws tagged{id}, and inside the handler gives the stream away a few times, rethrows with
/// `throw;` and gives it away in the inner handler too, checking the exception each time.
void handle_and_switch(shared& s, int id) {
  try {
    throw tagged{id};
  } catch (const tagged& t) {
    const std::exception_ptr mine = std::current_exception();
    for (int k = 0; k < 4; ++k) {
      give_away(s, id + k);
      s.check(std::current_exception() == mine && std::uncaught_exceptions() == 0);
    }
    try {
      throw;
    } catch (const tagged& again) {
      s.check(&again == &t && again.id == id);
      give_away(s, id + 1);
      s.check(std::current_exception() == mine);
    }
    s.check(std::current_exception() == mine && t.id == id);
  }
  s.check(!std::current_exception() && std::uncaught_exceptions() == 0);
}

/// Its destructor runs during unwinding and gives the stream away there.
struct switching_guard {
  shared& s;
  int id;
  ~switching_guard() {
    s.check(std::uncaught_exceptions() == 1);
    give_away(s, id);
    s.check(std::uncaught_exceptions() == 1 && !std::current_exception());
    give_away(s, id + 2);
    s.check(std::uncaught_exceptions() == 1);
  }
};

void unwind_and_switch(shared& s, int id) {
  try {
    switching_guard g{s, id};
    throw tagged{id};
  } catch (const tagged& t) {
    s.check(t.id == id && std::uncaught_exceptions() == 0);
  }
  s.check(!std::current_exception() && std::uncaught_exceptions() == 0);
}

/// Runs `n` ULTs of body(i), all at once, and joins them.
template <class Body>
void run_all(int n, Body body) {
  std::vector<weft::ult> units;
  units.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) units.push_back(weft::ult::create([&body, i] { body(i); }));
  for (auto& u : units) u.join();
}

TEST_P(ExceptionStateTest, HandlersKeepTheirExceptionAcrossSwitches) {
  shared s;
  s.streams = streams();
  const int n = static_cast<int>(scaled(48, 8));
  run_all(n, [&s](int i) {
    handle_and_switch(s, i);
    s.done.fetch_add(1);
  });
  EXPECT_EQ(s.done.load(), n);
  EXPECT_EQ(s.bad.load(), 0);
}

TEST_P(ExceptionStateTest, UnwindingKeepsItsCountAcrossSwitches) {
  shared s;
  s.streams = streams();
  const int n = static_cast<int>(scaled(48, 8));
  // Every other ULT only switches and expects no exception at all.
  run_all(n, [&s](int i) {
    if (i % 2) {
      unwind_and_switch(s, i);
    } else {
      for (int k = 0; k < 6; ++k) {
        give_away(s, i + k);
        s.check(!std::current_exception() && std::uncaught_exceptions() == 0);
      }
    }
    s.done.fetch_add(1);
  });
  EXPECT_EQ(s.done.load(), n);
  EXPECT_EQ(s.bad.load(), 0);
}

/// Joins a child (which has not run yet: it may run as a call on this stack) from a catch handler
/// and from a destructor run by unwinding; the child handles exceptions of its own and switches.
void join_inside_handlers(shared& s, int id) {
  auto child = [&s, id] {
    s.check(!std::current_exception() && std::uncaught_exceptions() == 0);
    handle_and_switch(s, id + 1000);
  };
  try {
    throw tagged{id};
  } catch (const tagged& t) {
    const std::exception_ptr mine = std::current_exception();
    weft::ult::create(child).join();
    s.check(std::current_exception() == mine);
    weft::task_group g;
    g.run(child);
    g.wait();
    s.check(std::current_exception() == mine);
    try {
      throw;
    } catch (const tagged& again) {
      s.check(&again == &t);
    }
  }
  struct joining_guard {
    shared& s;
    std::function<void()> child;
    ~joining_guard() {
      weft::ult::create(child).join();
      s.check(std::uncaught_exceptions() == 1);
    }
  };
  try {
    joining_guard g{s, child};
    throw tagged{id};
  } catch (const tagged& t) {
    s.check(t.id == id);
  }
  s.check(!std::current_exception() && std::uncaught_exceptions() == 0);
}

TEST_P(ExceptionStateTest, ChildOnItsJoinersStackHasItsOwn) {
  shared s;
  s.streams = streams();
  const int n = static_cast<int>(scaled(16, 4));
  run_all(n, [&s](int i) {
    join_inside_handlers(s, i);
    s.done.fetch_add(1);
  });
  join_inside_handlers(s, -1);  // the primary ULT, on its thread's stack
  EXPECT_EQ(s.done.load(), n);
  EXPECT_EQ(s.bad.load(), 0);
}

/// Many exceptions, each caught, held across a switch, rethrown and caught again, by 8 ULTs at
/// once: the cheap switches (a yield, a wait on a held mutex) every time, a migration every 16th.
TEST_P(ExceptionStateTest, AHundredThousandExceptionsKeepTheirState) {
  shared s;
  s.streams = streams();
  constexpr int units = 8;
  const int per_unit = static_cast<int>(scaled(12'500, 50));
  std::atomic<long> caught_right{0};
  run_all(units, [&](int u) {
    for (int i = 0; i < per_unit; ++i) {
      const int id = u * per_unit + i;
      try {
        try {
          throw tagged{id};
        } catch (const tagged& t) {
          const std::exception_ptr mine = std::current_exception();
          give_away(s, i % 16 == 15 ? 3 + 4 * (id % s.streams) : i % 2);
          s.check(std::current_exception() == mine && std::uncaught_exceptions() == 0 &&
                  t.id == id);
          throw;
        }
      } catch (const tagged& again) {
        if (again.id == id && std::uncaught_exceptions() == 0) caught_right.fetch_add(1);
      }
      s.check(!std::current_exception());
    }
    s.done.fetch_add(1);
  });
  EXPECT_EQ(s.done.load(), units);
  EXPECT_EQ(caught_right.load(), static_cast<long>(units) * per_unit);
  EXPECT_EQ(s.bad.load(), 0);
}

TEST_P(ExceptionStateTest, PrimaryHandlerAmongOthers) {
  shared s;
  s.streams = streams();
  const int n = static_cast<int>(scaled(16, 4));
  try {
    throw tagged{-7};
  } catch (const tagged& t) {
    const std::exception_ptr mine = std::current_exception();
    std::vector<weft::ult> units;
    units.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i)
      units.push_back(weft::ult::create([&s, i] { handle_and_switch(s, i); }));
    for (int k = 0; k < 8; ++k) {
      weft::this_unit::yield();
      EXPECT_EQ(std::current_exception(), mine);
    }
    for (auto& u : units) u.join();
    EXPECT_EQ(std::current_exception(), mine);
    EXPECT_EQ(t.id, -7);
  }
  EXPECT_FALSE(std::current_exception());
  EXPECT_EQ(s.bad.load(), 0);
}

}  // namespace
