// SPDX-License-Identifier: Apache-2.0
// MPI parts on loopback, run with 2 and 4 ranks by ctest (mpirun). Checks, on every rank count:
//  - a ULT waiting in mpi_wait() does not block its stream: with one stream, the message it waits
//    for is only sent after another ULT of the same stream has run (a blocking wait deadlocks and
//    the ctest timeout fails the test);
//  - each kernel gives the serial result in MPI and in MPI+weft;
//  - misuse: mpi_wait() from a tasklet throws.
// Exit status 0 when every check passed on every rank.
#include "kernels_run.hpp"

#include <weft/loops/loops.hpp>
#include <weft/loops/mpi.hpp>
#include <weft/weft.hpp>

#include <mpi.h>

#include <atomic>
#include <cstdio>
#include <string>

namespace lk = loops_kernels;
namespace wl = weft::loops;

namespace {

int failures = 0;

void check(bool ok, const std::string& what, int rank) {
  if (!ok) {
    ++failures;
    std::fprintf(stderr, "rank %d: FAILED: %s\n", rank, what.c_str());
  }
}

// Rank 0's waiter ULT posts a receive from rank 1 and waits; rank 1 replies only after it got a
// "go" that rank 0's second ULT sends, and that ULT runs on the same (only) stream as the waiter.
void overlap_check(int rank, int size) {
  if (size < 2 || rank > 1) return;
  std::atomic<int> order{0};
  int reply = 0, go = 1;
  int waiter_saw = -1;
  if (rank == 0) {
    auto waiter = weft::ult::create([&] {
      MPI_Request r;
      MPI_Irecv(&reply, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &r);
      order.store(1);
      wl::mpi::mpi_wait(r);
      waiter_saw = order.load();
    });
    auto sender = weft::ult::create([&] {
      while (order.load() == 0) weft::this_unit::yield();
      order.store(2);
      MPI_Send(&go, 1, MPI_INT, 1, 6, MPI_COMM_WORLD);
    });
    waiter.join();
    sender.join();
    check(reply == 42 && waiter_saw == 2, "mpi_wait lets the stream run other ULTs", rank);
  } else {
    int got = 0;
    MPI_Request r;
    MPI_Irecv(&got, 1, MPI_INT, 0, 6, MPI_COMM_WORLD, &r);
    wl::mpi::mpi_wait(r);
    reply = 42;
    MPI_Send(&reply, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    check(got == 1, "go message received", rank);
  }
}

void kernels_check(int rank, int size) {
  for (lk::kernel k : lk::all_kernels) {
    const std::int64_t n = k == lk::kernel::matmat                              ? 12
                           : k == lk::kernel::matvec || k == lk::kernel::matadd ? 20
                                                                                : 3000;
    for (std::int64_t nn : {std::int64_t{1}, n}) {
      const lk::problem pr{k, nn, size};
      std::vector<double> want;
      if (rank == 0) {
        lk::data d = lk::make_data(pr);
        lk::serial_trial(pr, d);
        want = lk::result_of(pr, d);
      }
      for (bool with_weft : {false, true}) {
        const lk::run_result got = lk::run_mpi(pr, 1, with_weft);
        if (rank == 0) {
          check(lk::max_rel_diff(want, got.result) <= 1e-12,
                std::string(lk::name(k)) + " n=" + std::to_string(nn) +
                    (with_weft ? " MPI+weft" : " MPI") + " equals serial",
                rank);
        }
      }
    }
  }
}

void misuse_check(int rank) {
  bool threw = false;
  weft::tasklet::create([&] {
    MPI_Request r = MPI_REQUEST_NULL;
    try {
      wl::mpi::mpi_wait(r);
    } catch (const weft::error& e) {
      threw = e.code() == weft::errc::tasklet_cannot_block;
    }
  }).join();
  check(threw, "mpi_wait from a tasklet throws tasklet_cannot_block", rank);
}

}  // namespace

int main(int argc, char** argv) {
  wl::mpi::session mpi(&argc, &argv);
  {
    weft::config cfg;
    cfg.num_streams = 1;  // the overlap check needs the waiter and the sender on one stream
    weft::runtime rt(cfg);
    overlap_check(mpi.rank(), mpi.size());
    misuse_check(mpi.rank());
  }
  {
    weft::runtime rt;  // WEFT_NUM_STREAMS (2 in the ctest environment)
    kernels_check(mpi.rank(), mpi.size());
  }
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (mpi.rank() == 0)
    std::printf("%s: %d failed checks over %d ranks\n", total ? "FAIL" : "PASS", total, mpi.size());
  return total == 0 ? 0 : 1;
}
