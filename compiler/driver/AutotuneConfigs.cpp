//===- AutotuneConfigs.cpp - a kernel's @triton.autotune configs ----------===//
#include "compiler/driver/AutotuneConfigs.h"

#include "compiler/driver/Pipeline.h"
#include "compiler/frontend/Emitter.h"
#include "compiler/frontend/HostEval.h"
#include "compiler/frontend/Parser.h"
#include "compiler/frontend/Signature.h"

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
  ConfigReader(llvm::SourceMgr &sourceMgr, const Module &module,
               HostTarget target)
      : sourceMgr(sourceMgr), module(module), target(std::move(target)) {}

  /// The configs, or std::nullopt after an error. No autotune decorator
  /// gives an empty list. The configs expression is evaluated as Python
  /// would when it reaches the kernel's def: after the module-level code
  /// before it, calling the host functions it names.
  std::optional<std::vector<Config>> read(const FunctionDefStmt &kernel) {
    std::vector<Config> configs;
    // The module's host code run up to the kernel, once, when a decorator
    // needs it.
    std::optional<HostEvaluator> host;
    auto atKernel = [&]() -> HostEvaluator & {
      if (!host) {
        host.emplace(sourceMgr, module, target);
        host->runModuleUntil(&kernel);
      }
      return *host;
    };
    for (const ExprPtr &decorator : kernel.decorators) {
      const CallExpr *call = decoratorCall(module, *decorator);
      if (!call || !isAutotune(*call->callee, atKernel))
        continue;
      const Expr *list = nullptr;
      for (const Keyword &kw : call->keywords)
        if (kw.name == "configs")
          list = kw.value.get();
      if (!list && !call->args.empty())
        list = call->args[0].get();
      if (!list)
        return error(call->getLoc(), "@triton.autotune needs configs=[...], a "
                                     "list of triton.Config(...)");
      HostEvaluator &evaluator = atKernel();
      for (const Keyword &kw : call->keywords)
        if (kw.name == "key" && !readKey(evaluator, *kw.value))
          return std::nullopt;
      std::optional<HostValue> value = evaluator.evaluate(*list);
      if (!value)
        return std::nullopt;
      if (value->kind != HostValue::Kind::List &&
          value->kind != HostValue::Kind::Tuple)
        return error(list->getLoc(), "@triton.autotune's configs must be a "
                                     "list of triton.Config(...), got " +
                                         value->describe());
      for (const Keyword &kw : call->keywords)
        if (kw.name == "prune_configs_by" &&
            !prune(evaluator, *kw.value, *value))
          return std::nullopt;
      for (const HostValue &element : *value->items) {
        std::optional<Config> config = readConfig(element, list->getLoc());
        if (!config)
          return std::nullopt;
        configs.push_back(*config);
      }
    }
    return configs;
  }

  /// The decorator's `key` argument names, as written (upstream ignores
  /// names that are not arguments; so does kiln-codegen).
  std::vector<std::string> key;

