// SPDX-License-Identifier: Apache-2.0
// The machine as hwloc sees it: allowed CPUs, places for an affinity policy, thread binding.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "weft/config.hpp"

namespace weft::detail {

class topology {
 public:
  topology();
  ~topology();
  topology(const topology&) = delete;
  topology& operator=(const topology&) = delete;

  /// OS numbers of the CPUs in the process's affinity mask, in topology order.
  const std::vector<int>& allowed_cpus() const noexcept { return allowed_; }
  /// The places a policy yields (empty for kind::none). Explicit places must name allowed CPUs.
  std::vector<std::vector<int>> places(const affinity_policy& policy) const;
  /// Binds the calling thread to `cpus`; false (with errno-like reason in `why`) on failure.
  bool bind_current_thread(const std::vector<int>& cpus, std::string& why) const;
  /// The NUMA node of the first CPU of `cpus`, or -1 when unknown. Allocates nothing (libnuma's
  /// lookup exits the process when it runs out of memory).
  static int numa_node_of(const std::vector<int>& cpus) noexcept;
  /// Asks the kernel to place the pages of [memory, memory + bytes) on NUMA node `node` (as
  /// libnuma's numa_tonode_memory, which exits the process when it runs out of memory for its
  /// node mask). Best effort: false, changing nothing, when the kernel refuses.
  static bool place_on_node(void* memory, std::size_t bytes, int node) noexcept;

 private:
  struct hw;
  std::unique_ptr<hw> hw_;
  std::vector<int> allowed_;
  std::vector<int> scatter_order_;
};

}  // namespace weft::detail
