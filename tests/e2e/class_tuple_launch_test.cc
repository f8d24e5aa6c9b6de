// The launchers triton_kernel() builds, with the real kilnc and kiln-codegen,
// for kernels that are classes' static methods (class_kernels.py: two
// `forward`s in one target) and for a tuple parameter with a constexpr
// element (tuple_kernels.py, plain and autotuned): their names, what they
// check and which variant they choose, seen through the launch observer.
// Every launch has a grid of no programs, so nothing runs, with a GPU or
// without one; class_tuple_gpu_test.cc runs them. Labelled `e2e`.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kiln/runtime.h"
#include "tests/e2e/class_kernels.h"
#include "tests/e2e/tuned_tuple_kernels.h"
#include "tests/e2e/tuple_kernels.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace {

using ::testing::HasSubstr;

struct Launch {
  std::string kernel;
  const kiln::VariantInfo *variant;
};

void Record(const kiln::LaunchEvent &event, void *user_data) {
  static_cast<std::vector<Launch> *>(user_data)->push_back(
      {event.kernel->name, event.variant});
}

// The value `variant` was compiled with for tuple element `name`, or "run
// time" when it takes the element as an argument.
std::string CompiledValue(const kiln::VariantInfo *variant,
                          const std::string &name) {
  for (int i = 0; i < variant->num_params; ++i)
    if (variant->params[i].name == name)
      return variant->params[i].value ? variant->params[i].value : "run time";
  return "not a parameter";
}

std::string Constexpr(const kiln::VariantInfo *variant,
                      const std::string &name) {
  for (int i = 0; i < variant->num_constexprs; ++i)
    if (variant->constexprs[i].name == name)
      return variant->constexprs[i].value;
  return "not a constexpr";
}

class ClassTupleLaunchTest : public ::testing::Test {
protected:
  ClassTupleLaunchTest() { kiln::SetLaunchObserver(&Record, &launches_); }
  ~ClassTupleLaunchTest() override {
    kiln::SetLaunchObserver(nullptr, nullptr);
  }

  std::vector<Launch> launches_;
  float *const none_ = nullptr;
};

// ReLU.forward and LeakyReLU.forward, one target: each has its launcher,
// config and info named by its class, and answers to its dotted name.
TEST_F(ClassTupleLaunchTest, StaticMethodsOfOneNameGetTheirClassesNames) {
  namespace classes = e2e::classes;
  (void)classes::launch_ReLU_forward(kiln::Grid(0), nullptr, none_, none_, 0);
  (void)classes::launch_LeakyReLU_forward(classes::LeakyReLU_forward_config{},
                                          kiln::Grid(0), nullptr, none_, none_,
                                          0);
  ASSERT_EQ(launches_.size(), 2u);
  EXPECT_EQ(launches_[0].kernel, "ReLU.forward");
  EXPECT_EQ(launches_[1].kernel, "LeakyReLU.forward");
  EXPECT_STREQ(launches_[0].variant->entry, "forward");
  EXPECT_STREQ(launches_[1].variant->entry, "forward");
  EXPECT_STREQ(classes::ReLU_forward_info().name, "ReLU.forward");
  EXPECT_STREQ(classes::LeakyReLU_forward_info().name, "LeakyReLU.forward");
  absl::StatusOr<const kiln::KernelInfo *> found =
      kiln::FindKernel("LeakyReLU.forward");
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(*found, &classes::LeakyReLU_forward_info());
  EXPECT_EQ(classes::ReLU_forward_config{}.BLOCK, 1024);
}

// stride=(i32, 1) and stride=(i32, i32) share a launcher taking a
// std::array<int32_t, 2>: a unit column stride runs the variant compiled for
// it, any other the run-time one.
TEST_F(ClassTupleLaunchTest, ConstexprElementChoosesItsVariant) {
  namespace tuples = e2e::tuples;
  absl::Status (*launcher)(kiln::GridFor<tuples::scale_rows_config>, CUstream,
                           float *, float *, std::array<int32_t, 2>, int32_t,
                           float) = &tuples::launch_scale_rows;
  EXPECT_NE(launcher, nullptr);
  (void)tuples::launch_scale_rows(kiln::Grid(0), nullptr, none_, none_, {64, 1},
                                  64, 2.0f);
  (void)tuples::launch_scale_rows(kiln::Grid(0), nullptr, none_, none_, {1, 64},
                                  64, 2.0f);
  ASSERT_EQ(launches_.size(), 2u);
  EXPECT_EQ(CompiledValue(launches_[0].variant, "stride[1]"), "1");
  EXPECT_EQ(CompiledValue(launches_[1].variant, "stride[1]"), "run time");
  EXPECT_EQ(CompiledValue(launches_[1].variant, "stride[0]"), "run time");
}

// The autotuned kernel takes the tuple too: its configs' launchers check the
// constexpr element, and kiln-tune's type-erased launcher (which passes the
// elements one by one, as ParamInfo lists them) packs it.
TEST_F(ClassTupleLaunchTest, AutotunedKernelTakesTheTuple) {
  namespace tuples = e2e::tuples;
  tuples::tuned_scale_rows_config config; // the first config: BLOCK=64
  EXPECT_EQ(config.BLOCK, 64);
  absl::Status status = tuples::launch_tuned_scale_rows(
      config, kiln::Grid(0), nullptr, none_, none_, {64, 2}, 64, 1.0f);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("tuned_scale_rows: argument stride[1] is 2, but the "
                        "kernel was compiled for stride[1] = 1"));
  EXPECT_TRUE(launches_.empty());

  const kiln::KernelInfo &info = tuples::tuned_scale_rows_info();
  ASSERT_NE(info.tuning, nullptr);
  ASSERT_EQ(info.tuning->num_overloads, 1);
  EXPECT_STREQ(info.tuning->overloads[0].types,
               "*fp32, *fp32, i32, i32, i32, fp32");
  float *x = nullptr, *out = nullptr, alpha = 1.0f;
  int32_t stride0 = 64, stride1 = 1, n_cols = 64;
  const void *args[] = {&x, &out, &stride0, &stride1, &n_cols, &alpha};
  EXPECT_TRUE(info.tuning->overloads[0]
                  .launch(1, kiln::Grid(0), nullptr, args)
                  .code() != absl::StatusCode::kInvalidArgument);
  ASSERT_EQ(launches_.size(), 1u);
  EXPECT_EQ(Constexpr(launches_[0].variant, "BLOCK"), "256");
  EXPECT_EQ(CompiledValue(launches_[0].variant, "stride[1]"), "1");

  // With a grid of the config and no tuning table: the first config.
  (void)tuples::launch_tuned_scale_rows(
      [](const tuples::tuned_scale_rows_config &) { return kiln::Grid(0); },
      nullptr, none_, none_, {64, 1}, 64, 1.0f);
  ASSERT_EQ(launches_.size(), 2u);
  EXPECT_EQ(Constexpr(launches_[1].variant, "BLOCK"), "64");
}

} // namespace
