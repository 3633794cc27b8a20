// SPDX-License-Identifier: Apache-2.0
#include "formats.hpp"

#include <htslib/hfile.h>
#include <htslib/kstring.h>
#include <htslib/sam.h>

#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <weft/version.hpp>

namespace align {
namespace {

/// The operations of an extended CIGAR ("12=1X3I") as htslib stores them.
std::vector<std::uint32_t> cigar_ops(const std::string& cigar) {
  std::vector<std::uint32_t> ops;
  std::uint32_t n = 0;
  for (char c : cigar) {
    if (c >= '0' && c <= '9') {
      n = n * 10 + static_cast<std::uint32_t>(c - '0');
      continue;
    }
    const char* op = std::strchr(BAM_CIGAR_STR, c);
    if (!op || c == '\0' || n == 0) throw error("internal: bad CIGAR " + quote_text(cigar));
    ops.push_back(bam_cigar_gen(n, static_cast<std::uint32_t>(op - BAM_CIGAR_STR)));
    n = 0;
  }
  return ops;
}

/// A hit that the mapper located and aligned; anything else is a bug, not bad input.
const hit_detail& aligned(const query_result& r, std::size_t i, const record& q) {
  const hit_detail& h = r.details.at(i);
  if (h.start < 0 || h.end < h.start || h.cigar.empty())
    throw error("internal: no alignment for the hit of " + quote_text(q.name));
  return h;
}

class tsv_formatter final : public hit_formatter {
 public:
  tsv_formatter(const std::vector<record>& refs, const map_options& opt) : refs_(refs), opt_(opt) {}
  std::string header() override { return "#" + match_rule_text(opt_) + "\n" + format_header(opt_); }
  std::string hits(const std::vector<record>& queries,
                   const std::vector<query_result>& results) override {
    return format_hits(refs_, queries, results, opt_);
  }

 private:
  const std::vector<record>& refs_;
  map_options opt_;
};

/// PAF (minimap2's pairwise mapping format): the 12 standard columns, then NM:i: (edlib's
/// distance) and cg:Z: (the extended CIGAR). Queries without a hit are left out, as minimap2
/// does.
class paf_formatter final : public hit_formatter {
 public:
  explicit paf_formatter(const std::vector<record>& refs) : refs_(refs) {}
  std::string header() override { return {}; }
  std::string hits(const std::vector<record>& queries,
                   const std::vector<query_result>& results) override {
    std::string out;
    for (std::size_t q = 0; q < queries.size(); ++q) {
      const query_result& r = results[q];
      const record& query = queries[q];
      for (std::size_t i = 0; i < r.refs.size(); ++i) {
        const hit_detail& h = aligned(r, i, query);
        const record& ref = refs_[r.refs[i]];
        std::uint64_t matches = 0, block = 0;
        for (std::uint32_t op : cigar_ops(h.cigar)) {
          block += bam_cigar_oplen(op);
          if (bam_cigar_op(op) == BAM_CEQUAL) matches += bam_cigar_oplen(op);
        }
        // edlib aligns the whole query in every mode: it spans 0 .. length on either strand.
        const std::string qlen = std::to_string(query.seq.size());
        for (const std::string& field :
             {query.name, qlen, std::string("0"), qlen, std::string(r.strands[i] ? "-" : "+"),
              ref.name, std::to_string(ref.seq.size()), std::to_string(h.start),
              std::to_string(h.end + 1), std::to_string(matches), std::to_string(block),
              std::string("255"), "NM:i:" + std::to_string(r.dist)}) {
          out += field;
          out += '\t';
        }
        out += "cg:Z:";
        out += h.cigar;
        out += '\n';
      }
    }
    return out;
  }

