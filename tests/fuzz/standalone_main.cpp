// SPDX-License-Identifier: Apache-2.0
// A driver for the libFuzzer targets without libFuzzer: feeds a fixed seed corpus and then a fixed
// number of deterministic mutations of it (bytes flipped, inserted, deleted, spliced) to
// LLVMFuzzerTestOneInput. Used by ctest when clang's libFuzzer is not available, and always as a
// quick replay under the project's own compiler and sanitizers.
//   <driver> [ITERATIONS] [SEED]
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

/// Lines of every kind both sides send, valid and nearly valid.
const char* const seeds[] = {
    "shrink 1",
    "stop 2",
    "expand 4096",
    "set 1",
    "count",
    "quit",
    "shrink 0",
    "set 4097",
    "expand  3\r",
    "stop -1",
    "frobnicate 3",
    "set 0009",
    "count extra",
    "ok streams=2",
    "error streams=1 the primary stream (rank 0) never stops",
    "ok streams=x",
    "hello pid=42 streams=2 name=demo",
    "hello pid=0 streams=1 name=x",
    "hello pid=1",
    "unix:/tmp/weft.sock",
    "tcp:127.0.0.1:7000",
    "tcp:[::1]:80",
    "tcp:localhost:1",
    "tcp:127.000.000.001:7000",
    "tcp:0.0.0.0:1",
    "tcp:[::ffff:127.0.0.1]:5",
    "udp:1",
    "\x05hello pid=42 streams=2 name=demo\nok streams=3\nerror streams=1 no\nok\n",
    "\x01hello pid=42 streams=2 name=demo\nok streams=3\n",
    "\x00hello pid=1 streams=1 name=a\n",
};

/// xorshift64*: a fixed sequence for a given seed on every platform.
struct rng {
  std::uint64_t s;
  std::uint64_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 0x2545F4914F6CDD1Dull;
  }
  std::size_t below(std::size_t n) { return n ? static_cast<std::size_t>(next() % n) : 0; }
};

std::string mutate(std::string s, const std::vector<std::string>& corpus, rng& r) {
  const int edits = 1 + static_cast<int>(r.below(4));
  for (int e = 0; e < edits; ++e) {
    switch (r.below(7)) {
      case 0:  // flip a byte
        if (!s.empty()) s[r.below(s.size())] ^= static_cast<char>(1u << r.below(8));
        break;
      case 1:  // insert a random byte
        s.insert(s.begin() + static_cast<std::ptrdiff_t>(r.below(s.size() + 1)),
                 static_cast<char>(r.next()));
        break;
      case 2:  // delete a run
        if (!s.empty()) {
          const std::size_t at = r.below(s.size());
          s.erase(at, 1 + r.below(8));
        }
        break;
      case 3:  // splice another corpus entry in
        s.insert(r.below(s.size() + 1), corpus[r.below(corpus.size())]);
        break;
      case 4:  // an interesting byte: separators, digits, high bytes
      {
        static const char special[] = {' ', '\n', '\r', '\0', ':',    '=',
                                       '[', ']',  '.',  '9',  '\x7f', '\xff'};
        s.insert(s.begin() + static_cast<std::ptrdiff_t>(r.below(s.size() + 1)),
                 special[r.below(sizeof special)]);
        break;
      }
      case 5:  // repeat a run (long lines, long numbers)
        if (!s.empty()) {
          const std::size_t at = r.below(s.size());
          const std::string run = s.substr(at, 1 + r.below(16));
          for (std::size_t k = r.below(64); k > 0; --k) s.insert(at, run);
        }
        break;
      default:  // truncate
        s.resize(r.below(s.size() + 1));
        break;
    }
  }
  if (s.size() > 4096) s.resize(4096);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  const long iterations = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 200000;
  rng r{argc > 2 ? std::strtoull(argv[2], nullptr, 10) | 1 : 0x9E3779B97F4A7C15ull};
  std::vector<std::string> corpus;
  for (const char* s : seeds) corpus.emplace_back(s);
  corpus.emplace_back(std::string("\x00", 1) + "hello pid=1 streams=1 name=a\n");
  for (const std::string& s : corpus)
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
  for (long i = 0; i < iterations; ++i) {
    std::string input = mutate(corpus[r.below(corpus.size())], corpus, r);
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(input.data()), input.size());
    // Keep some mutants as seeds, so that edits accumulate; the corpus stays bounded.
    if (r.below(16) == 0) {
      if (corpus.size() < 4096) {
        corpus.push_back(std::move(input));
      } else {
        corpus[r.below(corpus.size())] = std::move(input);
      }
    }
  }
  std::printf("%ld inputs (%zu seeds), no failure\n", iterations, std::size(seeds));
  return 0;
}
