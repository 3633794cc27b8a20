// SPDX-License-Identifier: Apache-2.0
#include "weft/schedulers/randws_scheduler.hpp"

#include <algorithm>

#include "weft/error.hpp"
#include "weft/ext/ext.hpp"

namespace weft {

std::shared_ptr<randws_group> randws_group::shared() {
  // Leaked on purpose: a scheduler may be destroyed during static destruction.
  static auto* mutex = new std::mutex;
  static auto* current = new std::weak_ptr<randws_group>;
  std::lock_guard lock(*mutex);
  std::shared_ptr<randws_group> g = current->lock();
  if (!g) {
    g = std::make_shared<randws_group>();
    *current = g;
  }
  return g;
}

void randws_group::enlist(const std::shared_ptr<ws_pool>& p) {
  std::lock_guard lock(mutex_);
  std::erase_if(pools_, [](const std::weak_ptr<ws_pool>& w) { return w.expired(); });
  pools_.push_back(p);
  version_.fetch_add(1, std::memory_order_acq_rel);
}

std::vector<std::shared_ptr<ws_pool>> randws_group::pools() const {
  std::lock_guard lock(mutex_);
  std::vector<std::shared_ptr<ws_pool>> out;
  out.reserve(pools_.size());
  for (const auto& w : pools_)
    if (auto p = w.lock()) out.push_back(std::move(p));
  return out;
}

namespace {

std::shared_ptr<ws_pool> checked(std::shared_ptr<randws_group>& g) {
  if (!g) throw error(errc::invalid_config, "weft: randws_scheduler needs a group");
  return make_ws_pool();
}

}  // namespace

randws_scheduler::randws_scheduler(std::shared_ptr<randws_group> group, const idle_policy& idle,
                                   std::size_t steal_batch, std::chrono::nanoseconds steal_grace)
    : scheduler({checked(group)}),
      group_(std::move(group)),
      own_(std::static_pointer_cast<ws_pool>(pools().front())),
      batch_(std::max<std::size_t>(steal_batch, 1)),
      grace_(std::max(steal_grace, std::chrono::nanoseconds::zero())),
      rng_(reinterpret_cast<std::uintptr_t>(this) * 0x9E3779B97F4A7C15ull | 1) {
  set_idle_policy(idle);
  group_->enlist(own_);
}

pool& randws_scheduler::migration_pool() noexcept {
  if (has_stream()) own_->claim(stream());
  return *own_;
}

std::unique_ptr<randws_scheduler> randws_scheduler::in_shared_group() {
  return std::make_unique<randws_scheduler>(randws_group::shared());
}

void randws_scheduler::sync() {
  seen_version_ = group_->version();
  for (auto& p : group_->pools())
    if (p != own_) add_pool(std::move(p));  // false (ignored) when listed already
}

namespace {

/// Stolen units that ran less than this each, on average, did not pay for their move: a unit
/// that changes streams costs its descriptor's and its data's cache lines on the thief and a
/// cross-core completion for its joiner, a few hundred nanoseconds here.
constexpr std::chrono::nanoseconds worth_moving{1000};

}  // namespace

// The steal policy. A thief robs a running stream only of units the owner has left waiting for
// steal_grace() (the oldest one seen twice, that far apart, at the top of its pool): the unit a
// stream pushes just before it joins it, and the short fan-outs a stream creates and joins at
// once, stay with their creator, their data in its cache and no cross-core wake-up, instead of
// being pulled away by an idle peer every time. Go's scheduler applies such a backoff (3 us) to
// the unit a running P readied last; here it applies to the oldest unit, the one a thief takes
// first, and lasts longer (30 us by default) because a join can be late for reasons of the
// machine's: a first touch of a fresh stack page between a push and its join costs about 4 us on
// the 2-core test VM, and with 3 us, then 10 us, chains of joins were still robbed every few
// dozen levels. A theft takes up to half of the peer's units (steal_batch() at most). When what
// it took ran for worth_moving per unit on average and the peer still had more, the peer is
// ahead of its work (a fan-out of real work, the top of a recursion) and the next theft from it
// skips the grace; units too small to pay for their move are taken one batch per grace period
// at most, so an idle thief costs the stream that makes them little.
bool randws_scheduler::ripe(sighting& s, std::uint64_t stamp) const noexcept {
  if (s.backlog || grace_.count() == 0) return true;
  const auto now = std::chrono::steady_clock::now();
  if (s.stamp != stamp) {
    s.stamp = stamp;
    s.since = now;
    return false;
  }
  return now - s.since >= grace_;
}

void randws_scheduler::judge_last_theft() noexcept {
  // This stream has run dry since: what it took, and everything that made, has run or blocked.
  const auto busy = std::chrono::steady_clock::now() - last_.at;
  sightings_[last_.victim].backlog =
      last_.left_behind && busy >= worth_moving * static_cast<std::int64_t>(last_.taken);
  last_.taken = 0;
}

work_unit* randws_scheduler::steal() {
  const auto& ps = pools();
  const std::size_t n = ps.size();
  if (n <= 1 || victims_.size() != n) [[unlikely]]
    return nullptr;  // indexed in on_pools_changed(), which follows every change of pools()
  if (last_.taken != 0) judge_last_theft();
  // xorshift64
  rng_ ^= rng_ << 13;
  rng_ ^= rng_ >> 7;
  rng_ ^= rng_ << 17;
  const std::size_t others = n - 1;
  const std::size_t start = static_cast<std::size_t>(rng_ % others);
  for (std::size_t k = 0; k < others; ++k) {
    const std::size_t i = 1 + (start + k) % others;
    if (ws_pool* v = victims_[i]) {
      sighting& seen = sightings_[i];
      // Stamp 0: the array was empty; the side lane holds units other threads pushed there,
      // which the owner has no reason to keep. Only that lane, then: a unit pushed into the
      // array since the look is as young as can be.
      const std::uint64_t stamp = v->oldest_stamp();
      if (stamp != 0 && !ripe(seen, stamp)) continue;
      const bool judged = stamp != 0 && grace_.count() != 0;
      std::size_t taken = 0;
      ext::note_steal_attempt();
      work_unit* u = nullptr;
      if (stamp == 0 && grace_.count() != 0) {
        u = v->steal_pushed();
        taken = u ? 1 : 0;
      } else {
        u = v->steal_into(*own_, batch_, &taken);
      }
      seen.backlog = false;
      if (u) {
        if (judged) last_ = {i, taken, v->oldest_stamp() != 0, std::chrono::steady_clock::now()};
        ext::note_stolen(u, taken);
        steals_.fetch_add(taken, std::memory_order_relaxed);
        group_->steals_.fetch_add(taken, std::memory_order_relaxed);
        return u;
      }
    } else if (work_unit* u = ps[i]->pop()) {
      return u;
    }
  }
  return nullptr;
}

work_unit* randws_scheduler::pick_next() noexcept {
  if (work_unit* u = own_->pop()) return u;
  return steal();
}

work_unit* randws_scheduler::pick_after_yield(work_unit* self, pool& home) noexcept {
  if (&home == own_.get()) [[likely]]
    return push_pop_yielder(home, self);
  return scheduler::pick_after_yield(self, home);
}

void randws_scheduler::on_start() {
  own_->claim(stream());
  sync();
  on_pools_changed();  // pools() may have changed between two runs (attachment, replacement)
  // Peers learn of this stream's pool at their next event check, and one in a deep park sleeps
  // through the pushes into it: wake those, so that they can steal from it (each takes one look,
  // adds the pool and parks again).
  for (const auto& p : pools()) {
    if (p == own_) continue;
    execution_stream* o = p->owner();
    if (o && o != &stream()) ext::wake_if_deep_parked(*o);
  }
}

void randws_scheduler::on_stop() noexcept {
  // Whatever ends the loop, yielders queued where only this stream looks become everyone's.
  own_->publish_private();
}

void randws_scheduler::on_event_check() {
  if (group_->version() != seen_version_) sync();
}

void randws_scheduler::on_pools_changed() {
  const auto& ps = pools();
  victims_.resize(ps.size());
  for (std::size_t i = 0; i < ps.size(); ++i) victims_[i] = dynamic_cast<ws_pool*>(ps[i].get());
  // Indexes may now name other pools: start every peer's age afresh.
  sightings_.assign(ps.size(), sighting{});
  last_.taken = 0;
}

}  // namespace weft
