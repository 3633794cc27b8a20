// SPDX-License-Identifier: Apache-2.0
#include "seqio.hpp"

#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <unordered_map>

#include "output.hpp"

namespace align {
namespace {

std::string describe_char(unsigned char c) {
  char buf[16];
  if (c >= 0x21 && c < 0x7f) {
    std::snprintf(buf, sizeof buf, "'%c'", c);
  } else if (c == ' ') {
    std::snprintf(buf, sizeof buf, "' ' (space)");
  } else if (c == '\t') {
    std::snprintf(buf, sizeof buf, "'\\t' (tab)");
  } else {
    std::snprintf(buf, sizeof buf, "byte 0x%02x", c);
  }
  return buf;
}

}  // namespace

std::string quote_text(std::string_view text) {
  constexpr std::size_t kShown = 80;
  if (text.size() <= kShown) return "'" + std::string(text) + "'";
  return "'" + std::string(text.substr(0, kShown)) + "...' (" + std::to_string(text.size()) +
         " bytes)";
}

namespace {

/// Line-by-line reader over zlib (which reads plain files as they are).
class line_reader {
 public:
  explicit line_reader(const std::string& path) : path_(path) {
    if (path == "-") {
      int fd = ::dup(0);
      if (fd < 0) throw error("<stdin>: cannot read: " + std::string(std::strerror(errno)));
      file_ = gzdopen(fd, "rb");
      path_ = "<stdin>";
    } else {
      struct stat st {};
      if (::stat(path.c_str(), &st) != 0)
        throw error(path + ": cannot open: " + std::strerror(errno));
      if (S_ISDIR(st.st_mode)) throw error(path + ": cannot open: Is a directory");
      if (S_ISREG(st.st_mode)) total_ = static_cast<std::uint64_t>(st.st_size);
      errno = 0;
      file_ = gzopen(path.c_str(), "rb");
    }
    if (!file_) {
      int e = errno;
      throw error(path_ + ": cannot open: " + (e ? std::strerror(e) : "out of memory"));
    }
    gzbuffer(file_, 1 << 17);
  }
  ~line_reader() {
    if (file_) gzclose(file_);
  }
  line_reader(const line_reader&) = delete;
  line_reader& operator=(const line_reader&) = delete;

