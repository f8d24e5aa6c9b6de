// The tuning-table format (kiln/tuning_table.h): parsing, the errors that
// name the file and the field, writing, and the key-matching rule.

#include "kiln/tuning_table.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kTable[] = R"json({
  "kiln_tuning_table": 1,
  "device": {"name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0",
             "sm_count": 132, "driver_version": 13000},
  "kiln_version": "0.1.0",
  "kernels": [
    {"kernel": "matmul_kernel", "key": ["M", "N", "K"], "results": [
      {"types": "*fp16, *fp16, *fp16, i32, i32, i32",
       "key": [4096, 4096, 4096],
       "ranking": [{"config": "BM=128, num_warps=8, num_stages=3", "ms": 0.2},
                   {"config": "BM=64, num_warps=4, num_stages=4", "ms": 0.3}],
       "rejected": [{"config": "BM=32, num_warps=4, num_stages=3",
                     "reason": "output c_ptr differs"}]},
      {"types": "*fp16, *fp16, *fp16, i32, i32, i32",
       "key": [16, 4096, 4096],
       "ranking": [{"config": "BM=64, num_warps=4, num_stages=4", "ms": 0.05}]}
    ]}
  ]
})json";

TuningTable Parse(const std::string &text) {
  absl::StatusOr<TuningTable> table = ParseTuningTable(text, "t.json");
  EXPECT_TRUE(table.ok()) << table.status();
  return table.ok() ? *table : TuningTable{};
}

