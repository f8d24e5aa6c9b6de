// A human-readable inventory of a compiled kernel.

#ifndef KILN_DESCRIBE_H_
#define KILN_DESCRIBE_H_

#include <string>

#include "kiln/kernel_info.h"

namespace kiln {

// Describes `kernel` for people: each variant (parameters with their types
// and divisibility, constexpr values, launch options) and, per variant, each
// cubin's arch, size, registers, spills, shared memory and global scratch
// (when it has any). Several lines, each ending in a newline; the exact
// layout may change, so do not parse it.
std::string DescribeKernel(const KernelInfo& kernel);

}  // namespace kiln

#endif  // KILN_DESCRIBE_H_
