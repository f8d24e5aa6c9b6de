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
#include "compiler/conversion/KilnPipeline.h"

#include "compiler/driver/Metadata.h"
#include "compiler/frontend/Emitter.h"
#include "compiler/frontend/Parser.h"
#include "compiler/ir/ChainedDots.h"
#include "compiler/ir/Dialects.h"
#include "compiler/ir/Occupancy.h"
#include "compiler/ir/TargetInfo.h"
#include "compiler/ir/TensorCoreFlavour.h"
#include "compiler/target/Target.h"
#include "compiler/transforms/Passes.h"

#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/xxhash.h"

#include <optional>
#include <tuple>

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

/// `ptx` with `directive` (".minnctapersm 1") after each entry's `.reqntid`
/// (or `.maxntid`) directive.
std::string withEntryDirective(StringRef ptx, StringRef directive) {
  std::string out;
  out.reserve(ptx.size() + 64);
  SmallVector<StringRef> lines;
  ptx.split(lines, '\n');
  for (auto [i, line] : llvm::enumerate(lines)) {
    out += line;
    if (i + 1 < lines.size())
      out += '\n';
    StringRef trimmed = line.trim();
    if (trimmed.starts_with(".reqntid") || trimmed.starts_with(".maxntid")) {
      out += directive;
      out += '\n';
    }
  }
  return out;
}

/// `ptx` with `directive` on its entry, and its cubin; nothing when ptxas
/// rejects it (the caller keeps what it had).
std::optional<std::pair<std::string, kiln::CubinInfo>>
assembleWithDirective(StringRef ptx, StringRef directive,
                      const kiln::TargetArch &arch, StringRef ptxasPath) {
  std::string directed = withEntryDirective(ptx, directive);
  auto cubin = kiln::assembleCubin(directed, arch, ptxasPath);
  if (!cubin) {
    consumeError(cubin.takeError());
    return std::nullopt;
  }
  return std::make_pair(std::move(directed), std::move(*cubin));
}

int fail(const Twine &message) {
  WithColor::error(errs(), "kilnc") << message << "\n";
  return 1;
}

/// Whether ptxas spilled `cubin` with registers to spare: the kernel is then
/// assembled again with an occupancy hint (compileKernel).
bool spillsBelowRegisterLimit(const kiln::CubinInfo &cubin) {
  return cubin.spillBytes > 0 && cubin.registers < 255;
}

/// Of `ptx` and `rematerialized`, the same code with values recomputed after
/// loops (compiler/target/RematerializeAfterLoops.h), keeps in `ptx` the one
/// whose wgmma ptxas does not serialize, then the one with fewer spills, then
/// fewer registers or, for mma.sync kernels, the one whose registers let
/// more blocks of `threads` threads share an SM (as far as `sharedBytes` a
/// block allows), the plain one on a tie, and returns its cubin
/// (`tookRematerialized` says which). Nothing when
/// either does not assemble: the plain one is assembled again, for its error.
///
/// The rematerialized copy saves registers for occupancy. On the mma.sync
/// path, fewer registers at the same occupancy are no gain, and ptxas's
/// schedule for them was slower: on the H200, attention forward at HEAD_DIM
/// 128 (one block an SM either way) ran at 0.80 of Triton's mma.sync path
/// causal with 176 rematerialized registers, 0.98-1.00 with the plain 204.
/// wgmma kernels keep fewer registers, the rule they were measured with
/// (tutorials 03, 06, 08 and 09 at Triton's speed; 31 of their bench cubins
/// take the rematerialized copy at the same occupancy). When the plain
/// one spills below the register limit, the occupancy hint is what helps
/// (compileKernel), and such a kernel is a large one, on which every ptxas
/// run takes seconds: the plain one is kept without assembling the other.
std::optional<kiln::CubinInfo>
keepFasterRegisterUse(std::string &ptx, std::string &rematerialized,
                      const kiln::TargetArch &arch, StringRef ptxasPath,
                      const kiln::TargetInfo &target, unsigned threads,
                      int64_t sharedBytes, bool &tookRematerialized) {
  tookRematerialized = false;
  auto plain = kiln::assembleCubin(ptx, arch, ptxasPath);
  if (plain && spillsBelowRegisterLimit(*plain))
    return std::move(*plain);
  auto other = kiln::assembleCubin(rematerialized, arch, ptxasPath);
  if (!plain || !other) {
    consumeError(plain.takeError());
    consumeError(other.takeError());
    return std::nullopt;
  }
  unsigned room = kiln::blocksPerSMBeforeRegisters(
      target, threads, sharedBytes + plain->staticSharedBytes);
  const bool byOccupancy = StringRef(ptx).contains("mma.sync.aligned") &&
                           !StringRef(ptx).contains("wgmma.mma_async");
  // Lower is better: fewer registers, or more blocks per SM.
  auto registerCost = [&](const kiln::CubinInfo &cubin) -> int {
    if (!byOccupancy)
      return int(cubin.registers);
    return -int(
        std::min(room, kiln::blocksPerSMByRegisters(threads, cubin.registers)));
  };
  if (std::make_tuple(other->serializesWgmma, other->spillBytes,
                      registerCost(*other)) <
      std::make_tuple(plain->serializesWgmma, plain->spillBytes,
                      registerCost(*plain))) {
    ptx = std::move(rematerialized);
    tookRematerialized = true;
    return std::move(*other);
  }
  return std::move(*plain);
}

