// SPDX-License-Identifier: Apache-2.0
// The mapper on weft: W teams ("workers") of T units ("threads"), created once per run. A team
// goes through a sequence of query chunks; its T units share every query's references, and the
// unit that finishes a query's last share merges the partial bests and locates the hits. No unit
// ever waits for another: there is no join, barrier or new unit per query, so a unit whose share
// of a query is done moves on to the next query while the others finish theirs (the nested
// OpenMP version closes an inner parallel region, with its implicit barrier, per query).
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <weft/error.hpp>
#include <weft/execution_stream.hpp>
#include <weft/runtime.hpp>
#include <weft/tasklet.hpp>
#include <weft/this_unit.hpp>
#include <weft/ult.hpp>

#include "mapper.hpp"

namespace align::detail {

namespace {

/// One query of a claimed chunk: the inner counter (dynamic schedule), one partial best per unit
/// of the team, and how many units have not finished their share yet.
struct query_state {
  std::atomic<std::size_t> next_ref_chunk{0};
  std::atomic<int> best{-1};  ///< the team's best distance so far: every unit's k (pruning)
  std::atomic<int> units_left{0};
  std::unique_ptr<partial[]> parts;
};

/// A chunk of consecutive queries a team claimed; freed once all its queries are finished.
struct chunk_state {
  std::size_t first = 0, count = 0;
  std::unique_ptr<query_state[]> queries;
  std::atomic<std::size_t> unfinished{0};
};

/// Everything the units of one run share, read-only once the units start (but the counter).
struct weft_run {
  weft_run(const job& jb, std::vector<query_result>& res, run_state* st)
      : j(jb), refs(jb.refs), queries(jb.queries), opt(jb.opt), out(res), progress(st) {}

  const job& j;
  const std::vector<record>& refs;
  const std::vector<record>& queries;
  const map_options& opt;
  std::vector<query_result>& out;
  run_state* progress;
  int workers = 0, threads = 1;
  std::size_t query_chunks = 0, ref_chunks = 0;
  bool shared_streams = false;                   ///< more units than streams
  std::vector<weft::execution_stream*> lanes;    ///< streams, NUMA node by node
  std::atomic<std::size_t> next_query_chunk{0};  ///< dynamic outer schedule

  weft::execution_stream& lane(int w, int t) const {
    return *lanes[(static_cast<std::size_t>(w) * threads + t) % lanes.size()];
  }
};

/// The sequence of query chunks one team goes through. Every unit of the team walks the same
/// sequence, position by position; the first unit to reach a position claims its chunk (the next
/// free one with the dynamic schedule, chunk w + p * W with the static one). Called by the team's
/// units, from any stream; one short std::mutex section per chunk and unit.
class team {
 public:
  team(weft_run& run, int w) : run_(run), w_(w) {}

  /// The chunk at position pos of this team's sequence, or nullptr past its end.
  chunk_state* at(std::size_t pos) {
    std::lock_guard lock(mutex_);
    while (base_ + chunks_.size() <= pos) {
      if (ended_) return nullptr;
      std::size_t c;
      if (run_.opt.sched == schedule::static_) {
        c = static_cast<std::size_t>(w_) + (base_ + chunks_.size()) * run_.workers;
      } else {
        c = run_.next_query_chunk.fetch_add(1, std::memory_order_relaxed);
      }
      if (c >= run_.query_chunks) {
        ended_ = true;
        return nullptr;
      }
      chunks_.push_back(make_chunk(c));
    }
    return chunks_[pos - base_].get();
  }

  /// Frees the finished chunks at the front of the sequence (no unit touches them any more: each
  /// of their queries counted every unit out).
  void release_finished() {
    std::lock_guard lock(mutex_);
    while (!chunks_.empty() && chunks_.front()->unfinished.load(std::memory_order_acquire) == 0) {
      chunks_.pop_front();
      ++base_;
    }
  }

 private:
  std::unique_ptr<chunk_state> make_chunk(std::size_t c) const {
    const std::size_t qc = static_cast<std::size_t>(run_.opt.chunk);
    auto chunk = std::make_unique<chunk_state>();
    chunk->first = c * qc;
    chunk->count = std::min(run_.queries.size(), chunk->first + qc) - chunk->first;
    chunk->queries = std::make_unique<query_state[]>(chunk->count);
    for (std::size_t i = 0; i < chunk->count; ++i) {
      chunk->queries[i].parts = std::make_unique<partial[]>(static_cast<std::size_t>(run_.threads));
      chunk->queries[i].units_left.store(run_.threads, std::memory_order_relaxed);
    }
    chunk->unfinished.store(chunk->count, std::memory_order_relaxed);
    return chunk;
  }

