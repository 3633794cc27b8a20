// SPDX-License-Identifier: Apache-2.0
#include "weft/rm_protocol.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "weft/error.hpp"
// The public spelling of the checks: the libFuzzer build compiles this file with only
// runtime/include on its path (tests/fuzz/CMakeLists.txt).
#include "weft/ext/assert.hpp"

namespace weft::rm {

namespace {

std::vector<std::string_view> tokens(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

/// A decimal number in [lo, hi], digits only.
std::optional<int> number(std::string_view s, int lo, int hi) {
  ext::assert_invariant([lo, hi] { return lo <= hi; },
                        "rm protocol: a number's range is not empty");
  if (s.empty() || s.size() > 9) return std::nullopt;
  for (char c : s)
    if (c < '0' || c > '9') return std::nullopt;
  int v = 0;
  const std::from_chars_result r = std::from_chars(s.data(), s.data() + s.size(), v);
  ext::assert_invariant([&r, s] { return r.ec == std::errc() && r.ptr == s.data() + s.size(); },
                        "rm protocol: nine digits at most always fit an int, and are all read");
  if (v < lo || v > hi) return std::nullopt;
  return v;
}

std::string printable(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 32)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (s.size() > 32) out += "...";
  return out;
}

std::optional<std::string_view> field(std::string_view tok, std::string_view key) {
  if (tok.size() <= key.size() || tok.substr(0, key.size()) != key || tok[key.size()] != '=')
    return std::nullopt;
  return tok.substr(key.size() + 1);
}

}  // namespace

std::optional<command> parse_command(std::string_view line, std::string& error) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.size() + 1 > max_line) {
    error = "line too long";
    return std::nullopt;
  }
  for (char c : line) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
      error = "non-printable character in command";
      return std::nullopt;
    }
  }
  const auto t = tokens(line);
  if (t.empty()) {
    error = "empty command";
    return std::nullopt;
  }
  struct spec {
    std::string_view name;
    command_kind kind;
    bool has_value;
    int lo;
  };
  static constexpr spec specs[] = {
      {"shrink", command_kind::shrink, true, 1}, {"stop", command_kind::stop, true, 0},
      {"expand", command_kind::expand, true, 1}, {"set", command_kind::set, true, 1},
      {"count", command_kind::count, false, 0},  {"quit", command_kind::quit, false, 0},
  };
  for (const spec& s : specs) {
    if (t[0] != s.name) continue;
    if (!s.has_value) {
      if (t.size() != 1) {
        error = std::string(s.name) + " takes no argument";
        return std::nullopt;
      }
      return command{s.kind, 0};
    }
    if (t.size() != 2) {
      error = std::string(s.name) + " takes one number";
      return std::nullopt;
    }
    auto v = number(t[1], s.lo, max_count);
    if (!v) {
      error = std::string(s.name) + ": '" + printable(t[1]) + "' is not a number in [" +
              std::to_string(s.lo) + ", " + std::to_string(max_count) + "]";
      return std::nullopt;
    }
    ext::assert_invariant([&v, &s] { return *v >= s.lo && *v <= max_count; },
                          "rm protocol: a command's value lies in the range it was parsed into");
    return command{s.kind, *v};
  }
  error = "unknown command '" + printable(t[0]) + "'";
  return std::nullopt;
}

std::string format_command(const command& c) {
  switch (c.kind) {
    case command_kind::shrink:
      return "shrink " + std::to_string(c.value);
    case command_kind::stop:
      return "stop " + std::to_string(c.value);
    case command_kind::expand:
      return "expand " + std::to_string(c.value);
    case command_kind::set:
      return "set " + std::to_string(c.value);
    case command_kind::count:
      return "count";
    case command_kind::quit:
      break;
  }
  return "quit";
}

