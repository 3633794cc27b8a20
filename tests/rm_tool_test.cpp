// SPDX-License-Identifier: Apache-2.0
// weft-rm against hostile clients and a hostile file system: what it binds, what it removes, and
// how it treats clients that never end a line or arrive when it has no file descriptor left.
// WEFT_RM_BINARY (set by tools/weft-rm/CMakeLists.txt) is the weft-rm under test.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <weft/rm_protocol.hpp>

#include <fstream>
#include <sstream>

#include "test_support.hpp"

namespace {

using namespace weft_test;
using namespace std::chrono_literals;
namespace rm = weft::rm;

/// A fresh directory, removed with its contents at the end.
class temp_dir {
 public:
  temp_dir() {
    char tmpl[] = "/tmp/weft-rm-tool-XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~temp_dir() {
    const std::string cmd = "rm -rf '" + path_ + "'";
    [[maybe_unused]] int rc = std::system(cmd.c_str());
  }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

/// A weft-rm child process, its output (stdout and stderr) going to a file.
class rm_process {
 public:
  rm_process(std::vector<std::string> args, const std::string& log, rlim_t max_files = 0)
      : log_(log) {
    // Standard input is a pipe the test keeps open, so that interactive mode does not end.
    int in[2];
    EXPECT_EQ(::pipe2(in, O_CLOEXEC), 0);
    pid_ = ::fork();
    if (pid_ == 0) {
      const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::close(fd);
      ::dup2(in[0], 0);
      // No descriptor of the test process may leak into the child's count.
      for (int i = 3; i < 1024; ++i) ::close(i);
      if (max_files) {
        rlimit rl{max_files, max_files};
        ::setrlimit(RLIMIT_NOFILE, &rl);
      }
      std::vector<char*> argv;
      static std::string binary = WEFT_RM_BINARY;
      argv.push_back(binary.data());
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(binary.c_str(), argv.data());
      std::_Exit(127);
    }
    ::close(in[0]);
    stdin_ = in[1];
    ::fcntl(stdin_, F_SETFL, O_NONBLOCK);  // input() must not hang on a weft-rm that hangs
  }
  ~rm_process() {
    ::close(stdin_);
    if (pid_ > 0 && !exited_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  rm_process(const rm_process&) = delete;
  rm_process& operator=(const rm_process&) = delete;

  /// Waits for the exit (at most hang_guard, then kills it) and returns its status code, or -1
  /// when it was killed.
  int wait() {
    const auto deadline = std::chrono::steady_clock::now() + hang_guard;
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        exited_ = true;
        ADD_FAILURE() << "weft-rm did not exit";
        return -1;
      }
      std::this_thread::sleep_for(10ms);
    }
    exited_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  /// Sends a signal.
  void signal(int sig) { ::kill(pid_, sig); }
  /// Writes `text` to its standard input (in one write when the pipe has room for it); false
  /// when it has not taken all of it within hang_guard.
  bool input(const std::string& text) {
    const auto deadline = std::chrono::steady_clock::now() + hang_guard;
    std::size_t done = 0;
    while (done < text.size()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      pollfd p{stdin_, POLLOUT, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      const ssize_t n = ::write(stdin_, text.data() + done, text.size() - done);
      if (n > 0) {
        done += static_cast<std::size_t>(n);
      } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
        return false;
      }
    }
    return true;
  }
  /// Waits (at most hang_guard) until its output contains `what`.
  bool wait_output(const std::string& what) const {
    const auto deadline = std::chrono::steady_clock::now() + hang_guard;
    while (output().find(what) == std::string::npos) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(10ms);
    }
    return true;
  }
  /// What it printed so far.
  std::string output() const {
    std::ifstream in(log_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

 private:
  std::string log_;
  pid_t pid_ = -1;
  int stdin_ = -1;
  bool exited_ = false;
};

/// Connects to the Unix socket at `path`, retrying until weft-rm listens; -1 after hang_guard.
int connect_unix(const std::string& path) {
  const auto deadline = std::chrono::steady_clock::now() + hang_guard;
  while (std::chrono::steady_clock::now() < deadline) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    std::strncpy(sa.sun_path, path.c_str(), sizeof sa.sun_path - 1);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0) return fd;
    ::close(fd);
    std::this_thread::sleep_for(10ms);
  }
  return -1;
}

/// Waits up to `limit` for the peer to close `fd` (reading and discarding what it sends).
bool closed_by_peer(int fd, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[256];
    const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
  }
}

/// Reads one line from `fd` (at most hang_guard).
std::string read_line(int fd) {
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + hang_guard;
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char c;
    if (::recv(fd, &c, 1, 0) != 1) break;
    if (c == '\n') return out;
    out += c;
  }
  return out;
}

