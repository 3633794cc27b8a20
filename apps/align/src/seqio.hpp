// SPDX-License-Identifier: Apache-2.0
// Sequence input: FASTA and FASTQ, plain or gzip, read record by record, with errors that name
// the file and line; nucleotide alphabets and reverse complements.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace align {

/// Every user-facing failure (bad input, bad option, I/O): the message is complete and names the
/// file and line, or the option, it is about.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A bad command line (exit status 2 rather than 1).
class usage_error : public error {
 public:
  using error::error;
};

struct record {
  std::string name;  ///< first word of the header
  std::string desc;  ///< the rest of the header line (may be empty)
  std::string seq;   ///< residues, upper-cased, all in the alphabet
  std::string qual;  ///< FASTQ qualities as read (one per residue); empty for FASTA
};

/// `text` in single quotes for a message; past 80 bytes, its first 80 then "...' (N bytes)", so
/// that a name or an argument of any length gives a message of bounded size.
std::string quote_text(std::string_view text);

/// The longest header line (FASTA '>' or ';', FASTQ '@' or '+') read: a longer one is an error
/// when it is read, before it is held whole (a file without newlines would otherwise be read into
/// memory whole, and copied into the record and the message).
inline constexpr std::size_t kMaxHeaderLine = std::size_t{1} << 20;

/// The IUPAC nucleotide codes, the default alphabet: bases, U, N and the ambiguity codes.
inline constexpr const char* kIupac = "ACGTUNRYSWKMBDHV";

/// The complement of an upper-case IUPAC code (A<->T, U->A, R<->Y, K<->M, B<->V, D<->H; S, W, N
/// are their own), or 0 for a letter that is not a nucleotide code.
char complement(char c);

/// The reverse complement of seq, whose letters all have a complement.
std::string reverse_complement(const std::string& seq);

/// The pairs of distinct IUPAC codes that match when ambiguity codes stand for their bases: two
/// codes match when the sets of bases they stand for meet (U counts as T; N matches every code).
std::vector<std::pair<char, char>> iupac_equalities();

/// Reads one FASTA or FASTQ input record by record ("-" is stdin). The format ('>' or '@') is
/// taken from the first non-blank line; gzip input is detected by its magic bytes. Residues are
/// upper-cased and must belong to the alphabet; when some do not, the error names every distinct
/// offending letter of the whole input at once. Throws align::error "PATH:LINE: what" on malformed
/// input, "PATH: ..." when the file cannot be read or holds no sequence.
class sequence_reader {
 public:
  /// Opens path; the alphabet is upper case.
  sequence_reader(const std::string& path, const std::string& alphabet);
  ~sequence_reader();
  sequence_reader(const sequence_reader&) = delete;
  sequence_reader& operator=(const sequence_reader&) = delete;

  /// Reads the next record into rec; false at the end of the input (an input without any record
  /// is an error).
  bool next(record& rec);
  /// The line of the last record's header.
  std::size_t header_line() const;
  /// The name used in messages ("<stdin>" for "-").
  const std::string& path() const;
  /// Bytes of the file consumed so far (compressed bytes for gzip) and its size, 0 if unknown
  /// (stdin, a pipe): the progress bar's estimate.
  std::uint64_t bytes_read() const;
  std::uint64_t bytes_total() const;

 private:
  struct impl;
  std::unique_ptr<impl> p_;
};

/// Reads every record of `path` (see sequence_reader); with `unique_names`, a name that appears
/// twice is an error naming both lines.
std::vector<record> read_sequences(const std::string& path, const std::string& alphabet,
                                   bool unique_names = false);

/// Writes `text` to `path` through output_file (see output.hpp): atomically for a regular file,
/// in place for a device or FIFO. "-" writes to stdout. Throws align::error.
void write_file_atomically(const std::string& path, const std::string& text);

/// Writes `text` to `path` gzip-compressed (as above).
void write_gzip_atomically(const std::string& path, const std::string& text);

}  // namespace align
