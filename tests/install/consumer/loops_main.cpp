// SPDX-License-Identifier: Apache-2.0
// A consumer of the installed weft::loops: a parallel loop and a reduction over the default team.
#include <weft/loops/loops.hpp>
#include <weft/version.hpp>
#include <weft/weft.hpp>

#include <cstdint>
#include <cstdio>
#include <vector>

int main() {
  weft::runtime rt;
  std::vector<std::int64_t> v(1000);
  weft::loops::parallel_for(0, 1000, [&](std::int64_t i) { v[i] = i; });
  const std::int64_t sum = weft::loops::parallel_reduce(
      0, 1000, std::int64_t{0}, [&](std::int64_t i, std::int64_t& acc) { acc += v[i]; });
  std::printf("weft %s: sum %lld\n", std::string(weft::version()).c_str(),
              static_cast<long long>(sum));
  return sum == 999 * 1000 / 2 && weft::version() == WEFT_VERSION_STRING ? 0 : 1;
}
