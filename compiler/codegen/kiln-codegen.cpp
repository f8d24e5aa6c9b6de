//===- kiln-codegen.cpp - Generate the launchers of a triton_kernel target ===//
//
//   kiln-codegen --name NAME --namespace NS --include-path PATH/NAME.h
//                --templates DIR --out-header OUT.h --out-source OUT.cc
//                [--tuning-table [NAME=]TABLE.json ...]
//                [--out-tuner-main OUT_tune.cc]
//                [--embed hex | --embed incbin --asm-prefix P [--asm-shards N]
//                 [--incbin-dir DIR]]
//                [--compress zstd]
//                VARIANT.json=VARIANT.cubin ... | METADATA_DIR=IMAGE_DIR ...
//
// Reads every compiled variant's metadata and cubin, and writes the header and
// source of the typed launchers (docs/architecture.md section 3), and with
// --embed incbin the shards P0.cc ... P<N-1>.cc (and P<k>.bin when
// compressed) that embed the images. Exit status
// 0 on success; otherwise one "kiln-codegen: error: ..." line.
//
//===----------------------------------------------------------------------===//

#include "Codegen.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace kiln::codegen;

namespace {

cl::OptionCategory category("kiln-codegen options");

cl::opt<std::string> name("name", cl::desc("the target's name (NAME.h)"),
                          cl::Required, cl::cat(category));
cl::opt<std::string> cppNamespace("namespace",
                                  cl::desc("C++ namespace of the launchers"),
                                  cl::Required, cl::cat(category));
cl::opt<std::string>
    includePath("include-path",
                cl::desc("how users include the header: PATH/NAME.h"),
                cl::Required, cl::cat(category));
cl::opt<std::string>
    templatesDir("templates",
                 cl::desc("directory of kernel.h.tmpl and kernel.cc.tmpl"),
                 cl::Required, cl::cat(category));
cl::opt<std::string> outHeader("out-header",
                               cl::desc("where to write the header"),
                               cl::Required, cl::cat(category));
cl::opt<std::string> outSource("out-source",
                               cl::desc("where to write the source"),
                               cl::Required, cl::cat(category));
cl::list<std::string>
    tuningTables("tuning-table",
                 cl::desc("a tuning table to embed (PATH or NAME=PATH, NAME "
                          "naming it in errors and the generated code)"),
                 cl::cat(category));
cl::opt<std::string>
    outTunerMain("out-tuner-main",
                 cl::desc("also write the source of the target's tuner "
                          "(main() running kiln-tune over its kernels)"),
                 cl::cat(category));
cl::opt<CodegenOptions::Embed>
    embed("embed", cl::desc("how the images reach the binary"),
          cl::init(CodegenOptions::Embed::Hex),
          cl::values(clEnumValN(CodegenOptions::Embed::Hex, "hex",
                                "hex arrays in the source"),
                     clEnumValN(CodegenOptions::Embed::Incbin, "incbin",
                                "assembled from the image files (.incbin) by "
                                "<asm-prefix><k>.cc, k < --asm-shards")),
          cl::cat(category));
cl::opt<std::string>
    asmPrefix("asm-prefix",
              cl::desc("with --embed incbin: the shards are PREFIX<k>.cc, "
                       "compressed blobs PREFIX<k>.bin"),
              cl::cat(category));
cl::opt<std::string> incbinDir(
    "incbin-dir",
    cl::desc("with --embed incbin: where the shards' compiler runs, relative "
             "to this directory; .incbin reads a relative PATH as DIR/PATH"),
    cl::cat(category));
cl::opt<unsigned> asmShards("asm-shards",
                            cl::desc("with --embed incbin: how many shards"),
                            cl::init(4), cl::cat(category));
cl::opt<std::string>
    compress("compress",
             cl::desc("\"zstd\": store each image as a zstd frame, inflated "
                      "at its first load; \"none\" (default)"),
             cl::init("none"), cl::cat(category));
cl::list<std::string> variants(cl::Positional, cl::OneOrMore,
                               cl::desc("VARIANT.json=VARIANT.cubin... or "
                                        "METADATA_DIR=IMAGE_DIR..."),
                               cl::cat(category));

int fail(const Twine &message) {
  WithColor::error(errs(), "kiln-codegen") << message << "\n";
  return 1;
}

Error writeFile(StringRef path, StringRef contents) {
  std::error_code ec;
  StringRef parent = sys::path::parent_path(path);
  if (!parent.empty() && (ec = sys::fs::create_directories(parent)))
    return createStringError(ec, "cannot create %s: %s", parent.str().c_str(),
                             ec.message().c_str());
  raw_fd_ostream out(path, ec, sys::fs::OF_None);
  if (ec)
    return createStringError(ec, "cannot write %s: %s", path.str().c_str(),
                             ec.message().c_str());
  out << contents;
  out.close();
  if (out.has_error())
    return createStringError(out.error(), "cannot write %s",
                             path.str().c_str());
  return Error::success();
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "kiln-codegen: generate typed C++ launchers for compiled Triton "
      "kernels\n");

  Expected<Templates> templates = loadTemplates(templatesDir);
  if (!templates)
    return fail(toString(templates.takeError()));
  std::vector<VariantInput> inputs;
  for (const std::string &argument : variants) {
    Expected<std::vector<VariantInput>> read = readVariantInputs(argument);
    if (!read)
      return fail(toString(read.takeError()));
    for (VariantInput &input : *read)
      inputs.push_back(std::move(input));
  }
  std::vector<TuningTableInput> tables;
  for (const std::string &argument : tuningTables) {
    Expected<TuningTableInput> table = readTuningTable(argument);
    if (!table)
      return fail(toString(table.takeError()));
    tables.push_back(std::move(*table));
  }
  CodegenOptions options{name, cppNamespace, includePath};
  options.embed = embed;
  options.asmPrefix = asmPrefix;
  options.asmShards = asmShards;
  options.incbinDir = incbinDir;
  if (compress != "none" && compress != "zstd")
    return fail("--compress must be none or zstd, got '" + compress + "'");
  options.compressZstd = compress == "zstd";
  if (embed == CodegenOptions::Embed::Hex && asmPrefix.getNumOccurrences())
    return fail("--asm-prefix goes with --embed incbin");
  Expected<GeneratedFiles> files =
      generateLaunchers(options, *templates, inputs, tables);
  if (!files)
    return fail(toString(files.takeError()));
  if (Error err = writeFile(outHeader, files->header))
    return fail(toString(std::move(err)));
  if (Error err = writeFile(outSource, files->source))
    return fail(toString(std::move(err)));
  for (const auto &[path, contents] : files->extraFiles)
    if (Error err = writeFile(path, contents))
      return fail(toString(std::move(err)));
  if (!outTunerMain.empty())
    if (Error err = writeFile(outTunerMain, generateTunerMain(options)))
      return fail(toString(std::move(err)));
  return 0;
}
