// The GPU that the runtime launches on, for programs and tests that need to
// know it or to check that one is there.

#ifndef KILN_DEVICE_H_
#define KILN_DEVICE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kiln/cuda_stream.h"

namespace kiln {

// A CUDA device and the driver that runs it.
struct DeviceInfo {
  // The device's ordinal, as cuDeviceGet numbers them.
  int ordinal = 0;
  // The marketing name, e.g. "NVIDIA H100 80GB HBM3".
  std::string name;
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  int multiprocessors = 0;
  // The driver's CUDA version, e.g. 13000 for 13.0.
  int driver_version = 0;

  // The plain architecture name of the compute capability, e.g. "sm_90".
  std::string arch() const;
};

// Loads the driver if needed, makes sure the calling thread has a current
// context (device 0's primary context when it has none, as launches do) and
// describes that context's device. An error Status, never a crash, when there
// is no driver or no GPU: this is the call that tells a program whether it can
// launch anything.
absl::StatusOr<DeviceInfo> CurrentDevice();

// Blocks until all work queued on `stream` has finished; returns the first
// error of that work, if any.
absl::Status SynchronizeStream(CUstream stream);

}  // namespace kiln

#endif  // KILN_DEVICE_H_
