#include <doctest/doctest.h>

#include "sim/core/units.h"

using namespace fabricsim;

TEST_CASE("time units parse to exact picoseconds") {
  CHECK(parse_time("500ns") == 500'000);
  CHECK(parse_time("1us") == 1'000'000);
  CHECK(parse_time("1.5us") == 1'500'000);
  CHECK(parse_time("2ms") == 2'000'000'000);
  CHECK(parse_time("3s") == 3'000'000'000'000);
  CHECK(parse_time("7ps") == 7);
  CHECK(parse_time(" 10 ns ") == 10'000);
  CHECK_FALSE(parse_time("10"));      // a time needs a unit
  CHECK_FALSE(parse_time("-1us"));    // never negative
  CHECK_FALSE(parse_time("1 fortnight"));
  CHECK_FALSE(parse_time("us"));
  CHECK_FALSE(parse_time(""));
}

TEST_CASE("bandwidth units: bits and bytes per second") {
  CHECK(parse_bandwidth("400Gbps")->bits_per_second == 400'000'000'000);
  CHECK(parse_bandwidth("450GBps")->bits_per_second == 3'600'000'000'000);  // NVLink4 per direction
  CHECK(parse_bandwidth("100Mbps")->bits_per_second == 100'000'000);
  CHECK(parse_bandwidth("1.6Tbps")->bits_per_second == 1'600'000'000'000);
  CHECK(parse_bandwidth("25GBps") == Bandwidth::gBps(25));
  CHECK_FALSE(parse_bandwidth("400"));
  CHECK_FALSE(parse_bandwidth("400Gb"));
  CHECK_FALSE(parse_bandwidth("-5Gbps"));
  // A space before the unit means the same everywhere: sizes, times and rates alike.
  CHECK(parse_bandwidth("400 Gbps")->bits_per_second == 400'000'000'000);
  CHECK(parse_time("2 us") == parse_time("2us"));
}

TEST_CASE("byte units: decimal and binary prefixes, bare numbers") {
  CHECK(parse_bytes("4KiB") == 4096);
  CHECK(parse_bytes("1GiB") == 1'073'741'824);
  CHECK(parse_bytes("1MiB") == 1'048'576);
  CHECK(parse_bytes("1MB") == 1'000'000);
  CHECK(parse_bytes("4096") == 4096);
  CHECK(parse_bytes("1.5KiB") == 1536);
  CHECK_FALSE(parse_bytes("0.3B"));  // no fractional bytes
  CHECK_FALSE(parse_bytes("4 KiBs"));
  // nccl-tests' forms (-b 64K -e 1G): the letter alone is binary, in configs as on flags.
  CHECK(parse_bytes("64K") == 65'536);
  CHECK(parse_bytes("1M") == 1'048'576);
  CHECK(parse_bytes("1G") == 1'073'741'824);
  CHECK(parse_bytes("2T") == 2'199'023'255'552);
  CHECK(parse_bytes("4 KiB") == 4096);  // a space before the unit, as for times and rates
  CHECK_FALSE(parse_bytes("1 M iB"));
}

TEST_CASE("serialization is bytes * 8 / rate, rounded up to a picosecond") {
  CHECK(serialization(4160, Bandwidth::gbps(100)) == 332'800);  // 80 ps per byte, exact
  CHECK(serialization(4160, Bandwidth::gbps(400)) == 83'200);   // 20 ps per byte
  // 4160 * 8 / 7e9 s = 4754285.714... ps -> 4754286
  CHECK(serialization(4160, Bandwidth::gbps(7)) == 4'754'286);
  // 1 GiB at 450 GB/s: 1073741824 / 450e9 s = 2386092942.22... ps
  CHECK(serialization(1'073'741'824, Bandwidth::gBps(450)) == 2'386'092'943);
  CHECK(serialization(0, Bandwidth::gbps(1)) == 0);
  // Either side of the largest size worked out in 64 bits (2^63 / 8e12 = 1,152,921.5 bytes),
  // at 13 Gb/s: 9,223,368,000 / 13 = 709,489,846.15 ps, 9,223,376,000 / 13 = 709,490,461.54 ps.
  CHECK(serialization(1'152'921, Bandwidth::gbps(13)) == 709'489'847);
  CHECK(serialization(1'152'922, Bandwidth::gbps(13)) == 709'490'462);
}

TEST_CASE("format_bytes writes binary units as nccl-tests users read sizes") {
  CHECK(format_bytes(8) == "8 B");
  CHECK(format_bytes(1024) == "1 KiB");
  CHECK(format_bytes(1536) == "1.5 KiB");
  CHECK(format_bytes(1 << 20) == "1 MiB");
  CHECK(format_bytes(std::int64_t{1} << 30) == "1 GiB");
  CHECK(format_bytes(std::int64_t{3} << 40) == "3 TiB");
}

TEST_CASE("format_time picks a readable unit") {
  CHECK(format_time(us(260)) == "260.000 us");
  CHECK(format_time(1500) == "1.500 ns");
  CHECK(format_time(12) == "12 ps");
}
