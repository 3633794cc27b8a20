// SPDX-License-Identifier: Apache-2.0
// weft_bench_collect: turns the peer programs' raw lines into the suite's results.
//
//   weft_bench_collect --json=FILE --csv=FILE [--memory-csv=FILE] [--context=KEY=VALUE ...]
//                      [INPUT ...]
//
// Reads the "raw", "rss" and "skip" lines of bench/peer_harness.hpp's protocol from the INPUT files
// (stdin when none; other lines are ignored), applies 002's filter (filter.hpp) to every raw case,
// and writes:
//   --json        Google Benchmark's JSON shape: one "median" and one "min" aggregate per case,
//                 named PEER/BENCH/N/streams:S, real_time in ns per unit; memory cases as
//                 iteration entries with maxrss_kb and bytes_per_unit counters
//   --csv         peer,bench,n,streams,units_per_trial,median_ns,min_ns,kept,trials,max_ns
//                 (min and max of the kept trials)
//   --memory-csv  peer,bench,n,streams,maxrss_kb,bytes_per_unit (RSS above the smallest N measured
//                 for the same peer, bench and streams, per extra unit; empty for that smallest N)
//   --markdown    the tables below as Markdown
// and prints tables to stdout: ns per unit per bench and stream count, with the ratio weft/peer
// (below 1: weft is faster). Exits 1 when an input cannot be read or holds a malformed line.
//
// With --forkjoin (the fork-join suite, bench/forkjoin/README.md: units are spawns, "empty" cases
// give each program's baseline memory) the tables, --csv and --markdown take the fork-join layout
// instead: per benchmark, time per trial, ns per spawn, spread, speedup over 1 stream, peak RSS
// and RSS above the program's empty run, and ratios of every weft variant to every peer; --csv
// writes peer,bench,n,streams,spawns,median_ms,min_ms,max_ms,ns_per_spawn,spread,kept,trials,
// speedup,maxrss_kb,rss_above_empty_kb.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "filter.hpp"
#include "machine.hpp"

namespace {

struct case_key {
  std::string peer, bench;
  std::int64_t n = 0;
  int streams = 1;
  auto tie() const { return std::tie(bench, streams, n, peer); }
  bool operator<(const case_key& o) const { return tie() < o.tie(); }
};

struct results {
  std::map<case_key, weft_bench::trial_summary> times;
  std::map<case_key, long> rss_kb;
  std::vector<std::string> skips;
};

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> f;
  std::istringstream in(line);
  for (std::string x; std::getline(in, x, '\t');) f.push_back(x);
  return f;
}

/// Parses one input; returns false (after a message) on a malformed protocol line.
bool read_input(std::istream& in, const std::string& name, results& r) {
  int lineno = 0;
  for (std::string line; std::getline(in, line);) {
    ++lineno;
    const std::vector<std::string> f = split_tabs(line);
    if (f.empty()) continue;
    try {
      if (f[0] == "raw" && f.size() >= 7) {
        case_key k{f[1], f[2], std::stoll(f[3]), std::stoi(f[4])};
        const std::int64_t units = std::stoll(f[5]);
        std::vector<double> ns;
        for (std::size_t i = 6; i < f.size(); ++i) ns.push_back(std::stod(f[i]) / units);
        r.times[k] = weft_bench::filter_trials(std::move(ns), units);
      } else if (f[0] == "rss" && f.size() == 6) {
        r.rss_kb[{f[1], f[2], std::stoll(f[3]), std::stoi(f[4])}] = std::stol(f[5]);
      } else if (f[0] == "skip" && f.size() >= 4) {
        const std::string skip = f[1] + " " + f[2] + ": " + f[3];
        if (std::find(r.skips.begin(), r.skips.end(), skip) == r.skips.end())
          r.skips.push_back(skip);
      } else if (f[0] == "raw" || f[0] == "rss" || f[0] == "skip") {
        throw std::invalid_argument("wrong number of fields");
      }
    } catch (const std::exception& e) {
      std::cerr << "weft_bench_collect: " << name << ":" << lineno << ": malformed line ("
                << e.what() << "): " << line << "\n";
      return false;
    }
  }
  return true;
}

