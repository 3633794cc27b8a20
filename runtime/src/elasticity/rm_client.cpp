// SPDX-License-Identifier: Apache-2.0
#include "elasticity/rm_client.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>

#include "core/stream.hpp"
#include "elasticity/events.hpp"
#include "platform/assert.hpp"
#include "weft/error.hpp"
#include "weft/execution_stream.hpp"

namespace weft::detail {

namespace {

/// Waits until `fd` is ready for `events` or `wake_fd` is signalled (shutdown); `ms` < 0 waits
/// without limit. Returns 1 when `fd` is ready, 0 on timeout, -1 on shutdown or error.
int wait_ready(int fd, short events, int wake_fd, int ms) {
  for (;;) {
    pollfd p[2] = {{fd, events, 0}, {wake_fd, POLLIN, 0}};
    const int n = ::poll(p, 2, ms);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) return 0;
    if (p[1].revents) return -1;
    return 1;
  }
}

/// How long a connect() to a TCP manager may take before it counts as failed.
constexpr int connect_timeout_ms = 5000;

/// Connects a non-blocking socket to `e`; returns the fd, or -1 with errno set. Never blocks past
/// a shutdown signalled on `wake_fd`: a Unix socket whose listen backlog is full fails at once
/// (EAGAIN), a TCP handshake is waited for with poll().
int connect_to(const rm::endpoint& e, int wake_fd) {
  assert_invariant(
      [&e, wake_fd] { return e.family != AF_UNSPEC && e.length > 0 && wake_fd >= 0; },
      "resource manager: connects to an endpoint endpoint_of() made, with its eventfd");
  const int fd = ::socket(e.family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  auto fail = [fd](int err) {
    ::close(fd);
    errno = err;
    return -1;
  };
  if (::connect(fd, e.get(), e.length) == 0) return fd;
  if (errno != EINPROGRESS) return fail(errno);
  const int ready = wait_ready(fd, POLLOUT, wake_fd, connect_timeout_ms);
  if (ready <= 0) return fail(ready == 0 ? ETIMEDOUT : ECANCELED);
  int err = 0;
  socklen_t len = sizeof err;
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) return fail(errno);
  if (err != 0) return fail(err);
  return fd;
}

/// Sends `line` and a newline on the non-blocking `fd`. A manager that stops reading makes this
/// wait, but never past a shutdown signalled on `wake_fd`. Returns false on error or shutdown.
bool send_line(int fd, int wake_fd, std::string line) {
  line += '\n';
  std::size_t sent = 0;
  while (sent < line.size()) {
    const ssize_t n = ::send(fd, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (wait_ready(fd, POLLOUT, wake_fd, -1) != 1) return false;
      continue;
    }
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
    assert_invariant([sent, &line] { return sent <= line.size(); },
                     "resource manager: send() never reports more bytes than it was given");
  }
  return true;
}

}  // namespace

rm_client::rm_client(rm::address address)
    : address_(std::move(address)), endpoint_(rm::endpoint_of(address_)) {
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) {
    throw error(errc::resource,
                std::string("weft: resource manager: eventfd: ") + std::strerror(errno));
  }
  try {
    thread_ = std::thread([this] { run(); });
  } catch (const std::system_error& e) {
    ::close(wake_fd_);
    throw error(errc::resource,
                std::string("weft: resource manager: cannot create its thread: ") + e.what());
  } catch (...) {
    ::close(wake_fd_);
    throw;
  }
}

rm_client::~rm_client() {
  // The connection's own thread cannot join itself: finalize() (which destroys the client) runs
  // on the primary, never on the thread serving the manager.
  assert_invariant(
      [this] { return !thread_.joinable() || thread_.get_id() != std::this_thread::get_id(); },
      "resource manager: the client is destroyed on a thread other than its own");
  stopping_.store(true, std::memory_order_release);
  const std::uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof one);
  if (thread_.joinable()) thread_.join();
  ::close(wake_fd_);
}

bool rm_client::pause(int ms) noexcept {
  pollfd p{wake_fd_, POLLIN, 0};
  ::poll(&p, 1, ms);
  return !stopping_.load(std::memory_order_acquire);
}

