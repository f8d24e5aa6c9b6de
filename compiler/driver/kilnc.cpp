//===- kilnc.cpp - the Kiln compiler driver
//--------------------------------===//
//
//   kilnc compile FILE.py [-n KERNEL] -s SIGNATURE --arch ARCH [-w N] [-ns N]
//         [--aligned | --aligned-pointers | --unit-strides] [--debug] -o OUT
//         [--emit kiln|gpu|llvm|ptx|cubin] [--metadata OUT.json] [--ptx-output
//         OUT.ptx]
//         [--dump-ir DIR] [--ptxas PATH] [--libdevice PATH]
//         [--resource-usage] [--mlir-* options of MLIR's pass manager]
//   kilnc compile FILE.py [-n KERNEL] -s SIGNATURE --arch ARCH
//         [--aligned | --aligned-pointers | --unit-strides] --autotune -o DIR
//         [--emit ...] compiles one variant per @triton.autotune config into
//         DIR
//   kilnc configs FILE.py [-n KERNEL] [--arch ARCH]
//         prints the kernel's @triton.autotune configs, one signature
//         fragment per line ("BLOCK=128, num_warps=4, num_stages=3")
//   kilnc check-spec FILE.py [-n KERNEL] [--autotune] [--where TEXT]
//         [-o STAMP] SIGNATURE...
//         checks each signature against the kernel's parameters (what the
//         build rules ask before compiling); prints only errors
//   kilnc archs [--ptxas PATH] [--all]
//         the archs kilnc compiles for that ptxas assembles, one per line
//   kilnc --version [--ptxas PATH]   kilnc, LLVM and ptxas versions
//   kilnc --help                     this usage
//
// One invocation compiles one (kernel, arch, variant), so that build systems
// can run many in parallel and cache each.
//
//===----------------------------------------------------------------------===//
#include "compiler/driver/AutotuneConfigs.h"
#include "compiler/driver/CheckSpec.h"
#include "compiler/driver/Metadata.h"
#include "compiler/driver/Pipeline.h"
#include "compiler/driver/UnitStrides.h"
#include "compiler/target/Target.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"

using namespace llvm;

/// --resource-usage: prints the report of each metadata file in `paths`.
/// Returns the process exit status.
static int printResourceUsage(ArrayRef<std::string> paths, raw_ostream &os) {
  for (const std::string &path : paths) {
    auto json = MemoryBuffer::getFile(path, /*IsText=*/true);
    if (!json) {
      WithColor::error(errs(), "kilnc")
          << "--resource-usage: cannot read " << path << ": "
          << json.getError().message() << "\n";
      return 1;
    }
    if (Error error =
            kiln::printResourceUsage(os, (*json)->getBuffer(), path)) {
      WithColor::error(errs(), "kilnc") << toString(std::move(error)) << "\n";
      return 1;
    }
  }
  return 0;
}

static const char kUsage[] =
    "usage: kilnc compile FILE.py [-n KERNEL] -s SIGNATURE --arch ARCH "
    "[-w NUM_WARPS] [-ns NUM_STAGES] [--aligned | --aligned-pointers | "
    "--unit-strides] [--debug] "
    "-o OUT [--emit kiln|gpu|llvm|ptx|cubin] [--metadata OUT.json] "
    "[--ptx-output OUT.ptx] "
    "[--dump-ir DIR] [--autotune] [--resource-usage] [--ptxas PATH] "
    "[--libdevice PATH] [--mlir-...]\n"
    "       kilnc configs FILE.py [-n KERNEL] [--arch ARCH]\n"
    "       kilnc check-spec FILE.py [-n KERNEL] [--autotune] [--where TEXT] "
    "[-o STAMP] SIGNATURE...\n"
    "       kilnc archs [--ptxas PATH] [--all]\n"
    "       kilnc --version [--ptxas PATH]\n"
    "       kilnc --help | kilnc compile --help\n";

