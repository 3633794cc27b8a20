// SPDX-License-Identifier: Apache-2.0
#include "mapper.hpp"

#include <edlib.h>

#include <weft/error.hpp>

#include <algorithm>
#include <cstdlib>

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
const char* to_string(strand s) {
  switch (s) {
    case strand::forward:
      return "forward";
    case strand::reverse:
      return "reverse";
    case strand::both:
      return "both";
  }
  return "?";
}

const char* to_string(out_format f) {
  switch (f) {
    case out_format::tsv:
      return "tsv";
    case out_format::sam:
      return "sam";
    case out_format::bam:
      return "bam";
    case out_format::paf:
      return "paf";
  }
  return "?";
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

EdlibAlignResult run_edlib(const std::string& query, const record& ref, const map_options& opt,
                           int k, const std::vector<EdlibEqualityPair>& eq, EdlibAlignTask task) {
  EdlibAlignConfig cfg =
      edlibNewAlignConfig(k, edlib_mode(opt.mode), task, eq.data(), static_cast<int>(eq.size()));
  EdlibAlignResult res = edlibAlign(query.data(), static_cast<int>(query.size()), ref.seq.data(),
                                    static_cast<int>(ref.seq.size()), cfg);
  if (res.status != EDLIB_STATUS_OK) {
    edlibFreeAlignResult(res);
    throw error("edlib failed aligning a query against " + quote_text(ref.name));
  }
  return res;
}

std::vector<EdlibEqualityPair> equalities(const map_options& opt) {
  std::vector<EdlibEqualityPair> eq;
  if (!opt.iupac) return eq;
  for (auto [a, b] : iupac_equalities()) eq.push_back({a, b});
  return eq;
}

}  // namespace

