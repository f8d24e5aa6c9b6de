//===- PTXEmission.cpp - LLVM IR to PTX through the NVPTX backend ---------===//
#include "compiler/target/DisjointOrsAsAdds.h"
#include "compiler/target/HalfMulAdds.h"
#include "compiler/target/MasksAfterDotWaits.h"
#include "compiler/target/RematerializeAfterLoops.h"
#include "compiler/target/RematerializeInLoops.h"
#include "compiler/target/SinkPastBarriers.h"
#include "compiler/target/StrengthReductionGate.h"
#include "compiler/target/Target.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <mutex>

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

using namespace llvm;

// Off only to compare code with and without it (bench/README.md).
static cl::opt<bool> slpVectorize(
    "kiln-slp-vectorize", cl::init(true), cl::Hidden,
    cl::desc("Pair 16-bit float ops into f16x2/bf16x2 instructions (the SLP "
             "vectorizer in the O3 pipeline)"));

namespace {
/// kiln::formHalfMulAdds as a function pass, for the PassBuilder.
struct HalfMulAddsPass : PassInfoMixin<HalfMulAddsPass> {
  PreservedAnalyses run(Function &function, FunctionAnalysisManager &) {
    if (!kiln::formHalfMulAdds(function))
      return PreservedAnalyses::all();
    PreservedAnalyses preserved;
    preserved.preserveSet<CFGAnalyses>();
    return preserved;
  }
};
} // namespace

static void initializeNVPTX() {
  static std::once_flag initialized;
  std::call_once(initialized, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    // Shared, local and constant pointers in 32 bits (the data layout's
    // p3:32:32): a shared-memory address is then one register instead of a
    // pair, which the exchange arrays of layout conversions and the operand
    // rings use by the dozen. The backend has no API for it, only this
    // option, which it reads when it makes a target machine.
    auto &options = cl::getRegisteredOptions();
    auto shortPointers = options.find("nvptx-short-ptr");
    if (shortPointers != options.end())
      static_cast<cl::opt<bool> *>(shortPointers->second)->setValue(true);
    // Off: the SLP vectorizer's horizontal-reduction seeds (unless asked
    // for on the command line). Kiln's reductions combine a thread's
    // registers in order, so fp16 sums have no reassociable reductions for
    // them to find, and seeding from them paired two independent chains
    // lane by lane (gemlite's GEMV: its two K chunks' sums of one column,
    // each pair's a packed anew for every column: 507 PRMTs, 128
    // registers). Without them those chains stay scalar in PTX and ptxas
    // pairs neighbouring columns, a broadcast (256 PRMTs, 69 registers); of
    // 862 bench and differential cubins only that one changed.
    auto horizontal = options.find("slp-vectorize-hor");
    if (horizontal != options.end() &&
        horizontal->second->getNumOccurrences() == 0)
      static_cast<cl::opt<bool> *>(horizontal->second)->setValue(false);
  });
}

std::vector<std::string> kiln::supportedArchs() {
  initializeNVPTX();
  std::string error;
  Triple triple("nvptx64-nvidia-cuda");
  const Target *target = TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return {};
  std::unique_ptr<MCSubtargetInfo> info(
      target->createMCSubtargetInfo(triple, "sm_80", ""));
  std::vector<std::string> archs;
  if (!info)
    return archs;
  for (const SubtargetSubTypeKV &cpu : info->getAllProcessorDescriptions()) {
    StringRef name = cpu.Key;
    StringRef digits = name;
    unsigned cc = 0;
    if (!digits.consume_front("sm_"))
      continue;
    if (!digits.consume_back("a"))
      digits.consume_back("f");
    if (!digits.getAsInteger(10, cc) && cc >= 80)
      archs.push_back(name.str());
  }
  // By compute capability (sm_80 ... sm_121f), not as LLVM's table sorts the
  // names (sm_100 before sm_80); sm_XY, then sm_XYa, then sm_XYf.
  auto key = [](StringRef name) {
    StringRef digits = name.drop_front(3); // "sm_"
    unsigned cc = 0;
    char suffix = 0;
    if (digits.ends_with("a") || digits.ends_with("f")) {
      suffix = digits.back();
      digits = digits.drop_back();
    }
    digits.getAsInteger(10, cc);
    return std::make_pair(cc, suffix);
  };
  llvm::stable_sort(archs, [&](const std::string &a, const std::string &b) {
    return key(a) < key(b);
  });
  return archs;
}

