// SPDX-License-Identifier: Apache-2.0
// The fork-join suite's shared code (bench/forkjoin/README.md): every benchmark written once
// against the task-group interface each peer program supplies as a type `Group`,
//
//   Group g;  g.run(f);  ...  g.wait();   // run: spawn f as a child; wait: join every child
//
// their reference results, and the trial loop. A group lives in one frame and is waited for
// before the frame returns, so children may capture the frame's variables by reference.
//
// Programs follow bench/peer_harness.hpp's protocol (one case per process, "raw" lines), with
// UNITS the spawns of one trial, so that ns per unit is the time per spawn. Every trial's result
// is checked after its clock stops; a wrong one exits with status 1.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <tuple>
#include <utility>
#include <vector>

#include "../peer_harness.hpp"

namespace weft_fj {

using weft_bench::peer_case;

/// fib-cutoff computes serially below this n.
inline constexpr int fib_cutoff = 20;
/// qsort and msort sort (and msort merges) serially below this many elements.
inline constexpr std::int64_t sort_cutoff = 4096;
/// UTS binomial tree: a non-root node has uts_bin_m children with probability 0.198 (an expected
/// 1 / (1 - 0.198 m) = 100 nodes under each of the root's N children).
inline constexpr int uts_bin_m = 5;
inline constexpr std::uint64_t uts_bin_q53 = (std::uint64_t{1} << 53) / 1000 * 198;  // 0.198 * 2^53
/// UTS geometric tree: every node above depth N has k children with probability (4/5)^k / 5
/// (mean 4), except the root, which has uts_geo_root.
inline constexpr int uts_geo_root = 4;
/// The seeds of the trees' roots and of the sorts' input.
inline constexpr std::uint64_t uts_seed = 19;
inline constexpr std::uint64_t sort_seed = 7;

/// splitmix64's finaliser: a cheap, well-mixed 64-bit hash (UTS's per-node hash, SHA-1 there).
constexpr std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// --- fib ---

/// fib(n) by plain recursion, the serial part below a cutoff.
constexpr std::int64_t fib_serial(int n) {
  return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2);
}

/// fib(n), spawning fib(n-1) and computing fib(n-2) in the frame itself, serial below `cutoff`.
template <class Group>
std::int64_t fib(int n, int cutoff) {
  if (n < cutoff || n < 2) return fib_serial(n);
  std::int64_t a = 0;
  Group g;
  g.run([&a, n, cutoff] { a = fib<Group>(n - 1, cutoff); });
  const std::int64_t b = fib<Group>(n - 2, cutoff);
  g.wait();
  return a + b;
}

/// The spawns fib<Group>(n, cutoff) makes: one per call with n >= max(2, cutoff).
inline std::int64_t fib_spawns(int n, int cutoff) {
  std::vector<std::int64_t> s(static_cast<std::size_t>(std::max(n, 1)) + 1, 0);
  for (int k = 2; k <= n; ++k) {
    if (k >= cutoff) s[k] = 1 + s[k - 1] + s[k - 2];
  }
  return s[static_cast<std::size_t>(n)];
}

/// fib(n) in closed loop form, the reference.
inline std::int64_t fib_value(int n) {
  std::int64_t a = 0, b = 1;
  for (int i = 0; i < n; ++i) b = std::exchange(a, b) + b;
  return a;
}

// --- N-Queens: one spawn per queen placed, bitmasks of the attacked columns and diagonals ---

/// The board of an N-Queens search after some rows: columns and diagonals under attack.
struct board {
  std::uint32_t cols = 0, left = 0, right = 0;
  /// The columns free in the next row.
  std::uint32_t free(int n) const { return ~(cols | left | right) & ((1u << n) - 1); }
  /// The board after a queen at column mask `bit` in the next row.
  board place(std::uint32_t bit) const {
    return {cols | bit, (left | bit) << 1, (right | bit) >> 1};
  }
};

