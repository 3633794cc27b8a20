// SPDX-License-Identifier: Apache-2.0
// The seven kernels in MPI, written as 002 writes them (each rank owns its block; mpi_send/recv,
// sendrecv, reduce to rank 0), and the same with weft inside each rank: the rank's block is
// computed by the loop layer and messages are waited for with the ULT-aware mpi_wait.
#include "kernels_run.hpp"

#include <weft/loops/loops.hpp>
#include <weft/loops/mpi.hpp>

#include <mpi.h>

#include <algorithm>
#include <cstdint>

namespace loops_kernels {
namespace {

namespace wl = weft::loops;

// One rank's share of the global data of `pr`: the blocks it owns, plus the replicated y of
// mat-vec (its initial value on rank 0, zero elsewhere) and C of mat-mat (zero).
struct local_data {
  std::vector<double> a, b, c, x, y, scratch;
  double s = 0;
};

local_data make_local(const problem& pr, int rank) {
  const std::int64_t n = pr.n, np = pr.n * pr.p, off = rank * n;
  local_data d;
  auto fill = [](std::vector<double>& v, char which, std::int64_t count, auto index) {
    v.resize(static_cast<std::size_t>(count));
    for (std::int64_t l = 0; l < count; ++l)
      v[static_cast<std::size_t>(l)] = value(which, index(l));
  };
  auto block = [&](std::int64_t l) { return off + l; };
  auto col_block = [&](std::int64_t l) { return off * n + l; };  // n x n column block of n x np
  switch (pr.k) {
    case kernel::pingpong:
    case kernel::rightshift:
      fill(d.a, 'a', n, block);
      d.b.assign(static_cast<std::size_t>(n), 0.0);
      break;
    case kernel::arraysum:
      fill(d.a, 'a', n, block);
      break;
    case kernel::dot:
      fill(d.x, 'x', n, block);
      fill(d.y, 'y', n, block);
      break;
    case kernel::matvec:
      fill(d.a, 'a', n * n, col_block);
      fill(d.x, 'x', n, block);
      if (rank == 0) {
        fill(d.y, 'y', n, [](std::int64_t l) { return l; });
      } else {
        d.y.assign(static_cast<std::size_t>(n), 0.0);
      }
      d.scratch.assign(static_cast<std::size_t>(n), 0.0);
      break;
    case kernel::matadd:
      fill(d.a, 'a', n * n, col_block);
      fill(d.b, 'b', n * n, col_block);
      d.c.assign(static_cast<std::size_t>(n * n), 0.0);
      break;
    case kernel::matmat:
      fill(d.a, 'a', n * n, col_block);
      // B is np x n column-major; this rank owns rows [off, off + n): local (k, jj) at jj*n + k.
      fill(d.b, 'b', n * n, [&](std::int64_t l) { return (l / n) * np + off + l % n; });
      d.c.assign(static_cast<std::size_t>(n * n), 0.0);
      d.scratch.assign(static_cast<std::size_t>(n * n), 0.0);
      break;
  }
  return d;
}

// Local compute helpers: serial, or with the loop layer when `w` is set.
double local_sum(const std::vector<double>& a, const std::vector<double>* b, bool w) {
  const auto n = static_cast<std::int64_t>(a.size());
  if (!w) {
    double s = 0;
    for (std::int64_t i = 0; i < n; ++i)
      s += a[static_cast<std::size_t>(i)] * (b ? (*b)[static_cast<std::size_t>(i)] : 1.0);
    return s;
  }
  return wl::parallel_reduce(0, n, 0.0, [&](std::int64_t i, double& acc) {
    acc += a[static_cast<std::size_t>(i)] * (b ? (*b)[static_cast<std::size_t>(i)] : 1.0);
  });
}

void send_recv(std::vector<double>& out, int to, std::vector<double>& in, int from, bool w) {
  const int count = static_cast<int>(out.size());
  if (!w) {
    MPI_Sendrecv(out.data(), count, MPI_DOUBLE, to, 1, in.data(), count, MPI_DOUBLE, from, 1,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return;
  }
  MPI_Request req[2];
  MPI_Irecv(in.data(), count, MPI_DOUBLE, from, 1, MPI_COMM_WORLD, &req[0]);
  MPI_Isend(out.data(), count, MPI_DOUBLE, to, 1, MPI_COMM_WORLD, &req[1]);
  wl::mpi::mpi_wait_all(req);
}

void send(std::vector<double>& v, int to, int tag, bool w) {
  if (!w) {
    MPI_Send(v.data(), static_cast<int>(v.size()), MPI_DOUBLE, to, tag, MPI_COMM_WORLD);
    return;
  }
  MPI_Request r;
  MPI_Isend(v.data(), static_cast<int>(v.size()), MPI_DOUBLE, to, tag, MPI_COMM_WORLD, &r);
  wl::mpi::mpi_wait(r);
}

void recv(std::vector<double>& v, int from, int tag, bool w) {
  if (!w) {
    MPI_Recv(v.data(), static_cast<int>(v.size()), MPI_DOUBLE, from, tag, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    return;
  }
  MPI_Request r;
  MPI_Irecv(v.data(), static_cast<int>(v.size()), MPI_DOUBLE, from, tag, MPI_COMM_WORLD, &r);
  wl::mpi::mpi_wait(r);
}

// Sum of a vector over the ranks into rank 0 (002: mpi_reduce).
void reduce_to_root(std::vector<double>& part, std::vector<double>& sum, int rank, bool w) {
  const int count = static_cast<int>(part.size());
  void* send_buf = rank == 0 ? MPI_IN_PLACE : static_cast<void*>(part.data());
  double* recv_buf = part.data();
  if (!w) {
    MPI_Reduce(send_buf, recv_buf, count, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  } else {
    MPI_Request r;
    MPI_Ireduce(send_buf, recv_buf, count, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD, &r);
    wl::mpi::mpi_wait(r);
  }
  if (rank == 0) {
    for (int i = 0; i < count; ++i)
      sum[static_cast<std::size_t>(i)] += part[static_cast<std::size_t>(i)];
  }
}

void trial(const problem& pr, local_data& d, int rank, bool w) {
  const std::int64_t n = pr.n;
  const int p = pr.p;
  switch (pr.k) {
    case kernel::pingpong: {
      const int j = p - 1;
      if (rank == 0) {
        send(d.a, j, 1, w);
        recv(d.b, j, 2, w);
      }
      if (rank == j) {
        recv(d.b, 0, 1, w);
        send(d.a, 0, 2, w);
      }
      break;
    }
    case kernel::rightshift:
      send_recv(d.a, (rank + 1) % p, d.b, (rank + p - 1) % p, w);
      break;
    case kernel::arraysum:
    case kernel::dot: {
      double s = pr.k == kernel::dot ? local_sum(d.x, &d.y, w) : local_sum(d.a, nullptr, w);
      std::vector<double> part{s}, total{0.0};
      reduce_to_root(part, total, rank, w);
      d.s = total[0];
      break;
    }
    case kernel::matvec: {
      std::fill(d.scratch.begin(), d.scratch.end(), 0.0);
      auto column = [&](std::int64_t j, std::span<double> acc) {
        const double xj = d.x[static_cast<std::size_t>(j)];
        const double* col = d.a.data() + j * n;
        for (std::int64_t i = 0; i < n; ++i) acc[static_cast<std::size_t>(i)] += col[i] * xj;
      };
      if (w) {
        wl::parallel_reduce_array(0, n, std::span<double>(d.scratch), 0.0, column);
      } else {
        for (std::int64_t j = 0; j < n; ++j) column(j, d.scratch);
      }
      reduce_to_root(d.scratch, d.y, rank, w);
      break;
    }
    case kernel::matadd: {
      auto column = [&](std::int64_t j) {
        for (std::int64_t i = j * n; i < (j + 1) * n; ++i) {
          d.c[static_cast<std::size_t>(i)] =
              d.a[static_cast<std::size_t>(i)] + d.b[static_cast<std::size_t>(i)];
        }
      };
      if (w) {
        wl::parallel_for(0, n, column);
      } else {
        for (std::int64_t j = 0; j < n; ++j) column(j);
      }
      break;
    }
    case kernel::matmat: {
      std::fill(d.scratch.begin(), d.scratch.end(), 0.0);
      auto column = [&](std::int64_t jj) {  // column jj of the partial C: no two workers share one
        double* cc = d.scratch.data() + jj * n;
        for (std::int64_t k = 0; k < n; ++k) {
          const double bkj = d.b[static_cast<std::size_t>(jj * n + k)];
          const double* ak = d.a.data() + k * n;
          for (std::int64_t i = 0; i < n; ++i) cc[i] += ak[i] * bkj;
        }
      };
      if (w) {
        wl::parallel_for(0, n, column);
      } else {
        for (std::int64_t jj = 0; jj < n; ++jj) column(jj);
      }
      reduce_to_root(d.scratch, d.c, rank, w);
      break;
    }
  }
}

// The global result on rank 0 (blocks gathered where each rank owns a part).
std::vector<double> gather_result(const problem& pr, const local_data& d, int rank) {
  auto gather = [&](const std::vector<double>& part) {
    std::vector<double> all(rank == 0 ? part.size() * static_cast<std::size_t>(pr.p) : 0);
    MPI_Gather(part.data(), static_cast<int>(part.size()), MPI_DOUBLE, all.data(),
               static_cast<int>(part.size()), MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return all;
  };
  switch (pr.k) {
    case kernel::pingpong:
    case kernel::rightshift:
      return gather(d.b);
    case kernel::matadd:
      return gather(d.c);
    case kernel::arraysum:
    case kernel::dot:
      return {d.s};
    case kernel::matvec:
      return d.y;
    case kernel::matmat:
      return d.c;
  }
  return {};
}

}  // namespace

run_result run_mpi(const problem& pr, int trials, bool with_weft) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  local_data d = make_local(pr, rank);
  std::vector<double> flush_area(flush_bytes() / sizeof(double), 0.0);
  std::vector<double> local(static_cast<std::size_t>(trials), 0.0);
  for (int k = 0; k < trials; ++k) {
    flush(flush_area);
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    trial(pr, d, rank, with_weft);
    local[static_cast<std::size_t>(k)] = MPI_Wtime() - t0;
    MPI_Barrier(MPI_COMM_WORLD);
  }
  run_result r;
  r.times.assign(static_cast<std::size_t>(trials), 0.0);
  MPI_Reduce(local.data(), r.times.data(), trials, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  r.result = gather_result(pr, d, rank);
  return r;
}

}  // namespace loops_kernels
