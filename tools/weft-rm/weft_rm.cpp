// SPDX-License-Identifier: Apache-2.0
// weft-rm: a node resource manager for weft processes. It listens on a socket; weft processes
// started with WEFT_RM=<the same address> connect to it, and it tells them to shrink or expand.
//
//   weft-rm [--socket ADDR] [--wait N] [--timeout SEC] [--pid PID] COMMAND
//       Waits until N processes (default 1) are connected, sends COMMAND to each (or to PID only),
//       prints every reply, and exits 0 when all succeeded, 1 otherwise, 2 on a usage error.
//   weft-rm [--socket ADDR]
//       Interactive: reads lines from standard input. "list" shows the connected processes and
//       their stream counts; "[PID] COMMAND" sends COMMAND to PID or to every process; "help";
//       "exit" (or end of input).
//
// COMMAND is one of: shrink N | stop RANK | expand N | set N | count | quit (rm_protocol.hpp).
// ADDR defaults to $WEFT_RM, else unix:$XDG_RUNTIME_DIR/weft-rm.sock, else
// unix:/tmp/weft-rm-<uid>/rm.sock (the directory made 0700 when missing). A Unix socket is
// created with mode 0600, only in a directory owned by this user or root and writable by no one
// else; only connections from processes of this user are kept (SO_PEERCRED). TCP listens on
// loopback only. Only a stale socket at the path is replaced (any other file is an error), and
// the socket is removed at every exit: success, failure, timeout, end of input, SIGINT, SIGTERM,
// SIGHUP.
// A client that sends a line longer than rm::max_line is disconnected, and so is one that leaves
// more than max_queued bytes of commands unread (sends never block); a connection arriving when
// no file descriptor is left is accepted with a spare one and closed at once. Client names are
// shown with control and non-ASCII bytes as '?'.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <weft/error.hpp>
#include <weft/rm_protocol.hpp>

#include "client_session.hpp"

#include <CLI/CLI.hpp>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rm = weft::rm;

