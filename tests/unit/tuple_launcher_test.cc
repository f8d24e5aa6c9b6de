// Generated launchers of kernels with tuple parameters (testdata/codegen's
// tuple_strides and mixed_tuple, embedded by kiln_embed_plain): the tuple
// arrives as a std::array (or std::tuple), its `:1` element is checked like a
// scalar's, and its `:16` elements choose the aligned variant. The launch
// observer reports the variant chosen even where no driver loads, so no GPU
// is needed.

#include <array>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "embed_check/plain.h"
#include "kiln/launch_observer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using namespace kiln_test::embed_plain;

class TupleLauncherTest : public ::testing::Test {
protected:
  TupleLauncherTest() { kiln::SetLaunchObserver(&Record, &chosen_); }
  ~TupleLauncherTest() override { kiln::SetLaunchObserver(nullptr, nullptr); }

  static void Record(const kiln::LaunchEvent &event, void *user_data) {
    static_cast<std::vector<std::string> *>(user_data)->push_back(
        event.variant->signature);
  }

  std::vector<std::string> chosen_;
};

alignas(16) float buffer[64];

TEST_F(TupleLauncherTest, AlignedElementsChooseTheAlignedVariant) {
  (void)launch_tuple_strides(kiln::Grid(1), nullptr, buffer,
                             std::array<int32_t, 3>{64, 32, 1}, 128);
  (void)launch_tuple_strides(kiln::Grid(1), nullptr, buffer, {64, 33, 1}, 128);
  EXPECT_EQ(chosen_, (std::vector<std::string>{
                         "*fp32:16, (i32:16, i32:16, i32:1), i32:16, 128",
                         "*fp32, (i32, i32, i32:1), i32, 128"}));
}

TEST_F(TupleLauncherTest, EqualToOneElementIsChecked) {
  absl::Status status =
      launch_tuple_strides(kiln::Grid(1), nullptr, buffer, {64, 32, 2}, 128);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), AllOf(HasSubstr("tuple_strides"),
                                      HasSubstr("stride[2]"), HasSubstr("2")));
  EXPECT_TRUE(chosen_.empty());
  // The config overload checks it too.
  status = launch_tuple_strides(tuple_strides_config{}, kiln::Grid(1), nullptr,
                                buffer, {64, 32, 3}, 128);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("stride[2]"));
}

TEST_F(TupleLauncherTest, MixedTuplesAreStdTuples) {
  // The overload taking exactly these types exists.
  absl::Status (*launcher)(
      kiln::GridFor<mixed_tuple_config>, CUstream, kiln::half *,
      std::tuple<float *, std::tuple<int64_t, int32_t>>) = &launch_mixed_tuple;
  EXPECT_NE(launcher, nullptr);
  (void)launch_mixed_tuple(
      kiln::Grid(1), nullptr, static_cast<kiln::half *>(nullptr),
      std::make_tuple(buffer, std::make_tuple(int64_t{8}, int32_t{4})));
  EXPECT_EQ(chosen_,
            (std::vector<std::string>{"*fp16, (*fp32, (i64, i32)), 64"}));
}

} // namespace