  weft_run& run_;
  const int w_;
  std::mutex mutex_;
  std::deque<std::unique_ptr<chunk_state>> chunks_;  ///< positions base_ .. base_ + size - 1
  std::size_t base_ = 0;
  bool ended_ = false;
};

/// Unit t's share of one query's references, into p: chunks t, t + T, ... (static) or whichever
/// chunk is next on the query's counter (dynamic, schedule(dynamic) nowait).
/// Every alignment uses k = the team's best distance so far for the query (pruning: a reference
/// that cannot reach the best is given up early); hits at the best distance are all found, so the
/// result is the same as without pruning.
void scan(const weft_run& run, std::size_t q, query_state& qs, int t, partial& p) {
  const std::size_t nrefs = run.refs.size();
  const std::size_t rc = static_cast<std::size_t>(run.opt.ref_chunk);
  auto do_chunk = [&](std::size_t c) {
    const std::size_t end = std::min(nrefs, (c + 1) * rc);
    for (std::size_t r = c * rc; r < end; ++r) {
      for (int s = run.j.first_strand; s <= run.j.last_strand; ++s) {
        int d = distance(run.j, q, s, run.refs[r],
                         run.j.k_for(qs.best.load(std::memory_order_relaxed)));
        p.add(d, static_cast<std::uint32_t>(r * 2 + static_cast<std::size_t>(s)), run.opt.tie_mode);
        if (d >= 0) lower(qs.best, d);
      }
    }
  };
  if (run.opt.sched == schedule::static_) {
    for (std::size_t c = static_cast<std::size_t>(t); c < run.ref_chunks;
         c += static_cast<std::size_t>(run.threads))
      do_chunk(c);
  } else {
    for (std::size_t c;
         (c = qs.next_ref_chunk.fetch_add(1, std::memory_order_relaxed)) < run.ref_chunks;)
      do_chunk(c);
  }
}

/// The last unit out of query q: merges the team's partial bests and locates the hits.
void finish_query(weft_run& run, std::size_t q, query_state& qs) {
  partial& best = qs.parts[0];
  for (int t = 1; t < run.threads; ++t)
    best.merge(qs.parts[static_cast<std::size_t>(t)], run.opt.tie_mode);
  run.out[q] = std::move(best).finish(run.opt.tie_mode);
  add_details(run.j, q, run.out[q]);
  if (run.progress) run.progress->done.fetch_add(1, std::memory_order_relaxed);
}

/// Unit t of a team: its share of every query of the team's chunks, in the team's order.
void run_unit(weft_run& run, team& tm, int t) {
  for (std::size_t pos = 0;; ++pos) {
    chunk_state* chunk = tm.at(pos);
    if (!chunk) return;
    // Read before the first count-out below: once this unit has counted itself out of the last
    // query, another unit may free the chunk.
    const std::size_t first = chunk->first, count = chunk->count;
    for (std::size_t i = 0; i < count; ++i) {
      query_state& qs = chunk->queries[i];
      scan(run, first + i, qs, t, qs.parts[static_cast<std::size_t>(t)]);
      if (qs.units_left.fetch_sub(1, std::memory_order_acq_rel) != 1) continue;
      finish_query(run, first + i, qs);
      if (chunk->unfinished.fetch_sub(1, std::memory_order_acq_rel) == 1) tm.release_finished();
    }
    // With more units than streams, a unit that ran on would keep its stream's other units (maybe
    // of its own team) from counting out of its queries until it ends: finished queries would
    // pile up unmerged and the progress bar stall. A ULT steps aside after each chunk (a tasklet
    // cannot; its stream's other units catch up when it ends).
    if (run.shared_streams && weft::this_unit::is_ult()) weft::this_unit::yield();
  }
}

template <class F>
weft::unit_handle spawn(unit_kind kind, weft::execution_stream& s, F&& f) {
  if (kind == unit_kind::tasklet) return weft::tasklet::create_on(s, std::forward<F>(f));
  return weft::ult::create_on(s, std::forward<F>(f));
}

}  // namespace

std::vector<query_result> map_weft(const job& j, run_state* progress) {
  std::unique_ptr<weft::runtime> rt;
  try {
    rt = std::make_unique<weft::runtime>(weft_config(j.opt));  // nested if already initialised
  } catch (const weft::error& e) {
    throw error(e.what());
  }
  const auto& queries = j.queries;
  const auto& refs = j.refs;
  const auto& opt = j.opt;

  std::vector<query_result> out(queries.size());
  weft_run run(j, out, progress);
  run.threads = opt.threads;
  const auto qc = static_cast<std::size_t>(opt.chunk), rc = static_cast<std::size_t>(opt.ref_chunk);
  run.query_chunks = (queries.size() + qc - 1) / qc;
  run.ref_chunks = (refs.size() + rc - 1) / rc;
  for (int r = 0, n = weft::execution_stream::count(), seen = 0; seen < n && r < 4096; ++r) {
    if (auto* s = weft::execution_stream::by_rank(r)) {
      run.lanes.push_back(s);
      ++seen;
    }
  }
  // Keep consecutive lanes (a team's units) on one NUMA node where there are nodes.
  std::stable_sort(run.lanes.begin(), run.lanes.end(),
                   [](auto* a, auto* b) { return a->numa_node() < b->numa_node(); });
  run.workers = opt.workers > 0 ? opt.workers : static_cast<int>(run.lanes.size());
  run.shared_streams =
      static_cast<std::size_t>(run.workers) * static_cast<std::size_t>(run.threads) >
      run.lanes.size();
  if (progress) {
    progress->workers = run.workers;
    progress->streams = static_cast<int>(run.lanes.size());
    progress->weft_sched = weft::current_config().scheduler;
  }

  // Declared before the units so that they outlive every unit, also when a spawn throws.
  std::deque<team> teams;
  std::vector<weft::unit_handle> units;
  units.reserve(static_cast<std::size_t>(run.workers) * static_cast<std::size_t>(run.threads));
  std::exception_ptr failure;
  try {
    for (int w = 0; w < run.workers; ++w) {
      team* tm = &teams.emplace_back(run, w);
      for (int t = 0; t < run.threads; ++t)
        units.push_back(spawn(opt.unit, run.lane(w, t), [&run, tm, t] { run_unit(run, *tm, t); }));
    }
  } catch (...) {
    failure = std::current_exception();
  }
  for (auto& u : units) {
    try {
      u.join();
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
  return out;
}

}  // namespace align::detail
