// Sequence input: FASTA and FASTQ, plain or gzip, with errors that name the file and line.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
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
};

/// Reads every record of `path` ("-" is stdin). The format (FASTA '>' or FASTQ '@') is taken from
/// the first non-blank line; gzip input is detected by its magic bytes. Residues are upper-cased
/// and must belong to `alphabet`. Throws align::error "PATH:LINE: what" on malformed input, "PATH:
/// ..." when the file cannot be read or holds no sequence.
std::vector<record> read_sequences(const std::string& path, const std::string& alphabet);

/// Writes `text` to `path` atomically: into a temporary file in the same directory, renamed over
/// `path` once complete. "-" writes to stdout. Throws align::error.
void write_file_atomically(const std::string& path, const std::string& text);

/// Writes `text` to `path` gzip-compressed (atomically, as above).
void write_gzip_atomically(const std::string& path, const std::string& text);

}  // namespace align