Expected<kiln::TargetArch> kiln::TargetArch::parse(StringRef spelling) {
  // `90a` and `90a-real` (CMake's CUDA_ARCHITECTURES) name sm_90a too.
  StringRef digits = spelling;
  if (!digits.consume_front("sm_"))
    digits.consume_back("-real");
  std::string name = ("sm_" + digits).str();
  std::vector<std::string> supported = supportedArchs();
  if (!is_contained(supported, name)) {
    std::string hint;
    if (spelling.ends_with("-virtual"))
      hint = " (Kiln compiles cubins for real architectures; the rules embed "
             "PTX for the highest arch by default)";
    return createStringError(
        inconvertibleErrorCode(),
        formatv("unsupported architecture '{0}'{1} (supported: {2}; also "
                "spelled 80, 86, ..., 90a; `kilnc archs` lists those the "
                "installed ptxas assembles)",
                spelling, hint, join(supported, ", ")));
  }
  TargetArch arch;
  arch.name = name;
  arch.archSpecific = digits.consume_back("a");
  if (!arch.archSpecific)
    digits.consume_back("f");
  unsigned cc = 0;
  digits.getAsInteger(10, cc);
  arch.major = cc / 10;
  arch.minor = cc % 10;
  return arch;
}

// Links libdevice when the module calls __nv_* functions. Only what is used
// is linked; O3 then inlines it.
static Error linkLibdevice(Module &module, StringRef libdevicePath) {
  bool needed = llvm::any_of(module.functions(), [](const Function &f) {
    return f.isDeclaration() && f.getName().starts_with("__nv_");
  });
  if (!needed)
    return Error::success();
  std::string path = libdevicePath.str();
  if (path.empty()) {
    const char *home = std::getenv("CUDA_HOME");
    path = std::string(home ? home : "/usr/local/cuda") +
           "/nvvm/libdevice/libdevice.10.bc";
  }
  auto buffer = MemoryBuffer::getFile(path);
  if (!buffer)
    return createStringError(inconvertibleErrorCode(),
                             "cannot read libdevice at " + path + ": " +
                                 buffer.getError().message() +
                                 " (pass --libdevice, or set CUDA_HOME to "
                                 "the CUDA toolkit)");
  auto libdevice =
      parseBitcodeFile((*buffer)->getMemBufferRef(), module.getContext());
  if (!libdevice)
    return libdevice.takeError();
  (*libdevice)->setTargetTriple(module.getTargetTriple());
  (*libdevice)->setDataLayout(module.getDataLayout());
  if (Linker::linkModules(module, std::move(*libdevice),
                          Linker::LinkOnlyNeeded))
    return createStringError(inconvertibleErrorCode(),
                             "linking libdevice failed");
  // libdevice's __nvvm_reflect queries take its flush-to-zero paths, as
  // upstream sets them (its set_nvvm_reflect_ftz): libdevice results then
  // match Triton's bit for bit. The kernel's own arithmetic keeps denormals.
  module.addModuleFlag(Module::Override, "nvvm-reflect-ftz", uint32_t(1));
  for (Function &f : module.functions())
    if (!f.isDeclaration() && f.getName().starts_with("__nv_"))
      f.setLinkage(GlobalValue::InternalLinkage);
  return Error::success();
}

