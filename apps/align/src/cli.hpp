// SPDX-License-Identifier: Apache-2.0
// The command line of weft-align, callable in-process (the tests use it).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace align {

/// The other processes of a distributed run (MPI; see mpi_peers.cpp). Rank 0 reads, maps its
/// share and writes; the other ranks map theirs and send their hits' text to rank 0. Calls are
/// made one at a time, from the thread that runs run_cli.
class peer_group {
 public:
  virtual ~peer_group() = default;
  /// This process's rank, 0 .. size() - 1.
  virtual int rank() const = 0;
  /// The number of processes.
  virtual int size() const = 0;
  /// Not rank 0: sends one chunk's hits (kind text), the end of this rank's work (kind done, empty)
  /// or its error message (kind failed) to rank 0, without waiting for rank 0 to take it; the
  /// previous send is completed first.
  enum class kind { text = 1, failed = 2, done = 3 };
  virtual void send(kind k, const std::string& text) = 0;
  /// Rank 0: the next message from rank `from` (messages from one rank arrive in order).
  virtual kind receive(int from, std::string& text) = 0;
};

/// Runs "map ..." or "gen ..." (args excludes the program name). Results go to the files named
/// (or stdout); errors to `err` as "weft-align: <file>:<line>: <what>". Returns the exit status:
/// 0 success, 1 bad input or failure, 2 bad command line. With peers of size > 1, "map" splits
/// the query chunks over the ranks (rank 0 alone writes the output and reports errors; another
/// rank's error is sent to rank 0 rather than printed).
int run_cli(const std::vector<std::string>& args, std::ostream& err, bool stderr_is_tty,
            peer_group* peers = nullptr);

}  // namespace align
