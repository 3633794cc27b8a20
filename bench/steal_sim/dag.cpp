// SPDX-License-Identifier: Apache-2.0
// The workload generators of dag.hpp.
#include "dag.hpp"

#include <deque>
#include <stdexcept>

#include "rng.hpp"

namespace weft::steal_sim {

void dag::check() const {
  const auto n = static_cast<std::int64_t>(units.size());
  std::vector<std::int64_t> spawner(units.size(), -1);
  std::vector<int> joins(units.size(), 0);
  const auto bad = [&](const std::string& why) {
    throw std::invalid_argument("steal_sim: workload " + name + ": " + why);
  };
  for (std::int64_t r : roots) {
    if (r < 0 || r >= n) bad("a root names no unit");
    spawner[static_cast<std::size_t>(r)] = -2;
  }
  if (root_worker.size() != roots.size()) bad("roots and root workers differ in number");
  for (std::int64_t u = 0; u < n; ++u) {
    for (const step& s : units[static_cast<std::size_t>(u)].steps) {
      if (s.what == step::op::work) {
        if (s.arg < 0) bad("a negative work time");
        continue;
      }
      if (s.arg < 0 || s.arg >= n) bad("a step names no unit");
      const auto c = static_cast<std::size_t>(s.arg);
      if (s.what == step::op::spawn) {
        if (spawner[c] != -1) bad("a unit is spawned twice, or a root is spawned");
        spawner[c] = u;
      } else {
        if (spawner[c] != u) bad("a unit joins what it has not spawned (yet)");
        if (++joins[c] != 1) bad("a unit is joined twice");
      }
    }
  }
  for (std::size_t c = 0; c < units.size(); ++c) {
    if (spawner[c] == -1) bad("a unit is neither a root nor spawned");
    if (spawner[c] >= 0 && joins[c] != 1) bad("a spawned unit is never joined");
  }
}

sim_ns dag::total_work() const noexcept {
  sim_ns sum = 0;
  for (const unit& u : units)
    for (const step& s : u.steps)
      if (s.what == step::op::work) sum += s.arg;
  return sum;
}

work_time constant_work(sim_ns ns) {
  return [ns](std::int64_t) { return ns; };
}

namespace {

/// Appends a unit and returns its index.
std::int64_t add_unit(dag& d) {
  d.units.emplace_back();
  return static_cast<std::int64_t>(d.units.size()) - 1;
}

/// fib(k) as a unit; returns its index.
std::int64_t build_fib(dag& d, int k, const work_time& leaf) {
  const std::int64_t self = add_unit(d);
  std::vector<step> steps;
  std::vector<std::int64_t> children;
  int j = k;
  for (; j >= 2; j -= 2) {  // spawn fib(j-1), then fib(j-2) inline
    const std::int64_t c = build_fib(d, j - 1, leaf);
    children.push_back(c);
    steps.push_back({step::op::spawn, c});
  }
  steps.push_back({step::op::work, leaf(self)});
  for (auto it = children.rbegin(); it != children.rend(); ++it)
    steps.push_back({step::op::join, *it});
  d.units[static_cast<std::size_t>(self)].steps = std::move(steps);
  return self;
}

/// A unit that computes, spawns `width` fresh units and joins them in creation order.
std::int64_t add_fan_out(dag& d, std::int64_t width, const work_time& body) {
  const std::int64_t self = add_unit(d);
  std::vector<step> steps{{step::op::work, body(self)}};
  const std::int64_t first = self + 1;
  for (std::int64_t i = 0; i < width; ++i) {
    const std::int64_t c = add_unit(d);
    d.units[static_cast<std::size_t>(c)].steps = {{step::op::work, body(c)}};
    steps.push_back({step::op::spawn, c});
  }
  for (std::int64_t i = 0; i < width; ++i) steps.push_back({step::op::join, first + i});
  d.units[static_cast<std::size_t>(self)].steps = std::move(steps);
  return self;
}

void require(bool ok, const char* what) {
  if (!ok) throw std::invalid_argument(std::string("steal_sim: ") + what);
}

}  // namespace

dag make_fib(int n, const work_time& leaf) {
  require(n >= 0 && n <= 40, "fib: n must be in [0, 40]");
  dag d{"fib(" + std::to_string(n) + ")", {}, {}, {0}};
  d.roots.push_back(build_fib(d, n, leaf));
  return d;
}

dag make_chain(std::int64_t length, const work_time& body) {
  require(length >= 1, "chain: the length must be at least 1");
  dag d{"chain(" + std::to_string(length) + ")", {}, {0}, {0}};
  d.units.resize(static_cast<std::size_t>(length));
  for (std::int64_t i = 0; i < length; ++i) {
    auto& steps = d.units[static_cast<std::size_t>(i)].steps;
    steps.push_back({step::op::work, body(i)});
    if (i + 1 < length) {
      steps.push_back({step::op::spawn, i + 1});
      steps.push_back({step::op::join, i + 1});
    }
  }
  return d;
}

dag make_fan_out(std::int64_t width, const work_time& body) {
  require(width >= 0, "fan-out: the width must not be negative");
  dag d{"fan-out(" + std::to_string(width) + ")", {}, {}, {0}};
  d.roots.push_back(add_fan_out(d, width, body));
  return d;
}

dag make_phases(std::int64_t steps, std::int64_t width, const work_time& body) {
  require(steps >= 0 && width >= 0, "phases: steps and width must not be negative");
  dag d{"phases(" + std::to_string(steps) + "x" + std::to_string(width) + ")", {}, {0}, {0}};
  d.units.resize(static_cast<std::size_t>(1 + steps * width));
  std::vector<step> root{{step::op::work, body(0)}};
  std::int64_t next = 1;
  for (std::int64_t s = 0; s < steps; ++s) {
    for (std::int64_t i = 0; i < width; ++i) {
      d.units[static_cast<std::size_t>(next + i)].steps = {{step::op::work, body(next + i)}};
      root.push_back({step::op::spawn, next + i});
    }
    for (std::int64_t i = 0; i < width; ++i) root.push_back({step::op::join, next + i});
    next += width;
  }
  d.units[0].steps = std::move(root);
  return d;
}

dag make_per_worker_fan_out(int workers, std::int64_t width, const work_time& body) {
  require(workers >= 1 && width >= 0, "per-worker fan-out: workers >= 1, width >= 0");
  dag d{"per-worker-fan-out(" + std::to_string(width) + ")", {}, {}, {}};
  for (int w = 0; w < workers; ++w) {
    d.roots.push_back(add_fan_out(d, width, body));
    d.root_worker.push_back(w);
  }
  return d;
}

dag make_uts(int root_children, int branching, double probability, std::uint64_t seed,
             std::int64_t max_units, const work_time& body) {
  require(root_children >= 0 && branching >= 0 && probability >= 0 && probability <= 1,
          "uts: root children and branching >= 0, probability in [0, 1]");
  require(branching * probability < 1, "uts: branching * probability must be below 1");
  dag d{"uts(" + std::to_string(root_children) + "," + std::to_string(branching) + "," +
            std::to_string(probability).substr(0, 4) + ")",
        {},
        {0},
        {0}};
  splitmix64 rng(seed);
  std::deque<std::int64_t> todo{add_unit(d)};
  bool root = true;
  while (!todo.empty()) {
    const std::int64_t self = todo.front();
    todo.pop_front();
    const int kids = root ? root_children : (rng.unit_interval() < probability ? branching : 0);
    root = false;
    require(static_cast<std::int64_t>(d.units.size()) + kids <= max_units,
            "uts: the tree passes the unit limit (another seed, or a larger limit)");
    std::vector<step> steps{{step::op::work, body(self)}};
    std::vector<std::int64_t> children;
    for (int i = 0; i < kids; ++i) {
      children.push_back(add_unit(d));
      steps.push_back({step::op::spawn, children.back()});
      todo.push_back(children.back());
    }
    for (std::int64_t c : children) steps.push_back({step::op::join, c});
    d.units[static_cast<std::size_t>(self)].steps = std::move(steps);
  }
  return d;
}

}  // namespace weft::steal_sim
