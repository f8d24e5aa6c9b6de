//===- AutotuneConfigs.cpp - a kernel's @triton.autotune configs ----------===//
#include "compiler/driver/AutotuneConfigs.h"

#include "compiler/frontend/Emitter.h"
#include "compiler/frontend/Parser.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

using namespace kiln::frontend;
using llvm::SMLoc;

namespace {

/// Reads the kernel's decorators; reports errors through `sourceMgr`.
class ConfigReader {
public:
  explicit ConfigReader(llvm::SourceMgr &sourceMgr) : sourceMgr(sourceMgr) {}

  /// The configs, or std::nullopt after an error. No autotune decorator
  /// gives an empty list.
  std::optional<std::vector<std::string>> read(const FunctionDefStmt &kernel) {
    std::vector<std::string> configs;
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
        std::optional<std::string> config = readConfig(*element);
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

  std::optional<std::string> readConfig(const Expr &e) {
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
    std::string out;
    auto add = [&](const std::string &key, const std::string &value) {
      out += (out.empty() ? "" : ", ") + key + "=" + value;
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
    return out;
  }

  llvm::SourceMgr &sourceMgr;
};

} // namespace

int kiln::printAutotuneConfigs(const std::string &sourcePath,
                               const std::string &kernelName) {
  auto file = llvm::MemoryBuffer::getFile(sourcePath, /*IsText=*/true);
  if (!file) {
    llvm::WithColor::error(llvm::errs(), "kilnc")
        << "cannot read " << sourcePath << ": " << file.getError().message()
        << "\n";
    return 1;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(*file), SMLoc());
  std::unique_ptr<Module> module = parseModule(sourceMgr);
  if (!module)
    return 1;
  mlir::MLIRContext context;
  Emitter emitter(sourceMgr, context, *module);
  const FunctionDefStmt *kernel = emitter.findKernel(kernelName);
  if (!kernel)
    return 1;
  std::optional<std::vector<std::string>> configs =
      ConfigReader(sourceMgr).read(*kernel);
  if (!configs)
    return 1;
  for (const std::string &config : *configs)
    llvm::outs() << config << "\n";
  return 0;
}