/// Whether `module` issues tensor-core instructions (mma.sync, wgmma), which
/// kilnc writes as inline assembly or NVVM intrinsics.
static bool usesTensorCores(const Module &module) {
  for (const Function &function : module)
    for (const BasicBlock &block : function)
      for (const Instruction &instruction : block) {
        const auto *call = dyn_cast<CallBase>(&instruction);
        if (!call)
          continue;
        if (const auto *assembly =
                dyn_cast<InlineAsm>(call->getCalledOperand()))
          if (StringRef(assembly->getAsmString()).contains("mma."))
            return true;
        if (const Function *callee = call->getCalledFunction())
          if (callee->getName().starts_with("llvm.nvvm.mma") ||
              callee->getName().starts_with("llvm.nvvm.wgmma"))
            return true;
      }
  return false;
}

/// A target machine made by `create` whose instruction selection orders each
/// block to keep fewer values live (the NVPTX backend's "nvptx-sched4reg";
/// its default is source order). The backend reads the option when a
/// machine is made, and has no API for it: the option is set around the
/// call, under a lock, so that no other machine is made with it set.
static std::unique_ptr<TargetMachine> createRegisterOrderedMachine(
    function_ref<std::unique_ptr<TargetMachine>()> create) {
  static std::mutex lock;
  std::lock_guard<std::mutex> held(lock);
  auto &registered = cl::getRegisteredOptions();
  auto option = registered.find("nvptx-sched4reg");
  if (option == registered.end())
    return nullptr;
  auto *flag = static_cast<cl::opt<bool> *>(option->second);
  flag->setValue(true);
  std::unique_ptr<TargetMachine> machine = create();
  flag->setValue(false);
  return machine;
}

/// The PTX the NVPTX backend prints for `module`.
static Expected<std::string> emitAssembly(TargetMachine &machine,
                                          Module &module) {
  std::string ptx;
  {
    raw_string_ostream os(ptx);
    // Flushed into `ptx` when it goes out of scope.
    buffer_ostream pstream(os);
    legacy::PassManager codegen;
    if (machine.addPassesToEmitFile(codegen, pstream, nullptr,
                                    CodeGenFileType::AssemblyFile))
      return createStringError(inconvertibleErrorCode(),
                               "the NVPTX backend cannot emit assembly");
    codegen.run(module);
  }
  return ptx;
}

bool kiln::isLargeKernelPTX(StringRef ptx) {
  return size_t(ptx.count('\n')) > kLargeKernelPTXLines;
}

