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
// unix:/tmp/weft-rm-<uid>.sock. A Unix socket is created with mode 0600; TCP listens on loopback
// only.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <weft/error.hpp>
#include <weft/rm_protocol.hpp>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rm = weft::rm;

namespace {

struct client {
  int fd = -1;
  std::string buf;
  std::optional<rm::hello> hello;
  int streams = 0;
  int pending = 0;  // commands sent, replies not yet received
  bool failed = false;
};

std::string default_address() {
  if (const char* v = std::getenv("WEFT_RM"); v && *v) return v;
  if (const char* d = std::getenv("XDG_RUNTIME_DIR"); d && *d)
    return std::string("unix:") + d + "/weft-rm.sock";
  return "unix:/tmp/weft-rm-" + std::to_string(::getuid()) + ".sock";
}

[[noreturn]] void die(const std::string& msg, int code = 1) {
  std::fprintf(stderr, "weft-rm: %s\n", msg.c_str());
  std::exit(code);
}

int listen_on(const rm::address& a) {
  if (a.fam == rm::address::family::unix_socket) {
    // A stale socket file (no listener) is replaced; a live one is an error.
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    std::strncpy(sa.sun_path, a.path.c_str(), sizeof sa.sun_path - 1);
    int probe = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (::connect(probe, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0)
      die("another manager listens on " + a.to_string());
    ::close(probe);
    ::unlink(a.path.c_str());
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const mode_t old = ::umask(0177);  // the socket file is created 0600
    const int rc = ::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
    ::umask(old);
    if (rc != 0) die("cannot bind " + a.path + ": " + std::strerror(errno));
    ::chmod(a.path.c_str(), 0600);
    if (::listen(fd, 64) != 0) die(std::string("listen: ") + std::strerror(errno));
    return fd;
  }
  const bool v6 = a.host.find(':') != std::string::npos;
  int fd = ::socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  int rc;
  if (v6) {
    sockaddr_in6 sa{};
    sa.sin6_family = AF_INET6;
    sa.sin6_port = htons(static_cast<std::uint16_t>(a.port));
    ::inet_pton(AF_INET6, a.host.c_str(), &sa.sin6_addr);
    rc = ::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
  } else {
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<std::uint16_t>(a.port));
    ::inet_pton(AF_INET, a.host.c_str(), &sa.sin_addr);
    rc = ::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
  }
  if (rc != 0) die("cannot bind " + a.to_string() + ": " + std::strerror(errno));
  if (::listen(fd, 64) != 0) die(std::string("listen: ") + std::strerror(errno));
  return fd;
}

class manager {
 public:
  explicit manager(rm::address a) : address_(std::move(a)), listen_fd_(listen_on(address_)) {}
  ~manager() {
    for (auto& [fd, c] : clients_) ::close(fd);
    ::close(listen_fd_);
    if (address_.fam == rm::address::family::unix_socket) ::unlink(address_.path.c_str());
  }

  /// Processes that said hello.
  std::vector<client*> ready() {
    std::vector<client*> out;
    for (auto& [fd, c] : clients_)
      if (c.hello) out.push_back(&c);
    return out;
  }

  /// Sends `line` to `c`.
  void send(client& c, const std::string& line) {
    const std::string msg = line + "\n";
    if (::send(c.fd, msg.data(), msg.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(msg.size())) {
      c.failed = true;
      return;
    }
    ++c.pending;
  }

  /// Serves sockets (and stdin when `in` is set) for up to `ms` milliseconds (-1: until input).
  /// Returns false at end of stdin.
  bool step(int ms, bool in, const std::function<bool(const std::string&)>& on_input) {
    std::vector<pollfd> p{{listen_fd_, POLLIN, 0}};
    if (in) p.push_back({0, POLLIN, 0});
    for (auto& [fd, c] : clients_) p.push_back({fd, POLLIN, 0});
    if (::poll(p.data(), p.size(), ms) < 0 && errno != EINTR) die(std::strerror(errno));
    for (const pollfd& q : p) {
      if (!q.revents) continue;
      if (q.fd == listen_fd_) {
        const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd >= 0) clients_[fd].fd = fd;
      } else if (in && q.fd == 0) {
        std::string line;
        if (!std::getline(std::cin, line)) return false;
        if (!on_input(line)) return false;
      } else {
        read_from(clients_[q.fd]);
      }
    }
    for (auto it = clients_.begin(); it != clients_.end();) {
      if (it->second.fd < 0) {
        it = clients_.erase(it);
      } else {
        ++it;
      }
    }
    return true;
  }