/// `kilnc --version [--ptxas PATH]`: kilnc's, LLVM's and ptxas's versions,
/// what metadata records as "compiler". Returns the exit status.
static int printVersion(int argc, char **argv) {
  std::string ptxasPath;
  for (int i = 2; i < argc; ++i) {
    StringRef flag = argv[i];
    if (flag.consume_front("--ptxas=") || flag.consume_front("-ptxas="))
      ptxasPath = flag.str();
    else if ((flag == "--ptxas" || flag == "-ptxas") && i + 1 < argc)
      ptxasPath = argv[++i];
    else {
      errs() << kUsage;
      return 2;
    }
  }
  auto ptxas = kiln::ptxasVersion(ptxasPath);
  outs() << kiln::compilerVersion(ptxas ? StringRef(*ptxas) : "") << "\n"
         << "  LLVM " << LLVM_VERSION_STRING << "\n";
  if (ptxas)
    outs() << "  ptxas " << *ptxas << " (" << kiln::resolvePtxas(ptxasPath)
           << ")\n";
  else
    outs() << "  ptxas: " << toString(ptxas.takeError()) << "\n";
  return 0;
}

/// `kilnc archs [--ptxas PATH] [--all]`: the archs kilnc compiles for that
/// the toolkit's ptxas assembles, one per line (with --all, every arch
/// LLVM's NVPTX backend has, whatever ptxas says). The rules derive their
/// supported list the same way. Returns the exit status.
static int printArchs(int argc, char **argv) {
  std::string ptxasPath;
  bool all = false;
  for (int i = 2; i < argc; ++i) {
    StringRef flag = argv[i];
    if (flag.consume_front("--ptxas="))
      ptxasPath = flag.str();
    else if (flag == "--ptxas" && i + 1 < argc)
      ptxasPath = argv[++i];
    else if (flag == "--all")
      all = true;
    else if (flag == "--help" || flag == "-h") {
      outs() << "usage: kilnc archs [--ptxas PATH] [--all]\n"
                "  the GPU architectures kilnc compiles for that ptxas "
                "assembles, one per line\n";
      return 0;
    } else {
      errs() << "usage: kilnc archs [--ptxas PATH] [--all]\n";
      return 2;
    }
  }
  std::vector<std::string> archs = kiln::supportedArchs();
  if (!all) {
    auto assembled = kiln::ptxasArchs(ptxasPath);
    if (!assembled) {
      WithColor::error(errs(), "kilnc")
          << toString(assembled.takeError()) << "\n";
      return 1;
    }
    llvm::erase_if(archs, [&](const std::string &arch) {
      return !is_contained(*assembled, arch);
    });
  }
  for (const std::string &arch : archs)
    outs() << arch << "\n";
  return 0;
}

static const char kCheckSpecUsage[] =
    "usage: kilnc check-spec FILE.py [-n KERNEL] [--autotune] [--where TEXT] "
    "[-o STAMP] SIGNATURE...\n"
    "  checks each signature against the kernel's parameters; prints only "
    "errors\n"
    "  -o STAMP: when all are good, write them to STAMP, one per line\n";

