// SPDX-License-Identifier: Apache-2.0
// A program against the installed package: the public API, and a pool written against the
// extension API (weft/ext/) as a program writes its own, served by a stream of its own.
#include <weft/ext/ext.hpp>
#include <weft/weft.hpp>

#include <atomic>
#include <memory>
#include <vector>

namespace {

/// A spinlocked FIFO pool that counts the pushes made by its consumer stream.
class counting_pool final : public weft::pool {
 public:
  counting_pool() : pool(weft::access_mode::mpsc) {}
  weft::work_unit* pop() noexcept override {
    weft::ext::lock_guard g(lock_);
    weft::work_unit* u = list_.pop_front();
    if (u) size_.fetch_sub(1, std::memory_order_relaxed);
    return u;
  }
  std::size_t size() const noexcept override { return size_.load(std::memory_order_relaxed); }
  std::atomic<int> consumer_pushes{0};

 protected:
  void do_push(weft::work_unit* u) noexcept override {
    if (caller_is_consumer()) consumer_pushes.fetch_add(1, std::memory_order_relaxed);
    weft::ext::lock_guard g(lock_);
    list_.push_back(u, this);
    size_.fetch_add(1, std::memory_order_relaxed);
  }

 private:
  weft::spinlock lock_;
  weft::ext::unit_list list_;
  std::atomic<std::size_t> size_{0};
};

}  // namespace

int main() {
  weft::runtime rt;
  int x = 0;
  auto u = weft::ult::create([&] { x = 42; });
  u.join();
  if (x != 42) return 1;

  auto p = std::make_shared<counting_pool>();
  auto& s = weft::execution_stream::create(
      std::make_unique<weft::scheduler>(std::vector<std::shared_ptr<weft::pool>>{p}));
  bool on_stream = false;
  int rank = -1;
  // Pushed by the primary stream; its child is pushed by the consumer stream itself.
  weft::ult::create(*p, [&] {
    on_stream = weft::ext::on_stream();
    rank = weft::ext::current_rank();
    weft::ult::create(*p, [] {}).join();
  }).join();
  const int expected_rank = s.rank();
  s.free();
  return on_stream && rank == expected_rank && p->consumer_pushes.load() >= 1 ? 0 : 2;
}