/// Solutions below `b` (with `row` rows filled), one spawn per placement.
template <class Group>
std::int64_t nqueens(int n, int row, board b) {
  if (row == n) return 1;
  std::int64_t found[32];
  int k = 0;
  Group g;
  for (std::uint32_t avail = b.free(n); avail != 0; avail &= avail - 1) {
    const std::uint32_t bit = avail & -avail;
    g.run([&found, n, row, b, bit, slot = k++] {
      found[slot] = nqueens<Group>(n, row + 1, b.place(bit));
    });
  }
  g.wait();
  std::int64_t sum = 0;
  for (int i = 0; i < k; ++i) sum += found[i];
  return sum;
}

/// Solutions and placements (the spawns the parallel search makes) of N-Queens, serially.
inline std::pair<std::int64_t, std::int64_t> nqueens_reference(int n, int row = 0, board b = {}) {
  if (row == n) return {1, 0};
  std::pair<std::int64_t, std::int64_t> r{0, 0};
  for (std::uint32_t avail = b.free(n); avail != 0; avail &= avail - 1) {
    const auto [solutions, placements] = nqueens_reference(n, row + 1, b.place(avail & -avail));
    r.first += solutions;
    r.second += placements + 1;
  }
  return r;
}

// --- Unbalanced tree search: every node's shape follows from a hash of its parent's ---

/// A UTS tree node: its hash state and depth.
struct uts_node {
  std::uint64_t state;
  int depth;
};

/// Which tree (and its root's parameter: the root's children, or the depth limit).
enum class uts_shape { binomial, geometric };

/// The number of children of `v` (deterministic in the node's state; integer arithmetic only, so
/// that every language builds the same tree).
inline int uts_children(uts_shape shape, std::int64_t param, uts_node v) {
  const std::uint64_t u = v.state >> 11;  // uniform in [0, 2^53)
  if (shape == uts_shape::binomial) {
    if (v.depth == 0) return static_cast<int>(param);
    return u < uts_bin_q53 ? uts_bin_m : 0;
  }
  if (v.depth >= param) return 0;
  if (v.depth == 0) return uts_geo_root;
  // Geometric: k or more children when u < 2^53 (4/5)^k.
  int k = 0;
  for (std::uint64_t t = std::uint64_t{1} << 53; u < (t = t * 4 / 5);) ++k;
  return k;
}

/// The i-th child of `v`.
constexpr uts_node uts_child(uts_node v, int i) {
  return {mix(v.state ^ (0xd1b54a32d192ed03ULL * static_cast<std::uint64_t>(i + 1))), v.depth + 1};
}

/// The root of the tree.
constexpr uts_node uts_root() {
  return {mix(uts_seed), 0};
}

/// Nodes of the subtree under `v`, `v` included, one spawn per child.
template <class Group>
std::int64_t uts(uts_shape shape, std::int64_t param, uts_node v) {
  const int k = uts_children(shape, param, v);
  if (k == 0) return 1;
  std::int64_t few[16];
  std::vector<std::int64_t> many(k > 16 ? static_cast<std::size_t>(k) : 0);
  std::int64_t* const below = k > 16 ? many.data() : few;
  Group g;
  for (int i = 0; i < k; ++i) {
    g.run([below, shape, param, v, i] { below[i] = uts<Group>(shape, param, uts_child(v, i)); });
  }
  g.wait();
  std::int64_t sum = 1;
  for (int i = 0; i < k; ++i) sum += below[i];
  return sum;
}

/// Nodes of the tree, counted serially (an explicit stack: the binomial tree is deep).
inline std::int64_t uts_reference(uts_shape shape, std::int64_t param) {
  std::int64_t nodes = 0;
  std::vector<uts_node> stack{uts_root()};
  while (!stack.empty()) {
    const uts_node v = stack.back();
    stack.pop_back();
    ++nodes;
    for (int i = uts_children(shape, param, v) - 1; i >= 0; --i) stack.push_back(uts_child(v, i));
  }
  return nodes;
}

// --- Sorting 32-bit integers; both return the spawns they made ---

