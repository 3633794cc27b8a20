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

// htslib's types, declared as htslib declares them (sam.h stays out of this header).
struct htsFile;
struct sam_hdr_t;
struct bam1_t;

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

/// BAM through htslib on an output's descriptor: the SAM text of each chunk (as hit_formatter
/// makes it, on whichever rank) is parsed back into bam1_t records and written BGZF-compressed.
class bam_writer {
 public:
  /// Writes the header (SAM text) to fd, which stays open (a duplicate is written to); shown is
  /// the destination's name for messages.
  bam_writer(int fd, const std::string& shown, const std::string& header);
  ~bam_writer();
  bam_writer(const bam_writer&) = delete;
  bam_writer& operator=(const bam_writer&) = delete;
  /// Writes the records of SAM lines (each ending with '\n').
  void write(const std::string& sam_lines);
  /// Flushes the records and BAM's end-of-file block; required before the output is committed.
  void close();

 private:
  [[noreturn]] void fail(const std::string& what) const;
  std::string shown_;
  ::htsFile* fp_ = nullptr;
  ::sam_hdr_t* hdr_ = nullptr;
  ::bam1_t* b_ = nullptr;
};

/// Throws usage_error when the alphabet cannot be written in opt.format (SAM and BAM store
/// nucleotide codes only).
void check_alphabet_for_format(const std::string& alphabet, const map_options& opt);

}  // namespace align
