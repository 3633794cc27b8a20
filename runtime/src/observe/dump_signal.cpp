// SPDX-License-Identifier: Apache-2.0
// The dump signal (WEFT_DUMP_SIGNAL). The handler only writes one byte into a pipe, which is
// async-signal-safe; a dedicated thread reads it and formats the dump, outside signal context.
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>

#include "core/runtime_state.hpp"
#include "observe/dump.hpp"
#include "platform/assert.hpp"
#include "weft/error.hpp"

namespace weft::detail {

namespace {

int dump_pipe[2] = {-1, -1};
int dump_sig = 0;
struct sigaction previous_action {};
std::thread dumper;

constexpr char request_dump = 'd';
constexpr char request_quit = 'q';

void on_dump_signal(int) {
  const int saved = errno;
  const char c = request_dump;
  // Non-blocking: a burst of signals that fills the pipe loses dumps, never blocks the handler.
  (void)!write(dump_pipe[1], &c, 1);
  errno = saved;
}

void write_all(int fd, const std::string& s) noexcept {
  std::size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

void dumper_main() {
  for (;;) {
    char c = 0;
    const ssize_t n = read(dump_pipe[0], &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || c == request_quit) return;
    // The thread is started after init published the runtime and joined before finalize ends it.
    assert_invariant([] { return g_runtime != nullptr; },
                     "dump signal: the dump thread serves a runtime that is there");
    std::ostringstream out;
    out << "weft: unit dump (signal " << dump_sig << ")\n";
    try {
      write_dump(out, *g_runtime, {});
    } catch (const std::exception& e) {
      out << "weft: the dump failed: " << e.what() << '\n';
    }
    write_all(STDERR_FILENO, out.str());
  }
}

}  // namespace

void start_dump_signal(int sig) {
  assert_invariant([sig] { return sig > 0 && !dumper.joinable() && dump_pipe[0] < 0; },
                   "dump signal: one dump thread at a time, for a signal validate() accepted");
  if (pipe2(dump_pipe, O_CLOEXEC) != 0) {
    throw error(errc::resource,
                std::string("weft: WEFT_DUMP_SIGNAL: cannot create a pipe: ") + strerror(errno));
  }
  (void)fcntl(dump_pipe[1], F_SETFL, O_NONBLOCK);
  // The thread blocks every signal, so that it never runs a handler (ours included) itself.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  try {
    dumper = std::thread(dumper_main);
  } catch (...) {
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    close(dump_pipe[0]);
    close(dump_pipe[1]);
    dump_pipe[0] = dump_pipe[1] = -1;
    throw error(errc::resource, "weft: WEFT_DUMP_SIGNAL: cannot start the dump thread");
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  struct sigaction sa {};
  sa.sa_handler = &on_dump_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  dump_sig = sig;
  sigaction(sig, &sa, &previous_action);
}

void stop_dump_signal() noexcept {
  if (!dumper.joinable()) return;
  assert_invariant([] { return dump_sig > 0 && dump_pipe[0] >= 0 && dump_pipe[1] >= 0; },
                   "dump signal: a running dump thread has its signal and its pipe");
  sigaction(dump_sig, &previous_action, nullptr);
  const char c = request_quit;
  // The quit byte waits behind pending dump requests; the pipe's write end is non-blocking, so
  // wait for room rather than lose it.
  while (write(dump_pipe[1], &c, 1) != 1 && (errno == EAGAIN || errno == EINTR)) sched_yield();
  dumper.join();
  close(dump_pipe[0]);
  close(dump_pipe[1]);
  dump_pipe[0] = dump_pipe[1] = -1;
  dump_sig = 0;
}

}  // namespace weft::detail