/// Replaces `ptx` and `cubin` with the copy `emitOrdered` makes, the same
/// module's PTX with its instructions ordered to keep fewer values live
/// (PTXCandidates), where ptxas then lets at least twice as many blocks of
/// `threads` threads share an SM without spilling more. ptxas keeps much of
/// a block's order: liger's KL-divergence forward (16 warps, 32 fp32
/// logarithms a thread between its loads and its sum) took 82 registers in
/// source order, one block per SM, and 32 so ordered, four blocks per SM as
/// Triton's kernel has: 0.81 of Triton's speed before, 1.00 after (H200).
/// Smaller steps measured slower, the ordered schedule keeping fewer loads
/// in flight a thread: tutorial 05's layer-norm backward 3 -> 4 blocks
/// 1.005 -> 0.985, its forward at N = 8192 4 -> 5 blocks 1.14 -> 1.10.
void keepMoreBlocksPerSM(
    std::string &ptx, kiln::CubinInfo &cubin,
    const std::function<Expected<std::string>()> &emitOrdered,
    const kiln::TargetArch &arch, StringRef ptxasPath,
    const kiln::TargetInfo &target, unsigned threads, int64_t sharedBytes) {
  unsigned room = kiln::blocksPerSMBeforeRegisters(
      target, threads, sharedBytes + cubin.staticSharedBytes);
  auto blocks = [&](const kiln::CubinInfo &info) {
    return std::min(room,
                    kiln::blocksPerSMByRegisters(threads, info.registers));
  };
  if (2 * blocks(cubin) > room)
    return;
  auto ordered = emitOrdered();
  if (!ordered) {
    consumeError(ordered.takeError());
    return;
  }
  if (*ordered == ptx)
    return;
  auto other = kiln::assembleCubin(*ordered, arch, ptxasPath);
  if (!other) {
    consumeError(other.takeError());
    return;
  }
  if (other->spillBytes <= cubin.spillBytes &&
      blocks(*other) >= 2 * blocks(cubin)) {
    ptx = std::move(*ordered);
    cubin = std::move(*other);
  }
}

/// Kernels with more registers than this are the ones capped for occupancy.
constexpr unsigned kCapRegistersAbove = 128;
/// Spill bytes (stores + loads) a capped kernel may add: a few registers of
/// cold values in L1 cost less than the blocks per SM gained (tutorial 06's
/// causal attention at d64 spills 8-12 bytes at 168 registers). More do
/// not: FLA's GLA chunk_h capped from 156 to 128 registers spilled 56 bytes
/// in its loop and ran at 0.76 of Triton where uncapped it runs at 0.85
/// (H200), though a fourth block fit beside its 56 KB of shared memory.
constexpr unsigned kCapSpillAllowance = 32;
/// Spill bytes the form that waits for every dot in its own iteration may
/// add and still be kept over a deferred wait's form (see below).
constexpr unsigned kUndeferredSpillAllowance = 64;

/// The spill bytes (stores + loads) a flattened loop may cost before kilnc
/// compiles its kernel again with the loops nested.
constexpr unsigned kFlattenSpillAllowance = 128;

/// ptxas spends registers on its schedule without regard to occupancy: a
/// kernel whose shared memory leaves room for more blocks per SM than its
/// registers do (the causal attention's two loops took 230 registers, 2
/// blocks, where 64 KB of shared memory allow 3) is assembled again with
/// `.maxnreg` at the count that fits them, and the result is kept when it
/// spills at most kCapSpillAllowance bytes more. Only above kCapRegistersAbove
/// registers, the tensor-core kernels; a memory-bound kernel would trade its
/// schedule for blocks it does not need. Not for a kernel that already
/// spills more than the allowance with every register it may have: fewer
/// registers cannot spill less, and each try is a whole ptxas run (a Mamba-3
/// backward kernel spilling 16 KB spent 11 of its 21 seconds in two).
/// At most two tries, from the most blocks down. Returns whether `cubin`
/// and `ptx` are the capped ones.
bool capRegistersForOccupancy(std::string &ptx, kiln::CubinInfo &cubin,
                              const kiln::TargetInfo &target, unsigned numWarps,
                              int64_t sharedBytes, StringRef ptxasPath,
                              const kiln::TargetArch &arch) {
  if (cubin.registers <= kCapRegistersAbove ||
      cubin.spillBytes > kCapSpillAllowance)
    return false;
  unsigned threads = numWarps * kiln::TargetInfo::kThreadsPerWarp;
  unsigned room = kiln::blocksPerSMBeforeRegisters(
      target, threads, sharedBytes + cubin.staticSharedBytes);
  unsigned now = kiln::blocksPerSMByRegisters(threads, cubin.registers);
  unsigned tries = 0;
  for (unsigned blocks = room; blocks > now && tries < 2; --blocks) {
    unsigned budget = kiln::registerBudget(threads, blocks);
    if (budget < kCapRegistersAbove)
      continue;
    ++tries;
    auto capped = assembleWithDirective(
        ptx, (".maxnreg " + Twine(budget)).str(), arch, ptxasPath);
    if (capped &&
        capped->second.spillBytes <= cubin.spillBytes + kCapSpillAllowance) {
      std::tie(ptx, cubin) = std::move(*capped);
      return true;
    }
  }
  return false;
}

