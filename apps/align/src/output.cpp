// SPDX-License-Identifier: Apache-2.0
#include "output.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <mutex>

#include "seqio.hpp"

namespace align {
namespace {

std::string dir_of(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

constexpr const char* kLinkRefused =
    "is a symbolic link; refusing to write through it (give the path of the file itself)";

// The temporary files that a terminating signal removes. A handler can neither allocate nor
// lock, so the paths sit in fixed slots; a slot's state says whether its path may be read.
enum slot_state : int { kFree, kFilling, kArmed, kRemoving };
struct signal_slot {
  std::atomic<int> state{kFree};
  char path[PATH_MAX];
};
static_assert(std::atomic<int>::is_always_lock_free);
signal_slot g_slots[8];
constexpr int kCleanupSignals[] = {SIGHUP, SIGINT, SIGTERM};

extern "C" void remove_and_die(int sig) {
  const int saved = errno;
  for (signal_slot& s : g_slots) {
    int armed = kArmed;
    // kRemoving is never left, so the path cannot be rewritten under the unlink().
    if (s.state.compare_exchange_strong(armed, kRemoving)) ::unlink(s.path);
  }
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
  // Blocked until the handler returns, then delivered with the default action: the exit status
  // still says which signal ended the run.
  ::raise(sig);
  errno = saved;
}

void install_handlers() {
  for (int sig : kCleanupSignals) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) != 0) continue;
    // An ignored signal (nohup) stays ignored; a handler someone else installed stays theirs.
    if (old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO)) continue;
    struct sigaction sa {};
    sa.sa_handler = &remove_and_die;
    sigemptyset(&sa.sa_mask);
    for (int other : kCleanupSignals) sigaddset(&sa.sa_mask, other);
    ::sigaction(sig, &sa, nullptr);
  }
}

/// Arms the removal of `path` by SIGHUP, SIGINT and SIGTERM; the slot, or -1 when all are taken
/// (the file is then only removed on a normal exit).
int remove_on_signal(const std::string& path) {
  static std::once_flag once;
  std::call_once(once, install_handlers);
  if (path.size() >= PATH_MAX) return -1;
  for (int i = 0; i < static_cast<int>(std::size(g_slots)); ++i) {
    int free = kFree;
    if (!g_slots[i].state.compare_exchange_strong(free, kFilling)) continue;
    std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
    g_slots[i].state.store(kArmed);
    return i;
  }
  return -1;
}

/// Holds SIGHUP, SIGINT and SIGTERM back in the calling thread while it lives. Between the
/// creation of a temporary file and the arming of its removal, a signal would kill the process
/// with the file left behind; held back, it is delivered when the file is armed. The output is
/// opened before the runtime starts its streams, so the calling thread is the only one that could
/// take a process-directed signal then.
class cleanup_signals_held {
 public:
  cleanup_signals_held() noexcept {
    sigset_t s;
    sigemptyset(&s);
    for (int sig : kCleanupSignals) sigaddset(&s, sig);
    held_ = ::pthread_sigmask(SIG_BLOCK, &s, &old_) == 0;
  }
  ~cleanup_signals_held() {
    if (held_) ::pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  cleanup_signals_held(const cleanup_signals_held&) = delete;
  cleanup_signals_held& operator=(const cleanup_signals_held&) = delete;

 private:
  sigset_t old_{};
  bool held_ = false;
};

void keep_on_signal(int slot) {
  if (slot < 0) return;
  int armed = kArmed;
  // Fails only when a handler is removing the file: the slot then stays taken.
  g_slots[slot].state.compare_exchange_strong(armed, kFree);
}

mode_t current_umask() {
  mode_t m = ::umask(022);  // read it; set back at once (done before any thread starts)
  ::umask(m);
  return m;
}

}  // namespace

