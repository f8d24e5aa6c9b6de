//===- Pipeline.cpp - from Triton source to cubin, stage by stage ---------===//
//
// The whole compiler in one function, compileKernel: each stage is one step,
// and the IR after each is written by --dump-ir (and by --emit for the stage
// where compilation stops).
//
//   source ──parse──► AST ──emit──► kiln IR ──rewrite block pointers,
//     assign layouts──► kiln_gpu IR
//     ──lower──► LLVM+NVVM dialects ──translate──► LLVM IR ──O3, NVPTX──► PTX
//     ──ptxas──► cubin + metadata
//
//===----------------------------------------------------------------------===//
#include "compiler/driver/Pipeline.h"

#include "compiler/driver/Metadata.h"
#include "compiler/frontend/Emitter.h"
#include "compiler/frontend/Parser.h"
#include "compiler/ir/Dialects.h"
#include "compiler/ir/TargetInfo.h"
#include "compiler/target/Target.h"
#include "compiler/transforms/Passes.h"

#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/xxhash.h"

using namespace llvm;

namespace {

/// Writes each stage's output where the options ask for it.
class StageWriter {
public:
  explicit StageWriter(const kiln::CompileOptions &options)
      : options(options) {}

  /// Writes `text` to the dump directory, if any, as `dumpName`.
  bool dump(StringRef dumpName, StringRef text) {
    if (options.dumpDir.empty())
      return true;
    sys::fs::create_directories(options.dumpDir);
    SmallString<128> path(options.dumpDir);
    sys::path::append(path, dumpName);
    return writeFile(path, text);
  }
  /// Dumps `text` and, when `stage` is where compilation stops, writes it as
  /// the output and sets `done`. Returns false on an I/O error.
  bool write(kiln::Stage stage, StringRef dumpName, StringRef text) {
    if (!dump(dumpName, text))
      return false;
    if (stage == options.emit) {
      done = true;
      return writeFile(options.outputPath, text);
    }
    return true;
  }
  bool writeFile(StringRef path, StringRef bytes) {
    std::error_code ec;
    ToolOutputFile out(path, ec, sys::fs::OF_None);
    if (ec) {
      WithColor::error(errs(), "kilnc")
          << "cannot write " << path << ": " << ec.message() << "\n";
      return false;
    }
    out.os() << bytes;
    out.keep();
    return true;
  }
  bool done = false;

private:
  const kiln::CompileOptions &options;
};

std::string printed(mlir::ModuleOp module) {
  std::string s;
  raw_string_ostream os(s);
  module.print(os);
  return s;
}

std::string printed(const Module &module) {
  std::string s;
  raw_string_ostream os(s);
  module.print(os, /*AAW=*/nullptr);
  return s;
}

int fail(const Twine &message) {
  WithColor::error(errs(), "kilnc") << message << "\n";
  return 1;
}

} // namespace