 private:
  const std::vector<record>& refs_;
};

/// SAM through htslib: a header of @HD, one @SQ per reference, @PG and a @CO naming the matching
/// rule; each hit a bam1_t formatted by sam_format1. The CIGAR uses = and X (edlib's extended
/// CIGAR), NM is edlib's distance; MAPQ is 255 (not computed). With --ties all, a query's hits
/// after the first are secondary (flag 256). A query without a hit is unmapped (flag 4).
class sam_formatter final : public hit_formatter {
 public:
  sam_formatter(const std::vector<record>& refs, const map_options& opt,
                const std::string& command_line)
      : hdr_(sam_hdr_init()), b_(bam_init1()) {
    if (!hdr_ || !b_) fail("cannot allocate the SAM header");
    if (sam_hdr_add_line(hdr_, "HD", "VN", SAM_FORMAT_VERSION, "SO", "unsorted", nullptr) < 0)
      fail("cannot build the SAM header");
    for (const record& r : refs) {
      const std::string len = std::to_string(r.seq.size());
      if (sam_hdr_add_line(hdr_, "SQ", "SN", r.name.c_str(), "LN", len.c_str(), nullptr) < 0)
        fail("cannot add reference " + quote_text(r.name) + " to the SAM header");
    }
    if (sam_hdr_add_pg(hdr_, "weft-align", "PN", "weft-align", "VN", WEFT_VERSION_STRING, "CL",
                       command_line.c_str(), nullptr) < 0)
      fail("cannot add the @PG line to the SAM header");
    const std::string co = "@CO\t" + match_rule_text(opt) + "\n";
    if (sam_hdr_add_lines(hdr_, co.c_str(), co.size()) < 0)
      fail("cannot add the @CO line to the SAM header");
  }
  ~sam_formatter() override {
    if (b_) bam_destroy1(b_);
    if (hdr_) sam_hdr_destroy(hdr_);
    std::free(line_.s);
  }
  sam_formatter(const sam_formatter&) = delete;
  sam_formatter& operator=(const sam_formatter&) = delete;

  std::string header() override {
    const char* text = sam_hdr_str(hdr_);
    if (!text) fail("cannot format the SAM header");
    return std::string(text, sam_hdr_length(hdr_));
  }

  std::string hits(const std::vector<record>& queries,
                   const std::vector<query_result>& results) override {
    std::string out;
    for (std::size_t q = 0; q < queries.size(); ++q) {
      const query_result& r = results[q];
      const record& query = queries[q];
      if (query.name.size() > 254)
        throw error("query " + quote_text(query.name) +
                    ": SAM allows names of at most 254 characters");
      if (r.refs.empty()) {
        set(query, BAM_FUNMAP, -1, -1, 0, {}, false);
        append(out);
        continue;
      }
      for (std::size_t i = 0; i < r.refs.size(); ++i) {
        const hit_detail& h = aligned(r, i, query);
        std::uint16_t flag = r.strands[i] ? BAM_FREVERSE : 0;
        if (i > 0) flag |= BAM_FSECONDARY;
        set(query, flag, static_cast<std::int32_t>(r.refs[i]), h.start, 255, cigar_ops(h.cigar),
            r.strands[i] != 0);
        if (bam_aux_update_int(b_, "NM", r.dist) < 0) fail("cannot add the NM tag");
        append(out);
      }
    }
    return out;
  }

 private:
  [[noreturn]] static void fail(const std::string& what) { throw error("SAM output: " + what); }

  /// Fills b_ with one record; SEQ and QUAL as on the reference's forward strand (SAM's rule).
  void set(const record& q, std::uint16_t flag, std::int32_t tid, hts_pos_t pos, std::uint8_t mapq,
           const std::vector<std::uint32_t>& cigar, bool reverse) {
    seq_ = reverse ? reverse_complement(q.seq) : q.seq;
    qual_ = q.qual;
    if (reverse) std::reverse(qual_.begin(), qual_.end());
    for (char& c : qual_) c = static_cast<char>(c - 33);  // bam1_t holds raw Phred values
    if (bam_set1(b_, q.name.size(), q.name.c_str(), flag, tid, pos, mapq, cigar.size(),
                 cigar.data(), -1, -1, 0, seq_.size(), seq_.data(),
                 qual_.empty() ? nullptr : qual_.data(), 8) < 0)
      fail("cannot build the record of " + quote_text(q.name) + ": " + std::strerror(errno));
  }

