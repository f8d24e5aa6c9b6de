//===- BuiltinSupport.h - helpers for writing Triton builtins -------------===//
//
// Every builtin family lives in its own Builtins*.cpp file and registers its
// entries with a `add*Builtins(BuiltinTable &)` function called from
// Builtins.cpp. ArgReader binds a call's arguments Python-style and words
// argument errors uniformly: "argument 'mask' of tl.load must be ...".
//
//===----------------------------------------------------------------------===//
#ifndef KILN_FRONTEND_BUILTINSUPPORT_H
#define KILN_FRONTEND_BUILTINSUPPORT_H

#include "compiler/frontend/Emitter.h"

#include "llvm/ADT/StringMap.h"

namespace kiln::frontend {

using BuiltinTable = llvm::StringMap<BuiltinFn>;
using llvm::SMLoc;
using llvm::StringRef;

/// Binds a call's positional and keyword arguments to a builtin's parameter
/// names, Python style.
class ArgReader {
public:
  ArgReader(Emitter &emitter, const CallArgs &args, StringRef builtin,
            llvm::ArrayRef<StringRef> params)
      : emitter(emitter), args(args), builtin(builtin), params(params),
        values(params.size(), nullptr), locs(params.size(), args.loc) {
    if (args.args.size() > params.size()) {
      emitter.error(args.argLocs[params.size()],
                    builtin + " takes at most " + std::to_string(params.size()) +
                        " arguments, got " + std::to_string(args.args.size()));
      ok = false;
      return;
    }
    for (size_t i = 0; i < args.args.size(); ++i) {
      values[i] = &args.args[i];
      locs[i] = args.argLocs[i];
    }
    for (size_t k = 0; k < args.keywords.size(); ++k) {
      StringRef name = args.keywords[k].first;
      auto it = llvm::find(params, name);
      if (it == params.end()) {
        std::string names;
        for (StringRef p : params)
          names += (names.empty() ? "" : ", ") + p.str();
        emitter.error(args.keywordLocs[k], builtin + " has no argument '" +
                                               name + "' (arguments: " + names +
                                               ")");
        ok = false;
        return;
      }
      size_t index = it - params.begin();
      if (values[index]) {
        emitter.error(args.keywordLocs[k],
                      builtin + " got argument '" + name + "' twice");
        ok = false;
        return;
      }
      values[index] = &args.keywords[k].second;
      locs[index] = args.keywordLocs[k];
    }
  }

  bool isOk() const { return ok; }
  /// The argument, or null when omitted (or None).
  const FValue *get(size_t i) const {
    return values[i] && !values[i]->isNone() ? values[i] : nullptr;
  }
  SMLoc loc(size_t i) const { return locs[i]; }
  /// Reports that argument `i` is missing.
  std::nullopt_t missing(size_t i) const {
    return emitter.error(args.loc, builtin + " needs the argument '" +
                                       params[i].str() + "'");
  }
  std::nullopt_t bad(size_t i, const llvm::Twine &expectation) const {
    const FValue *v = values[i];
    return emitter.error(locs[i], "argument '" + params[i] + "' of " + builtin +
                                      " must be " + expectation + ", got " +
                                      (v ? v->describe() : std::string("nothing")));
  }
  /// A required compile-time int.
  std::optional<int64_t> constInt(size_t i) const {
    const FValue *v = get(i);
    if (!v) {
      missing(i);
      return std::nullopt;
    }
    if (!v->isInt()) {
      bad(i, "a compile-time int (tl.constexpr)");
      return std::nullopt;
    }
    return v->intValue;
  }
  /// An optional compile-time int with a default.
  std::optional<int64_t> constInt(size_t i, int64_t defaultValue) const {
    if (!get(i))
      return defaultValue;
    return constInt(i);
  }

private:
  Emitter &emitter;
  const CallArgs &args;
  std::string builtin;
  llvm::ArrayRef<StringRef> params;
  std::vector<const FValue *> values;
  std::vector<SMLoc> locs;
  bool ok = true;
};


/// A shape argument: an int or a tuple/list of positive powers of two.
std::optional<llvm::SmallVector<int64_t>> readShape(Emitter &e, const FValue &v,
                                                    llvm::SMLoc loc,
                                                    llvm::StringRef what);

// Families of builtins, one file each.
void addCoreBuiltins(BuiltinTable &table);     // Builtins.cpp

} // namespace kiln::frontend

#endif // KILN_FRONTEND_BUILTINSUPPORT_H
