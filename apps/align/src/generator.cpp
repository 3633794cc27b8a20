// SPDX-License-Identifier: Apache-2.0
#include "generator.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

#include "seqio.hpp"

namespace align {
namespace {

/// xoshiro256** seeded by splitmix64: the same stream everywhere.
class rng {
 public:
  explicit rng(std::uint64_t seed) {
    for (auto& s : s_) {
      seed += 0x9e3779b97f4a7c15ULL;
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      s = z ^ (z >> 31);
    }
  }
  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  /// Uniform in [0, n).
  std::uint64_t below(std::uint64_t n) {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }
  /// Uniform in [0, 1).
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

constexpr char kBases[] = "ACGT";

void append_wrapped(std::string& out, const std::string& seq, std::size_t width) {
  for (std::size_t i = 0; i < seq.size(); i += width) {
    out.append(seq, i, width);
    out += '\n';
  }
}

}  // namespace

generated generate(const gen_options& o) {
  auto need = [](bool ok, const std::string& what) {
    if (!ok) throw usage_error(what);
  };
  need(o.refs >= 1, "gen: --refs must be at least 1");
  need(o.queries >= 0, "gen: --queries must not be negative");
  need(o.ref_min >= 1 && o.ref_min <= o.ref_max, "gen: need 1 <= --ref-min <= --ref-max");
  need(o.qlen_min >= 1 && o.qlen_min <= o.qlen_max, "gen: need 1 <= --qlen-min <= --qlen-max");
  need(o.error_rate >= 0 && o.error_rate <= 0.5, "gen: --error-rate must be in [0, 0.5]");

  rng g(o.seed);
  generated out;
  std::vector<std::string> refs(static_cast<std::size_t>(o.refs));
  const double lmin = std::log(static_cast<double>(o.ref_min));
  const double lmax = std::log(static_cast<double>(o.ref_max));
  for (std::size_t i = 0; i < refs.size(); ++i) {
    auto len = static_cast<std::size_t>(std::llround(std::exp(lmin + (lmax - lmin) * g.unit())));
    len = std::min<std::size_t>(std::max<std::size_t>(len, o.ref_min), o.ref_max);
    std::string& s = refs[i];
    s.resize(len);
    for (auto& c : s) c = kBases[g.below(4)];
    out.refs += ">ref" + std::to_string(i) + " len=" + std::to_string(len) + "\n";
    append_wrapped(out.refs, s, 80);
  }
  for (int q = 0; q < o.queries; ++q) {
    const std::size_t r = g.below(refs.size());
    const std::string& ref = refs[r];
    std::size_t len = o.qlen_min + g.below(static_cast<std::uint64_t>(o.qlen_max - o.qlen_min) + 1);
    len = std::min(len, ref.size());
    const std::size_t pos = g.below(ref.size() - len + 1);
    std::string seq;
    seq.reserve(len + len / 8 + 4);
    int edits = 0;
    for (std::size_t i = pos; i < pos + len; ++i) {
      if (g.unit() < o.error_rate) {
        ++edits;
        switch (g.below(3)) {
          case 0: {  // substitution by a different base
            char c = ref[i];
            while (c == ref[i]) c = kBases[g.below(4)];
            seq += c;
            break;
          }
          case 1:  // insertion before this base
            seq += kBases[g.below(4)];
            seq += ref[i];
            break;
          default:  // deletion
            break;
        }
      } else {
        seq += ref[i];
      }
    }
    if (seq.empty()) {  // everything deleted: keep one base so the record is valid
      seq += ref[pos];
      --edits;
    }
    std::string header = "q" + std::to_string(q) + " origin=ref" + std::to_string(r) +
                         " pos=" + std::to_string(pos) + " len=" + std::to_string(len) +
                         " edits=" + std::to_string(edits) + "\n";
    if (o.fastq) {
      out.queries += "@" + header + seq + "\n+\n" + std::string(seq.size(), 'I') + "\n";
    } else {
      out.queries += ">" + header;
      append_wrapped(out.queries, seq, 80);
    }
  }
  return out;
}

origin parse_origin(const std::string& desc) {
  origin o;
  std::istringstream in(desc);
  std::string field;
  while (in >> field) {
    auto eq = field.find('=');
    if (eq == std::string::npos) continue;
    std::string key = field.substr(0, eq), value = field.substr(eq + 1);
    if (key == "origin") {
      o.ref = value;
    } else if (key == "pos") {
      o.pos = std::stoi(value);
    } else if (key == "len") {
      o.len = std::stoi(value);
    } else if (key == "edits") {
      o.edits = std::stoi(value);
    }
  }
  return o;
}

}  // namespace align