std::string ErrorOf(const std::string &text) {
  absl::StatusOr<TuningTable> table =
      ParseTuningTable(text, "tuning/h100.json");
  if (table.ok())
    return "no error";
  EXPECT_EQ(table.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(table.status().message());
}

std::string Edit(const std::string &from, const std::string &to) {
  std::string text = kTable;
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(TuningTable, ParsesEveryField) {
  TuningTable table = Parse(kTable);
  EXPECT_EQ(table.device.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(table.device.compute_capability_major, 9);
  EXPECT_EQ(table.device.compute_capability_minor, 0);
  EXPECT_EQ(table.device.sm_count, 132);
  EXPECT_EQ(table.device.driver_version, 13000);
  EXPECT_EQ(table.kiln_version, "0.1.0");
  ASSERT_EQ(table.kernels.size(), 1u);
  const KernelTuning &k = table.kernels[0];
  EXPECT_EQ(k.kernel, "matmul_kernel");
  EXPECT_EQ(k.key, (std::vector<std::string>{"M", "N", "K"}));
  ASSERT_EQ(k.results.size(), 2u);
  EXPECT_EQ(k.results[0].key, (std::vector<int64_t>{4096, 4096, 4096}));
  ASSERT_EQ(k.results[0].ranking.size(), 2u);
  EXPECT_EQ(k.results[0].ranking[0].config,
            "BM=128, num_warps=8, num_stages=3");
  EXPECT_DOUBLE_EQ(k.results[0].ranking[0].ms, 0.2);
  ASSERT_EQ(k.results[0].rejected.size(), 1u);
  EXPECT_EQ(k.results[0].rejected[0].reason, "output c_ptr differs");
}

TEST(TuningTable, WriteThenParseGivesTheSameTable) {
  TuningTable table = Parse(kTable);
  std::string written = WriteTuningTable(table);
  TuningTable again = Parse(written);
  EXPECT_EQ(WriteTuningTable(again), written);
  EXPECT_EQ(again.kernels[0].results[1].key,
            (std::vector<int64_t>{16, 4096, 4096}));
  EXPECT_EQ(again.kernels[0].results[0].rejected[0].config,
            "BM=32, num_warps=4, num_stages=3");
}

TEST(TuningTable, SyntaxErrorsNameFileLineAndColumn) {
  EXPECT_THAT(ErrorOf("{\n  \"kiln_tuning_table\": 1,\n  oops\n}"),
              HasSubstr("tuning/h100.json:3:3: malformed JSON: expected a "
                        "member name"));
  EXPECT_THAT(ErrorOf("[1, 2"), HasSubstr("tuning/h100.json:1:6: malformed "
                                          "JSON: expected ',' or ']'"));
  EXPECT_THAT(ErrorOf("{\"a\": 1, \"a\": 2}"),
              HasSubstr("member \"a\" repeated"));
}

TEST(TuningTable, FieldErrorsNameFileLineAndField) {
  EXPECT_EQ(ErrorOf(Edit("\"ms\": 0.3", "\"ms\": \"fast\"")),
            "tuning/h100.json:11: kernels[0].results[0].ranking[1].ms: "
            "expected a positive number, got a string");
  EXPECT_THAT(ErrorOf(Edit("\"key\": [16, 4096, 4096]", "\"key\": [16, 4096]")),
              AllOf(HasSubstr("kernels[0].results[1].key: expected 3 values "
                              "(one per name of the kernel's key), got 2")));
  EXPECT_THAT(ErrorOf(Edit("\"sm_count\": 132", "\"sm_count\": 0")),
              HasSubstr("device.sm_count: expected an integer >= 1, got 0"));
  EXPECT_THAT(ErrorOf(Edit("\"9.0\"", "\"9\"")),
              HasSubstr("device.compute_capability: expected \"MAJOR.MINOR\""));
  EXPECT_THAT(
      ErrorOf(Edit("\"kiln_tuning_table\": 1", "\"kiln_tuning_table\": 2")),
      HasSubstr("kiln_tuning_table: expected the format version 1"));
  EXPECT_THAT(
      ErrorOf(Edit("\"types\": \"*fp16, *fp16, *fp16, i32, i32, i32\",\n"
                   "       \"key\": [16",
                   "\"typo\": 1, \"key\": [16")),
      HasSubstr("kernels[0].results[1].typo: unknown field; expected "
                "one of types, key, ranking, rejected"));
  EXPECT_EQ(ErrorOf(Edit("\"kiln_version\": \"0.1.0\",", "")),
            "no error"); // optional
  EXPECT_THAT(ErrorOf(Edit("\"kernel\": \"matmul_kernel\", ", "")),
              HasSubstr("kernels[0].kernel: missing"));
  // Fastest first, each config once, no (types, key) twice.
  EXPECT_THAT(ErrorOf(Edit("\"ms\": 0.3", "\"ms\": 0.1")),
              HasSubstr("ranking[1].ms: the ranking must be fastest first"));
  EXPECT_THAT(
      ErrorOf(Edit("\"BM=64, num_warps=4, num_stages=4\", \"ms\": 0.3",
                   "\"BM=128, num_warps=8, num_stages=3\", \"ms\": 0.3")),
      HasSubstr("ranking[1].config: config \"BM=128, num_warps=8, "
                "num_stages=3\" is ranked twice"));
  EXPECT_THAT(ErrorOf(Edit("[16, 4096, 4096]", "[4096, 4096, 4096]")),
              HasSubstr("kernels[0].results[1].key: these types and key "
                        "values have another result before"));
}

TEST(TuningBucket, RoundsUpToPowersOfTwo) {
  EXPECT_EQ(TuningBucket(1), 0);
  EXPECT_EQ(TuningBucket(2), 1);
  EXPECT_EQ(TuningBucket(3), 2);
  EXPECT_EQ(TuningBucket(1000), 10);
  EXPECT_EQ(TuningBucket(1024), 10);
  EXPECT_EQ(TuningBucket(1025), 11);
  EXPECT_EQ(TuningBucket(0), -1);
  EXPECT_EQ(TuningBucket(-5), -1);
  EXPECT_EQ(TuningBucket(INT64_MAX), 63);
}

KeyMatch Match(const std::vector<int64_t> &call,
               const std::vector<std::vector<int64_t>> &keys) {
  return MatchTuningKey(call, static_cast<int>(keys.size()), [&](int i) {
    return absl::Span<const int64_t>(keys[i]);
  });
}

TEST(MatchTuningKey, ExactThenNearestBucketThenNone) {
  std::vector<std::vector<int64_t>> keys = {
      {256, 256, 256}, {4096, 4096, 4096}, {16, 4096, 4096}, {64, 4096, 4096}};
  KeyMatch exact = Match({16, 4096, 4096}, keys);
  EXPECT_EQ(exact.kind, KeyMatchKind::kExact);
  EXPECT_EQ(exact.index, 2);

  // 4000 rounds up to 4096's bucket: the same bucket as result 1.
  KeyMatch same = Match({4000, 4000, 4000}, keys);
  EXPECT_EQ(same.kind, KeyMatchKind::kNearestBucket);
  EXPECT_EQ(same.index, 1);
  EXPECT_EQ(same.bucket_distance, 0);

  // M=32 is one bucket from 16 and one from 64: the nearer value wins (16
  // is 16 away, 64 is 32 away).
  KeyMatch between = Match({32, 4096, 4096}, keys);
  EXPECT_EQ(between.index, 2);
  EXPECT_EQ(between.bucket_distance, 1);

  // Far from everything: still the nearest.
  KeyMatch far = Match({1 << 20, 1 << 20, 1 << 20}, keys);
  EXPECT_EQ(far.kind, KeyMatchKind::kNearestBucket);
  EXPECT_EQ(far.index, 1);

  EXPECT_EQ(Match({1, 2, 3}, {}).kind, KeyMatchKind::kNone);
  EXPECT_EQ(Match({1, 2, 3}, {}).index, -1);
}

TEST(MatchTuningKey, TiesGoToTheEarlierResult) {
  // One bucket and 64 away from each.
  KeyMatch m = Match({100, 100}, {{64, 128}, {128, 64}});
  EXPECT_EQ(m.kind, KeyMatchKind::kNearestBucket);
  EXPECT_EQ(m.index, 0);
}

} // namespace
} // namespace kiln
