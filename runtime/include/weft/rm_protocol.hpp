// SPDX-License-Identifier: Apache-2.0
// The resource-manager protocol: one line of text per message, in both directions.
//
//   weft -> manager, on connect:  hello pid=<pid> streams=<n> name=<program>
//   manager -> weft (commands):   shrink <n> | stop <rank> | expand <n> | set <n> | count | quit
//   weft -> manager (replies):    ok streams=<n>
//                                 error streams=<n> <message>
//
// Lines end with '\n' (a '\r' before it is ignored) and are at most max_line bytes long with it.
// Tokens are separated by single or repeated spaces; numbers are decimal, without sign. Every
// command gets exactly one reply, in order; `quit` gets "ok" and then the connection is closed.
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace weft::rm {

/// Longest line either side may send, '\n' included. Longer lines are rejected, not truncated.
inline constexpr std::size_t max_line = 256;
/// Largest count or rank a command may carry.
inline constexpr int max_count = 4096;

/// What a manager asks.
enum class command_kind { shrink, stop, expand, set, count, quit };

/// A parsed command. `value` is n (shrink, expand, set) or the rank (stop); 0 otherwise.
struct command {
  command_kind kind;
  int value = 0;
  bool operator==(const command&) const = default;
};

/// Parses one line (without its '\n'). Returns the command, or nullopt with `error` set to why.
std::optional<command> parse_command(std::string_view line, std::string& error);
/// The line (without '\n') that sends `c`.
std::string format_command(const command& c);

/// A reply: success or failure, and the stream count after the command.
struct reply {
  bool ok = false;
  int streams = 0;
  std::string message;  // empty for ok
};
/// The line (without '\n') that sends `r`. Newlines in the message become spaces.
std::string format_reply(const reply& r);
/// Parses a reply line; nullopt if it is not one.
std::optional<reply> parse_reply(std::string_view line);

/// What a process says when it connects.
struct hello {
  long pid = 0;
  int streams = 0;
  std::string name;
};
std::string format_hello(const hello& h);
std::optional<hello> parse_hello(std::string_view line);

/// A manager's address: "unix:/path/to.sock" or "tcp:127.0.0.1:PORT" (also "tcp:localhost:PORT",
/// "tcp:[::1]:PORT"). Only loopback TCP addresses are accepted: the protocol has no
/// authentication, so it must not be reachable from other machines.
struct address {
  enum class family { unix_socket, tcp } fam = family::unix_socket;
  std::string path;  // unix
  std::string host;  // tcp: a loopback address in inet_ntop's canonical form
  int port = 0;      // tcp
  /// Back to the text form.
  std::string to_string() const;
};
/// Parses an address; throws weft::error(errc::invalid_config) naming `origin` when malformed or
/// not loopback. A TCP host is parsed by inet_pton, and the parsed address is what is checked.
address parse_address(std::string_view text, std::string_view origin);

/// An address in the form socket(), bind() and connect() take.
struct endpoint {
  int family = AF_UNSPEC;  ///< AF_UNIX, AF_INET or AF_INET6
  sockaddr_storage storage{};
  socklen_t length = 0;
  /// The address for bind() and connect().
  const sockaddr* get() const noexcept { return reinterpret_cast<const sockaddr*>(&storage); }
};
/// The endpoint of a parsed address. Throws weft::error(errc::invalid_config) when `a` was not
/// made by parse_address and holds no valid loopback or Unix address, so that a bad host can
/// never become the unspecified address (all interfaces).
endpoint endpoint_of(const address& a);

/// Why the directory holding the Unix socket `path` is no place to meet a manager, or an empty
/// string when it is one (or cannot be examined: connect() or bind() then reports why). It must
/// be owned by the effective user or by root, and writable by neither its group nor others, who
/// could otherwise put a socket of their own at `path`. The text names the directory.
std::string unsafe_socket_directory(const std::string& path);

/// The effective uid of the process at the other end of the connected Unix socket `fd`, as the
/// kernel recorded it at its connect() or listen() (SO_PEERCRED); -1 when unknown.
long peer_uid(int fd);

}  // namespace weft::rm
