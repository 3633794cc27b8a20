/* A target region: libweft-omp runs on no device and must stop with a message naming the
   construct (the test expects the failure and the message). */
#include <stdio.h>

int main(void) {
  int x = 0;
#pragma omp target map(tofrom : x)
  x = 1;
  printf("x = %d\n", x);
  return 0;
}
