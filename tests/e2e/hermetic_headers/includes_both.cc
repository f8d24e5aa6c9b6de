// Linked against `first` and `second`: both headers, named from the
// project's source root.
#include "first.h"
#include "sub/second.h"

const kiln::KernelInfo &first_info() {
  return hermetic::first::scale_kernel_info();
}
const kiln::KernelInfo &second_info() {
  return hermetic::second::scale_kernel_info();
}
