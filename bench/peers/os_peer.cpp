// SPDX-License-Identifier: Apache-2.0
// weft_peer_os: the kernel's units, pthreads and processes (protocol: peer_harness.hpp).
//
//   --bench=pthread-fanout|pthread-chain   pthread_create + pthread_join (004's thretim.c)
//   --bench=fork-fanout|fork-chain         fork + waitpid (004's forktim.c)
//   --bench=pthread-yield                  two threads pinned to one CPU, sched_yield N times each
//
// Threads and processes run on every CPU the process may use (the kernel places them): --streams
// only labels the case. Default thread attributes (8 MiB stack reservations), as a plain program
// gets them.
#include <pthread.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "../peer_harness.hpp"

namespace {

using weft_bench::peer_case;

[[noreturn]] void die(const char* what, int err) {
  std::fprintf(stderr, "weft_peer_os: %s: %s\n", what, std::strerror(err));
  std::exit(1);
}

void* thread_body(void* arg) {
  weft_bench::unit_body();
  return arg;
}

std::int64_t pthread_fan_out(std::vector<pthread_t>& threads) {
  for (auto& t : threads) {
    if (int rc = pthread_create(&t, nullptr, &thread_body, nullptr)) die("pthread_create", rc);
  }
  for (auto& t : threads) pthread_join(t, nullptr);
  return static_cast<std::int64_t>(threads.size());
}

void* thread_chain(void* arg) {
  const auto left = reinterpret_cast<std::intptr_t>(arg);
  if (left > 1) {
    pthread_t t;
    if (int rc = pthread_create(&t, nullptr, &thread_chain, reinterpret_cast<void*>(left - 1)))
      die("pthread_create", rc);
    pthread_join(t, nullptr);
  }
  return nullptr;
}

std::int64_t pthread_chain(std::int64_t n) {
  pthread_t t;
  if (int rc = pthread_create(&t, nullptr, &thread_chain, reinterpret_cast<void*>(n)))
    die("pthread_create", rc);
  pthread_join(t, nullptr);
  return n;
}

std::int64_t fork_fan_out(std::vector<pid_t>& pids) {
  for (auto& p : pids) {
    p = fork();
    if (p < 0) die("fork", errno);
    if (p == 0) _exit(0);
  }
  for (pid_t p : pids) waitpid(p, nullptr, 0);
  return static_cast<std::int64_t>(pids.size());
}

/// Process k forks process k+1 and waits for it; `left` processes are still to come.
void fork_chain_level(std::int64_t left) {
  if (left == 0) return;
  const pid_t p = fork();
  if (p < 0) die("fork", errno);
  if (p == 0) {
    fork_chain_level(left - 1);
    _exit(0);
  }
  waitpid(p, nullptr, 0);
}

struct yield_args {
  std::int64_t k;
  cpu_set_t cpu;
};

void* yield_body(void* arg) {
  const auto* a = static_cast<const yield_args*>(arg);
  for (std::int64_t i = 0; i < a->k; ++i) sched_yield();
  return nullptr;
}

std::int64_t pthread_yield_pair(std::int64_t k) {
  yield_args a{k, {}};
  CPU_ZERO(&a.cpu);
  cpu_set_t mask;
  sched_getaffinity(0, sizeof mask, &mask);
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &mask)) {
      CPU_SET(c, &a.cpu);
      break;
    }
  }
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setaffinity_np(&attr, sizeof a.cpu, &a.cpu);
  pthread_t t[2];
  for (auto& x : t) {
    if (int rc = pthread_create(&x, &attr, &yield_body, &a)) die("pthread_create", rc);
  }
  for (auto& x : t) pthread_join(x, nullptr);
  pthread_attr_destroy(&attr);
  return 2 * k;
}

}  // namespace

int main(int argc, char** argv) {
  const peer_case c = weft_bench::parse_case(argc, argv);
  const auto n = static_cast<std::size_t>(c.n);
  if (c.bench == "pthread-fanout") {
    std::vector<pthread_t> threads(n);
    weft_bench::run_trials("pthread", "fanout", c, [&] { return pthread_fan_out(threads); });
  } else if (c.bench == "pthread-chain") {
    weft_bench::run_trials("pthread", "chain", c, [&] { return pthread_chain(c.n); });
  } else if (c.bench == "fork-fanout") {
    std::vector<pid_t> pids(n);
    weft_bench::run_trials("fork", "fanout", c, [&] { return fork_fan_out(pids); });
  } else if (c.bench == "fork-chain") {
    weft_bench::run_trials("fork", "chain", c, [&] {
      fork_chain_level(c.n);
      return c.n;
    });
  } else if (c.bench == "pthread-yield") {
    weft_bench::run_trials("pthread", "yield", c, [&] { return pthread_yield_pair(c.n); });
  } else {
    weft_bench::skip_case("os", c, "unknown benchmark");
  }
  return 0;
}
