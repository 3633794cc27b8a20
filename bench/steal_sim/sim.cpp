// SPDX-License-Identifier: Apache-2.0
// The event loop of sim.hpp and the three policies' steal and idle steps.
#include "sim.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <deque>
#include <queue>
#include <stdexcept>
#include <string>

#include "rng.hpp"

namespace weft::steal_sim {

std::string_view policy_name(policy_kind p) noexcept {
  switch (p) {
    case policy_kind::randws:
      return "randws";
    case policy_kind::naive_one:
      return "naive-one";
    case policy_kind::naive_half:
      return "naive-half";
  }
  return "?";
}

sim_ns cost_model::probe_cost(int workers) const noexcept {
  const double doublings = std::log2(std::max(workers, 2) / 2.0);
  return probe + static_cast<sim_ns>(std::llround(static_cast<double>(probe) *
                                                  static_cast<double>(probe_growth_pct) / 100.0 *
                                                  doublings));
}

namespace {

constexpr sim_ns livelock_limit = 1'000'000'000'000;  // 1000 simulated seconds

struct unit_state {
  std::size_t pc = 0;
  int last_worker = -1;      // where it last ran or was created: a run elsewhere migrates it
  int home = -1;             // the worker whose side lane it returns to when a join wakes it
  std::int64_t joiner = -1;  // the unit blocked joining this one
};

struct queued {
  std::int64_t unit;
  std::uint64_t stamp;  // push order, as ws_pool's push stamps
};

/// randws: what a thief last saw of a victim (randws_scheduler::sighting).
struct sighting {
  std::uint64_t stamp = 0;
  sim_ns since = 0;
  bool backlog = false;
};

struct worker {
  std::deque<queued> array;       // front: oldest (thieves' end); back: newest (owner's end)
  std::deque<std::int64_t> side;  // units other workers pushed (woken joiners), FIFO
  std::int64_t current = -1;
  sim_ns now = 0;
  std::uint64_t token = 0;  // events carrying an older token are stale
  int idle_rounds = 0;
  std::uint64_t pops = 0;
  bool spinning = false;
  bool parked = false;
  bool probed = false;  // a peer looked at the deque since the owner last touched it
  sim_ns doze = 0;
  std::vector<sighting> sightings;
  struct {
    int victim = 0;
    std::int64_t taken = 0;
    bool left_behind = false;
    sim_ns at = 0;
  } last_theft;
};

struct event {
  sim_ns at;
  std::uint64_t seq;
  int worker;
  std::uint64_t token;
  bool operator>(const event& o) const noexcept { return at != o.at ? at > o.at : seq > o.seq; }
};

class simulation {
 public:
  simulation(const dag& d, policy_kind p, const cost_model& c, int workers, std::uint64_t seed)
      : d_(d), policy_(p), c_(c), w_(static_cast<std::size_t>(workers)), rng_(seed) {
    units_.resize(d.units.size());
    r_.ended.assign(d.units.size(), 0);
    probe_ = c.probe_cost(workers);
    for (auto& w : w_) w.sightings.resize(w_.size());
  }

  sim_result run() {
    for (std::size_t i = 0; i < d_.roots.size(); ++i) {
      const int at = d_.root_worker[i] % static_cast<int>(w_.size());
      const std::int64_t u = d_.roots[i];
      units_[static_cast<std::size_t>(u)] = {0, at, at, -1};
      w_[static_cast<std::size_t>(at)].array.push_back({u, ++stamps_});
      ++queued_;
    }
    for (std::size_t i = 0; i < w_.size(); ++i) schedule(static_cast<int>(i));
    while (ended_ < d_.units.size()) {
      const event e = events_.top();
      events_.pop();
      worker& w = w_[static_cast<std::size_t>(e.worker)];
      if (e.token != w.token) continue;
      if (w.parked) {  // the park limit ran out: one more look, then park again
        unpark(e.worker);
        w.idle_rounds = c_.idle_spin;
      }
      act(e.worker);
      if (w.now > livelock_limit)
        throw std::runtime_error("steal_sim: " + d_.name +
                                 " passed 1000 simulated seconds (a livelock of the model)");
      if (!w.parked) schedule(e.worker);
    }
    return std::move(r_);
  }

 private:
  worker& at(int i) { return w_[static_cast<std::size_t>(i)]; }
  unit_state& state(std::int64_t u) { return units_[static_cast<std::size_t>(u)]; }

  void schedule(int i) {
    worker& w = at(i);
    events_.push({w.now, ++seq_, i, ++w.token});
  }

  /// A local operation's cost (spawn, pop, switch, join of an ended unit).
  void local(worker& w, sim_ns cost) {
    w.now += cost;
    r_.local_cost += cost;
  }

  /// A push or pop on the own deque: after a peer's look, its lines come back first.
  void deque_op(worker& w, sim_ns cost) {
    local(w, cost);
    if (w.probed) {
      w.probed = false;
      w.now += c_.probed_owner_miss;
    }
  }

