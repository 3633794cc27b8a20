// SPDX-License-Identifier: Apache-2.0
// MPI on weft: initialisation at the thread level a weft program needs, and waits on MPI requests
// that yield the calling ULT instead of blocking its execution stream, so that other units of the
// stream (computation, other communication) run while a message is in flight.
#pragma once

#include <mpi.h>

#include <span>

namespace weft::loops::mpi {

/// Initialises MPI (MPI_Init_thread) asking for MPI_THREAD_MULTIPLE, and finalises it on
/// destruction. Create it before weft::runtime and destroy it after (declare it first).
///
/// Why MULTIPLE: a ULT may call MPI from any execution stream (it runs wherever its pool is
/// served, and moves after every yield when pools are shared), and several streams may be in MPI
/// at once. With a lower level (FUNNELED, SERIALIZED) the program must make every MPI call from
/// the primary ULT, which never leaves the primary thread; mpi_wait() and mpi_wait_all() check
/// that rule and throw weft::error (errc::wrong_thread) when it is broken. `required` lets a
/// program ask for less (e.g. MPI_THREAD_FUNNELED with an MPI library that lacks MULTIPLE).
/// Throws weft::error (errc::resource) if MPI provides less than `required`.
class session {
 public:
  session(int* argc, char*** argv, int required = MPI_THREAD_MULTIPLE);
  ~session();
  session(const session&) = delete;
  session& operator=(const session&) = delete;

  /// The thread level MPI provides.
  int provided() const noexcept { return provided_; }
  /// This process's rank in MPI_COMM_WORLD.
  int rank() const noexcept { return rank_; }
  /// The number of ranks in MPI_COMM_WORLD.
  int size() const noexcept { return size_; }

 private:
  int provided_ = 0;
  int rank_ = 0;
  int size_ = 1;
};

/// Waits for `request` like MPI_Wait, but in a ULT polls MPI_Test and yields between polls, so
/// the stream runs other units meanwhile. From an external thread it calls MPI_Wait. Returns the
/// MPI error code. Throws weft::error: errc::tasklet_cannot_block from a tasklet,
/// errc::wrong_thread when MPI runs below MPI_THREAD_MULTIPLE and the caller is not on the primary
/// stream's thread. Cost per poll: one MPI_Test plus one yield (about 0.1 us).
int mpi_wait(MPI_Request& request, MPI_Status* status = MPI_STATUS_IGNORE);

/// mpi_wait() for several requests (MPI_Testall between yields). `statuses` is empty or has one
/// entry per request.
int mpi_wait_all(std::span<MPI_Request> requests, std::span<MPI_Status> statuses = {});

}  // namespace weft::loops::mpi
