// SPDX-License-Identifier: Apache-2.0
#include "cli.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <functional>
#include <limits>
#include <memory>
#include <new>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <weft/error.hpp>
#include <weft/scheduler.hpp>

#include "formats.hpp"
#include "generator.hpp"
#include "mapper.hpp"
#include "output.hpp"
#include "progress.hpp"
#include "seqio.hpp"

namespace align {
namespace {

constexpr const char* kUsage = R"(usage:
  weft-align map [options] REFERENCES QUERIES    best hit of every query (TSV, SAM, BAM or PAF)
  weft-align gen [options] --ref-out FILE --query-out FILE
  weft-align --help

map: every query (FASTA or FASTQ) is aligned with edlib against every reference (FASTA), both
strands by default; plain or gzip input, "-" for stdin. Queries are read and hits written chunk by
chunk. TSV columns: query, reference, strand, distance, start, end [, cigar].
  --format F             tsv (default), sam or bam (htslib: =/X CIGAR, NM; a query without a
                         hit is flagged 4) or paf (12 columns, NM:i:, cg:Z:; queries without a
                         hit left out)
  -o, --output FILE      write here (a file is replaced atomically, nothing is left on error;
                         a device or FIFO is written in place); default stdout
  --backend B            weft (default), omp (OpenMP, nested teams as in the seed), serial
  --workers N            outer units over queries (default: one per stream / CPU)
  --threads N            inner units over references, per worker (default 1)
  --chunk N              queries per chunk for the workers (default 1)
  --ref-chunk N          references per chunk for the threads (default 1)
  --schedule S           static (round-robin chunks) or dynamic (default: chunk counter)
  --unit U               weft: ult (default) or tasklet for the units that never wait
  --streams N            weft: execution streams (default: WEFT_NUM_STREAMS or one per CPU)
  --affinity A           weft: none, compact, scatter or a places list such as {0,1},{2,3}
  --weft-sched NAME      weft: main scheduler of every stream (default basic_wait)
  --mode M               hw (infix, default), shw (prefix) or nw (global)
  --max-dist K           edlib's k: report nothing above K (default -1, no limit)
  --ties T               first (the lowest reference index, default) or all
  --cigar                add the extended CIGAR (=, X, I, D) of each hit
  --strand S             both (default), forward, or reverse (the reverse complement only)
  --alphabet S           allowed residues, case-insensitive (default: IUPAC, ACGTUNRYSWKMBDHV)
  --match M              iupac (default: N and ambiguity codes match the bases they stand for)
                         or literal (every letter matches only itself)
  --no-prune             align every reference with the full k (same output, more work)
  --batch N              queries per chunk read, mapped and written (default 4096)
  --progress P           auto (default: when stderr is a terminal), always, never
  -q, --quiet            no progress bar
  --stats                print one JSON line with the configuration and timing on stderr

Under mpirun, map splits the chunks of queries over the ranks (files only, no stdin); rank 0
writes the same output as a single process.

gen: random references and queries (mutated substrings, true origin in the header), seeded.
  --ref-out FILE, --query-out FILE   where to write (".gz" suffix: gzip)
  --seed N (1)  --refs N (100)  --ref-min L (1000)  --ref-max L (1000)
  --queries N (100)  --qlen-min L (150)  --qlen-max L (150)  --error-rate R (0.05)
  --fastq                            queries as FASTQ
)";

/// "--help" given to a subcommand: the usage is printed and the run ends with status 0.
struct help_requested {};

/// Integer value of option `name` in [lo, hi]; the whole text must be the number.
long long to_integer(const std::string& name, const std::string& v, long long lo, long long hi) {
  long long x = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (v.empty() || ec != std::errc() || p != v.data() + v.size() || x < lo || x > hi) {
    throw usage_error("option " + name + ": expected an integer from " + std::to_string(lo) +
                      " to " + std::to_string(hi) + ", got " + quote_text(v));
  }
  return x;
}

double to_real(const std::string& name, const std::string& v, double lo, double hi) {
  double x = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (v.empty() || ec != std::errc() || p != v.data() + v.size() || !(x >= lo && x <= hi)) {
    throw usage_error("option " + name + ": expected a number from " + std::to_string(lo) + " to " +
                      std::to_string(hi) + ", got " + quote_text(v));
  }
  return x;
}

template <class E, std::size_t N>
E to_choice(const std::string& name, const std::string& v,
            const std::pair<const char*, E> (&table)[N]) {
  std::string names;
  for (auto& [text, e] : table) {
    if (v == text) return e;
    names += names.empty() ? "" : ", ";
    names += text;
  }
  throw usage_error("option " + name + ": expected one of " + names + ", got " + quote_text(v));
}

/// One subcommand's options on CLI11. CLI11 walks the arguments ("--name value", "--name=value",
/// "-o value", options and file names in any order, the last of a repeated option winning); each
/// option's callback converts and checks its value itself, so that a message names the option
/// and what it accepts, and CLI11's own errors are reworded the same way.
class option_parser {
 public:
  explicit option_parser(std::string command) : command_(std::move(command)) {
    app_.set_help_flag("-h,--help");
    // Unknown arguments are collected and reported below, in weft-align's words.
    app_.allow_extras();
    app_.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  }
  /// An option with a value, handed to `set` as text.
  void value(const std::string& names, const std::function<void(const std::string&)>& set) {
    app_.add_option_function<std::string>(names, set);
  }
  /// An option without a value ("--name=value" is refused).
  void flag(const std::string& names, std::function<void()> set) {
    app_.add_flag_callback(names, std::move(set))->disable_flag_override();
  }
  /// Where the file names go (none accepted when not called).
  void positional(std::vector<std::string>& files) {
    app_.add_option("files", files)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  }
  /// Parses args (args[0] is the subcommand). Throws usage_error or help_requested.
  void parse(const std::vector<std::string>& args) {
    std::vector<std::string> reversed(args.rbegin(), args.rend() - 1);  // CLI11 pops the back
    try {
      app_.parse(reversed);
    } catch (const CLI::CallForHelp&) {
      throw help_requested{};
    } catch (const CLI::ArgumentMismatch& e) {
      // "--name: 1 required TEXT missing" or "name was given a disallowed flag override".
      const std::string what = e.what();
      std::string name = what.substr(0, what.find_first_of(": "));
      if (name.rfind('-', 0) != 0) name = (name.size() == 1 ? "-" : "--") + name;
      if (what.find("flag override") != std::string::npos)
        throw usage_error("option " + name + " takes no value");
      throw usage_error("option " + name + " needs a value");
    } catch (const CLI::ParseError& e) {
      throw usage_error(command_ + ": " + e.what());
    }
    for (std::string a : app_.remaining()) {
      if (command_ == "map" && a.size() > 1 && a[0] == '-') {
        if (auto eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) a.resize(eq);
        throw usage_error("map: unknown option " + quote_text(a));
      }
      throw usage_error(command_ + ": unexpected argument " + quote_text(a));
    }
  }

