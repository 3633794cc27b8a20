// The mapper: every query against every reference with edlib, best hit per query, in parallel on
// weft (workers x threads of ULTs or tasklets), on OpenMP (nested parallel regions, as in the
// seed), or serially.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "seqio.hpp"

namespace align {

enum class backend { weft, omp, serial };
enum class schedule { static_, dynamic };
enum class unit_kind { ult, tasklet };
enum class align_mode { nw, shw, hw };
enum class ties { first, all };

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
  bool cigar = false;
};

/// The best hits of one query: the smallest distance and the references that reach it (just the
/// lowest reference index with ties::first; all of them, ascending, with ties::all). dist = -1 and
/// no refs when nothing is within max_dist.
/// Where one hit lies in its reference, and its alignment (filled in by locate()).
struct hit_detail {
  int start = -1, end = -1;  ///< 0-based, end inclusive, as edlib reports them
  std::string cigar;         ///< extended CIGAR (=, X, I, D), only when asked for
};

struct query_result {
  int dist = -1;
  std::vector<std::uint32_t> refs;
  std::vector<hit_detail> details;  ///< one per entry of refs
};

/// Shared with the caller while a run goes on: progress (the mapper adds 1 per finished query)
/// and what the run actually used.
struct run_state {
  std::atomic<std::uint64_t> done{0};
  int workers = 0;         ///< outer units (threads for OpenMP) actually used
  int streams = 0;         ///< weft execution streams (0 for the other backends)
  std::string weft_sched;  ///< weft's main scheduler (empty for the other backends)
};

/// Maps every query; results are in query order and do not depend on the parallel configuration.
/// Throws align::error for options the backend cannot honour.
std::vector<query_result> map_all(const std::vector<record>& refs,
                                  const std::vector<record>& queries, const map_options& opt,
                                  run_state* state = nullptr);

/// The building blocks every backend shares.
namespace detail {
/// edlib's distance between query and reference under opt (mode, max_dist); -1 if above max_dist.
int distance(const record& query, const record& ref, const map_options& opt);
/// A partial best: merged from disjoint reference ranges in any order, the result is the same.
struct partial {
  int dist = -1;
  std::vector<std::uint32_t> refs;
  void add(int d, std::uint32_t ref, ties t);
  void merge(const partial& other, ties t);
  query_result finish(ties t) &&;
};
/// Fills in r.details (where each best hit lies, its CIGAR): part of each query's work.
void add_details(const std::vector<record>& refs, const record& query, const map_options& opt,
                 query_result& r);
std::vector<query_result> map_serial(const std::vector<record>& refs,
                                     const std::vector<record>& queries, const map_options& opt,
                                     run_state* progress);
std::vector<query_result> map_weft(const std::vector<record>& refs,
                                   const std::vector<record>& queries, const map_options& opt,
                                   run_state* progress);
/// Defined in mapper_omp.cpp when OpenMP was found; otherwise throws align::error.
std::vector<query_result> map_omp(const std::vector<record>& refs,
                                  const std::vector<record>& queries, const map_options& opt,
                                  run_state* progress);
bool have_openmp();
}  // namespace detail

/// Start, end and (if opt.cigar) CIGAR of the alignment of query on ref.
hit_detail locate(const record& query, const record& ref, const map_options& opt);

/// The TSV output: a header line, then one line per hit (query, reference, distance, start, end,
/// and the CIGAR when asked for); a query without a hit gets "*" and -1.
std::string format_results(const std::vector<record>& refs, const std::vector<record>& queries,
                           const std::vector<query_result>& results, const map_options& opt);

const char* to_string(backend b);
const char* to_string(schedule s);
const char* to_string(unit_kind u);
const char* to_string(align_mode m);
const char* to_string(ties t);

}  // namespace align
