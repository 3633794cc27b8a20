// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the resource-manager protocol parsers (commands, replies, hellos,
// addresses). Run by ctest (tests/fuzz/CMakeLists.txt); by hand: build/tests/fuzz/rm_protocol_fuzz
// -max_len=600. An accepted address must turn into a Unix or a loopback endpoint.
#include <arpa/inet.h>
#include <netinet/in.h>

#include <weft/rm_protocol.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  std::string why;
  if (auto c = weft::rm::parse_command(line, why)) {
    // What is accepted must be canonical and in range.
    if (c->value < 0 || c->value > weft::rm::max_count) std::abort();
    std::string why2;
    auto again = weft::rm::parse_command(weft::rm::format_command(*c), why2);
    if (!again || !(*again == *c)) std::abort();
  } else if (why.empty()) {
    std::abort();
  }
  if (auto r = weft::rm::parse_reply(line)) {
    if (!weft::rm::parse_reply(weft::rm::format_reply(*r))) std::abort();
  }
  (void)weft::rm::parse_hello(line);
  std::optional<weft::rm::address> a;
  try {
    a = weft::rm::parse_address(line, "fuzz");
  } catch (const std::exception&) {
  }
  if (a) {
    const weft::rm::endpoint e = weft::rm::endpoint_of(*a);  // must not throw
    if (e.family == AF_INET) {
      const auto* sa = reinterpret_cast<const sockaddr_in*>(&e.storage);
      if ((ntohl(sa->sin_addr.s_addr) >> 24) != 127) std::abort();
    } else if (e.family == AF_INET6) {
      const auto* sa = reinterpret_cast<const sockaddr_in6*>(&e.storage);
      if (!IN6_IS_ADDR_LOOPBACK(&sa->sin6_addr)) std::abort();
    } else if (e.family != AF_UNIX) {
      std::abort();
    }
    // The text form parses back to the same address.
    if (weft::rm::parse_address(a->to_string(), "fuzz").to_string() != a->to_string()) std::abort();
  }
  return 0;
}
