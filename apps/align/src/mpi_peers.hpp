// SPDX-License-Identifier: Apache-2.0
// weft-align under mpirun: the ranks of MPI_COMM_WORLD as a peer_group (see cli.hpp).
#pragma once

#include <string>
#include <vector>

namespace align {

/// True when the process was started by mpirun (Open MPI, or a PMI/PMIx launcher): only then is
/// MPI initialised, so that the same binary runs without mpirun.
bool launched_by_mpirun();

/// Initialises MPI, runs run_cli with the ranks as peers, and finalises. A failed rank 0 aborts
/// the job (after it has reported the error and removed its temporary output), so that no rank
/// waits for a partner that has gone; returns the exit status.
int run_cli_with_mpi(const std::vector<std::string>& args);

}  // namespace align
