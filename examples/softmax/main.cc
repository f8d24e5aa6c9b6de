// Softmax over the rows of a matrix with the Kiln-compiled softmax_kernel:
// picks the compiled config whose BLOCK covers a row, launches one program
// per row, and checks against a CPU softmax. Without a GPU it prints the
// kernel inventory and exits 0.
//
//   softmax_demo [ROWS [COLS]]   (default 1000 x 3000; COLS up to 16384)

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "examples/softmax/softmax.h"
#include "kiln/runtime.h"
#include "kiln/testing/device_buffer.h"

namespace {

// The smallest compiled BLOCK that holds a row, with the warps it was built
// with (see BUILD.bazel).
absl::StatusOr<kernels::softmax_kernel_config> ConfigForRow(int cols) {
  kernels::softmax_kernel_config config;
  if (cols <= 1024) {
    config.BLOCK = 1024;
    config.num_warps = 4;
  } else if (cols <= 4096) {
    config.BLOCK = 4096;
    config.num_warps = 8;
  } else if (cols <= 16384) {
    config.BLOCK = 16384;
    config.num_warps = 16;
  } else {
    return absl::InvalidArgumentError("rows longer than 16384 need another "
                                      "compiled BLOCK");
  }
  return config;
}

absl::Status Run(int rows, int cols) {
  absl::StatusOr<kernels::softmax_kernel_config> config = ConfigForRow(cols);
  if (!config.ok()) return config.status();
  const size_t count = static_cast<size_t>(rows) * cols;
  std::vector<float> input(count), output(count);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-5.0f, 5.0f);
  for (float& v : input) v = dist(rng);

  absl::StatusOr<kiln::DeviceBuffer> in =
      kiln::DeviceBuffer::Allocate(count * sizeof(float));
  if (!in.ok()) return in.status();
  absl::StatusOr<kiln::DeviceBuffer> out =
      kiln::DeviceBuffer::Allocate(count * sizeof(float));
  if (!out.ok()) return out.status();
  if (absl::Status s = in->CopyFromHost(input.data(), count * sizeof(float));
      !s.ok())
    return s;

  // One program per row, as softmax_kernel[(rows,)] launches it.
  absl::Status launched = kernels::launch_softmax_kernel(
      *config, kiln::Grid(rows), /*stream=*/nullptr, out->data<float>(),
      in->data<float>(), cols, cols, cols);
  if (!launched.ok()) return launched;
  if (absl::Status s = kiln::SynchronizeStream(nullptr); !s.ok()) return s;
  if (absl::Status s = out->CopyToHost(output.data(), count * sizeof(float));
      !s.ok())
    return s;

  for (int r = 0; r < rows; ++r) {
    const float* x = &input[static_cast<size_t>(r) * cols];
    double max = -INFINITY, sum = 0;
    for (int c = 0; c < cols; ++c) max = std::fmax(max, x[c]);
    for (int c = 0; c < cols; ++c) sum += std::exp(x[c] - max);
    for (int c = 0; c < cols; ++c) {
      double expected = std::exp(x[c] - max) / sum;
      double got = output[static_cast<size_t>(r) * cols + c];
      if (!(std::fabs(got - expected) <= 1e-6 + 1e-4 * expected)) {
        return absl::InternalError("row " + std::to_string(r) + " col " +
                                   std::to_string(c) + ": got " +
                                   std::to_string(got) + ", expected " +
                                   std::to_string(expected));
      }
    }
  }
  std::printf("softmax %d x %d (BLOCK=%lld, %d warps): ok\n", rows, cols,
              static_cast<long long>(config->BLOCK), config->num_warps);
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  const int rows = argc > 1 ? std::atoi(argv[1]) : 1000;
  const int cols = argc > 2 ? std::atoi(argv[2]) : 3000;
  absl::StatusOr<kiln::DeviceInfo> device = kiln::CurrentDevice();
  if (!device.ok()) {
    std::printf("%s", kiln::DescribeKernel(kernels::softmax_kernel_info()).c_str());
    std::printf("no GPU found: %s\n", device.status().ToString().c_str());
    return 0;
  }
  absl::Status status = Run(rows, cols);
  if (!status.ok()) {
    std::printf("FAILED: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
