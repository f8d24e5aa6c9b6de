//===- AutotuneConfigs.h - a kernel's @triton.autotune configs ------------===//
//
// Reads the configs of a kernel's @triton.autotune decorator as named
// signature fragments ("BLOCK=128, num_warps=4, num_stages=3"), so that they
// can serve as the kernel's variant list (`kilnc configs`).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DRIVER_AUTOTUNECONFIGS_H
#define KILN_DRIVER_AUTOTUNECONFIGS_H

#include <string>

namespace kiln {

/// Prints the configs of kernel `kernelName` in `sourcePath`, one per line,
/// to stdout. Diagnostics go to stderr as `file:line:col: error: ...`.
/// Returns the process exit status.
int printAutotuneConfigs(const std::string &sourcePath,
                         const std::string &kernelName);

} // namespace kiln

#endif // KILN_DRIVER_AUTOTUNECONFIGS_H