/// Reassembles a rematerialized kernel that reads global memory without
/// tensor-core instructions (one whose schedule ptxas made from fewer live
/// values) with `.maxnreg` set
/// to the registers its occupancy allows (as many blocks per SM as it has),
/// where that is more than it uses, and keeps the result when it spills no
/// more. Without a directive ptxas aims low and may reuse registers at the
/// cost of loads in flight: FlagGems' strided softmax (16 warps, two blocks
/// an SM at 62 registers) issued its loop's second 16-byte load only after
/// the first one's data arrived, half of Triton's bytes in flight; with the
/// budget of 64 named, both loads go out together.
void spendRegisterBudget(std::string &ptx, kiln::CubinInfo &cubin,
                         const kiln::TargetInfo &target, unsigned numWarps,
                         int64_t sharedBytes, StringRef ptxasPath,
                         const kiln::TargetArch &arch) {
  StringRef text = ptx;
  if (cubin.spillBytes > 0 || !text.contains("ld.global") ||
      text.contains("mma.sync.aligned") || text.contains("wgmma.mma_async") ||
      text.contains(".maxnreg") || text.contains(".minnctapersm"))
    return;
  unsigned threads = numWarps * kiln::TargetInfo::kThreadsPerWarp;
  unsigned blocks = kiln::blocksPerSM(
      target, threads, sharedBytes + cubin.staticSharedBytes, cubin.registers);
  if (blocks == 0)
    return;
  unsigned budget = kiln::registerBudget(threads, blocks);
  if (budget <= cubin.registers)
    return;
  auto budgeted = assembleWithDirective(
      ptx, (".maxnreg " + Twine(budget)).str(), arch, ptxasPath);
  if (budgeted && budgeted->second.spillBytes == 0)
    std::tie(ptx, cubin) = std::move(*budgeted);
}

