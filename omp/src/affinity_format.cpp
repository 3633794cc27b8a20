// OpenMP 5's thread affinity display: the affinity-format-var (OMP_AFFINITY_FORMAT,
// omp_set/get_affinity_format), omp_capture_affinity and omp_display_affinity, and the display
// OMP_DISPLAY_AFFINITY asks for when a member's affinity changes. The format language and the
// output are libgomp's: `%[0][.][size]type` with the short (t T L n N a H P i A) and long
// (`{team_num}`, ...) field names, left-justified unless `.`, zero-padded with `0.`; a malformed
// format stops the program with libgomp's message.
#include "internal.hpp"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <tuple>

namespace weft::omp {
namespace {

std::mutex g_format_mutex;
std::string g_format = "level %L thread %i affinity %A";  // guarded by g_format_mutex

// Appends to a bounded buffer, counting what would have been written.
class sink {
 public:
  sink(char* buffer, std::size_t size) : buffer_(buffer), size_(size) {}
  void put(const char* s, std::size_t n) {
    if (buffer_ && len_ < size_) std::memcpy(buffer_ + len_, s, std::min(n, size_ - len_));
    len_ += n;
  }
  void put(const std::string& s) { put(s.data(), s.size()); }
  void repeat(char c, std::size_t n) {
    if (buffer_ && len_ < size_) std::memset(buffer_ + len_, c, std::min(n, size_ - len_));
    len_ += n;
  }
  std::size_t size() const { return len_; }

 private:
  char* buffer_;
  std::size_t size_;
  std::size_t len_ = 0;
};

constexpr std::size_t no_size = static_cast<std::size_t>(-1);

// A number (decimal, or 0x-prefixed hex): zero padding goes after the sign or the prefix.
void put_number(sink& out, bool zero, bool right, std::size_t width, const std::string& s) {
  if (width == no_size || s.size() >= width) {
    out.put(s);
    return;
  }
  const std::size_t pad = width - s.size();
  if (zero) {
    std::size_t prefix = 0;
    if (s[0] == '-') prefix = 1;
    if (s.size() > 1 && s[0] == '0' && s[1] == 'x') prefix = 2;
    out.put(s.data(), prefix);
    out.repeat('0', pad);
    out.put(s.data() + prefix, s.size() - prefix);
  } else if (right) {
    out.repeat(' ', pad);
    out.put(s);
  } else {
    out.put(s);
    out.repeat(' ', pad);
  }
}

void put_text(sink& out, bool right, std::size_t width, const std::string& s) {
  put_number(out, false, right, width, s);
}

std::string host_name() {
  char name[256];
  if (gethostname(name, sizeof name - 1) == 0) {
    name[sizeof name - 1] = '\0';
    return name;
  }
  return "node";
}

// The CPUs of the calling unit's stream (its place), or of the process where the stream is
// unbound, as libgomp lists them: ascending ranges, "0-3,8".
std::string cpu_list() {
  std::vector<int> cpus;
  if (execution_stream* s = this_unit::stream()) cpus = s->cpus();
  if (cpus.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
      for (int i = 0; i < CPU_SETSIZE; ++i) {
        if (CPU_ISSET(i, &set)) cpus.push_back(i);
      }
    }
  }
  std::sort(cpus.begin(), cpus.end());
  std::string s;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!s.empty()) s += ',';
    s += std::to_string(cpus[i]);
    if (j > i) s += '-' + std::to_string(cpus[j]);
    i = j + 1;
  }
  return s.empty() ? "0" : s;
}

struct field_name {
  const char* name;
  char type;
};
constexpr field_name long_names[] = {
    {"team_num", 't'},         {"num_teams", 'T'},      {"nesting_level", 'L'}, {"thread_num", 'n'},
    {"num_threads", 'N'},      {"ancestor_tnum", 'a'},  {"host", 'H'},          {"process_id", 'P'},
    {"native_thread_id", 'i'}, {"thread_affinity", 'A'}};

