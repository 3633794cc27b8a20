// Entry points of constructs libweft-omp does not run: each stops the program with a message
// naming the construct, so that a program needing one fails clearly instead of running wrong.
// Offload image registration is accepted (it happens at load time in programs built with
// offloading); the target constructs themselves run on no device here.
#include "internal.hpp"

#include <cstdio>
#include <cstdlib>

using weft::omp::unsupported;

extern "C" {

void GOMP_target() {
  unsupported("target (device offload)");
}
void GOMP_target_ext() {
  unsupported("target (device offload)");
}
void GOMP_target_data() {
  unsupported("target data (device offload)");
}
void GOMP_target_data_ext() {
  unsupported("target data (device offload)");
}
void GOMP_target_end_data() {
  unsupported("target data (device offload)");
}
void GOMP_target_update() {
  unsupported("target update (device offload)");
}
void GOMP_target_update_ext() {
  unsupported("target update (device offload)");
}
void GOMP_target_enter_exit_data() {
  unsupported("target enter/exit data (device offload)");
}
void GOMP_teams() {
  unsupported("teams inside a target region");
}
void GOMP_teams4() {
  unsupported("teams with a num_teams lower bound (OpenMP 5.1)");
}
void GOMP_offload_register() {}
void GOMP_offload_register_ver() {}
void GOMP_offload_unregister() {}
void GOMP_offload_unregister_ver() {}

// The error directive (OpenMP 5.1): at execution time, as libgomp does.
void GOMP_warning(const char* msg, std::size_t len) {
  if (msg) {
    std::fprintf(stderr, "libweft-omp: error directive encountered: %.*s\n", static_cast<int>(len),
                 msg);
  } else {
    std::fprintf(stderr, "libweft-omp: error directive encountered\n");
  }
}
void GOMP_error(const char* msg, std::size_t len) {
  GOMP_warning(msg, len);
  std::exit(EXIT_FAILURE);
}

}  // extern "C"
