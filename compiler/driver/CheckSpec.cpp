//===- CheckSpec.cpp - checks specializations against a kernel ------------===//
#include "compiler/driver/CheckSpec.h"

#include "compiler/frontend/Emitter.h"
#include "compiler/frontend/Parser.h"
#include "compiler/frontend/Signature.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace kiln::frontend;

/// Why an autotuned target's `signature` is not of the form the configs
/// complete (named, without launch options), or "".
static std::string autotuneFormError(llvm::StringRef signature) {
  if (!isNamedSignature(signature))
    return "it is positional, but with autotune the @triton.autotune configs "
           "supply the constexpr values: name the parameters instead, as in "
           "\"x_ptr=*fp32, n=i32\"";
  for (llvm::StringRef entry : splitSignature(signature)) {
    llvm::StringRef key = entry.split('=').first.trim();
    if (key == "num_warps" || key == "num_stages" || key == "num_ctas")
      return ("it sets " + key +
              ", but with autotune each @triton.autotune config sets the "
              "launch options (triton.Config's defaults: num_warps=4, "
              "num_stages=3, num_ctas=1); leave it out")
          .str();
  }
  return "";
}

/// Writes the checked `signatures` to `path`, one per line. Returns the exit
/// status.
static int writeStamp(llvm::StringRef path,
                      llvm::ArrayRef<std::string> signatures) {
  std::error_code error;
  llvm::raw_fd_ostream os(path, error, llvm::sys::fs::OF_Text);
  if (!error) {
    for (const std::string &signature : signatures)
      os << signature << "\n";
    os.close();
    error = os.error();
  }
  if (error) {
    llvm::WithColor::error(llvm::errs(), "kilnc")
        << "cannot write " << path << ": " << error.message() << "\n";
    return 1;
  }
  return 0;
}

int kiln::checkSpecializations(const CheckSpecOptions &options) {
  auto file = llvm::MemoryBuffer::getFile(options.sourcePath, /*IsText=*/true);
  if (!file) {
    llvm::WithColor::error(llvm::errs(), "kilnc")
        << "cannot read " << options.sourcePath << ": "
        << file.getError().message() << "\n";
    return 1;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(*file), llvm::SMLoc());
  std::unique_ptr<Module> module = parseModule(sourceMgr);
  if (!module)
    return 1;
  mlir::MLIRContext context;
  Emitter emitter(sourceMgr, context, *module);
  std::string kernelName;
  const FunctionDefStmt *kernel =
      emitter.findKernel(options.kernelName, &kernelName);
  if (!kernel)
    return 1;
  std::optional<std::vector<ParamDecl>> decls = emitter.paramDecls(*kernel);
  if (!decls)
    return 1;
  // With autotune the configs give the constexprs: any may be left out.
  if (options.autotune)
    for (ParamDecl &decl : *decls)
      if (decl.isConstexpr)
        decl.fromHeuristic = true;

  int status = 0;
  for (auto [index, signature] : llvm::enumerate(options.signatures)) {
    auto report = [&, index = index,
                   &signature = signature](const llvm::Twine &why) {
      llvm::WithColor::error(llvm::errs(), "kilnc")
          << options.where << " " << index << " (\"" << signature
          << "\"): " << why << "\n";
      status = 1;
    };
    if (options.autotune) {
      std::string why = autotuneFormError(signature);
      if (!why.empty()) {
        report(why);
        continue;
      }
    }
    llvm::Expected<KernelSpec> spec =
        parseSignature(signature, *decls, /*aligned=*/false);
    if (!spec) {
      report("bad signature for '" + kernelName +
             "': " + llvm::toString(spec.takeError()));
      continue;
    }
    if (llvm::Error unsupported = checkLaunchOptionsSupported(*spec))
      report("kernel '" + kernelName +
             "': " + llvm::toString(std::move(unsupported)));
  }
  if (status == 0 && !options.stampPath.empty())
    return writeStamp(options.stampPath, options.signatures);
  return status;
}
