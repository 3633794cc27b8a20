// SPDX-License-Identifier: Apache-2.0
// Problem data, the serial reference of the seven kernels, and 002's timing filter.
#include "kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace loops_kernels {

const char* name(kernel k) {
  switch (k) {
    case kernel::pingpong:
      return "pingpong";
    case kernel::rightshift:
      return "rightshift";
    case kernel::arraysum:
      return "arraysum";
    case kernel::dot:
      return "dot";
    case kernel::matvec:
      return "matvec";
    case kernel::matadd:
      return "matadd";
    case kernel::matmat:
      return "matmat";
  }
  return "?";
}

std::vector<std::string> all_names() {
  std::vector<std::string> names;
  for (kernel k : all_kernels) names.emplace_back(name(k));
  return names;
}

std::int64_t large_n(kernel k) {
  switch (k) {
    case kernel::pingpong:
    case kernel::rightshift:
    case kernel::arraysum:
      return 4 * 1024 * 1024 / 8;
    case kernel::dot:
      return 80 * 1024 / 8;
    case kernel::matvec:
      return 128;
    case kernel::matadd:
      return 512;
    case kernel::matmat:
      return 256;
  }
  return 1;
}

double value(char which, std::int64_t g) {
  const double t = static_cast<double>(g % 9973);
  switch (which) {
    case 'a':
      return 1.0 + 0.001 * t;
    case 'b':
      return 2.0 - 0.0005 * t;
    case 'x':
      return 0.5 + 0.0002 * t;
    case 'y':
      return 0.25 * static_cast<double>(g % 7);
  }
  return 0.0;
}

namespace {
std::vector<double> filled(char which, std::int64_t count) {
  std::vector<double> v(static_cast<std::size_t>(count));
  for (std::int64_t g = 0; g < count; ++g) v[static_cast<std::size_t>(g)] = value(which, g);
  return v;
}
}  // namespace

data make_data(const problem& pr) {
  const std::int64_t n = pr.n, np = pr.n * pr.p;
  data d;
  switch (pr.k) {
    case kernel::pingpong:
    case kernel::rightshift:
      d.a = filled('a', np);
      d.b.assign(static_cast<std::size_t>(np), 0.0);
      break;
    case kernel::arraysum:
      d.a = filled('a', np);
      break;
    case kernel::dot:
      d.x = filled('x', np);
      d.y = filled('y', np);
      break;
    case kernel::matvec:
      d.a = filled('a', n * np);
      d.x = filled('x', np);
      d.y = filled('y', n);
      break;
    case kernel::matadd:
      d.a = filled('a', n * np);
      d.b = filled('b', n * np);
      d.c.assign(static_cast<std::size_t>(n * np), 0.0);
      break;
    case kernel::matmat:
      d.a = filled('a', n * np);
      d.b = filled('b', np * n);
      d.c.assign(static_cast<std::size_t>(n * n), 0.0);
      break;
  }
  return d;
}

void serial_trial(const problem& pr, data& d) {
  const std::int64_t n = pr.n, np = pr.n * pr.p;
  const int p = pr.p;
  switch (pr.k) {
    case kernel::pingpong: {
      const std::int64_t j = p - 1;
      std::copy_n(d.a.begin(), n, d.b.begin() + j * n);
      std::copy_n(d.a.begin() + j * n, n, d.b.begin());
      break;
    }
    case kernel::rightshift:
      for (int w = 0; w < p; ++w) {
        std::copy_n(d.a.begin() + w * n, n, d.b.begin() + ((w + 1) % p) * n);
      }
      break;
    case kernel::arraysum: {
      double s = 0;
      for (std::int64_t i = 0; i < np; ++i) s += d.a[static_cast<std::size_t>(i)];
      d.s = s;
      break;
    }
    case kernel::dot: {
      double s = 0;
      for (std::int64_t i = 0; i < np; ++i)
        s += d.x[static_cast<std::size_t>(i)] * d.y[static_cast<std::size_t>(i)];
      d.s = s;
      break;
    }
    case kernel::matvec:
      for (std::int64_t j = 0; j < np; ++j) {
        const double xj = d.x[static_cast<std::size_t>(j)];
        const double* col = d.a.data() + j * n;
        for (std::int64_t i = 0; i < n; ++i) d.y[static_cast<std::size_t>(i)] += col[i] * xj;
      }
      break;
    case kernel::matadd:
      for (std::int64_t i = 0; i < n * np; ++i) {
        d.c[static_cast<std::size_t>(i)] =
            d.a[static_cast<std::size_t>(i)] + d.b[static_cast<std::size_t>(i)];
      }
      break;
    case kernel::matmat:
      for (std::int64_t jj = 0; jj < n; ++jj) {
        double* cc = d.c.data() + jj * n;
        for (std::int64_t k = 0; k < np; ++k) {
          const double bkj = d.b[static_cast<std::size_t>(jj * np + k)];
          const double* ak = d.a.data() + k * n;
          for (std::int64_t i = 0; i < n; ++i) cc[i] += ak[i] * bkj;
        }
      }
      break;
  }
}

std::vector<double> result_of(const problem& pr, const data& d) {
  switch (pr.k) {
    case kernel::pingpong:
    case kernel::rightshift:
      return d.b;
    case kernel::arraysum:
    case kernel::dot:
      return {d.s};
    case kernel::matvec:
      return d.y;
    case kernel::matadd:
    case kernel::matmat:
      return d.c;
  }
  return {};
}

double max_rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return std::numeric_limits<double>::infinity();
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double scale = std::max({std::abs(a[i]), std::abs(b[i]), 1e-300});
    worst = std::max(worst, std::abs(a[i] - b[i]) / scale);
  }
  return worst;
}

stats filter_002(std::vector<double> times) {
  stats st;
  if (times.size() < 2) return st;
  times.erase(times.begin());
  std::sort(times.begin(), times.end());
  auto median_of = [](const std::vector<double>& v) {
    const std::size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
  };
  const double med = median_of(times);
  const std::size_t max_drop = times.size() / 10;
  std::size_t spikes = 0;
  while (spikes < times.size() && times[times.size() - 1 - spikes] > 1.8 * med) ++spikes;
  const std::size_t drop = std::min(spikes, max_drop);
  st.dropped = static_cast<int>(drop + 1);
  times.resize(times.size() - drop);
  st.kept = static_cast<int>(times.size());
  st.median = median_of(times);
  st.min = times.front();
  return st;
}

std::size_t flush_bytes() {
  if (const char* v = std::getenv("WEFT_LOOPS_FLUSH_BYTES")) {
    const long long b = std::atoll(v);
    if (b > 0) return static_cast<std::size_t>(b);
  }
  return 32u << 20;
}

void flush(std::span<double> slice) {
  for (double& f : slice) f += 0.0000123;
}

}  // namespace loops_kernels