/// Partitions [lo, hi) around the median of its first, middle and last elements: returns
/// {less, more} with the keys below the pivot in [lo, less), the pivot's in [less, more) (so that
/// both outer parts are shorter than the whole, whatever the input), the rest in [more, hi).
inline std::pair<std::uint32_t*, std::uint32_t*> partition(std::uint32_t* lo, std::uint32_t* hi) {
  const std::uint32_t a = lo[0], b = lo[(hi - lo) / 2], c = hi[-1];
  const std::uint32_t pivot = std::max(std::min(a, b), std::min(std::max(a, b), c));
  // Two Lomuto passes, written as the Go peer writes them, so that every peer makes the same
  // spawns.
  std::uint32_t* less = lo;
  for (std::uint32_t* p = lo; p != hi; ++p) {
    if (*p < pivot) std::swap(*p, *less++);
  }
  std::uint32_t* more = less;
  for (std::uint32_t* p = less; p != hi; ++p) {
    if (*p == pivot) std::swap(*p, *more++);
  }
  return {less, more};
}

/// Sorts [lo, hi): partitions around a median of three, spawns the lower part, sorts the upper
/// part itself. Serial (std::sort) below sort_cutoff elements.
template <class Group>
std::int64_t quick_sort(std::uint32_t* lo, std::uint32_t* hi) {
  if (hi - lo <= sort_cutoff) {
    std::sort(lo, hi);
    return 0;
  }
  std::uint32_t *less, *more;
  std::tie(less, more) = partition(lo, hi);  // clang 14 cannot capture structured bindings
  std::int64_t left = 0;
  Group g;
  g.run([&left, lo, less] { left = quick_sort<Group>(lo, less); });
  const std::int64_t right = quick_sort<Group>(more, hi);
  g.wait();
  return 1 + left + right;
}

/// Merges sorted [a, a_end) and [b, b_end) into `out`: splits the longer range at its middle and
/// the other at the same key, spawns the lower halves' merge. Serial below sort_cutoff elements.
template <class Group>
std::int64_t merge(const std::uint32_t* a, const std::uint32_t* a_end, const std::uint32_t* b,
                   const std::uint32_t* b_end, std::uint32_t* out) {
  if ((a_end - a) + (b_end - b) <= sort_cutoff) {
    std::merge(a, a_end, b, b_end, out);
    return 0;
  }
  if (a_end - a < b_end - b) {
    std::swap(a, b);
    std::swap(a_end, b_end);
  }
  const std::uint32_t* const a_mid = a + (a_end - a) / 2;
  const std::uint32_t* const b_mid = std::lower_bound(b, b_end, *a_mid);
  std::int64_t lower = 0;
  Group g;
  g.run([&lower, a, a_mid, b, b_mid, out] { lower = merge<Group>(a, a_mid, b, b_mid, out); });
  const std::int64_t upper =
      merge<Group>(a_mid, a_end, b_mid, b_end, out + (a_mid - a) + (b_mid - b));
  g.wait();
  return 1 + lower + upper;
}

/// Sorts the n elements at `a`, leaving them in `a` (to_tmp false) or in `tmp` (to_tmp true); the
/// other buffer is scratch. Sorts the halves into the other buffer (the lower half spawned), then
/// merges them back.
template <class Group>
std::int64_t merge_sort(std::uint32_t* a, std::uint32_t* tmp, std::int64_t n, bool to_tmp) {
  if (n <= sort_cutoff) {
    std::sort(a, a + n);
    if (to_tmp) std::copy(a, a + n, tmp);
    return 0;
  }
  const std::int64_t h = n / 2;
  std::int64_t left = 0;
  Group g;
  g.run([&left, a, tmp, h, to_tmp] { left = merge_sort<Group>(a, tmp, h, !to_tmp); });
  const std::int64_t right = merge_sort<Group>(a + h, tmp + h, n - h, !to_tmp);
  g.wait();
  const std::uint32_t* from = to_tmp ? a : tmp;
  std::uint32_t* const to = to_tmp ? tmp : a;
  return 1 + left + right + merge<Group>(from, from + h, from + h, from + n, to);
}

