// SPDX-License-Identifier: Apache-2.0
// The machine as hwloc sees it: allowed CPUs, places for an affinity policy, thread binding.
#pragma once

#include <memory>
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
  /// The NUMA node of the first CPU of `cpus`, or -1 when unknown.
  static int numa_node_of(const std::vector<int>& cpus) noexcept;

 private:
  struct hw;
  std::unique_ptr<hw> hw_;
  std::vector<int> allowed_;
  std::vector<int> scatter_order_;
};

}  // namespace weft::detail
