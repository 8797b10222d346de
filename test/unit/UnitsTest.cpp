#include "rapid/Support/Units.h"

#include <gtest/gtest.h>

using namespace rapid;

TEST(Units, DecimalAndBinaryPrefixesDiffer) {
  EXPECT_DOUBLE_EQ(lookupUnit("GB")->scale, 1e9);
  EXPECT_DOUBLE_EQ(lookupUnit("GiB")->scale, 1073741824.0);
  EXPECT_EQ(lookupUnit("MiB")->dim, Dim::size());
}

TEST(Units, BitsAreEighthsOfBytes) {
  auto gbps = lookupUnit("Gb/s");
  ASSERT_TRUE(gbps);
  EXPECT_DOUBLE_EQ(gbps->scale, 1.25e8);
  EXPECT_EQ(gbps->dim, Dim::bandwidth());
}

TEST(Units, CompositeUnitsDivideDimensions) {
  EXPECT_EQ(lookupUnit("TFLOP/s")->dim, Dim::compute());
  EXPECT_DOUBLE_EQ(lookupUnit("TFLOP/s")->scale, 1e12);
  EXPECT_EQ(lookupUnit("B/ns")->dim, Dim::bandwidth());
  EXPECT_DOUBLE_EQ(lookupUnit("B/ns")->scale, 1e9);
  EXPECT_FALSE(lookupUnit("GB/%"));
  EXPECT_FALSE(lookupUnit("furlong"));
}

TEST(Units, TimeAndFrequency) {
  EXPECT_DOUBLE_EQ(lookupUnit("us")->scale, 1e-6);
  EXPECT_EQ(lookupUnit("GHz")->dim, Dim::frequency());
  EXPECT_EQ(Dim::time() * Dim::frequency(), Dim::number());
  EXPECT_DOUBLE_EQ(lookupUnit("%")->scale, 0.01);
}

TEST(Units, SuggestsTheRateOrTheAmount) {
  EXPECT_EQ(suggestUnit("GB", Dim::bandwidth()), "GB/s");
  EXPECT_EQ(suggestUnit("GB/s", Dim::size()), "GB");
  EXPECT_EQ(suggestUnit("TFLOP", Dim::compute()), "TFLOP/s");
  EXPECT_EQ(suggestUnit("ns", Dim::size()), "");
  EXPECT_EQ(closestUnit("Gib"), "GiB");
  EXPECT_EQ(closestUnit("GiBs/s"), "GiB/s");
  EXPECT_EQ(closestUnits("Gbps"), (std::vector<std::string>{"Gb/s"}));
  EXPECT_EQ(closestUnits("GBps"), (std::vector<std::string>{"GB/s"}));
  EXPECT_EQ(closestUnits("gb/s"), (std::vector<std::string>{"GB/s", "Gb/s"}));
  EXPECT_EQ(closestUnits("MS"), (std::vector<std::string>{"ms"}));
  EXPECT_EQ(closestUnits("Gib"), (std::vector<std::string>{"GiB"}));
  EXPECT_EQ(closestUnits("parsecs"), std::vector<std::string>{});
}

TEST(Units, DescribesDimensions) {
  EXPECT_EQ(describeDim(Dim::bandwidth()), "a bandwidth (B/s)");
  EXPECT_EQ(describeDim(Dim::size()), "a size (B)");
  EXPECT_EQ(describeDim(Dim::number()), "a plain number");
  EXPECT_EQ(baseUnitName(Dim::size() * Dim::time()), "B*s");
}

TEST(Units, StrongTypesCombine) {
  Bytes b(1e9);
  BytesPerSecond bw(1e11);
  EXPECT_DOUBLE_EQ((b / bw).value(), 0.01);
  EXPECT_DOUBLE_EQ((FlopsPerSecond(2e12) * Seconds(0.5)).value(), 1e12);
  EXPECT_LT(Seconds(1), Seconds(2));
}

TEST(Units, FormatsForPeople) {
  EXPECT_EQ(formatBytes(Bytes(80.0 * 1073741824.0)), "80 GiB");
  EXPECT_EQ(formatSeconds(Seconds(1.25e-3)), "1.25 ms");
  EXPECT_EQ(formatBandwidth(BytesPerSecond(1e11)), "100 GB/s");
}

TEST(Units, SubUnitScalesConvertExactly) {
  EXPECT_EQ(lookupUnit("us")->toBase(5), 5e-6);
  EXPECT_EQ(lookupUnit("ns")->toBase(500), 500e-9);
  EXPECT_EQ(lookupUnit("GB/s")->toBase(2039), 2039e9);
  EXPECT_EQ(lookupUnit("B/ns")->toBase(3), 3e9);
  EXPECT_EQ(lookupUnit("b")->toBase(8), 1.0);
}

TEST(Units, FormatNumberIsShortAndReadsBack) {
  EXPECT_EQ(formatNumber(100e9), "100000000000");
  EXPECT_EQ(formatNumber(2), "2");
  EXPECT_EQ(formatNumber(1.5), "1.5");
  EXPECT_EQ(formatNumber(0.1), "0.1");
  EXPECT_EQ(formatNumber(1.1 * 1e15), "1100000000000000");
  EXPECT_EQ(formatNumber(5e-7 * 1e9), "500");
  EXPECT_EQ(formatNumber(1e20), "1e+20");
}
