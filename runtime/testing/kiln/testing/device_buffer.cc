#include "kiln/testing/device_buffer.h"

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "kiln/internal/context.h"
#include "kiln/internal/cuda_driver.h"

namespace kiln {
namespace {

using internal::CudaDriver;
using internal::CudaStatus;

// The driver, with a current context on the calling thread.
absl::StatusOr<const CudaDriver*> DriverWithContext() {
  const absl::StatusOr<const CudaDriver*>& loaded = internal::GetCudaDriver();
  if (!loaded.ok()) return loaded.status();
  absl::StatusOr<CUcontext> context =
      internal::CurrentOrPrimaryContext(**loaded);
  if (!context.ok()) return context.status();
  return *loaded;
}

absl::Status CheckRange(size_t offset, size_t bytes, size_t size) {
  if (offset > size || bytes > size - offset) {
    return absl::InvalidArgumentError(
        absl::StrCat("copy of ", bytes, " bytes at offset ", offset,
                     " overruns a device buffer of ", size, " bytes"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<DeviceBuffer> DeviceBuffer::Allocate(size_t bytes) {
  absl::StatusOr<const CudaDriver*> d = DriverWithContext();
  if (!d.ok()) return d.status();
  if (bytes == 0) return DeviceBuffer();
  CUdeviceptr address = 0;
  absl::Status status = CudaStatus(**d, (*d)->mem_alloc(&address, bytes),
                                   absl::StrCat("cuMemAlloc(", bytes, ")"));
  if (!status.ok()) return status;
  return DeviceBuffer(address, bytes);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : address_(std::exchange(other.address_, 0)),
      size_(std::exchange(other.size_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    DeviceBuffer old(std::move(*this));
    address_ = std::exchange(other.address_, 0);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (address_ == 0) return;
  // An allocation exists, so the driver loaded.
  const CudaDriver& d = **internal::GetCudaDriver();
  d.mem_free(static_cast<CUdeviceptr>(address_));
}

absl::Status DeviceBuffer::CopyFromHost(const void* source, size_t bytes,
                                        size_t offset) {
  absl::Status status = CheckRange(offset, bytes, size_);
  if (!status.ok() || bytes == 0) return status;
  absl::StatusOr<const CudaDriver*> d = DriverWithContext();
  if (!d.ok()) return d.status();
  return CudaStatus(**d, (*d)->memcpy_htod(address_ + offset, source, bytes),
                    "cuMemcpyHtoD");
}

absl::Status DeviceBuffer::CopyToHost(void* destination, size_t bytes,
                                      size_t offset) const {
  absl::Status status = CheckRange(offset, bytes, size_);
  if (!status.ok() || bytes == 0) return status;
  absl::StatusOr<const CudaDriver*> d = DriverWithContext();
  if (!d.ok()) return d.status();
  return CudaStatus(**d,
                    (*d)->memcpy_dtoh(destination, address_ + offset, bytes),
                    "cuMemcpyDtoH");
}

absl::Status DeviceBuffer::Fill(uint8_t value) {
  if (size_ == 0) return absl::OkStatus();
  absl::StatusOr<const CudaDriver*> d = DriverWithContext();
  if (!d.ok()) return d.status();
  return CudaStatus(**d, (*d)->memset_d8(address_, value, size_), "cuMemsetD8");
}

}  // namespace kiln
