// SPDX-License-Identifier: Apache-2.0
// weft-align: correctness against brute force, identical output for every parallel configuration
// on weft, the generator's origins, gzip input, CIGARs, and every bad-input error.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <weft/execution_stream.hpp>
#include <weft/runtime.hpp>

#include <zlib.h>

#include <thread>
#include <tuple>

#include "cli.hpp"
#include "progress.hpp"
#include "test_util.hpp"

namespace {

using namespace align_test;
using align::map_options;

// ---------------------------------------------------------------------------------------------
// Edit distances and best hits equal brute force

TEST(AlignBruteForce, EdlibDistanceEqualsDynamicProgramming) {
  data_set d = make_data(11, 12, 20, 90, 30, 10, 40, 0.15, 0);
  for (align::align_mode mode :
       {align::align_mode::nw, align::align_mode::shw, align::align_mode::hw}) {
    for (int k : {-1, 5}) {
      map_options opt;
      opt.mode = mode;
      opt.max_dist = k;
      for (auto& q : d.queries) {
        for (auto& r : d.refs) {
          ASSERT_EQ(align::detail::distance(q, r, opt), brute_distance(q.seq, r.seq, mode, k))
              << "mode " << align::to_string(mode) << " k " << k << " " << q.name << " vs "
              << r.name;
        }
      }
    }
  }
}

void expect_same(const data_set& d, const std::vector<align::query_result>& want,
                 const std::vector<align::query_result>& got) {
  ASSERT_EQ(got.size(), d.queries.size());
  for (std::size_t q = 0; q < d.queries.size(); ++q) {
    EXPECT_EQ(got[q].dist, want[q].dist) << d.queries[q].name;
    EXPECT_EQ(got[q].refs, want[q].refs) << d.queries[q].name;
    EXPECT_EQ(got[q].strands, want[q].strands) << d.queries[q].name;
    EXPECT_EQ(got[q].details.size(), got[q].refs.size());
  }
}

// Half the queries reverse-complemented, so that both strands hold best hits; with and without
// pruning (which must not change any result, ties included).
TEST(AlignBruteForce, BestHitsEqualBruteForceSerialAndWeft) {
  data_set d = make_data(12, 15, 30, 120, 25, 15, 50, 0.1, 4);
  for (std::size_t q = 0; q < d.queries.size(); q += 2)
    d.queries[q].seq = align::reverse_complement(d.queries[q].seq);
  for (align::ties t : {align::ties::first, align::ties::all}) {
    for (align::align_mode mode : {align::align_mode::nw, align::align_mode::hw}) {
      for (int k : {-1, 8}) {
        for (align::strand st :
             {align::strand::both, align::strand::forward, align::strand::reverse}) {
          map_options opt;
          opt.tie_mode = t;
          opt.mode = mode;
          opt.max_dist = k;
          opt.strands = st;
          std::vector<align::query_result> want;
          for (auto& q : d.queries) want.push_back(brute_best(d.refs, q, opt));
          for (bool prune : {true, false}) {
            if (!prune && st != align::strand::both) continue;
            opt.prune = prune;
            SCOPED_TRACE(std::string(align::to_string(st)) + (prune ? " pruned" : " unpruned") +
                         " k " + std::to_string(k));
            opt.how = align::backend::serial;
            expect_same(d, want, align::map_all(d.refs, d.queries, opt));
            opt.how = align::backend::weft;
            opt.streams = 2;
            opt.workers = 2;
            opt.threads = 2;
            expect_same(d, want, align::map_all(d.refs, d.queries, opt));
          }
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Identical output for every combination of workers, threads, chunks, schedule, unit kind and
// stream count

class AlignConfigs : public ::testing::TestWithParam<std::tuple<int, const char*>> {};

TEST_P(AlignConfigs, OutputIdenticalForEveryParallelConfiguration) {
  const int streams = std::get<0>(GetParam());
  data_set d = make_data(13, 30, 40, 400, 24, 20, 60, 0.08, 6);
  map_options base;
  base.tie_mode = align::ties::all;
  base.cigar = true;
  base.how = align::backend::serial;
  const std::string want =
      align::format_results(d.refs, d.queries, align::map_all(d.refs, d.queries, base), base);

  weft::config cfg;
  cfg.num_streams = streams;
  cfg.stack_size = 256 * 1024;
  cfg.scheduler = std::get<1>(GetParam());
  weft::runtime rt(cfg);  // map_all's own init nests inside this one
  if (weft::execution_stream::count() != streams ||
      weft::current_config().scheduler != cfg.scheduler)
    GTEST_SKIP() << "WEFT_NUM_STREAMS or WEFT_SCHED overrides the configuration";

  int runs = 0;
  for (int workers : {1, 3})
    for (int threads : {1, 2, 4})
      for (int chunk : {1, 4})
        for (int ref_chunk : {1, 3})
          for (auto sched : {align::schedule::static_, align::schedule::dynamic})
            for (auto unit : {align::unit_kind::ult, align::unit_kind::tasklet}) {
              map_options opt = base;
              opt.how = align::backend::weft;
              opt.workers = workers;
              opt.threads = threads;
              opt.chunk = chunk;
              opt.ref_chunk = ref_chunk;
              opt.sched = sched;
              opt.unit = unit;
              align::run_state st;
              auto got = align::map_all(d.refs, d.queries, opt, &st);
              ASSERT_EQ(align::format_results(d.refs, d.queries, got, opt), want)
                  << "workers " << workers << " threads " << threads << " chunk " << chunk
                  << " ref-chunk " << ref_chunk << " " << align::to_string(sched) << " "
                  << align::to_string(unit) << " streams " << streams;
              ASSERT_EQ(st.done.load(), d.queries.size());
              ASSERT_EQ(st.streams, streams);
              ++runs;
            }
  EXPECT_EQ(runs, 96);
}

// basic: per-stream FIFO pools, idle streams poll; basic_wait: idle streams park (weft-align's
// default); randws: idle streams steal queued units from the others.
INSTANTIATE_TEST_SUITE_P(Streams, AlignConfigs,
                         ::testing::Values(std::tuple{1, "basic"}, std::tuple{2, "basic"},
                                           std::tuple{4, "basic"}, std::tuple{2, "basic_wait"},
                                           std::tuple{4, "randws"}),
                         [](const auto& info) {
                           return std::string(std::get<1>(info.param)) + "_s" +
                                  std::to_string(std::get<0>(info.param));
                         });

TEST(AlignConfigs, TiesFirstIsTheLowestReferenceIndex) {
  data_set d = make_data(14, 10, 50, 50, 10, 30, 30, 0.0, 0);
  // Every reference duplicated: each query ties between i and i + 10.
  std::size_t n = d.refs.size();
  for (std::size_t i = 0; i < n; ++i) d.refs.push_back(d.refs[i]);
  map_options opt;
  opt.streams = 2;
  opt.threads = 2;
  opt.ref_chunk = 1;
  auto first = align::map_all(d.refs, d.queries, opt);
  opt.tie_mode = align::ties::all;
  auto all = align::map_all(d.refs, d.queries, opt);
  for (std::size_t q = 0; q < d.queries.size(); ++q) {
    ASSERT_EQ(first[q].refs.size(), 1u);
    ASSERT_EQ(all[q].refs.size(), 2u);
    EXPECT_EQ(all[q].refs[1], all[q].refs[0] + n);
    EXPECT_EQ(first[q].refs[0], all[q].refs[0]);
    EXPECT_EQ(first[q].dist, 0);
  }
}

// ---------------------------------------------------------------------------------------------
// The generator

TEST(AlignGenerator, KnownOriginsAreFound) {
  align::gen_options g;
  g.seed = 2024;
  g.refs = 30;
  g.ref_min = 200;
  g.ref_max = 2000;  // lengths vary 10x
  g.queries = 40;
  g.qlen_min = 80;
  g.qlen_max = 150;
  g.error_rate = 0.06;
  align::generated text = align::generate(g);
  temp_dir dir;
  auto refs = align::read_sequences(dir.write("r.fa", text.refs), "ACGT");
  auto queries = align::read_sequences(dir.write("q.fa", text.queries), "ACGT");
  ASSERT_EQ(refs.size(), 30u);
  ASSERT_EQ(queries.size(), 40u);
  map_options opt;  // hw (infix): a read against the reference it came from
  opt.streams = 2;
  opt.threads = 2;
  auto res = align::map_all(refs, queries, opt);
  for (std::size_t q = 0; q < queries.size(); ++q) {
    align::origin o = align::parse_origin(queries[q].desc);
    ASSERT_FALSE(o.ref.empty());
    ASSERT_EQ(res[q].refs.size(), 1u) << queries[q].name;
    EXPECT_EQ(refs[res[q].refs[0]].name, o.ref) << queries[q].name << " " << queries[q].desc;
    EXPECT_LE(res[q].dist, o.edits) << queries[q].name;
    EXPECT_LE(std::abs(res[q].details[0].start - o.pos), o.edits) << queries[q].name;
  }
}

TEST(AlignGenerator, SeededAndReproducible) {
  align::gen_options g;
  g.refs = 5;
  g.queries = 5;
  auto a = align::generate(g), b = align::generate(g);
  EXPECT_EQ(a.refs, b.refs);
  EXPECT_EQ(a.queries, b.queries);
  g.seed = 2;
  auto c = align::generate(g);
  EXPECT_NE(a.refs, c.refs);
  g.fastq = true;
  auto fq = align::generate(g);
  EXPECT_EQ(fq.queries[0], '@');
  temp_dir dir;
  EXPECT_EQ(align::read_sequences(dir.write("q.fq", fq.queries), "ACGT").size(), 5u);
  // Skewed lengths: log-uniform between the bounds.
  g.refs = 200;
  g.ref_min = 100;
  g.ref_max = 10000;
  auto refs = align::read_sequences(dir.write("r.fa", align::generate(g).refs), "ACGT");
  std::size_t lo = SIZE_MAX, hi = 0;
  for (auto& r : refs) lo = std::min(lo, r.seq.size()), hi = std::max(hi, r.seq.size());
  EXPECT_GE(lo, 100u);
  EXPECT_LE(hi, 10000u);
  EXPECT_GT(hi, 20 * lo);
}

// ---------------------------------------------------------------------------------------------
// Command line, input formats, output

struct cli_result {
  int status;
  std::string err;
};

cli_result cli(const std::vector<std::string>& args) {
  std::ostringstream err;
  int status = align::run_cli(args, err, false);
  return {status, err.str()};
}

TEST(AlignCli, GzipFastqAndStdinGiveTheSameOutput) {
  temp_dir dir;
  align::gen_options g;
  g.refs = 8;
  g.queries = 12;
  g.ref_min = 100;
  g.ref_max = 300;
  g.qlen_min = g.qlen_max = 40;
  auto fa = align::generate(g);
  g.fastq = true;
  auto fq = align::generate(g);
  std::string refs = dir.write("r.fa", fa.refs), queries = dir.write("q.fa", fa.queries);
  align::write_gzip_atomically(dir.file("r.fa.gz"), fa.refs);
  align::write_gzip_atomically(dir.file("q.fq.gz"), fq.queries);
  ASSERT_EQ(cli({"map", "--streams", "2", "-o", dir.file("plain.tsv"), refs, queries}).status, 0);
  ASSERT_EQ(cli({"map", "--streams", "2", "-o", dir.file("gz.tsv"), dir.file("r.fa.gz"),
                 dir.file("q.fq.gz")})
                .status,
            0);
  std::string plain = slurp(dir.file("plain.tsv"));
  EXPECT_EQ(plain, slurp(dir.file("gz.tsv")));
  EXPECT_EQ(plain.substr(0, plain.find('\n')),
            "#match: iupac (N and the IUPAC ambiguity codes match the bases they stand for)");
  const std::size_t columns = plain.find('\n') + 1;
  EXPECT_EQ(plain.substr(columns, plain.find('\n', columns) - columns),
            "#query\treference\tstrand\tdistance\tstart\tend");
  EXPECT_EQ(std::count(plain.begin(), plain.end(), '\n'), 14);
  // Lower case and CRLF line ends are accepted.
  std::string crlf;
  for (char c : fa.refs) {
    if (c == '\n') crlf += '\r';
    crlf += (c == 'A' ? 'a' : c);  // no 'A' in the headers ("ref", "len=")
  }
  ASSERT_EQ(cli({"map", "--streams", "2", "-o", dir.file("crlf.tsv"), dir.write("crlf.fa", crlf),
                 queries})
                .status,
            0);
  EXPECT_EQ(plain, slurp(dir.file("crlf.tsv")));
}

TEST(AlignCli, CigarMatchesDistanceAndLengths) {
  data_set d = make_data(15, 10, 60, 200, 20, 30, 60, 0.1, 0);
  for (auto mode : {align::align_mode::nw, align::align_mode::hw}) {
    map_options opt;
    opt.mode = mode;
    opt.cigar = true;
    opt.streams = 2;
    opt.threads = 2;
    auto res = align::map_all(d.refs, d.queries, opt);
    for (std::size_t q = 0; q < d.queries.size(); ++q) {
      const auto& h = res[q].details.at(0);
      const std::string& ref = d.refs[res[q].refs[0]].seq;
      int eq = 0, x = 0, ins = 0, del = 0, n = 0;
      for (char c : h.cigar) {
        if (c >= '0' && c <= '9') {
          n = n * 10 + (c - '0');
          continue;
        }
        (c == '=' ? eq : c == 'X' ? x : c == 'I' ? ins : del) += n;
        n = 0;
      }
      EXPECT_EQ(x + ins + del, res[q].dist) << h.cigar;
      EXPECT_EQ(eq + x + ins, static_cast<int>(d.queries[q].seq.size())) << h.cigar;
      EXPECT_EQ(eq + x + del, h.end - h.start + 1) << h.cigar;
      if (mode == align::align_mode::nw) {
        EXPECT_EQ(h.start, 0);
        EXPECT_EQ(h.end + 1, static_cast<int>(ref.size()));
      }
    }
  }
}

// The command line as CLI11 reads it: options and file names in any order, "--name=value" and
// "--name value", short and long names, the last of a repeated option winning.
TEST(AlignCli, OptionsInAnyOrderAndTheLastRepeatWins) {
  temp_dir dir;
  std::string refs = dir.write("r.fa", ">r1\nAAAAAAAAAAAA\n>r2\nAAAAAAAAAAAA\n");
  std::string queries = dir.write("q.fa", ">q\nAAAAAAAAAAAA\n");
  const std::string header =
      "#match: literal (every letter matches only itself)\n"
      "#query\treference\tstrand\tdistance\tstart\tend\n";
  ASSERT_EQ(
      cli({"map", refs, "--ties", "first", "--strand=forward", queries, "--ties=all", "--match",
           "iupac", "--match=literal", "--output", dir.file("a.tsv"), "--streams", "1"})
          .status,
      0);
  EXPECT_EQ(slurp(dir.file("a.tsv")), header + "q\tr1\t+\t0\t0\t11\nq\tr2\t+\t0\t0\t11\n");
  ASSERT_EQ(cli({"map", "-o", dir.file("f.tsv"), "--ties=all", "--streams=1", "--match=literal",
                 "--strand", "forward", refs, queries, "--ties", "first"})
                .status,
            0);
  EXPECT_EQ(slurp(dir.file("f.tsv")), header + "q\tr1\t+\t0\t0\t11\n");
  // --help anywhere in a subcommand prints the usage and succeeds.
  EXPECT_EQ(cli({"gen", "--seed", "3", "--help"}).status, 0);
}

TEST(AlignCli, NoHitWithinMaxDistIsReported) {
  temp_dir dir;
  std::string refs = dir.write("r.fa", ">r1\nAAAAAAAAAAAA\n>r2\nCCCCCCCCCCCC\n");
  std::string queries = dir.write("q.fa", ">near\nAAAAAAAAAAAT\n>far\nGGGGGGGGGGGG\n");
  ASSERT_EQ(cli({"map", "--streams", "1", "--mode", "nw", "--max-dist", "2", "--cigar", "--strand",
                 "forward", "-o", dir.file("o.tsv"), refs, queries})
                .status,
            0);
  EXPECT_EQ(slurp(dir.file("o.tsv")),
            "#match: iupac (N and the IUPAC ambiguity codes match the bases they stand for)\n"
            "#query\treference\tstrand\tdistance\tstart\tend\tcigar\n"
            "near\tr1\t+\t1\t0\t11\t11=1X\n"
            "far\t*\t*\t-1\t-1\t-1\t*\n");
}

TEST(AlignCli, ProgressBarFormat) {
  std::string s = align::format_progress(250, 1000, 5.0, 20);
  EXPECT_EQ(s.substr(0, 22), "[#####...............]");
  EXPECT_NE(s.find("250/1000 queries"), std::string::npos) << s;
  EXPECT_NE(s.find(" 25%"), std::string::npos) << s;
  EXPECT_NE(s.find("50.0 q/s"), std::string::npos) << s;
  EXPECT_NE(s.find("ETA 0:15"), std::string::npos) << s;
  EXPECT_NE(align::format_progress(1000, 1000, 65.0, 20).find("done in 1:05"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Bad input: a clear error naming the file and line, exit status 1 (2 for the command line),
// and nothing written

struct bad_case {
  const char* name;
  const char* refs;  // nullptr: a file that does not exist
  const char* queries;
  const char* expect;  // substring of the message; "{r}" / "{q}" stand for the file names
};

std::string expand(std::string s, const std::string& r, const std::string& q) {
  for (auto [key, val] : {std::pair{"{r}", r}, std::pair{"{q}", q}}) {
    for (std::size_t p; (p = s.find(key)) != std::string::npos;) s.replace(p, 3, val);
  }
  return s;
}

TEST(AlignBadInput, EachCaseNamesFileAndLineAndWritesNothing) {
  const char* good_refs = ">r1 first\nACGTACGTAC\nGGTTAACC\n>r2\nTTTTGGGGCCCCAAAA\n";
  const char* good_q = ">q1\nACGTAC\n";
  const bad_case cases[] = {
      {"missing file", nullptr, good_q, "{r}: cannot open: No such file or directory"},
      {"empty refs", "", good_q, "{r}: no sequences (empty input)"},
      {"blank-only queries", good_refs, "\n\n  \n", "{q}:3: expected a FASTA ('>') or FASTQ"},
      {"sequence before header", "ACGT\n>r1\nACGT\n", good_q, "{r}:1: expected a FASTA ('>') or"},
      {"record without sequence", ">r1\nACGT\n>r2\n>r3\nAC\n", good_q,
       "{r}:3: record 'r2' has no sequence"},
      {"last record without sequence", good_refs, ">q1\nACGT\n>q2\n",
       "{q}:3: record 'q2' has no sequence"},
      {"empty name", ">\nACGT\n", good_q, "{r}:1: empty sequence name"},
      {"character outside alphabet", good_refs, ">q1\nACGT\nACXT\n",
       "{q}:3: character 'X' (column 3) is not in the alphabet ACGT"},
      {"digit in reference", ">r1\nACGT\n>r2\nAC1GT\n", good_q,
       "{r}:4: character '1' (column 3) is not in the alphabet ACGT"},
      {"space inside sequence", good_refs, ">q1\nAC GT\n",
       "{q}:2: character ' ' (space) (column 3) is not in the alphabet"},
      {"fastq missing plus", good_refs, "@q1\nACGT\nIIII\nIIII\n",
       "{q}:3: expected the '+' separator line of record 'q1'"},
      {"fastq quality length", good_refs, "@q1\nACGT\n+\nIII\n",
       "{q}:4: quality string of record 'q1' has 3 characters, its sequence 4"},
      {"fastq truncated", good_refs, "@q1\nACGT\n+\nIIII\n@q2\nACGT\n",
       "{q}:5: truncated FASTQ record 'q2': the input ends before its '+' line"},
      {"fastq bad header", good_refs, "@q1\nACGT\n+\nIIII\nq2\nACGT\n+\nIIII\n",
       "{q}:5: expected a FASTQ header starting with '@'"},
      {"fastq bad character", good_refs, "@q1\nACGZ\n+\nIIII\n", "{q}:2: character 'Z' (column 4)"},
      {"binary junk", good_refs, "\x01\x02\x03",
       "{q}:1: expected a FASTA ('>') or FASTQ ('@') "
       "header, found byte 0x01"},
  };
  for (const bad_case& c : cases) {
    temp_dir dir;
    std::string r = c.refs ? dir.write("refs.fa", c.refs) : dir.file("absent.fa");
    std::string q = dir.write("queries.fa", c.queries);
    std::string out = dir.file("out.tsv");
    cli_result res = cli({"map", "--streams", "1", "-o", out, r, q});
    EXPECT_EQ(res.status, 1) << c.name;
    std::string want = "weft-align: " + expand(c.expect, r, q);
    EXPECT_EQ(res.err.substr(0, want.size()), want) << c.name << "\n got: " << res.err;
    EXPECT_FALSE(fs::exists(out)) << c.name;
    // Nothing half-written: only the inputs are in the directory.
    for (auto& e : dir.entries()) EXPECT_TRUE(e == "refs.fa" || e == "queries.fa") << e;
  }
}

TEST(AlignBadInput, LongNamesAndHeadersGiveShortMessages) {
  temp_dir dir;
  std::string r = dir.write("r.fa", ">r1\nACGTACGT\n");
  std::string out = dir.file("out.tsv");
  const std::string name(1000, 'n');
  std::string q = dir.write("q.fa", ">q1\nACGT\n>" + name + "\n");
  cli_result res = cli({"map", "--streams", "1", "-o", out, r, q});
  EXPECT_EQ(res.status, 1);
  EXPECT_EQ(res.err, "weft-align: " + q + ":3: record '" + name.substr(0, 80) +
                         "...' (1000 bytes) has no sequence\n");
  // A header line of exactly the limit is read; one byte more is an error at its line, in
  // FASTA and FASTQ, with or without "\r\n".
  const std::string at_limit(align::kMaxHeaderLine - 1, 'a');  // after '>' or '@'
  for (const char* eol : {"\n", "\r\n"}) {
    q = dir.write("q.fa", ">q1\nACGT\n>" + at_limit + eol + "ACGT\n");
    EXPECT_EQ(cli({"map", "--streams", "1", "-o", out, r, q}).status, 0) << eol;
    q = dir.write("q.fa", ">q1\nACGT\n>" + at_limit + "a" + eol + "ACGT\n");
    res = cli({"map", "--streams", "1", "-o", out, r, q});
    EXPECT_EQ(res.status, 1);
    EXPECT_EQ(res.err, "weft-align: " + q +
                           ":3: header line longer than 1048576 bytes, starting '>" +
                           at_limit.substr(0, 79) + "'\n");
    q = dir.write("q.fq", "@" + at_limit + "a" + eol + "ACGT\n+\nIIII\n");
    res = cli({"map", "--streams", "1", "-o", out, r, q});
    EXPECT_EQ(res.status, 1);
    EXPECT_EQ(res.err.rfind("weft-align: " + q + ":1: header line longer than 1048576 bytes", 0),
              0u)
        << res.err.substr(0, 200);
  }
  // Without a newline at all: the error comes before the end of the line is read.
  q = dir.write("q.fa", ">" + at_limit + "a");
  res = cli({"map", "--streams", "1", "-o", out, r, q});
  EXPECT_EQ(res.status, 1);
  EXPECT_LT(res.err.size(), 300u) << res.err.substr(0, 300);
  // Arguments are quoted the same way.
  res = cli({"map", "--" + std::string(5000, 'x')});
  EXPECT_EQ(res.status, 2);
  EXPECT_EQ(res.err,
            "weft-align: map: unknown option '--" + std::string(78, 'x') + "...' (5002 bytes)\n");
}

TEST(AlignBadInput, ExistingOutputIsKeptOnError) {
  temp_dir dir;
  std::string out = dir.write("out.tsv", "previous\n");
  std::string r = dir.write("r.fa", ">r\nACGT\n");
  std::string q = dir.write("q.fa", ">q\nACGZ\n");
  EXPECT_EQ(cli({"map", "-o", out, r, q}).status, 1);
  EXPECT_EQ(slurp(out), "previous\n");
  EXPECT_EQ(cli({"map", "--streams", "1", "-o", out, r, r}).status, 0);
  EXPECT_NE(slurp(out), "previous\n");
  EXPECT_EQ(dir.entries().size(), 3u);  // no temporary left behind
}

TEST(AlignBadInput, TruncatedGzip) {
  temp_dir dir;
  align::gen_options g;
  g.refs = 50;
  align::write_gzip_atomically(dir.file("r.fa.gz"), align::generate(g).refs);
  std::string gz = slurp(dir.file("r.fa.gz"));
  std::string r = dir.write("cut.fa.gz", gz.substr(0, gz.size() / 2));
  std::string q = dir.write("q.fa", ">q\nACGT\n");
  cli_result res = cli({"map", "--streams", "1", "-o", dir.file("o.tsv"), r, q});
  EXPECT_EQ(res.status, 1);
  EXPECT_NE(res.err.find(r + ": cannot read after line"), std::string::npos) << res.err;
  EXPECT_FALSE(fs::exists(dir.file("o.tsv")));
}

TEST(AlignBadInput, BadOptionValues) {
  temp_dir dir;
  std::string r = dir.write("r.fa", ">r\nACGT\n");
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{"map", "--workers", "0", r, r},
       "option --workers: expected an integer from 1 to 65536, got '0'"},
      {{"map", "--threads", "two", r, r},
       "option --threads: expected an integer from 1 to 1024, got 'two'"},
      {{"map", "--chunk=-3", r, r}, "option --chunk: expected an integer from 1 to"},
      {{"map", "--ref-chunk", "", r, r}, "option --ref-chunk: expected an integer"},
      {{"map", "--streams", "4x", r, r},
       "option --streams: expected an integer from 1 to 1024, got '4x'"},
      {{"map", "--max-dist", "-2", r, r}, "option --max-dist: expected an integer from -1 to"},
      {{"map", "--schedule", "guided", r, r},
       "option --schedule: expected one of static, dynamic, got 'guided'"},
      {{"map", "--unit", "fiber", r, r},
       "option --unit: expected one of ult, tasklet, got 'fiber'"},
      {{"map", "--mode", "local", r, r}, "option --mode: expected one of hw, shw, nw, got 'local'"},
      {{"map", "--ties", "none", r, r}, "option --ties: expected one of first, all"},
      {{"map", "--backend", "tbb", r, r}, "option --backend: expected one of weft, omp, serial"},
      {{"map", "--progress", "sometimes", r, r},
       "option --progress: expected one of auto, always, never"},
      {{"map", "--alphabet", "AC GT", r, r}, "option --alphabet: 'AC GT' has a character"},
      {{"map", "--format", "cram", r, r},
       "option --format: expected one of tsv, sam, bam, paf, got 'cram'"},
      {{"map", "--cigar=yes", r, r}, "option --cigar takes no value"},
      {{"map", "--frobnicate", r, r}, "map: unknown option '--frobnicate'"},
      {{"map", r, r, "--workers"}, "option --workers needs a value"},
      {{"map", r}, "map: expected REFERENCES and QUERIES, got 1 file name(s)"},
      {{"map", "-", "-"}, "map: only one of REFERENCES and QUERIES can be stdin"},
      {{"align", r, r}, "unknown command 'align'"},
      {{}, "expected a command: map or gen"},
      {{"gen", "--refs", "0", "--ref-out", "a", "--query-out", "b"},
       "option --refs: expected an integer from 1"},
      {{"gen", "--error-rate", "0.9", "--ref-out", "a", "--query-out", "b"},
       "option --error-rate: expected a number from 0"},
      {{"gen", "--ref-out", "a"}, "gen: both --ref-out and --query-out are needed"},
      {{"gen", "--ref-min", "500", "--ref-max", "100", "--ref-out", "a", "--query-out", "b"},
       "gen: need 1 <= --ref-min <= --ref-max"},
  };
  for (auto& [args, want] : cases) {
    cli_result res = cli(args);
    EXPECT_EQ(res.status, 2) << want;
    EXPECT_EQ(res.err.substr(0, 12 + want.size()), "weft-align: " + want) << res.err;
  }
  // A bad WEFT_* setting reaches the user as weft's own message.
  cli_result res = cli({"map", "--affinity", "{0,", "-o", dir.file("o.tsv"), r, r});
  EXPECT_EQ(res.status, 1);
  EXPECT_NE(res.err.find("--affinity"), std::string::npos) << res.err;
  // An unknown --weft-sched is a bad command line, named as the option the user gave.
  res = cli({"map", "--weft-sched", "no-such-scheduler", "-o", dir.file("o.tsv"), r, r});
  EXPECT_EQ(res.status, 2);
  EXPECT_EQ(res.err.rfind("weft-align: option --weft-sched: expected one of ", 0), 0u) << res.err;
  EXPECT_NE(res.err.find("basic_wait"), std::string::npos) << res.err;
  EXPECT_NE(res.err.find("got 'no-such-scheduler'"), std::string::npos) << res.err;
  EXPECT_FALSE(fs::exists(dir.file("o.tsv")));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The output destination: checked and opened before any work, replaced only when it is a file

namespace output_checks {

struct small_job {
  temp_dir dir;
  std::string refs = dir.write("r.fa", ">r1\nACGTACGTTTGACCA\n>r2\nGGGGCCCCAAAATTTT\n");
  std::string queries = dir.write("q.fa", ">q1\nACGTTTGA\n>q2\nAAAATTTT\n");
  std::string expected;
  small_job() {
    EXPECT_EQ(cli({"map", "--streams", "1", "-o", dir.file("want.tsv"), refs, queries}).status, 0);
    expected = slurp(dir.file("want.tsv"));
  }
  cli_result run(const std::string& out) {
    return cli({"map", "--streams", "1", "-o", out, refs, queries});
  }
};

mode_t mode_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode;
}

TEST(AlignOutput, SymlinkToAFileOrToNothingIsRefused) {
  small_job j;
  std::string target = j.dir.write("target.tsv", "old\n");
  std::string link = j.dir.file("link.tsv");
  ASSERT_EQ(::symlink("target.tsv", link.c_str()), 0);
  std::string dangling = j.dir.file("dangling.tsv");
  ASSERT_EQ(::symlink("made.tsv", dangling.c_str()), 0);
  for (const std::string& out : {link, dangling}) {
    cli_result res = j.run(out);
    EXPECT_EQ(res.status, 1) << out;
    EXPECT_EQ(res.err, "weft-align: " + out +
                           ": is a symbolic link; refusing to write through it (give the path of "
                           "the file itself)\n");
    EXPECT_TRUE(fs::is_symlink(out));
  }
  EXPECT_EQ(slurp(target), "old\n");
  EXPECT_FALSE(fs::exists(j.dir.file("made.tsv")));
  for (auto& e : j.dir.entries()) EXPECT_EQ(e.find(".tmp."), std::string::npos) << e;
  // gen writes through the same checks.
  cli_result res = cli({"gen", "--ref-out", link, "--query-out", j.dir.file("g.fa")});
  EXPECT_EQ(res.status, 1);
  EXPECT_EQ(slurp(target), "old\n");
}

TEST(AlignOutput, NewFileHonoursUmaskExistingFileKeepsItsMode) {
  small_job j;
  mode_t old = ::umask(027);
  cli_result res = j.run(j.dir.file("new.tsv"));
  ::umask(old);
  ASSERT_EQ(res.status, 0) << res.err;
  EXPECT_EQ(mode_of(j.dir.file("new.tsv")) & 07777, 0640u);
  std::string existing = j.dir.write("existing.tsv", "x\n");
  ASSERT_EQ(::chmod(existing.c_str(), 0604), 0);
  ASSERT_EQ(j.run(existing).status, 0);
  EXPECT_EQ(mode_of(existing) & 07777, 0604u);
  EXPECT_EQ(slurp(existing), j.expected);
}

TEST(AlignOutput, FifoIsWrittenInPlace) {
  small_job j;
  std::string fifo = j.dir.file("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] {
    int fd = ::open(fifo.c_str(), O_RDONLY);
    char buf[4096];
    for (ssize_t n; fd >= 0 && (n = ::read(fd, buf, sizeof buf)) > 0;) got.append(buf, n);
    if (fd >= 0) ::close(fd);
  });
  cli_result res = j.run(fifo);
  reader.join();
  EXPECT_EQ(res.status, 0) << res.err;
  EXPECT_EQ(got, j.expected);
  EXPECT_TRUE(S_ISFIFO(mode_of(fifo)));
}

TEST(AlignOutput, DeviceIsWrittenInPlace) {
  small_job j;
  ASSERT_TRUE(S_ISCHR(mode_of("/dev/null")));
  EXPECT_EQ(j.run("/dev/null").status, 0);
  EXPECT_TRUE(S_ISCHR(mode_of("/dev/null")));
  // Through a symlink too.
  std::string link = j.dir.file("null-link");
  ASSERT_EQ(::symlink("/dev/null", link.c_str()), 0);
  EXPECT_EQ(j.run(link).status, 0);
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_TRUE(S_ISCHR(mode_of("/dev/null")));
}

TEST(AlignOutput, AnInputIsNeverOverwritten) {
  small_job j;
  const std::string before = slurp(j.queries);
  std::string link = j.dir.file("q-link.fa");
  ASSERT_EQ(::symlink(j.queries.c_str(), link.c_str()), 0);
  std::string hard = j.dir.file("q-hard.fa");
  ASSERT_EQ(::link(j.queries.c_str(), hard.c_str()), 0);
  for (const std::string& out : {j.queries, j.refs, link, hard}) {
    cli_result res = j.run(out);
    EXPECT_EQ(res.status, 1) << out;
    EXPECT_NE(res.err.find("refusing to overwrite an input"), std::string::npos) << res.err;
  }
  EXPECT_EQ(slurp(j.queries), before);
}

TEST(AlignOutput, ABadDestinationFailsBeforeAnyInputIsRead) {
  small_job j;
  // The queries are bad at their end: the destination's error must come first.
  std::string bad_q = j.dir.write("bad.fa", ">q1\nACGT\n>q2\nAC!T\n");
  for (const std::string& out : {j.dir.file("no-such-dir/out.tsv"), j.dir.path().string()}) {
    cli_result res = cli({"map", "--streams", "1", "-o", out, j.refs, bad_q});
    EXPECT_EQ(res.status, 1);
    EXPECT_EQ(res.err.rfind("weft-align: " + out + ": cannot ", 0), 0u) << res.err;
  }
}

}  // namespace output_checks

// ---------------------------------------------------------------------------------------------
// Alphabet, strands, streaming, warnings

TEST(AlignAlphabet, EveryLetterOutsideTheAlphabetIsNamedAtOnce) {
  temp_dir dir;
  std::string r = dir.write("r.fa", ">r1\nACGTACGT\n");
  std::string q = dir.write("q.fa", ">q1\nACXT\n>q2\nJJ\nAO\n>q3\nXJ\n");
  cli_result res = cli({"map", "-o", dir.file("o.tsv"), r, q});
  EXPECT_EQ(res.status, 1);
  EXPECT_EQ(res.err, "weft-align: " + q +
                         ":2: character 'X' (column 3) is not in the alphabet ACGTUNRYSWKMBDHV; "
                         "nor are 'J' (line 4), 'O' (line 5)\n");
  EXPECT_FALSE(fs::exists(dir.file("o.tsv")));
}

TEST(AlignAlphabet, IupacCodesMatchWhatTheyStandForUnlessLiteral) {
  temp_dir dir;
  // Lower case and IUPAC codes in the input; R (A or G) meets S (C or G) in G.
  std::string r = dir.write("r.fa", ">r1\nggacTGsgg\n");
  std::string q = dir.write("q.fa", ">n\nACNG\n>r\nACTGR\n");
  for (auto [match, want] : {std::pair{"iupac", "n\tr1\t+\t0\t2\t5\nr\tr1\t+\t0\t2\t6\n"},
                             std::pair{"literal", "n\tr1\t+\t1\t2\t5\nr\tr1\t+\t1\t2\t5\n"}}) {
    ASSERT_EQ(cli({"map", "--streams", "1", "--strand", "forward", "--match", match, "-o",
                   dir.file("o.tsv"), r, q})
                  .status,
              0);
    // The header names the matching rule.
    const std::string rule =
        std::string(match) == "iupac"
            ? "#match: iupac (N and the IUPAC ambiguity codes match the bases they stand for)\n"
            : "#match: literal (every letter matches only itself)\n";
    EXPECT_EQ(slurp(dir.file("o.tsv")),
              rule + "#query\treference\tstrand\tdistance\tstart\tend\n" + want)
        << match;
  }
  EXPECT_EQ(align::reverse_complement("ACGTRYKMBVDHSWNU"), "ANWSDHBVKMRYACGT");
  // Each pair of codes with a base in common is an equality, in both orders of use.
  auto eq = align::iupac_equalities();
  auto has = [&](char a, char b) {
    return std::find(eq.begin(), eq.end(), std::pair{a, b}) != eq.end() ||
           std::find(eq.begin(), eq.end(), std::pair{b, a}) != eq.end();
  };
  EXPECT_TRUE(has('N', 'A'));
  EXPECT_TRUE(has('R', 'S'));
  EXPECT_TRUE(has('T', 'U'));
  EXPECT_FALSE(has('R', 'Y'));
  EXPECT_FALSE(has('A', 'C'));
}

TEST(AlignAlphabet, ReverseStrandNeedsLettersWithAComplement) {
  temp_dir dir;
  std::string r = dir.write("r.fa", ">r1\nACGT\n");
  cli_result res = cli({"map", "--alphabet", "ACGTX", r, r});
  EXPECT_EQ(res.status, 2);
  EXPECT_EQ(res.err.rfind("weft-align: option --strand: 'X' of --alphabet has no complement", 0),
            0u)
      << res.err;
  EXPECT_EQ(
      cli({"map", "--alphabet", "ACGTX", "--strand", "forward", "-o", dir.file("o.tsv"), r, r})
          .status,
      0);
}

TEST(AlignStrands, ReverseComplementedQueriesMapToTheMinusStrand) {
  data_set d = make_data(21, 12, 200, 600, 16, 60, 120, 0.05, 0);
  temp_dir dir;
  std::string refs, fwd, rev;
  for (auto& r : d.refs) refs += ">" + r.name + "\n" + r.seq + "\n";
  for (auto& q : d.queries) {
    fwd += ">" + q.name + "\n" + q.seq + "\n";
    rev += ">" + q.name + "\n" + align::reverse_complement(q.seq) + "\n";
  }
  std::string rf = dir.write("r.fa", refs), qf = dir.write("f.fa", fwd),
              qr = dir.write("rev.fa", rev);
  ASSERT_EQ(cli({"map", "--streams", "2", "-o", dir.file("f.tsv"), rf, qf}).status, 0);
  ASSERT_EQ(cli({"map", "--streams", "2", "-o", dir.file("r.tsv"), rf, qr}).status, 0);
  // Same reference, distance and positions; '+' becomes '-'.
  std::string f = slurp(dir.file("f.tsv")), r = slurp(dir.file("r.tsv"));
  std::size_t plus = 0;
  for (std::size_t p; (p = f.find("\t+\t")) != std::string::npos; ++plus) f.replace(p, 3, "\t-\t");
  EXPECT_EQ(plus, d.queries.size());
  EXPECT_EQ(f, r);
  // Forward only: the reverse-complemented queries map far worse.
  ASSERT_EQ(cli({"map", "--streams", "2", "--strand", "forward", "-o", dir.file("ff.tsv"), rf, qr})
                .status,
            0);
  EXPECT_NE(slurp(dir.file("ff.tsv")), r);
}

TEST(AlignStreaming, ChunkSizeDoesNotChangeTheOutput) {
  temp_dir dir;
  align::gen_options g;
  g.refs = 10;
  g.ref_min = 100;
  g.ref_max = 400;
  g.queries = 23;
  g.qlen_min = 30;
  g.qlen_max = 60;
  g.fastq = true;
  auto text = align::generate(g);
  std::string r = dir.write("r.fa", text.refs), q = dir.write("q.fq", text.queries);
  ASSERT_EQ(cli({"map", "--streams", "2", "-o", dir.file("all.tsv"), r, q}).status, 0);
  for (const char* batch : {"1", "5", "23"}) {
    ASSERT_EQ(cli({"map", "--streams", "2", "--batch", batch, "--ties", "all", "--cigar", "-o",
                   dir.file("b.tsv"), r, q})
                  .status,
              0);
    ASSERT_EQ(cli({"map", "--backend", "serial", "--ties", "all", "--cigar", "-o",
                   dir.file("s.tsv"), r, q})
                  .status,
              0);
    EXPECT_EQ(slurp(dir.file("b.tsv")), slurp(dir.file("s.tsv"))) << batch;
    ASSERT_EQ(
        cli({"map", "--streams", "2", "--batch", batch, "-o", dir.file("b.tsv"), r, q}).status, 0);
    EXPECT_EQ(slurp(dir.file("b.tsv")), slurp(dir.file("all.tsv"))) << batch;
  }
}

TEST(AlignWarnings, DuplicateReferenceNamesAndLongQueries) {
  temp_dir dir;
  std::string r = dir.write("r.fa", ">a\nACGTACGT\n>b\nTTTT\n>a\nGGGG\n");
  std::string q = dir.write("q.fa", ">q\nACGT\n");
  cli_result res = cli({"map", "-o", dir.file("o.tsv"), r, q});
  EXPECT_EQ(res.status, 1);
  EXPECT_EQ(res.err, "weft-align: " + r + ":5: duplicate name 'a' (first at line 1)\n");
  r = dir.write("r2.fa", ">a\nACGTACGT\n>b\nTTTT\n");
  q = dir.write("q2.fa", ">short\nACGT\n>long1\nACGTACGTA\n>long2\nACGTACGTAA\n");
  res = cli({"map", "--streams", "1", "-o", dir.file("o.tsv"), r, q});
  EXPECT_EQ(res.status, 0);
  EXPECT_EQ(res.err,
            "weft-align: warning: 2 queries (the first: 'long1') are longer than every reference "
            "(the longest has 8 residues): the distance counts the overhang\n");
}

TEST(AlignBadInput, TruncatedGzipFastqNamesTheLastCompleteLine) {
  temp_dir dir;
  align::gen_options g;
  g.queries = 3000;
  g.fastq = true;
  std::string text = align::generate(g).queries;
  align::write_gzip_atomically(dir.file("q.fq.gz"), text);
  std::string gz = slurp(dir.file("q.fq.gz"));
  std::string cut = gz.substr(0, gz.size() / 2);
  std::string q = dir.write("cut.fq.gz", cut);
  // What zlib can decompress of the cut file: its complete lines are the ones read.
  z_stream z{};
  ASSERT_EQ(inflateInit2(&z, 15 + 16), Z_OK);
  std::string plain(text.size(), '\0');
  z.next_in = reinterpret_cast<Bytef*>(cut.data());
  z.avail_in = static_cast<uInt>(cut.size());
  z.next_out = reinterpret_cast<Bytef*>(plain.data());
  z.avail_out = static_cast<uInt>(plain.size());
  inflate(&z, Z_SYNC_FLUSH);
  plain.resize(z.total_out);
  inflateEnd(&z);
  const auto lines = std::count(plain.begin(), plain.end(), '\n');
  std::string r = dir.write("r.fa", ">r\nACGT\n");
  cli_result res = cli({"map", "--streams", "1", "-o", dir.file("o.tsv"), r, q});
  EXPECT_EQ(res.status, 1);
  EXPECT_NE(res.err.find(q + ": cannot read after line " + std::to_string(lines) + ": "),
            std::string::npos)
      << res.err << " (" << lines << " complete lines)";
}
