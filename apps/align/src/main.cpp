// SPDX-License-Identifier: Apache-2.0
// weft-align: an edlib alignment mapper, parallel on weft (and on OpenMP for comparison), and
// over MPI ranks when started by mpirun.
#include <unistd.h>

#include <iostream>
#include <string>
#include <vector>

#include "cli.hpp"
#ifdef ALIGN_HAVE_MPI
#include "mpi_peers.hpp"
#endif

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
#ifdef ALIGN_HAVE_MPI
  if (align::launched_by_mpirun()) return align::run_cli_with_mpi(args);
#endif
  return align::run_cli(args, std::cerr, ::isatty(2) == 1);
}