  /// Reads the next line without its "\n" or "\r\n"; false at the end of the input. A line that
  /// starts with one of `capped` and runs past kMaxHeaderLine is an error as soon as that is seen.
  bool next(std::string& line, std::string_view capped = {}) {
    line.clear();
    bool any = false;
    for (;;) {
      if (pos_ == end_ && !fill()) {
        if (any) ++line_no_;
        return any;
      }
      any = true;
      const char* start = buf_.data() + pos_;
      const void* nl = std::memchr(start, '\n', end_ - pos_);
      if (nl) {
        std::size_t n = static_cast<const char*>(nl) - start;
        line.append(start, n);
        pos_ += n + 1;
        break;
      }
      line.append(start, end_ - pos_);
      pos_ = end_;
      check_length(line, capped, kMaxHeaderLine + 1);  // + 1: a '\r' may end it
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    check_length(line, capped, kMaxHeaderLine);
    ++line_no_;
    return true;
  }
  std::size_t line_no() const { return line_no_; }
  const std::string& path() const { return path_; }
  std::uint64_t bytes_read() const { return read_.load(std::memory_order_relaxed); }
  std::uint64_t bytes_total() const { return total_; }

  [[noreturn]] void fail(const std::string& what) const { fail_at(line_no_, what); }
  [[noreturn]] void fail_at(std::size_t line, const std::string& what) const {
    throw error(path_ + ":" + std::to_string(line) + ": " + what);
  }

 private:
  bool fill() {
    if (eof_) return false;
    int n = gzread(file_, buf_.data(), static_cast<unsigned>(buf_.size()));
    if (total_) read_.store(static_cast<std::uint64_t>(gzoffset(file_)), std::memory_order_relaxed);
    if (n > 0) {
      // Also after zlib found damage: what it decompressed before it is read first, so that the
      // message gives the last line read in full.
      pos_ = 0;
      end_ = static_cast<std::size_t>(n);
      return true;
    }
    int errnum = Z_OK;
    const char* msg = gzerror(file_, &errnum);
    if (n < 0 || (errnum != Z_OK && errnum != Z_STREAM_END)) {
      std::string why = errnum == Z_ERRNO ? std::strerror(errno) : msg;
      if (errnum == Z_BUF_ERROR) why = "truncated gzip data (" + why + ")";
      fail_read(why);
    }
    eof_ = true;
    return false;
  }
  void check_length(const std::string& line, std::string_view capped, std::size_t most) const {
    if (line.size() > most && capped.find(line[0]) != std::string_view::npos)
      fail_at(line_no_ + 1, "header line longer than " + std::to_string(kMaxHeaderLine) +
                                " bytes, starting " +
                                quote_text(std::string_view(line).substr(0, 80)));
  }
  [[noreturn]] void fail_read(const std::string& why) const {
    throw error(path_ + ": cannot read after line " + std::to_string(line_no_) + ": " + why);
  }

  std::string path_;
  gzFile file_ = nullptr;
  std::array<char, 1 << 16> buf_{};
  std::size_t pos_ = 0, end_ = 0;
  std::size_t line_no_ = 0;
  bool eof_ = false;
  std::uint64_t total_ = 0;
  std::atomic<std::uint64_t> read_{0};
};

/// Maps each byte to its upper-case residue, or 0 when it is not in the alphabet.
struct alphabet_map {
  std::array<char, 256> to{};
  std::string text;
  explicit alphabet_map(const std::string& alphabet) : text(alphabet) {
    for (unsigned char c : alphabet) {
      to[c] = static_cast<char>(c);
      if (c >= 'A' && c <= 'Z') to[c - 'A' + 'a'] = static_cast<char>(c);
    }
  }
};

}  // namespace

char complement(char c) {
  switch (c) {
    case 'A':
      return 'T';
    case 'T':
    case 'U':
      return 'A';
    case 'C':
      return 'G';
    case 'G':
      return 'C';
    case 'R':
      return 'Y';
    case 'Y':
      return 'R';
    case 'K':
      return 'M';
    case 'M':
      return 'K';
    case 'B':
      return 'V';
    case 'V':
      return 'B';
    case 'D':
      return 'H';
    case 'H':
      return 'D';
    case 'S':
    case 'W':
    case 'N':
      return c;
    default:
      return 0;
  }
}

std::string reverse_complement(const std::string& seq) {
  std::string out(seq.size(), '\0');
  for (std::size_t i = 0; i < seq.size(); ++i) out[seq.size() - 1 - i] = complement(seq[i]);
  return out;
}

std::vector<std::pair<char, char>> iupac_equalities() {
  // Bit sets over A=1, C=2, G=4, T=8.
  static constexpr std::pair<char, int> codes[] = {
      {'A', 1}, {'C', 2},  {'G', 4}, {'T', 8},  {'U', 8},  {'R', 5},  {'Y', 10}, {'S', 6},
      {'W', 9}, {'K', 12}, {'M', 3}, {'B', 14}, {'D', 13}, {'H', 11}, {'V', 7},  {'N', 15}};
  std::vector<std::pair<char, char>> out;
  for (std::size_t i = 0; i < std::size(codes); ++i)
    for (std::size_t j = i + 1; j < std::size(codes); ++j)
      if (codes[i].second & codes[j].second) out.emplace_back(codes[i].first, codes[j].first);
  return out;
}

struct sequence_reader::impl {
  impl(const std::string& path, const std::string& alphabet) : in(path), abc(alphabet) {}