private:
  /// `prune_configs_by={"early_config_prune": f, ...}`: upstream calls
  /// f(configs, named_args, **kwargs) before each tuning and times only
  /// the configs it returns. When f reads only the configs (and module
  /// constants), its answer is the same at every launch, so it is taken
  /// here and only those configs are compiled. When it reads the launch's
  /// arguments (named_args), it cannot run now: every config is compiled
  /// and the tuning table (or the first config) chooses at run time.
  /// perf_model and top_k need the launch's arguments too; they are not
  /// run. False after an error (reported).
  bool prune(HostEvaluator &evaluator, const Expr &expr, HostValue &configs) {
    std::optional<HostValue> options = evaluator.evaluate(expr);
    if (!options)
      return false;
    if (options->kind != HostValue::Kind::Dict) {
      error(expr.getLoc(),
            "prune_configs_by must be a dict, got " + options->describe());
      return false;
    }
    const std::vector<HostValue> &items = *options->items;
    for (size_t i = 0; i + 1 < items.size(); i += 2) {
      if (items[i].kind != HostValue::Kind::String ||
          items[i].text != "early_config_prune")
        continue;
      HostError failure;
      std::optional<HostValue> kept = evaluator.tryCall(
          items[i + 1],
          {configs, HostEvaluator::unknownValue(
                        expr.getLoc(), "named_args holds the launch's "
                                       "arguments, known only at run time")},
          expr.getLoc(), failure);
      if (!kept)
        return true; // reads the launch: every config, chosen at run time
      if ((kept->kind != HostValue::Kind::List &&
           kept->kind != HostValue::Kind::Tuple) ||
          kept->items->empty() ||
          llvm::any_of(*kept->items, [](const HostValue &v) {
            return v.kind != HostValue::Kind::Config;
          })) {
        error(expr.getLoc(), "prune_configs_by's early_config_prune must "
                             "return a non-empty list of triton.Config, got " +
                                 kept->describe());
        return false;
      }
      configs = *kept;
    }
    return true;
  }

  /// Reads `key=[...]`: a list or tuple of argument names.
  bool readKey(HostEvaluator &evaluator, const Expr &expr) {
    std::optional<HostValue> value = evaluator.evaluate(expr);
    if (!value)
      return false;
    if (value->kind != HostValue::Kind::List &&
        value->kind != HostValue::Kind::Tuple) {
      error(expr.getLoc(), "@triton.autotune's key must be a list of "
                           "argument names, got " +
                               value->describe());
      return false;
    }
    key.clear();
    for (const HostValue &name : *value->items) {
      if (name.kind != HostValue::Kind::String) {
        error(name.loc.isValid() ? name.loc : expr.getLoc(),
              "@triton.autotune's key must hold argument names as strings, "
              "got " +
                  name.describe());
        return false;
      }
      key.push_back(name.text);
    }
    return true;
  }

  std::nullopt_t error(SMLoc loc, const llvm::Twine &message) {
    sourceMgr.PrintMessage(loc, llvm::SourceMgr::DK_Error, message);
    return std::nullopt;
  }

  /// `triton.autotune`, `autotune` imported from triton, or a module-level
  /// alias of it (ArcticTraining's `triton_autotune = triton.autotune`).
  bool isAutotune(const Expr &callee,
                  llvm::function_ref<HostEvaluator &()> atKernel) {
    std::string name = calleeName(callee);
    if (name == "autotune")
      return true;
    if (name.empty() || !llvm::isa<NameExpr>(callee))
      return false;
    HostError ignored;
    std::optional<HostValue> value = atKernel().tryEvaluate(callee, ignored);
    return value && value->kind == HostValue::Kind::Object &&
           llvm::StringRef(value->text).starts_with("triton") &&
           llvm::StringRef(value->text).ends_with(".autotune");
  }

  static std::string calleeName(const Expr &callee) {
    if (auto *attr = llvm::dyn_cast<AttributeExpr>(&callee))
      return attr->attr;
    if (auto *name = llvm::dyn_cast<NameExpr>(&callee))
      return name->name;
    return "";
  }

  /// A value, as a signature writes it.
  std::optional<std::string> literal(const HostValue &v, SMLoc fallback) {
    switch (v.kind) {
    case HostValue::Kind::Int:
      return std::to_string(v.intValue);
    case HostValue::Kind::Float: {
      std::string s;
      llvm::raw_string_ostream os(s);
      os << v.floatValue;
      return s;
    }
    case HostValue::Kind::Bool:
      return std::string(v.intValue ? "True" : "False");
    case HostValue::Kind::None:
      return std::string("None");
    case HostValue::Kind::String:
      return "\"" + v.text + "\"";
    case HostValue::Kind::Object: {
      // tl.float16 and the other dtypes, as a signature writes them.
      llvm::StringRef name = v.text;
      if (name.consume_front("triton.language.") && DType::parse(name) &&
          DType::parse(name)->getLanguageName() == name)
        return ("tl." + name).str();
      break;
    }
    default:
      break;
    }
    error(v.loc.isValid() ? v.loc : fallback,
          "autotune config values must be ints, floats, bools, strings, None "
          "or tl dtypes, got " +
              v.describe());
    return std::nullopt;
  }

  std::optional<Config> readConfig(const HostValue &value, SMLoc listLoc) {
    SMLoc loc = value.loc.isValid() ? value.loc : listLoc;
    if (value.kind != HostValue::Kind::Config)
      return error(loc, "expected triton.Config(...) in the autotune configs, "
                        "got " +
                            value.describe());
    const HostValue &values = (*value.items)[0];
    const HostValue &options = (*value.items)[1];
    Config config;
    config.loc = loc;
    auto add = [&](const std::string &key, const std::string &text) {
      config.fragment +=
          (config.fragment.empty() ? "" : ", ") + key + "=" + text;
      config.keys.push_back(key);
    };
    for (size_t i = 0; i + 1 < values.items->size(); i += 2) {
      const HostValue &key = (*values.items)[i];
      if (key.kind != HostValue::Kind::String)
        return error(key.loc.isValid() ? key.loc : loc,
                     "autotune config keys must be parameter names as "
                     "strings");
      std::optional<std::string> text = literal((*values.items)[i + 1], loc);
      if (!text)
        return std::nullopt;
      add(key.text, *text);
    }
    for (size_t i = 0; i + 1 < options.items->size(); i += 2) {
      const std::string &name = (*options.items)[i].text;
      if (name != "num_warps" && name != "num_stages" && name != "num_ctas")
        continue; // maxnreg, pre_hook, ...: not part of a variant
      std::optional<std::string> text = literal((*options.items)[i + 1], loc);
      if (!text)
        return std::nullopt;
      add(name, *text);
    }
    return config;
  }

  llvm::SourceMgr &sourceMgr;
  const Module &module;
  HostTarget target;
};

} // namespace