  void append(std::string& out) {
    line_.l = 0;
    if (sam_format1(hdr_, b_, &line_) < 0) fail("cannot format a record");
    out.append(line_.s, line_.l);
    out += '\n';
  }

  sam_hdr_t* hdr_;
  bam1_t* b_;
  kstring_t line_ = KS_INITIALIZE;
  std::string seq_, qual_;
};

}  // namespace

bam_writer::bam_writer(int fd, const std::string& shown, const std::string& header)
    : shown_(shown) {
  const int copy = ::dup(fd);
  if (copy < 0) fail(std::strerror(errno));
  hFILE* h = hdopen(copy, "w");
  if (!h) {
    ::close(copy);
    fail(std::strerror(errno));
  }
  fp_ = hts_hopen(h, shown.c_str(), "wb");
  if (!fp_) {
    hclose_abruptly(h);
    fail("cannot open for BAM");
  }
  hdr_ = sam_hdr_parse(header.size(), header.c_str());
  b_ = bam_init1();
  if (!hdr_ || !b_) fail("cannot build the BAM header");
  if (sam_hdr_write(fp_, hdr_) < 0) fail(std::strerror(errno));
}

bam_writer::~bam_writer() {
  if (fp_) hts_close(fp_);  // after an error: the output is discarded anyway
  if (hdr_) sam_hdr_destroy(hdr_);
  if (b_) bam_destroy1(b_);
}

void bam_writer::fail(const std::string& what) const {
  throw error(shown_ + ": cannot write BAM: " + what);
}

void bam_writer::write(const std::string& sam_lines) {
  kstring_t line = KS_INITIALIZE;
  std::size_t from = 0;
  try {
    while (from < sam_lines.size()) {
      std::size_t end = sam_lines.find('\n', from);
      if (end == std::string::npos) end = sam_lines.size();
      line.l = 0;
      if (kputsn(sam_lines.data() + from, end - from, &line) < 0) fail("out of memory");
      from = end + 1;
      if (sam_parse1(&line, hdr_, b_) < 0) fail("htslib cannot parse a record");
      if (sam_write1(fp_, hdr_, b_) < 0) fail(std::strerror(errno));
    }
  } catch (...) {
    std::free(line.s);
    throw;
  }
  std::free(line.s);
}

void bam_writer::close() {
  htsFile* fp = fp_;
  fp_ = nullptr;
  if (hts_close(fp) != 0) fail(std::strerror(errno));
}

std::string match_rule_text(const map_options& opt) {
  return opt.iupac ? "match: iupac (N and the IUPAC ambiguity codes match the bases they stand for)"
                   : "match: literal (every letter matches only itself)";
}

void check_alphabet_for_format(const std::string& alphabet, const map_options& opt) {
  if (opt.format != out_format::sam && opt.format != out_format::bam) return;
  for (char c : alphabet) {
    // htslib stores SEQ as 4-bit nucleotide codes: any other letter would be written as N (U is
    // written as T).
    if (!std::strchr(kIupac, c))
      throw usage_error(std::string("option --format ") + to_string(opt.format) + ": '" + c +
                        "' of the alphabet is not a SAM nucleotide code (A, C, G, T, U, N or an "
                        "IUPAC ambiguity code)");
  }
}

std::unique_ptr<hit_formatter> make_formatter(const std::vector<record>& refs,
                                              const map_options& opt,
                                              const std::string& command_line) {
  switch (opt.format) {
    case out_format::sam:
    case out_format::bam:  // as SAM text, which bam_writer encodes
      return std::make_unique<sam_formatter>(refs, opt, command_line);
    case out_format::paf:
      return std::make_unique<paf_formatter>(refs);
    case out_format::tsv:
      break;
  }
  return std::make_unique<tsv_formatter>(refs, opt);
}

}  // namespace align
