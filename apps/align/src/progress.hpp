// SPDX-License-Identifier: Apache-2.0
// A progress bar on stderr: queries done, rate, ETA. Drawn by its own kernel thread, so it works
// the same for every backend.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace align {

/// One line of the bar, e.g. "[#######.............]  350/1000 queries  35%  70.0 q/s  ETA 0:09";
/// with total 0 (not known yet) just the count and the rate.
std::string format_progress(std::uint64_t done, std::uint64_t total, double elapsed_s,
                            int bar_width = 24);

class progress_meter {
 public:
  /// When `enabled`, redraws the bar on stderr every `period` until stop() (or destruction),
  /// reading `done` (relaxed) and `total` (the expected number of queries, 0 if unknown; the
  /// input is streamed, so it is an estimate until the input has been read). Otherwise does
  /// nothing.
  progress_meter(bool enabled, const std::atomic<std::uint64_t>& done,
                 std::function<std::uint64_t()> total,
                 std::chrono::milliseconds period = std::chrono::milliseconds(200));
  ~progress_meter() { stop(); }
  progress_meter(const progress_meter&) = delete;
  progress_meter& operator=(const progress_meter&) = delete;
  /// Draws the final state, ends the line and joins the drawing thread.
  void stop();

 private:
  void draw(bool last);
  const std::atomic<std::uint64_t>& done_;
  std::function<std::uint64_t()> total_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::milliseconds period_;
  std::mutex m_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace align
