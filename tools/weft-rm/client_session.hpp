// SPDX-License-Identifier: Apache-2.0
// weft-rm's side of one connected weft process: splits what it sends into protocol lines, takes
// its hello and its replies. Kept apart from the socket code so that the fuzzer
// (tests/fuzz/rm_client_fuzz.cpp) drives exactly what weft-rm runs.
#pragma once

#include <weft/rm_protocol.hpp>

#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>

namespace weft_rm {

/// At most 80 bytes of `s`, control and non-ASCII bytes as '?', safe to print to a terminal.
inline std::string printable(const std::string& s) {
  std::string out;
  for (char c : s.substr(0, 80)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return out;
}

/// One client's protocol state.
struct client_session {
  std::string buf;  ///< bytes of a line not yet ended, always under weft::rm::max_line
  std::optional<weft::rm::hello> hello;
  int streams = 0;
  int pending = 0;  ///< commands sent, replies not yet received
  bool failed = false;

  /// Takes `n` received bytes: each complete line is the hello (first) or a reply. Only the new
  /// bytes are searched for a newline. Returns false when the client must be dropped: no hello
  /// first, or a line (ended or not) longer than weft::rm::max_line. Messages go to `out` and
  /// `err` (either may be null).
  bool receive(const char* data, std::size_t n, std::FILE* out, std::FILE* err) {
    namespace rm = weft::rm;
    std::size_t from = buf.size();
    buf.append(data, n);
    std::size_t start = 0;
    for (std::size_t nl; (nl = buf.find('\n', from)) != std::string::npos; from = start) {
      const std::string line = buf.substr(start, nl - start);
      start = nl + 1;
      if (line.size() + 1 > rm::max_line) {
        if (err)
          std::fprintf(err, "weft-rm: a client sent a line longer than %zu bytes; closed\n",
                       rm::max_line);
        return false;
      }
      if (!hello) {
        hello = rm::parse_hello(line);
        if (!hello) {
          if (err)
            std::fprintf(err, "weft-rm: a client did not say hello ('%s'); closed\n",
                         printable(line).c_str());
          return false;
        }
        // The name is shown on the manager's terminal: no escape sequences get through.
        hello->name = printable(hello->name);
        streams = hello->streams;
        if (out)
          std::fprintf(out, "[%ld %s] connected, %d streams\n", hello->pid, hello->name.c_str(),
                       streams);
        continue;
      }
      auto r = rm::parse_reply(line);
      if (!r) {
        if (err)
          std::fprintf(err, "weft-rm: [%ld] sent an unexpected line: %s\n", hello->pid,
                       printable(line).c_str());
        continue;
      }
      if (pending) --pending;
      streams = r->streams;
      if (!r->ok) failed = true;
      if (out)
        std::fprintf(out, "[%ld %s] %s\n", hello->pid, hello->name.c_str(),
                     printable(line).c_str());
    }
    buf.erase(0, start);
    if (buf.size() + 1 > rm::max_line) {
      if (err)
        std::fprintf(err, "weft-rm: a client sent more than %zu bytes without a newline; closed\n",
                     rm::max_line);
      return false;
    }
    return true;
  }
};

}  // namespace weft_rm
