// SPDX-License-Identifier: Apache-2.0
// Unit dumps (weft/debug.hpp): what a dump says about blocked, ready and running units, the dump
// signal (WEFT_DUMP_SIGNAL), and finalize's report of units it cannot finish.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <weft/channel.hpp>
#include <weft/condition_variable.hpp>
#include <weft/debug.hpp>
#include <weft/mutex.hpp>
#include <weft/schedulers/basic_scheduler.hpp>
#include <weft/schedulers/fifo_pool.hpp>
#include <weft/task_group.hpp>
#include <weft/tasklet.hpp>
#include <weft/wait_queue.hpp>

#include "test_support.hpp"

namespace {

using namespace weft_test;

class DebugTest : public env_test {};

std::string dump() {
  std::ostringstream out;
  weft::dump_units(out);
  return out.str();
}

/// The dump's block of lines about unit `id` (its header line and the indented lines below it).
std::string unit_block(const std::string& text, weft::unit_id id) {
  const std::string head = "unit " + std::to_string(id) + ' ';
  std::size_t at = 0;
  while ((at = text.find(head, at)) != std::string::npos && at != 0 && text[at - 1] != '\n') ++at;
  if (at == std::string::npos) return {};
  std::size_t end = at;
  while ((end = text.find('\n', end)) != std::string::npos && end + 1 < text.size() &&
         text[end + 1] == ' ')
    ++end;
  return text.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

// noinline: the backtrace must show them.
[[gnu::noinline]] void lock_and_unlock(weft::mutex& m) {
  m.lock();
  m.unlock();
  asm volatile("" ::: "memory");
}
[[gnu::noinline]] int receive_one(weft::channel<int>& c) {
  const int v = c.recv().value_or(-1);
  asm volatile("" ::: "memory");
  return v;
}

TEST_F(DebugTest, DumpNamesWhatEachUnitWaitsForWithBacktraces) {
  weft::init(test_config(2));
  weft::mutex m;
  weft::channel<int> ch(0);
  weft::mutex cv_m;
  weft::condition_variable cv;
  bool go = false;
  m.lock();
  weft::ult locker = weft::ult::create([&] { lock_and_unlock(m); });
  ASSERT_TRUE(blocked(locker));
  weft::ult joiner = weft::ult::create([&] { locker.join(); });
  ASSERT_TRUE(blocked(joiner));
  weft::ult receiver = weft::ult::create([&] { EXPECT_EQ(receive_one(ch), 7); });
  ASSERT_TRUE(blocked(receiver));
  weft::ult waiter = weft::ult::create([&] {
    std::unique_lock lock(cv_m);
    cv.wait(lock, [&] { return go; });
  });
  ASSERT_TRUE(blocked(waiter));

  const weft::unit_id joiner_id = joiner.id(), receiver_id = receiver.id();
  const std::string text = dump();
  SCOPED_TRACE(text);
  if (std::getenv("DEBUG_TEST_PRINT")) std::fputs(text.c_str(), stdout);
  EXPECT_NE(text.find("stream 0 (primary)"), std::string::npos);
  EXPECT_NE(text.find("stream 1"), std::string::npos);
  const std::string l = unit_block(text, locker.id());
  EXPECT_NE(l.find("ULT blocked: mutex"), std::string::npos) << l;
  EXPECT_NE(l.find("lock_and_unlock"), std::string::npos) << l;  // a frame of the backtrace
  EXPECT_NE(l.find("  pool 0x"), std::string::npos) << l;
  EXPECT_NE(
      unit_block(text, joiner.id()).find("blocked: join of unit " + std::to_string(locker.id())),
      std::string::npos);
  const std::string r = unit_block(text, receiver.id());
  EXPECT_NE(r.find("blocked: channel"), std::string::npos) << r;
  EXPECT_NE(r.find("receive_one"), std::string::npos) << r;
  EXPECT_NE(unit_block(text, waiter.id()).find("blocked: condition variable"), std::string::npos);
  // The caller, the primary ULT, is running: no backtrace of it.
  EXPECT_NE(text.find("ULT running"), std::string::npos);

  m.unlock();
  ch.send(7);
  {
    std::lock_guard lock(cv_m);
    go = true;
  }
  cv.notify_all();
  joiner.join();
  receiver.join();
  waiter.join();
  // Joined units are gone from the dump (the joiner joined `locker` through its handle).
  const std::string after = dump();
  EXPECT_NE(unit_block(text, joiner_id), "");
  EXPECT_EQ(unit_block(after, joiner_id), "");
  EXPECT_EQ(unit_block(after, receiver_id), "");
  weft::finalize();
}

TEST_F(DebugTest, ClientWaitKindsAreNamedByTheirLabel) {
  const weft::wait_kind k = weft::client_wait_kind("the debug test's own wait");
  EXPECT_GE(static_cast<int>(k), static_cast<int>(weft::wait_kind::client));
  const char same[] = "the debug test's own wait";  // the same label at another address
  EXPECT_EQ(weft::client_wait_kind(same), k);
  EXPECT_NE(weft::client_wait_kind("the debug test's other wait"), k);

  weft::init(test_config(2));
  weft::spinlock lock;
  weft::wait_queue q;
  bool go = false;
  weft::ult u = weft::ult::create([&] {
    lock.lock();
    while (!go) {
      weft::waiter self;
      self.kind = k;
      q.wait(lock, self);
      lock.lock();
    }
    lock.unlock();
  });
  ASSERT_TRUE(blocked(u));
  const std::string b = unit_block(dump(), u.id());
  EXPECT_NE(b.find("blocked: the debug test's own wait"), std::string::npos) << b;
  lock.lock();
  go = true;
  weft::wakeup w = q.take();
  lock.unlock();
  if (w) w();
  u.join();
  weft::finalize();
}

TEST_F(DebugTest, ReadyUnitsThatNeverRanAreListed) {
  weft::init(test_config(1));
  // A pool no scheduler serves yet: its units wait there, ready and never started.
  std::shared_ptr<weft::pool> unserved = weft::make_fifo_pool(weft::access_mode::mpmc);
  weft::ult u = weft::ult::create(*unserved, [] {});
  weft::tasklet t = weft::tasklet::create(*unserved, [] {});
  const std::string text = dump();
  SCOPED_TRACE(text);
  EXPECT_NE(unit_block(text, u.id()).find("ULT ready"), std::string::npos);
  EXPECT_NE(unit_block(text, u.id()).find("not started"), std::string::npos);
  EXPECT_NE(unit_block(text, t.id()).find("tasklet ready"), std::string::npos);
  {
    // A stream over the pool runs them.
    scoped_stream s(std::make_unique<weft::basic_scheduler>(std::vector{unserved}));
    u.join();
    t.join();
  }
  weft::finalize();
}

TEST_F(DebugTest, TaskGroupUnitsKeepTheirNames) {
  weft::init(test_config(1));
  // A pool no scheduler serves yet: the group's ULTs wait there, listed with their names.
  std::shared_ptr<weft::pool> unserved = weft::make_fifo_pool(weft::access_mode::mpmc);
  std::atomic<int> ran{0};
  {
    weft::task_group g(*unserved);
    weft::ult_attributes small_attr;
    small_attr.name = "group small body";
    g.run([&ran] { ran++; }, small_attr);  // stored in the descriptor
    weft::ult_attributes large_attr;
    large_attr.name = "group large body";
    std::array<char, 128> payload{};  // too large for the descriptor: the heap path
    payload[0] = 1;
    g.run([&ran, payload] { ran += payload[0]; }, large_attr);
    g.run([&ran] { ran++; });  // unnamed
    const std::string text = dump();
    SCOPED_TRACE(text);
    EXPECT_NE(text.find("  name group small body\n"), std::string::npos);
    EXPECT_NE(text.find("  name group large body\n"), std::string::npos);
    std::size_t names = 0;
    for (std::size_t at = 0; (at = text.find("  name ", at)) != std::string::npos; ++at) ++names;
    EXPECT_EQ(names, 2u);
    scoped_stream s(std::make_unique<weft::basic_scheduler>(std::vector{unserved}));
    g.wait();
  }
  EXPECT_EQ(ran.load(), 3);
  weft::finalize();
}

TEST_F(DebugTest, DumpWithoutRuntimeIsAnError) {
  std::ostringstream out;
  EXPECT_EQ(errc_of([&] { weft::dump_units(out); }), weft::errc::not_initialized);
}

TEST_F(DebugTest, DumpSignalVariableIsParsedAndCheckedAtInit) {
  for (const char* good : {"SIGUSR1", "usr1", " QUIT ", "10"}) {
    scoped_env e("WEFT_DUMP_SIGNAL", good);
    weft::config cfg;
    cfg.apply_environment();
    EXPECT_EQ(cfg.dump_signal, std::string(good) == " QUIT " ? SIGQUIT : SIGUSR1) << good;
  }
  {
    scoped_env e("WEFT_DUMP_SIGNAL", "none");
    weft::config cfg;
    cfg.dump_signal = SIGUSR2;
    cfg.apply_environment();
    EXPECT_EQ(cfg.dump_signal, 0);
  }
  for (const char* bad : {"SIGKILL", "SIGSEGV", "9", "", "USR3", "SIGUSR1x"}) {
    scoped_env e("WEFT_DUMP_SIGNAL", bad);
    const std::string what = what_of([] { weft::init(test_config(1)); });
    EXPECT_NE(what.find("WEFT_DUMP_SIGNAL"), std::string::npos) << bad << ": " << what;
    EXPECT_FALSE(weft::initialized());
  }
  weft::config cfg = test_config(1);
  cfg.dump_signal = SIGKILL;
  EXPECT_EQ(errc_of([&] { weft::init(cfg); }), weft::errc::invalid_config);
}

/// Redirects stderr into a file for its lifetime.
class stderr_to_file {
 public:
  stderr_to_file() : path_("/tmp/weft_debug_test_" + std::to_string(getpid())) {
    std::fflush(stderr);
    saved_ = dup(STDERR_FILENO);
    const int fd = open(path_.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
    dup2(fd, STDERR_FILENO);
    close(fd);
  }
  ~stderr_to_file() {
    restore();
    unlink(path_.c_str());
  }
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    dup2(saved_, STDERR_FILENO);
    close(saved_);
    saved_ = -1;
  }
  std::string text() const {
    std::ifstream in(path_);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

 private:
  std::string path_;
  int saved_ = -1;
};

TEST_F(DebugTest, DumpSignalPrintsTheDumpToStderr) {
  scoped_env e("WEFT_DUMP_SIGNAL", "SIGUSR1");
  stderr_to_file capture;
  weft::init(test_config(2));
  weft::mutex m;
  m.lock();
  weft::ult locker = weft::ult::create([&] { lock_and_unlock(m); });
  ASSERT_TRUE(blocked(locker));
  const std::string want = "unit " + std::to_string(locker.id()) + " ULT blocked: mutex";
  ASSERT_EQ(kill(getpid(), SIGUSR1), 0);
  // The dump thread writes it; wait for it (a hang, not a slow dump, fails).
  const bool seen = wait_until([&] {
    const std::string t = capture.text();
    return t.find(want) != std::string::npos && t.find("lock_and_unlock") != std::string::npos;
  });
  m.unlock();
  locker.join();
  weft::finalize();
  // finalize restored the previous disposition (the default, which would end the process).
  struct sigaction now {};
  sigaction(SIGUSR1, nullptr, &now);
  EXPECT_EQ(now.sa_handler, SIG_DFL);
  capture.restore();
  EXPECT_TRUE(seen) << capture.text();
  EXPECT_NE(capture.text().find("weft: unit dump (signal " + std::to_string(SIGUSR1) + ")"),
            std::string::npos);
}

TEST_F(DebugTest, FinalizeReportsUnitsItCannotFinish) {
  stderr_to_file capture;
  weft::init(test_config(1));
  const weft::unit_id primary = weft::this_unit::id();
  // Never destroyed: the abandoned unit still waits on it. Held by a static, so that leak
  // checkers see it reachable.
  static weft::mutex* const m = new weft::mutex;
  m->lock();
  weft::ult stuck = weft::ult::create([] { lock_and_unlock(*m); });
  ASSERT_TRUE(blocked(stuck));
  const weft::unit_id id = stuck.id();
  stuck.detach();
  weft::finalize();
  capture.restore();
  const std::string text = capture.text();
  if (std::getenv("DEBUG_TEST_PRINT")) std::fputs(text.c_str(), stdout);
  EXPECT_NE(text.find("weft: finalize: 1 unit could not finish and is abandoned"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\n1 live unit\n"), std::string::npos) << text;
  EXPECT_EQ(unit_block(text, primary), "") << text;  // finalize's caller is not abandoned
  EXPECT_NE(unit_block(text, id).find("blocked: mutex"), std::string::npos) << text;
  EXPECT_NE(unit_block(text, id).find("lock_and_unlock"), std::string::npos) << text;
}

TEST_F(DebugTest, FinalizeIsQuietWhenEverythingFinished) {
  stderr_to_file capture;
  weft::init(test_config(2));
  weft::ult::create([] {}).join();
  weft::finalize();
  capture.restore();
  EXPECT_EQ(capture.text().find("could not finish"), std::string::npos) << capture.text();
}

}  // namespace
