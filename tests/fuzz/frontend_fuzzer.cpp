//===- frontend_fuzzer.cpp - libFuzzer target over the kernel front end ---===//
//
// Input bytes are a kernel file. The target parses it, and for every
// @triton.jit function at module level whose parameters can be given a
// default signature (pointers for names containing "ptr", i32 for other
// run-time parameters, 16 for constexprs without a default) it runs IR
// generation and the MLIR verifier, the way `kilnc compile --emit kiln` does.
// Diagnostics are dropped: the fuzzer looks for crashes, sanitizer reports,
// leaks, hangs and IR that fails to verify, never for rejected input. scripts/fuzz.sh builds and runs it.
//
//===----------------------------------------------------------------------===//
#include "compiler/frontend/Emitter.h"
#include "compiler/frontend/Parser.h"
#include "compiler/frontend/Signature.h"
#include "compiler/ir/Dialects.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

using namespace kiln::frontend;

namespace {

// Kernels per input: bounds the time one input can take.
constexpr unsigned kMaxKernelsPerInput = 8;
// Statements one kernel may replay (unrolled loops, inlined helpers): a few
// tenths of a second under ASan, so that no input nears the timeout.
constexpr size_t kStatementBudget = 4096;
// MLIR contexts intern every type and attribute they see; a fresh one now
// and then keeps memory flat over long runs.
constexpr unsigned kInputsPerContext = 2000;

/// One context for many inputs: creating one and loading its dialects costs
/// far more than the front end itself.
mlir::MLIRContext &getContext() {
  static std::unique_ptr<mlir::MLIRContext> context;
  static unsigned uses = 0;
  if (!context || ++uses % kInputsPerContext == 0) {
    mlir::DialectRegistry registry;
    kiln::registerAllDialects(registry);
    context = std::make_unique<mlir::MLIRContext>(
        registry, mlir::MLIRContext::Threading::DISABLED);
    context->loadAllAvailableDialects();
  }
  return *context;
}

/// The default signature of `params` in kilnc's named form; `variant` picks
/// one of two families of types so that both integer widths and float
/// widths get exercised.
std::string defaultSignature(const std::vector<ParamDecl> &params, unsigned variant) {
  std::string sig;
  for (const ParamDecl &p : params) {
    if (p.isConstexpr && p.defaultValue)
      continue; // kilnc fills it in
    if (!sig.empty())
      sig += ", ";
    sig += p.name + "=";
    if (p.isConstexpr)
      sig += variant == 0 ? "16" : "64";
    else if (p.name.find("ptr") != std::string::npos)
      sig += variant == 0 ? "*fp32" : "*fp16";
    else
      sig += variant == 0 ? "i32" : "i64";
  }
  return sig;
}

} // namespace

/// The front end is instrumented, libMLIR is not, and both allocate from the
/// same llvm::BumpPtrAllocator (a context's type uniquer): an inlined
/// allocator in our code poisons a fresh slab for ASan, and libMLIR, which
/// never unpoisons, then writes into it. Such "use-after-poison" reports are
/// artifacts of the mixed build, so user poisoning is off.
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0:detect_leaks=1";
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::MLIRContext &context = getContext();
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz.py"),
      llvm::SMLoc());
  // Front-end errors go through the SourceMgr handler, MLIR's through the
  // context's: both to nowhere.
  sourceMgr.setDiagHandler([](const llvm::SMDiagnostic &, void *) {});
  mlir::SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context, llvm::nulls());

  std::unique_ptr<Module> ast = parseModule(sourceMgr);
  if (!ast)
    return 0;

  unsigned kernels = 0;
  for (const StmtPtr &stmt : ast->body) {
    auto *def = llvm::dyn_cast<FunctionDefStmt>(stmt.get());
    if (!def)
      continue;
    for (unsigned variant = 0; variant < 2; ++variant) {
      Emitter emitter(sourceMgr, context, *ast);
      emitter.setStatementBudget(kStatementBudget);
      const FunctionDefStmt *kernel = emitter.findKernel(def->name);
      if (!kernel || kernel != def)
        break; // not @triton.jit, or a duplicate name
      if (++kernels > kMaxKernelsPerInput)
        return 0;
      auto decls = emitter.paramDecls(*kernel);
      if (!decls)
        break;
      auto spec = parseSignature(defaultSignature(*decls, variant), *decls,
                                 /*aligned=*/variant == 1);
      if (!spec) {
        llvm::consumeError(spec.takeError());
        break;
      }
      if (!emitter.applyHeuristics(*kernel, *spec))
        break;
      mlir::OwningOpRef<mlir::ModuleOp> module = emitter.emitKernel(*kernel, *spec);
      // The front end must report bad input itself: IR that fails to
      // verify is a front-end bug (issue 3), so it is a finding here.
      if (module && mlir::failed(mlir::verify(*module))) {
        llvm::errs() << "frontend_fuzzer: kernel '" << kernel->name << "' ("
                     << defaultSignature(*decls, variant)
                     << ") produced IR that fails to verify\n";
        __builtin_trap();
      }
    }
  }
  return 0;
}