namespace {

/// A connected process: its socket, protocol state and the commands it has not read yet.
struct client : weft_rm::client_session {
  int fd = -1;
  std::string out;
};

/// The most command bytes a client may leave unread: far more than a live process ever lets
/// queue up, and a bound on what one that stopped reading can cost.
constexpr std::size_t max_queued = 64 * 1024;

/// The private directory of the last-resort default address, in /tmp.
std::string fallback_directory() {
  return "/tmp/weft-rm-" + std::to_string(::geteuid());
}

std::string default_address() {
  if (const char* v = std::getenv("WEFT_RM"); v && *v) return v;
  if (const char* d = std::getenv("XDG_RUNTIME_DIR"); d && *d)
    return std::string("unix:") + d + "/weft-rm.sock";
  return "unix:" + fallback_directory() + "/rm.sock";
}

/// Thrown to end the program with `code`; unwinding closes the manager and removes its socket.
struct exit_with {
  int code;
};

[[noreturn]] void die(const std::string& msg, int code = 1) {
  std::fprintf(stderr, "weft-rm: %s\n", msg.c_str());
  throw exit_with{code};
}

/// Set by SIGINT, SIGTERM and SIGHUP: the main loop ends and the socket is removed.
volatile sig_atomic_t g_stop = 0;

void on_signal(int) {
  g_stop = 1;
}

/// Catches the signals that end an interactive session, without SA_RESTART, so that poll()
/// returns and the loop sees g_stop.
void catch_stop_signals() {
  struct sigaction sa {};
  sa.sa_handler = &on_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
}

/// A listening socket and, for a Unix socket, the identity of the file it created (so that only
/// that file is removed at exit).
struct listening {
  int fd = -1;
  dev_t dev = 0;
  ino_t ino = 0;
};

listening listen_on(const rm::address& a) {
  rm::endpoint e;
  try {
    e = rm::endpoint_of(a);
  } catch (const weft::error& ex) {
    die(ex.what(), 2);
  }
  listening l;
  if (a.fam == rm::address::family::unix_socket) {
    // weft processes refuse such a directory (another user could swap the socket): say so here.
    if (std::string why = rm::unsafe_socket_directory(a.path); !why.empty())
      die("not listening on " + a.to_string() + ": " + why);
    // Something at the path: only a stale socket (no listener behind it) is replaced. A regular
    // file, a directory or a live manager's socket is left alone.
    struct stat st {};
    if (::lstat(a.path.c_str(), &st) == 0) {
      if (!S_ISSOCK(st.st_mode)) die(a.path + " exists and is not a socket; not replacing it");
      const int probe = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      if (probe < 0) die(std::string("socket: ") + std::strerror(errno));
      const int rc = ::connect(probe, e.get(), e.length);
      const int err = errno;
      ::close(probe);
      if (rc == 0 || err == EAGAIN) die("another manager listens on " + a.to_string());
      if (err != ECONNREFUSED)
        die("cannot tell whether " + a.path + " is in use: " + std::strerror(err));
      if (::unlink(a.path.c_str()) != 0)
        die("cannot remove the stale socket " + a.path + ": " + std::strerror(errno));
    }
  }
  l.fd = ::socket(e.family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (l.fd < 0) die(std::string("socket: ") + std::strerror(errno));
  int rc;
  if (a.fam == rm::address::family::unix_socket) {
    const mode_t old = ::umask(0177);  // the socket file is created 0600
    rc = ::bind(l.fd, e.get(), e.length);
    ::umask(old);
  } else {
    const int one = 1;
    ::setsockopt(l.fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    rc = ::bind(l.fd, e.get(), e.length);
  }
  if (rc != 0) {
    const int err = errno;
    ::close(l.fd);
    die("cannot bind " + a.to_string() + ": " + std::strerror(err));
  }
  if (a.fam == rm::address::family::unix_socket) {
    struct stat st {};
    if (::stat(a.path.c_str(), &st) == 0) {
      l.dev = st.st_dev;
      l.ino = st.st_ino;
    }
  }
  if (::listen(l.fd, 64) != 0) {
    const int err = errno;
    ::close(l.fd);
    if (a.fam == rm::address::family::unix_socket) ::unlink(a.path.c_str());
    die(std::string("listen: ") + std::strerror(err));
  }
  return l;
}

class manager {
 public:
  explicit manager(rm::address a) : address_(std::move(a)) {
    // Kept open so that an accept() failing for lack of file descriptors can still take the
    // connection off the backlog (and close it) instead of leaving the listener readable.
    spare_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    listen_ = listen_on(address_);
  }
  ~manager() {
    for (auto& [fd, c] : clients_)
      if (c.fd >= 0) ::close(c.fd);
    ::close(listen_.fd);
    if (spare_fd_ >= 0) ::close(spare_fd_);
    if (address_.fam == rm::address::family::unix_socket) {
      // Only the socket this manager made: another manager may have replaced a stale one.
      struct stat st {};
      if (::lstat(address_.path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode) &&
          st.st_dev == listen_.dev && st.st_ino == listen_.ino)
        ::unlink(address_.path.c_str());
    }
  }
  manager(const manager&) = delete;
  manager& operator=(const manager&) = delete;

  /// Processes that said hello.
  std::vector<client*> ready() {
    std::vector<client*> out;
    for (auto& [fd, c] : clients_)
      if (c.hello) out.push_back(&c);
    return out;
  }

  /// Queues `line` for `c` and sends what the socket takes now; the rest goes out as `c` reads.
  /// A client whose unread commands would pass max_queued is dropped instead.
  void send(client& c, const std::string& line) {
    if (c.fd < 0) return;
    if (c.out.size() + line.size() + 1 > max_queued) {
      std::fprintf(stderr, "weft-rm: [%ld %s] leaves %zu bytes of commands unread; dropped\n",
                   c.hello ? c.hello->pid : 0L, c.hello ? c.hello->name.c_str() : "?",
                   c.out.size());
      c.failed = true;
      drop(c);
      return;
    }
    c.out += line;
    c.out += '\n';
    ++c.pending;
    flush(c);
  }

  /// Serves sockets (and stdin when `in` is set) for up to `ms` milliseconds (-1: until input).
  /// Returns false at end of stdin.
  bool step(int ms, bool in, const std::function<bool(const std::string&)>& on_input) {
    using clock = std::chrono::steady_clock;
    // While accepting is paused (out of file descriptors system-wide), the listener is not
    // polled: it would stay readable and make this loop spin.
    const bool accepting = clock::now() >= accept_paused_until_;
    std::vector<pollfd> p;
    if (accepting) p.push_back({listen_.fd, POLLIN, 0});
    if (in) p.push_back({0, POLLIN, 0});
    for (auto& [fd, c] : clients_)
      p.push_back({fd, static_cast<short>(c.out.empty() ? POLLIN : POLLIN | POLLOUT), 0});
    if (!accepting && (ms < 0 || ms > accept_pause_ms)) ms = accept_pause_ms;
    if (g_stop) return false;
    if (::poll(p.data(), p.size(), ms) < 0 && errno != EINTR) die(std::strerror(errno));
    if (g_stop) return false;
    for (const pollfd& q : p) {
      if (!q.revents) continue;
      if (q.fd == listen_.fd) {
        accept_one();
      } else if (in && q.fd == 0) {
        if (!read_input(on_input)) return false;
      } else {
        client& c = clients_[q.fd];
        if (c.fd >= 0 && (q.revents & POLLOUT)) flush(c);
        if (c.fd >= 0 && (q.revents & ~POLLOUT)) read_from(c);
      }
    }
    for (auto it = clients_.begin(); it != clients_.end();) {
      if (it->second.fd < 0) {
        // Kept, not freed: a one-shot run still holds pointers to the clients it sent to.
        auto next = std::next(it);
        gone_.push_back(clients_.extract(it));
        it = next;
      } else {
        ++it;
      }
    }
    return true;
  }

 private:
  static constexpr int accept_pause_ms = 100;

  /// Accepts one connection. Out of file descriptors, it takes the connection off the backlog
  /// with the spare descriptor and closes it (the client sees the connection closed), and if
  /// even that fails it stops polling the listener for a moment.
  void accept_one() {
    const int fd = ::accept4(listen_.fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0) {
      if (address_.fam == rm::address::family::unix_socket) {
        // Commands go only to this user's processes; root gets no exception.
        const long peer = rm::peer_uid(fd);
        if (peer != static_cast<long>(::geteuid())) {
          std::fprintf(stderr, "weft-rm: refused a connection from uid %ld (not this user, %ld)\n",
                       peer, static_cast<long>(::geteuid()));
          ::close(fd);
          return;
        }
      }
      clients_[fd].fd = fd;
      return;
    }
    const int err = errno;
    if (err != EMFILE && err != ENFILE && err != ENOBUFS && err != ENOMEM) return;
    std::fprintf(stderr, "weft-rm: cannot accept a connection (%s); refusing it\n",
                 std::strerror(err));
    if (spare_fd_ >= 0) {
      ::close(spare_fd_);
      const int refused = ::accept4(listen_.fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (refused >= 0) ::close(refused);
      spare_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
      if (refused >= 0) return;
    }
    accept_paused_until_ =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(accept_pause_ms);
  }

  /// Reads standard input and carries out every complete line in it (several commands may come
  /// in one read); at its end, a last line without a newline too. False at the end or on "exit".
  bool read_input(const std::function<bool(const std::string&)>& on_input) {
    char chunk[4096];
    const ssize_t n = ::read(0, chunk, sizeof chunk);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
    if (n <= 0) {
      if (!input_.empty()) {
        std::string last;
        last.swap(input_);
        on_input(last);
      }
      return false;
    }
    input_.append(chunk, static_cast<std::size_t>(n));
    std::size_t start = 0;
    for (std::size_t nl; (nl = input_.find('\n', start)) != std::string::npos; start = nl + 1) {
      if (!on_input(input_.substr(start, nl - start))) return false;
    }
    input_.erase(0, start);
    return true;
  }

  /// Sends what the socket takes of `c`'s queued commands without waiting.
  void flush(client& c) {
    while (!c.out.empty()) {
      const ssize_t n = ::send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
      if (n > 0) {
        c.out.erase(0, static_cast<std::size_t>(n));
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        return;
      } else {
        drop(c);
        return;
      }
    }
  }

  /// Drops a client: closes its socket; step() erases it.
  void drop(client& c) {
    if (c.pending) c.failed = true;
    lost_ += c.pending;
    ::close(c.fd);
    c.fd = -1;
  }

  void read_from(client& c) {
    char chunk[512];
    const ssize_t n = ::recv(c.fd, chunk, sizeof chunk, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) {
      if (c.hello) std::printf("[%ld %s] disconnected\n", c.hello->pid, c.hello->name.c_str());
      std::fflush(stdout);  // stdout is a file or pipe as often as a terminal
      drop(c);
      return;
    }
    if (!c.receive(chunk, static_cast<std::size_t>(n), stdout, stderr)) drop(c);
    std::fflush(stdout);
  }

  rm::address address_;
  int spare_fd_ = -1;
  listening listen_;
  std::chrono::steady_clock::time_point accept_paused_until_{};
  std::map<int, client> clients_;
  std::vector<std::map<int, client>::node_type> gone_;
  std::string input_;  ///< standard input not yet ended by a newline
  int lost_ = 0;
};

void usage(int code) {
  std::fprintf(code ? stderr : stdout,
               "usage: weft-rm [--socket ADDR] [--wait N] [--timeout SEC] [--pid PID] [COMMAND]\n"
               "  COMMAND: shrink N | stop RANK | expand N | set N | count | quit\n"
               "  without COMMAND: interactive (list, [PID] COMMAND, help, exit)\n"
               "  ADDR: unix:/path or tcp:127.0.0.1:PORT (default %s)\n",
               default_address().c_str());
  std::exit(code);
}

int number_arg(const std::string& flag, const std::string& v) {
  char* end = nullptr;
  const long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end || n < 0 || n > 1000000) die(flag + " needs a number", 2);
  return static_cast<int>(n);
}

}  // namespace

int run(int argc, char** argv) {
  std::string addr = default_address();
  int wait_for = 1;
  int timeout_s = 30;
  long only_pid = 0;
  std::vector<std::string> words;
  // CLI11 walks the arguments ("--name value" or "--name=value", options before or after the
  // command); each value is checked here so that the messages stay weft-rm's own.
  CLI::App app("weft-rm", "weft-rm");
  app.set_help_flag();  // usage() is the help, as before
  app.allow_extras();
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  bool help = false;
  app.add_flag("-h,--help", help);
  app.add_option("--socket", addr);
  app.add_option_function<std::string>(
      "--wait", [&](const std::string& v) { wait_for = number_arg("--wait", v); });
  app.add_option_function<std::string>(
      "--timeout", [&](const std::string& v) { timeout_s = number_arg("--timeout", v); });
  app.add_option_function<std::string>(
      "--pid", [&](const std::string& v) { only_pid = number_arg("--pid", v); });
  app.add_option("COMMAND", words);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ArgumentMismatch& e) {
    // "--wait: 1 required TEXT missing": an option at the end without its value.
    const std::string what = e.what();
    const std::string name = what.substr(0, what.find(':'));
    if (name == "--socket") usage(2);
    die(name + " needs a number", 2);
  } catch (const CLI::ParseError& e) {
    die(e.what(), 2);
  }
  if (help) usage(0);
  if (!app.remaining().empty()) die("unknown option " + app.remaining().front(), 2);
  rm::address address;
  try {
    address = rm::parse_address(addr, "--socket");
  } catch (const weft::error& e) {
    die(e.what(), 2);
  }

  if (address.fam == rm::address::family::unix_socket &&
      address.path == fallback_directory() + "/rm.sock") {
    // A directory another user made first is refused by the check in listen_on().
    if (::mkdir(fallback_directory().c_str(), 0700) != 0 && errno != EEXIST)
      die("cannot create " + fallback_directory() + ": " + std::strerror(errno));
  }

  if (!words.empty()) {
    std::string line;
    for (const auto& w : words) line += (line.empty() ? "" : " ") + w;
    std::string why;
    if (!rm::parse_command(line, why)) die("bad command '" + line + "': " + why, 2);
    catch_stop_signals();
    manager m(address);
    using clock = std::chrono::steady_clock;
    const auto deadline = clock::now() + std::chrono::seconds(timeout_s);
    auto targets = [&] {
      std::vector<client*> out;
      for (client* c : m.ready())
        if (!only_pid || c->hello->pid == only_pid) out.push_back(c);
      return out;
    };
    const std::size_t need = only_pid ? 1 : static_cast<std::size_t>(std::max(wait_for, 1));
    while (targets().size() < need) {
      if (clock::now() > deadline) die("timed out waiting for weft processes to connect");
      if (!m.step(100, false, nullptr)) die("interrupted");
    }
    std::vector<client*> ts = targets();
    for (client* c : ts) m.send(*c, line);
    for (;;) {
      bool busy = false;
      for (client* c : ts) busy |= c->pending > 0 && !c->failed && c->fd >= 0;
      if (!busy) break;
      if (clock::now() > deadline) die("timed out waiting for replies");
      if (!m.step(100, false, nullptr)) die("interrupted");
    }
    bool ok = true;
    for (client* c : ts) ok &= !c->failed;
    return ok ? 0 : 1;
  }

  catch_stop_signals();
  manager m(address);
  std::printf("weft-rm: listening on %s (start processes with WEFT_RM=%s); type help\n",
              address.to_string().c_str(), address.to_string().c_str());
  std::fflush(stdout);
  auto on_input = [&](const std::string& raw) {
    std::string line = raw;
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
    if (line.empty()) return true;
    if (line == "exit") return false;
    if (line == "help") {
      std::printf("list | [PID] shrink N | stop RANK | expand N | set N | count | quit | exit\n");
    } else if (line == "list") {
      for (client* c : m.ready())
        std::printf("%ld %s streams=%d\n", c->hello->pid, c->hello->name.c_str(), c->streams);
      if (m.ready().empty()) std::printf("(no process connected)\n");
    } else {
      long pid = 0;
      if (std::isdigit(static_cast<unsigned char>(line[0]))) {
        const auto sp = line.find(' ');
        pid = std::strtol(line.substr(0, sp).c_str(), nullptr, 10);
        line = sp == std::string::npos ? "" : line.substr(sp + 1);
      }
      std::string why;
      if (!rm::parse_command(line, why)) {
        std::printf("bad command: %s\n", why.c_str());
      } else {
        int sent = 0;
        for (client* c : m.ready()) {
          if (pid && c->hello->pid != pid) continue;
          m.send(*c, line);
          ++sent;
        }
        if (!sent) std::printf("no such process\n");
      }
    }
    std::fflush(stdout);
    return true;
  };
  catch_stop_signals();
  while (m.step(-1, true, on_input)) {
  }
  return 0;
}

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const exit_with& e) {
    return e.code;
  }
}