std::string format_reply(const reply& r) {
  std::string out = (r.ok ? "ok streams=" : "error streams=") + std::to_string(r.streams);
  if (!r.ok || !r.message.empty()) {
    std::string msg = r.message.empty() ? "failed" : r.message;
    for (char& c : msg)
      if (c == '\n' || c == '\r') c = ' ';
    out += ' ' + msg;
  }
  if (out.size() + 1 > max_line) out.resize(max_line - 1);
  ext::assert_invariant([&out] { return out.size() < max_line; },
                        "rm protocol: a reply fits one line with its newline");
  return out;
}

std::optional<reply> parse_reply(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  const auto t = tokens(line);
  if (t.size() < 2 || (t[0] != "ok" && t[0] != "error")) return std::nullopt;
  auto n = field(t[1], "streams");
  if (!n) return std::nullopt;
  auto v = number(*n, 0, 1 << 20);
  if (!v) return std::nullopt;
  reply r;
  r.ok = t[0] == "ok";
  r.streams = *v;
  const auto at = static_cast<std::size_t>(t[1].data() - line.data()) + t[1].size();
  if (at < line.size()) {
    std::string_view rest = line.substr(at);
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    r.message = std::string(rest);
  }
  return r;
}

std::string format_hello(const hello& h) {
  std::string name;
  for (char c : h.name) name += (c > 0x20 && c < 0x7f) ? c : '_';
  if (name.empty()) name = "?";
  if (name.size() > 64) name.resize(64);
  ext::assert_invariant([&name] { return !name.empty() && name.size() <= 64; },
                        "rm protocol: a hello names the program in 1 to 64 printable bytes");
  return "hello pid=" + std::to_string(h.pid) + " streams=" + std::to_string(h.streams) +
         " name=" + name;
}

std::optional<hello> parse_hello(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  const auto t = tokens(line);
  if (t.size() != 4 || t[0] != "hello") return std::nullopt;
  auto pid = field(t[1], "pid");
  auto streams = field(t[2], "streams");
  auto name = field(t[3], "name");
  if (!pid || !streams || !name) return std::nullopt;
  auto p = number(*pid, 1, 999999999);
  auto s = number(*streams, 0, 1 << 20);
  if (!p || !s) return std::nullopt;
  return hello{*p, *s, std::string(*name)};
}

