#include "mapper.hpp"

#include <edlib.h>

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
