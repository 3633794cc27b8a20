// SPDX-License-Identifier: Apache-2.0
// The resource-manager connection under hostile or broken managers: one that stops reading, one
// whose listen backlog is full, and addresses that must not turn into "all interfaces".
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <weft/events.hpp>
#include <weft/rm_protocol.hpp>

#include <cstdio>
#include <thread>

#include "test_support.hpp"
#include "watchdog.hpp"

namespace {

using namespace weft_test;
using namespace std::chrono_literals;
namespace rm = weft::rm;

/// A Unix listening socket in a fresh directory, with the given backlog.
class listener {
 public:
  explicit listener(int backlog) {
    char tmpl[] = "/tmp/weft-rmh-test-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    path_ = dir_ + "/rm.sock";
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un sa = address();
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
    EXPECT_EQ(::listen(fd_, backlog), 0);
  }
  ~listener() {
    for (int fd : extra_) ::close(fd);
    if (conn_ >= 0) ::close(conn_);
    ::close(fd_);
    ::unlink(path_.c_str());
    ::rmdir(dir_.c_str());
  }
  listener(const listener&) = delete;
  listener& operator=(const listener&) = delete;

  sockaddr_un address() const {
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    std::strncpy(sa.sun_path, path_.c_str(), sizeof sa.sun_path - 1);
    return sa;
  }
  std::string where() const { return "unix:" + path_; }

  /// Fills the listen backlog with connections nobody accepts; returns how many it took.
  int fill_backlog() {
    for (int i = 0; i < 4096; ++i) {
      const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      sockaddr_un sa = address();
      if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
        ::close(fd);
        EXPECT_EQ(errno, EAGAIN);
        return i;
      }
      extra_.push_back(fd);
    }
    ADD_FAILURE() << "the backlog never filled";
    return -1;
  }

  /// Accepts weft's connection (a blocking accept: the manager thread connects on its own).
  void accept() {
    pollfd p{fd_, POLLIN, 0};
    ASSERT_EQ(::poll(&p, 1, static_cast<int>(hang_guard.count() * 1000)), 1);
    conn_ = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    ASSERT_GE(conn_, 0);
  }
  int conn() const { return conn_; }

 private:
  std::string dir_, path_;
  int fd_ = -1;
  int conn_ = -1;
  std::vector<int> extra_;
};

class RmHardeningTest : public env_test {};

// A manager that sends commands and never reads the replies: weft's side of the socket fills,
// its manager thread waits to send, and finalize() must still return.
TEST_F(RmHardeningTest, FinalizeReturnsWhenTheManagerStopsReading) {
  listener l(4);
  weft::config c = test_config(1);
  c.resource_manager = l.where();
  weft::init(c);
  l.accept();
  const int small = 4096;
  ::setsockopt(l.conn(), SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  ::setsockopt(l.conn(), SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
  // Queue "count" commands until weft stops taking them: it has stopped reading because it
  // waits to send a reply we never read. Each command is answered without any stream's help.
  const std::string cmd = "count\n";
  int refused_in_a_row = 0;
  long sent = 0;
  for (long i = 0; i < 1000000 && refused_in_a_row < 200; ++i) {
    const ssize_t n = ::send(l.conn(), cmd.data(), cmd.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n == static_cast<ssize_t>(cmd.size())) {
      ++sent;
      refused_in_a_row = 0;
    } else {
      ASSERT_TRUE(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) << std::strerror(errno);
      ++refused_in_a_row;
      std::this_thread::sleep_for(1ms);
    }
  }
  ASSERT_EQ(refused_in_a_row, 200) << "weft kept reading; the test could not fill its buffers";
  EXPECT_GT(sent, 100);
  watchdog w("finalize() with a manager that stopped reading");
  weft::finalize();
  w.disarm();
  EXPECT_FALSE(weft::initialized());
}

// A manager whose listen backlog is full: connect() would wait for a slot that never comes.
TEST_F(RmHardeningTest, FinalizeReturnsWhenTheManagersBacklogIsFull) {
  listener l(0);
  ASSERT_GE(l.fill_backlog(), 0);
  weft::config c = test_config(1);
  c.resource_manager = l.where();
  weft::init(c);
  // Give the manager thread time to reach its connect() (this does not decide the outcome: with
  // a blocking connect the hang only needs the thread to get there before finalize()).
  std::this_thread::sleep_for(300ms);
  watchdog w("finalize() while connecting to a full backlog");
  weft::finalize();
  w.disarm();
  EXPECT_FALSE(weft::initialized());
}

// The address is parsed once and the parsed form is checked: a spelling inet_pton rejects is an
// error, never the unspecified address 0.0.0.0 (all interfaces).
TEST(RmAddressTest, TheParsedAddressIsTheCheckedOne) {
  for (const char* bad : {"tcp:127.000.000.001:5000", "tcp:127.0.0.01:5000", "tcp:0127.0.0.1:5000",
                          "tcp:127.0.0.1.:5000", "tcp:127.0.1:5000", "tcp:[::ffff:10.0.0.1]:80",
                          "tcp:[0:0:0:0:0:0:0:2]:80", "tcp:[::1%lo]:80"}) {
    SCOPED_TRACE(bad);
    EXPECT_WEFT_ERRC(rm::parse_address(bad, "test"), weft::errc::invalid_config);
  }
  // Other spellings of a loopback address are accepted and written canonically.
  EXPECT_EQ(rm::parse_address("tcp:[0:0:0:0:0:0:0:1]:80", "t").host, "::1");
  EXPECT_EQ(rm::parse_address("tcp:127.255.0.1:80", "t").host, "127.255.0.1");

  // An address not made by parse_address never yields an endpoint that is not loopback.
  rm::address a;
  a.fam = rm::address::family::tcp;
  a.port = 5000;
  for (const char* host : {"127.000.000.001", "0.0.0.0", "", "10.0.0.1", "::", "::2"}) {
    SCOPED_TRACE(host);
    a.host = host;
    EXPECT_WEFT_ERRC(rm::endpoint_of(a), weft::errc::invalid_config);
  }
  a.host = "127.0.0.1";
  const rm::endpoint e = rm::endpoint_of(a);
  EXPECT_EQ(e.family, AF_INET);
  EXPECT_EQ(e.length, sizeof(sockaddr_in));
}

// A weft process given an address that fails parsing never starts (and never connects anywhere).
TEST_F(RmHardeningTest, ALeadingZeroAddressFailsInit) {
  scoped_env e("WEFT_RM", "tcp:127.000.000.001:7000");
  EXPECT_WEFT_ERRC(weft::init(test_config(1)), weft::errc::invalid_config);
  EXPECT_FALSE(weft::initialized());
}

}  // namespace
