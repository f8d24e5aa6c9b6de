//===- Passes.h - Kiln's passes -------------------------------------------===//
#ifndef KILN_TRANSFORMS_PASSES_H
#define KILN_TRANSFORMS_PASSES_H

#include "compiler/ir/Dialects.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace kiln {

#define GEN_PASS_DECL
#include "compiler/transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/transforms/Passes.h.inc"

} // namespace kiln

#endif // KILN_TRANSFORMS_PASSES_H