int kiln::compileKernel(const CompileOptions &options) {
  StageWriter writer(options);
  auto arch = TargetArch::parse(options.arch);
  if (!arch)
    return fail(toString(arch.takeError()));

  // Source.
  auto file = MemoryBuffer::getFile(options.sourcePath, /*IsText=*/true);
  if (!file)
    return fail("cannot read " + options.sourcePath + ": " +
                file.getError().message());
  std::string sourceHash =
      utohexstr(xxh3_64bits((*file)->getBuffer()), true, 16);
  SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(*file), SMLoc());

  mlir::DialectRegistry registry;
  kiln::registerAllDialects(registry);
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  mlir::registerNVVMDialectTranslation(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  mlir::SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  // Stage 1: parse.
  std::unique_ptr<frontend::Module> ast = frontend::parseModule(sourceMgr);
  if (!ast)
    return 1;

  // Stage 2: staged evaluation into kiln IR for this signature.
  frontend::Emitter emitter(sourceMgr, context, *ast);
  emitter.setDebug(options.debug);
  const frontend::FunctionDefStmt *kernel =
      emitter.findKernel(options.kernelName);
  if (!kernel)
    return 1;
  auto decls = emitter.paramDecls(*kernel);
  if (!decls)
    return 1;
  auto spec =
      frontend::parseSignature(options.signature, *decls, options.aligned);
  if (!spec) {
    sourceMgr.PrintMessage(kernel->nameLoc, SourceMgr::DK_Error,
                           "bad signature for '" + kernel->name +
                               "': " + toString(spec.takeError()));
    return 1;
  }
  if (!emitter.applyHeuristics(*kernel, *spec))
    return 1;
  if (options.numWarpsGiven &&
      options.signature.find("num_warps") == std::string::npos)
    spec->numWarps = options.numWarps;
  if (options.numStagesGiven &&
      options.signature.find("num_stages") == std::string::npos)
    spec->numStages = options.numStages;
  mlir::OwningOpRef<mlir::ModuleOp> module = emitter.emitKernel(*kernel, *spec);
  if (!module || failed(mlir::verify(*module)))
    return 1;
  {
    mlir::PassManager pm(&context);
    pm.addPass(mlir::createCanonicalizerPass());
    pm.addPass(mlir::createCSEPass());
    if (failed(pm.run(*module)))
      return 1;
  }
  if (!writer.write(Stage::Kiln, "01-kiln.mlir", printed(*module)))
    return 1;
  if (writer.done)
    return 0;

  // Stage 3: tensor descriptors and block pointers to tensors of pointers,
  // layouts, the software pipeline of tensor-core loops, shared-memory
  // offsets.
  (*module)->setAttr(TargetInfo::kAttrName,
                     mlir::StringAttr::get(&context, arch->name));
  {
    mlir::PassManager pm(&context);
    pm.addPass(kiln::createKilnLowerTensorDescriptors());
    pm.addPass(kiln::createKilnRewriteBlockPointers());
    kiln::KilnAssignLayoutsOptions layoutOptions;
    layoutOptions.numWarps = spec->numWarps;
    pm.addPass(kiln::createKilnAssignLayouts(layoutOptions));
    kiln::KilnPipelineDotsOptions pipelineOptions;
    pipelineOptions.numStages = spec->numStages;
    pm.addPass(kiln::createKilnPipelineDots(pipelineOptions));
    pm.addPass(mlir::createCanonicalizerPass());
    pm.addPass(kiln::createKilnAllocateShared());
    if (failed(pm.run(*module)))
      return 1;
  }
  if (!writer.write(Stage::Gpu, "02-kiln-gpu.mlir", printed(*module)))
    return 1;
  if (writer.done)
    return 0;

  // Stage 4: LLVM and NVVM dialects.
  {
    mlir::PassManager pm(&context);
    kiln::KilnToLLVMOptions llvmOptions;
    llvmOptions.computeCapability = arch->major * 10 + arch->minor;
    pm.addPass(kiln::createKilnToLLVM(llvmOptions));
    pm.addPass(mlir::createReconcileUnrealizedCastsPass());
    pm.addPass(mlir::createCanonicalizerPass());
    pm.addPass(mlir::createCSEPass());
    if (failed(pm.run(*module)))
      return 1;
  }
  if (!writer.dump("03-llvm.mlir", printed(*module)))
    return 1;
  int64_t sharedBytes = 0;
  if (auto bytes =
          (*module)->getAttrOfType<mlir::IntegerAttr>("kiln_gpu.shared_bytes"))
    sharedBytes = bytes.getInt();

  // Stage 5: LLVM IR, optimized; then PTX.
  LLVMContext llvmContext;
  std::unique_ptr<Module> llvmModule =
      mlir::translateModuleToLLVMIR(*module, llvmContext, kernel->name);
  if (!llvmModule)
    return fail("translation to LLVM IR failed");
  auto ptx = emitPTX(*llvmModule, *arch); // optimizes llvmModule in place
  if (!writer.write(Stage::LLVM, "04-llvm.ll", printed(*llvmModule)))
    return 1;
  if (writer.done)
    return 0;
  if (!ptx)
    return fail(toString(ptx.takeError()));
  if (!writer.write(Stage::PTX, "05-kernel.ptx", *ptx))
    return 1;
  if (writer.done)
    return 0;

  // Stage 6: cubin and metadata.
  auto cubin = assembleCubin(*ptx, *arch, options.ptxasPath);
  if (!cubin)
    return fail(toString(cubin.takeError()));
  if (!writer.dump("06-ptxas.log", cubin->log) ||
      !writer.writeFile(options.outputPath, cubin->cubin))
    return 1;
  if (!options.metadataPath.empty()) {
    std::string json;
    raw_string_ostream os(json);
    VariantMetadata metadata{kernel->name,
                             arch->name,
                             &*spec,
                             &*cubin,
                             /*dynamicSharedBytes=*/sharedBytes,
                             sourceHash};
    writeMetadata(os, metadata);
    if (!writer.writeFile(options.metadataPath, json))
      return 1;
  }
  return 0;
}
