// Internal: absl::MutexLock, visible to ThreadSanitizer.
//
// Abseil's mutexes are implemented in its libraries; when those are prebuilt
// without TSan instrumentation (as distribution packages are), TSan cannot see
// that a lock orders the accesses it guards and reports races on all of
// them. Under TSan this lock also tells it about the acquire and the release;
// elsewhere it is exactly absl::MutexLock.

#ifndef KILN_INTERNAL_MUTEX_LOCK_H_
#define KILN_INTERNAL_MUTEX_LOCK_H_

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#if defined(__SANITIZE_THREAD__)
#define KILN_INTERNAL_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define KILN_INTERNAL_TSAN 1
#endif
#endif

#ifdef KILN_INTERNAL_TSAN
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#endif

namespace kiln {
namespace internal {

class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(absl::Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu)
      : mu_(mu) {
    mu_->Lock();
#ifdef KILN_INTERNAL_TSAN
    __tsan_acquire(mu_);
#endif
  }
  ~MutexLock() ABSL_UNLOCK_FUNCTION() {
#ifdef KILN_INTERNAL_TSAN
    __tsan_release(mu_);
#endif
    mu_->Unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  absl::Mutex* const mu_;
};

}  // namespace internal
}  // namespace kiln

#endif  // KILN_INTERNAL_MUTEX_LOCK_H_