/// What a sort must preserve: the multiset's sum and sum of squares (mod 2^64).
struct checksum {
  std::uint64_t sum = 0, squares = 0;
  bool operator==(const checksum&) const = default;
};

/// The checksum of [p, p + n).
inline checksum checksum_of(const std::uint32_t* p, std::int64_t n) {
  checksum c;
  for (std::int64_t i = 0; i < n; ++i) {
    c.sum += p[i];
    c.squares += static_cast<std::uint64_t>(p[i]) * p[i];
  }
  return c;
}

/// The sort benchmarks' input: n pseudo-random 32-bit integers.
inline std::vector<std::uint32_t> sort_input(std::int64_t n) {
  std::vector<std::uint32_t> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    v[static_cast<std::size_t>(i)] = static_cast<std::uint32_t>(mix(sort_seed + i) >> 32);
  }
  return v;
}

// --- The trial loop and the dispatch ---

/// Prints why a trial's result is wrong and exits with status 1.
[[noreturn]] inline void wrong(const peer_case& c, const char* what, long long got,
                               long long want) {
  std::fprintf(stderr, "%s n=%lld streams=%d: wrong %s: %lld, expected %lld\n", c.bench.c_str(),
               static_cast<long long>(c.n), c.streams, what, got, want);
  std::exit(1);
}

/// Runs c.warmup untimed and c.trials timed trials and prints the raw line (bench named `bench`).
/// Before each trial `setup()` runs untimed; `once()` is the trial and returns its spawns;
/// `check()` runs after the clock stops and exits on a wrong result.
template <class Setup, class Once, class Check>
void run_trials(const char* peer, const char* bench, const peer_case& c, Setup&& setup, Once&& once,
                Check&& check) {
  for (int i = 0; i < c.warmup; ++i) {
    setup();
    once();
    check();
  }
  std::vector<double> ns;
  std::int64_t spawns = 0;
  for (int i = 0; i < c.trials; ++i) {
    setup();
    const auto start = std::chrono::steady_clock::now();
    spawns = once();
    const auto stop = std::chrono::steady_clock::now();
    check();
    ns.push_back(std::chrono::duration<double, std::nano>(stop - start).count());
  }
  // A case without spawns (fib-cutoff below its cutoff, a sort below its cutoff) still reports
  // the time of its trial, as one unit.
  std::printf("raw\t%s\t%s\t%lld\t%d\t%lld", peer, bench, static_cast<long long>(c.n), c.streams,
              static_cast<long long>(std::max<std::int64_t>(spawns, 1)));
  for (double t : ns) std::printf("\t%.0f", t);
  std::printf("\n");
  std::fflush(stdout);
}

/// The benchmarks through task groups `Group`: what run_bench calls. Each returns the result to
/// check; the sorts return their spawns.
template <class Group>
struct group_algorithms {
  static std::int64_t fib(int n, int cutoff) { return weft_fj::fib<Group>(n, cutoff); }
  static std::int64_t nqueens(int n) { return weft_fj::nqueens<Group>(n, 0, {}); }
  static std::int64_t uts(uts_shape shape, std::int64_t param) {
    return weft_fj::uts<Group>(shape, param, uts_root());
  }
  static std::int64_t qsort(std::uint32_t* p, std::int64_t n) {
    return quick_sort<Group>(p, p + n);
  }
  static std::int64_t msort(std::uint32_t* p, std::uint32_t* tmp, std::int64_t n) {
    return merge_sort<Group>(p, tmp, n, false);
  }
};

