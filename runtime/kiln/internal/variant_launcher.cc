#include "kiln/internal/variant_launcher.h"

#include <cuda.h>

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "kiln/dependent_launch.h"
#include "kiln/internal/context.h"
#include "kiln/internal/cuda_driver.h"
#include "kiln/internal/global_scratch.h"
#include "kiln/internal/module_cache.h"
#include "kiln/kernel_info.h"

namespace kiln {
namespace internal {
namespace {

// The warps a launch of `image` starts: the ones its kernel was compiled
// for, and a warp-specialized image's producer warps.
int WarpsOf(const VariantInfo& variant, const CubinImage& image) {
  return (image.launch_warps > 0 ? image.launch_warps : variant.num_warps) +
         image.producer_warps;
}

constexpr unsigned kThreadsPerWarp = 32;

// Launches through cuLaunchKernelEx: a cluster of `num_ctas` programs along x
// per Triton program, as upstream Triton does for num_ctas > 1, and with
// programmatic stream serialization inside a ProgrammaticDependentLaunch
// scope.
absl::Status LaunchEx(const CudaDriver& d, const VariantInfo& variant,
                      const LoadedFunction& f, Grid grid, CUstream stream,
                      void** args, bool programmatic) {
  if (d.launch_kernel_ex == nullptr) {
    return absl::FailedPreconditionError(
        variant.num_ctas > 1
            ? "num_ctas > 1 needs cuLaunchKernelEx, which this CUDA driver "
              "lacks"
            : "programmatic dependent launch needs cuLaunchKernelEx, which "
              "this CUDA driver lacks");
  }
  CUlaunchAttribute attributes[3] = {};
  unsigned count = 0;
  if (variant.num_ctas > 1) {
    attributes[count].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attributes[count].value.clusterDim.x =
        static_cast<unsigned>(variant.num_ctas);
    attributes[count].value.clusterDim.y = 1;
    attributes[count].value.clusterDim.z = 1;
    ++count;
    attributes[count].id =
        CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE;
    attributes[count].value.clusterSchedulingPolicyPreference =
        CU_CLUSTER_SCHEDULING_POLICY_SPREAD;
    ++count;
  }
  if (programmatic) {
    attributes[count].id =
        CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attributes[count].value.programmaticStreamSerializationAllowed = 1;
    ++count;
  }
  CUlaunchConfig config = {};
  config.gridDimX = grid.x * static_cast<unsigned>(variant.num_ctas);
  config.gridDimY = grid.y;
  config.gridDimZ = grid.z;
  config.blockDimX =
      kThreadsPerWarp * static_cast<unsigned>(WarpsOf(variant, *f.image));
  config.blockDimY = 1;
  config.blockDimZ = 1;
  config.sharedMemBytes = static_cast<unsigned>(f.image->shared_bytes);
  config.hStream = stream;
  config.attrs = attributes;
  config.numAttrs = count;
  return CudaStatus(d, d.launch_kernel_ex(&config, f.function, args, nullptr),
                    "cuLaunchKernelEx");
}

// The global scratch buffer of a launch of `image` over `grid` on `stream`:
// the image's bytes per program for each of its programs (CTAs), or null when
// the image uses none.
absl::StatusOr<CUdeviceptr> GlobalScratchFor(GlobalScratchCache& scratch,
                                             uint64_t context_key,
                                             const CubinImage& image,
                                             const VariantInfo& variant,
                                             Grid grid, CUstream stream) {
  if (image.global_scratch_bytes <= 0) return 0;
  // The grid is unchecked here (the launch checks it), so the product may
  // overflow.
  uint64_t bytes = static_cast<uint64_t>(image.global_scratch_bytes);
  for (const uint64_t factor :
       {uint64_t{grid.x}, static_cast<uint64_t>(variant.num_ctas),
        uint64_t{grid.y}, uint64_t{grid.z}}) {
    if (__builtin_mul_overflow(bytes, factor, &bytes)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the global scratch buffer (", image.global_scratch_bytes,
          " bytes per program) of a grid of (", grid.x, ", ", grid.y, ", ",
          grid.z, ") programs overflows 64 bits"));
    }
  }
  return scratch.Get(context_key, stream, bytes);
}

}  // namespace

absl::Status AnnotateVariant(const KernelInfo& kernel,
                             const VariantInfo& variant,
                             const absl::Status& status) {
  return absl::Status(
      status.code(),
      absl::StrCat(kernel.name, " [", variant.name, "]: ", status.message()));
}

absl::Status LaunchVariantWith(const CudaDriver& driver, ModuleCache& cache,
                               GlobalScratchCache& scratch,
                               const KernelInfo& kernel,
                               const VariantInfo& variant, Grid grid,
                               CUstream stream, void** args,
                               const CubinImage** image) {
  if (image != nullptr) *image = nullptr;
  if (grid.x == 0 || grid.y == 0 || grid.z == 0) return absl::OkStatus();

  // The kernel is loaded into and launched in the stream's context, which
  // need not be the thread's current one.
  const StreamContextScope stream_context(driver, stream);
  if (!stream_context.status().ok()) {
    return AnnotateVariant(kernel, variant, stream_context.status());
  }
  const CUcontext context = stream_context.context();
  const uint64_t key = cache.ContextKey(context);
  const LoadedFunction* f = cache.Lookup(variant, key);
  if (f == nullptr) {
    absl::StatusOr<const LoadedFunction*> loaded =
        cache.Load(variant, context, key);
    if (!loaded.ok()) return AnnotateVariant(kernel, variant, loaded.status());
    f = *loaded;
  }
  if (image != nullptr) *image = f->image;

  // The hidden parameter's value; the launch reads it through args, so it
  // lives until the launch is issued.
  CUdeviceptr scratch_pointer = 0;
  if (variant.global_scratch_arg >= 0) {
    absl::StatusOr<CUdeviceptr> pointer =
        GlobalScratchFor(scratch, key, *f->image, variant, grid, stream);
    if (!pointer.ok()) {
      return AnnotateVariant(kernel, variant, pointer.status());
    }
    scratch_pointer = *pointer;
    args[variant.global_scratch_arg] = &scratch_pointer;
  }

  const bool programmatic = ProgrammaticDependentLaunch::active();
  if (variant.num_ctas > 1 || programmatic) {
    absl::Status status =
        LaunchEx(driver, variant, *f, grid, stream, args, programmatic);
    if (!status.ok()) return AnnotateVariant(kernel, variant, status);
    return status;
  }
  const CUresult result = driver.launch_kernel(
      f->function, grid.x, grid.y, grid.z,
      kThreadsPerWarp * static_cast<unsigned>(WarpsOf(variant, *f->image)), 1,
      1, static_cast<unsigned>(f->image->shared_bytes), stream, args, nullptr);
  if (result != CUDA_SUCCESS) {
    return AnnotateVariant(kernel, variant,
                           CudaStatus(driver, result, "cuLaunchKernel"));
  }
  return absl::OkStatus();
}

}  // namespace internal
}  // namespace kiln
