// Internal: LaunchVariant with its driver and module cache passed in, so that
// tests can run the launch logic against a fake driver.

#ifndef KILN_INTERNAL_VARIANT_LAUNCHER_H_
#define KILN_INTERNAL_VARIANT_LAUNCHER_H_

#include "absl/status/status.h"
#include "kiln/cuda_stream.h"
#include "kiln/grid.h"
#include "kiln/internal/cuda_driver.h"
#include "kiln/internal/global_scratch.h"
#include "kiln/internal/module_cache.h"
#include "kiln/kernel_info.h"

namespace kiln {
namespace internal {

// Does what kiln::internal::LaunchVariant (kiln/internal/launch.h)
// documents, calling `driver`, loading through `cache` and taking global
// scratch buffers from `scratch` (which must use the same driver). When
// `image` is not null it receives the image launched, or null if none was
// chosen.
absl::Status LaunchVariantWith(const CudaDriver& driver, ModuleCache& cache,
                               GlobalScratchCache& scratch,
                               const KernelInfo& kernel,
                               const VariantInfo& variant, Grid grid,
                               CUstream stream, void** args,
                               const CubinImage** image = nullptr);

// `status` with its message prefixed by the kernel's and the variant's names:
// "add_kernel [x_ptr=*fp32:16, ..., num_warps=4]: <message>".
absl::Status AnnotateVariant(const KernelInfo& kernel,
                             const VariantInfo& variant,
                             const absl::Status& status);

}  // namespace internal
}  // namespace kiln

#endif  // KILN_INTERNAL_VARIANT_LAUNCHER_H_
