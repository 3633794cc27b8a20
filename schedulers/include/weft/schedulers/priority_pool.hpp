// SPDX-License-Identifier: Apache-2.0
// The stock priority pool: FIFO per priority, highest priority first.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "weft/pool.hpp"

namespace weft {

/// A pool with `levels` priorities, 0 (lowest) to levels() - 1 (highest). pop() returns the
/// oldest unit of the highest non-empty priority, so a unit queued at a higher priority always
/// comes out before every unit queued at a lower one. A pool cannot read a unit's fields, so
/// the priority is chosen by where the unit is pushed: at(p) is a companion pool (a "lane") whose
/// pushes land here at priority p; create units in at(p) (or migrate them there) and they come
/// back to priority p after every yield or wake-up, since the lane is their home pool. Pushes
/// into the priority pool itself go to default_priority().
///
/// Schedulers list the priority pool itself, not its lanes. One spinlock guards every level
/// (push, pop and remove() are O(1) and never allocate). The mode must be `mpsc` or `mpmc`
/// (lanes accept pushes from any thread); the lanes are `mpmc` pools. A lane's pop() takes from
/// its priority only.
class priority_pool final : public pool {
 public:
  priority_pool(unsigned levels, unsigned default_priority, access_mode mode = access_mode::mpmc);
  ~priority_pool() override;

  /// The lane of priority `p` (< levels()), valid as long as this pool.
  pool& at(unsigned p) const noexcept { return *lanes_[p]; }
  unsigned levels() const noexcept { return static_cast<unsigned>(lanes_.size()); }
  unsigned default_priority() const noexcept { return default_; }
  /// Units queued at priority `p` (may be stale).
  std::size_t size_at(unsigned p) const noexcept;

  work_unit* pop() noexcept override;
  bool remove(work_unit* u) noexcept override;
  std::size_t size() const noexcept override;

 protected:
  void do_push(work_unit* u) noexcept override;

 private:
  class lane;
  struct state;
  void push_at(work_unit* u, unsigned p) noexcept;
  work_unit* pop_at(unsigned p) noexcept;

  unsigned default_;
  std::unique_ptr<state> s_;
  std::vector<std::unique_ptr<pool>> lanes_;
};

/// A priority_pool of `levels` priorities whose own pushes go to `default_priority`.
std::shared_ptr<priority_pool> make_priority_pool(unsigned levels = 3,
                                                  unsigned default_priority = 1,
                                                  access_mode mode = access_mode::mpmc);

}  // namespace weft
