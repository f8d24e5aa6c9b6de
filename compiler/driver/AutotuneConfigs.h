//===- AutotuneConfigs.h - a kernel's @triton.autotune configs ------------===//
//
// Reads the configs of a kernel's @triton.autotune decorator as named
// signature fragments ("BLOCK=128, num_warps=4, num_stages=3"), so that they
// can serve as the kernel's variant list: `kilnc configs` prints them, and
// `kilnc compile --autotune` compiles one variant per config.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DRIVER_AUTOTUNECONFIGS_H
#define KILN_DRIVER_AUTOTUNECONFIGS_H

#include <string>

namespace kiln {

struct CompileOptions;

/// Prints the configs of kernel `kernelName` in `sourcePath`, one per line,
/// to stdout. The decorator's host code sees the target of `arch` (may be
/// empty: then reading the target's arch is an error). Diagnostics go to
/// stderr as `file:line:col: error: ...`. Returns the process exit status.
int printAutotuneConfigs(const std::string &sourcePath,
                         const std::string &kernelName,
                         const std::string &arch);

/// Compiles `options.signature` (named form, without the values the configs
/// set) merged with each of the kernel's autotune configs, each with
/// `compile` (compileKernel, or compileUnitStrideVariant). `outputPath` is a
/// directory that receives `config<K>.<ext>` per config K (and, for cubins,
/// `config<K>.json` metadata) plus `configs.txt`, one line per config, and
/// `autotune_key.txt`, the decorator's `key` names joined by ", "; files of
/// an earlier run are removed first. A config that needs more shared memory
/// than the target has is skipped with a warning (Triton's autotuner skips
/// it too) and leaves `config<K>.error` instead; none fitting is an error.
/// Returns the process exit status.
int compileAutotuneConfigs(const CompileOptions &options,
                           int (*compile)(const CompileOptions &));

} // namespace kiln

#endif // KILN_DRIVER_AUTOTUNECONFIGS_H
