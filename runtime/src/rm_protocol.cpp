#include "weft/rm_protocol.hpp"

#include <charconv>
#include <string>
#include <vector>

#include "weft/error.hpp"

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
  if (s.empty() || s.size() > 9) return std::nullopt;
  for (char c : s)
    if (c < '0' || c > '9') return std::nullopt;
  int v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
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
  if (host == "localhost") {
    a.host = "127.0.0.1";
  } else if (host == "::1") {
    a.host = "::1";
  } else {
    // 127.0.0.0/8, written as four decimal octets.
    int octets[4];
    std::size_t i = 0;
    std::string_view h = host;
    for (int k = 0; k < 4; ++k) {
      const auto dot = k < 3 ? h.find('.', i) : h.size();
      if (dot == std::string_view::npos)
        throw fail("'" + std::string(host) + "' is not an address");
      auto o = number(h.substr(i, dot - i), 0, 255);
      if (!o) throw fail("'" + std::string(host) + "' is not an IPv4 address");
      octets[k] = *o;
      i = dot + 1;
    }
    if (octets[0] != 127)
      throw fail("only loopback addresses are allowed (the protocol has no authentication)");
    a.host = std::string(host);
  }
  return a;
}

}  // namespace weft::rm
