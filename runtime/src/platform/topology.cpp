// SPDX-License-Identifier: Apache-2.0
#include "platform/topology.hpp"

#include <hwloc.h>
#include <numa.h>
#include <numaif.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "platform/assert.hpp"
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
  // The calling thread runs on some CPU of its mask, and both orders list each allowed CPU once.
  assert_invariant(
      [this] { return !allowed_.empty() && scatter_order_.size() == allowed_.size(); },
      "topology: the scatter order is a permutation of the allowed CPUs, at least one");
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
            // The policy may come from WEFT_AFFINITY or from code (parsed under a label of the
            // program's): the field's name fits both.
            throw error(errc::invalid_config, "weft: affinity: a place names CPU " +
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
  // sched_setaffinity rather than hwloc_set_cpubind, which allocates a CPU set of its own and
  // writes to it unchecked when that allocation fails. A set on the stack covers CPU_SETSIZE
  // CPUs; a larger one is allocated and checked.
  // From places(): allowed CPUs, or parsed ones that places() found in the mask.
  assert_invariant(
      [&cpus] { return std::all_of(cpus.begin(), cpus.end(), [](int c) { return c >= 0; }); },
      "topology: a thread is bound to CPU numbers, none negative");
  const int top = cpus.empty() ? 0 : *std::max_element(cpus.begin(), cpus.end());
  cpu_set_t fixed;
  cpu_set_t* set = &fixed;
  std::size_t size = sizeof fixed;
  if (top >= CPU_SETSIZE) {
    set = CPU_ALLOC(static_cast<std::size_t>(top) + 1);
    if (!set) {
      why = std::strerror(ENOMEM);
      return false;
    }
    size = CPU_ALLOC_SIZE(static_cast<std::size_t>(top) + 1);
  }
  CPU_ZERO_S(size, set);
  for (int c : cpus) CPU_SET_S(static_cast<std::size_t>(c), size, set);
  const int rc = sched_setaffinity(0, size, set);
  const int err = errno;
  if (set != &fixed) CPU_FREE(set);
  if (rc != 0) why = std::strerror(err);
  return rc == 0;
}

int topology::numa_node_of(const std::vector<int>& cpus) noexcept {
  if (cpus.empty() || numa_available() < 0) return -1;
  try {
    // The topology hwloc loaded at the first init; PUs record their node set (OS node numbers).
    hwloc_obj_t pu =
        hwloc_get_pu_obj_by_os_index(machine_topology(), static_cast<unsigned>(cpus.front()));
    if (!pu || !pu->nodeset) return -1;
    return hwloc_bitmap_first(pu->nodeset);  // -1 for an empty set
  } catch (...) {
    return -1;
  }
}

bool topology::place_on_node(void* memory, std::size_t bytes, int node) noexcept {
  constexpr int max_nodes = 1024;
  constexpr int word_bits = sizeof(unsigned long) * CHAR_BIT;
  if (node < 0 || node >= max_nodes) return false;
  assert_invariant(
      [memory] {
        return reinterpret_cast<std::uintptr_t>(memory) %
                   static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE)) ==
               0;
      },
      "topology: memory placed on a node starts on a page (mbind needs it; slabs are mappings)");
  std::array<unsigned long, max_nodes / word_bits> mask{};
  mask[static_cast<std::size_t>(node / word_bits)] = 1UL << (node % word_bits);
  // maxnode counts one bit more than the mask holds, as libnuma passes it (the kernel drops one).
  return ::syscall(SYS_mbind, memory, bytes, MPOL_BIND, mask.data(), max_nodes + 1, 0) == 0;
}

}  // namespace weft::detail