std::size_t expand(char* buffer, std::size_t size, const char* format, const context& c) {
  sink out(buffer, size);
  const char* f = format;
  for (;;) {
    const char* p = std::strchr(f, '%');
    if (!p) p = f + std::strlen(f);
    out.put(f, static_cast<std::size_t>(p - f));
    if (*p == '\0') break;
    ++p;
    if (*p == '%') {
      out.put("%", 1);
      f = p + 1;
      continue;
    }
    bool zero = false, right = false;
    std::size_t width = no_size;
    if (*p == '0') {
      zero = true;
      ++p;
      if (*p != '.') fatal("leading zero not followed by dot in affinity format");
    }
    if (*p == '.') {
      right = true;
      ++p;
    }
    if (*p >= '1' && *p <= '9') {
      char* end = nullptr;
      width = std::strtoul(p, &end, 10);
      p = end;
    } else if (zero || right) {
      fatal("leading zero or right justification in affinity format requires size");
    }
    char type = *p;
    if (type == '{') {
      for (const field_name& n : long_names) {
        const std::size_t len = std::strlen(n.name);
        if (std::strncmp(p + 1, n.name, len) == 0 && p[len + 1] == '}') {
          type = n.type;
          p += len + 1;
          break;
        }
      }
      if (type == '{') {
        const char* close = std::strchr(p + 1, '}');
        if (close) {
          fatal("unsupported long type name '" +
                std::string(p + 1, static_cast<std::size_t>(close - (p + 1))) +
                "' in affinity format");
        }
        fatal(std::string("unterminated long type name '") + (p + 1) + "' in affinity format");
      }
    }
    const bool in_team = c.t && c.level > 0;
    switch (type) {
      case 't':
        put_number(out, zero, right, width, "0");
        break;
      case 'T':
        put_number(out, zero, right, width, "1");
        break;
      case 'L':
        put_number(out, zero, right, width, std::to_string(c.level));
        break;
      case 'n':
        put_number(out, zero, right, width, std::to_string(c.num));
        break;
      case 'N':
        put_number(out, zero, right, width, std::to_string(in_team ? c.t->nthreads : 1));
        break;
      case 'a':
        put_number(out, zero, right, width,
                   std::to_string(in_team && c.parent ? c.parent->num : -1));
        break;
      case 'H':
        put_text(out, right, width, host_name());
        break;
      case 'P':
        put_number(out, zero, right, width, std::to_string(getpid()));
        break;
      case 'i': {
        // The kernel thread's pthread_t, as libgomp prints its thread handle.
        char hex[32];
        std::snprintf(hex, sizeof hex, "0x%" PRIxPTR, static_cast<std::uintptr_t>(pthread_self()));
        put_number(out, zero, right, width, hex);
        break;
      }
      case 'A':
        put_text(out, right, width, cpu_list());
        break;
      default:
        fatal(std::string("unsupported type ") + type + " in affinity format");
    }
    f = p + 1;
  }
  return out.size();
}

// What a stream last displayed for OMP_DISPLAY_AFFINITY: level, thread number, team size and
// kernel thread (a stream is one kernel thread, so this is libgomp's per-thread record).
thread_local std::tuple<int, int, int> t_displayed{-1, -1, -1};

std::size_t capture(char* buffer, std::size_t size, const char* format) {
  settings();
  std::string fmt;
  if (format && *format) {
    fmt = format;
  } else {
    const std::lock_guard lock(g_format_mutex);
    fmt = g_format;
  }
  const std::size_t n = expand(buffer, size, fmt.c_str(), current());
  if (buffer && size) buffer[std::min(n, size - 1)] = '\0';
  return n;
}

void display(const char* format) {
  const std::size_t n = capture(nullptr, 0, format);
  std::string line(n + 1, '\0');
  capture(line.data(), line.size(), format);
  line[n] = '\n';
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace

void set_affinity_format(const char* format) {
  const std::lock_guard lock(g_format_mutex);
  g_format = format ? format : "";
}

void display_affinity_if_changed(const context& c) {
  const std::tuple<int, int, int> now{c.level, c.num, c.t && c.level > 0 ? c.t->nthreads : 1};
  if (now == t_displayed) return;
  t_displayed = now;
  display(nullptr);
}

}  // namespace weft::omp

using namespace weft::omp;

extern "C" {

void omp_set_affinity_format(const char* format) {
  settings();  // reads OMP_AFFINITY_FORMAT first, so that it does not replace this one
  set_affinity_format(format);
}

std::size_t omp_get_affinity_format(char* buffer, std::size_t size) {
  settings();
  const std::lock_guard lock(g_format_mutex);
  if (buffer && size) {
    const std::size_t n = std::min(g_format.size(), size - 1);
    std::memcpy(buffer, g_format.data(), n);
    buffer[n] = '\0';
  }
  return g_format.size();
}

std::size_t omp_capture_affinity(char* buffer, std::size_t size, const char* format) {
  return capture(buffer, size, format);
}

void omp_display_affinity(const char* format) {
  display(format);
}

}  // extern "C"
