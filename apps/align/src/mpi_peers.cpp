// SPDX-License-Identifier: Apache-2.0
#include "mpi_peers.hpp"

#include <mpi.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "cli.hpp"

namespace align {
namespace {

/// Point-to-point messages over MPI_COMM_WORLD; the tag is the message's kind.
class mpi_peers final : public peer_group {
 public:
  mpi_peers() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~mpi_peers() override { complete(); }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void send(kind k, const std::string& text) override {
    complete();
    // Kept until the send completes: the rank maps its next chunk meanwhile.
    sending_ = text;
    MPI_Isend(sending_.data(), static_cast<int>(sending_.size()), MPI_CHAR, 0, static_cast<int>(k),
              MPI_COMM_WORLD, &pending_);
  }
  kind receive(int from, std::string& text) override {
    MPI_Status st;
    MPI_Probe(from, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    int n = 0;
    MPI_Get_count(&st, MPI_CHAR, &n);
    text.resize(static_cast<std::size_t>(n));
    MPI_Recv(text.data(), n, MPI_CHAR, from, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return static_cast<kind>(st.MPI_TAG);
  }
  /// Waits for the last send to complete.
  void complete() {
    if (pending_ != MPI_REQUEST_NULL) MPI_Wait(&pending_, MPI_STATUS_IGNORE);
  }

 private:
  int rank_ = 0, size_ = 1;
  MPI_Request pending_ = MPI_REQUEST_NULL;
  std::string sending_;
};

}  // namespace

bool launched_by_mpirun() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"})
    if (std::getenv(v)) return true;
  return false;
}

int run_cli_with_mpi(const std::vector<std::string>& args) {
  // MPI is called between chunks by one unit at a time, which a work-stealing scheduler may run
  // on another kernel thread than the one that initialised MPI: serialized, not funneled.
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
  int status;
  {
    mpi_peers peers;
    status = run_cli(args, std::cerr, peers.rank() == 0 && ::isatty(2) == 1, &peers);
    if (status != 0 && peers.size() > 1) {
      if (peers.rank() == 0) {
        std::cerr.flush();
        MPI_Abort(MPI_COMM_WORLD, status);
      }
      // The error went to rank 0, which ends the job; wait for that.
      peers.complete();
      MPI_Recv(nullptr, 0, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }
  MPI_Finalize();
  return status;
}

}  // namespace align