/// `kilnc check-spec ...`. Returns the exit status.
static int checkSpec(int argc, char **argv) {
  kiln::CheckSpecOptions options;
  for (int i = 2; i < argc; ++i) {
    StringRef arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      outs() << kCheckSpecUsage;
      return 0;
    }
    if (arg == "-n" && i + 1 < argc)
      options.kernelName = argv[++i];
    else if (arg == "--where" && i + 1 < argc)
      options.where = argv[++i];
    else if (arg == "-o" && i + 1 < argc)
      options.stampPath = argv[++i];
    else if (arg == "--autotune")
      options.autotune = true;
    else if (options.sourcePath.empty() && !arg.starts_with("-"))
      options.sourcePath = arg.str();
    else if (!options.sourcePath.empty() && !arg.starts_with("--"))
      options.signatures.push_back(arg.str());
    else {
      errs() << kCheckSpecUsage;
      return 2;
    }
  }
  if (options.sourcePath.empty() || options.signatures.empty()) {
    errs() << kCheckSpecUsage;
    return 2;
  }
  return kiln::checkSpecializations(options);
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  if (argc >= 2) {
    StringRef first = argv[1];
    if (first == "--version" || first == "-version" || first == "version")
      return printVersion(argc, argv);
    if (first == "--help" || first == "-help" || first == "-h" ||
        first == "help") {
      outs() << "kilnc: ahead-of-time Triton compiler\n" << kUsage;
      return 0;
    }
  }
  if (argc >= 2 && StringRef(argv[1]) == "check-spec")
    return checkSpec(argc, argv);
  if (argc >= 2 && StringRef(argv[1]) == "archs")
    return printArchs(argc, argv);
  if (argc >= 3 && StringRef(argv[1]) == "configs" &&
      (StringRef(argv[2]) == "--help" || StringRef(argv[2]) == "-h")) {
    outs() << "usage: kilnc configs FILE.py [-n KERNEL] [--arch ARCH]\n"
              "  prints the kernel's @triton.autotune configs, one signature "
              "fragment per line\n";
    return 0;
  }
  if (argc >= 3 && StringRef(argv[1]) == "configs") {
    std::string kernel, arch;
    for (int i = 3; i < argc; i += 2) {
      StringRef flag = argv[i];
      if (i + 1 < argc && flag == "-n")
        kernel = argv[i + 1];
      else if (i + 1 < argc && flag == "--arch")
        arch = argv[i + 1];
      else {
        errs() << "usage: kilnc configs FILE.py [-n KERNEL] [--arch ARCH]\n";
        return 2;
      }
    }
    if (!arch.empty()) {
      auto parsed = kiln::TargetArch::parse(arch);
      if (!parsed) {
        WithColor::error(errs(), "kilnc")
            << toString(parsed.takeError()) << "\n";
        return 2;
      }
      arch = parsed->name;
    }
    return kiln::printAutotuneConfigs(argv[2], kernel, arch);
  }
  if (argc < 2 || StringRef(argv[1]) != "compile") {
    errs() << kUsage;
    return 2;
  }
  cl::OptionCategory category("kilnc compile options");
  // MLIR's own options, shown by --help in a category of their own.
  kiln::registerMLIRCommandLineOptions();
  cl::OptionCategory mlirCategory(
      "MLIR options (applied to every pass manager of kilnc)");
  for (auto &entry : cl::getRegisteredOptions())
    if (entry.first.starts_with("mlir-"))
      entry.second->addCategory(mlirCategory);
  cl::opt<std::string> source(cl::Positional, cl::desc("FILE.py"), cl::Required,
                              cl::cat(category));
  cl::opt<std::string> kernel("n", cl::desc("the @triton.jit function"),
                              cl::cat(category));
  cl::list<std::string> srcs(
      "src",
      cl::desc("a file the kernel's module may import (repeatable; the "
               "triton_kernel srcs after the first)"),
      cl::cat(category));
  cl::opt<std::string> signature(
      "s", cl::desc("parameter types and constexpr values"), cl::Required,
      cl::cat(category));
  cl::opt<std::string> arch(
      "arch",
      cl::desc("sm_80, sm_86, ..., sm_90a, sm_100, sm_100a, sm_100f, ..., "
               "sm_121f (`kilnc archs` lists them; also 80, 90a, ...: "
               "CMake's CUDA_ARCHITECTURES spelling)"),
      cl::Required, cl::cat(category));
  cl::opt<unsigned> numWarps("w", cl::desc("warps per program"), cl::init(4),
                             cl::cat(category));
  cl::opt<unsigned> numStages("ns", cl::desc("software pipelining stages"),
                              cl::init(3), cl::cat(category));
  cl::opt<bool> aligned(
      "aligned",
      cl::desc("assume every pointer and integer is divisible by 16"),
      cl::cat(category));
  cl::opt<bool> alignedPointers(
      "aligned-pointers",
      cl::desc("assume every pointer 16-byte aligned, nothing of the "
               "integers (the build's aligned-pointers variant)"),
      cl::cat(category));
  cl::opt<bool> unitStrides(
      "unit-strides",
      cl::desc("the build's unit-stride variant: --aligned, with the integer "
               "parameters named like strides that index a tensor's last axis "
               "taken equal to 1 (:1)"),
      cl::cat(category));
  // nvcc's name for the same report (LLVM's own -stats is taken).
  cl::opt<bool> resourceUsage(
      "resource-usage",
      cl::desc("print the registers, spill stores and loads, and static and "
               "dynamic shared memory of the compiled variant(s)"),
      cl::cat(category));
  cl::opt<bool> debug(
      "debug",
      cl::desc("keep tl.device_assert and asserts on run-time values (as "
               "upstream's debug=True)"),
      cl::cat(category));
  cl::opt<bool> noFlatten(
      "no-flatten",
      cl::desc("keep loops marked tl.range(..., flatten=True) nested (the "
               "pipeline then drains at each outer iteration)"),
      cl::cat(category));
  cl::opt<std::string> output(
      "o", cl::desc("output file (with --autotune, a directory)"), cl::Required,
      cl::cat(category));
  cl::opt<bool> autotune(
      "autotune",
      cl::desc("one variant per @triton.autotune config, into the -o "
               "directory (config<K>.cubin, config<K>.json, configs.txt, "
               "autotune_key.txt)"),
      cl::cat(category));
  cl::opt<kiln::Stage> emit(
      "emit", cl::desc("stop after this stage"), cl::init(kiln::Stage::Cubin),
      cl::values(
          clEnumValN(kiln::Stage::Kiln, "kiln", "kiln dialect"),
          clEnumValN(kiln::Stage::Gpu, "gpu", "kiln_gpu dialect (layouts)"),
          clEnumValN(kiln::Stage::LLVM, "llvm", "optimized LLVM IR"),
          clEnumValN(kiln::Stage::PTX, "ptx", "PTX assembly"),
          clEnumValN(kiln::Stage::Cubin, "cubin", "cubin")),
      cl::cat(category));
  cl::opt<std::string> metadata("metadata",
                                cl::desc("write the variant's metadata JSON"),
                                cl::cat(category));
  cl::opt<std::string> ptxOutput(
      "ptx-output",
      cl::desc("also write the PTX that ptxas assembles to this file (with "
               "--emit cubin; with --autotune any value: config<K>.ptx in the "
               "-o directory)"),
      cl::cat(category));
  cl::opt<std::string> dumpDir(
      "dump-ir", cl::desc("write every stage's IR to DIR"), cl::cat(category));
  cl::opt<std::string> ptxas(
      "ptxas", cl::desc("path of ptxas (default: $CUDA_HOME/bin/ptxas)"),
      cl::cat(category));
  cl::opt<std::string> libdevice(
      "libdevice",
      cl::desc("path of libdevice.10.bc (default: under $CUDA_HOME/nvvm)"),
      cl::cat(category));
  cl::HideUnrelatedOptions({&category, &mlirCategory});
  // `kilnc compile --version`: what `kilnc --version` prints.
  cl::SetVersionPrinter([](raw_ostream &os) {
    auto version = kiln::ptxasVersion();
    os << kiln::compilerVersion(version ? StringRef(*version) : "") << "\n";
    if (!version)
      consumeError(version.takeError());
  });
  // Parse everything after "compile".
  std::vector<const char *> args{argv[0]};
  for (int i = 2; i < argc; ++i)
    args.push_back(argv[i]);
  if (!cl::ParseCommandLineOptions(int(args.size()), args.data(),
                                   "kilnc: ahead-of-time Triton compiler\n",
                                   &errs()))
    return 2;

  kiln::CompileOptions options;
  options.sourcePath = source;
  options.srcs.assign(srcs.begin(), srcs.end());
  options.kernelName = kernel;
  options.signature = signature;
  // Every spelling of an arch becomes the sm_ one, which outputs record.
  auto parsedArch = kiln::TargetArch::parse(arch);
  if (!parsedArch) {
    WithColor::error(errs(), "kilnc")
        << toString(parsedArch.takeError()) << "\n";
    return 2;
  }
  options.arch = parsedArch->name;
  options.numWarps = numWarps;
  options.numWarpsGiven = numWarps.getNumOccurrences() > 0;
  options.numStages = numStages;
  options.numStagesGiven = numStages.getNumOccurrences() > 0;
  options.aligned = aligned;
  options.alignedPointers = alignedPointers;
  options.debug = debug;
  options.flatten = !noFlatten;
  options.emit = emit;
  options.outputPath = output;
  options.metadataPath = metadata;
  options.ptxOutputPath = ptxOutput;
  options.dumpDir = dumpDir;
  options.ptxasPath = ptxas;
  options.libdevicePath = libdevice;
  if (!options.metadataPath.empty() && options.emit != kiln::Stage::Cubin) {
    WithColor::error(errs(), "kilnc") << "--metadata needs --emit cubin\n";
    return 2;
  }
  if (!options.ptxOutputPath.empty() && options.emit != kiln::Stage::Cubin) {
    WithColor::error(errs(), "kilnc")
        << "--ptx-output writes the PTX beside the cubin: it needs --emit "
           "cubin (--emit ptx writes PTX alone)\n";
    return 2;
  }
  if (resourceUsage && options.emit != kiln::Stage::Cubin) {
    WithColor::error(errs(), "kilnc")
        << "--resource-usage reports what ptxas made of the variant: it needs "
           "--emit cubin\n";
    return 2;
  }
  if (aligned && unitStrides) {
    WithColor::error(errs(), "kilnc")
        << "--unit-strides is the aligned variant with unit strides: drop "
           "--aligned\n";
    return 2;
  }
  if (alignedPointers && (aligned || unitStrides)) {
    WithColor::error(errs(), "kilnc")
        << "--aligned-pointers assumes nothing of the integers; --"
        << (aligned ? "aligned" : "unit-strides")
        << " assumes them divisible by 16: give one of the two\n";
    return 2;
  }
  auto compile =
      unitStrides ? kiln::compileUnitStrideVariant : kiln::compileKernel;
  // --resource-usage prints to stdout, unless the cubin goes there.
  raw_ostream &usageOut = options.outputPath == "-" ? errs() : outs();
  if (autotune) {
    if (!options.metadataPath.empty() || !options.dumpDir.empty() ||
        options.numWarpsGiven || options.numStagesGiven) {
      WithColor::error(errs(), "kilnc")
          << "--autotune writes each config's metadata into the -o directory "
             "and takes num_warps/num_stages from the configs: drop "
             "--metadata, --dump-ir, -w and -ns\n";
      return 2;
    }
    if (int status = kiln::compileAutotuneConfigs(options, compile))
      return status;
    if (!resourceUsage)
      return 0;
    std::vector<std::string> configs;
    // Skipped configs (config<K>.error) have no metadata.
    for (unsigned k = 0;; ++k) {
      SmallString<128> path(options.outputPath), skipped;
      sys::path::append(path, "config" + Twine(k) + ".json");
      skipped = path;
      sys::path::replace_extension(skipped, "error");
      if (sys::fs::exists(path))
        configs.push_back(path.str().str());
      else if (!sys::fs::exists(skipped))
        break;
    }
    return printResourceUsage(configs, usageOut);
  }
  // --resource-usage reads the metadata back: from a temporary file
  // without --metadata.
  SmallString<128> temporary;
  std::optional<FileRemover> removeTemporary;
  if (resourceUsage && options.metadataPath.empty()) {
    if (std::error_code ec =
            sys::fs::createTemporaryFile("kilnc-usage", "json", temporary)) {
      WithColor::error(errs(), "kilnc")
          << "--resource-usage: cannot create a temporary file: "
          << ec.message() << "\n";
      return 1;
    }
    removeTemporary.emplace(temporary);
    options.metadataPath = temporary.str().str();
  }
  if (int status = compile(options))
    return status;
  return resourceUsage ? printResourceUsage({options.metadataPath}, usageOut)
                       : 0;
}
