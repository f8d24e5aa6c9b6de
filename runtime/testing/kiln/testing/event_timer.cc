#include "kiln/testing/event_timer.h"

#include <cuda.h>

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kiln/internal/context.h"
#include "kiln/internal/cuda_driver.h"

namespace kiln {

using internal::CudaDriver;
using internal::CudaStatus;

absl::StatusOr<EventTimer> EventTimer::Create() {
  const absl::StatusOr<const CudaDriver*>& loaded = internal::GetCudaDriver();
  if (!loaded.ok()) return loaded.status();
  const CudaDriver& d = **loaded;
  absl::StatusOr<CUcontext> context = internal::CurrentOrPrimaryContext(d);
  if (!context.ok()) return context.status();
  CUevent start = nullptr;
  CUevent stop = nullptr;
  absl::Status status =
      CudaStatus(d, d.event_create(&start, CU_EVENT_DEFAULT), "cuEventCreate");
  if (!status.ok()) return status;
  status =
      CudaStatus(d, d.event_create(&stop, CU_EVENT_DEFAULT), "cuEventCreate");
  if (!status.ok()) {
    d.event_destroy(start);
    return status;
  }
  return EventTimer(start, stop);
}

EventTimer::EventTimer(EventTimer&& other) noexcept
    : start_(std::exchange(other.start_, nullptr)),
      stop_(std::exchange(other.stop_, nullptr)) {}

EventTimer& EventTimer::operator=(EventTimer&& other) noexcept {
  if (this != &other) {
    EventTimer old(std::move(*this));
    start_ = std::exchange(other.start_, nullptr);
    stop_ = std::exchange(other.stop_, nullptr);
  }
  return *this;
}

EventTimer::~EventTimer() {
  if (start_ == nullptr) return;
  // Events exist, so the driver loaded.
  const CudaDriver& d = **internal::GetCudaDriver();
  d.event_destroy(start_);
  d.event_destroy(stop_);
}

absl::Status EventTimer::Start(CUstream stream) {
  const CudaDriver& d = **internal::GetCudaDriver();
  return CudaStatus(d, d.event_record(start_, stream), "cuEventRecord");
}

absl::Status EventTimer::Stop(CUstream stream) {
  const CudaDriver& d = **internal::GetCudaDriver();
  return CudaStatus(d, d.event_record(stop_, stream), "cuEventRecord");
}

absl::StatusOr<float> EventTimer::ElapsedMilliseconds() const {
  const CudaDriver& d = **internal::GetCudaDriver();
  absl::Status status =
      CudaStatus(d, d.event_synchronize(stop_), "cuEventSynchronize");
  if (!status.ok()) return status;
  float milliseconds = 0;
  status = CudaStatus(d, d.event_elapsed_time(&milliseconds, start_, stop_),
                      "cuEventElapsedTime");
  if (!status.ok()) return status;
  return milliseconds;
}

}  // namespace kiln
