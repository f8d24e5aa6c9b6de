// Device memory for tests, examples and benchmarks (the kiln_testing
// library, not the runtime: programs bring their own allocator): allocate,
// fill, copy.

#ifndef KILN_TESTING_DEVICE_BUFFER_H_
#define KILN_TESTING_DEVICE_BUFFER_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace kiln {

// An allocation of global memory on the current context's device, freed when
// the buffer is destroyed. Move-only. The copies are synchronous, like
// cuMemcpyHtoD/DtoH: fine for preparing inputs and checking outputs, not meant
// for overlapping transfers with work.
class DeviceBuffer {
 public:
  // Allocates `bytes` bytes (uninitialized) on the device of the calling
  // thread's context, or of device 0's primary context when it has none.
  // Errors when there is no driver or GPU, or not enough memory.
  static absl::StatusOr<DeviceBuffer> Allocate(size_t bytes);

  // An empty buffer: no memory, size 0.
  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  // The device address as a typed pointer, for passing to launchers. Not
  // dereferenceable on the host.
  template <typename T>
  T* data() const {
    return reinterpret_cast<T*>(static_cast<uintptr_t>(address_));
  }
  // The size in bytes.
  size_t size() const { return size_; }

  // Copies `bytes` bytes from host memory at `source` to the buffer, starting
  // `offset` bytes in. InvalidArgument when that overruns the buffer.
  absl::Status CopyFromHost(const void* source, size_t bytes,
                            size_t offset = 0);
  // Copies `bytes` bytes starting `offset` bytes into the buffer to host
  // memory at `destination`. Waits for work on the default stream first.
  absl::Status CopyToHost(void* destination, size_t bytes,
                          size_t offset = 0) const;
  // Sets every byte of the buffer to `value`.
  absl::Status Fill(uint8_t value);

 private:
  DeviceBuffer(uint64_t address, size_t size)
      : address_(address), size_(size) {}

  uint64_t address_ = 0;
  size_t size_ = 0;
};

}  // namespace kiln

#endif  // KILN_TESTING_DEVICE_BUFFER_H_
