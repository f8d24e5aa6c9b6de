// GPU-side timing of work on a stream, for tests and benchmarks (the
// kiln_testing library, not the runtime).

#ifndef KILN_TESTING_EVENT_TIMER_H_
#define KILN_TESTING_EVENT_TIMER_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kiln/cuda_stream.h"

// The opaque event object of the CUDA driver API (CUevent is a pointer to it).
struct CUevent_st;

namespace kiln {

// Measures the GPU time between two points of a stream with a pair of CUDA
// events: Start, queue work, Stop, then ElapsedMilliseconds. Reusable.
// Move-only.
class EventTimer {
 public:
  // Creates the two events in the calling thread's context (device 0's
  // primary context when it has none). Errors when there is no driver or GPU.
  static absl::StatusOr<EventTimer> Create();

  EventTimer(EventTimer&& other) noexcept;
  EventTimer& operator=(EventTimer&& other) noexcept;
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  ~EventTimer();

  // Records the start event on `stream`.
  absl::Status Start(CUstream stream);
  // Records the stop event on `stream`.
  absl::Status Stop(CUstream stream);
  // Waits for the stop event and returns the milliseconds between the two
  // events (resolution about half a microsecond).
  absl::StatusOr<float> ElapsedMilliseconds() const;

 private:
  EventTimer(CUevent_st* start, CUevent_st* stop)
      : start_(start), stop_(stop) {}

  CUevent_st* start_ = nullptr;
  CUevent_st* stop_ = nullptr;
};

}  // namespace kiln

#endif  // KILN_TESTING_EVENT_TIMER_H_
