/* Members that wait for each other outside OpenMP constructs, in a program without
   thread-local storage of its own: each member of a team of 6 (wider than this machine's CPUs)
   spins on a flag its left neighbour sets (the OpenMP examples' a.18.1 with seq_cst atomics for
   its flushes). libweft-omp first runs such a team's members as ULTs on the streams it has;
   members that spin there starve the ones queued behind them until its starvation watch adds
   streams, so the team completes. First a team of 4 whose members meet at a barrier before
   (a.18.1 itself: with OMP_NUM_THREADS=1 it starts on one stream), then a team of 6 twice with a
   team of 3 in between. */
#include <omp.h>

#include "check.h"
#include "neighbours.h"

int main(void) {
  omp_set_dynamic(0);
  neighbours_after(4, 1);
  neighbours(6);
  neighbours(3);
  neighbours(6);
  return failures;
}
