// SPDX-License-Identifier: Apache-2.0
// weft_peer_fiber: Boost.Fiber's side (protocol: peer_harness.hpp), on the main thread with the
// default round-robin scheduler (one thread: --streams must be 1; Boost.Fiber's multi-thread
// schedulers need every thread to run fibers of its own, which a fan-out from one fiber is not).
//
//   --bench=fanout|chain|yield
//
// Fibers get pooled 16 KiB stacks, weft's default ULT stack size (Boost's default is 128 KiB
// stacks from malloc per fiber, which would triple the chain's memory and time).
#include <boost/fiber/all.hpp>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "../peer_harness.hpp"

namespace {

using weft_bench::peer_case;
constexpr std::size_t kStackSize = 16 * 1024;

boost::fibers::pooled_fixedsize_stack& stacks() {
  static boost::fibers::pooled_fixedsize_stack s(kStackSize);
  return s;
}

std::int64_t fan_out(std::vector<boost::fibers::fiber>& fibers, std::int64_t n) {
  fibers.clear();
  for (std::int64_t i = 0; i < n; ++i) {
    fibers.emplace_back(std::allocator_arg, stacks(), &weft_bench::unit_body);
  }
  for (auto& f : fibers) f.join();
  return n;
}

void chain_level(std::int64_t left) {
  if (left == 0) return;
  boost::fibers::fiber f(std::allocator_arg, stacks(), [left] { chain_level(left - 1); });
  f.join();
}

std::int64_t yield_pair(std::int64_t k) {
  auto body = [k] {
    for (std::int64_t i = 0; i < k; ++i) boost::this_fiber::yield();
  };
  boost::fibers::fiber a(std::allocator_arg, stacks(), body);
  boost::fibers::fiber b(std::allocator_arg, stacks(), body);
  a.join();
  b.join();
  return 2 * k;
}

}  // namespace

int main(int argc, char** argv) {
  const peer_case c = weft_bench::parse_case(argc, argv);
  if (c.streams != 1) weft_bench::skip_case("boost-fiber", c, "one thread only");
  if (c.bench == "fanout") {
    std::vector<boost::fibers::fiber> fibers;
    fibers.reserve(static_cast<std::size_t>(c.n));
    weft_bench::run_trials("boost-fiber", "fanout", c, [&] { return fan_out(fibers, c.n); });
  } else if (c.bench == "chain") {
    weft_bench::run_trials("boost-fiber", "chain", c, [&] {
      chain_level(c.n);
      return c.n;
    });
  } else if (c.bench == "yield") {
    weft_bench::run_trials("boost-fiber", "yield", c, [&] { return yield_pair(c.n); });
  } else {
    weft_bench::skip_case("boost-fiber", c, "unknown benchmark");
  }
  return 0;
}
