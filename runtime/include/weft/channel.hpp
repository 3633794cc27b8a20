// SPDX-License-Identifier: Apache-2.0
// channel<T>: a bounded multi-producer multi-consumer queue of values, in the manner of Go's
// channels, for ULTs, tasklets and external threads.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <type_traits>
#include <utility>

#include "weft/detail/sync.hpp"
#include "weft/error.hpp"
#include "weft/spinlock.hpp"
#include "weft/wait_queue.hpp"

namespace weft {

/// Thrown by a send on a closed channel (also to senders blocked when close() is called).
class channel_closed : public error {
 public:
  channel_closed() : error(errc::invalid_state, "weft: send on a closed channel") {}
};

/// A FIFO of at most capacity() values. send() blocks while the channel is full; recv() blocks
/// while it is empty. Capacity 0 makes an unbuffered channel: each send() waits for a recv()
/// to take its value (a rendezvous), as in Go.
///
/// Order and fairness: values come out in the order they went in (a send that blocked counts
/// from the moment it blocked); blocked senders and blocked receivers are each served FIFO. A
/// value sent while a receiver waits goes straight to that receiver, not through the buffer.
///
/// close(): later sends, and senders blocked at that moment, throw channel_closed (their value
/// is not sent); receivers first drain the values already buffered, then get an empty optional.
/// close() is idempotent.
///
/// Blocking calls from a tasklet throw errc::tasklet_cannot_block when they would block; try_
/// forms never block. T must be nothrow move constructible: values are moved under the
/// channel's internal spinlock.
template <class T>
class channel {
  static_assert(std::is_nothrow_move_constructible_v<T>,
                "weft::channel<T> moves values under a spinlock: T's move must not throw");

 public:
  explicit channel(std::size_t capacity)
      : cap_(capacity), ring_(capacity ? new std::optional<T>[capacity] : nullptr) {}
  channel(const channel&) = delete;
  channel& operator=(const channel&) = delete;
  /// Waits for a send, recv or close still leaving the object: a party it handed a value to
  /// may destroy the channel at once (detail/sync.hpp, "Destruction safety"). Values still
  /// buffered are destroyed.
  ~channel() { lock_.wait_unlocked(); }

  /// Sends `v`, blocking while the channel is full (unbuffered: until a receiver takes it).
  void send(T&& v) { send_impl(v, nullptr, true); }
  void send(const T& v) {
    T copy(v);
    send_impl(copy, nullptr, true);
  }
  /// Sends `v` if that needs no waiting; false otherwise (`v` is then left untouched).
  bool try_send(T&& v) { return send_impl(v, nullptr, false); }
  bool try_send(const T& v) {
    T copy(v);
    return send_impl(copy, nullptr, false);
  }
  /// Sends `v` unless `d` passes first; false on timeout (`v` is then left untouched).
  template <class Rep, class Period>
  bool try_send_for(T&& v, const std::chrono::duration<Rep, Period>& d) {
    const auto deadline = detail::deadline_after(d);
    return send_impl(v, &deadline, true);
  }
  template <class Clock, class Duration>
  bool try_send_until(T&& v, const std::chrono::time_point<Clock, Duration>& t) {
    const auto deadline = detail::to_steady(t);
    return send_impl(v, &deadline, true);
  }

  /// The next value, blocking while the channel is empty; nullopt once closed and drained.
  std::optional<T> recv() { return recv_impl(nullptr, true); }
  /// The next value if one is there without waiting; nullopt otherwise (see closed()).
  std::optional<T> try_recv() { return recv_impl(nullptr, false); }
  /// The next value unless `d` passes first; nullopt on timeout or when closed and drained.
  template <class Rep, class Period>
  std::optional<T> try_recv_for(const std::chrono::duration<Rep, Period>& d) {
    const auto deadline = detail::deadline_after(d);
    return recv_impl(&deadline, true);
  }
  template <class Clock, class Duration>
  std::optional<T> try_recv_until(const std::chrono::time_point<Clock, Duration>& t) {
    const auto deadline = detail::to_steady(t);
    return recv_impl(&deadline, true);
  }

