//===- Ptxas.cpp - PTX to cubin through the CUDA toolkit's ptxas ----------===//
//
// The toolkit here has no static PTX compiler library, so ptxas runs as a
// process; its -v report gives the registers, spills and shared memory.
//
//===----------------------------------------------------------------------===//
#include "compiler/target/Target.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

std::string kiln::resolvePtxas(StringRef explicitPath) {
  if (!explicitPath.empty())
    return explicitPath.str();
  if (const char *home = std::getenv("CUDA_HOME"))
    return (Twine(home) + "/bin/ptxas").str();
  return "/usr/local/cuda/bin/ptxas";
}

namespace {
/// Temporary files removed on scope exit.
struct TempFile {
  SmallString<128> path;
  ~TempFile() {
    if (!path.empty())
      sys::fs::remove(path);
  }
};
} // namespace

static unsigned sumMatches(StringRef log, StringRef pattern) {
  unsigned total = 0;
  Regex regex(pattern);
  StringRef rest = log;
  SmallVector<StringRef> groups;
  while (regex.match(rest, &groups)) {
    unsigned v = 0;
    groups[1].getAsInteger(10, v);
    total += v;
    rest = rest.substr(rest.find(groups[0]) + groups[0].size());
  }
  return total;
}

Expected<kiln::CubinInfo> kiln::assembleCubin(StringRef ptx,
                                              const TargetArch &arch,
                                              StringRef ptxasPath) {
  std::string ptxas = resolvePtxas(ptxasPath);
  if (!sys::fs::can_execute(ptxas))
    return createStringError(
        inconvertibleErrorCode(),
        "ptxas not found at " + ptxas +
            " (set CUDA_HOME to the CUDA toolkit, or pass --ptxas)");
  TempFile ptxFile, cubinFile, logFile;
  if (auto ec = sys::fs::createTemporaryFile("kiln", "ptx", ptxFile.path))
    return errorCodeToError(ec);
  if (auto ec = sys::fs::createTemporaryFile("kiln", "cubin", cubinFile.path))
    return errorCodeToError(ec);
  if (auto ec = sys::fs::createTemporaryFile("kiln", "log", logFile.path))
    return errorCodeToError(ec);
  {
    std::error_code ec;
    raw_fd_ostream os(ptxFile.path, ec);
    if (ec)
      return errorCodeToError(ec);
    os << ptx;
  }
  std::string archFlag = "-arch=" + arch.name;
  SmallVector<StringRef> args = {ptxas,        archFlag, "-v",          "-O3",
                                 ptxFile.path, "-o",     cubinFile.path};
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(logFile.path),
                                          StringRef(logFile.path)};
  std::string execError;
  int status =
      sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects,
                          /*SecondsToWait=*/300, /*MemoryLimit=*/0, &execError);
  CubinInfo info;
  if (auto log = MemoryBuffer::getFile(logFile.path))
    info.log = (*log)->getBuffer().str();
  if (status != 0)
    return createStringError(
        inconvertibleErrorCode(),
        formatv("ptxas failed for {0} (exit {1}){2}\n{3}", arch.name, status,
                execError.empty() ? "" : ": " + execError, info.log));
  auto cubin = MemoryBuffer::getFile(cubinFile.path, /*IsText=*/false);
  if (!cubin)
    return errorCodeToError(cubin.getError());
  info.cubin = (*cubin)->getBuffer().str();
  Regex registers("Used ([0-9]+) registers");
  SmallVector<StringRef> groups;
  if (registers.match(info.log, &groups))
    groups[1].getAsInteger(10, info.registers);
  info.spillBytes = sumMatches(info.log, "([0-9]+) bytes spill stores") +
                    sumMatches(info.log, "([0-9]+) bytes spill loads");
  info.staticSharedBytes = sumMatches(info.log, "([0-9]+) bytes smem");
  info.serializesWgmma = StringRef(info.log).contains(
      "wgmma.mma_async instructions are serialized");
  return info;
}

Expected<std::string> kiln::ptxasVersion(StringRef ptxasPath) {
  std::string ptxas = resolvePtxas(ptxasPath);
  if (!sys::fs::can_execute(ptxas))
    return createStringError(
        inconvertibleErrorCode(),
        "ptxas not found at " + ptxas +
            " (set CUDA_HOME to the CUDA toolkit, or pass --ptxas)");
  TempFile out;
  if (auto ec = sys::fs::createTemporaryFile("kiln-ptxas", "txt", out.path))
    return errorCodeToError(ec);
  SmallVector<StringRef> args = {ptxas, "--version"};
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(out.path),
                                          StringRef(out.path)};
  std::string execError;
  int status =
      sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects,
                          /*SecondsToWait=*/60, /*MemoryLimit=*/0, &execError);
  auto text = MemoryBuffer::getFile(out.path);
  if (status != 0 || !text)
    return createStringError(
        inconvertibleErrorCode(),
        formatv("{0} --version failed (exit {1}){2}", ptxas, status,
                execError.empty() ? "" : ": " + execError));
  // "Cuda compilation tools, release 13.0, V13.0.88"
  Regex version(", V([0-9]+(\\.[0-9]+)*)");
  SmallVector<StringRef> groups;
  if (!version.match((*text)->getBuffer(), &groups))
    return createStringError(inconvertibleErrorCode(),
                             ptxas + " --version printed no version: " +
                                 (*text)->getBuffer().trim());
  return groups[1].str();
}

Expected<std::vector<std::string>> kiln::ptxasArchs(StringRef ptxasPath) {
  std::string ptxas = resolvePtxas(ptxasPath);
  if (!sys::fs::can_execute(ptxas))
    return createStringError(
        inconvertibleErrorCode(),
        "ptxas not found at " + ptxas +
            " (set CUDA_HOME to the CUDA toolkit, or pass --ptxas)");
  TempFile out;
  if (auto ec = sys::fs::createTemporaryFile("kiln-ptxas", "txt", out.path))
    return errorCodeToError(ec);
  SmallVector<StringRef> args = {ptxas, "--help"};
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(out.path),
                                          StringRef(out.path)};
  std::string execError;
  int status =
      sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects,
                          /*SecondsToWait=*/60, /*MemoryLimit=*/0, &execError);
  auto text = MemoryBuffer::getFile(out.path);
  if (status != 0 || !text)
    return createStringError(
        inconvertibleErrorCode(),
        formatv("{0} --help failed (exit {1}){2}", ptxas, status,
                execError.empty() ? "" : ": " + execError));
  // "Allowed values for this option:  'compute_100',...,'sm_100a',..."
  std::vector<std::string> archs;
  Regex arch("'(sm_[0-9]+[af]?)'");
  StringRef rest = (*text)->getBuffer();
  SmallVector<StringRef> groups;
  while (arch.match(rest, &groups)) {
    if (!is_contained(archs, groups[1].str()))
      archs.push_back(groups[1].str());
    rest = rest.substr(rest.find(groups[0]) + groups[0].size());
  }
  if (archs.empty())
    return createStringError(inconvertibleErrorCode(),
                             ptxas + " --help lists no sm_ architectures");
  return archs;
}
