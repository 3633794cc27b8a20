// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the weft-align tests: temporary files, brute-force edit distance, data sets.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "generator.hpp"
#include "mapper.hpp"
#include "seqio.hpp"

namespace align_test {

namespace fs = std::filesystem;

/// A fresh directory under TMPDIR, removed with its contents at the end of the test.
class temp_dir {
 public:
  temp_dir() {
    std::string pattern = (fs::temp_directory_path() / "weft-align-test-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(file(name), std::ios::binary) << text;
    return file(name);
  }
  const fs::path& path() const { return path_; }
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    for (auto& e : fs::directory_iterator(path_)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  fs::path path_;
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Textbook dynamic programming: Levenshtein distance of q against t, with edlib's three modes
/// (nw: global; shw: the end of t is free; hw: both ends of t are free). -1 above max_dist >= 0.
inline int brute_distance(const std::string& q, const std::string& t, align::align_mode mode,
                          int max_dist = -1) {
  const std::size_t n = q.size(), m = t.size();
  std::vector<int> prev(m + 1), cur(m + 1);
  for (std::size_t j = 0; j <= m; ++j)
    prev[j] = mode == align::align_mode::hw ? 0 : static_cast<int>(j);
  for (std::size_t i = 1; i <= n; ++i) {
    cur[0] = static_cast<int>(i);
    for (std::size_t j = 1; j <= m; ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (q[i - 1] != t[j - 1])});
    std::swap(prev, cur);
  }
  int d = mode == align::align_mode::nw ? prev[m] : *std::min_element(prev.begin(), prev.end());
  return max_dist >= 0 && d > max_dist ? -1 : d;
}

/// The best hits by brute force over the strands opt searches: smallest distance, then the
/// (reference, strand) pairs reaching it in reference order, forward before reverse. Literal
/// comparison (the data sets hold only ACGT).
inline align::query_result brute_best(const std::vector<align::record>& refs,
                                      const align::record& q, const align::map_options& opt) {
  align::query_result r;
  const std::string rc = align::reverse_complement(q.seq);
  for (std::size_t i = 0; i < refs.size(); ++i) {
    for (std::uint8_t s = 0; s < 2; ++s) {
      if ((s == 0 && opt.strands == align::strand::reverse) ||
          (s == 1 && opt.strands == align::strand::forward))
        continue;
      int d = brute_distance(s ? rc : q.seq, refs[i].seq, opt.mode, opt.max_dist);
      if (d < 0) continue;
      if (r.dist < 0 || d < r.dist) {
        r.dist = d;
        r.refs.assign(1, static_cast<std::uint32_t>(i));
        r.strands.assign(1, s);
      } else if (d == r.dist && opt.tie_mode == align::ties::all) {
        r.refs.push_back(static_cast<std::uint32_t>(i));
        r.strands.push_back(s);
      }
    }
  }
  return r;
}

/// A small data set from the generator, with some references duplicated so that ties occur.
struct data_set {
  std::vector<align::record> refs, queries;
};

inline data_set make_data(std::uint64_t seed, int nrefs, int ref_min, int ref_max, int nqueries,
                          int qmin, int qmax, double error_rate, int duplicates) {
  align::gen_options g;
  g.seed = seed;
  g.refs = nrefs;
  g.ref_min = ref_min;
  g.ref_max = ref_max;
  g.queries = nqueries;
  g.qlen_min = qmin;
  g.qlen_max = qmax;
  g.error_rate = error_rate;
  align::generated text = align::generate(g);
  temp_dir dir;
  data_set d;
  d.refs = align::read_sequences(dir.write("r.fa", text.refs), "ACGT");
  d.queries = align::read_sequences(dir.write("q.fa", text.queries), "ACGT");
  for (int i = 0; i < duplicates && i < nrefs; ++i) {
    align::record copy = d.refs[static_cast<std::size_t>(i * 7 % nrefs)];
    copy.name += "_dup";
    d.refs.push_back(copy);
  }
  return d;
}

}  // namespace align_test
