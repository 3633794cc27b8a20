// SPDX-License-Identifier: Apache-2.0
// The mapper: every query (both strands by default) against every reference with edlib, best hit
// per query, in parallel on weft (workers x threads of ULTs or tasklets), on OpenMP (nested
// parallel regions, as in the seed), or serially; each alignment's k is the query's best distance
// so far (pruning), which leaves the results unchanged.
#pragma once

#include <edlib.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <weft/config.hpp>
#include <weft/runtime.hpp>

#include "seqio.hpp"

namespace align {

enum class backend { weft, omp, serial };
enum class schedule { static_, dynamic };
enum class unit_kind { ult, tasklet };
enum class align_mode { nw, shw, hw };
enum class ties { first, all };
enum class strand { forward, reverse, both };
/// What "map" writes: TSV (the default), SAM, BAM or PAF (formats.hpp).
enum class out_format { tsv, sam, bam, paf };

struct map_options {
  backend how = backend::weft;
  int workers = 0;    ///< outer level, over queries; 0 = one per stream (or CPU)
  int threads = 1;    ///< inner level, over references, per worker
  int chunk = 1;      ///< queries per chunk (outer level)
  int ref_chunk = 1;  ///< references per chunk (inner level)
  schedule sched = schedule::dynamic;
  unit_kind unit = unit_kind::ult;
  int streams = 0;         ///< weft streams; 0 = weft's default (WEFT_NUM_STREAMS or one per CPU)
  std::string affinity;    ///< weft affinity policy text; empty = weft's default
  std::string weft_sched;  ///< weft scheduler name; empty = weft's default
  align_mode mode = align_mode::hw;
  int max_dist = -1;  ///< edlib's k; -1 = no limit
  ties tie_mode = ties::first;
  bool cigar = false;                   ///< TSV: add the CIGAR column
  out_format format = out_format::tsv;  ///< SAM and PAF need every hit's CIGAR whatever cigar says
  strand strands = strand::both;        ///< which strands of each query are aligned
  bool iupac = true;                    ///< ambiguity codes match the bases they stand for
  bool prune = true;  ///< per query, align each further reference with k = best distance so far
};

/// Where one hit lies in its reference, and its alignment (filled in by locate()).
struct hit_detail {
  int start = -1, end = -1;  ///< 0-based, end inclusive, as edlib reports them
  std::string cigar;         ///< extended CIGAR (=, X, I, D), only when needs_cigar()
};

/// Whether hits need their alignment path (a CIGAR): TSV with --cigar, and SAM and PAF always.
inline bool needs_cigar(const map_options& opt) {
  return opt.cigar || opt.format != out_format::tsv;
}

/// The best hits of one query: the smallest distance over the strands searched and the
/// (reference, strand) pairs that reach it (just the lowest reference index, forward before
/// reverse, with ties::first; all of them in that order with ties::all). dist = -1 and no refs
/// when nothing is within max_dist.
struct query_result {
  int dist = -1;
  std::vector<std::uint32_t> refs;
  std::vector<std::uint8_t> strands;  ///< one per entry of refs: 0 forward, 1 reverse complement
  std::vector<hit_detail> details;    ///< one per entry of refs
};

/// Shared with the caller while a run goes on: progress (the mapper adds 1 per finished query)
/// and what the run actually used.
struct run_state {
  std::atomic<std::uint64_t> done{0};
  int workers = 0;         ///< outer units (threads for OpenMP) actually used
  int streams = 0;         ///< weft execution streams (0 for the other backends)
  std::string weft_sched;  ///< weft's main scheduler (empty for the other backends)
};

/// Maps every query; results are in query order and do not depend on the parallel configuration
/// (nor on pruning). Throws align::error for options the backend cannot honour.
std::vector<query_result> map_all(const std::vector<record>& refs,
                                  const std::vector<record>& queries, const map_options& opt,
                                  run_state* state = nullptr);

/// The weft configuration map_all uses for opt (streams, affinity, scheduler, stack size).
weft::config weft_config(const map_options& opt);

/// Keeps the backend's runtime up between map_all calls (weft: one runtime for a whole streamed
/// run rather than one per chunk of queries); map_all works without one.
class backend_session {
 public:
  /// Starts weft for the weft backend (throws align::error on a bad weft setting).
  explicit backend_session(const map_options& opt);
  ~backend_session();
  backend_session(const backend_session&) = delete;
  backend_session& operator=(const backend_session&) = delete;

 private:
  std::unique_ptr<weft::runtime> rt_;
};

/// The building blocks every backend shares.
namespace detail {
/// One map_all call: the inputs, the reverse complements, edlib's equalities.
struct job {
  job(const std::vector<record>& r, const std::vector<record>& q, const map_options& o);
  const std::vector<record>& refs;
  const std::vector<record>& queries;
  const map_options& opt;
  std::vector<std::string> rc;  ///< reverse complements, when the reverse strand is searched
  std::vector<EdlibEqualityPair> eq;
  int first_strand = 0, last_strand = 1;  ///< strands searched: 0 forward, 1 reverse
  const std::string& seq(std::size_t q, int s) const { return s ? rc[q] : queries[q].seq; }
  /// edlib's k for the next alignment of a query whose best so far is best (-1: none yet).
  int k_for(int best) const {
    if (!opt.prune || best < 0) return opt.max_dist;
    return opt.max_dist < 0 ? best : std::min(best, opt.max_dist);
  }
};
/// edlib's distance of query strand s against ref with edlib's k; -1 if above k.
int distance(const job& j, std::size_t q, int s, const record& ref, int k);
/// edlib's distance between query and reference under opt (mode, max_dist, IUPAC), forward.
int distance(const record& query, const record& ref, const map_options& opt);
/// Lowers best to d (d >= 0) unless it is already at or below.
inline void lower(std::atomic<int>& best, int d) {
  int cur = best.load(std::memory_order_relaxed);
  while ((cur < 0 || d < cur) && !best.compare_exchange_weak(cur, d, std::memory_order_relaxed)) {
  }
}
/// A partial best over hit ids (reference * 2 + strand): merged from disjoint ranges in any order,
/// the result is the same.
struct partial {
  int dist = -1;
  std::vector<std::uint32_t> refs;
  void add(int d, std::uint32_t id, ties t);
  void merge(const partial& other, ties t);
  query_result finish(ties t) &&;
};
/// Fills in r.details (where each best hit lies, its CIGAR): part of each query's work.
void add_details(const job& j, std::size_t q, query_result& r);
std::vector<query_result> map_serial(const job& j, run_state* progress);
std::vector<query_result> map_weft(const job& j, run_state* progress);
/// Defined in mapper_omp.cpp when OpenMP was found; otherwise throws align::error.
std::vector<query_result> map_omp(const job& j, run_state* progress);
bool have_openmp();
}  // namespace detail

/// The TSV header line for opt.
std::string format_header(const map_options& opt);

/// The TSV lines of results (no header): one line per hit (query, reference, strand '+' or '-',
/// distance, start, end, and the CIGAR when asked for); a query without a hit gets "*" and -1.
std::string format_hits(const std::vector<record>& refs, const std::vector<record>& queries,
                        const std::vector<query_result>& results, const map_options& opt);

/// format_header() followed by format_hits().
std::string format_results(const std::vector<record>& refs, const std::vector<record>& queries,
                           const std::vector<query_result>& results, const map_options& opt);

const char* to_string(backend b);
const char* to_string(schedule s);
const char* to_string(unit_kind u);
const char* to_string(align_mode m);
const char* to_string(ties t);
const char* to_string(strand s);
const char* to_string(out_format f);

}  // namespace align
