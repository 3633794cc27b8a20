// SPDX-License-Identifier: Apache-2.0
// ULT-aware MPI waits.
#include <weft/loops/mpi.hpp>

#include <weft/error.hpp>
#include <weft/execution_stream.hpp>
#include <weft/runtime.hpp>
#include <weft/this_unit.hpp>

#include <string>

namespace weft::loops::mpi {
namespace {

int current_thread_level() {
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  return level;
}

// Whether the caller polls (a ULT: yield between tests) or waits in MPI (a thread).
bool check_caller(const char* what) {
  if (this_unit::is_tasklet()) {
    throw error(errc::tasklet_cannot_block,
                std::string("weft::loops::mpi: ") + what + " from a tasklet; use a ULT");
  }
  if (!initialized() || this_unit::current() == nullptr) return false;
  const execution_stream* s = this_unit::stream();
  if (current_thread_level() < MPI_THREAD_MULTIPLE && !(s && s->is_primary())) {
    throw error(errc::wrong_thread,
                std::string("weft::loops::mpi: ") + what +
                    " off the primary stream, but MPI was not initialised with "
                    "MPI_THREAD_MULTIPLE: make MPI calls from the primary ULT only");
  }
  return true;
}

}  // namespace

session::session(int* argc, char*** argv, int required) {
  MPI_Init_thread(argc, argv, required, &provided_);
  if (provided_ < required) {
    MPI_Finalize();
    throw error(errc::resource, "weft::loops::mpi: MPI provides thread level " +
                                    std::to_string(provided_) + ", less than the " +
                                    std::to_string(required) + " asked for");
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

session::~session() {
  MPI_Finalize();
}

int mpi_wait(MPI_Request& request, MPI_Status* status) {
  if (!check_caller("mpi_wait()")) return MPI_Wait(&request, status);
  for (;;) {
    int done = 0;
    const int rc = MPI_Test(&request, &done, status);
    if (rc != MPI_SUCCESS || done) return rc;
    this_unit::yield();
  }
}

int mpi_wait_all(std::span<MPI_Request> requests, std::span<MPI_Status> statuses) {
  if (!statuses.empty() && statuses.size() != requests.size()) {
    throw error(errc::invalid_state,
                "weft::loops::mpi: mpi_wait_all() needs one status per request, or none");
  }
  const int n = static_cast<int>(requests.size());
  MPI_Status* st = statuses.empty() ? MPI_STATUSES_IGNORE : statuses.data();
  if (!check_caller("mpi_wait_all()")) return MPI_Waitall(n, requests.data(), st);
  for (;;) {
    int done = 0;
    const int rc = MPI_Testall(n, requests.data(), &done, st);
    if (rc != MPI_SUCCESS || done) return rc;
    this_unit::yield();
  }
}

}  // namespace weft::loops::mpi