namespace detail {

job::job(const std::vector<record>& r, const std::vector<record>& q, const map_options& o)
    : refs(r), queries(q), opt(o), eq(equalities(o)) {
  first_strand = o.strands == strand::reverse ? 1 : 0;
  last_strand = o.strands == strand::forward ? 0 : 1;
  if (last_strand == 1) {
    rc.reserve(q.size());
    for (const record& rec : q) rc.push_back(reverse_complement(rec.seq));
  }
}

int distance(const job& j, std::size_t q, int s, const record& ref, int k) {
  edlib_result res(run_edlib(j.seq(q, s), ref, j.opt, k, j.eq, EDLIB_TASK_DISTANCE));
  return res.r.editDistance;
}

int distance(const record& query, const record& ref, const map_options& opt) {
  edlib_result res(
      run_edlib(query.seq, ref, opt, opt.max_dist, equalities(opt), EDLIB_TASK_DISTANCE));
  return res.r.editDistance;
}

void partial::add(int d, std::uint32_t id, ties t) {
  if (d < 0) return;
  if (dist < 0 || d < dist) {
    dist = d;
    refs.assign(1, id);
  } else if (d == dist) {
    if (t == ties::all) {
      refs.push_back(id);
    } else if (id < refs[0]) {
      refs[0] = id;
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
  if (t == ties::all) std::sort(refs.begin(), refs.end());
  r.refs.reserve(refs.size());
  r.strands.reserve(refs.size());
  for (std::uint32_t id : refs) {
    r.refs.push_back(id >> 1);
    r.strands.push_back(static_cast<std::uint8_t>(id & 1));
  }
  return r;
}

/// Fills in where each best hit lies (and its CIGAR): part of each query's work in every backend.
void add_details(const job& j, std::size_t q, query_result& r) {
  r.details.clear();
  r.details.reserve(r.refs.size());
  for (std::size_t i = 0; i < r.refs.size(); ++i) {
    edlib_result res(run_edlib(j.seq(q, r.strands[i]), j.refs[r.refs[i]], j.opt, j.opt.max_dist,
                               j.eq, needs_cigar(j.opt) ? EDLIB_TASK_PATH : EDLIB_TASK_LOC));
    hit_detail h;
    if (res.r.numLocations > 0) {
      h.start = res.r.startLocations ? res.r.startLocations[0] : -1;
      h.end = res.r.endLocations[0];
    }
    if (needs_cigar(j.opt) && res.r.alignment) {
      char* c = edlibAlignmentToCigar(res.r.alignment, res.r.alignmentLength, EDLIB_CIGAR_EXTENDED);
      if (c) {
        h.cigar = c;
        std::free(c);
      }
    }
    r.details.push_back(std::move(h));
  }
}

std::vector<query_result> map_serial(const job& j, run_state* progress) {
  std::vector<query_result> out(j.queries.size());
  if (progress) progress->workers = 1;
  for (std::size_t q = 0; q < j.queries.size(); ++q) {
    partial p;
    for (std::size_t r = 0; r < j.refs.size(); ++r) {
      for (int s = j.first_strand; s <= j.last_strand; ++s) {
        int d = distance(j, q, s, j.refs[r], j.k_for(p.dist));
        p.add(d, static_cast<std::uint32_t>(r * 2 + static_cast<std::size_t>(s)), j.opt.tie_mode);
      }
    }
    out[q] = std::move(p).finish(j.opt.tie_mode);
    add_details(j, q, out[q]);
    if (progress) progress->done.fetch_add(1, std::memory_order_relaxed);
  }
  return out;
}

}  // namespace detail

std::vector<query_result> map_all(const std::vector<record>& refs,
                                  const std::vector<record>& queries, const map_options& opt,
                                  run_state* state) {
  if (refs.size() > (std::size_t{1} << 31)) throw error("more than 2^31 references");
  detail::job j(refs, queries, opt);
  switch (opt.how) {
    case backend::serial:
      return detail::map_serial(j, state);
    case backend::omp:
      return detail::map_omp(j, state);
    case backend::weft:
      break;
  }
  return detail::map_weft(j, state);
}

weft::config weft_config(const map_options& opt) {
  weft::config cfg;
  cfg.num_streams = opt.streams;
  cfg.stack_size = 256 * 1024;  // edlib runs on the units' ULT stacks (larger frames under ASan)
  if (!opt.affinity.empty())
    cfg.affinity = weft::affinity_policy::parse(opt.affinity, "--affinity");
  // Idle streams park rather than poll: the mapper's tail and lopsided configurations leave
  // streams idle, and on a shared machine a polling stream takes CPU from everyone else.
  cfg.scheduler = opt.weft_sched.empty() ? "basic_wait" : opt.weft_sched;
  return cfg;
}

backend_session::backend_session(const map_options& opt) {
  if (opt.how != backend::weft) return;
  try {
    rt_ = std::make_unique<weft::runtime>(weft_config(opt));
  } catch (const weft::error& e) {
    throw error(e.what());
  }
}
backend_session::~backend_session() = default;

std::string format_header(const map_options& opt) {
  return opt.cigar ? "#query\treference\tstrand\tdistance\tstart\tend\tcigar\n"
                   : "#query\treference\tstrand\tdistance\tstart\tend\n";
}

std::string format_hits(const std::vector<record>& refs, const std::vector<record>& queries,
                        const std::vector<query_result>& results, const map_options& opt) {
  std::string out;
  for (std::size_t q = 0; q < queries.size(); ++q) {
    const query_result& r = results[q];
    if (r.refs.empty()) {
      out += queries[q].name;
      out += "\t*\t*\t-1\t-1\t-1";
      out += opt.cigar ? "\t*\n" : "\n";
      continue;
    }
    for (std::size_t i = 0; i < r.refs.size(); ++i) {
      const hit_detail& h = r.details[i];
      out += queries[q].name;
      out += '\t';
      out += refs[r.refs[i]].name;
      out += r.strands[i] ? "\t-\t" : "\t+\t";
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

std::string format_results(const std::vector<record>& refs, const std::vector<record>& queries,
                           const std::vector<query_result>& results, const map_options& opt) {
  std::string out = format_header(opt);
  out += format_hits(refs, queries, results, opt);
  return out;
}

}  // namespace align