output_file::output_file(const std::string& path, const std::vector<std::string>& inputs)
    : path_(path) {
  if (path.empty()) throw error("output: empty file name");
  struct stat out {};
  bool exists;
  if (path == "-") {
    fd_ = 1;
    exists = ::fstat(1, &out) == 0;
  } else {
    exists = ::stat(path.c_str(), &out) == 0;
    if (!exists && errno != ENOENT) throw error(path + ": cannot write: " + std::strerror(errno));
  }
  const std::string shown = path == "-" ? std::string("<stdout>") : path;
  if (exists) {
    for (const std::string& in : inputs) {
      struct stat st {};
      if ((in == "-" ? ::fstat(0, &st) : ::stat(in.c_str(), &st)) != 0) continue;
      // Only files can be clobbered; a terminal or /dev/null on both sides is fine.
      if (S_ISREG(st.st_mode) && st.st_dev == out.st_dev && st.st_ino == out.st_ino)
        throw error(shown + ": is the input " + (in == "-" ? "<stdin>" : in) +
                    "; refusing to overwrite an input");
    }
  }
  if (path == "-") return;

  struct stat link {};
  const bool is_link = ::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode);
  mode_t mode;
  if (exists) {
    if (S_ISDIR(out.st_mode)) throw error(path + ": cannot write: Is a directory");
    if (S_ISSOCK(out.st_mode)) throw error(path + ": cannot write: is a socket");
  }
  if (exists && !S_ISREG(out.st_mode)) {
    // Devices and FIFOs are written where they are: replacing them would break them. A link to
    // one (/dev/stdout, a link to /dev/null) is followed, as nothing is replaced or created;
    // O_NOFOLLOW keeps a link swapped in after the check from being followed.
    fd_ = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC | (is_link ? 0 : O_NOFOLLOW));
    if (fd_ < 0) throw error(path + ": cannot write: " + std::strerror(errno));
    owns_fd_ = true;
    return;
  }
  // Writing through a link to a file, or creating a dangling link's target, lets whoever can
  // place the link choose which file is replaced or created.
  if (is_link) throw error(path + ": " + kLinkRefused);
  mode = exists ? out.st_mode & 07777 : 0666 & ~current_umask();
  target_ = path;
  std::string dir = dir_of(target_);
  tmp_ = (dir == "/" ? "" : dir) + "/." + target_.substr(target_.rfind('/') + 1) + ".tmp.XXXXXX";
  const cleanup_signals_held held;
  fd_ = ::mkostemp(tmp_.data(), O_CLOEXEC);
  if (fd_ < 0) {
    int e = errno;
    tmp_.clear();
    throw error(path + ": cannot create: " + std::strerror(e));
  }
  owns_fd_ = true;
  slot_ = remove_on_signal(tmp_);
  if (exists) {
    // Keep the owner and group where the caller may set them (root, or a group it belongs to).
    if (::fchown(fd_, out.st_uid, out.st_gid) != 0)
      (void)!::fchown(fd_, static_cast<uid_t>(-1), out.st_gid);
  }
  ::fchmod(fd_, mode);
}

output_file::~output_file() {
  if (owns_fd_ && fd_ >= 0) ::close(fd_);
  if (!committed_ && !tmp_.empty()) ::unlink(tmp_.c_str());
  keep_on_signal(slot_);
}

void output_file::write(std::string_view text) {
  buf_.append(text);
  if (buf_.size() >= (1u << 20)) flush();
}

void output_file::flush() {
  const std::string shown = path_ == "-" ? std::string("<stdout>") : path_;
  std::size_t done = 0;
  while (done < buf_.size()) {
    ssize_t n = ::write(fd_, buf_.data() + done, buf_.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw error(shown + ": cannot write: " + std::strerror(errno));
    }
    done += static_cast<std::size_t>(n);
  }
  buf_.clear();
}

void output_file::commit() {
  flush();
  if (tmp_.empty()) return;
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) throw error(path_ + ": cannot write: " + std::strerror(errno));
  // rename() replaces a link rather than writing through it; a link placed during the run is
  // refused all the same, as it would have been at the start.
  struct stat link {};
  if (::lstat(target_.c_str(), &link) == 0 && S_ISLNK(link.st_mode))
    throw error(path_ + ": " + kLinkRefused);
  if (::rename(tmp_.c_str(), target_.c_str()) != 0)
    throw error(path_ + ": cannot write: " + std::strerror(errno));
  committed_ = true;
  // After the rename: a signal in between finds the temporary name gone, never a kept file.
  keep_on_signal(slot_);
  slot_ = -1;
}

}  // namespace align