 private:
  void read_from(client& c) {
    char chunk[512];
    const ssize_t n = ::recv(c.fd, chunk, sizeof chunk, 0);
    if (n <= 0) {
      if (c.hello) std::printf("[%ld %s] disconnected\n", c.hello->pid, c.hello->name.c_str());
      if (c.pending) c.failed = true;
      ::close(c.fd);
      c.fd = -1;
      lost_ += c.pending;
      return;
    }
    c.buf.append(chunk, static_cast<std::size_t>(n));
    for (std::size_t nl; (nl = c.buf.find('\n')) != std::string::npos;) {
      const std::string line = c.buf.substr(0, nl);
      c.buf.erase(0, nl + 1);
      if (!c.hello) {
        c.hello = rm::parse_hello(line);
        if (!c.hello) {
          std::fprintf(stderr, "weft-rm: a client did not say hello ('%s'); closed\n",
                       line.substr(0, 40).c_str());
          ::close(c.fd);
          c.fd = -1;
          return;
        }
        c.streams = c.hello->streams;
        std::printf("[%ld %s] connected, %d streams\n", c.hello->pid, c.hello->name.c_str(),
                    c.streams);
        continue;
      }
      auto r = rm::parse_reply(line);
      if (!r) {
        std::fprintf(stderr, "weft-rm: [%ld] sent an unexpected line: %s\n", c.hello->pid,
                     line.substr(0, 80).c_str());
        continue;
      }
      if (c.pending) --c.pending;
      c.streams = r->streams;
      if (!r->ok) c.failed = true;
      std::printf("[%ld %s] %s\n", c.hello->pid, c.hello->name.c_str(), line.c_str());
    }
    std::fflush(stdout);
  }

  rm::address address_;
  int listen_fd_;
  std::map<int, client> clients_;
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

int number_arg(const char* flag, const char* v) {
  char* end = nullptr;
  const long n = v ? std::strtol(v, &end, 10) : -1;
  if (!v || !*v || *end || n < 0 || n > 1000000) die(std::string(flag) + " needs a number", 2);
  return static_cast<int>(n);
}

}  // namespace

int main(int argc, char** argv) {
  std::string addr = default_address();
  int wait_for = 1;
  int timeout_s = 30;
  long only_pid = 0;
  std::vector<std::string> words;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") usage(0);
    if (a == "--socket") {
      if (++i >= argc) usage(2);
      addr = argv[i];
    } else if (a == "--wait") {
      wait_for = number_arg("--wait", i + 1 < argc ? argv[++i] : nullptr);
    } else if (a == "--timeout") {
      timeout_s = number_arg("--timeout", i + 1 < argc ? argv[++i] : nullptr);
    } else if (a == "--pid") {
      only_pid = number_arg("--pid", i + 1 < argc ? argv[++i] : nullptr);
    } else if (!a.empty() && a[0] == '-' && words.empty()) {
      die("unknown option " + a, 2);
    } else {
      words.push_back(a);
    }
  }
  rm::address address;
  try {
    address = rm::parse_address(addr, "--socket");
  } catch (const weft::error& e) {
    die(e.what(), 2);
  }

  if (!words.empty()) {
    std::string line;
    for (const auto& w : words) line += (line.empty() ? "" : " ") + w;
    std::string why;
    if (!rm::parse_command(line, why)) die("bad command '" + line + "': " + why, 2);
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
      m.step(100, false, nullptr);
    }
    std::vector<client*> ts = targets();
    for (client* c : ts) m.send(*c, line);
    for (;;) {
      bool busy = false;
      for (client* c : ts) busy |= c->pending > 0 && !c->failed && c->fd >= 0;
      if (!busy) break;
      if (clock::now() > deadline) die("timed out waiting for replies");
      m.step(100, false, nullptr);
    }
    bool ok = true;
    for (client* c : ts) ok &= !c->failed;
    return ok ? 0 : 1;
  }

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
  while (m.step(-1, true, on_input)) {
  }
  return 0;
}