void rm_client::run() noexcept {
  // Requests block this thread until the streams handled them: it must be no stream's thread.
  assert_invariant([] { return current_stream_no_switch() == nullptr; },
                   "resource manager: the client thread is not an execution stream");
  std::string where;
  try {
    where = address_.to_string();
  } catch (const std::bad_alloc&) {
    where = "the manager";  // fits the string's inline buffer
  }
  bool reported = false;  // this run of failed connects was reported, or is expected
  const bool unix_socket = address_.fam == rm::address::family::unix_socket;
  // Reported once per state, like a failed connect: checked again before every attempt.
  std::string refused;
  auto refuse = [&](std::string& why) {
    if (why != refused)
      std::fprintf(stderr, "weft: rm: not connecting to %s: %s; retrying every second\n",
                   where.c_str(), why.c_str());
    refused.swap(why);  // no allocation: this thread has no way to report running out
    return pause(1000);
  };
  while (!stopping_.load(std::memory_order_acquire)) {
    std::string why;
    if (unix_socket) {
      // Whoever can write the socket's directory can put their own manager there.
      try {
        why = rm::unsafe_socket_directory(address_.path);
      } catch (const std::bad_alloc&) {
        why = "out of memory";
      }
      if (!why.empty()) {
        if (!refuse(why)) break;
        continue;
      }
    }
    const int fd = connect_to(endpoint_, wake_fd_);
    if (fd >= 0 && unix_socket) {
      // The manager is trusted only as this very user; root gets no exception.
      const long peer = rm::peer_uid(fd);
      const long me = static_cast<long>(::geteuid());
      if (peer != me) {
        ::close(fd);
        try {
          why = "the process listening there runs as uid " + std::to_string(peer) +
                ", not as this user (uid " + std::to_string(me) + ")";
        } catch (const std::bad_alloc&) {
          why = "out of memory";
        }
        if (!refuse(why)) break;
        continue;
      }
    }
    refused.clear();
    if (fd < 0) {
      if (stopping_.load(std::memory_order_acquire)) break;
      if (!reported) {
        std::fprintf(stderr, "weft: rm: cannot connect to %s (%s); retrying every second\n",
                     where.c_str(), std::strerror(errno));
        reported = true;
      }
      if (!pause(1000)) break;
      continue;
    }
    reported = false;
    session_end end = session_end::lost;
    try {
      end = serve(fd);
    } catch (const std::exception&) {  // out of memory in the session: drop it, reconnect later
      std::fprintf(stderr, "weft: rm: out of memory; reconnecting to %s\n", where.c_str());
    }
    ::close(fd);
    if (end == session_end::quit) break;
    // A manager that closes the connection is done with this process: a one-shot weft-rm does so
    // after every command and removes its socket. Failing to connect until the next one listens
    // is expected, not worth a line per command on the program's stderr.
    if (end == session_end::closed) reported = true;
    if (!pause(1000)) break;
  }
}

rm_client::session_end rm_client::serve(int fd) {
  rm::hello h;
  h.pid = ::getpid();
  h.streams = execution_stream::count();
  h.name = program_invocation_short_name;
  if (!send_line(fd, wake_fd_, rm::format_hello(h))) return session_end::lost;
  std::string buf;
  bool discarding = false;  // inside an oversized line, until its '\n'
  char chunk[512];
  for (;;) {
    pollfd p[2] = {{fd, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (::poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return session_end::lost;
    }
    if (stopping_.load(std::memory_order_acquire)) return session_end::quit;
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n == 0) return session_end::closed;
    if (n < 0) return session_end::lost;
    buf.append(chunk, static_cast<std::size_t>(n));
    // An unterminated line is dropped at max_line: one read more is all the buffer ever holds.
    assert_invariant([&buf] { return buf.size() < rm::max_line + sizeof chunk; },
                     "resource manager: the receive buffer stays bounded");
    for (;;) {
      const auto nl = buf.find('\n');
      if (nl == std::string::npos) {
        if (buf.size() >= rm::max_line) {
          if (!discarding) {
            std::fprintf(stderr, "weft: rm: rejected a line longer than %zu bytes\n", rm::max_line);
            const int count = execution_stream::count();
            if (!send_line(fd, wake_fd_, rm::format_reply({false, count, "line too long"})))
              return session_end::lost;
          }
          discarding = true;
          buf.clear();
        }
        break;
      }
      std::string line = buf.substr(0, nl);
      buf.erase(0, nl + 1);
      if (discarding) {
        discarding = false;  // the tail of the oversized line, already answered
        continue;
      }
      bool quit = false;
      std::string reply = answer(line, quit);
      if (stopping_.load(std::memory_order_acquire)) return session_end::quit;
      if (!send_line(fd, wake_fd_, reply)) return session_end::lost;
      if (quit) return session_end::quit;
    }
  }
}

std::string rm_client::answer(std::string_view line, bool& quit) {
  try {
    std::string why;
    auto cmd = rm::parse_command(line, why);
    if (!cmd) {
      std::fprintf(stderr, "weft: rm: bad message: %s\n", why.c_str());
      return rm::format_reply({false, execution_stream::count(), why});
    }
    assert_invariant([&cmd] { return cmd->value >= 0 && cmd->value <= rm::max_count; },
                     "resource manager: a parsed command carries a value in [0, max_count]");
    resize_request req;
    switch (cmd->kind) {
      case rm::command_kind::count:
        return rm::format_reply({true, execution_stream::count(), {}});
      case rm::command_kind::quit:
        quit = true;
        return rm::format_reply({true, execution_stream::count(), {}});
      case rm::command_kind::shrink:
        req = post_resize(resize_op::shrink, cmd->value);
        break;
      case rm::command_kind::stop:
        req = post_resize(resize_op::stop_rank, cmd->value);
        break;
      case rm::command_kind::expand:
        req = post_resize(resize_op::expand, cmd->value);
        break;
      case rm::command_kind::set:
        req = post_resize(resize_op::set_count, cmd->value);
        break;
    }
    while (!req.wait_for(std::chrono::milliseconds(20))) {
      if (stopping_.load(std::memory_order_acquire)) return {};
      help_events();  // a shrink completes even when every surviving stream is blocked
    }
    const resize_result r = req.wait();
    return rm::format_reply({r.ok, r.streams, r.message});
  } catch (const std::exception& e) {
    return rm::format_reply({false, 0, e.what()});
  }
}

}  // namespace weft::detail
