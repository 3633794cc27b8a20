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
  return create(make_scheduler(rt().cfg.scheduler));
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
  detail::stream* s;
  {
    std::lock_guard lock(r.streams_mutex);
    int rank = 0;
    if (wanted_rank < 0) {  // -1 from create(sched): the lowest free rank
      while (rank < static_cast<int>(r.streams.size()) && r.streams[static_cast<std::size_t>(rank)])
        ++rank;
    } else {
      rank = wanted_rank;
      if (rank < static_cast<int>(r.streams.size()) && r.streams[static_cast<std::size_t>(rank)])
        throw error(errc::invalid_state, "weft: stream rank " + std::to_string(rank) + " is taken");
    }
    std::vector<int> cpus = detail::place_of(rank);
    const int node = detail::topology::numa_node_of(cpus);
    // The slot first: out of memory, no stream object is left without an owner.
    if (rank >= static_cast<int>(r.streams.size()))
      r.streams.resize(static_cast<std::size_t>(rank) + 1, nullptr);
    s = new detail::stream(rank, false, std::move(main_scheduler), std::move(cpus), node);
    r.streams[static_cast<std::size_t>(rank)] = s;
  }
  s->attach_pools();
  try {
    s->start();
  } catch (...) {
    s->shut_down_scheduling();
    std::lock_guard lock(r.streams_mutex);
    r.streams[static_cast<std::size_t>(s->rank_)] = nullptr;
    delete s;
    throw;
  }
  return *s;
}

execution_stream* execution_stream::self() noexcept {
  return detail::current_stream();
}

execution_stream& execution_stream::primary() {
  return *rt().primary;
}

execution_stream* execution_stream::by_rank(int rank) noexcept {
  if (!detail::g_runtime || rank < 0) return nullptr;
  std::lock_guard lock(detail::g_runtime->streams_mutex);
  auto& v = detail::g_runtime->streams;
  return static_cast<std::size_t>(rank) < v.size() ? v[static_cast<std::size_t>(rank)] : nullptr;
}

int execution_stream::count() noexcept {
  if (!detail::g_runtime) return 0;
  std::lock_guard lock(detail::g_runtime->streams_mutex);
  int n = 0;
  for (auto* s : detail::g_runtime->streams) n += s != nullptr;
  return n;
}

int execution_stream::rank() const noexcept {
  return impl(*this).rank_;
}

bool execution_stream::is_primary() const noexcept {
  return impl(*this).primary_;
}

bool execution_stream::is_parked() const noexcept {
  return impl(*this).is_parked();
}

std::uint64_t execution_stream::times_parked() const noexcept {
  return impl(*this).park_.count();
}

stream_state execution_stream::state() const noexcept {
  return static_cast<stream_state>(impl(*this).state_.load(std::memory_order_acquire));
}

const std::vector<int>& execution_stream::cpus() const noexcept {
  return impl(*this).cpus_;
}

int execution_stream::numa_node() const noexcept {
  return impl(*this).node_;
}

namespace {
void finish(detail::stream& s, std::uint32_t request, const char* what) {
  if (s.primary_) {
    throw error(errc::primary_stream,
                std::string("weft: ") + what + " is not allowed on the primary stream");
  }
  if (detail::current_stream() == &s) {
    throw error(errc::invalid_state,
                std::string("weft: a stream cannot ") + what + " itself from one of its units");
  }
  if (s.state() != stream_state::terminated) {
    s.state_.store(static_cast<std::uint32_t>(stream_state::terminating),
                   std::memory_order_release);
    s.request(request);
  }
  s.wait_terminated();
}
}  // namespace

void execution_stream::join() {
  finish(impl(*this), detail::request_join, "join");
}

void execution_stream::stop() {
  finish(impl(*this), detail::request_stop, "stop");
}

void execution_stream::request_exit() {
  detail::stream& s = impl(*this);
  if (s.primary_) {
    throw error(errc::primary_stream, "weft: request_exit is not allowed on the primary stream");
  }
  if (s.state() == stream_state::terminated) return;
  s.state_.store(static_cast<std::uint32_t>(stream_state::terminating), std::memory_order_release);
  s.request(detail::request_stop);
}

void execution_stream::revive() {
  detail::stream& s = impl(*this);
  if (s.state() != stream_state::terminated || s.thread_started_) {
    throw error(errc::invalid_state, "weft: only a joined or stopped stream can be revived");
  }
  s.requests_.store(0, std::memory_order_release);
  detail::assert_invariant(
      [&s] { return s.inbox_.closed(); },
      "invariant 11: the inbox of a terminated stream is closed until its revival");
  s.inbox_.reopen();
  s.attach_pools();
  s.start();
}

void execution_stream::free() {
  detail::stream& s = impl(*this);
  if (s.primary_)
    throw error(errc::primary_stream, "weft: the primary stream is freed by finalize");
  {
    // Room in the parking list first: out of memory, free() then fails with nothing done.
    std::lock_guard lock(rt().streams_mutex);
    auto& parked = rt().freed_streams;
    if (parked.size() == parked.capacity())
      parked.reserve(std::max<std::size_t>(8, 2 * parked.size()));
  }
  if (s.state() != stream_state::terminated || s.thread_started_) join();
  s.release_resources();
  std::lock_guard lock(rt().streams_mutex);
  rt().streams[static_cast<std::size_t>(s.rank_)] = nullptr;
  rt().freed_streams.push_back(&s);  // cannot fail: room was made above
}

void execution_stream::set_main_scheduler(std::unique_ptr<scheduler> next) {
  detail::stream& s = impl(*this);
  if (!next) throw error(errc::invalid_state, "weft: set_main_scheduler needs a scheduler");
  if (next->stream_ || next->stacked_)
    throw error(errc::invalid_state, "weft: the scheduler already runs on a stream");
  if (s.state() == stream_state::terminated && !s.primary_) {
    // Not running: swap now; the pools are attached when the stream is revived.
    std::lock_guard lock(rt().orphan_mutex);
    s.sched_->stream_ = nullptr;
    for (const auto& p : s.sched_->pools()) {
      if (std::find(next->pools().begin(), next->pools().end(), p) == next->pools().end() &&
          !p->empty()) {
        next->pools_.push_back(p);
      }
    }
    s.sched_ = std::move(next);
    s.sched_->stream_ = &s;
    s.main_pool_.store(s.sched_->pools().front().get(), std::memory_order_release);
    s.migration_pool_.store(&s.sched_->migration_pool(), std::memory_order_release);
    return;
  }
  std::lock_guard lock(s.request_mutex_);
  if (s.next_sched_) {
    // A replacement that never got installed: its pools may hold work already, so the newer
    // scheduler takes them on.
    for (const auto& p : s.next_sched_->pools()) {
      if (std::find(next->pools().begin(), next->pools().end(), p) == next->pools().end()) {
        next->pools_.push_back(p);
      }
    }
  }
  s.next_sched_ = std::move(next);
  s.request(detail::request_replace);
}

scheduler& execution_stream::main_scheduler() const noexcept {
  return *impl(*this).sched_;
}

namespace {
pool& live_pool(const std::atomic<pool*>& p, int rank) {
  pool* q = p.load(std::memory_order_acquire);
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
  return live_pool(impl(*this).main_pool_, impl(*this).rank_);
}

pool& execution_stream::migration_pool() const {
  return live_pool(impl(*this).migration_pool_, impl(*this).rank_);
}

void execution_stream::adopt_orphaned_pools() {
  impl(*this).request(detail::request_adopt);
}

}  // namespace weft
