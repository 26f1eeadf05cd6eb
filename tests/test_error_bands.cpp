// Error bands from the accuracy corpus's measured errors: hand-made corpora whose bands
// and leave-one-out counts are counted by hand.
#include <doctest/doctest.h>

#include <cmath>

#include "app/validation/error_bands.h"

using namespace fabricsim;

namespace {
// table, use, nodes, algorithm/protocol, bytes, measured, simulated, error
const char* kCorpus =
    "# a comment\n"
    "table\tuse\tnodes\talgorithm/protocol\tbytes\tmeasured_busbw_GBps\tsimulated_busbw_GBps\terror\n"
    "fitted\tcalibration\t1\tNVLS/-\t134217728\t100\t150\t0.5\n"
    "a\tprediction\t2\tRing/Simple\t134217728\t100\t110\t0.10\n"
    "a\tprediction\t2\tRing/Simple\t268435456\t100\t95\t-0.05\n"
    "a\tprediction\t2\tTree/LL128\t2097152\t100\t130\t0.30\n"
    "a\tprediction\t2\tTree/LL\t8\t0\t0.01\t0\n"
    "b\tprediction\t2\tRing/Simple\t536870912\t100\t120\t0.20\n"
    "b\tprediction\t2\tRing/LL128\t4194304\t100\t102\t0.02\n"
    "c\tprediction\t4\tNVLSTree/Simple\t1073741824\t100\t108\t0.08\n";
}  // namespace

TEST_CASE("the corpus's predicted rows are read, fitted rows and rows with nothing measured are not") {
  const auto rows = parse_corpus_errors(kCorpus);
  REQUIRE(rows.size() == 6);
  CHECK(rows[0].table == "a");
  CHECK(rows[0].algorithm == "Ring");
  CHECK(rows[0].protocol == "Simple");
  CHECK(rows[0].bytes == 134217728);
  CHECK(rows[0].nodes == 2);
  CHECK(rows[0].error == doctest::Approx(0.10));
  CHECK_THROWS(parse_corpus_errors("a\tprediction\t2\n"));
}

TEST_CASE("a band is a 90% interval about its regime's errors, widened only where the regime has no row") {
  const auto corpus = parse_corpus_errors(kCorpus);
  // Ring/Simple >= 64 MiB across nodes: 0.10, -0.05 (a) and 0.20 (b). In ln(1 + error): a's
  // mean (0.095310 - 0.051293) / 2 = 0.022008, b's 0.182322; the centre their mean, 0.102165.
  // Two tables: the between-table variance is pooled over the >= 64 MiB regimes of two
  // tables, this one alone: 2 x 0.080157^2 / 1 = 0.012850, one degree of freedom. a's rows
  // give one degree of freedom beyond its mean (fewer than two), so the scatter is pooled
  // over the >= 64 MiB regimes: 2 x 0.073302^2 / 1 = 0.010746, one degree of freedom.
  // sd = sqrt(0.012850 x (1 + 1/2) + 0.010746) = 0.173267; Welch-Satterthwaite: 0.030021^2 /
  // (0.019275^2 / 1 + 0.010746^2 / 1) = 1.8506 degrees of freedom, whose 95th percentile of
  // Student's t is 3.087227; the band exp(0.102165 -/+ 3.087227 x 0.173267) - 1.
  ErrorBand b = error_band(corpus, "Ring", "Simple", std::int64_t{1} << 30, 2);
  REQUIRE(b.found);
  CHECK(b.degrees_of_freedom == doctest::Approx(1.850636).epsilon(1e-4));
  CHECK(b.low == doctest::Approx(-0.351277).epsilon(1e-4));
  CHECK(b.high == doctest::Approx(0.890951).epsilon(1e-4));
  CHECK(b.seen_low == doctest::Approx(-0.05));
  CHECK(b.seen_high == doctest::Approx(0.20));
  CHECK(b.rows == 3);
  CHECK(b.tables == 2);
  CHECK(b.regime == "Ring/Simple, >= 64 MiB, across nodes");
  // Ring/LL at 2 MiB: no Ring/LL row; the ring's 1-64 MiB rows are b's LL128 one. No
  // scatter among the 1-64 MiB rows (one each) and no regime of two tables among them, so
  // every band's between-table spread stands in, the one above: sd = sqrt(0.012850 x 2) =
  // 0.160313 about ln(1.02), on one degree of freedom (t = 6.313752, the 95th percentile
  // of Student's t with one degree of freedom, as printed tables give it).
  b = error_band(corpus, "Ring", "LL", std::int64_t{2} << 20, 16);
  REQUIRE(b.found);
  CHECK(b.seen_low == doctest::Approx(0.02));
  CHECK(b.seen_high == doctest::Approx(0.02));
  CHECK(b.degrees_of_freedom == doctest::Approx(1.0));
  CHECK(b.low == doctest::Approx(std::expm1(std::log(1.02) - 6.313752 * 0.160313)).epsilon(1e-4));
  CHECK(b.high == doctest::Approx(std::expm1(std::log(1.02) + 6.313752 * 0.160313)).epsilon(1e-4));
  CHECK(b.regime == "Ring (any protocol), 1-64 MiB, across nodes");
  // NVLS at 8 MiB: no NVLS row in the band; any algorithm there: 0.30 and 0.02.
  b = error_band(corpus, "NVLS", "Simple", std::int64_t{8} << 20, 2);
  REQUIRE(b.found);
  CHECK(b.seen_low == doctest::Approx(0.02));
  CHECK(b.seen_high == doctest::Approx(0.30));
  CHECK(b.regime == "any algorithm, 1-64 MiB, across nodes");
  // One node: the corpus has no predicted single-node row.
  CHECK_FALSE(error_band(corpus, "NVLS", "Simple", std::int64_t{1} << 30, 1).found);
  // Leaving a table out: Ring/Simple from b alone, and with a gone nothing is left to say how
  // rows scatter or machines differ: the band is b's one error.
  b = error_band(corpus, "Ring", "Simple", std::int64_t{1} << 30, 2, "a");
  CHECK(b.low == doctest::Approx(0.20));
  CHECK(b.high == doctest::Approx(0.20));
  // Leaving b out: a's two rows about their mean 0.022008, the scatter pooled from them
  // (0.010746, one degree of freedom), no regime of two tables left: sd = 0.103664, t =
  // 6.313752.
  b = error_band(corpus, "Ring", "Simple", std::int64_t{1} << 30, 2, "b");
  CHECK(b.low == doctest::Approx(-0.468739).epsilon(1e-4));
  CHECK(b.high == doctest::Approx(0.967019).epsilon(1e-4));
}

