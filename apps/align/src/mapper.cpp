#include "mapper.hpp"

#include <edlib.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <memory>
#include <weft/error.hpp>
#include <weft/execution_stream.hpp>
#include <weft/runtime.hpp>
#include <weft/tasklet.hpp>
#include <weft/ult.hpp>

namespace align {

const char* to_string(backend b) {
  switch (b) {
    case backend::weft:
      return "weft";
    case backend::omp:
      return "omp";
    case backend::serial:
      return "serial";
  }
  return "?";
}
const char* to_string(schedule s) {
  return s == schedule::static_ ? "static" : "dynamic";
}
const char* to_string(unit_kind u) {
  return u == unit_kind::ult ? "ult" : "tasklet";
}
const char* to_string(align_mode m) {
  switch (m) {
    case align_mode::nw:
      return "nw";
    case align_mode::shw:
      return "shw";
    case align_mode::hw:
      return "hw";
  }
  return "?";
}
const char* to_string(ties t) {
  return t == ties::first ? "first" : "all";
}

namespace {

EdlibAlignMode edlib_mode(align_mode m) {
  switch (m) {
    case align_mode::nw:
      return EDLIB_MODE_NW;
    case align_mode::shw:
      return EDLIB_MODE_SHW;
    case align_mode::hw:
      return EDLIB_MODE_HW;
  }
  return EDLIB_MODE_HW;
}

/// Owns an EdlibAlignResult.
struct edlib_result {
  EdlibAlignResult r;
  explicit edlib_result(EdlibAlignResult res) : r(res) {}
  ~edlib_result() { edlibFreeAlignResult(r); }
  edlib_result(const edlib_result&) = delete;
  edlib_result& operator=(const edlib_result&) = delete;
};

EdlibAlignResult run_edlib(const record& query, const record& ref, const map_options& opt,
                           EdlibAlignTask task) {
  EdlibAlignConfig cfg = edlibNewAlignConfig(opt.max_dist, edlib_mode(opt.mode), task, nullptr, 0);
  EdlibAlignResult res = edlibAlign(query.seq.data(), static_cast<int>(query.seq.size()),
                                    ref.seq.data(), static_cast<int>(ref.seq.size()), cfg);
  if (res.status != EDLIB_STATUS_OK) {
    edlibFreeAlignResult(res);
    throw error("edlib failed aligning '" + query.name + "' against '" + ref.name + "'");
  }
  return res;
}

}  // namespace

namespace detail {

int distance(const record& query, const record& ref, const map_options& opt) {
  edlib_result res(run_edlib(query, ref, opt, EDLIB_TASK_DISTANCE));
  return res.r.editDistance;
}

void partial::add(int d, std::uint32_t ref, ties t) {
  if (d < 0) return;
  if (dist < 0 || d < dist) {
    dist = d;
    refs.assign(1, ref);
  } else if (d == dist) {
    if (t == ties::all) {
      refs.push_back(ref);
    } else if (ref < refs[0]) {
      refs[0] = ref;
    }
  }
}

void partial::merge(const partial& other, ties t) {
  if (other.dist < 0) return;
  if (dist < 0 || other.dist < dist) {
    dist = other.dist;
    refs = other.refs;
  } else if (other.dist == dist) {
    if (t == ties::all) {
      refs.insert(refs.end(), other.refs.begin(), other.refs.end());
    } else if (other.refs[0] < refs[0]) {
      refs[0] = other.refs[0];
    }
  }
}

query_result partial::finish(ties t) && {
  query_result r;
  r.dist = dist;
  r.refs = std::move(refs);
  if (t == ties::all) std::sort(r.refs.begin(), r.refs.end());
  return r;
}

/// Fills in where each best hit lies (and its CIGAR): part of each query's work in every backend.
void add_details(const std::vector<record>& refs, const record& query, const map_options& opt,
                 query_result& r) {
  r.details.clear();
  r.details.reserve(r.refs.size());
  for (std::uint32_t ref : r.refs) r.details.push_back(locate(query, refs[ref], opt));
}

std::vector<query_result> map_serial(const std::vector<record>& refs,
                                     const std::vector<record>& queries, const map_options& opt,
                                     run_state* progress) {
  std::vector<query_result> out(queries.size());
  if (progress) progress->workers = 1;
  for (std::size_t q = 0; q < queries.size(); ++q) {
    partial p;
    for (std::size_t r = 0; r < refs.size(); ++r)
      p.add(distance(queries[q], refs[r], opt), static_cast<std::uint32_t>(r), opt.tie_mode);
    out[q] = std::move(p).finish(opt.tie_mode);
    add_details(refs, queries[q], opt, out[q]);
    if (progress) progress->done.fetch_add(1, std::memory_order_relaxed);
  }
  return out;
}

namespace {

/// Everything the units of one weft run share.
struct weft_job {
  const std::vector<record>& refs;
  const std::vector<record>& queries;
  const map_options& opt;
  std::vector<query_result>& out;
  run_state* progress;
  int workers, threads;
  std::vector<weft::execution_stream*> lanes;  ///< streams, NUMA node by node
  std::atomic<std::size_t> next_chunk{0};      ///< dynamic outer schedule

