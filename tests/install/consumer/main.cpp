// SPDX-License-Identifier: Apache-2.0
#include <weft/weft.hpp>
int main() {
  weft::runtime rt;
  int x = 0;
  auto u = weft::ult::create([&] { x = 42; });
  u.join();
  return x == 42 ? 0 : 1;
}
