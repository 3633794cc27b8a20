// SPDX-License-Identifier: Apache-2.0
#include "topology.hpp"

#include <hwloc.h>
#include <numa.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "weft/error.hpp"

namespace weft::detail {

struct topology::hw {
  hwloc_topology_t topo = nullptr;  // machine_topology()'s, not owned
};

namespace {

/// The machine's hwloc topology, loaded by the first init of the process and destroyed at exit.
/// hwloc loads its plugins (PCI, OpenCL, GL, libxml2 and their libraries) whenever a topology is
/// created while none exists and unloads them with the last one, so a topology per runtime made
/// every init+finalize pay for it: 11.5 of its 12 ms on the machine this was written on, 3.7 ms
/// with the topology kept. Read-only after loading, which hwloc allows from any thread; the
/// process's affinity mask, which can change between runtimes, is read at every init.
hwloc_topology_t machine_topology() {
  struct holder {
    hwloc_topology_t topo = nullptr;
    ~holder() {
      if (topo) hwloc_topology_destroy(topo);
    }
  };
  static holder h;
  static std::mutex m;
  std::lock_guard lock(m);
  if (!h.topo) {
    hwloc_topology_t t = nullptr;
    if (hwloc_topology_init(&t) != 0) {
      throw error(errc::resource, "weft: hwloc cannot load the machine topology");
    }
    if (hwloc_topology_load(t) != 0) {
      hwloc_topology_destroy(t);
      throw error(errc::resource, "weft: hwloc cannot load the machine topology");
    }
    h.topo = t;
  }
  return h.topo;
}

}  // namespace

topology::topology() : hw_(std::make_unique<hw>()) {
  hw_->topo = machine_topology();
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof mask, &mask) != 0) {
    throw error(errc::resource, "weft: sched_getaffinity failed");
  }
  // Allowed PUs in topology order; scatter order takes one PU of each core in turn, cores of
  // different packages interleaved, before a second PU of any core.
  struct pu_info {
    int os;
    unsigned package, core_in_package, pu_in_core;
  };
  std::vector<pu_info> pus;
  const int npu = hwloc_get_nbobjs_by_type(hw_->topo, HWLOC_OBJ_PU);
  std::map<hwloc_obj_t, unsigned> cores_seen_in_package, core_rank, pus_seen_in_core;
  for (int i = 0; i < npu; ++i) {
    hwloc_obj_t pu = hwloc_get_obj_by_type(hw_->topo, HWLOC_OBJ_PU, static_cast<unsigned>(i));
    const int os = static_cast<int>(pu->os_index);
    if (os < 0 || os >= CPU_SETSIZE || !CPU_ISSET(os, &mask)) continue;
    hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(hw_->topo, HWLOC_OBJ_CORE, pu);
    hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(hw_->topo, HWLOC_OBJ_PACKAGE, pu);
    if (!core) core = pu;
    if (!core_rank.count(core)) core_rank[core] = cores_seen_in_package[pkg]++;
    pus.push_back({os, pkg ? pkg->logical_index : 0u, core_rank[core], pus_seen_in_core[core]++});
    allowed_.push_back(os);
  }
  if (allowed_.empty()) {
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &mask)) allowed_.push_back(c);
  }
  std::stable_sort(pus.begin(), pus.end(), [](const pu_info& a, const pu_info& b) {
    if (a.pu_in_core != b.pu_in_core) return a.pu_in_core < b.pu_in_core;
    if (a.core_in_package != b.core_in_package) return a.core_in_package < b.core_in_package;
    return a.package < b.package;
  });
  for (const pu_info& p : pus) scatter_order_.push_back(p.os);
  if (scatter_order_.empty()) scatter_order_ = allowed_;
}

topology::~topology() = default;

std::vector<std::vector<int>> topology::places(const affinity_policy& policy) const {
  std::vector<std::vector<int>> out;
  switch (policy.how) {
    case affinity_policy::kind::none:
      break;
    case affinity_policy::kind::compact:
      for (int c : allowed_) out.push_back({c});
      break;
    case affinity_policy::kind::scatter:
      for (int c : scatter_order_) out.push_back({c});
      break;
    case affinity_policy::kind::places:
      for (const auto& place : policy.places) {
        for (int c : place) {
          if (std::find(allowed_.begin(), allowed_.end(), c) == allowed_.end()) {
            throw error(errc::invalid_config, "weft: WEFT_AFFINITY place names CPU " +
                                                  std::to_string(c) +
                                                  ", which is not in the process's affinity mask");
          }
        }
        out.push_back(place);
      }
      break;
  }
  return out;
}

bool topology::bind_current_thread(const std::vector<int>& cpus, std::string& why) const {
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  for (int c : cpus) hwloc_bitmap_set(set, static_cast<unsigned>(c));
  const int rc = hwloc_set_cpubind(hw_->topo, set, HWLOC_CPUBIND_THREAD);
  const int err = errno;
  hwloc_bitmap_free(set);
  if (rc != 0) why = std::strerror(err);
  return rc == 0;
}

int topology::numa_node_of(const std::vector<int>& cpus) noexcept {
  if (cpus.empty() || numa_available() < 0) return -1;
  return numa_node_of_cpu(cpus.front());
}

}  // namespace weft::detail
