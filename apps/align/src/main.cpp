// weft-align: an edlib alignment mapper, parallel on weft (and on OpenMP for comparison).
#include <unistd.h>

#include <iostream>
#include <string>
#include <vector>

#include "cli.hpp"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return align::run_cli(args, std::cerr, ::isatty(2) == 1);
}