/// Bytes per unit above the smallest N measured for the same peer, bench and streams; NaN for that
/// smallest N (it is the baseline).
double bytes_per_unit(const results& r, const case_key& k, long kb) {
  const case_key* base = nullptr;
  for (const auto& [other, v] : r.rss_kb) {
    if (other.peer == k.peer && other.bench == k.bench && other.streams == k.streams &&
        other.n < k.n && (!base || other.n < base->n)) {
      base = &other;
    }
  }
  if (!base) return std::nan("");
  return static_cast<double>(kb - r.rss_kb.at(*base)) * 1024.0 / static_cast<double>(k.n - base->n);
}

std::string name_of(const case_key& k) {
  return k.peer + "/" + k.bench + "/" + std::to_string(k.n) +
         "/streams:" + std::to_string(k.streams);
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

/// A ratio with three significant digits (0.000123 and 1234 alike).
std::string ratio(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

/// `v` rounded to `decimals` decimal places: nlohmann writes the shortest text that reads back as
/// the same double, so 12.3456 rounded to 3 places is written "12.346" as the "%.3f" form was.
double rounded(double v, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(v * scale) / scale;
}

void write_json(std::ostream& out, const results& r,
                const std::vector<std::pair<std::string, std::string>>& context) {
  const cpu_set_t mask = [] {
    cpu_set_t m;
    CPU_ZERO(&m);
    sched_getaffinity(0, sizeof m, &m);
    return m;
  }();
  const weft_bench::machine m = weft_bench::describe_machine(mask);
  // ordered_json keeps the keys in the order Google Benchmark writes them.
  using json = nlohmann::ordered_json;
  json ctx = {
      {"date", weft_bench::local_date()},
      {"host_name", m.host},
      {"num_cpus", m.online_cpus},
      {"mhz_per_cpu", static_cast<long>(m.mhz)},
      {"cpu_scaling_enabled", m.governor != "unavailable" && m.governor != "performance"},
      {"cpu_model", m.cpu_model},
      {"scaling_governor", m.governor},
      {"load_average_at_collect", weft_bench::load_average()},
  };
  for (const auto& [k, v] : context) ctx[k] = v;
  ctx["method"] =
      "per case: warm-up runs, then timed trials; first trial dropped, trials above 1.8x the "
      "median dropped (at most 10%); real_time is ns per unit, iterations the units per trial";
  ctx["library_build_type"] = "release";
  json benchmarks = json::array();
  for (const auto& [k, s] : r.times) {
    for (const std::string agg : {"median", "min"}) {
      benchmarks.push_back({
          {"name", name_of(k) + "_" + agg},
          {"run_name", name_of(k)},
          {"run_type", "aggregate"},
          {"repetitions", s.kept},
          {"threads", 1},
          {"aggregate_name", agg},
          {"aggregate_unit", "time"},
          {"iterations", s.units_per_trial},
          {"real_time", rounded(agg == "median" ? s.median_ns : s.min_ns, 3)},
          {"time_unit", "ns"},
          {"trials", s.trials},
      });
    }
  }
  for (const auto& [k, kb] : r.rss_kb) {
    json e = {
        {"name", "memory/" + name_of(k)},
        {"run_name", "memory/" + name_of(k)},
        {"run_type", "iteration"},
        {"repetitions", 1},
        {"threads", 1},
        {"iterations", 1},
        {"real_time", 0},
        {"time_unit", "ns"},
        {"maxrss_kb", kb},
    };
    if (const double b = bytes_per_unit(r, k, kb); !std::isnan(b)) {
      e["bytes_per_unit"] = rounded(b, 1);
    }
    benchmarks.push_back(std::move(e));
  }
  const json doc = {{"context", std::move(ctx)}, {"benchmarks", std::move(benchmarks)}};
  // Bytes that are not UTF-8 (a peer's name, a --context value) become U+FFFD rather than make
  // dump() throw.
  out << doc.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
}

void write_csv(std::ostream& out, const results& r) {
  out << "peer,bench,n,streams,units_per_trial,median_ns,min_ns,kept,trials,max_ns\n";
  for (const auto& [k, s] : r.times) {
    out << k.peer << "," << k.bench << "," << k.n << "," << k.streams << "," << s.units_per_trial
        << "," << fixed(s.median_ns, 2) << "," << fixed(s.min_ns, 2) << "," << s.kept << ","
        << s.trials << "," << fixed(s.max_ns, 2) << "\n";
  }
}

void write_memory_csv(std::ostream& out, const results& r) {
  out << "peer,bench,n,streams,maxrss_kb,bytes_per_unit\n";
  for (const auto& [k, kb] : r.rss_kb) {
    const double b = bytes_per_unit(r, k, kb);
    out << k.peer << "," << k.bench << "," << k.n << "," << k.streams << "," << kb << ","
        << (std::isnan(b) ? "" : fixed(b, 1)) << "\n";
  }
}

/// The columns (peers, weft's first) and rows (N) of the table of one benchmark at one stream
/// count, as the text and Markdown reports lay it out.
std::pair<std::vector<std::string>, std::set<std::int64_t>> table_of(const results& r,
                                                                     const std::string& bench,
                                                                     int streams) {
  std::vector<std::string> cols;
  std::set<std::int64_t> ns;
  for (const auto& [k, s] : r.times) {
    if (k.bench != bench || k.streams != streams) continue;
    ns.insert(k.n);
    if (std::find(cols.begin(), cols.end(), k.peer) == cols.end()) cols.push_back(k.peer);
  }
  std::sort(cols.begin(), cols.end(), [](const std::string& a, const std::string& b) {
    return std::make_pair(a.rfind("weft", 0) != 0, a) < std::make_pair(b.rfind("weft", 0) != 0, b);
  });
  return {cols, ns};
}

void print_tables(const results& r) {
  std::set<std::pair<std::string, int>> groups;
  std::set<std::string> peers;
  for (const auto& [k, s] : r.times) {
    groups.insert({k.bench, k.streams});
    peers.insert(k.peer);
  }
  for (const auto& [bench, streams] : groups) {
    const auto [cols, ns] = table_of(r, bench, streams);
    const std::string ref = "weft-ult";  // every bench has weft ULTs; tasklets are a column
    std::printf("\n%s, %d stream%s: median ns per unit (ratio weft-ult/peer)\n", bench.c_str(),
                streams, streams == 1 ? "" : "s");
    std::printf("%10s", "N");
    for (const auto& c : cols) std::printf("  %22s", c.c_str());
    std::printf("\n");
    for (std::int64_t n : ns) {
      std::printf("%10lld", static_cast<long long>(n));
      const auto refit = r.times.find({ref, bench, n, streams});
      for (const auto& c : cols) {
        const auto it = r.times.find({c, bench, n, streams});
        std::string cell = "-";
        if (it != r.times.end()) {
          cell = fixed(it->second.median_ns, 1);
          if (refit != r.times.end() && c != ref) {
            cell += " (" + ratio(refit->second.median_ns / it->second.median_ns) + ")";
          }
        }
        std::printf("  %22s", cell.c_str());
      }
      std::printf("\n");
    }
  }
  if (!r.rss_kb.empty()) {
    std::printf("\npeak RSS (MiB) and bytes per live unit above the smallest N\n");
    for (const auto& [k, kb] : r.rss_kb) {
      const double b = bytes_per_unit(r, k, kb);
      std::printf("  %-34s %10.1f MiB  %s\n", name_of(k).c_str(), kb / 1024.0,
                  !std::isnan(b) ? (fixed(b, 0) + " B/unit").c_str() : "(baseline)");
    }
  }
  for (const auto& s : r.skips) std::printf("skipped: %s\n", s.c_str());
}

/// The same tables as print_tables, as Markdown (for docs/benchmarks.md): one table per bench and
/// stream count, cells "median ns (ratio weft-ult/peer)", then the memory table.
void write_markdown(std::ostream& out, const results& r) {
  std::set<std::pair<std::string, int>> groups;
  for (const auto& [k, s] : r.times) groups.insert({k.bench, k.streams});
  for (const auto& [bench, streams] : groups) {
    const auto [cols, ns] = table_of(r, bench, streams);
    out << "\n**" << bench << ", " << streams << (streams == 1 ? " stream" : " streams")
        << "**: median ns per unit (weft-ult / peer)\n\n| N |";
    for (const auto& c : cols) out << " " << c << " |";
    out << "\n|---|";
    for (std::size_t i = 0; i < cols.size(); ++i) out << "---|";
    out << "\n";
    for (std::int64_t n : ns) {
      out << "| " << n << " |";
      const auto refit = r.times.find({"weft-ult", bench, n, streams});
      for (const auto& c : cols) {
        const auto it = r.times.find({c, bench, n, streams});
        out << " ";
        if (it == r.times.end()) {
          out << "-";
        } else {
          out << fixed(it->second.median_ns, 1);
          if (refit != r.times.end() && c != "weft-ult") {
            out << " (" << ratio(refit->second.median_ns / it->second.median_ns) << ")";
          }
        }
        out << " |";
      }
      out << "\n";
    }
  }
  if (!r.rss_kb.empty()) {
    out << "\n**Peak RSS** (one process per measurement) and bytes per live unit above the "
           "smallest N\n\n| peer | bench | N | peak RSS (MiB) | bytes per unit "
           "|\n|---|---|---|---|---|\n";
    for (const auto& [k, kb] : r.rss_kb) {
      const double b = bytes_per_unit(r, k, kb);
      out << "| " << k.peer << " | " << k.bench << " | " << k.n << " | " << fixed(kb / 1024.0, 1)
          << " | " << (std::isnan(b) ? "(baseline)" : fixed(b, 0)) << " |\n";
    }
  }
  if (!r.skips.empty()) {
    out << "\nNot run:\n\n";
    for (const auto& s : r.skips) out << "- " << s << "\n";
  }
}

// --- The fork-join layout (--forkjoin) ---

/// One fork-join case, with what the tables derive from the others.
struct fj_row {
  case_key key;
  const weft_bench::trial_summary* times;
  double speedup = std::nan("");       ///< 1-stream median over this median, same peer, bench, n
  std::optional<long> rss_kb;          ///< peak RSS of the case's process
  std::optional<long> above_empty_kb;  ///< rss_kb less the peer's empty program, same streams
};

/// The weft variants (table columns of ratios) and the other peers, in a fixed order.
bool is_weft(const std::string& peer) {
  return peer.rfind("weft", 0) == 0;
}

std::vector<fj_row> fj_rows(const results& r) {
  std::vector<fj_row> rows;
  for (const auto& [k, s] : r.times) {
    if (k.bench == "empty") continue;
    fj_row row{k, &s, std::nan(""), std::nullopt, std::nullopt};
    const auto one = r.times.find({k.peer, k.bench, k.n, 1});
    if (one != r.times.end()) row.speedup = one->second.median_ns / s.median_ns;
    const auto rss = r.rss_kb.find(k);
    if (rss != r.rss_kb.end()) {
      row.rss_kb = rss->second;
      const auto empty = r.rss_kb.find({k.peer, "empty", 1, k.streams});
      if (empty != r.rss_kb.end()) row.above_empty_kb = rss->second - empty->second;
    }
    rows.push_back(row);
  }
  // Per benchmark, then N, then streams, weft's variants first.
  std::sort(rows.begin(), rows.end(), [](const fj_row& a, const fj_row& b) {
    return std::make_tuple(a.key.bench, a.key.n, a.key.streams, !is_weft(a.key.peer), a.key.peer) <
           std::make_tuple(b.key.bench, b.key.n, b.key.streams, !is_weft(b.key.peer), b.key.peer);
  });
  return rows;
}

/// Median time of one trial in ms.
double trial_ms(const weft_bench::trial_summary& s, double ns_per_unit) {
  return ns_per_unit * static_cast<double>(s.units_per_trial) / 1e6;
}

/// The ratio of `weft`'s median time to `peer`'s for the same bench, N and streams, or "-". When
/// `weft` ran the bench on as many streams only at a smaller N (its case timed out and was retried
/// smaller), the ratio of the ns per spawn instead, marked "*".
std::string fj_ratio(const results& r, const std::string& weft, const case_key& k) {
  const auto p = r.times.find(k);
  if (p == r.times.end()) return "-";
  const auto w = r.times.find({weft, k.bench, k.n, k.streams});
  if (w != r.times.end()) {
    return ratio(trial_ms(w->second, w->second.median_ns) /
                 trial_ms(p->second, p->second.median_ns));
  }
  const weft_bench::trial_summary* smaller = nullptr;
  for (const auto& [other, s] : r.times) {
    if (other.peer == weft && other.bench == k.bench && other.streams == k.streams &&
        other.n < k.n && r.times.find({k.peer, k.bench, other.n, k.streams}) == r.times.end()) {
      smaller = &s;  // ascending N: the last one is the largest
    }
  }
  if (!smaller) return "-";
  return ratio(smaller->median_ns / p->second.median_ns) + "*";
}

std::string mib(std::optional<long> kb) {
  return kb ? fixed(static_cast<double>(*kb) / 1024.0, 1) : "-";
}

std::string kb_or_empty(std::optional<long> kb) {
  return kb ? std::to_string(*kb) : "";
}

std::set<std::string> fj_peers(const results& r, bool weft) {
  std::set<std::string> out;
  for (const auto& [k, s] : r.times) {
    if (k.bench != "empty" && is_weft(k.peer) == weft) out.insert(k.peer);
  }
  return out;
}

void write_fj_csv(std::ostream& out, const results& r) {
  out << "peer,bench,n,streams,spawns,median_ms,min_ms,max_ms,ns_per_spawn,spread,kept,trials,"
         "speedup,maxrss_kb,rss_above_empty_kb\n";
  for (const fj_row& row : fj_rows(r)) {
    const auto& s = *row.times;
    out << row.key.peer << "," << row.key.bench << "," << row.key.n << "," << row.key.streams << ","
        << s.units_per_trial << "," << fixed(trial_ms(s, s.median_ns), 3) << ","
        << fixed(trial_ms(s, s.min_ns), 3) << "," << fixed(trial_ms(s, s.max_ns), 3) << ","
        << fixed(s.median_ns, 1) << "," << fixed(s.spread, 3) << "," << s.kept << "," << s.trials
        << "," << (std::isnan(row.speedup) ? "" : fixed(row.speedup, 3)) << ","
        << kb_or_empty(row.rss_kb) << "," << kb_or_empty(row.above_empty_kb) << "\n";
  }
}

/// The fork-join tables as text (markdown false) or Markdown: one per benchmark, then the ratios
/// of each weft variant to each peer.
void write_fj_tables(std::ostream& out, const results& r, bool markdown) {
  const std::set<std::string> wefts = fj_peers(r, true), others = fj_peers(r, false);
  const std::vector<std::string> head{"peer",     "N",      "streams", "spawns",  "time ms",
                                      "ns/spawn", "spread", "speedup", "RSS MiB", "above empty"};
  auto row_out = [&](const std::vector<std::string>& cells) {
    if (markdown) {
      out << "|";
      for (const auto& c : cells) out << " " << c << " |";
    } else {
      for (std::size_t i = 0; i < cells.size(); ++i) {
        char buf[64];
        std::snprintf(buf, sizeof buf, i == 0 ? "%-16s" : "  %12s", cells[i].c_str());
        out << buf;
      }
    }
    out << "\n";
  };
  auto rule = [&](std::size_t columns) {
    if (!markdown) return;
    out << "|";
    for (std::size_t i = 0; i < columns; ++i) out << "---|";
    out << "\n";
  };
  std::string bench;
  std::vector<std::string> cols = head;
  for (const auto& w : wefts) cols.push_back(w + "/peer");
  for (const fj_row& row : fj_rows(r)) {
    if (row.key.bench != bench) {
      bench = row.key.bench;
      out << "\n"
          << (markdown ? "**" : "") << bench << (markdown ? "**" : "")
          << ": median of the kept trials; spread = slowest / fastest of all trials; ratios of "
             "median times (below 1: weft is faster)\n";
      if (markdown) out << "\n";
      row_out(cols);
      rule(cols.size());
    }
    const auto& s = *row.times;
    std::vector<std::string> cells{row.key.peer,
                                   std::to_string(row.key.n),
                                   std::to_string(row.key.streams),
                                   std::to_string(s.units_per_trial),
                                   fixed(trial_ms(s, s.median_ns), 1),
                                   fixed(s.median_ns, 1),
                                   fixed(s.spread, 2),
                                   std::isnan(row.speedup) ? "-" : fixed(row.speedup, 2),
                                   mib(row.rss_kb),
                                   mib(row.above_empty_kb)};
    for (const auto& w : wefts) cells.push_back(w == row.key.peer ? "" : fj_ratio(r, w, row.key));
    row_out(cells);
  }
  // The ratio summary: one table per weft variant, a row per case, a column per peer.
  std::set<std::tuple<std::string, std::int64_t, int>> cases;
  for (const auto& [k, s] : r.times) {
    if (k.bench != "empty") cases.insert({k.bench, k.n, k.streams});
  }
  for (const auto& w : wefts) {
    out << "\n"
        << (markdown ? "**" : "") << "Ratios " << w << " / peer" << (markdown ? "**" : "")
        << " (median time of one trial; below 1: weft is faster)\n";
    if (markdown) out << "\n";
    std::vector<std::string> c{"bench", "N", "streams"};
    for (const auto& p : others) c.push_back(p);
    for (const auto& p : wefts) {
      if (p != w) c.push_back(p);
    }
    row_out(c);
    rule(c.size());
    for (const auto& [b, n, st] : cases) {
      std::vector<std::string> cells{b, std::to_string(n), std::to_string(st)};
      bool any = false;
      for (std::size_t i = 3; i < c.size(); ++i) {
        cells.push_back(fj_ratio(r, w, {c[i], b, n, st}));
        any |= cells.back() != "-";
      }
      if (any) row_out(cells);
    }
  }
  if (std::any_of(r.skips.begin(), r.skips.end(), [](const std::string& skip) {
        return skip.find("timed out") != std::string::npos;
      })) {
    out << "\n*: weft ran this case only at a smaller N (it timed out at this one): the ratio of "
           "the ns per spawn\n";
  }
  if (!r.skips.empty()) {
    out << (markdown ? "\nNot run:\n\n" : "\n");
    for (const auto& skip : r.skips) out << (markdown ? "- " : "skipped: ") << skip << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string json, csv, memory_csv, markdown;
  bool forkjoin = false;
  std::vector<std::pair<std::string, std::string>> context;
  std::vector<std::string> inputs;
  std::vector<std::string> context_args;
  CLI::App app("Turns the peer programs' raw lines into the suite's results.",
               "weft_bench_collect");
  app.add_option("--json", json, "Google Benchmark-shaped JSON output")->type_name("FILE");
  app.add_option("--csv", csv, "CSV output")->type_name("FILE");
  app.add_option("--memory-csv", memory_csv, "memory CSV output")->type_name("FILE");
  app.add_option("--markdown", markdown, "the tables as Markdown")->type_name("FILE");
  app.add_flag("--forkjoin", forkjoin, "the fork-join suite's layout");
  app.add_option("--context", context_args, "KEY=VALUE for the JSON's context (repeatable)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false)  // one value per --context: what follows is an INPUT
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->check(CLI::Validator(
          [](const std::string& kv) {
            return kv.find('=') == std::string::npos || kv.front() == '='
                       ? std::string("expected KEY=VALUE")
                       : std::string();
          },
          "KEY=VALUE"));
  app.add_option("INPUT", inputs, "files of raw lines (default: stdin)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "weft_bench_collect: %s (--help lists the options)\n", e.what());
    return 2;
  }
  for (const std::string& kv : context_args) {
    const auto eq = kv.find('=');
    context.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
  }
  results r;
  if (inputs.empty()) {
    if (!read_input(std::cin, "stdin", r)) return 1;
  }
  for (const auto& path : inputs) {
    std::ifstream in(path);
    if (!in) {
      std::fprintf(stderr, "weft_bench_collect: cannot read %s\n", path.c_str());
      return 1;
    }
    if (!read_input(in, path, r)) return 1;
  }
  auto write = [](const std::string& path, auto&& writer) {
    if (path.empty()) return true;
    std::ofstream out(path);
    writer(out);
    if (!out.flush()) {
      std::fprintf(stderr, "weft_bench_collect: cannot write %s\n", path.c_str());
      return false;
    }
    return true;
  };
  const bool ok =
      write(json, [&](std::ostream& o) { write_json(o, r, context); }) &&
      write(csv, [&](std::ostream& o) { forkjoin ? write_fj_csv(o, r) : write_csv(o, r); }) &&
      write(memory_csv, [&](std::ostream& o) { write_memory_csv(o, r); }) &&
      write(markdown, [&](std::ostream& o) {
        forkjoin ? write_fj_tables(o, r, true) : write_markdown(o, r);
      });
  if (forkjoin) {
    write_fj_tables(std::cout, r, false);
  } else {
    print_tables(r);
  }
  return ok ? 0 : 1;
}
