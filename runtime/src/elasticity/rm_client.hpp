// SPDX-License-Identifier: Apache-2.0
// The connection to a resource manager (WEFT_RM): a kernel thread of its own, outside every
// execution stream, so that serving it never stalls one.
#pragma once

#include <atomic>
#include <string>
#include <thread>

#include "weft/rm_protocol.hpp"

namespace weft::detail {

/// Connects to the manager (retrying every second while it is not there), says hello, and
/// answers its commands one by one: each resize becomes a request handled by the streams, and
/// its outcome is the reply. Destruction disconnects and joins the thread promptly, even while a
/// request is in progress (its reply is then not sent), while a connect() waits on a full listen
/// backlog, or while a send waits on a manager that stopped reading (the socket is non-blocking
/// and every wait also polls the shutdown eventfd).
class rm_client {
 public:
  explicit rm_client(rm::address address);
  ~rm_client();
  rm_client(const rm_client&) = delete;
  rm_client& operator=(const rm_client&) = delete;

 private:
  /// How a session ended.
  enum class session_end {
    quit,    ///< the manager said quit, or weft is shutting down: no reconnect
    closed,  ///< the manager closed the connection (end of stream): reconnect quietly
    lost,    ///< the connection failed: reconnect, and report a failure to
  };

  void run() noexcept;
  /// One session over a connected socket. Throws std::bad_alloc out of memory (run() then drops
  /// the connection and reconnects).
  session_end serve(int fd);
  /// Handles one line; returns the reply, or an empty string for quit's after-reply close.
  /// Throws std::bad_alloc only when not even an error reply can be formatted.
  std::string answer(std::string_view line, bool& quit);
  /// Sleeps up to `ms` unless woken for shutdown; returns false when shutting down.
  bool pause(int ms) noexcept;

  rm::address address_;
  rm::endpoint endpoint_;  // parsed once, so that what is checked is what is connected to
  int wake_fd_ = -1;       // eventfd: destruction writes it to interrupt poll()
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace weft::detail
