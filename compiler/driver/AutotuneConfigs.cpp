//===- AutotuneConfigs.cpp - a kernel's @triton.autotune configs ----------===//
#include "compiler/driver/AutotuneConfigs.h"

#include "compiler/driver/Pipeline.h"
#include "compiler/frontend/Emitter.h"
#include "compiler/frontend/Parser.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

using namespace kiln::frontend;
using llvm::SMLoc;

namespace {

/// One triton.Config: its signature fragment, the names it sets and where it
/// is written.
struct Config {
  std::string fragment;
  std::vector<std::string> keys;
  SMLoc loc;
};

/// Reads the kernel's decorators; reports errors through `sourceMgr`.
class ConfigReader {
public:
  explicit ConfigReader(llvm::SourceMgr &sourceMgr) : sourceMgr(sourceMgr) {}

  /// The configs, or std::nullopt after an error. No autotune decorator
  /// gives an empty list.
  std::optional<std::vector<Config>> read(const FunctionDefStmt &kernel) {
    std::vector<Config> configs;
    for (const ExprPtr &decorator : kernel.decorators) {
      auto *call = llvm::dyn_cast<CallExpr>(decorator.get());
      if (!call || calleeName(*call->callee) != "autotune")
        continue;
      const Expr *list = nullptr;
      for (const Keyword &kw : call->keywords)
        if (kw.name == "configs")
          list = kw.value.get();
      if (!list && !call->args.empty())
        list = call->args[0].get();
      auto *elements = list ? llvm::dyn_cast<ListExpr>(list) : nullptr;
      if (!elements)
        return error(call->getLoc(), "@triton.autotune needs configs=[...] "
                                     "written as a list of triton.Config(...)");
      for (const ExprPtr &element : elements->elements) {
        std::optional<Config> config = readConfig(*element);
        if (!config)
          return std::nullopt;
        configs.push_back(*config);
      }
    }
    return configs;
  }

private:
  std::nullopt_t error(SMLoc loc, const llvm::Twine &message) {
    sourceMgr.PrintMessage(loc, llvm::SourceMgr::DK_Error, message);
    return std::nullopt;
  }

  static std::string calleeName(const Expr &callee) {
    if (auto *attr = llvm::dyn_cast<AttributeExpr>(&callee))
      return attr->attr;
    if (auto *name = llvm::dyn_cast<NameExpr>(&callee))
      return name->name;
    return "";
  }

  /// A literal, as a signature writes it.
  std::optional<std::string> literal(const Expr &e) {
    switch (e.getKind()) {
    case Expr::Kind::Int:
      return llvm::cast<IntExpr>(e).digits;
    case Expr::Kind::Float: {
      std::string s;
      llvm::raw_string_ostream os(s);
      os << llvm::cast<FloatExpr>(e).value;
      return s;
    }
    case Expr::Kind::Bool:
      return std::string(llvm::cast<BoolExpr>(e).value ? "True" : "False");
    case Expr::Kind::None:
      return std::string("None");
    case Expr::Kind::String:
      return "\"" + llvm::cast<StringExpr>(e).value + "\"";
    case Expr::Kind::Unary: {
      auto &u = llvm::cast<UnaryExpr>(e);
      if (u.op == "-")
        if (auto inner = literal(*u.operand))
          return "-" + *inner;
      break;
    }
    default:
      break;
    }
    error(e.getLoc(), "autotune config values must be literals (ints, floats, "
                      "bools, strings, None)");
    return std::nullopt;
  }