bool send_all(int fd, const std::string& s) {
  return ::send(fd, s.data(), s.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(s.size());
}

const std::string hello_line = "hello pid=4242 streams=1 name=fake\n";

TEST(RmToolTest, ALeadingZeroAddressIsAUsageErrorNotAllInterfaces) {
  temp_dir d;
  rm_process p({"--socket", "tcp:127.000.000.001:7", "--timeout", "1", "count"}, d / "log");
  EXPECT_EQ(p.wait(), 2) << p.output();
  EXPECT_NE(p.output().find("127.000.000.001"), std::string::npos) << p.output();
}

TEST(RmToolTest, AFileThatIsNotASocketIsLeftAlone) {
  temp_dir d;
  const std::string path = d / "rm.sock";
  { std::ofstream(path) << "precious\n"; }
  rm_process p({"--socket", "unix:" + path, "--timeout", "1", "count"}, d / "log");
  EXPECT_EQ(p.wait(), 1) << p.output();
  EXPECT_NE(p.output().find("not a socket"), std::string::npos) << p.output();
  std::ifstream in(path);
  std::string content;
  std::getline(in, content);
  EXPECT_EQ(content, "precious");
}

TEST(RmToolTest, TheSocketIsRemovedAfterATimeoutAndOnSigterm) {
  temp_dir d;
  const std::string path = d / "rm.sock";
  {
    rm_process p({"--socket", "unix:" + path, "--timeout", "1", "count"}, d / "log");
    EXPECT_EQ(p.wait(), 1) << p.output();
    EXPECT_NE(p.output().find("timed out"), std::string::npos) << p.output();
    struct stat st {};
    EXPECT_NE(::lstat(path.c_str(), &st), 0) << "the socket was left behind";
  }
  {
    // Interactive, ended by SIGTERM once it listens.
    rm_process p({"--socket", "unix:" + path}, d / "log2");
    const int fd = connect_unix(path);
    ASSERT_GE(fd, 0);
    ::close(fd);
    p.signal(SIGTERM);
    EXPECT_EQ(p.wait(), 0) << p.output();
    struct stat st {};
    EXPECT_NE(::lstat(path.c_str(), &st), 0) << "the socket was left behind";
  }
}

TEST(RmToolTest, AStaleSocketIsReplaced) {
  temp_dir d;
  const std::string path = d / "rm.sock";
  {
    // A socket file nobody listens on any more.
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    std::strncpy(sa.sun_path, path.c_str(), sizeof sa.sun_path - 1);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
    ::close(fd);
  }
  rm_process p({"--socket", "unix:" + path, "--timeout", "30", "count"}, d / "log");
  const int fd = connect_unix(path);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(send_all(fd, hello_line));
  EXPECT_EQ(read_line(fd), "count");
  ASSERT_TRUE(send_all(fd, "ok streams=1\n"));
  EXPECT_EQ(p.wait(), 0) << p.output();
  ::close(fd);
}

TEST(RmToolTest, AClientThatNeverEndsALineIsDisconnected) {
  temp_dir d;
  const std::string path = d / "rm.sock";
  rm_process p({"--socket", "unix:" + path, "--timeout", "60", "count"}, d / "log");
  // Before its hello, and after it.
  for (bool hello : {false, true}) {
    SCOPED_TRACE(hello ? "after hello" : "before hello");
    const int fd = connect_unix(path);
    ASSERT_GE(fd, 0);
    if (hello) {
      ASSERT_TRUE(send_all(fd, hello_line));
    }
    // Bytes without a newline, in pieces, far past the protocol's line limit (the peer may
    // close while we are still sending: that is the outcome we want).
    const std::string piece(1024, 'x');
    for (int i = 0; i < 64 && send_all(fd, piece); ++i) {
    }
    EXPECT_TRUE(
        closed_by_peer(fd, std::chrono::duration_cast<std::chrono::milliseconds>(hang_guard)));
    ::close(fd);
  }
  p.signal(SIGTERM);
  EXPECT_EQ(p.wait(), 1) << p.output();
  EXPECT_NE(p.output().find("without a newline"), std::string::npos) << p.output();
}

TEST(RmToolTest, OutOfFileDescriptorsAConnectionIsRefusedNotLeftPending) {
  temp_dir d;
  const std::string path = d / "rm.sock";
  // 0-2, the log, the spare descriptor and the listener: room for one client and no more.
  rm_process p({"--socket", "unix:" + path, "--timeout", "60", "count"}, d / "log", 6);
  const int first = connect_unix(path);
  ASSERT_GE(first, 0);
  ASSERT_TRUE(send_all(first, "hello pid=1 streams=1 name=first"));  // no newline yet
  const int second = connect_unix(path);
  ASSERT_GE(second, 0);
  // weft-rm cannot accept it: the connection must be taken off the backlog and closed, rather
  // than left there while the listener stays readable and accept4() fails in a loop.
  EXPECT_TRUE(closed_by_peer(second, 20s)) << p.output();
  ::close(second);
  EXPECT_NE(p.output().find("cannot accept"), std::string::npos) << p.output();
  // It still works: the first client says hello and gets the command.
  ASSERT_TRUE(send_all(first, "\n"));
  EXPECT_EQ(read_line(first), "count");
  ASSERT_TRUE(send_all(first, "ok streams=1\n"));
  EXPECT_EQ(p.wait(), 0) << p.output();
  ::close(first);
}

TEST(RmToolTest, ADirectoryOthersCanWriteIsRefused) {
  temp_dir d;
  const std::string dir = d / "open";
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
  const std::string path = dir + "/rm.sock";
  rm_process p({"--socket", "unix:" + path, "--timeout", "1", "count"}, d / "log");
  EXPECT_EQ(p.wait(), 1) << p.output();
  EXPECT_EQ(p.output(), "weft-rm: not listening on unix:" + path + ": its directory " + dir +
                            " is writable by others (mode 0777)\n");
  struct stat st {};
  EXPECT_NE(::lstat(path.c_str(), &st), 0) << "a socket was made";
}

TEST(RmToolTest, AClientOfAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to connect as another user";
  temp_dir d;
  const std::string path = d / "rm.sock";
  rm_process p({"--socket", "unix:" + path, "--timeout", "60", "count"}, d / "log");
  const int mine = connect_unix(path);  // also: it listens
  ASSERT_GE(mine, 0);
  // Let nobody reach the socket, as a careless setup would: the credentials must still refuse it.
  ASSERT_EQ(::chmod(path.substr(0, path.rfind('/')).c_str(), 0711), 0);
  ASSERT_EQ(::chmod(path.c_str(), 0666), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    if (::setresgid(65534, 65534, 65534) != 0 || ::setresuid(65534, 65534, 65534) != 0)
      std::_Exit(3);
    const int fd = connect_unix(path);
    if (fd < 0) std::_Exit(4);
    if (!send_all(fd, "hello pid=77 streams=1 name=intruder\n")) std::_Exit(0);  // closed already
    const auto guard = std::chrono::duration_cast<std::chrono::milliseconds>(hang_guard);
    std::_Exit(closed_by_peer(fd, guard) ? 0 : 1);
  }
  ASSERT_GT(child, 0);
  int status = -1;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "intruder status " << status;
  // This user's process is served.
  ASSERT_TRUE(send_all(mine, hello_line));
  EXPECT_EQ(read_line(mine), "count");
  ASSERT_TRUE(send_all(mine, "ok streams=1\n"));
  EXPECT_EQ(p.wait(), 0) << p.output();
  ::close(mine);
  EXPECT_NE(p.output().find("weft-rm: refused a connection from uid 65534 (not this user, 0)\n"),
            std::string::npos)
      << p.output();
  EXPECT_EQ(p.output().find("intruder"), std::string::npos) << p.output();
}

TEST(RmToolTest, SeveralCommandsInOneWriteAreAllCarriedOut) {
  temp_dir d;
  const std::string path = d / "rm.sock";
  rm_process p({"--socket", "unix:" + path}, d / "log");
  const int fd = connect_unix(path);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(send_all(fd, hello_line));
  ASSERT_TRUE(p.wait_output("[4242 fake] connected, 1 streams\n")) << p.output();
  ASSERT_TRUE(p.input("count\nset 2\nlist\n"));
  EXPECT_EQ(read_line(fd), "count");
  ASSERT_TRUE(send_all(fd, "ok streams=1\n"));
  EXPECT_EQ(read_line(fd), "set 2");
  ASSERT_TRUE(send_all(fd, "ok streams=2\n"));
  EXPECT_TRUE(p.wait_output("4242 fake streams=1\n")) << p.output();  // list, before the replies
  EXPECT_TRUE(p.wait_output("[4242 fake] ok streams=2\n")) << p.output();
  ::close(fd);
}

TEST(RmToolTest, ControlBytesInANameNeverReachTheTerminal) {
  temp_dir d;
  const std::string path = d / "rm.sock";
  rm_process p({"--socket", "unix:" + path}, d / "log");
  const int fd = connect_unix(path);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(send_all(fd, "hello pid=4242 streams=1 name=a\x1b[2Jb\x07\xc3\xa9\n"));
  EXPECT_TRUE(p.wait_output("[4242 a?[2Jb???] connected, 1 streams\n")) << p.output();
  ASSERT_TRUE(p.input("list\n"));
  EXPECT_TRUE(p.wait_output("4242 a?[2Jb??? streams=1\n")) << p.output();
  ::close(fd);
  EXPECT_TRUE(p.wait_output("[4242 a?[2Jb???] disconnected\n")) << p.output();
  for (char c : p.output())
    EXPECT_TRUE(c == '\n' || (c >= 0x20 && c < 0x7f)) << "byte " << int(c) << " printed";
}

TEST(RmToolTest, AClientThatNeverReadsIsDroppedNotWaitedFor) {
  temp_dir d;
  const std::string path = d / "rm.sock";
  rm_process p({"--socket", "unix:" + path}, d / "log");
  const int deaf = connect_unix(path);
  ASSERT_GE(deaf, 0);
  ASSERT_TRUE(send_all(deaf, "hello pid=4242 streams=1 name=deaf\n"));
  const int good = connect_unix(path);
  ASSERT_GE(good, 0);
  ASSERT_TRUE(send_all(good, "hello pid=4343 streams=1 name=good\n"));
  ASSERT_TRUE(p.wait_output("[4343 good] connected")) << p.output();
  ASSERT_TRUE(p.wait_output("[4242 deaf] connected")) << p.output();
  // Far more commands than the socket buffer and the 64 KiB queue hold. A weft-rm that waited
  // for the deaf client would stop reading its input, and input() would fail.
  std::string flood;
  for (int i = 0; i < 100000; ++i) flood += "4242 count\n";
  ASSERT_TRUE(p.input(flood)) << "weft-rm stopped reading its input";
  EXPECT_TRUE(p.wait_output("] leaves ")) << p.output().substr(0, 2000);
  EXPECT_NE(p.output().find("weft-rm: [4242 deaf] leaves "), std::string::npos);
  EXPECT_NE(p.output().find(" bytes of commands unread; dropped\n"), std::string::npos);
  // The other client is still served.
  ASSERT_TRUE(p.input("4343 count\n"));
  EXPECT_EQ(read_line(good), "count");
  ::close(deaf);
  ::close(good);
}

}  // namespace
