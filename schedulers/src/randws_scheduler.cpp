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
                                   std::size_t steal_batch)
    : scheduler({checked(group)}),
      group_(std::move(group)),
      own_(std::static_pointer_cast<ws_pool>(pools().front())),
      batch_(std::max<std::size_t>(steal_batch, 1)),
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

work_unit* randws_scheduler::steal() {
  const auto& ps = pools();
  const std::size_t n = ps.size();
  if (n <= 1 || victims_.size() != n) [[unlikely]]
    return nullptr;  // indexed in on_pools_changed(), which follows every change of pools()
  // xorshift64
  rng_ ^= rng_ << 13;
  rng_ ^= rng_ >> 7;
  rng_ ^= rng_ << 17;
  const std::size_t others = n - 1;
  const std::size_t start = static_cast<std::size_t>(rng_ % others);
  for (std::size_t k = 0; k < others; ++k) {
    const std::size_t i = 1 + (start + k) % others;
    if (ws_pool* v = victims_[i]) {
      std::size_t taken = 0;
      ext::note_steal_attempt();
      if (work_unit* u = v->steal_into(*own_, batch_, &taken)) {
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
}

}  // namespace weft
