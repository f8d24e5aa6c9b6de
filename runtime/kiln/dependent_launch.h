// Programmatic dependent launch (sm_90 and newer): a kernel launched with it
// may start while the kernel before it on the stream is still running, up to
// its `tl.extra.cuda.gdc_wait()`, which waits for that kernel to finish; the
// earlier kernel's `gdc_launch_dependents()` lets it start sooner. Upstream
// Triton's `kernel[grid](..., launch_pdl=True)`.
//
//   {
//     kiln::ProgrammaticDependentLaunch pdl;  // this thread's launches
//     kernels::launch_producer(grid, stream, ...);
//     kernels::launch_consumer(grid, stream, ...);  // overlaps producer's tail
//   }
//
// Kernels that do not call gdc_wait must not read what the kernel before them
// writes when launched so. Launches on GPUs before sm_90 ignore it.

#ifndef KILN_DEPENDENT_LAUNCH_H_
#define KILN_DEPENDENT_LAUNCH_H_

namespace kiln {

// While an instance is alive, generated launchers called on this thread
// launch with programmatic stream serialization (cuLaunchKernelEx's
// CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION). Scopes nest.
class ProgrammaticDependentLaunch {
 public:
  ProgrammaticDependentLaunch();
  ~ProgrammaticDependentLaunch();
  ProgrammaticDependentLaunch(const ProgrammaticDependentLaunch&) = delete;
  ProgrammaticDependentLaunch& operator=(const ProgrammaticDependentLaunch&) =
      delete;

  // Whether this thread's launches use it now.
  static bool active();
};

}  // namespace kiln

#endif  // KILN_DEPENDENT_LAUNCH_H_