  /// Closes the channel and wakes every blocked sender and receiver.
  void close() noexcept {
    lock_.lock();
    closed_ = true;
    detail::wake_all_locked(senders_);
    detail::wake_all_locked(receivers_);
    lock_.unlock();
  }
  bool closed() const noexcept {
    std::lock_guard g(lock_);
    return closed_;
  }
  /// Buffered values (a snapshot).
  std::size_t size() const noexcept {
    std::lock_guard g(lock_);
    return count_;
  }
  std::size_t capacity() const noexcept { return cap_; }

 private:
  // waiter::tag of a blocked sender or receiver: whether its value was handed over. A waiter
  // woken without it (close(), or a wake-up meant for a waiter that timed out at that moment)
  // simply tries again.
  static constexpr std::uintptr_t pending = 0;
  static constexpr std::uintptr_t done = 1;

  bool send_impl(T& v, const detail::sync_clock::time_point* deadline, bool may_block) {
    for (;;) {
      lock_.lock();
      if (closed_) {
        lock_.unlock();
        throw channel_closed();
      }
      if (waiter* r = receivers_.front()) {
        // A receiver waits (so the buffer is empty): hand the value over. Write before take():
        // an external receiver may return as soon as it is taken. If r times out in between,
        // it still finds its value (tag) and take() wakes the next receiver, which retries.
        static_cast<std::optional<T>*>(r->data)->emplace(std::move(v));
        r->tag = done;
        wakeup wk = receivers_.take();
        lock_.unlock();
        wk();
        return true;
      }
      if (count_ < cap_) {
        ring_[(head_ + count_) % cap_].emplace(std::move(v));
        ++count_;
        lock_.unlock();
        return true;
      }
      if (!may_block) {
        lock_.unlock();
        return false;
      }
      waiter w;
      w.kind = wait_kind::channel;
      w.data = &v;
      const wait_status st = detail::wait_releasing(senders_, lock_, w, deadline);
      if (w.tag == done) return true;  // a receiver moved `v` out
      if (st == wait_status::timed_out) return false;
    }
  }

  std::optional<T> recv_impl(const detail::sync_clock::time_point* deadline, bool may_block) {
    for (;;) {
      lock_.lock();
      if (count_ > 0) {
        std::optional<T> out(std::move(*ring_[head_]));
        ring_[head_].reset();
        head_ = (head_ + 1) % cap_;
        --count_;
        wakeup wk;
        if (waiter* s = senders_.front()) {  // room now: the first blocked sender's value enters
          ring_[(head_ + count_) % cap_].emplace(std::move(*static_cast<T*>(s->data)));
          ++count_;
          s->tag = done;
          wk = senders_.take();
        }
        lock_.unlock();
        wk();
        return out;
      }
      if (waiter* s = senders_.front()) {  // unbuffered: take the value from the sender
        std::optional<T> out(std::move(*static_cast<T*>(s->data)));
        s->tag = done;
        wakeup wk = senders_.take();
        lock_.unlock();
        wk();
        return out;
      }
      if (closed_ || !may_block) {
        lock_.unlock();
        return std::nullopt;
      }
      std::optional<T> slot;
      waiter w;
      w.kind = wait_kind::channel;
      w.data = &slot;
      const wait_status st = detail::wait_releasing(receivers_, lock_, w, deadline);
      if (w.tag == done) return slot;
      if (st == wait_status::timed_out) return std::nullopt;
    }
  }

  const std::size_t cap_;
  std::unique_ptr<std::optional<T>[]> ring_;
  std::size_t head_ = 0;
  std::size_t count_ = 0;
  bool closed_ = false;
  mutable spinlock lock_;
  wait_queue senders_;
  wait_queue receivers_;
};

}  // namespace weft
