// The runtime's view of a pool's bookkeeping (producer, consumer, attachment count).
#pragma once

#include "weft/pool.hpp"

namespace weft::detail {

class pool_access {
 public:
  static std::atomic<stream*>& producer(pool& p) noexcept { return p.producer_; }
  static std::atomic<stream*>& consumer(pool& p) noexcept { return p.consumer_; }
  static std::atomic<int>& attached(pool& p) noexcept { return p.attached_; }
};

}  // namespace weft::detail