TEST_CASE("a regime of three tables gives its own spreads, and lends its between-table spread to a regime of one") {
  const char* corpus_text =
      "t1\tprediction\t1\tRing/Simple\t134217728\t100\t110\t0.10\n"
      "t1\tprediction\t1\tRing/Simple\t268435456\t100\t112\t0.12\n"
      "t1\tprediction\t1\tRing/Simple\t536870912\t100\t114\t0.14\n"
      "t2\tprediction\t1\tRing/Simple\t134217728\t100\t100\t0\n"
      "t3\tprediction\t1\tRing/Simple\t134217728\t100\t95\t-0.05\n"
      "t4\tprediction\t1\tNVLS/Simple\t134217728\t100\t105\t0.05\n";
  const auto corpus = parse_corpus_errors(corpus_text);
  // Ring/Simple: t1's ln(1.10), ln(1.12), ln(1.14), mean 0.113324, two degrees of freedom
  // beyond it: scatter 0.000638 / 2 = 0.000319. Tables' means 0.113324, 0, ln(0.95) =
  // -0.051293, centre 0.020643; between (0.008591 + 0.000426 + 0.005155) / 2 = 0.007086.
  // sd = sqrt(0.007086 x (1 + 1/3) + 0.000319) = 0.098828; two degrees of freedom each:
  // 0.009767^2 / (0.009448^2 / 2 + 0.000319^2 / 2) = 2.1349, t = 2.797982.
  ErrorBand b = error_band(corpus, "Ring", "Simple", std::int64_t{1} << 30, 1);
  REQUIRE(b.found);
  CHECK(b.tables == 3);
  CHECK(b.degrees_of_freedom == doctest::Approx(2.134883).epsilon(1e-4));
  CHECK(b.low == doctest::Approx(-0.225761).epsilon(1e-4));
  CHECK(b.high == doctest::Approx(0.346032).epsilon(1e-4));
  // NVLS/Simple: t4's one row; the between-table spread is the ring's 0.007086 (the only
  // regime of two tables or more), the scatter the >= 64 MiB regimes' pooled 0.000319:
  // sd = sqrt(0.007086 x 2 + 0.000319) = 0.120378 about ln(1.05), on 2.0900 degrees of
  // freedom: t = 2.836035.
  b = error_band(corpus, "NVLS", "Simple", std::int64_t{1} << 30, 1);
  REQUIRE(b.found);
  CHECK(b.tables == 1);
  CHECK(b.low == doctest::Approx(-0.253684).epsilon(1e-4));
  CHECK(b.high == doctest::Approx(0.477256).epsilon(1e-4));
  CHECK(b.seen_low == doctest::Approx(0.05));
  CHECK(b.seen_high == doctest::Approx(0.05));
}

