// libFuzzer target for the resource-manager protocol parser. Built by tests/fuzz/CMakeLists.txt
// when the C++ compiler is clang with -fsanitize=fuzzer; run: ./weft_rm_protocol_fuzz -max_len=512
#include <weft/rm_protocol.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
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
  try {
    (void)weft::rm::parse_address(line, "fuzz");
  } catch (const std::exception&) {
  }
  return 0;
}