/// Runs case `c` (c.bench without the peer's prefix) with `Algorithms` (such as
/// group_algorithms<Group>): fib, fib-cutoff, nqueens, uts-bin, uts-geo, qsort, msort (when
/// Algorithms has it), or empty (no work: the program's baseline memory). Skips (status 3) an
/// unknown benchmark or an N out of range.
template <class Algorithms>
void run_bench(const char* peer, const peer_case& c) {
  const std::string& bench = c.bench;
  const auto noop = [] {};
  if (bench == "empty") {
    run_trials(
        peer, "empty", c, noop, [] { return std::int64_t{1}; }, noop);
  } else if (bench == "fib" || bench == "fib-cutoff") {
    if (c.n > 60) weft_bench::skip_case(peer, c, "fib's n is at most 60");
    const int n = static_cast<int>(c.n), cutoff = bench == "fib" ? 2 : fib_cutoff;
    std::int64_t got = 0;
    const std::int64_t spawns = fib_spawns(n, cutoff), want = fib_value(n);
    run_trials(
        peer, bench.c_str(), c, noop,
        [&] {
          got = Algorithms::fib(n, cutoff);
          return spawns;
        },
        [&] {
          if (got != want) wrong(c, "fib", got, want);
        });
  } else if (bench == "nqueens") {
    if (c.n > 16) weft_bench::skip_case(peer, c, "N-Queens' n is at most 16");
    const int n = static_cast<int>(c.n);
    // Not structured bindings: clang 14 (the libomp peer) cannot capture those.
    const std::pair<std::int64_t, std::int64_t> reference = nqueens_reference(n);
    const std::int64_t want = reference.first, spawns = reference.second;
    std::int64_t got = 0;
    run_trials(
        peer, "nqueens", c, noop,
        [&] {
          got = Algorithms::nqueens(n);
          return spawns;
        },
        [&] {
          if (got != want) wrong(c, "solution count", got, want);
        });
  } else if (bench == "uts-bin" || bench == "uts-geo") {
    const uts_shape shape = bench == "uts-bin" ? uts_shape::binomial : uts_shape::geometric;
    if (shape == uts_shape::binomial && c.n > 1000000) {
      weft_bench::skip_case(peer, c, "the binomial tree's root has at most 10^6 children");
    }
    if (shape == uts_shape::geometric && c.n > 20) {
      weft_bench::skip_case(peer, c, "the geometric tree's depth is at most 20");
    }
    const std::int64_t want = uts_reference(shape, c.n);
    std::int64_t got = 0;
    run_trials(
        peer, bench.c_str(), c, noop,
        [&] {
          got = Algorithms::uts(shape, c.n);
          return want - 1;
        },
        [&] {
          if (got != want) wrong(c, "node count", got, want);
        });
  } else if (bench == "qsort" || bench == "msort") {
    constexpr bool has_msort = requires(std::uint32_t * p) {
      Algorithms::msort(p, p, 1);
    };
    if (bench == "msort" && !has_msort) {
      weft_bench::skip_case(peer, c,
                            "a merge waits for both sorted halves, and tasklets cannot wait");
    }
    if (c.n > (std::int64_t{1} << 31)) weft_bench::skip_case(peer, c, "at most 2^31 elements");
    const std::vector<std::uint32_t> input = sort_input(c.n);
    const checksum want = checksum_of(input.data(), c.n);
    std::vector<std::uint32_t> data(input.size()), tmp(bench == "msort" ? input.size() : 0);
    const bool quick = bench == "qsort";
    run_trials(
        peer, bench.c_str(), c, [&] { std::copy(input.begin(), input.end(), data.begin()); },
        [&] {
          std::uint32_t* const p = data.data();
          if (quick) return Algorithms::qsort(p, c.n);
          if constexpr (has_msort) return Algorithms::msort(p, tmp.data(), c.n);
          return std::int64_t{0};
        },
        [&] {
          const auto sorted = std::is_sorted_until(data.begin(), data.end()) - data.begin();
          if (sorted != c.n)
            wrong(c, "sort: elements in order before the first out of order", sorted, c.n);
          if (!(checksum_of(data.data(), c.n) == want)) {
            wrong(c, "sort: checksum (not a permutation of the input)", 0, 1);
          }
        });
  } else {
    weft_bench::skip_case(peer, c, "unknown benchmark");
  }
}

}  // namespace weft_fj