Expected<kiln::PTXCandidates>
kiln::emitPTX(Module &module, const TargetArch &arch, StringRef libdevicePath) {
  initializeNVPTX();
  Triple triple("nvptx64-nvidia-cuda");
  std::string error;
  const Target *target = TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return createStringError(inconvertibleErrorCode(),
                             "NVPTX backend unavailable: " + error);
  // PTX ISA 8.7 (what ptxas 12.8+ reads), unless the arch first appears in a
  // later one (the PTX ISA's target table; LLVM's NVPTX stops with a fatal
  // error on an older version than the arch's).
  std::string features = "+ptx87";
  StringRef family = StringRef(arch.name).rtrim("af");
  if (family == "sm_88" || family == "sm_110")
    features = "+ptx90";
  else if (family == "sm_103" || family == "sm_121" ||
           StringRef(arch.name).ends_with("f"))
    features = "+ptx88";
  TargetOptions options;
  // a * b + c may become one FMA, as upstream Triton allows by default
  // (enable_fp_fusion): PTX then carries add/mul without a rounding mode,
  // which leaves ptxas free to fuse too. tl.div_rn/sqrt_rn and the
  // libdevice calls keep their own rounding.
  options.AllowFPOpFusion = FPOpFusion::Fast;
  // By value: the register-ordered copy may be emitted after this returns.
  auto createMachine = [=] {
    return std::unique_ptr<TargetMachine>(target->createTargetMachine(
        triple, arch.name, features, options, Reloc::PIC_, std::nullopt,
        CodeGenOptLevel::Aggressive));
  };
  std::unique_ptr<TargetMachine> machine = createMachine();
  if (!machine)
    return createStringError(inconvertibleErrorCode(),
                             "cannot create an NVPTX target machine for " +
                                 arch.name);
  module.setTargetTriple(triple);
  module.setDataLayout(machine->createDataLayout());
  if (Error err = linkLibdevice(module, libdevicePath))
    return std::move(err);

  // The standard O3 pipeline, as clang would run it, with the SLP
  // vectorizer on, as clang turns it on at O3 and upstream Triton does too.
  // Within the NVPTX backend's 32-bit vector registers it pairs 16-bit
  // float ops (a dequantized fp16 weight times its scale: one mul.f16x2 for
  // two elements, where two mul.f16 each leave half of an HMUL2 idle).
  // Multiply-adds are formed first (HalfMulAdds.h), so that pairing them
  // does not undo the backend's FMA contraction.
  {
    LoopAnalysisManager lam;
    FunctionAnalysisManager fam;
    CGSCCAnalysisManager cgam;
    ModuleAnalysisManager mam;
    PipelineTuningOptions tuning;
    tuning.SLPVectorization = slpVectorize;
    PassBuilder builder(machine.get(), tuning);
    if (slpVectorize)
      builder.registerVectorizerStartEPCallback(
          [](FunctionPassManager &passes, OptimizationLevel) {
            passes.addPass(HalfMulAddsPass());
          });
    builder.registerModuleAnalyses(mam);
    builder.registerCGSCCAnalyses(cgam);
    builder.registerFunctionAnalyses(fam);
    builder.registerLoopAnalyses(lam);
    builder.crossRegisterProxies(lam, fam, cgam, mam);
    ModulePassManager mpm =
        builder.buildPerModuleDefaultPipeline(OptimizationLevel::O3);
    mpm.run(module, mam);
  }

  // After O3, whose InstCombine would make them ors again, and fold the
  // masks' selects back into one fadd; and where no pass would hoist the
  // sunk arithmetic back (SinkPastBarriers.h).
  const bool tensorCores = usesTensorCores(module);
  for (Function &function : module)
    if (!function.isDeclaration()) {
      disjointOrsAsAdds(function);
      masksAfterDotWaits(function);
      if (!tensorCores)
        sinkPastBarriers(function);
    }

  // After O3, where no IR-level CSE runs after it to undo it.
  std::unique_ptr<Module> rematerialized = CloneModule(module);
  bool changed = false;
  for (Function &function : *rematerialized) {
    if (function.isDeclaration())
      continue;
    DominatorTree dominators(function);
    LoopInfo loops(dominators);
    changed |= rematerializeAfterLoops(function, dominators, loops);
    // Neither changes the CFG: the loops stay as they were.
    changed |= rematerializeInLoops(function, loops);
  }

  // SLSR in the NVPTX backend would take seconds on huge blocks
  // (StrengthReductionGate.h).
  StrengthReductionGate gate(module.getContext(), module);
  PTXCandidates candidates;
  // Code generation changes the module it runs on: the register-ordered
  // copy starts from the optimized module, emitted only where compileKernel
  // asks for it. Tensor-core kernels keep the order they were tuned with.
  if (!tensorCores) {
    std::shared_ptr<Module> input = CloneModule(module);
    candidates.emitRegisterOrdered =
        [input, createMachine]() -> Expected<std::string> {
      std::unique_ptr<TargetMachine> ordered =
          createRegisterOrderedMachine(createMachine);
      if (!ordered)
        return createStringError(inconvertibleErrorCode(),
                                 "the NVPTX backend has no nvptx-sched4reg");
      // SLSR's gate, as for the plain copy.
      StrengthReductionGate gate(input->getContext(), *input);
      return emitAssembly(*ordered, *input);
    };
  }
  auto plain = emitAssembly(*machine, module);
  if (!plain)
    return plain.takeError();
  candidates.plain = std::move(*plain);
  if (isLargeKernelPTX(candidates.plain)) {
    candidates.emitRegisterOrdered = nullptr;
    return candidates;
  }
  if (changed) {
    auto other = emitAssembly(*machine, *rematerialized);
    if (!other)
      return other.takeError();
    candidates.rematerialized = std::move(*other);
  }
  return candidates;
}