/// The parsed source of one kernel and its configs.
struct KernelConfigs {
  llvm::SourceMgr sourceMgr;
  std::unique_ptr<Module> module;
  const FunctionDefStmt *kernel = nullptr;
  std::vector<Config> configs;
  /// The decorator's `key` names.
  std::vector<std::string> key;
};

/// Reads `sourcePath` and the configs of `kernelName` (empty: the only
/// kernel). Reports errors and returns nullptr on failure.
static std::unique_ptr<KernelConfigs>
readKernelConfigs(const std::string &sourcePath, const std::string &kernelName,
                  const std::string &arch) {
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
  Emitter emitter(result->sourceMgr, context, *result->module, {},
                  HostTarget::forArch(arch));
  result->kernel = emitter.findKernel(kernelName);
  if (!result->kernel)
    return nullptr;
  ConfigReader reader(result->sourceMgr, *result->module,
                      HostTarget::forArch(arch));
  std::optional<std::vector<Config>> configs = reader.read(*result->kernel);
  if (!configs)
    return nullptr;
  result->configs = std::move(*configs);
  result->key = std::move(reader.key);
  return result;
}

int kiln::printAutotuneConfigs(const std::string &sourcePath,
                               const std::string &kernelName,
                               const std::string &arch) {
  std::unique_ptr<KernelConfigs> read =
      readKernelConfigs(sourcePath, kernelName, arch);
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
    if (name == "configs.txt" || name == "autotune_key.txt" ||
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
      readKernelConfigs(options.sourcePath, options.kernelName, options.arch);
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
  // by name; each config adds its values. Its entries split as the
  // signature parser splits them, so that a tuple type ("stride=(i32, 1)")
  // is one entry.
  std::vector<std::string> signatureKeys;
  for (llvm::StringRef piece : splitSignature(options.signature)) {
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
  size_t compiled = 0;
  for (size_t k = 0; k < read->configs.size(); ++k) {
    const Config &config = read->configs[k];
    CompileOptions one = options;
    one.signature = options.signature + ", " + config.fragment;
    llvm::SmallString<128> stem(directory);
    llvm::sys::path::append(stem, "config" + llvm::Twine(k));
    one.outputPath = (stem + "." + extensionOf(options.emit)).str();
    one.metadataPath =
        options.emit == Stage::Cubin ? (stem + ".json").str() : std::string();
    // A config too big for the target is skipped, as Triton's autotuner
    // skips one that runs out of resources; config<K>.error says why.
    std::string doesNotFit;
    one.doesNotFit = &doesNotFit;
    if (!options.ptxOutputPath.empty())
      one.ptxOutputPath = (stem + ".ptx").str();
    index += "config" + std::to_string(k) + ": " + config.fragment + "\n";
    int status = compile(one);
    if (status == kExitDoesNotFit) {
      sourceMgr.PrintMessage(config.loc, llvm::SourceMgr::DK_Warning,
                             "autotune config " + llvm::Twine(k) + " (" +
                                 config.fragment + ") skipped for " +
                                 options.arch + ": " + doesNotFit);
      std::error_code ec;
      llvm::raw_fd_ostream error((stem + ".error").str(), ec,
                                 llvm::sys::fs::OF_Text);
      if (ec)
        return fail("cannot write " + stem + ".error: " + ec.message());
      error << "error: autotune config " << k << " (" << config.fragment
            << ") skipped for " << options.arch << ": " << doesNotFit << "\n";
      continue;
    }
    if (status) {
      sourceMgr.PrintMessage(config.loc, llvm::SourceMgr::DK_Note,
                             "while compiling autotune config " +
                                 llvm::Twine(k) + " (" + config.fragment + ")");
      return status;
    }
    ++compiled;
  }
  if (compiled == 0) {
    sourceMgr.PrintMessage(kernel.nameLoc, llvm::SourceMgr::DK_Error,
                           "no autotune config of '" + kernel.name + "' fits " +
                               options.arch +
                               " (each config's reason is above)");
    return 1;
  }
  llvm::SmallString<128> indexPath(directory);
  llvm::sys::path::append(indexPath, "configs.txt");
  std::error_code ec;
  llvm::raw_fd_ostream out(indexPath, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return fail("cannot write " + indexPath + ": " + ec.message());
  out << index;
  out.close();
  // The key, for the launchers' tuned config choice (kiln-codegen).
  llvm::SmallString<128> keyPath(directory);
  llvm::sys::path::append(keyPath, "autotune_key.txt");
  llvm::raw_fd_ostream keyOut(keyPath, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return fail("cannot write " + keyPath + ": " + ec.message());
  keyOut << llvm::join(read->key, ", ") << "\n";
  return 0;
}
