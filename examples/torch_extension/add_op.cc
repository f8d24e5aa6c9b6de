// A PyTorch custom operator that runs Kiln's vector-add kernel
// (examples/vector_add/add.py, compiled ahead of time) on torch tensors:
//
//   torch.ops.load_library("libkiln_torch_add.so")
//   out = torch.ops.kiln_example.add(x, y)   # x, y: CUDA, fp32 or fp16
//
// It shows the three things a torch extension needs from a generated
// launcher: tensors' data_ptr<T>() passed as they are (at::Half is
// c10::Half, which the launcher's overloads take without a cast), torch's
// current stream (a cudaStream_t, the same handle as a CUstream), and the
// launcher's absl::Status turned into a torch error. The operator is
// registered with TORCH_LIBRARY, so it needs neither Python's nor pybind11's
// headers.

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <cstdint>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "examples/vector_add/add.h"  // generated: kernels::launch_add_kernel

namespace {

at::Tensor Add(const at::Tensor& x, const at::Tensor& y) {
  TORCH_CHECK(x.is_cuda() && y.is_cuda(), "kiln_example::add: CUDA tensors only");
  TORCH_CHECK(x.device() == y.device(), "kiln_example::add: x and y on different devices");
  TORCH_CHECK(x.scalar_type() == y.scalar_type(), "kiln_example::add: x is ", x.scalar_type(),
              ", y is ", y.scalar_type());
  TORCH_CHECK(x.sizes() == y.sizes(), "kiln_example::add: shapes ", x.sizes(), " and ", y.sizes());
  TORCH_CHECK(x.numel() <= std::numeric_limits<int32_t>::max(),
              "kiln_example::add: more than 2^31-1 elements");
  // The kernel reads flat arrays: make both contiguous (a no-op when they are).
  const at::Tensor xc = x.contiguous();
  const at::Tensor yc = y.contiguous();
  at::Tensor out = at::empty_like(xc);
  const int32_t n = static_cast<int32_t>(xc.numel());
  if (n == 0) return out;

  // The launcher runs the kernel in the stream's context; the guard makes
  // torch's current stream the one of x's device.
  const c10::cuda::CUDAGuard guard(xc.device());
  const CUstream stream = static_cast<CUstream>(at::cuda::getCurrentCUDAStream().stream());

  // One program per BLOCK elements, BLOCK being that of the variant that runs
  // (1024 for fp32, 2048 for fp16: examples/vector_add/BUILD.bazel).
  const auto grid = [n](const kernels::add_kernel_config& config) {
    return kiln::Grid(kiln::cdiv(n, config.BLOCK));
  };
  absl::Status status;
  switch (xc.scalar_type()) {
    case at::kFloat:
      status = kernels::launch_add_kernel(grid, stream,
                                          xc.data_ptr<float>(), yc.data_ptr<float>(),
                                          out.data_ptr<float>(), n);
      break;
    case at::kHalf:  // at::Half* goes straight in: no reinterpret_cast.
      status = kernels::launch_add_kernel(grid, stream,
                                          xc.data_ptr<at::Half>(), yc.data_ptr<at::Half>(),
                                          out.data_ptr<at::Half>(), n);
      break;
    default:
      TORCH_CHECK(false, "kiln_example::add: no variant for ", xc.scalar_type(),
                  " (built: Float, Half)");
  }
  TORCH_CHECK(status.ok(), "kiln_example::add: ", std::string(status.message()));
  return out;
}

}  // namespace

TORCH_LIBRARY(kiln_example, m) { m.def("add(Tensor x, Tensor y) -> Tensor"); }

TORCH_LIBRARY_IMPL(kiln_example, CUDA, m) { m.impl("add", &Add); }