/// The warps a kernel is compiled for on a target with wgmma, where the
/// config's `requested` do not let its dots take wgmma but fewer would:
/// wgmma tiles M by warpgroups of four warps, 16 rows each, so 8 warps need
/// tiles of at least 128 rows. DeepSeek-V3's fp8 GEMM asks for 8 warps on
/// 64-row tiles, which then ran on mma.sync (emulated for fp8 on sm_90) at
/// 0.31 of Triton's speed, where Triton splits N between two warpgroups.
/// The language cannot observe the warp count, so the results are the
/// same; the metadata's launch_warps says what a launch starts. Where the
/// warpgroups can split N instead (kiln-assign-layouts does so when every
/// dot has one shape and takes a from shared memory, and for attention
/// whose p @ v splits N: compiler/ir/ChainedDots.h), the kernel keeps its
/// warps, as upstream's. Returns the largest multiple of 4 below
/// `requested` whose warpgroups tile the M of every dot (all 2-D, 16- or
/// 8-bit operands, at most 256 columns); `requested` otherwise, or when the
/// kernel has no dot.
unsigned warpsForWgmma(mlir::ModuleOp module, const kiln::TargetInfo &target,
                       unsigned requested) {
  // A kernel that reads its warps (tl.extra.cuda.num_warps) keeps them.
  if (!target.hasWgmma() || requested <= 4 ||
      module->hasAttr("kiln.fixed_warps"))
    return requested;
  unsigned best = requested;
  bool any = false, all = true;
  // Whether every dot lets warpgroups split N: one shape, a loaded (not
  // computed element by element, which wgmma would read from registers).
  bool splitN = true;
  std::optional<llvm::SmallVector<int64_t>> shape;
  module.walk([&](kiln::DotOp dot) {
    mlir::RankedTensorType acc = dot.getType();
    std::optional<kiln::TensorCoreFlavour> flavour = kiln::tensorCoreFlavour(
        dot.getA().getType().getElementType(),
        dot.getB().getType().getElementType(), acc.getElementType(),
        dot.getInputPrecision(), target);
    mlir::Operation *aDef = dot.getA().getDefiningOp();
    bool aComputed =
        aDef && aDef->getNumRegions() == 0 && !mlir::isa<kiln::DotOp>(aDef) &&
        mlir::isMemoryEffectFree(aDef) &&
        llvm::any_of(aDef->getOperandTypes(), [&](mlir::Type t) {
          return t == dot.getA().getType() ||
                 (mlir::isa<mlir::RankedTensorType>(t) &&
                  mlir::cast<mlir::RankedTensorType>(t).getShape() ==
                      dot.getA().getType().getShape());
        });
    if (!flavour || aComputed || acc.getRank() != 2 ||
        flavour->columnsSplittingN(acc.getDimSize(0), acc.getDimSize(1),
                                   requested) == 0 ||
        (shape && llvm::ArrayRef(*shape) != acc.getShape()))
      splitN = false;
    shape.emplace(acc.getShape().begin(), acc.getShape().end());
  });
  if (splitN && shape)
    return requested;
  // Attention at 64 rows whose p @ v can split N (compiler/ir/ChainedDots.h)
  // keeps its warps, as upstream's, where at 4 warps one accumulator would
  // take half a thread's registers (p @ v at 256 columns, wgmma's widest),
  // which with the scores beside it spill: SGLang's extend attention at head
  // dim 256 runs at 1.23 of Triton at 8 warps, 1.01 at 4. Below that, 4
  // warps win, no warpgroup computing a copy of the scores (at head dim 192
  // 2.52 against 1.22 at 8; FLA's chunk_fwd_o 1.91 against 1.69).
  if (kiln::splitChainedDots(module, target, requested)) {
    int64_t largest = 0;
    module.walk([&](kiln::DotOp dot) {
      largest = std::max(largest, dot.getType().getNumElements());
    });
    if (largest / (4 * kiln::TargetInfo::kThreadsPerWarp) >= 128)
      return requested;
  }
  module.walk([&](kiln::DotOp dot) {
    any = true;
    mlir::RankedTensorType acc = dot.getType();
    std::optional<kiln::TensorCoreFlavour> flavour = kiln::tensorCoreFlavour(
        dot.getA().getType().getElementType(),
        dot.getB().getType().getElementType(), acc.getElementType(),
        dot.getInputPrecision(), target);
    int64_t m = acc.getRank() == 2 ? acc.getDimSize(0) : 0;
    int64_t n = acc.getRank() == 2 ? acc.getDimSize(1) : 0;
    // tf32 and its emulations need both tiles K-major or split the
    // operands in registers: those keep the config's warps.
    if (!flavour || flavour->split != kiln::TensorCoreFlavour::Split::None ||
        flavour->elementBytes == 4 || m < 64 || m % 64 != 0 || n % 8 != 0 ||
        n > 256 || (flavour->integer && n > 32 && n % 16 != 0) ||
        m >= 16 * int64_t(requested)) {
      all = false;
      return;
    }
    unsigned fits = 4;
    while (fits * 2 < requested && m % (16 * int64_t(fits) * 2) == 0)
      fits *= 2;
    best = std::min(best, fits);
  });
  return any && all ? best : requested;
}

/// The module's `kiln_gpu.tensor_maps` (kiln-pipeline-dots: the encoding of
/// each tensor map a TMA copy reads, by entry-point argument) by the name of
/// the descriptor parameter whose first argument is the map.
std::map<std::string, kiln::TensorMapEncoding>
tensorMapsByParameter(mlir::ModuleOp module,
                      const kiln::frontend::KernelSpec &spec) {
  std::map<std::string, kiln::TensorMapEncoding> result;
  auto maps =
      module->getAttrOfType<mlir::DictionaryAttr>("kiln_gpu.tensor_maps");
  if (!maps)
    return result;
  unsigned arg = 0;
  for (const kiln::frontend::ParamSpec *leaf : spec.leaves()) {
    const kiln::frontend::ParamSpec &p = *leaf;
    if (!p.isKernelArgument())
      continue;
    if (!p.type.isTensorDescriptor()) {
      ++arg;
      continue;
    }
    if (auto entry = maps.getAs<mlir::DictionaryAttr>(std::to_string(arg))) {
      kiln::TensorMapEncoding &encoding = result[p.name];
      if (auto box = entry.getAs<mlir::DenseI64ArrayAttr>("box"))
        encoding.box.assign(box.asArrayRef().begin(), box.asArrayRef().end());
      if (auto swizzle = entry.getAs<mlir::IntegerAttr>("swizzle"))
        encoding.swizzle = unsigned(swizzle.getInt());
    }
    arg += 2 + 2 * unsigned(p.type.blockShape.size());
  }
  return result;
}

} // namespace