  line_reader in;
  alphabet_map abc;
  std::string line;
  bool started = false;
  bool fastq = false;
  bool have_line = false;  ///< `line` holds the next FASTA header, already read
  std::size_t header = 0;
  std::size_t records = 0;
  /// Letters outside the alphabet: the first (line, column), then each distinct letter's line.
  struct bad_letter {
    unsigned char c;
    std::size_t line;
  };
  std::vector<bad_letter> bad;
  std::size_t bad_column = 0;

  void append_residues(std::string_view text, std::string& seq) {
    std::size_t base = seq.size();
    seq.resize(base + text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
      unsigned char c = static_cast<unsigned char>(text[i]);
      char r = abc.to[c];
      if (!r) {
        note_bad(c, i + 1);
        r = 'N';
      }
      seq[base + i] = r;
    }
  }
  void note_bad(unsigned char c, std::size_t column) {
    if (bad.empty()) bad_column = column;
    for (const bad_letter& b : bad)
      if (b.c == c) return;
    bad.push_back({c, in.line_no()});
  }
  /// The error for letters outside the alphabet, all of them, at the first one's line.
  [[noreturn]] void fail_bad() const {
    std::string what = "character " + describe_char(bad[0].c) + " (column " +
                       std::to_string(bad_column) + ") is not in the alphabet " + abc.text;
    if (bad.size() > 1) {
      what += "; nor are";
      for (std::size_t i = 1; i < bad.size(); ++i) {
        what += i > 1 ? ", " : " ";
        what += describe_char(bad[i].c) + " (line " + std::to_string(bad[i].line) + ")";
      }
    }
    in.fail_at(bad[0].line, what);
  }

  void split_header(std::string_view text, record& rec) const {
    std::size_t end = text.find_first_of(" \t");
    if (end == std::string_view::npos) end = text.size();
    if (end == 0) in.fail(std::string("empty sequence name after '") + (fastq ? '@' : '>') + "'");
    rec.name.assign(text.substr(0, end));
    std::size_t d = text.find_first_not_of(" \t", end);
    rec.desc.assign(d == std::string_view::npos ? std::string_view{} : text.substr(d));
  }
  void check_length(const record& rec) const {
    if (rec.seq.size() > static_cast<std::size_t>(INT32_MAX))
      in.fail_at(header, "sequence " + quote_text(rec.name) + " is longer than 2^31-1 residues");
  }

  /// The first non-blank line decides the format.
  void start() {
    started = true;
    bool have = false;
    while ((have = in.next(line, ">@;")) && line.empty()) {
    }
    if (!have) throw error(in.path() + ": no sequences (empty input)");
    if (line[0] == '>') {
      fastq = false;
      have_line = true;
    } else if (line[0] == '@') {
      fastq = true;
      have_line = true;
    } else {
      in.fail("expected a FASTA ('>') or FASTQ ('@') header, found " +
              describe_char(static_cast<unsigned char>(line[0])));
    }
  }

  bool next_fasta(record& rec) {
    // `line` holds this record's header (or nothing at the end of the input).
    if (!have_line) return false;
    header = in.line_no();
    rec.seq.clear();
    rec.qual.clear();
    split_header(std::string_view(line).substr(1), rec);
    have_line = false;
    while (in.next(line, ">;")) {
      if (line.empty()) continue;
      if (line[0] == '>') {
        have_line = true;
        break;
      }
      if (line[0] == ';') continue;  // old-style comment line
      append_residues(line, rec.seq);
    }
    if (rec.seq.empty()) in.fail_at(header, "record " + quote_text(rec.name) + " has no sequence");
    check_length(rec);
    return true;
  }

