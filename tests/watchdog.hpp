// SPDX-License-Identifier: Apache-2.0
// A watchdog for tests whose failure mode is a hang: it ends the process with a message when not
// disarmed in time, so that the test fails by itself rather than by a ctest timeout.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

namespace weft_test {

/// Ends the process with a failure when not disarmed within `limit`: a hang in finalize() is the
/// defect these tests look for, and a failing test beats a ctest timeout.
class watchdog {
 public:
  explicit watchdog(const char* what, std::chrono::seconds limit = std::chrono::seconds(30))
      : thread_([this, what, limit] {
          std::unique_lock lock(m_);
          if (!cv_.wait_for(lock, limit, [this] { return done_; })) {
            std::fprintf(stderr, "FAILED: %s did not return within %llds\n", what,
                         static_cast<long long>(limit.count()));
            std::fflush(stderr);
            std::_Exit(1);
          }
        }) {}
  ~watchdog() { disarm(); }
  void disarm() {
    {
      std::lock_guard lock(m_);
      done_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace weft_test