void kiln::registerMLIRCommandLineOptions() {
  mlir::registerMLIRContextCLOptions();
  mlir::registerAsmPrinterCLOptions();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
}

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
  // One kernel per process (build systems run many processes at once): no
  // threads, which also lets --mlir-print-ir-* and the crash reproducer work
  // at module scope.
  context.disableMultithreading();
  mlir::SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  // MLIR's --mlir-timing: one report for every pass manager below.
  mlir::DefaultTimingManager timing;
  mlir::applyDefaultTimingManagerCLOptions(timing);
  mlir::TimingScope timingRoot = timing.getRootScope();
  // Each pass manager takes MLIR's command-line options
  // (--mlir-print-ir-after-all, --mlir-pass-pipeline-crash-reproducer, ...)
  // and times its passes under a scope of its own: MLIR keys a pass's timer
  // by the pass's address, which a later pass manager's pass may reuse once
  // the earlier one is gone, and would then merge into the earlier's line.
  auto configure = [&](mlir::PassManager &pm, mlir::TimingScope &scope) {
    if (failed(mlir::applyPassManagerCLOptions(pm)))
      return false;
    pm.enableTiming(scope);
    return true;
  };

  // Stage 1: parse.
  mlir::TimingScope frontEndTimer = timingRoot.nest("front end (kiln IR)");
  std::unique_ptr<frontend::Module> ast = frontend::parseModule(sourceMgr);
  if (!ast)
    return 1;

  // Stage 2: staged evaluation into kiln IR for this signature.
  frontend::Emitter emitter(sourceMgr, context, *ast, options.srcs,
                            frontend::HostTarget::forArch(options.arch));
  emitter.setDebug(options.debug);
  // The name the kernel answers to ("Cls.kernel" for a class's static
  // method) names it in messages and the metadata; its def's own name is the
  // entry point's.
  std::string kernelName;
  const frontend::FunctionDefStmt *kernel =
      emitter.findKernel(options.kernelName, &kernelName);
  if (!kernel)
    return 1;
  auto decls = emitter.paramDecls(*kernel);
  if (!decls)
    return 1;
  auto spec =
      frontend::parseSignature(options.signature, *decls, options.aligned);
  if (!spec) {
    sourceMgr.PrintMessage(kernel->nameLoc, SourceMgr::DK_Error,
                           "bad signature for '" + kernelName +
                               "': " + toString(spec.takeError()));
    return 1;
  }
  if (options.alignedPointers)
    frontend::assumeAlignedPointers(*spec);
  if (!emitter.applyHeuristics(*kernel, *spec))
    return 1;
  if (Error unsupported = frontend::checkLaunchOptionsSupported(*spec)) {
    sourceMgr.PrintMessage(kernel->nameLoc, SourceMgr::DK_Error,
                           "kernel '" + kernelName +
                               "': " + toString(std::move(unsupported)));
    return 1;
  }
  if (options.numWarpsGiven && !spec->numWarpsGiven)
    spec->numWarps = options.numWarps;
  if (options.numStagesGiven && !spec->numStagesGiven)
    spec->numStages = options.numStages;
  mlir::OwningOpRef<mlir::ModuleOp> module = emitter.emitKernel(*kernel, *spec);
  if (!module || failed(mlir::verify(*module)))
    return 1;
  frontEndTimer.stop();
  {
    mlir::TimingScope stageTimer = timingRoot.nest("kiln IR clean-up");
    mlir::PassManager pm(&context);
    pm.addPass(mlir::createCanonicalizerPass());
    pm.addPass(mlir::createCSEPass());
    if (!configure(pm, stageTimer) || failed(pm.run(*module)))
      return 1;
  }
  if (!writer.write(Stage::Kiln, "01-kiln.mlir", printed(*module)))
    return 1;
  if (writer.done)
    return 0;

  // Stage 3: tensor descriptors and block pointers to tensors of pointers,
  // layouts, the software pipeline of tensor-core loops, shared-memory offsets.
  // Stage 4: LLVM and NVVM dialects. Both as compiler/conversion/KilnPipeline.h
  // builds them (kiln-opt --kiln-pipeline replays them on 01-kiln.mlir).
  // The warps the kernel is compiled for: the config's num_warps (which the
  // metadata keeps), or fewer where wgmma needs them (warpsForWgmma).
  unsigned warps = spec->numWarps;
  if (std::optional<TargetInfo> target = TargetInfo::parse(arch->name))
    warps = warpsForWgmma(*module, *target, warps);
  KilnPipelineOptions pipelineOptions;
  pipelineOptions.arch = arch->name;
  pipelineOptions.numWarps = warps;
  pipelineOptions.numStages = spec->numStages;
  pipelineOptions.flatten = options.flatten;
  auto runPasses = [&](auto build, StringRef stage) {
    mlir::TimingScope stageTimer =
        timingRoot.nest(("passes (" + stage + ")").str());
    mlir::PassManager pm(&context);
    build(pm, pipelineOptions);
    if (!configure(pm, stageTimer))
      return mlir::LogicalResult::failure();
    // --dump-ir: the IR after every pass that changed it, one file each.
    if (!options.dumpDir.empty()) {
      std::string dir = options.dumpDir + "/passes/" + stage.str();
      if (std::error_code error = sys::fs::create_directories(dir)) {
        errs() << "kilnc: cannot create " << dir << ": " << error.message()
               << "\n";
        return mlir::LogicalResult::failure();
      }
      pm.enableIRPrintingToFileTree(
          [](mlir::Pass *, mlir::Operation *) { return false; },
          [](mlir::Pass *, mlir::Operation *) { return true; },
          /*printModuleScope=*/true, /*printAfterOnlyOnChange=*/true,
          /*printAfterOnlyOnFailure=*/false, dir);
    }
    return pm.run(*module);
  };
  // A flattened loop keeps its rings live through the tile's epilogue: when
  // that exceeds shared memory, the kernel is compiled again from here with
  // the loops nested, as it would be without flatten.
  mlir::OwningOpRef<mlir::ModuleOp> nested;
  module->walk([&](mlir::Operation *op) {
    if (!nested && options.flatten && op->hasAttr("kiln.flatten"))
      nested = module->clone();
  });
  // What the loop below settles on.
  std::string ptx;
  std::optional<CubinInfo> cubin;
  int64_t sharedBytes = 0;
  bool spilledForOccupancy = false;
  // The result with deferred dot waits, while the kernel is compiled again
  // without them (below).
  struct Settled {
    std::string ptx;
    CubinInfo cubin;
    int64_t sharedBytes;
    bool spilledForOccupancy;
    mlir::OwningOpRef<mlir::ModuleOp> module;
  };
  std::optional<Settled> deferred;
  // The result with rings for operands computed before their loops, while
  // the kernel is compiled again without them (below).
  std::optional<Settled> ringed;
  auto blocksPerSM = [&](const CubinInfo &info, int64_t shared) {
    return kiln::blocksPerSM(TargetInfo::of(*module),
                             warps * TargetInfo::kThreadsPerWarp,
                             shared + info.staticSharedBytes, info.registers);
  };
  for (;;) {
    // The kiln IR this attempt starts from, for the retries below.
    mlir::OwningOpRef<mlir::ModuleOp> input = module->clone();
    if (failed(runPasses(buildKilnGpuPipeline, "gpu")))
      return 1;
    if (!writer.write(Stage::Gpu, "02-kiln-gpu.mlir", printed(*module)))
      return 1;
    if (writer.done)
      return 0;
    // With doesNotFit or a nested form to fall back on, the stage's
    // diagnostics wait until it is known whether the variant failed only
    // for its shared memory.
    std::vector<mlir::Diagnostic> held;
    std::optional<mlir::ScopedDiagnosticHandler> hold;
    bool tightTiles = (*module)->hasAttr(kiln::kTightTmaStoreTilesAttr);
    bool copiedAtLoads = (*module)->hasAttr(kiln::kCopiedAtLoadsAttr);
    bool besideLiveBuffers =
        (*module)->hasAttr(kiln::kStagedBesideLiveBuffersAttr);
    if (options.doesNotFit || nested || tightTiles || copiedAtLoads ||
        besideLiveBuffers)
      hold.emplace(&context, [&](mlir::Diagnostic &diagnostic) {
        held.push_back(std::move(diagnostic));
        return mlir::success();
      });
    bool failedStage = failed(runPasses(buildKilnLLVMPipeline, "llvm"));
    hold.reset();
    auto needed =
        (*module)->getAttrOfType<mlir::IntegerAttr>("kiln_gpu.shared_bytes");
    bool tooBig = failedStage && needed &&
                  needed.getInt() > TargetInfo::of(*module).maxSharedBytes() &&
                  held.size() == 1;
    // Dot tiles placed in the bytes of buffers dead beside them, with no
    // room left for the scratch of single ops: compiled again with every
    // dot's tiles counted beside all the function's buffers.
    if (tooBig && besideLiveBuffers) {
      module = std::move(input);
      pipelineOptions.stageBesideLiveBuffers = false;
      continue;
    }
    // A TMA store's tile kept across its loop with no room left for the
    // scratch of single ops (tutorial 08's 128x128x128 config: a 32 KB C
    // tile beside 192 KB of rings): compiled again with the usual margin,
    // which waits for each store at once where the tile does not fit.
    if (tooBig && tightTiles) {
      module = std::move(input);
      pipelineOptions.tmaStoreScratchMargin =
          KilnTmaStoresOptions().scratchMargin;
      continue;
    }
    // A dot operand copied into its tile where it was loaded keeps the tile
    // from the load on: where the ops between need the bytes, compiled
    // again with the tiles written right before their dots.
    if (tooBig && copiedAtLoads) {
      module = std::move(input);
      pipelineOptions.copyAtLoads = false;
      continue;
    }
    if (tooBig && nested) {
      module = std::move(nested);
      pipelineOptions.flatten = false;
      continue;
    }
    if (tooBig && options.doesNotFit) {
      *options.doesNotFit = held.front().str();
      return kExitDoesNotFit;
    }
    for (mlir::Diagnostic &diagnostic : held)
      context.getDiagEngine().emit(std::move(diagnostic));
    if (failedStage)
      return 1;
    if (!writer.dump("03-llvm.mlir", printed(*module)))
      return 1;
    sharedBytes = 0;
    if (auto bytes = (*module)->getAttrOfType<mlir::IntegerAttr>(
            "kiln_gpu.shared_bytes"))
      sharedBytes = bytes.getInt();

    // Stage 5: LLVM IR, optimized; then PTX.
    LLVMContext llvmContext;
    std::unique_ptr<Module> llvmModule =
        mlir::translateModuleToLLVMIR(*module, llvmContext, kernel->name);
    if (!llvmModule)
      return fail("translation to LLVM IR failed");
    // Optimizes llvmModule in place.
    mlir::TimingScope ptxTimer = timingRoot.nest("LLVM O3 and NVPTX (PTX)");
    auto candidates = emitPTX(*llvmModule, *arch, options.libdevicePath);
    ptxTimer.stop();
    if (!writer.write(Stage::LLVM, "04-llvm.ll", printed(*llvmModule)))
      return 1;
    if (writer.done)
      return 0;
    if (!candidates)
      return fail(toString(candidates.takeError()));
    ptx = std::move(candidates->plain);
    mlir::TimingScope ptxasTimer = timingRoot.nest("ptxas (cubin)");
    std::optional<CubinInfo> chosen;
    bool rematerialized = false;
    if (candidates->rematerialized) {
      chosen = keepFasterRegisterUse(ptx, *candidates->rematerialized, *arch,
                                     options.ptxasPath, TargetInfo::of(*module),
                                     warps * TargetInfo::kThreadsPerWarp,
                                     sharedBytes, rematerialized);
    }
    if (candidates->emitRegisterOrdered) {
      if (!chosen) {
        auto plain = assembleCubin(ptx, *arch, options.ptxasPath);
        if (plain)
          chosen = std::move(*plain);
        else
          consumeError(plain.takeError());
      }
      if (chosen)
        keepMoreBlocksPerSM(ptx, *chosen, candidates->emitRegisterOrdered,
                            *arch, options.ptxasPath, TargetInfo::of(*module),
                            warps * TargetInfo::kThreadsPerWarp, sharedBytes);
    }
    if (!writer.write(Stage::PTX, "05-kernel.ptx", ptx))
      return 1;
    if (writer.done)
      return 0;
    // Stage 6: cubin and metadata.
    Expected<CubinInfo> assembled =
        chosen ? Expected<CubinInfo>(std::move(*chosen))
               : assembleCubin(ptx, *arch, options.ptxasPath);
    // Without an occupancy hint ptxas may aim at as many blocks per SM as the
    // threads allow (32 registers at 256 threads) and spill a tensor-core
    // accumulator by kilobytes. A kernel that spills below the register limit
    // is assembled again with `.minnctapersm 1` (one block per SM is enough),
    // and the result that spills less is kept.
    const bool large = isLargeKernelPTX(ptx); // assembled once
    if (assembled && !large && spillsBelowRegisterLimit(*assembled)) {
      auto hinted = assembleWithDirective(ptx, ".minnctapersm 1", *arch,
                                          options.ptxasPath);
      if (hinted && hinted->second.spillBytes < assembled->spillBytes) {
        ptx = std::move(hinted->first);
        assembled = std::move(hinted->second);
      }
    }
    // Spills the register cap chose (kCapSpillAllowance) are no mistake of
    // the kernel's to warn about.
    spilledForOccupancy = false;
    // A warp-specialized kernel sets its own `.maxnreg` for setmaxnreg.
    bool specialized =
        (*module)->hasAttr(kiln::gpu::KilnGPUDialect::kProducerWarpsAttrName);
    if (assembled && !specialized && !large) {
      unsigned uncapped = assembled->spillBytes;
      spilledForOccupancy = capRegistersForOccupancy(
                                ptx, *assembled, TargetInfo::of(*module), warps,
                                sharedBytes, options.ptxasPath, *arch) &&
                            uncapped == 0;
      if (rematerialized)
        spendRegisterBudget(ptx, *assembled, TargetInfo::of(*module), warps,
                            sharedBytes, options.ptxasPath, *arch);
    }
    ptxasTimer.stop();
    if (!assembled)
      return fail(toString(assembled.takeError()));
    cubin = std::move(*assembled);
    // A flattened loop keeps the tile's accumulator live through its
    // epilogue. Where that costs more than a few spilled registers, the
    // nested loops run faster (H200, tutorial 09's pointer persistent
    // matmul at fp16: 344 bytes of spill stores and loads, 0.90 of Triton
    // flattened, 0.92-0.96 nested; its TMA form at fp8, 96 bytes, is faster
    // flattened), and the kernel is compiled again with them. (--emit llvm
    // or ptx stops before this, with the flattened form.)
    if (nested && pipelineOptions.flatten &&
        cubin->spillBytes > kFlattenSpillAllowance) {
      module = std::move(nested);
      pipelineOptions.flatten = false;
      continue;
    }
    // A dot kept in flight into the next iteration (attention's p @ v) holds
    // its registers across the loop's back edge. Where ptxas then lacks
    // registers to pipeline the wgmma and serializes them (often under the
    // occupancy cap above), waiting for that dot in its own iteration frees
    // them: tutorial 06's forward at d64 keeps 168 registers and 3 blocks
    // per SM without serializing (H200, batch 4, 32 heads: 1.12 / 1.04 /
    // 1.02 of Triton at N_CTX 1024 / 4096 / 16384 -> 1.19 / 1.09 / 1.06).
    // The kernel is compiled again so, and the serialized result is kept
    // only where the other serializes too or spills more.
    if (cubin->serializesWgmma && pipelineOptions.deferDotWaits &&
        (*module)->hasAttr(kiln::kDeferredDotWaitsAttr)) {
      deferred = Settled{std::move(ptx), std::move(*cubin), sharedBytes,
                         spilledForOccupancy, std::move(module)};
      module = std::move(input);
      pipelineOptions.deferDotWaits = false;
      continue;
    }
    if (deferred && (cubin->serializesWgmma ||
                     cubin->spillBytes > deferred->cubin.spillBytes +
                                             kUndeferredSpillAllowance)) {
      ptx = std::move(deferred->ptx);
      cubin = std::move(deferred->cubin);
      sharedBytes = deferred->sharedBytes;
      spilledForOccupancy = deferred->spilledForOccupancy;
      module = std::move(deferred->module);
    }
    // Rings for a dot operand computed before its loop (attention's scaled
    // q, on sm_90a) take shared memory beside the loop's rings: where that
    // costs blocks per SM (triton-lang/kernels' d128 causal forward, two ->
    // one: 1.17 -> 0.98 of Triton), the kernel staged per iteration runs
    // faster; where it does not (segment-anything-fast's ViT-H attention,
    // one block an SM by its registers: 0.75 -> 0.89), the rings do. The
    // kernel is compiled again without them, and the ringed form kept
    // unless the other holds more blocks per SM.
    if (!ringed && pipelineOptions.invariantRings &&
        (*module)->hasAttr(kiln::kInvariantOperandRingsAttr)) {
      ringed = Settled{std::move(ptx), std::move(*cubin), sharedBytes,
                       spilledForOccupancy, std::move(module)};
      module = std::move(input);
      pipelineOptions.invariantRings = false;
      pipelineOptions.deferDotWaits = true;
      deferred.reset();
      continue;
    }
    if (ringed && blocksPerSM(*cubin, sharedBytes) <=
                      blocksPerSM(ringed->cubin, ringed->sharedBytes)) {
      ptx = std::move(ringed->ptx);
      cubin = std::move(ringed->cubin);
      sharedBytes = ringed->sharedBytes;
      spilledForOccupancy = ringed->spilledForOccupancy;
      module = std::move(ringed->module);
    }
    break;
  }
  // The PTX fallback comes from this same compile: the text ptxas assembled.
  if (!options.ptxOutputPath.empty() &&
      !writer.writeFile(options.ptxOutputPath, ptx))
    return 1;
  if (!writer.dump("06-ptxas.log", cubin->log) ||
      !writer.writeFile(options.outputPath, cubin->cubin))
    return 1;
  if (cubin->spillBytes > 0 && !spilledForOccupancy)
    WithColor::warning(errs(), "kilnc")
        << "kernel '" << kernelName << "' for " << arch->name << " ["
        << spec->str() << "; num_warps=" << warps
        << ", num_stages=" << spec->numStages << "] spills "
        << cubin->spillBytes
        << " bytes (spill stores + loads, as ptxas reports them) with "
        << cubin->registers
        << " registers; fewer elements per thread (smaller blocks or more "
           "warps) avoid it\n";
  // ptxas serializes every wgmma of a kernel it cannot keep in flight (a
  // call in the kernel, an accumulator it must move): a tensor-core kernel
  // then runs at a fraction of its speed, which a user should hear of.
  for (StringRef line : llvm::split(cubin->log, '\n'))
    if (cubin->serializesWgmma &&
        line.contains("wgmma.mma_async instructions are serialized"))
      WithColor::warning(errs(), "kilnc")
          << "kernel '" << kernelName << "' for " << arch->name << ": "
          << line.substr(line.find("wgmma")).rtrim() << " (ptxas)\n";
  if (!options.metadataPath.empty()) {
    // The ptxas version is part of the compiler's identity.
    auto ptxasVersion = kiln::ptxasVersion(options.ptxasPath);
    if (!ptxasVersion)
      return fail(toString(ptxasVersion.takeError()));
    std::string json;
    raw_string_ostream os(json);
    VariantMetadata metadata{kernelName,
                             kernel->name,
                             arch->name,
                             &*spec,
                             &*cubin,
                             /*dynamicSharedBytes=*/unsigned(sharedBytes),
                             sourceHash,
                             *ptxasVersion};
    metadata.tensorMaps = tensorMapsByParameter(*module, *spec);
    if (auto scratch = (*module)->getAttrOfType<mlir::IntegerAttr>(
            kiln::kGlobalScratchBytesAttr))
      metadata.globalScratchBytes = scratch.getInt();
    if (auto producers = (*module)->getAttrOfType<mlir::IntegerAttr>(
            kiln::gpu::KilnGPUDialect::kProducerWarpsAttrName))
      metadata.producerWarps = unsigned(producers.getInt());
    if (warps != spec->numWarps)
      metadata.launchWarps = warps;
    writeMetadata(os, metadata);
    if (!writer.writeFile(options.metadataPath, json))
      return 1;
  }
  return 0;
}
