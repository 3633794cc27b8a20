// SPDX-License-Identifier: Apache-2.0
// weft_peer_weft: weft's side of the create/join and context-switch cases (protocol:
// peer_harness.hpp).
//
//   --bench=ult-fanout|tasklet-fanout   the primary ULT creates N units, then joins them all
//   --bench=ult-chain                   ULT k creates ULT k+1 and joins it (004's gotim1)
//   --bench=ult-fanout-local|ult-chain-local
//                                       the same with no stream named: every unit goes where
//                                       ult::create puts it (the creator's main pool) and the
//                                       scheduler decides where it runs
//   --bench=ult-phases                  N sequential steps, each a fan-out of 8 ULTs (default
//                                       placement) joined before the next step
//   --bench=yield|yield_to              two ULTs on one stream switch N times each
//
// weft runs with S streams (compact affinity: pinned). With S > 1 the units of ult-fanout,
// tasklet-fanout and ult-chain are dealt round-robin over the streams' main pools (the chain's
// level k goes to stream k mod S): forced placement. A tasklet cannot wait, so there is no tasklet
// chain.
#include <array>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "../peer_harness.hpp"
#include "../workloads.hpp"

namespace {

using weft_bench::peer_case;

std::vector<weft::execution_stream*> all_streams() {
  std::vector<weft::execution_stream*> out;
  for (int r = 0; r < weft::execution_stream::count(); ++r) {
    if (weft::execution_stream* s = weft::execution_stream::by_rank(r)) out.push_back(s);
  }
  return out;
}

/// Level k of the chain: creates level k+1 on the next stream and joins it.
void chain_level(const std::vector<weft::execution_stream*>& streams, std::int64_t k,
                 std::int64_t n) {
  if (k == n) return;
  weft::execution_stream& s = *streams[static_cast<std::size_t>(k) % streams.size()];
  weft::ult child = weft::ult::create_on(s, [&streams, k, n] { chain_level(streams, k + 1, n); });
  child.join();
}

/// Units a step of the phases program creates.
constexpr std::int64_t phase_width = 8;

/// `steps` short parallel phases, each a fan-out of phase_width ULTs joined before the next.
std::int64_t phases(std::int64_t steps) {
  std::array<weft::ult, phase_width> step;
  for (std::int64_t i = 0; i < steps; ++i) {
    for (auto& u : step) u = weft::ult::create(&weft_bench::unit_body);
    for (auto& u : step) u.join();
  }
  return steps * phase_width;
}

template <class Handle>
std::int64_t fan_out_local(std::vector<Handle>& handles, std::int64_t n) {
  handles.clear();
  for (std::int64_t i = 0; i < n; ++i) handles.push_back(Handle::create(&weft_bench::unit_body));
  for (auto& h : handles) h.join();
  return n;
}

template <class Handle>
std::int64_t fan_out(const std::vector<weft::execution_stream*>& streams,
                     std::vector<Handle>& handles, std::int64_t n) {
  handles.clear();
  const std::size_t count = streams.size();
  for (std::int64_t i = 0; i < n; ++i) {
    handles.push_back(
        Handle::create_on(*streams[static_cast<std::size_t>(i) % count], &weft_bench::unit_body));
  }
  for (auto& h : handles) h.join();
  return n;
}

int run(const peer_case& c) {
  weft::config cfg;
  cfg.num_streams = c.streams;
  cfg.affinity.how = weft::affinity_policy::kind::compact;
  weft::runtime rt(cfg);
  const std::vector<weft::execution_stream*> streams = all_streams();
  weft::pool& home = weft::execution_stream::primary().main_pool();

  if (c.bench == "ult-fanout") {
    std::vector<weft::ult> handles;
    handles.reserve(static_cast<std::size_t>(c.n));
    weft_bench::run_trials("weft-ult", "fanout", c, [&] { return fan_out(streams, handles, c.n); });
  } else if (c.bench == "tasklet-fanout") {
    std::vector<weft::tasklet> handles;
    handles.reserve(static_cast<std::size_t>(c.n));
    weft_bench::run_trials("weft-tasklet", "fanout", c,
                           [&] { return fan_out(streams, handles, c.n); });
  } else if (c.bench == "ult-chain") {
    weft_bench::run_trials("weft-ult", "chain", c, [&] {
      chain_level(streams, 0, c.n);
      return c.n;
    });
  } else if (c.bench == "ult-fanout-local") {
    std::vector<weft::ult> handles;
    handles.reserve(static_cast<std::size_t>(c.n));
    weft_bench::run_trials("weft-ult", "fanout-local", c,
                           [&] { return fan_out_local(handles, c.n); });
  } else if (c.bench == "ult-chain-local") {
    weft_bench::run_trials("weft-ult", "chain-local", c, [&] {
      weft_bench::ult_chain_level(0, c.n);
      return c.n;
    });
  } else if (c.bench == "ult-phases") {
    weft_bench::run_trials("weft-ult", "phases", c, [&] { return phases(c.n); });
  } else if (c.bench == "yield") {
    if (c.streams != 1) weft_bench::skip_case("weft-ult", c, "yield runs on one stream");
    weft_bench::run_trials("weft-ult", "yield", c,
                           [&] { return weft_bench::yield_pair(home, c.n); });
  } else if (c.bench == "yield_to") {
    if (c.streams != 1) weft_bench::skip_case("weft-ult", c, "yield_to runs on one stream");
    weft_bench::private_main_pool scope;
    if (scope.pool().access() != weft::access_mode::priv) {
      std::fprintf(stderr, "weft_peer_weft: the primary's main pool did not become private\n");
      return 1;
    }
    bool fell_back = false;
    weft_bench::run_trials("weft-ult", "yield_to", c, [&] {
      const std::int64_t handoffs = weft_bench::yield_to_pair(scope.pool(), c.n);
      fell_back |= handoffs != 2 * c.n;
      return handoffs;
    });
    if (fell_back) {
      std::fprintf(stderr, "weft_peer_weft: yield_to fell back to a plain yield\n");
      return 1;
    }
  } else {
    weft_bench::skip_case("weft", c, "unknown benchmark");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const peer_case c = weft_bench::parse_case(argc, argv);
  try {
    return run(c);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weft_peer_weft: %s\n", e.what());
    return 1;
  }
}