std::string address::to_string() const {
  if (fam == family::unix_socket) return "unix:" + path;
  const bool v6 = host.find(':') != std::string::npos;
  return "tcp:" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

address parse_address(std::string_view text, std::string_view origin) {
  auto fail = [&](const std::string& why) -> error {
    return error(errc::invalid_config,
                 "weft: " + std::string(origin) + "='" + std::string(text) + "': " + why);
  };
  address a;
  if (text.substr(0, 5) == "unix:") {
    a.fam = address::family::unix_socket;
    a.path = std::string(text.substr(5));
    if (a.path.empty()) throw fail("the socket path is empty");
    if (a.path.size() >= 108) throw fail("the socket path is longer than 107 bytes");
    return a;
  }
  if (text.substr(0, 4) != "tcp:") throw fail("expected unix:/path or tcp:127.0.0.1:PORT");
  std::string_view rest = text.substr(4);
  std::string_view host;
  std::string_view port;
  if (!rest.empty() && rest.front() == '[') {
    const auto close = rest.find(']');
    if (close == std::string_view::npos || close + 1 >= rest.size() || rest[close + 1] != ':')
      throw fail("expected [v6-address]:PORT");
    host = rest.substr(1, close - 1);
    port = rest.substr(close + 2);
  } else {
    const auto colon = rest.rfind(':');
    if (colon == std::string_view::npos) throw fail("expected HOST:PORT");
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  }
  auto p = number(port, 1, 65535);
  if (!p) throw fail("the port must be a number in [1, 65535]");
  a.fam = address::family::tcp;
  a.port = *p;
  if (host == "localhost") host = "127.0.0.1";
  const std::string h(host);
  char canonical[INET6_ADDRSTRLEN] = {};
  if (h.find(':') != std::string::npos) {
    in6_addr v6{};
    if (::inet_pton(AF_INET6, h.c_str(), &v6) != 1)
      throw fail("'" + h + "' is not an IPv6 address");
    if (!IN6_IS_ADDR_LOOPBACK(&v6))
      throw fail("only loopback addresses are allowed (the protocol has no authentication)");
    ::inet_ntop(AF_INET6, &v6, canonical, sizeof canonical);
  } else {
    // inet_pton accepts exactly four decimal octets (no leading zeros, no octal or hex).
    in_addr v4{};
    if (::inet_pton(AF_INET, h.c_str(), &v4) != 1)
      throw fail("'" + h + "' is not an IPv4 address (four decimal octets, no leading zeros)");
    if ((ntohl(v4.s_addr) >> 24) != 127)
      throw fail("only loopback addresses are allowed (the protocol has no authentication)");
    ::inet_ntop(AF_INET, &v4, canonical, sizeof canonical);
  }
  ext::assert_invariant([&canonical] { return canonical[0] != '\0'; },
                        "rm protocol: inet_ntop formats the address inet_pton accepted");
  a.host = canonical;
  return a;
}

endpoint endpoint_of(const address& a) {
  endpoint e;
  auto fail = [&](const std::string& why) {
    return error(errc::invalid_config,
                 "weft: resource manager address '" + a.to_string() + "': " + why);
  };
  if (a.fam == address::family::unix_socket) {
    if (a.path.empty() || a.path.size() >= sizeof(sockaddr_un::sun_path))
      throw fail("the socket path is empty or longer than 107 bytes");
    auto* sa = reinterpret_cast<sockaddr_un*>(&e.storage);
    sa->sun_family = AF_UNIX;
    std::memcpy(sa->sun_path, a.path.c_str(), a.path.size() + 1);
    e.family = AF_UNIX;
    e.length = sizeof(sockaddr_un);
    return e;
  }
  if (a.port < 1 || a.port > 65535) throw fail("the port is not in [1, 65535]");
  if (a.host.find(':') != std::string::npos) {
    auto* sa = reinterpret_cast<sockaddr_in6*>(&e.storage);
    sa->sin6_family = AF_INET6;
    sa->sin6_port = htons(static_cast<std::uint16_t>(a.port));
    if (::inet_pton(AF_INET6, a.host.c_str(), &sa->sin6_addr) != 1 ||
        !IN6_IS_ADDR_LOOPBACK(&sa->sin6_addr))
      throw fail("not a loopback IPv6 address");
    e.family = AF_INET6;
    e.length = sizeof(sockaddr_in6);
    return e;
  }
  auto* sa = reinterpret_cast<sockaddr_in*>(&e.storage);
  sa->sin_family = AF_INET;
  sa->sin_port = htons(static_cast<std::uint16_t>(a.port));
  if (::inet_pton(AF_INET, a.host.c_str(), &sa->sin_addr) != 1 ||
      (ntohl(sa->sin_addr.s_addr) >> 24) != 127)
    throw fail("not a loopback IPv4 address");
  e.family = AF_INET;
  e.length = sizeof(sockaddr_in);
  return e;
}

std::string unsafe_socket_directory(const std::string& path) {
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return {};
  const uid_t me = ::geteuid();
  if (st.st_uid != me && st.st_uid != 0) {
    return "its directory " + dir + " belongs to uid " + std::to_string(st.st_uid) +
           ", neither this user (uid " + std::to_string(me) + ") nor root";
  }
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return "its directory " + dir + " is writable by " +
           ((st.st_mode & S_IWOTH) ? "others" : "its group") + " (mode " + mode + ")";
  }
  return {};
}

long peer_uid(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof cred) return -1;
  return static_cast<long>(cred.uid);
}

}  // namespace weft::rm
