//===- UnitStrides.cpp - the unit-stride variant of a kernel --------------===//
#include "compiler/driver/UnitStrides.h"

#include "compiler/driver/Pipeline.h"
#include "compiler/frontend/Emitter.h"
#include "compiler/frontend/Parser.h"
#include "compiler/ir/Dialects.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

using namespace llvm;

namespace {

/// Whether `index`, one operand of a multiplication, runs along the last
/// axis of its tensor only: a 1-D tensor, or `x[None, :]` in 2-D, seen
/// through casts and broadcasts (which repeat it along the other axes).
bool runsAlongLastAxis(mlir::Value index) {
  while (mlir::Operation *def = index.getDefiningOp()) {
    if (!isa<mlir::arith::ExtSIOp, mlir::arith::ExtUIOp, mlir::arith::TruncIOp,
             kiln::BroadcastOp>(def))
      break;
    index = def->getOperand(0);
  }
  if (index.getDefiningOp<kiln::SplatOp>() ||
      index.getDefiningOp<mlir::arith::ConstantOp>())
    return false; // the same value everywhere
  auto type = dyn_cast<mlir::RankedTensorType>(index.getType());
  if (!type || type.getRank() == 0)
    return false;
  ArrayRef<int64_t> shape = type.getShape();
  return shape.back() > 1 &&
         all_of(shape.drop_back(), [](int64_t d) { return d == 1; });
}

/// Whether kernel argument `arg` (an integer) is the stride of a tensor's
/// last axis somewhere: multiplied by an index running along that axis, or
/// the stride of a block pointer's fastest-varying dimension.
bool isUnitStride(mlir::Value arg) {
  SmallVector<mlir::Value> worklist = {arg};
  DenseSet<mlir::Value> seen = {arg};
  while (!worklist.empty()) {
    mlir::Value value = worklist.pop_back_val();
    for (mlir::OpOperand &use : value.getUses()) {
      mlir::Operation *user = use.getOwner();
      if (isa<mlir::arith::ExtSIOp, mlir::arith::ExtUIOp, mlir::arith::TruncIOp,
              kiln::SplatOp, kiln::BroadcastOp>(user)) {
        if (seen.insert(user->getResult(0)).second)
          worklist.push_back(user->getResult(0));
        continue;
      }
      if (auto mul = dyn_cast<mlir::arith::MulIOp>(user)) {
        if (runsAlongLastAxis(mul->getOperand(1 - use.getOperandNumber())))
          return true;
        continue;
      }
      if (auto make = dyn_cast<kiln::MakeBlockPtrOp>(user)) {
        ArrayRef<int32_t> order = make.getOrder();
        mlir::OperandRange strides = make.getStrides();
        if (!order.empty() && order.front() >= 0 &&
            size_t(order.front()) < strides.size() &&
            strides[order.front()] == value)
          return true;
      }
    }
  }
  return false;
}

bool isStrideName(StringRef name) {
  return StringRef(name.lower()).contains("stride");
}

} // namespace

std::vector<std::string>
kiln::findUnitStrideParams(mlir::ModuleOp module,
                           const frontend::KernelSpec &spec) {
  std::vector<std::string> names;
  auto funcs = module.getOps<mlir::func::FuncOp>();
  if (funcs.empty())
    return names;
  mlir::func::FuncOp func = *funcs.begin();
  unsigned argIndex = 0;
  for (const frontend::ParamSpec *leaf : spec.leaves()) {
    const frontend::ParamSpec &p = *leaf;
    if (!p.isKernelArgument())
      continue;
    if (p.type.isTensorDescriptor()) { // its ABI: map, base, shape, strides
      argIndex += 2 + 2 * p.type.blockShape.size();
      continue;
    }
    mlir::BlockArgument arg = func.getArgument(argIndex++);
    bool integer = !p.type.isPointer && p.type.element.isInteger() &&
                   !p.type.element.isBool();
    // A tuple's element keeps its hint: the `:1` variant rewrites whole
    // signature entries.
    if (integer && p.divisibility == 1 && p.tupleIndex.empty() &&
        isStrideName(p.name) && isUnitStride(arg))
      names.push_back(p.name);
  }
  return names;
}

int kiln::compileUnitStrideVariant(const CompileOptions &options) {
  CompileOptions aligned = options;
  aligned.aligned = true;

  // The kernel's kiln IR for the signature as given, only to find the
  // unit-stride parameters. Any error is left to compileKernel, which
  // reports it, so this pass stays silent.
  auto file = MemoryBuffer::getFile(options.sourcePath, /*IsText=*/true);
  if (!file)
    return compileKernel(aligned);
  SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(*file), SMLoc());
  sourceMgr.setDiagHandler([](const SMDiagnostic &, void *) {});
  mlir::DialectRegistry registry;
  kiln::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.getDiagEngine().registerHandler(
      [](mlir::Diagnostic &) { return mlir::success(); });

  std::unique_ptr<frontend::Module> ast = frontend::parseModule(sourceMgr);
  if (!ast)
    return compileKernel(aligned);
  frontend::Emitter emitter(sourceMgr, context, *ast, options.srcs,
                            frontend::HostTarget::forArch(options.arch));
  emitter.setDebug(options.debug);
  const frontend::FunctionDefStmt *kernel =
      emitter.findKernel(options.kernelName);
  if (!kernel)
    return compileKernel(aligned);
  auto decls = emitter.paramDecls(*kernel);
  if (!decls)
    return compileKernel(aligned);
  auto spec = frontend::parseSignature(options.signature, *decls,
                                       /*aligned=*/false);
  if (!spec) {
    consumeError(spec.takeError());
    return compileKernel(aligned);
  }
  if (!emitter.applyHeuristics(*kernel, *spec))
    return compileKernel(aligned);
  mlir::OwningOpRef<mlir::ModuleOp> module = emitter.emitKernel(*kernel, *spec);
  if (!module)
    return compileKernel(aligned);

  aligned.signature = frontend::withEqualToOne(
      options.signature, *decls, findUnitStrideParams(*module, *spec));
  return compileKernel(aligned);
}
