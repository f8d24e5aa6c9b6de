//===- UnitStrides.h - the unit-stride variant of a kernel ----------------===//
//
// Row-major code indexes a 2-D tile as `ptr + rows[:, None] * stride_r +
// cols[None, :] * stride_c`, and is called with stride_c == 1: the tile is
// contiguous along its last axis. Only a variant that knows stride_c is 1
// can prove that, and vectorize the accesses along that axis. The aligned
// variant assumes every integer divisible by 16, which a unit stride is not,
// so such calls would run the general, unvectorized variant.
//
// The unit-stride variant (`kilnc compile --unit-strides`, which the build
// rules request for specializations with integer parameters named like
// strides) is the aligned variant with each *unit-stride parameter* taken
// equal to 1 (`:1`): an integer parameter with "stride" in its name that the
// kernel multiplies by an index running along a tensor's last axis (a
// `cols[None, :]` or a 1-D `tl.arange`), or passes as the stride of a block
// pointer's fastest-varying dimension. The launcher runs it when those
// arguments are 1 and the others meet the aligned variant's assumptions.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DRIVER_UNITSTRIDES_H
#define KILN_DRIVER_UNITSTRIDES_H

#include "compiler/frontend/Signature.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace kiln {

struct CompileOptions;

/// The unit-stride parameters (see above) of the kernel in `module`, the
/// kiln IR of `spec`, in source order.
std::vector<std::string> findUnitStrideParams(mlir::ModuleOp module,
                                              const frontend::KernelSpec &spec);

/// Compiles the unit-stride variant of `options`' kernel: the aligned
/// variant (`options.aligned` is implied) with the unit-stride parameters
/// written `:1`. Without any, that is the aligned variant. Returns the
/// process exit status; diagnostics as compileKernel's.
int compileUnitStrideVariant(const CompileOptions &options);

} // namespace kiln

#endif // KILN_DRIVER_UNITSTRIDES_H
