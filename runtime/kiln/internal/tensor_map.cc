#include "kiln/internal/tensor_map.h"

#include <cuda.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "kiln/internal/context.h"
#include "kiln/internal/cuda_driver.h"
#include "kiln/internal/tensor_descriptor_args.h"
#include "kiln/kernel_info.h"
#include "kiln/tensor_descriptor.h"

namespace kiln {
namespace internal {
namespace {

constexpr int64_t kMaxExtent = (int64_t{1} << 31) - 1;  // the ABI's i32
constexpr int64_t kMaxStrideBytes = int64_t{1} << 40;   // tensor maps'
constexpr int kMaxBox = 256;

// The driver's data type for an element type of signatures.
bool DataTypeOf(absl::string_view dtype, CUtensorMapDataType* type) {
  static const struct {
    const char* name;
    CUtensorMapDataType type;
  } kTypes[] = {
      {"fp16", CU_TENSOR_MAP_DATA_TYPE_FLOAT16},
      {"bf16", CU_TENSOR_MAP_DATA_TYPE_BFLOAT16},
      {"fp32", CU_TENSOR_MAP_DATA_TYPE_FLOAT32},
      {"fp64", CU_TENSOR_MAP_DATA_TYPE_FLOAT64},
      {"i32", CU_TENSOR_MAP_DATA_TYPE_INT32},
      {"u32", CU_TENSOR_MAP_DATA_TYPE_UINT32},
      {"i64", CU_TENSOR_MAP_DATA_TYPE_INT64},
      {"u64", CU_TENSOR_MAP_DATA_TYPE_UINT64},
      {"i16", CU_TENSOR_MAP_DATA_TYPE_UINT16},
      {"u16", CU_TENSOR_MAP_DATA_TYPE_UINT16},
      {"i8", CU_TENSOR_MAP_DATA_TYPE_UINT8},
      {"u8", CU_TENSOR_MAP_DATA_TYPE_UINT8},
      {"fp8e4nv", CU_TENSOR_MAP_DATA_TYPE_UINT8},
      {"fp8e5", CU_TENSOR_MAP_DATA_TYPE_UINT8},
  };
  for (const auto& entry : kTypes) {
    if (dtype == entry.name) {
      *type = entry.type;
      return true;
    }
  }
  return false;
}

bool SwizzleOf(int bytes, CUtensorMapSwizzle* swizzle) {
  switch (bytes) {
    case 0:
      *swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
      return true;
    case 32:
      *swizzle = CU_TENSOR_MAP_SWIZZLE_32B;
      return true;
    case 64:
      *swizzle = CU_TENSOR_MAP_SWIZZLE_64B;
      return true;
    case 128:
      *swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
      return true;
    default:
      return false;
  }
}

template <typename T>
std::string Dims(const T* values, int n) {
  return absl::StrCat("[", absl::StrJoin(values, values + n, ", "), "]");
}

std::string DescribeParam(const TensorDescriptorParam& param) {
  return absl::StrCat(
      "tensordesc<", param.dtype, "[",
      absl::StrJoin(param.block_shape, param.block_shape + param.rank, ","),
      "]>");
}

}  // namespace

bool operator==(const TensorMapRequest& a, const TensorMapRequest& b) {
  if (a.data_type != b.data_type || a.rank != b.rank ||
      a.address != b.address || a.swizzle != b.swizzle) {
    return false;
  }
  for (int d = 0; d < a.rank; ++d) {
    if (a.dims[d] != b.dims[d] || a.box[d] != b.box[d]) return false;
  }
  for (int d = 0; d + 1 < a.rank; ++d) {
    if (a.strides_bytes[d] != b.strides_bytes[d]) return false;
  }
  return true;
}

absl::StatusOr<TensorMapBytes> TensorMapCache::Get(
    const CudaDriver& driver, const TensorMapRequest& request) {
  {
    absl::MutexLock lock(&mu_);
    auto it = maps_.find(request);
    if (it != maps_.end()) return it->second;
  }
  if (driver.tensor_map_encode_tiled == nullptr) {
    return absl::FailedPreconditionError(
        "the CUDA driver lacks cuTensorMapEncodeTiled (CUDA 12.0 or newer "
        "is needed for kernels that read tensor maps)");
  }
  // Encoded outside the lock: a pure function of the request, so two
  // threads encoding the same one at once store equal bytes.
  CUtensorMap map;
  cuuint32_t element_strides[kMaxTensorDescriptorRank] = {1, 1, 1, 1, 1};
  CUresult result = driver.tensor_map_encode_tiled(
      &map, request.data_type, static_cast<cuuint32_t>(request.rank),
      const_cast<void*>(request.address), request.dims, request.strides_bytes,
      request.box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
      request.swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  absl::MutexLock lock(&mu_);
  ++encodes_;
  absl::Status status = CudaStatus(driver, result, "cuTensorMapEncodeTiled");
  if (!status.ok()) return status;
  static_assert(sizeof(CUtensorMap) == sizeof(TensorMapBytes),
                "a CUtensorMap is 128 bytes");
  TensorMapBytes bytes;
  std::memcpy(bytes.bytes, &map, sizeof(bytes.bytes));
  if (maps_.size() >= capacity_) maps_.clear();
  maps_.emplace(request, bytes);
  return bytes;
}

int TensorMapCache::encodes() const {
  absl::MutexLock lock(&mu_);
  return encodes_;
}

size_t TensorMapCache::size() const {
  absl::MutexLock lock(&mu_);
  return maps_.size();
}

namespace {

// Whether the current context's device predates TMA (compute capability
// below 9.0): no code it can run reads a tensor map, so a map the driver
// will not encode there is not needed either.
bool DeviceLacksTma(const CudaDriver& driver) {
  if (driver.ctx_get_device == nullptr ||
      driver.device_get_attribute == nullptr) {
    return false;
  }
  absl::StatusOr<DeviceCapability> capability = CurrentDeviceCapability(driver);
  return capability.ok() && capability->major < 9;
}

}  // namespace

absl::Status PackTensorDescriptorWith(
    absl::FunctionRef<absl::StatusOr<const CudaDriver*>()> driver,
    TensorMapCache& cache, const KernelInfo& kernel,
    const TensorDescriptorParam& param, const TensorDescriptorView& desc,
    TensorMapBytes* tensor_map, const void** base, int32_t* shape,
    int64_t* strides) {
  auto invalid = [&](auto&&... message) {
    return absl::InvalidArgumentError(
        absl::StrCat(kernel.name, ": argument ", param.name, " (",
                     DescribeParam(param), "): ", message...));
  };
  // What the kernel was compiled for.
  if (desc.rank != param.rank) {
    return invalid("the descriptor has rank ", desc.rank,
                   ", but the kernel was compiled for rank ", param.rank);
  }
  if (std::strcmp(desc.dtype, param.dtype) != 0) {
    return invalid("the descriptor holds ", desc.dtype,
                   " elements, but the kernel was compiled for ", param.dtype);
  }
  const int rank = desc.rank;
  for (int d = 0; d < rank; ++d) {
    if (desc.block_shape[d] != param.block_shape[d]) {
      return invalid("the descriptor has block shape ",
                     Dims(desc.block_shape, rank),
                     ", but the config that runs was compiled for ",
                     Dims(param.block_shape, rank),
                     "; make the descriptor with that block shape, or run a "
                     "config compiled for yours");
    }
  }
  // What tensor maps need (and upstream's TensorDescriptor asserts).
  const auto address = reinterpret_cast<uintptr_t>(desc.base);
  if (desc.base == nullptr || address % 16 != 0) {
    return invalid("the base address ", absl::Hex(address),
                   " is not 16-byte aligned (or is null)");
  }
  for (int d = 0; d < rank; ++d) {
    if (desc.shape[d] < 1 || desc.shape[d] > kMaxExtent) {
      return invalid("extent ", desc.shape[d], " of dimension ", d,
                     " is outside [1, 2^31)");
    }
  }
  if (desc.strides[rank - 1] != 1) {
    return invalid("the last stride is ", desc.strides[rank - 1],
                   ", but descriptors need the last dimension contiguous "
                   "(stride 1)");
  }
  for (int d = 0; d + 1 < rank; ++d) {
    const int64_t stride = desc.strides[d];
    if (stride < 1 || stride >= kMaxStrideBytes / desc.element_bytes ||
        (stride * desc.element_bytes) % 16 != 0) {
      return invalid("the stride of dimension ", d, " is ", stride,
                     " elements (", stride * desc.element_bytes,
                     " bytes), but descriptors need strides that are "
                     "positive multiples of 16 bytes, below 2^40 bytes");
    }
  }

  // The tensor map: encoded when the variant reads it, else zeros.
  if (param.box == nullptr) {
    std::memset(tensor_map->bytes, 0, sizeof(tensor_map->bytes));
  } else {
    TensorMapRequest request;
    if (!DataTypeOf(param.dtype, &request.data_type)) {
      return invalid("tensor maps do not hold ", param.dtype, " elements");
    }
    if (!SwizzleOf(param.swizzle_bytes, &request.swizzle)) {
      return invalid("the kernel's tensor map swizzle of ", param.swizzle_bytes,
                     " bytes is not one of 0, 32, 64, 128");
    }
    for (int d = 0; d < rank; ++d) {
      if (param.box[d] < 1 || param.box[d] > kMaxBox) {
        return invalid("the kernel's tensor map box ", Dims(param.box, rank),
                       " has a dimension outside [1, 256]");
      }
    }
    const int64_t inner_bytes =
        int64_t{param.box[rank - 1]} * desc.element_bytes;
    if (inner_bytes % 16 != 0 ||
        (param.swizzle_bytes != 0 && inner_bytes > param.swizzle_bytes)) {
      return invalid("the kernel's tensor map box ", Dims(param.box, rank),
                     " spans ", inner_bytes,
                     " bytes in its last dimension, which must be a multiple "
                     "of 16 and at most the swizzle (",
                     param.swizzle_bytes, " bytes)");
    }
    request.rank = rank;
    request.address = desc.base;
    for (int d = 0; d < rank; ++d) {  // the driver counts from the innermost
      request.dims[d] = static_cast<cuuint64_t>(desc.shape[rank - 1 - d]);
      request.box[d] = static_cast<cuuint32_t>(param.box[rank - 1 - d]);
    }
    for (int d = 0; d + 1 < rank; ++d) {
      request.strides_bytes[d] = static_cast<cuuint64_t>(
          desc.strides[rank - 2 - d] * desc.element_bytes);
    }
    absl::StatusOr<const CudaDriver*> loaded = driver();
    if (!loaded.ok()) return loaded.status();
    absl::StatusOr<TensorMapBytes> map = cache.Get(**loaded, request);
    if (!map.ok() && DeviceLacksTma(**loaded)) {
      // The config's map is for its sm_90a variants; this device runs
      // another, which ignores it.
      map = TensorMapBytes{};
    }
    if (!map.ok()) {
      return absl::Status(map.status().code(),
                          absl::StrCat(kernel.name, ": argument ", param.name,
                                       ": encoding its tensor map failed: ",
                                       map.status().message()));
    }
    *tensor_map = *map;
  }
  *base = desc.base;
  for (int d = 0; d < rank; ++d) {
    shape[d] = static_cast<int32_t>(desc.shape[d]);
    strides[d] = desc.strides[d];
  }
  return absl::OkStatus();
}

absl::Status PackTensorDescriptor(const KernelInfo& kernel,
                                  const TensorDescriptorParam& param,
                                  const TensorDescriptorView& desc,
                                  TensorMapBytes* tensor_map, const void** base,
                                  int32_t* shape, int64_t* strides) {
  // Never destroyed: launches may happen during static destruction.
  static TensorMapCache* const cache = new TensorMapCache();
  return PackTensorDescriptorWith(
      []() -> absl::StatusOr<const CudaDriver*> { return GetCudaDriver(); },
      *cache, kernel, param, desc, tensor_map, base, shape, strides);
}

}  // namespace internal
}  // namespace kiln