  bool next_fastq(record& rec) {
    if (!have_line) {
      while (in.next(line, "@") && line.empty()) {
      }
      if (line.empty()) return false;
    }
    have_line = false;
    if (line[0] != '@') in.fail("expected a FASTQ header starting with '@'");
    header = in.line_no();
    rec.seq.clear();
    split_header(std::string_view(line).substr(1), rec);
    auto truncated = [&](const char* missing) {
      in.fail_at(header, "truncated FASTQ record " + quote_text(rec.name) +
                             ": the input ends before its " + missing);
    };
    if (!in.next(line)) truncated("sequence line");
    if (line.empty()) in.fail("record " + quote_text(rec.name) + " has no sequence");
    append_residues(line, rec.seq);
    if (!in.next(line, "+")) truncated("'+' line");
    if (line.empty() || line[0] != '+')
      in.fail("expected the '+' separator line of record " + quote_text(rec.name));
    if (!in.next(line)) truncated("quality line");
    if (line.size() != rec.seq.size()) {
      in.fail("quality string of record " + quote_text(rec.name) + " has " +
              std::to_string(line.size()) + " characters, its sequence " +
              std::to_string(rec.seq.size()));
    }
    for (std::size_t i = 0; i < line.size(); ++i) {
      unsigned char c = static_cast<unsigned char>(line[i]);
      if (c < 33 || c > 126)
        in.fail("quality " + describe_char(c) + " (column " + std::to_string(i + 1) +
                ") is outside the FASTQ range '!'..'~'");
    }
    rec.qual.assign(line);
    check_length(rec);
    return true;
  }

  bool next_checked(record& rec) { return fastq ? next_fastq(rec) : next_fasta(rec); }

  bool next(record& rec) {
    if (!started) start();
    bool got = next_checked(rec);
    if (!bad.empty()) {
      // Read on to the end so that the message names every letter that needs --alphabet, not
      // just the first; a structural error further on ends the search.
      record scratch;
      try {
        while (next_checked(scratch)) {
        }
      } catch (const error&) {
      }
      fail_bad();
    }
    if (got) {
      ++records;
    } else if (records == 0) {
      throw error(in.path() + ": no sequences (empty input)");
    }
    return got;
  }
};

sequence_reader::sequence_reader(const std::string& path, const std::string& alphabet)
    : p_(std::make_unique<impl>(path, alphabet)) {}
sequence_reader::~sequence_reader() = default;
bool sequence_reader::next(record& rec) {
  return p_->next(rec);
}
std::size_t sequence_reader::header_line() const {
  return p_->header;
}
const std::string& sequence_reader::path() const {
  return p_->in.path();
}
std::uint64_t sequence_reader::bytes_read() const {
  return p_->in.bytes_read();
}
std::uint64_t sequence_reader::bytes_total() const {
  return p_->in.bytes_total();
}

std::vector<record> read_sequences(const std::string& path, const std::string& alphabet,
                                   bool unique_names) {
  sequence_reader in(path, alphabet);
  std::vector<record> out;
  std::unordered_map<std::string, std::size_t> seen;  // name -> header line
  record rec;
  while (in.next(rec)) {
    if (unique_names) {
      auto [it, fresh] = seen.emplace(rec.name, in.header_line());
      if (!fresh)
        throw error(in.path() + ":" + std::to_string(in.header_line()) + ": duplicate name " +
                    quote_text(rec.name) + " (first at line " + std::to_string(it->second) + ")");
    }
    out.push_back(std::move(rec));
    rec = record{};
  }
  return out;
}

void write_file_atomically(const std::string& path, const std::string& text) {
  output_file out(path, {});
  out.write(text);
  out.commit();
}

void write_gzip_atomically(const std::string& path, const std::string& text) {
  z_stream z{};
  if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw error(path + ": cannot write gzip data: out of memory");
  std::string packed(deflateBound(&z, static_cast<uLong>(text.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(packed.data());
  z.avail_out = static_cast<uInt>(packed.size());
  int rc = deflate(&z, Z_FINISH);
  packed.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) throw error(path + ": cannot write gzip data");
  write_file_atomically(path, packed);
}

}  // namespace align
