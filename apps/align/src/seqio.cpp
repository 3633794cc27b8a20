#include "seqio.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>

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

  /// Reads the next line without its "\n" or "\r\n"; false at the end of the input.
  bool next(std::string& line) {
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
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    ++line_no_;
    return true;
  }
  std::size_t line_no() const { return line_no_; }
  const std::string& path() const { return path_; }

  [[noreturn]] void fail(const std::string& what) const { fail_at(line_no_, what); }
  [[noreturn]] void fail_at(std::size_t line, const std::string& what) const {
    throw error(path_ + ":" + std::to_string(line) + ": " + what);
  }

 private:
  bool fill() {
    if (eof_) return false;
    int n = gzread(file_, buf_.data(), static_cast<unsigned>(buf_.size()));
    int errnum = Z_OK;
    const char* msg = gzerror(file_, &errnum);
    if (n < 0 || (errnum != Z_OK && errnum != Z_STREAM_END)) {
      std::string why = errnum == Z_ERRNO ? std::strerror(errno) : msg;
      if (errnum == Z_BUF_ERROR) why = "truncated gzip data (" + why + ")";
      throw error(path_ + ": cannot read after line " + std::to_string(line_no_) + ": " + why);
    }
    if (n == 0) {
      eof_ = true;
      return false;
    }
    pos_ = 0;
    end_ = static_cast<std::size_t>(n);
    return true;
  }

  std::string path_;
  gzFile file_ = nullptr;
  std::array<char, 1 << 16> buf_{};
  std::size_t pos_ = 0, end_ = 0;
  std::size_t line_no_ = 0;
  bool eof_ = false;
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

void append_residues(const line_reader& in, const alphabet_map& abc, std::string_view line,
                     std::string& seq) {
  std::size_t base = seq.size();
  seq.resize(base + line.size());
  for (std::size_t i = 0; i < line.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(line[i]);
    char r = abc.to[c];
    if (!r) {
      in.fail("character " + describe_char(c) + " (column " + std::to_string(i + 1) +
              ") is not in the alphabet " + abc.text);
    }
    seq[base + i] = r;
  }
}

void split_header(const line_reader& in, std::string_view header, record& rec) {
  std::size_t end = header.find_first_of(" \t");
  if (end == std::string_view::npos) end = header.size();
  if (end == 0) in.fail("empty sequence name after '" + std::string(1, '>') + "'");
  rec.name.assign(header.substr(0, end));
  std::size_t d = header.find_first_not_of(" \t", end);
  rec.desc.assign(d == std::string_view::npos ? std::string_view{} : header.substr(d));
}

void check_length(const line_reader& in, std::size_t header_line, const record& rec) {
  if (rec.seq.size() > static_cast<std::size_t>(INT32_MAX))
    in.fail_at(header_line, "sequence '" + rec.name + "' is longer than 2^31-1 residues");
}

void read_fasta(line_reader& in, const alphabet_map& abc, std::string& line,
                std::vector<record>& out) {
  std::size_t header_line = 0;
  bool have = true;  // `line` holds the first non-blank line
  for (;;) {
    if (have && !line.empty()) {
      if (line[0] == '>') {
        if (!out.empty() && out.back().seq.empty())
          in.fail_at(header_line, "record '" + out.back().name + "' has no sequence");
        if (!out.empty()) check_length(in, header_line, out.back());
        header_line = in.line_no();
        out.emplace_back();
        split_header(in, std::string_view(line).substr(1), out.back());
      } else {
        if (out.empty()) in.fail("expected a FASTA header starting with '>'");
        if (line[0] == ';') {
          // old-style comment line: ignored
        } else {
          append_residues(in, abc, line, out.back().seq);
        }
      }
    }
    have = in.next(line);
    if (!have) break;
  }
  if (!out.empty() && out.back().seq.empty())
    in.fail_at(header_line, "record '" + out.back().name + "' has no sequence");
  if (!out.empty()) check_length(in, header_line, out.back());
}

