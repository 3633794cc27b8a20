// SPDX-License-Identifier: Apache-2.0
// weft_peer_tbb: oneTBB's task_group (protocol: peer_harness.hpp), in a task_arena of --streams
// threads (TBB does not pin its workers).
//
//   --bench=fanout   one task_group: run() N times, then wait()
//   --bench=chain    task k runs task k+1 in a task_group of its own and waits for it
//   --bench=phases   N sequential steps, each a task_group of 8 tasks waited for before the next
//
// TBB tasks are stackless: a waiting task's frame stays on its thread's stack and wait() runs the
// child on top of it, so the chain recurses on the thread stack (8 MiB): the runner caps it at
// 10^4 levels.
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include <cstdint>
#include <cstdio>

#include "../peer_harness.hpp"

namespace {

using weft_bench::peer_case;

void chain_level(std::int64_t left) {
  if (left == 0) return;
  tbb::task_group g;
  g.run([left] { chain_level(left - 1); });
  g.wait();
}

}  // namespace

int main(int argc, char** argv) {
  const peer_case c = weft_bench::parse_case(argc, argv);
  tbb::task_arena arena(c.streams);
  arena.execute([&] {
    if (c.bench == "fanout") {
      weft_bench::run_trials("tbb", "fanout", c, [&] {
        tbb::task_group g;
        for (std::int64_t i = 0; i < c.n; ++i) g.run(&weft_bench::unit_body);
        g.wait();
        return c.n;
      });
    } else if (c.bench == "chain") {
      weft_bench::run_trials("tbb", "chain", c, [&] {
        chain_level(c.n);
        return c.n;
      });
    } else if (c.bench == "phases") {
      weft_bench::run_trials("tbb", "phases", c, [&] {
        for (std::int64_t i = 0; i < c.n; ++i) {
          tbb::task_group g;
          for (int k = 0; k < 8; ++k) g.run(&weft_bench::unit_body);
          g.wait();
        }
        return c.n * 8;
      });
    } else {
      weft_bench::skip_case("tbb", c, "unknown benchmark");
    }
  });
  return 0;
}
