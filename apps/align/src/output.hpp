// SPDX-License-Identifier: Apache-2.0
// The output destination of weft-align: opened and checked before any work, written as results
// come, committed at the end.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace align {

/// Where the output goes, chosen by what the path is when the run starts:
/// - "-": stdout, written as it comes;
/// - a regular file or a new path: a temporary file in the same directory, renamed over the file
///   by commit(), so that readers see the old or the new content and a failed run leaves the old
///   file; the new file keeps the existing file's mode (and owner, where permitted), or for a new
///   path 0666 less the umask. SIGHUP, SIGINT and SIGTERM (where not ignored or handled already)
///   remove the temporary file before the process ends;
/// - a character or block device, a FIFO, also through a symlink: opened and written in place,
///   never replaced.
/// A directory, a socket, a symlink to a file or to nothing (at the start or before the rename),
/// or a path that is one of the inputs (same device and inode) is refused. Throws align::error.
class output_file {
 public:
  /// Opens path; `inputs` are the input paths of the run ("-" is stdin).
  output_file(const std::string& path, const std::vector<std::string>& inputs);
  /// Without commit(): removes the temporary file (an existing file keeps its content).
  ~output_file();
  output_file(const output_file&) = delete;
  output_file& operator=(const output_file&) = delete;

  /// Appends text (buffered).
  void write(std::string_view text);
  /// Writes what is buffered, then renames the temporary file over the destination.
  void commit();
  /// True when the output is written in place (stdout, a device, a FIFO) rather than renamed.
  bool in_place() const { return tmp_.empty(); }
  /// The descriptor written to, for a writer of its own (BAM through htslib); whatever is
  /// written to it must be complete before commit(), and nothing may be buffered by write().
  int fd() const { return fd_; }

 private:
  void flush();
  std::string path_;    ///< as given, for messages
  std::string target_;  ///< the file that commit() replaces
  std::string tmp_;     ///< the temporary file, empty when written in place
  int slot_ = -1;       ///< the signal handler's entry for tmp_, -1 when none
  int fd_ = -1;
  bool owns_fd_ = false;
  bool committed_ = false;
  std::string buf_;
};

}  // namespace align
