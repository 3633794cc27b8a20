// SPDX-License-Identifier: Apache-2.0
// A consumer of the installed weft::omp: an unmodified OpenMP C program (a parallel region with a
// reduction around a dynamic worksharing loop, single) that checks its omp_* calls reach
// libweft-omp (linked, or the drop-in libgomp.so.1 under PREFIX/lib/weft-omp), not libgomp.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  long sum = 0;
  int team = 0;
#pragma omp parallel num_threads(2) reduction(+ : sum)
  {
#pragma omp single
    team = omp_get_num_threads();
#pragma omp for schedule(dynamic, 7)
    for (long i = 0; i < 1000; ++i) sum += i;
  }
  // The definition the program's calls bind to: the first in the global lookup scope.
  void* fn = dlsym(RTLD_DEFAULT, "omp_get_num_threads");
  Dl_info info;
  if (!fn || !dladdr(fn, &info) || !info.dli_fname) {
    fprintf(stderr, "cannot find where omp_get_num_threads comes from\n");
    return 1;
  }
  printf("omp_get_num_threads from %s; team of %d, sum %ld\n", info.dli_fname, team, sum);
  if (!strstr(info.dli_fname, "weft-omp")) {
    fprintf(stderr, "the OpenMP runtime is not libweft-omp\n");
    return 1;
  }
  return sum == 999L * 1000 / 2 && team == 2 ? 0 : 1;
}
