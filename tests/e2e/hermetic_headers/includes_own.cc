// Linked against `first`: its generated header is on the include path.
#include "first.h"

const kiln::KernelInfo &own_info() {
  return hermetic::first::scale_kernel_info();
}
