// Linked against `first` only: `second`'s header must not be found, although
// it has been generated (tests/e2e/check_hermetic_headers.cmake).
#include "sub/second.h"

const kiln::KernelInfo &other_info() {
  return hermetic::second::scale_kernel_info();
}
