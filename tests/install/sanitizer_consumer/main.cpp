// SPDX-License-Identifier: Apache-2.0
// README's hello example, built with a sanitizer against weft's matching variant.
#include <cstdio>
#include <weft/weft.hpp>

int main() {
  weft::runtime rt;  // init() here, finalize() at the end of the scope
  auto u = weft::ult::create([] { std::puts("hello from a ULT"); });
  auto t = weft::tasklet::create([] { std::puts("hello from a tasklet"); });
  u.join();
  t.join();
}
