// Kernels that are classes' static methods and a tuple parameter with a
// constexpr element on a real GPU (class_kernels.py, tuple_kernels.py, built
// by triton_kernel()): both classes' `forward`s, row scaling with a unit
// column stride (the variant compiled for it) and a transposed one (the
// run-time element), and the autotuned kernel, each result compared with the
// CPU's. Labelled `gpu`; every test skips, saying why, without a driver or
// GPU. class_tuple_launch_test.cc checks the launchers without one.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "kiln/runtime.h"
#include "kiln/testing/device_buffer.h"
#include "tests/e2e/class_kernels.h"
#include "tests/e2e/tuned_tuple_kernels.h"
#include "tests/e2e/tuple_kernels.h"
#include "gtest/gtest.h"

namespace {

void Record(const kiln::LaunchEvent &event, void *user_data) {
  *static_cast<const kiln::VariantInfo **>(user_data) = event.variant;
}

class ClassTupleGpuTest : public ::testing::Test {
protected:
  void SetUp() override {
    absl::StatusOr<kiln::DeviceInfo> device = kiln::CurrentDevice();
    if (!device.ok()) {
      GTEST_SKIP() << "SKIPPED: no GPU or CUDA driver: " << device.status();
    }
  }

  static kiln::DeviceBuffer Upload(const std::vector<float> &host) {
    kiln::DeviceBuffer buffer = *kiln::DeviceBuffer::Allocate(host.size() * 4);
    EXPECT_TRUE(buffer.CopyFromHost(host.data(), host.size() * 4).ok());
    return buffer;
  }

  static std::vector<float> Download(const kiln::DeviceBuffer &buffer,
                                     size_t n) {
    EXPECT_TRUE(kiln::SynchronizeStream(nullptr).ok());
    std::vector<float> host(n);
    EXPECT_TRUE(buffer.CopyToHost(host.data(), n * 4).ok());
    return host;
  }
};

TEST_F(ClassTupleGpuTest, BothClassesForwardsRun) {
  const int n = 3000;
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i)
    x[i] = static_cast<float>(i % 17 - 8) / 4; // exact in fp32
  kiln::DeviceBuffer dx = Upload(x);
  kiln::DeviceBuffer relu = *kiln::DeviceBuffer::Allocate(n * 4);
  kiln::DeviceBuffer leaky = *kiln::DeviceBuffer::Allocate(n * 4);
  const kiln::Grid grid(kiln::cdiv(n, 1024));
  EXPECT_TRUE(e2e::classes::launch_ReLU_forward(grid, nullptr, dx.data<float>(),
                                                relu.data<float>(), n)
                  .ok());
  EXPECT_TRUE(e2e::classes::launch_LeakyReLU_forward(
                  grid, nullptr, dx.data<float>(), leaky.data<float>(), n)
                  .ok());
  std::vector<float> r = Download(relu, n), l = Download(leaky, n);
  int wrong = 0;
  for (int i = 0; i < n; ++i) {
    float want_relu = x[i] > 0 ? x[i] : 0.0f;
    float want_leaky = x[i] > 0 ? x[i] : x[i] * 0.125f;
    if ((r[i] != want_relu || l[i] != want_leaky) && ++wrong <= 5)
      ADD_FAILURE() << "x[" << i << "] = " << x[i] << ": ReLU " << r[i]
                    << ", LeakyReLU " << l[i];
  }
  EXPECT_EQ(wrong, 0);
}

// out[r, c] = alpha * x[r, c] for x stored with `stride`; returns the
// variant that ran after checking the result.
template <typename Launch>
const kiln::VariantInfo *ScaleRows(int rows, int cols, bool transposed,
                                   Launch launch) {
  std::vector<float> x(rows * cols);
  for (int i = 0; i < rows * cols; ++i)
    x[i] = static_cast<float>(i % 23);
  const std::array<int32_t, 2> stride = transposed
                                            ? std::array<int32_t, 2>{1, rows}
                                            : std::array<int32_t, 2>{cols, 1};
  kiln::DeviceBuffer dx = *kiln::DeviceBuffer::Allocate(x.size() * 4);
  EXPECT_TRUE(dx.CopyFromHost(x.data(), x.size() * 4).ok());
  kiln::DeviceBuffer dout = *kiln::DeviceBuffer::Allocate(x.size() * 4);
  const kiln::VariantInfo *ran = nullptr;
  kiln::SetLaunchObserver(&Record, &ran);
  absl::Status status = launch(dx.data<float>(), dout.data<float>(), stride);
  kiln::SetLaunchObserver(nullptr, nullptr);
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_TRUE(kiln::SynchronizeStream(nullptr).ok());
  std::vector<float> out(x.size());
  EXPECT_TRUE(dout.CopyToHost(out.data(), out.size() * 4).ok());
  int wrong = 0;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      float want = 3.0f * x[r * stride[0] + c * stride[1]];
      if (out[r * cols + c] != want && ++wrong <= 5)
        ADD_FAILURE() << "out[" << r << ", " << c << "] = " << out[r * cols + c]
                      << ", expected " << want;
    }
  EXPECT_EQ(wrong, 0);
  return ran;
}

std::string StrideValue(const kiln::VariantInfo *variant) {
  for (int i = 0; variant != nullptr && i < variant->num_params; ++i)
    if (std::string(variant->params[i].name) == "stride[1]")
      return variant->params[i].value ? variant->params[i].value : "run time";
  return "none ran";
}

TEST_F(ClassTupleGpuTest, UnitColumnStrideRunsItsVariant) {
  for (bool transposed : {false, true}) {
    const int rows = 7, cols = 300;
    const kiln::VariantInfo *ran =
        ScaleRows(rows, cols, transposed,
                  [&](float *x, float *out, std::array<int32_t, 2> stride) {
                    return e2e::tuples::launch_scale_rows(
                        kiln::Grid(rows), nullptr, x, out, stride, cols, 3.0f);
                  });
    EXPECT_EQ(StrideValue(ran), transposed ? "run time" : "1");
  }
}

TEST_F(ClassTupleGpuTest, AutotunedKernelWithATuple) {
  const int rows = 5, cols = 1000;
  for (int64_t block : {64, 256}) {
    e2e::tuples::tuned_scale_rows_config config;
    config.BLOCK = block;
    config.num_warps = block == 64 ? 2 : 4;
    const kiln::VariantInfo *ran = ScaleRows(
        rows, cols, /*transposed=*/false,
        [&](float *x, float *out, std::array<int32_t, 2> stride) {
          return e2e::tuples::launch_tuned_scale_rows(
              config, kiln::Grid(rows), nullptr, x, out, stride, cols, 3.0f);
        });
    EXPECT_EQ(StrideValue(ran), "1");
  }
}

} // namespace
