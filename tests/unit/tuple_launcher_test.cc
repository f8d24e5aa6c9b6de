// Generated launchers of kernels with tuple parameters (testdata/codegen's
// tuple_strides, mixed_tuple, tuple_constexpr, tuple_fast_path and
// tuned_tuple, embedded by kiln_embed_plain): the tuple arrives as a
// std::array (or std::tuple), its `:1` and constexpr elements are checked,
// a constexpr element chooses its variant, and its `:16` elements choose the
// aligned variant; an autotuned kernel's type-erased launcher packs the
// tuple. Also two classes' static methods of one name (class_gelu_forward,
// class_relu_forward). The launch observer reports the variant chosen even
// where no driver loads, so no GPU is needed.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "embed_check/plain.h"
#include "kiln/introspection.h"
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
        std::string(event.kernel->name) + ": " + event.variant->signature);
  }

  std::vector<std::string> chosen_;
};

alignas(16) float buffer[64];

TEST_F(TupleLauncherTest, AlignedElementsChooseTheAlignedVariant) {
  (void)launch_tuple_strides(kiln::Grid(1), nullptr, buffer,
                             std::array<int32_t, 3>{64, 32, 1}, 128);
  (void)launch_tuple_strides(kiln::Grid(1), nullptr, buffer, {64, 33, 1}, 128);
  EXPECT_EQ(chosen_,
            (std::vector<std::string>{
                "tuple_strides: *fp32:16, (i32:16, i32:16, i32:1), i32:16, 128",
                "tuple_strides: *fp32, (i32, i32, i32:1), i32, 128"}));
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
  EXPECT_EQ(chosen_, (std::vector<std::string>{
                         "mixed_tuple: *fp16, (*fp32, (i64, i32)), 64"}));
}

TEST_F(TupleLauncherTest, ConstexprElementsAreChecked) {
  // The launcher takes the whole tuple, constexpr slots included.
  absl::Status (*launcher)(kiln::GridFor<tuple_constexpr_config>, CUstream,
                           float *, std::array<int32_t, 3>,
                           std::tuple<float *, std::nullptr_t, bool>) =
      &launch_tuple_constexpr;
  EXPECT_NE(launcher, nullptr);
  absl::Status status =
      launch_tuple_constexpr(kiln::Grid(1), nullptr, buffer, {64, 2, 16},
                             std::make_tuple(buffer, nullptr, true));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("tuple_constexpr: argument stride[1] is 2, but "
                              "the kernel was compiled for stride[1] = 1"),
                    HasSubstr("a constexpr element of its specialization")));
  status = launch_tuple_constexpr(tuple_constexpr_config{}, kiln::Grid(1),
                                  nullptr, buffer, {64, 1, 16},
                                  std::make_tuple(buffer, nullptr, false));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("argument opts[2] is False, but the kernel was "
                        "compiled for opts[2] = True"));
  EXPECT_TRUE(chosen_.empty());
  // The compiled values pass, and alignment still chooses the variant.
  (void)launch_tuple_constexpr(kiln::Grid(1), nullptr, buffer, {64, 1, 16},
                               std::make_tuple(buffer, nullptr, true));
  (void)launch_tuple_constexpr(kiln::Grid(1), nullptr, buffer, {64, 1, 17},
                               std::make_tuple(buffer, nullptr, true));
  EXPECT_EQ(
      chosen_,
      (std::vector<std::string>{
          "tuple_constexpr: *fp32:16, (i32:16, 1, i32:16), (*fp32:16, None, "
          "True), 64",
          "tuple_constexpr: *fp32, (i32, 1, i32), (*fp32, None, True), 64"}));
}

TEST_F(TupleLauncherTest, ConstexprElementChoosesItsVariant) {
  (void)launch_tuple_fast_path(kiln::Grid(1), nullptr, buffer, {8, 1});
  (void)launch_tuple_fast_path(kiln::Grid(1), nullptr, buffer, {8, 3});
  EXPECT_EQ(chosen_, (std::vector<std::string>{
                         "tuple_fast_path: *fp32, (i32, 1), 32",
                         "tuple_fast_path: *fp32, (i32, i32), 32"}));
}

// kiln-tune's type-erased launcher takes the elements one by one (as
// ParamInfo lists them, the constexpr one too) and packs the tuple.
TEST_F(TupleLauncherTest, TunedLaunchPacksTheTuple) {
  const kiln::KernelInfo &info = tuned_tuple_info();
  ASSERT_NE(info.tuning, nullptr);
  ASSERT_EQ(info.tuning->num_overloads, 1);
  const kiln::VariantInfo &variant = info.variants[0];
  ASSERT_EQ(variant.num_params, 5);
  EXPECT_STREQ(variant.params[3].name, "stride[1]");
  EXPECT_STREQ(variant.params[3].value, "1");
  float *x = buffer, *out = buffer;
  int32_t stride0 = 64, stride1 = 1, n = 1000;
  const void *args[] = {&x, &out, &stride0, &stride1, &n};
  (void)info.tuning->overloads[0].launch(1, kiln::Grid(1), nullptr, args);
  stride1 = 2;
  absl::Status status =
      info.tuning->overloads[0].launch(0, kiln::Grid(1), nullptr, args);
  EXPECT_THAT(status.message(), HasSubstr("argument stride[1] is 2"));
  EXPECT_EQ(chosen_, (std::vector<std::string>{
                         "tuned_tuple: *fp32, *fp32, (i32, 1), i32, 1024"}));
  // The tuned launch with a grid of the config passes the tuple on.
  chosen_.clear();
  (void)launch_tuned_tuple(
      [](const tuned_tuple_config &c) { return kiln::Grid(c.BLOCK); }, nullptr,
      buffer, buffer, {64, 1}, 1000);
  EXPECT_EQ(chosen_, (std::vector<std::string>{
                         "tuned_tuple: *fp32, *fp32, (i32, 1), i32, 256"}));
}

// Two classes' static methods named `forward` (GELU.forward, ReLU.forward)
// get launchers named by their classes; KernelInfo has the dotted names.
TEST_F(TupleLauncherTest, StaticMethodsLaunchUnderTheirClassesNames) {
  (void)launch_GELU_forward(kiln::Grid(1), nullptr, buffer, buffer, 64);
  (void)launch_ReLU_forward(ReLU_forward_config{}, kiln::Grid(1), nullptr,
                            buffer, buffer, 64);
  EXPECT_EQ(chosen_,
            (std::vector<std::string>{"GELU.forward: *fp32, *fp32, i32, 128",
                                      "ReLU.forward: *fp32, *fp32, i32, 256"}));
  EXPECT_STREQ(GELU_forward_info().name, "GELU.forward");
  absl::StatusOr<const kiln::KernelInfo *> found =
      kiln::FindKernel("ReLU.forward");
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(*found, &ReLU_forward_info());
  EXPECT_STREQ(ReLU_forward_info().variants[0].entry, "forward");
}

} // namespace