  void act(int me) {
    worker& w = at(me);
    if (w.current < 0) {
      find_unit(me);
      return;
    }
    const std::int64_t u = w.current;
    unit_state& s = state(u);
    const auto& steps = d_.units[static_cast<std::size_t>(u)].steps;
    if (s.pc == steps.size()) {
      end_unit(me, u);
      return;
    }
    const step st = steps[s.pc++];
    switch (st.what) {
      case step::op::work:
        w.now += st.arg;
        r_.work += st.arg;
        break;
      case step::op::spawn:
        deque_op(w, c_.spawn);
        state(st.arg) = {0, me, me, -1};
        w.array.push_back({st.arg, ++stamps_});
        ++queued_;
        pushed(me);
        break;
      case step::op::join:
        if (r_.ended[static_cast<std::size_t>(st.arg)] != 0) {
          local(w, c_.join_done);
          // Its completion was written on another core: that line comes over.
          if (state(st.arg).last_worker != me) w.now += c_.remote_join;
        } else if (!w.array.empty() && w.array.back().unit == st.arg) {
          // The newest unit: taken back and run at once, the joiner resumed when it ends.
          w.array.pop_back();
          --queued_;
          deque_op(w, c_.pop);
          state(st.arg).joiner = u;
          start(me, st.arg);
        } else {
          state(st.arg).joiner = u;
          local(w, c_.run_switch);
          w.current = -1;
        }
        break;
    }
  }

  /// Switches worker `me` into unit `u` (a first run or a resumption).
  void start(int me, std::int64_t u) {
    worker& w = at(me);
    local(w, c_.run_switch);
    unit_state& s = state(u);
    if (s.last_worker != me) {
      ++r_.migrations;
      w.now += c_.migration;
    }
    s.last_worker = me;
    w.current = u;
  }

  void end_unit(int me, std::int64_t u) {
    worker& w = at(me);
    auto& ended = r_.ended[static_cast<std::size_t>(u)];
    if (ended == 255) throw std::logic_error("steal_sim: a unit ended 255 times");
    ++ended;
    ++ended_;
    w.current = -1;
    const std::int64_t j = state(u).joiner;
    if (j >= 0 && state(j).home == me) {
      start(me, j);  // straight to the joiner: its home is this worker's deque
    } else {
      local(w, c_.run_switch);
      if (j >= 0) {  // through its home's side lane, as a push from another stream
        w.now += c_.handoff;
        at(state(j).home).side.push_back(j);
        ++queued_;
        pushed(me);
      }
    }
    r_.makespan = std::max(r_.makespan, w.now);
  }

  /// The wake rule after a push by worker `me`.
  void pushed(int me) {
    if (policy_ == policy_kind::randws && spinners_ > 0) return;
    wake_one(me);
  }

  void wake_one(int waker) {
    if (parked_.empty()) return;
    const int i = parked_.front();
    worker& w = at(waker);
    unpark(i);
    worker& v = at(i);
    v.now = std::max(v.now, w.now + c_.wake_latency);
    v.idle_rounds = 0;  // woken by a push: spin again
    w.now += c_.wake_call;
    ++r_.wakes;
    schedule(i);
  }

  void unpark(int i) {
    at(i).parked = false;
    parked_.erase(std::find(parked_.begin(), parked_.end(), i));
  }

  void find_unit(int me) {
    worker& w = at(me);
    std::int64_t u = -1;
    // ws_pool's pop: the array's newest, then the side lane; every 61st pop the side lane first.
    const bool side_first = ++w.pops % 61 == 0;
    if (!w.side.empty() && (side_first || w.array.empty())) {
      u = w.side.front();
      w.side.pop_front();
      --queued_;
      deque_op(w, c_.pop);
    } else if (!w.array.empty()) {
      u = w.array.back().unit;
      w.array.pop_back();
      --queued_;
      deque_op(w, c_.pop);
    } else if (w_.size() > 1) {
      const sim_ns before = w.now;
      u = steal(me);
      if (u < 0) r_.idle_spin += w.now - before;
    }
    if (u >= 0) {
      end_spin(me);
      w.idle_rounds = 0;
      start(me, u);
      return;
    }
    idle(me);
  }

