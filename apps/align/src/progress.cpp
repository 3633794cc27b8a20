// SPDX-License-Identifier: Apache-2.0
#include "progress.hpp"

#include <cstdio>

namespace align {

std::string format_progress(std::uint64_t done, std::uint64_t total, double elapsed_s,
                            int bar_width) {
  const double rate = elapsed_s > 0 ? static_cast<double>(done) / elapsed_s : 0.0;
  char buf[160];
  if (total == 0) {
    std::snprintf(buf, sizeof buf, "%llu queries %8.1f q/s", (unsigned long long)done, rate);
    return buf;
  }
  if (done > total) done = total;
  const double frac = total ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
  const int filled = static_cast<int>(frac * bar_width);
  std::string out = "[";
  out.append(static_cast<std::size_t>(filled), '#');
  out.append(static_cast<std::size_t>(bar_width - filled), '.');
  out += "]";
  std::snprintf(buf, sizeof buf, " %llu/%llu queries %3d%% %8.1f q/s", (unsigned long long)done,
                (unsigned long long)total, static_cast<int>(frac * 100), rate);
  out += buf;
  if (done == total) {
    long s = static_cast<long>(elapsed_s + 0.5);
    std::snprintf(buf, sizeof buf, "  done in %ld:%02ld", s / 60, s % 60);
  } else if (rate > 0) {
    long s = static_cast<long>(static_cast<double>(total - done) / rate + 0.5);
    std::snprintf(buf, sizeof buf, "  ETA %ld:%02ld", s / 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "  ETA -:--");
  }
  out += buf;
  return out;
}

progress_meter::progress_meter(bool enabled, const std::atomic<std::uint64_t>& done,
                               std::function<std::uint64_t()> total,
                               std::chrono::milliseconds period)
    : done_(done),
      total_(std::move(total)),
      start_(std::chrono::steady_clock::now()),
      period_(period) {
  if (!enabled) return;
  thread_ = std::thread([this] {
    std::unique_lock lock(m_);
    while (!stopping_) {
      draw(false);
      cv_.wait_for(lock, period_, [this] { return stopping_; });
    }
  });
}

void progress_meter::stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(m_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
  draw(true);
}

void progress_meter::draw(bool last) {
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string line = "\r";
  line += format_progress(done_.load(std::memory_order_relaxed), total_(), elapsed);
  line += "\033[K";  // clear what a longer previous line left
  if (last) line += '\n';
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
}

}  // namespace align
