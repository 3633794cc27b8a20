// SPDX-License-Identifier: Apache-2.0
// A seeded data generator: random references of varying lengths and queries that are mutated
// substrings of them, each with its known origin in its header.
#pragma once

#include <cstdint>
#include <string>

namespace align {

struct gen_options {
  std::uint64_t seed = 1;
  int refs = 100;      ///< number of references
  int ref_min = 1000;  ///< reference lengths are log-uniform in [ref_min, ref_max]
  int ref_max = 1000;
  int queries = 100;   ///< number of queries
  int qlen_min = 150;  ///< query lengths (before mutation) are uniform in [qlen_min, qlen_max]
  int qlen_max = 150;
  double error_rate = 0.05;  ///< per-residue chance of a substitution, insertion or deletion
  bool fastq = false;        ///< queries as FASTQ (quality 'I') instead of FASTA
};

struct generated {
  std::string refs;     ///< FASTA: ">ref<i> len=<n>"
  std::string queries;  ///< FASTA or FASTQ: "q<i> origin=ref<j> pos=<p> len=<n> edits=<e>"
};

/// Same options, same bytes, on every platform (own PRNG and integer mapping). Throws
/// align::usage_error on inconsistent options.
generated generate(const gen_options& opt);

/// The origin written in a generated query's header description.
struct origin {
  std::string ref;
  int pos = -1, len = -1, edits = -1;
};
/// Parses "origin=ref<j> pos=<p> len=<n> edits=<e>"; pos = -1 when the description has none.
origin parse_origin(const std::string& desc);

}  // namespace align
