// Generated launchers take pointers to CUDA's and torch's 16- and 8-bit
// float types without casts (docs/usage.md, "Element types"): compiled with
// the generated code of kiln_codegen_compile_check, never run. CUDA's real
// headers; torch's types by stand-ins with their names and layouts (torch's
// headers are not a build dependency).

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>

#include "absl/status/status.h"
#include "codegen_check/lib.h"

namespace c10 {
struct Half {
  uint16_t x;
};
struct BFloat16 {
  uint16_t x;
};
struct Float8_e4m3fn {
  uint8_t x;
};
struct Float8_e5m2 {
  uint8_t x;
};
} // namespace c10

namespace kiln_test {

absl::Status LaunchWithCudaTypes(__half *a, __half *b, float *c,
                                 __nv_bfloat16 *x, __nv_fp8_e4m3 *y) {
  absl::Status status = generated::launch_strided_matmul(
      kiln::Grid(1), nullptr, a, b, c, 16, 16, 16, 16, 1, 16, 1, 16, 1);
  if (!status.ok())
    return status;
  return generated::launch_scale_kernel(kiln::Grid(1), nullptr, x, y, 2.0f,
                                        true, int64_t{16}, 16);
}

absl::Status LaunchWithTorchTypes(c10::Half *a, c10::Half *b, float *c,
                                  c10::BFloat16 *x, c10::Float8_e4m3fn *y) {
  absl::Status status = generated::launch_strided_matmul(
      kiln::Grid(1), nullptr, a, b, c, 16, 16, 16, 16, 1, 16, 1, 16, 1);
  if (!status.ok())
    return status;
  return generated::launch_scale_kernel(kiln::Grid(1), nullptr, x, y, 2.0f,
                                        true, int64_t{16}, 16);
}

} // namespace kiln_test