void read_fastq(line_reader& in, const alphabet_map& abc, std::string& line,
                std::vector<record>& out) {
  bool have = true;
  for (;;) {
    if (have && line.empty()) {
      have = in.next(line);
      if (!have) break;
      continue;
    }
    if (!have) break;
    if (line[0] != '@') in.fail("expected a FASTQ header starting with '@'");
    std::size_t header_line = in.line_no();
    record rec;
    split_header(in, std::string_view(line).substr(1), rec);
    auto truncated = [&](const char* missing) {
      in.fail_at(header_line,
                 "truncated FASTQ record '" + rec.name + "': the input ends before its " + missing);
    };
    if (!in.next(line)) truncated("sequence line");
    if (line.empty()) in.fail("record '" + rec.name + "' has no sequence");
    append_residues(in, abc, line, rec.seq);
    if (!in.next(line)) truncated("'+' line");
    if (line.empty() || line[0] != '+')
      in.fail("expected the '+' separator line of record '" + rec.name + "'");
    if (!in.next(line)) truncated("quality line");
    if (line.size() != rec.seq.size()) {
      in.fail("quality string of record '" + rec.name + "' has " + std::to_string(line.size()) +
              " characters, its sequence " + std::to_string(rec.seq.size()));
    }
    for (std::size_t i = 0; i < line.size(); ++i) {
      unsigned char c = static_cast<unsigned char>(line[i]);
      if (c < 33 || c > 126)
        in.fail("quality " + describe_char(c) + " (column " + std::to_string(i + 1) +
                ") is outside the FASTQ range '!'..'~'");
    }
    check_length(in, header_line, rec);
    out.push_back(std::move(rec));
    have = in.next(line);
  }
}

std::string temp_name_for(const std::string& path) {
  std::string dir = ".";
  std::string base = path;
  if (auto slash = path.rfind('/'); slash != std::string::npos) {
    dir = slash == 0 ? "/" : path.substr(0, slash);
    base = path.substr(slash + 1);
  }
  return (dir == "/" ? "" : dir) + "/." + base + ".tmp.XXXXXX";
}

/// Creates the temporary file next to `path`; returns its descriptor, fills `tmp`.
int make_temp(const std::string& path, std::string& tmp) {
  if (path.empty()) throw error("output: empty file name");
  tmp = temp_name_for(path);
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw error(path + ": cannot create: " + std::strerror(errno));
  ::fchmod(fd, 0644);
  return fd;
}

void commit_temp(const std::string& tmp, const std::string& path) {
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    throw error(path + ": cannot write: " + std::strerror(e));
  }
}

}  // namespace

std::vector<record> read_sequences(const std::string& path, const std::string& alphabet) {
  alphabet_map abc(alphabet);
  line_reader in(path);
  std::vector<record> out;
  std::string line;
  bool have = false;
  while ((have = in.next(line)) && line.empty()) {
  }
  if (!have) throw error(in.path() + ": no sequences (empty input)");
  if (line[0] == '>') {
    read_fasta(in, abc, line, out);
  } else if (line[0] == '@') {
    read_fastq(in, abc, line, out);
  } else {
    in.fail("expected a FASTA ('>') or FASTQ ('@') header, found " +
            describe_char(static_cast<unsigned char>(line[0])));
  }
  if (out.empty()) throw error(in.path() + ": no sequences (empty input)");
  return out;
}

void write_file_atomically(const std::string& path, const std::string& text) {
  if (path == "-") {
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0)
      throw error(std::string("<stdout>: cannot write: ") + std::strerror(errno));
    return;
  }
  std::string tmp;
  int fd = make_temp(path, tmp);
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw error(path + ": cannot write: " + std::strerror(e));
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    throw error(path + ": cannot write: " + std::strerror(e));
  }
  commit_temp(tmp, path);
}

void write_gzip_atomically(const std::string& path, const std::string& text) {
  std::string tmp;
  int fd = make_temp(path, tmp);
  gzFile gz = gzdopen(fd, "wb6");
  if (!gz) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw error(path + ": cannot write: out of memory");
  }
  std::size_t done = 0;
  bool ok = true;
  while (ok && done < text.size()) {
    unsigned n = static_cast<unsigned>(std::min<std::size_t>(text.size() - done, 1u << 30));
    ok = gzwrite(gz, text.data() + done, n) == static_cast<int>(n);
    done += n;
  }
  if (gzclose(gz) != Z_OK) ok = false;
  if (!ok) {
    ::unlink(tmp.c_str());
    throw error(path + ": cannot write gzip data");
  }
  commit_temp(tmp, path);
}

}  // namespace align