  /// One look at every peer, from a random one on; the unit to run, or -1.
  std::int64_t steal(int me) {
    worker& w = at(me);
    const bool randws = policy_ == policy_kind::randws;
    if (randws && w.last_theft.taken != 0) judge_last_theft(w);
    const int n = static_cast<int>(w_.size());
    const int first = static_cast<int>(rng_.below(static_cast<std::uint64_t>(n - 1)));
    for (int k = 0; k < n - 1; ++k) {
      const int vi = (me + 1 + (first + k) % (n - 1)) % n;
      worker& v = at(vi);
      ++r_.probes;
      w.now += probe_;
      v.probed = true;
      sighting& seen = w.sightings[static_cast<std::size_t>(vi)];
      if (!v.array.empty()) {
        if (randws && !ripe(w, seen, v.array.front().stamp)) {
          ++r_.failed_probes;
          continue;
        }
        const auto size = static_cast<std::int64_t>(v.array.size());
        const std::int64_t half = (size + 1) / 2;
        const std::int64_t take =
            policy_ == policy_kind::naive_one ? 1 : std::min<std::int64_t>(half, c_.steal_batch);
        r_.theft_log.push_back({size, take});
        const std::int64_t u = v.array.front().unit;
        v.array.pop_front();
        for (std::int64_t i = 1; i < take; ++i) {  // the rest into the own array, oldest first
          const std::int64_t x = v.array.front().unit;
          v.array.pop_front();
          w.array.push_back({x, ++stamps_});  // its home stays the victim's, as in weft
        }
        queued_ -= 1;  // the extras moved from one array to another
        took(w, take);
        if (randws && c_.steal_grace > 0) {
          seen.backlog = false;
          w.last_theft = {vi, take, !v.array.empty(), w.now};
        }
        return u;
      }
      if (!v.side.empty()) {  // units pushed there by others: the owner has no reason to keep them
        const std::int64_t u = v.side.front();
        v.side.pop_front();
        --queued_;
        seen.backlog = false;
        took(w, 1);
        return u;
      }
      ++r_.failed_probes;
    }
    return -1;
  }

  void took(worker& w, std::int64_t units) {
    ++r_.thefts;
    r_.stolen += units;
    w.now += c_.steal + c_.steal_extra * (units - 1);
  }

  /// randws_scheduler::ripe: the oldest unit seen twice, steal_grace apart, or a backlog.
  bool ripe(worker& w, sighting& s, std::uint64_t stamp) {
    if (s.backlog || c_.steal_grace == 0) return true;
    w.now += c_.clock_read;
    if (s.stamp != stamp) {
      s.stamp = stamp;
      s.since = w.now;
      return false;
    }
    return w.now - s.since >= c_.steal_grace;
  }

  /// randws_scheduler::judge_last_theft: the thief ran dry; was its loot worth the move?
  void judge_last_theft(worker& w) {
    w.now += c_.clock_read;
    auto& t = w.last_theft;
    w.sightings[static_cast<std::size_t>(t.victim)].backlog =
        t.left_behind && w.now - t.at >= c_.worth_moving * t.taken;
    t.taken = 0;
  }

  void begin_spin(worker& w) {
    if (w.spinning) return;
    w.spinning = true;
    w.doze = 0;
    ++spinners_;
  }

  /// The last spinner to stop wakes a parked worker if units wait (randws).
  void end_spin(int me) {
    worker& w = at(me);
    if (!w.spinning) return;
    w.spinning = false;
    if (--spinners_ == 0 && queued_ > 0) wake_one(me);
  }

  void idle(int me) {
    worker& w = at(me);
    const bool randws = policy_ == policy_kind::randws;
    if (w.idle_rounds < c_.idle_spin) {
      if (randws && w.idle_rounds == 0) begin_spin(w);
      const int shift = randws ? std::min(w.idle_rounds, c_.max_backoff_shift) : 0;
      const sim_ns spin = c_.pause * (sim_ns{1} << shift);
      ++w.idle_rounds;
      w.now += spin;
      r_.idle_spin += spin;
      return;
    }
    end_spin(me);
    if (randws && queued_ > 0) {
      // stream::park beside units the policy declined: the first time one more look, then
      // timed dozes off the parked lists, each twice as long as the last.
      if (w.doze != 0) {
        ++r_.dozes;
        w.now += c_.park + w.doze;
      }
      w.doze = w.doze == 0 ? c_.min_doze : std::min(w.doze * 2, c_.max_doze);
      w.idle_rounds = c_.idle_spin;
      return;
    }
    ++r_.parks;
    w.now += c_.park;
    w.parked = true;
    parked_.push_back(me);
    events_.push({w.now + c_.park_limit, ++seq_, me, ++w.token});
  }

  const dag& d_;
  policy_kind policy_;
  cost_model c_;
  std::vector<worker> w_;
  std::vector<unit_state> units_;
  splitmix64 rng_;
  sim_result r_;
  sim_ns probe_ = 0;
  std::uint64_t stamps_ = 0;
  std::uint64_t seq_ = 0;
  std::size_t ended_ = 0;
  std::int64_t queued_ = 0;  // units in every array and side lane
  int spinners_ = 0;
  std::deque<int> parked_;
  std::priority_queue<event, std::vector<event>, std::greater<>> events_;
};

}  // namespace

sim_result simulate(const dag& d, policy_kind policy, const cost_model& costs, int workers,
                    std::uint64_t seed) {
  if (workers < 1 || workers > 1024)
    throw std::invalid_argument("steal_sim: workers must be in [1, 1024]");
  d.check();
  return simulation(d, policy, costs, workers, seed).run();
}

}  // namespace weft::steal_sim