  std::optional<Config> readConfig(const Expr &e) {
    auto *call = llvm::dyn_cast<CallExpr>(&e);
    if (!call || calleeName(*call->callee) != "Config")
      return error(e.getLoc(), "expected triton.Config(...) in the autotune "
                               "configs");
    const Expr *dictExpr = call->args.empty() ? nullptr : call->args[0].get();
    for (const Keyword &kw : call->keywords)
      if (kw.name == "kwargs")
        dictExpr = kw.value.get();
    auto *dict = dictExpr ? llvm::dyn_cast<DictExpr>(dictExpr) : nullptr;
    if (!dict)
      return error(call->getLoc(), "triton.Config needs a dict of constexpr "
                                   "values (first argument or kwargs=)");
    Config config;
    config.loc = call->getLoc();
    auto add = [&](const std::string &key, const std::string &value) {
      config.fragment +=
          (config.fragment.empty() ? "" : ", ") + key + "=" + value;
      config.keys.push_back(key);
    };
    for (size_t i = 0; i < dict->keys.size(); ++i) {
      auto *key = llvm::dyn_cast<StringExpr>(dict->keys[i].get());
      if (!key)
        return error(dict->keys[i]->getLoc(), "autotune config keys must be "
                                              "parameter names as strings");
      std::optional<std::string> value = literal(*dict->values[i]);
      if (!value)
        return std::nullopt;
      add(key->value, *value);
    }
    for (const Keyword &kw : call->keywords) {
      if (kw.name != "num_warps" && kw.name != "num_stages" &&
          kw.name != "num_ctas")
        continue; // maxnreg, pre_hook, ...: not part of a variant
      std::optional<std::string> value = literal(*kw.value);
      if (!value)
        return std::nullopt;
      add(kw.name, *value);
    }
    return config;
  }

  llvm::SourceMgr &sourceMgr;
};

} // namespace

/// The parsed source of one kernel and its configs.
struct KernelConfigs {
  llvm::SourceMgr sourceMgr;
  std::unique_ptr<Module> module;
  const FunctionDefStmt *kernel = nullptr;
  std::vector<Config> configs;
};

/// Reads `sourcePath` and the configs of `kernelName` (empty: the only
/// kernel). Reports errors and returns nullptr on failure.
static std::unique_ptr<KernelConfigs>
readKernelConfigs(const std::string &sourcePath,
                  const std::string &kernelName) {
  auto file = llvm::MemoryBuffer::getFile(sourcePath, /*IsText=*/true);
  if (!file) {
    llvm::WithColor::error(llvm::errs(), "kilnc")
        << "cannot read " << sourcePath << ": " << file.getError().message()
        << "\n";
    return nullptr;
  }
  auto result = std::make_unique<KernelConfigs>();
  result->sourceMgr.AddNewSourceBuffer(std::move(*file), SMLoc());
  result->module = parseModule(result->sourceMgr);
  if (!result->module)
    return nullptr;
  mlir::MLIRContext context;
  Emitter emitter(result->sourceMgr, context, *result->module);
  result->kernel = emitter.findKernel(kernelName);
  if (!result->kernel)
    return nullptr;
  std::optional<std::vector<Config>> configs =
      ConfigReader(result->sourceMgr).read(*result->kernel);
  if (!configs)
    return nullptr;
  result->configs = std::move(*configs);
  return result;
}

int kiln::printAutotuneConfigs(const std::string &sourcePath,
                               const std::string &kernelName) {
  std::unique_ptr<KernelConfigs> read =
      readKernelConfigs(sourcePath, kernelName);
  if (!read)
    return 1;
  for (const Config &config : read->configs)
    llvm::outs() << config.fragment << "\n";
  return 0;
}

/// The file extension of what `kilnc compile --emit` writes.
static llvm::StringRef extensionOf(kiln::Stage stage) {
  switch (stage) {
  case kiln::Stage::Kiln:
  case kiln::Stage::Gpu:
    return "mlir";
  case kiln::Stage::LLVM:
    return "ll";
  case kiln::Stage::PTX:
    return "ptx";
  case kiln::Stage::Cubin:
    return "cubin";
  }
  return "out";
}

/// Removes what an earlier run left in `directory` (config<K>.* and
/// configs.txt), so that a build system that keeps the directory never sees
/// a config the source no longer has.
static std::error_code removeEarlierOutputs(llvm::StringRef directory) {
  std::error_code ec;
  std::vector<std::string> stale;
  for (llvm::sys::fs::directory_iterator it(directory, ec), end;
       it != end && !ec; it.increment(ec)) {
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    llvm::StringRef stem = llvm::sys::path::stem(name);
    unsigned index;
    if (name == "configs.txt" ||
        (stem.consume_front("config") && !stem.getAsInteger(10, index)))
      stale.push_back(it->path());
  }
  if (ec)
    return ec;
  for (const std::string &path : stale)
    if ((ec = llvm::sys::fs::remove(path)))
      return ec;
  return {};
}