TEST_CASE("leave one out checks each table's rows of 1 MiB and up against the other tables' bands") {
  const auto checks = leave_one_out(parse_corpus_errors(kCorpus));
  REQUIRE(checks.size() == 3);
  // a: Ring/Simple 0.10 and -0.05 against b's [0.20, 0.20] (no spread left to pool): outside;
  // Tree/LL128 0.30 at 2 MiB against any algorithm 1-64 MiB from b: [0.02, 0.02]: outside.
  CHECK(checks[0].group == "a");
  CHECK(checks[0].rows == 3);
  CHECK(checks[0].banded == 3);
  CHECK(checks[0].covered == 0);
  // b: 0.20 against a's band [-0.469, +0.967] (above): inside; Ring/LL128 0.02 at 4 MiB
  // against the ring's 1-64 MiB rows of a: none, so any algorithm there: a's Tree 0.30
  // alone, no spread: outside.
  CHECK(checks[1].rows == 2);
  CHECK(checks[1].banded == 2);
  CHECK(checks[1].covered == 1);
  // c: NVLSTree at 1 GiB on 4 nodes against any algorithm >= 64 MiB across nodes: a and
  // b's ring rows, [-0.351, +0.891] as above: 0.08 inside.
  CHECK(checks[2].rows == 1);
  CHECK(checks[2].banded == 1);
  CHECK(checks[2].covered == 1);
  // All tables together: 3 + 2 + 1 rows, all with a band, one of b's and c's inside.
  const LeaveOneOut all = leave_one_out_total(checks);
  CHECK(all.group == "all tables");
  CHECK(all.rows == 6);
  CHECK(all.banded == 6);
  CHECK(all.covered == 2);
  // Widths: a's three bands are points; b's [-0.469, +0.967] and a point; c's [-0.351, +0.891].
  CHECK(checks[0].width_sum == doctest::Approx(0.0));
  CHECK(checks[1].width_sum == doctest::Approx(1.435758).epsilon(1e-4));
  CHECK(all.width_sum == doctest::Approx(1.435758 + 1.242229).epsilon(1e-4));
}

TEST_CASE("leave one out by band counts each regime's rows against the regime's band made without their table") {
  const auto checks = leave_one_out_by_regime(parse_corpus_errors(kCorpus));
  // The rows of 1 MiB and up in order, each under its own regime, with the bands worked out
  // in the test above: a's Ring/Simple 0.10 and -0.05 against b's point 0.20 (outside, twice),
  // a's Tree/LL128 0.30 against b's any-algorithm point 0.02 (outside), b's Ring/Simple 0.20
  // against a's [-0.469, +0.967] (inside), b's Ring/LL128 0.02 against a's Tree point 0.30
  // (outside), c's NVLSTree 0.08 against [-0.351, +0.891] (inside). a's 8-byte Tree/LL row
  // is under 1 MiB: its regime is not listed.
  REQUIRE(checks.size() == 4);
  CHECK(checks[0].group == "Ring/Simple, >= 64 MiB, across nodes");
  CHECK(checks[0].rows == 3);
  CHECK(checks[0].banded == 3);
  CHECK(checks[0].covered == 1);
  CHECK(checks[0].width_sum == doctest::Approx(1.435758).epsilon(1e-4));
  CHECK(checks[1].group == "Tree/LL128, 1-64 MiB, across nodes");
  CHECK(checks[1].rows == 1);
  CHECK(checks[1].covered == 0);
  CHECK(checks[2].group == "Ring/LL128, 1-64 MiB, across nodes");
  CHECK(checks[2].rows == 1);
  CHECK(checks[2].covered == 0);
  CHECK(checks[3].group == "NVLSTree/Simple, >= 64 MiB, across nodes");
  CHECK(checks[3].rows == 1);
  CHECK(checks[3].banded == 1);
  CHECK(checks[3].covered == 1);
}

TEST_CASE("a band counts only rows of the same family of collectives, a ninth column names it, all_reduce where absent") {
  const char* corpus_text =
      "ar\tprediction\t1\tRing/Simple\t134217728\t100\t110\t0.10\n"
      "ag\tprediction\t1\tRing/Simple\t134217728\t100\t95\t-0.05\tall_gather\n"
      "ag\tprediction\t1\tRing/Simple\t268435456\t100\t98\t-0.02\tall_gather\n";
  const auto corpus = parse_corpus_errors(corpus_text);
  REQUIRE(corpus.size() == 3);
  CHECK(corpus[0].op == "all_reduce");
  CHECK(corpus[1].op == "all_gather");
  ErrorBand b = error_band(corpus, "Ring", "Simple", std::int64_t{1} << 30, 1);
  CHECK(b.rows == 1);
  CHECK(b.seen_low == doctest::Approx(0.10));
  b = error_band(corpus, "Ring", "Simple", std::int64_t{1} << 30, 1, {}, "all_gather");
  CHECK(b.rows == 2);
  CHECK(b.seen_low == doctest::Approx(-0.05));
  CHECK(b.seen_high == doctest::Approx(-0.02));
  CHECK(b.regime == "all_gather/reduce_scatter Ring/Simple, >= 64 MiB, one node");
  // ReduceScatter shares AllGather's rows (NCCL prices both as n - 1 ring steps); broadcast none.
  b = error_band(corpus, "Ring", "Simple", std::int64_t{1} << 30, 1, {}, "reduce_scatter");
  CHECK(b.rows == 2);
  CHECK_FALSE(error_band(corpus, "Ring", "Simple", std::int64_t{1} << 30, 1, {}, "broadcast").found);
}

TEST_CASE("the built-in corpus errors are configs/validation/corpus_errors.tsv's predicted rows") {
  const auto& corpus = built_in_corpus_errors();
  REQUIRE_FALSE(corpus.empty());
  for (const CorpusError& e : corpus) CHECK(e.table != "h100_1node_nvls");  // a calibration table
}

