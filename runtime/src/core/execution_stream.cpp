// SPDX-License-Identifier: Apache-2.0
// The public face of execution streams.
#include "weft/execution_stream.hpp"

#include <algorithm>
#include <string>

#include "core/runtime_state.hpp"
#include "core/stream.hpp"
#include "platform/assert.hpp"
#include "weft/error.hpp"

namespace weft {

using detail::impl;
using detail::rt;

execution_stream& execution_stream::create() {
  return create(make_scheduler(rt().cfg().scheduler));
}

execution_stream& execution_stream::create(std::unique_ptr<scheduler> main_scheduler) {
  return create(std::move(main_scheduler), -1);
}

execution_stream& execution_stream::create(std::unique_ptr<scheduler> main_scheduler,
                                           int wanted_rank) {
  detail::runtime_state& r = rt();
  if (!main_scheduler) throw error(errc::invalid_state, "weft: a stream needs a scheduler");
  if (main_scheduler->stream_ || main_scheduler->stacked_) {
    throw error(errc::invalid_state, "weft: the scheduler already runs on a stream");
  }
  if (wanted_rank < -1) {
    throw error(errc::invalid_state, "weft: invalid stream rank " + std::to_string(wanted_rank));
  }
  detail::stream* s = r.streams().insert(wanted_rank, [&](int rank) {
    std::vector<int> cpus = detail::place_of(rank);
    const int node = detail::topology::numa_node_of(cpus);
    return new detail::stream(rank, false, std::move(main_scheduler), std::move(cpus), node);
  });
  detail::assert_invariant(
      [s, wanted_rank] { return wanted_rank == -1 || s->rank() == wanted_rank; },
      "a stream created with a rank has that rank");
  detail::assert_invariant([s] { return !s->is_primary(); }, "only init() makes the primary");
  s->attach_pools();
  try {
    s->start();
  } catch (...) {
    s->shut_down_scheduling();
    r.streams().erase(s->rank());
    delete s;
    throw;
  }
  return *s;
}

execution_stream* execution_stream::self() noexcept {
  return detail::current_stream();
}

execution_stream& execution_stream::primary() {
  return *rt().primary();
}

execution_stream* execution_stream::by_rank(int rank) noexcept {
  if (!detail::g_runtime) return nullptr;
  return detail::g_runtime->streams().at(rank);
}

int execution_stream::count() noexcept {
  if (!detail::g_runtime) return 0;
  return detail::g_runtime->streams().count();
}

int execution_stream::rank() const noexcept {
  return impl(*this).rank();
}

bool execution_stream::is_primary() const noexcept {
  return impl(*this).is_primary();
}

bool execution_stream::is_parked() const noexcept {
  return impl(*this).is_parked();
}

std::uint64_t execution_stream::times_parked() const noexcept {
  return impl(*this).times_parked();
}

stream_state execution_stream::state() const noexcept {
  return impl(*this).state();
}

const std::vector<int>& execution_stream::cpus() const noexcept {
  return impl(*this).cpus();
}

int execution_stream::numa_node() const noexcept {
  return impl(*this).numa_node();
}

void execution_stream::join() {
  impl(*this).finish(detail::request_join, "join");
}

void execution_stream::stop() {
  impl(*this).finish(detail::request_stop, "stop");
}

void execution_stream::request_exit() {
  detail::stream& s = impl(*this);
  if (s.is_primary()) {
    throw error(errc::primary_stream, "weft: request_exit is not allowed on the primary stream");
  }
  s.begin_stop();
}

void execution_stream::revive() {
  impl(*this).restart();
}

void execution_stream::free() {
  detail::stream& s = impl(*this);
  if (s.is_primary())
    throw error(errc::primary_stream, "weft: the primary stream is freed by finalize");
  // Room in the retired list first: out of memory, free() then fails with nothing done.
  rt().streams().reserve_retired();
  if (s.state() != stream_state::terminated || s.thread_started()) join();
  detail::assert_invariant([&s] { return s.state() == stream_state::terminated; },
                           "a stream is freed only once it terminated");
  s.release_resources();
  rt().streams().retire(s.rank());
}

void execution_stream::set_main_scheduler(std::unique_ptr<scheduler> next) {
  impl(*this).replace_scheduler(std::move(next));
}

scheduler& execution_stream::main_scheduler() const noexcept {
  return *impl(*this).installed_scheduler();
}

namespace {
pool& live_pool(pool* q, int rank) {
  if (!q) {
    // A freed stream (free(), or a shrink event) keeps its object until finalize, so a stale
    // reference reaches here instead of freed memory.
    throw error(errc::invalid_state,
                "weft: execution stream " + std::to_string(rank) + " has been freed");
  }
  return *q;
}
}  // namespace

pool& execution_stream::main_pool() const {
  return live_pool(impl(*this).first_pool(), impl(*this).rank());
}

pool& execution_stream::migration_pool() const {
  return live_pool(impl(*this).migration_target(), impl(*this).rank());
}

void execution_stream::adopt_orphaned_pools() {
  impl(*this).request(detail::request_adopt);
}

}  // namespace weft
