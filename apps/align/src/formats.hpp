// SPDX-License-Identifier: Apache-2.0
// The output formats of "map": TSV (the default), SAM (records built and formatted by htslib) and
// PAF. Each turns a chunk of results into text, so that every format goes through output_file
// (atomic replacement) and through the ranks of a distributed run alike.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "mapper.hpp"
#include "seqio.hpp"

namespace align {

/// Formats hits: header() once at the start of the output, then hits() for each chunk of queries
/// in order. Not thread-safe (one per thread that formats).
class hit_formatter {
 public:
  virtual ~hit_formatter() = default;
  /// The header: TSV comment lines, the SAM header, nothing for PAF.
  virtual std::string header() = 0;
  /// The lines of one chunk's results (results[i] belongs to queries[i]). Throws align::error.
  virtual std::string hits(const std::vector<record>& queries,
                           const std::vector<query_result>& results) = 0;
};

/// The formatter for opt.format. refs must outlive it; command_line is SAM's @PG CL.
std::unique_ptr<hit_formatter> make_formatter(const std::vector<record>& refs,
                                              const map_options& opt,
                                              const std::string& command_line);

/// One line naming the matching rule (--match), for the headers of TSV and SAM.
std::string match_rule_text(const map_options& opt);

/// Throws usage_error when the alphabet cannot be written in opt.format (SAM stores nucleotide
/// codes only).
void check_alphabet_for_format(const std::string& alphabet, const map_options& opt);

}  // namespace align