int kiln::compileAutotuneConfigs(const CompileOptions &options,
                                 int (*compile)(const CompileOptions &)) {
  auto fail = [](const llvm::Twine &message) {
    llvm::WithColor::error(llvm::errs(), "kilnc") << message << "\n";
    return 1;
  };
  std::unique_ptr<KernelConfigs> read =
      readKernelConfigs(options.sourcePath, options.kernelName);
  if (!read)
    return 1;
  llvm::SourceMgr &sourceMgr = read->sourceMgr;
  const FunctionDefStmt &kernel = *read->kernel;
  if (read->configs.empty()) {
    sourceMgr.PrintMessage(kernel.nameLoc, llvm::SourceMgr::DK_Error,
                           "--autotune: '" + kernel.name +
                               "' has no @triton.autotune(configs=[...]) "
                               "decorator to take the variants from");
    return 1;
  }

  // The signature gives the parameter types (and constexprs no config sets)
  // by name; each config adds its values.
  llvm::SmallVector<llvm::StringRef> pieces;
  llvm::StringRef(options.signature)
      .split(pieces, ',', -1, /*KeepEmpty=*/false);
  std::vector<std::string> signatureKeys;
  for (llvm::StringRef piece : pieces) {
    auto [key, value] = piece.split('=');
    if (value.empty() && !piece.contains('='))
      return fail("--autotune needs the named signature form (x_ptr=*fp32, "
                  "n=i32, ...), since the configs supply the constexpr values; "
                  "got '" +
                  options.signature + "'");
    signatureKeys.push_back(key.trim().str());
  }
  for (size_t k = 0; k < read->configs.size(); ++k) {
    const Config &config = read->configs[k];
    for (const std::string &key : config.keys) {
      if (!llvm::is_contained(signatureKeys, key))
        continue;
      sourceMgr.PrintMessage(
          config.loc, llvm::SourceMgr::DK_Error,
          "autotune config " + llvm::Twine(k) + " of '" + kernel.name +
              "' sets '" + key + "', which the signature sets too ('" +
              options.signature + "'); with autotune the configs give " +
              (key.rfind("num_", 0) == 0 ? "the launch options"
                                         : "this value") +
              ", so leave '" + key + "' out of the signature");
      return 1;
    }
    for (size_t j = 0; j < k; ++j)
      if (read->configs[j].fragment == config.fragment) {
        sourceMgr.PrintMessage(config.loc, llvm::SourceMgr::DK_Error,
                               "autotune config " + llvm::Twine(k) + " of '" +
                                   kernel.name + "' repeats config " +
                                   llvm::Twine(j) + " (" + config.fragment +
                                   "): two variants would be the same");
        return 1;
      }
  }

  llvm::StringRef directory = options.outputPath;
  if (std::error_code ec = llvm::sys::fs::create_directories(directory))
    return fail("cannot create " + directory + ": " + ec.message());
  if (std::error_code ec = removeEarlierOutputs(directory))
    return fail("cannot clean " + directory + ": " + ec.message());

  std::string index;
  for (size_t k = 0; k < read->configs.size(); ++k) {
    const Config &config = read->configs[k];
    CompileOptions one = options;
    one.signature = options.signature + ", " + config.fragment;
    llvm::SmallString<128> stem(directory);
    llvm::sys::path::append(stem, "config" + llvm::Twine(k));
    one.outputPath = (stem + "." + extensionOf(options.emit)).str();
    one.metadataPath =
        options.emit == Stage::Cubin ? (stem + ".json").str() : std::string();
    if (int status = compile(one)) {
      sourceMgr.PrintMessage(config.loc, llvm::SourceMgr::DK_Note,
                             "while compiling autotune config " +
                                 llvm::Twine(k) + " (" + config.fragment + ")");
      return status;
    }
    index += "config" + std::to_string(k) + ": " + config.fragment + "\n";
  }
  llvm::SmallString<128> indexPath(directory);
  llvm::sys::path::append(indexPath, "configs.txt");
  std::error_code ec;
  llvm::raw_fd_ostream out(indexPath, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return fail("cannot write " + indexPath + ": " + ec.message());
  out << index;
  return 0;
}
