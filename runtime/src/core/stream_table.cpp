// SPDX-License-Identifier: Apache-2.0
#include "core/stream_table.hpp"

#include <algorithm>
#include <string>

#include "core/stream.hpp"
#include "platform/assert.hpp"
#include "weft/error.hpp"

namespace weft::detail {

int stream_table::lowest_free() const noexcept {
  int rank = 0;
  while (rank < static_cast<int>(slots_.size()) && slots_[static_cast<std::size_t>(rank)]) ++rank;
  return rank;
}

int stream_table::check_free(int rank) const {
  if (rank < static_cast<int>(slots_.size()) && slots_[static_cast<std::size_t>(rank)])
    throw error(errc::invalid_state, "weft: stream rank " + std::to_string(rank) + " is taken");
  return rank;
}

void stream_table::erase(int rank) noexcept {
  std::lock_guard lock(mutex_);
  assert_invariant(
      [this, rank] {
        return rank >= 0 && static_cast<std::size_t>(rank) < slots_.size() &&
               slots_[static_cast<std::size_t>(rank)] != nullptr;
      },
      "stream table: a stream is erased from the slot it was inserted in");
  slots_[static_cast<std::size_t>(rank)] = nullptr;
  const int before = live_.fetch_sub(1, std::memory_order_relaxed);
  assert_invariant([before] { return before > 0; },
                   "stream table: live() counts the streams in slots");
}

void stream_table::reserve_retired() {
  std::lock_guard lock(mutex_);
  if (retired_.size() == retired_.capacity())
    retired_.reserve(std::max<std::size_t>(8, 2 * retired_.size()));
}

void stream_table::retire(int rank) noexcept {
  std::lock_guard lock(mutex_);
  assert_invariant(
      [this, rank] {
        return rank > 0 && static_cast<std::size_t>(rank) < slots_.size() &&
               slots_[static_cast<std::size_t>(rank)] != nullptr;
      },
      "stream table: a secondary stream in its slot is retired, once");
  stream*& slot = slots_[static_cast<std::size_t>(rank)];
  assert_invariant([this] { return retired_.size() < retired_.capacity(); },
                   "stream table: room was reserved before a stream is retired");
  assert_invariant([slot] { return slot->state() == stream_state::terminated; },
                   "stream table: only a terminated stream is retired");
  retired_.push_back(slot);  // cannot fail: reserve_retired() made room
  slot = nullptr;
  const int before = live_.fetch_sub(1, std::memory_order_relaxed);
  assert_invariant([before] { return before > 0; },
                   "stream table: live() counts the streams in slots");
}

stream* stream_table::at(int rank) const noexcept {
  if (rank < 0) return nullptr;
  std::lock_guard lock(mutex_);
  return static_cast<std::size_t>(rank) < slots_.size() ? slots_[static_cast<std::size_t>(rank)]
                                                        : nullptr;
}

stream* stream_table::slot(std::size_t i, bool& end) const noexcept {
  std::lock_guard lock(mutex_);
  end = i >= slots_.size();
  return end ? nullptr : slots_[i];
}

int stream_table::count() const noexcept {
  std::lock_guard lock(mutex_);
  return static_cast<int>(
      std::count_if(slots_.begin(), slots_.end(), [](const stream* s) { return s != nullptr; }));
}

std::vector<int> stream_table::free_ranks(int n) const {
  std::vector<int> out;
  std::lock_guard lock(mutex_);
  for (int rank = 0; static_cast<int>(out.size()) < n; ++rank) {
    if (rank >= static_cast<int>(slots_.size()) || !slots_[static_cast<std::size_t>(rank)])
      out.push_back(rank);
  }
  return out;
}

void stream_table::delete_all_but(const stream* keep) noexcept {
  std::lock_guard lock(mutex_);
  assert_invariant(
      [this] {
        return std::all_of(slots_.begin(), slots_.end(), [](const stream* s) {
          return !s || s->is_primary() || !s->thread_started();
        });
      },
      "stream table: streams are deleted only once their threads were joined");
  for (stream* s : slots_)
    if (s != keep) delete s;
  for (stream* s : retired_) delete s;
  slots_.clear();
  retired_.clear();
  live_.store(0, std::memory_order_relaxed);
}

}  // namespace weft::detail