 private:
  std::string command_;
  CLI::App app_;
};

enum class progress_when { auto_, always, never };

/// Reads up to `max_queries` queries (and about `max_residues` residues) into batch; false when
/// the input is exhausted and nothing was read. The chunk boundaries depend only on the input, so
/// that every rank of a distributed run cuts the same chunks.
bool read_batch(sequence_reader& in, std::vector<record>& batch, std::size_t max_queries,
                std::size_t max_residues) {
  batch.clear();
  std::size_t residues = 0;
  record rec;
  while (batch.size() < max_queries && residues < max_residues && in.next(rec)) {
    residues += rec.seq.size();
    batch.push_back(std::move(rec));
    rec = record{};
  }
  return !batch.empty();
}

int run_map(const std::vector<std::string>& args, std::ostream& err, bool stderr_is_tty,
            peer_group* peers) {
  map_options opt;
  std::string output = "-";
  std::string alphabet = kIupac;
  bool alphabet_given = false;
  std::size_t batch_size = 4096;
  progress_when progress = progress_when::auto_;
  bool stats = false;
  std::vector<std::string> positional;
  option_parser p("map");
  p.value("-o,--output", [&](const std::string& v) {
    if (v.empty()) throw usage_error("option --output: empty file name");
    output = v;
  });
  p.value("--backend", [&](const std::string& v) {
    static const std::pair<const char*, backend> t[] = {
        {"weft", backend::weft}, {"omp", backend::omp}, {"serial", backend::serial}};
    opt.how = to_choice("--backend", v, t);
  });
  p.value("--workers", [&](const std::string& v) {
    opt.workers = static_cast<int>(to_integer("--workers", v, 1, 65536));
  });
  p.value("--threads", [&](const std::string& v) {
    opt.threads = static_cast<int>(to_integer("--threads", v, 1, 1024));
  });
  p.value("--chunk", [&](const std::string& v) {
    opt.chunk = static_cast<int>(to_integer("--chunk", v, 1, std::numeric_limits<int>::max()));
  });
  p.value("--ref-chunk", [&](const std::string& v) {
    opt.ref_chunk =
        static_cast<int>(to_integer("--ref-chunk", v, 1, std::numeric_limits<int>::max()));
  });
  p.value("--schedule", [&](const std::string& v) {
    static const std::pair<const char*, schedule> t[] = {{"static", schedule::static_},
                                                         {"dynamic", schedule::dynamic}};
    opt.sched = to_choice("--schedule", v, t);
  });
  p.value("--unit", [&](const std::string& v) {
    static const std::pair<const char*, unit_kind> t[] = {{"ult", unit_kind::ult},
                                                          {"tasklet", unit_kind::tasklet}};
    opt.unit = to_choice("--unit", v, t);
  });
  p.value("--streams", [&](const std::string& v) {
    opt.streams = static_cast<int>(to_integer("--streams", v, 1, 1024));
  });
  p.value("--affinity", [&](const std::string& v) {
    if (v.empty()) throw usage_error("option --affinity: empty value");
    opt.affinity = v;
  });
  p.value("--weft-sched", [&](const std::string& v) {
    std::vector<std::string> known = weft::scheduler_names();
    if (std::find(known.begin(), known.end(), v) == known.end()) {
      std::string names;
      for (auto& n : known) names += (names.empty() ? "" : ", ") + n;
      throw usage_error("option --weft-sched: expected one of " + names + ", got " + quote_text(v));
    }
    opt.weft_sched = v;
  });
  p.value("--mode", [&](const std::string& v) {
    static const std::pair<const char*, align_mode> t[] = {
        {"hw", align_mode::hw}, {"shw", align_mode::shw}, {"nw", align_mode::nw}};
    opt.mode = to_choice("--mode", v, t);
  });
  p.value("--max-dist", [&](const std::string& v) {
    opt.max_dist =
        static_cast<int>(to_integer("--max-dist", v, -1, std::numeric_limits<int>::max()));
  });
  p.value("--ties", [&](const std::string& v) {
    static const std::pair<const char*, ties> t[] = {{"first", ties::first}, {"all", ties::all}};
    opt.tie_mode = to_choice("--ties", v, t);
  });
  p.value("--format", [&](const std::string& v) {
    static const std::pair<const char*, out_format> t[] = {{"tsv", out_format::tsv},
                                                           {"sam", out_format::sam},
                                                           {"bam", out_format::bam},
                                                           {"paf", out_format::paf}};
    opt.format = to_choice("--format", v, t);
  });
  p.flag("--cigar", [&] { opt.cigar = true; });
  p.value("--strand", [&](const std::string& v) {
    static const std::pair<const char*, strand> t[] = {
        {"both", strand::both}, {"forward", strand::forward}, {"reverse", strand::reverse}};
    opt.strands = to_choice("--strand", v, t);
  });
  p.value("--match", [&](const std::string& v) {
    static const std::pair<const char*, bool> t[] = {{"iupac", true}, {"literal", false}};
    opt.iupac = to_choice("--match", v, t);
  });
  p.flag("--no-prune", [&] { opt.prune = false; });
  p.value("--batch", [&](const std::string& v) {
    batch_size = static_cast<std::size_t>(to_integer("--batch", v, 1, 100'000'000));
  });
  p.value("--alphabet", [&](const std::string& v) {
    alphabet = v;
    alphabet_given = true;
    if (alphabet.empty()) throw usage_error("option --alphabet: empty value");
    for (char& c : alphabet) {
      if (c <= ' ' || c >= 127 || c == '>' || c == '@')
        throw usage_error("option --alphabet: " + quote_text(alphabet) +
                          " has a character that cannot be a residue");
      if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    }
  });
  p.value("--progress", [&](const std::string& v) {
    static const std::pair<const char*, progress_when> t[] = {{"auto", progress_when::auto_},
                                                              {"always", progress_when::always},
                                                              {"never", progress_when::never}};
    progress = to_choice("--progress", v, t);
  });
  // Whatever their order on the command line, --quiet wins over --progress.
  bool quiet = false;
  p.flag("-q,--quiet", [&] { quiet = true; });
  p.flag("--stats", [&] { stats = true; });
  p.positional(positional);
  try {
    p.parse(args);
  } catch (const help_requested&) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (quiet) progress = progress_when::never;
  if (positional.size() != 2)
    throw usage_error("map: expected REFERENCES and QUERIES, got " +
                      std::to_string(positional.size()) + " file name(s)");
  if (positional[0] == "-" && positional[1] == "-")
    throw usage_error("map: only one of REFERENCES and QUERIES can be stdin");
  if (opt.strands != strand::forward) {
    for (char c : alphabet)
      if (!complement(c))
        throw usage_error(std::string("option --strand: '") + c + "' of " +
                          (alphabet_given ? "--alphabet" : "the alphabet") +
                          " has no complement; the reverse strand needs nucleotide codes (use "
                          "--strand forward)");
  }
  check_alphabet_for_format(alphabet, opt);
  const int rank = peers ? peers->rank() : 0;
  const int ranks = peers ? peers->size() : 1;
  if (ranks > 1 && (positional[0] == "-" || positional[1] == "-"))
    throw usage_error("map: under mpirun every rank reads the inputs: they cannot be stdin");

  // The destination is checked and opened first: a mistake in it costs nothing.
  std::optional<output_file> out;
  if (rank == 0) out.emplace(output, positional);
  std::vector<record> refs = read_sequences(positional[0], alphabet, /*unique_names=*/true);
  std::size_t longest_ref = 0;
  for (const record& r : refs) longest_ref = std::max(longest_ref, r.seq.size());

  std::string command_line = "weft-align";
  for (const std::string& a : args) command_line += " " + a;
  // SAM's @PG CL is one field of a tab-separated line.
  std::replace_if(
      command_line.begin(), command_line.end(), [](char c) { return c == '\t' || c == '\n'; }, ' ');
  std::unique_ptr<hit_formatter> formatter = make_formatter(refs, opt, command_line);

  backend_session session(opt);  // one weft runtime for the whole run
  sequence_reader queries(positional[1], alphabet);

  run_state state;
  std::atomic<std::uint64_t> queries_read{0};
  std::atomic<bool> input_done{false};
  const bool show = rank == 0 && (progress == progress_when::always ||
                                  (progress == progress_when::auto_ && stderr_is_tty));
  auto cpu_seconds = [] {
    rusage ru{};
    ::getrusage(RUSAGE_SELF, &ru);
    return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
  };
  // The total the bar shows: exact once the input is read, else extrapolated from the bytes read.
  auto total = [&]() -> std::uint64_t {
    const std::uint64_t n = queries_read.load(std::memory_order_relaxed);
    if (input_done.load(std::memory_order_relaxed)) return n;
    const std::uint64_t size = queries.bytes_total(), got = queries.bytes_read();
    if (!size || !got || !n) return 0;
    return std::max<std::uint64_t>(
        n, static_cast<std::uint64_t>(static_cast<double>(n) * static_cast<double>(size) /
                                      static_cast<double>(got)));
  };
  const double cpu0 = cpu_seconds();
  auto t0 = std::chrono::steady_clock::now();
  std::size_t long_queries = 0;
  std::string first_long;
  std::uint64_t batches = 0;
  {
    progress_meter meter(show, state.done, total);
    // BAM: rank 0 encodes the SAM text of every chunk, its own and the other ranks'.
    std::optional<bam_writer> bam;
    if (out && opt.format == out_format::bam) {
      bam.emplace(out->fd(), output == "-" ? "<stdout>" : output, formatter->header());
    } else if (out) {
      out->write(formatter->header());
    }
    auto emit = [&](const std::string& t) {
      if (bam) {
        bam->write(t);
      } else {
        out->write(t);
      }
    };
    std::vector<record> batch;
    std::string text;
    for (; read_batch(queries, batch, batch_size, std::size_t{64} << 20); ++batches) {
      queries_read.fetch_add(batch.size(), std::memory_order_relaxed);
      const int owner = static_cast<int>(batches % static_cast<std::uint64_t>(ranks));
      if (rank == 0) {
        for (const record& q : batch) {
          if (q.seq.size() <= longest_ref) continue;
          if (long_queries++ == 0) first_long = q.name;
        }
      }
      if (owner == rank) {
        text = formatter->hits(batch, map_all(refs, batch, opt, &state));
        if (rank == 0) {
          emit(text);
        } else {
          peers->send(peer_group::kind::text, text);
        }
      } else if (rank == 0) {
        if (peers->receive(owner, text) == peer_group::kind::failed) throw error(text);
        state.done.fetch_add(batch.size(), std::memory_order_relaxed);
        emit(text);
      }
    }
    input_done.store(true, std::memory_order_relaxed);
    if (ranks > 1) {
      if (rank == 0) {
        for (int r = 1; r < ranks; ++r) {
          std::string msg;
          if (peers->receive(r, msg) == peer_group::kind::failed) throw error(msg);
        }
      } else {
        peers->send(peer_group::kind::done, {});
      }
    }
    if (bam) bam->close();
    meter.stop();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = cpu_seconds() - cpu0;
  if (!out) return 0;
  out->commit();
  if (long_queries) {
    err << "weft-align: warning: " << long_queries << " quer" << (long_queries == 1 ? "y" : "ies")
        << " (the first: " << quote_text(first_long) << ") " << (long_queries == 1 ? "is" : "are")
        << " longer than every reference (the longest has " << longest_ref
        << " residues): the distance counts the overhang\n";
  }
  if (stats) {
    const std::uint64_t nq = queries_read.load();
    nlohmann::ordered_json j;
    j["backend"] = to_string(opt.how);
    j["workers"] = state.workers;
    j["threads"] = opt.threads;
    j["chunk"] = opt.chunk;
    j["ref_chunk"] = opt.ref_chunk;
    j["schedule"] = to_string(opt.sched);
    j["unit"] = opt.how == backend::weft ? nlohmann::ordered_json(to_string(opt.unit)) : nullptr;
    j["streams"] = state.streams;
    j["mode"] = to_string(opt.mode);
    j["strand"] = to_string(opt.strands);
    j["max_dist"] = opt.max_dist;
    j["ties"] = to_string(opt.tie_mode);
    j["alphabet"] = alphabet;
    j["match"] = opt.iupac ? "iupac" : "literal";
    j["prune"] = opt.prune;
    j["batch"] = batch_size;
    j["ranks"] = ranks;
    j["queries"] = nq;
    j["refs"] = refs.size();
    j["seconds"] = seconds;
    j["cpu_seconds"] = cpu;
    j["alignments_per_s"] = seconds > 0 ? static_cast<double>(nq * refs.size()) / seconds : 0.0;
    j["weft_sched"] = opt.how == backend::weft ? nlohmann::ordered_json(state.weft_sched) : nullptr;
    j["format"] = to_string(opt.format);
    err << j.dump() << "\n";
  }
  return 0;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

int run_gen(const std::vector<std::string>& args) {
  gen_options o;
  std::string ref_out, query_out;
  option_parser p("gen");
  p.value("--ref-out", [&](const std::string& v) { ref_out = v; });
  p.value("--query-out", [&](const std::string& v) { query_out = v; });
  p.value("--seed", [&](const std::string& v) {
    o.seed = static_cast<std::uint64_t>(
        to_integer("--seed", v, 0, std::numeric_limits<long long>::max()));
  });
  p.value("--refs", [&](const std::string& v) {
    o.refs = static_cast<int>(to_integer("--refs", v, 1, 100'000'000));
  });
  p.value("--ref-min", [&](const std::string& v) {
    o.ref_min = static_cast<int>(to_integer("--ref-min", v, 1, 1'000'000'000));
  });
  p.value("--ref-max", [&](const std::string& v) {
    o.ref_max = static_cast<int>(to_integer("--ref-max", v, 1, 1'000'000'000));
  });
  p.value("--queries", [&](const std::string& v) {
    o.queries = static_cast<int>(to_integer("--queries", v, 0, 100'000'000));
  });
  p.value("--qlen-min", [&](const std::string& v) {
    o.qlen_min = static_cast<int>(to_integer("--qlen-min", v, 1, 1'000'000'000));
  });
  p.value("--qlen-max", [&](const std::string& v) {
    o.qlen_max = static_cast<int>(to_integer("--qlen-max", v, 1, 1'000'000'000));
  });
  p.value("--error-rate",
          [&](const std::string& v) { o.error_rate = to_real("--error-rate", v, 0.0, 0.5); });
  p.flag("--fastq", [&] { o.fastq = true; });
  try {
    p.parse(args);
  } catch (const help_requested&) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (ref_out.empty() || query_out.empty())
    throw usage_error("gen: both --ref-out and --query-out are needed");
  if (ref_out == query_out) throw usage_error("gen: --ref-out and --query-out are the same file");
  generated g = generate(o);
  auto put = [](const std::string& path, const std::string& text) {
    if (ends_with(path, ".gz")) {
      write_gzip_atomically(path, text);
    } else {
      write_file_atomically(path, text);
    }
  };
  put(ref_out, g.refs);
  put(query_out, g.queries);
  return 0;
}

}  // namespace

int run_cli(const std::vector<std::string>& args, std::ostream& err, bool stderr_is_tty,
            peer_group* peers) {
  // Rank 0 reports; another rank's message goes to rank 0, which stops the run with it.
  auto report = [&](const char* what, int status) {
    if (peers && peers->rank() != 0) {
      peers->send(peer_group::kind::failed, what);
    } else {
      err << "weft-align: " << what << "\n";
    }
    return status;
  };
  try {
    if (args.empty()) throw usage_error("expected a command: map or gen (see --help)");
    const std::string& cmd = args[0];
    if (cmd == "map") return run_map(args, err, stderr_is_tty, peers);
    if (cmd == "gen") return run_gen(args);
    if (cmd == "-h" || cmd == "--help" || cmd == "help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    throw usage_error("unknown command " + quote_text(cmd) + " (expected map or gen; see --help)");
  } catch (const usage_error& e) {
    return report(e.what(), 2);
  } catch (const error& e) {
    return report(e.what(), 1);
  } catch (const weft::error& e) {
    return report(e.what(), 1);
  } catch (const std::bad_alloc&) {
    return report("out of memory", 1);
  }
}

}  // namespace align