  weft::execution_stream& lane(int w, int t) const {
    return *lanes[(static_cast<std::size_t>(w) * threads + t) % lanes.size()];
  }
};

/// One query being mapped by a worker and its inner units.
struct query_job {
  const weft_job* job;
  std::size_t q;
  std::atomic<std::size_t> next_ref_chunk{0};  ///< dynamic inner schedule
  std::vector<partial>* parts;
};

/// Inner level: unit t of a query scans its share of the references.
void scan(query_job& qj, int t, partial& p) {
  const weft_job& j = *qj.job;
  const std::size_t nrefs = j.refs.size();
  const std::size_t rc = static_cast<std::size_t>(j.opt.ref_chunk);
  const std::size_t nchunks = (nrefs + rc - 1) / rc;
  const record& query = j.queries[qj.q];
  auto do_chunk = [&](std::size_t c) {
    std::size_t end = std::min(nrefs, (c + 1) * rc);
    for (std::size_t r = c * rc; r < end; ++r)
      p.add(distance(query, j.refs[r], j.opt), static_cast<std::uint32_t>(r), j.opt.tie_mode);
  };
  if (j.opt.sched == schedule::static_) {
    for (std::size_t c = static_cast<std::size_t>(t); c < nchunks;
         c += static_cast<std::size_t>(j.threads))
      do_chunk(c);
  } else {
    // Chunks are claimed one at a time by whichever unit is free (schedule(dynamic) nowait).
    for (std::size_t c; (c = qj.next_ref_chunk.fetch_add(1, std::memory_order_relaxed)) < nchunks;)
      do_chunk(c);
  }
}

template <class F>
weft::unit_handle spawn(unit_kind kind, weft::execution_stream& s, F&& f) {
  if (kind == unit_kind::tasklet) return weft::tasklet::create_on(s, std::forward<F>(f));
  return weft::ult::create_on(s, std::forward<F>(f));
}

/// Outer level: worker w maps its queries; each query fans out to `threads` units (the worker is
/// unit 0 and scans its share itself, like an OpenMP master thread).
void run_worker(weft_job& j, int w) {
  const int T = j.threads;
  std::vector<partial> parts(static_cast<std::size_t>(T));
  std::vector<weft::unit_handle> inner;
  inner.reserve(static_cast<std::size_t>(T));
  auto map_query = [&](std::size_t q) {
    query_job qj{&j, q, {}, &parts};
    for (auto& p : parts) p = partial{};
    for (int t = 1; t < T; ++t) {
      query_job* qp = &qj;
      inner.push_back(spawn(j.opt.unit, j.lane(w, t),
                            [qp, t] { scan(*qp, t, (*qp->parts)[static_cast<std::size_t>(t)]); }));
    }
    scan(qj, 0, parts[0]);
    for (auto& u : inner) u.join();
    inner.clear();
    for (int t = 1; t < T; ++t) parts[0].merge(parts[static_cast<std::size_t>(t)], j.opt.tie_mode);
    j.out[q] = std::move(parts[0]).finish(j.opt.tie_mode);
    add_details(j.refs, j.queries[q], j.opt, j.out[q]);
    if (j.progress) j.progress->done.fetch_add(1, std::memory_order_relaxed);
  };
  const std::size_t nq = j.queries.size();
  const std::size_t qc = static_cast<std::size_t>(j.opt.chunk);
  const std::size_t nchunks = (nq + qc - 1) / qc;
  auto do_chunk = [&](std::size_t c) {
    std::size_t end = std::min(nq, (c + 1) * qc);
    for (std::size_t q = c * qc; q < end; ++q) map_query(q);
  };
  if (j.opt.sched == schedule::static_) {
    for (std::size_t c = static_cast<std::size_t>(w); c < nchunks;
         c += static_cast<std::size_t>(j.workers))
      do_chunk(c);
  } else {
    for (std::size_t c; (c = j.next_chunk.fetch_add(1, std::memory_order_relaxed)) < nchunks;)
      do_chunk(c);
  }
}

}  // namespace

std::vector<query_result> map_weft(const std::vector<record>& refs,
                                   const std::vector<record>& queries, const map_options& opt,
                                   run_state* progress) {
  weft::config cfg;
  cfg.num_streams = opt.streams;
  cfg.stack_size = 256 * 1024;  // edlib runs on worker ULT stacks (larger frames under ASan)
  std::unique_ptr<weft::runtime> rt;
  try {
    if (!opt.affinity.empty())
      cfg.affinity = weft::affinity_policy::parse(opt.affinity, "--affinity");
    // Idle streams park rather than poll: the mapper's tails and lopsided configurations leave
    // streams idle, and on a shared machine a polling stream takes CPU from everyone else.
    cfg.scheduler = opt.weft_sched.empty() ? "basic_wait" : opt.weft_sched;
    rt = std::make_unique<weft::runtime>(cfg);  // nested (cfg ignored) if already initialised
  } catch (const weft::error& e) {
    throw error(e.what());
  }

  std::vector<query_result> out(queries.size());
  weft_job job{refs, queries, opt, out, progress, 0, opt.threads, {}, {}};
  for (int r = 0, n = weft::execution_stream::count(), seen = 0; seen < n && r < 4096; ++r) {
    if (auto* s = weft::execution_stream::by_rank(r)) {
      job.lanes.push_back(s);
      ++seen;
    }
  }
  // Keep consecutive lanes (a worker and its inner units) on one NUMA node where there are nodes.
  std::stable_sort(job.lanes.begin(), job.lanes.end(),
                   [](auto* a, auto* b) { return a->numa_node() < b->numa_node(); });
  job.workers = opt.workers > 0 ? opt.workers : static_cast<int>(job.lanes.size());
  if (progress) {
    progress->workers = job.workers;
    progress->streams = static_cast<int>(job.lanes.size());
    progress->weft_sched = weft::current_config().scheduler;
  }

  // A worker waits for its inner units, so it must be a ULT; with one thread per worker nothing
  // waits, and the workers are of the requested kind.
  const unit_kind worker_kind = opt.threads == 1 ? opt.unit : unit_kind::ult;
  std::vector<weft::unit_handle> workers;
  workers.reserve(static_cast<std::size_t>(job.workers));
  weft_job* jp = &job;
  for (int w = 0; w < job.workers; ++w)
    workers.push_back(spawn(worker_kind, job.lane(w, 0), [jp, w] { run_worker(*jp, w); }));
  std::exception_ptr failure;
  for (auto& u : workers) {
    try {
      u.join();
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
  return out;
}

}  // namespace detail

hit_detail locate(const record& query, const record& ref, const map_options& opt) {
  edlib_result res(run_edlib(query, ref, opt, opt.cigar ? EDLIB_TASK_PATH : EDLIB_TASK_LOC));
  hit_detail h;
  if (res.r.numLocations > 0) {
    h.start = res.r.startLocations ? res.r.startLocations[0] : -1;
    h.end = res.r.endLocations[0];
  }
  if (opt.cigar && res.r.alignment) {
    char* c = edlibAlignmentToCigar(res.r.alignment, res.r.alignmentLength, EDLIB_CIGAR_EXTENDED);
    if (c) {
      h.cigar = c;
      std::free(c);
    }
  }
  return h;
}

std::vector<query_result> map_all(const std::vector<record>& refs,
                                  const std::vector<record>& queries, const map_options& opt,
                                  run_state* progress) {
  switch (opt.how) {
    case backend::serial:
      return detail::map_serial(refs, queries, opt, progress);
    case backend::omp:
      return detail::map_omp(refs, queries, opt, progress);
    case backend::weft:
      break;
  }
  return detail::map_weft(refs, queries, opt, progress);
}

std::string format_results(const std::vector<record>& refs, const std::vector<record>& queries,
                           const std::vector<query_result>& results, const map_options& opt) {
  std::string out = "#query\treference\tdistance\tstart\tend";
  out += opt.cigar ? "\tcigar\n" : "\n";
  for (std::size_t q = 0; q < queries.size(); ++q) {
    const query_result& r = results[q];
    if (r.refs.empty()) {
      out += queries[q].name;
      out += "\t*\t-1\t-1\t-1";
      out += opt.cigar ? "\t*\n" : "\n";
      continue;
    }
    for (std::size_t i = 0; i < r.refs.size(); ++i) {
      const hit_detail& h = r.details[i];
      out += queries[q].name;
      out += '\t';
      out += refs[r.refs[i]].name;
      out += '\t';
      out += std::to_string(r.dist);
      out += '\t';
      out += std::to_string(h.start);
      out += '\t';
      out += std::to_string(h.end);
      if (opt.cigar) {
        out += '\t';
        out += h.cigar.empty() ? "*" : h.cigar;
      }
      out += '\n';
    }
  }
  return out;
}

}  // namespace align
