//===- Signature.cpp - a kernel variant's parameter types and values ------===//
#include "compiler/frontend/Signature.h"
#include "compiler/signature/SignatureEntries.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace kiln::frontend;
using llvm::StringRef;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The element type names of a signature, as its errors list them.
static constexpr llvm::StringLiteral kElementTypes[] = {
    "i1",  "i8",   "i16",  "i32",  "i64",  "u8",      "u16",   "u32",
    "u64", "fp16", "bf16", "fp32", "fp64", "fp8e4nv", "fp8e5", "fp8e4b15"};

/// " (did you mean 'X'?)" for the candidate within a small edit distance of
/// `word` (1 for words of up to 3 letters, else 2), or "" when none is.
template <typename Range>
static std::string didYouMean(StringRef word, const Range &candidates,
                              StringRef prefix = "") {
  unsigned best = word.size() > 3 ? 3 : 2;
  std::string closest;
  for (const auto &candidate : candidates) {
    unsigned distance = StringRef(candidate).edit_distance_insensitive(word);
    if (distance < best) {
      best = distance;
      closest = StringRef(candidate).str();
    }
  }
  return closest.empty() ? ""
                         : " (did you mean '" + prefix.str() + closest + "'?)";
}

/// Whether a signature entry is of the named form `name=value` (a quoted
/// string holding '=' is a positional value).
static bool isNamedEntry(StringRef entry) {
  StringRef key = entry.split('=').first.trim();
  return entry.contains('=') && !key.empty() &&
         (llvm::isAlpha(key.front()) || key.front() == '_') &&
         llvm::all_of(key, [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

/// The parameters' names, comma-separated, for errors.
static std::string parameterList(llvm::ArrayRef<ParamDecl> params) {
  std::string names;
  for (const ParamDecl &p : params)
    names += (names.empty() ? "" : ", ") + p.name;
  return names;
}

std::optional<ConstexprLiteral>
kiln::frontend::parseConstexprLiteral(StringRef text) {
  ConstexprLiteral lit;
  text = text.trim();
  lit.text = text.str();
  if (text == "True" || text == "False") {
    lit.kind = ConstexprLiteral::Kind::Bool;
    lit.intValue = text == "True";
    return lit;
  }
  if (text == "None") {
    lit.kind = ConstexprLiteral::Kind::None;
    return lit;
  }
  // A quoted string: its quote character must not occur inside (there is
  // no escaping), so that the signature splits back into the same entries.
  if (text.size() >= 2 && (text.front() == '"' || text.front() == '\'') &&
      text.back() == text.front() &&
      !text.drop_front().drop_back().contains(text.front())) {
    lit.kind = ConstexprLiteral::Kind::String;
    lit.text = text.drop_front().drop_back().str();
    return lit;
  }
  StringRef dtypeName = text;
  if (dtypeName.consume_front("tl.") ||
      dtypeName.consume_front("triton.language.")) {
    if (auto dtype = DType::parse(dtypeName)) {
      lit.kind = ConstexprLiteral::Kind::DType;
      lit.dtype = *dtype;
      return lit;
    }
    return std::nullopt;
  }
  int64_t i;
  if (!text.getAsInteger(0, i)) {
    lit.kind = ConstexprLiteral::Kind::Int;
    lit.intValue = i;
    return lit;
  }
  double d;
  if (!text.getAsDouble(d)) {
    lit.kind = ConstexprLiteral::Kind::Float;
    lit.floatValue = d;
    return lit;
  }
  // A name or dotted path: a function, looked up when the kernel is emitted.
  llvm::SmallVector<StringRef> parts;
  text.split(parts, '.');
  auto identifier = [](StringRef part) {
    return !part.empty() && !llvm::isDigit(part.front()) &&
           llvm::all_of(part,
                        [](char c) { return llvm::isAlnum(c) || c == '_'; });
  };
  // A type name (`i32`, `fp16`) is a type written where a value belongs.
  if (llvm::all_of(parts, identifier) && !DType::parse(text)) {
    lit.kind = ConstexprLiteral::Kind::Function;
    return lit;
  }
  return std::nullopt;
}

namespace {
/// A type entry: `*fp32`, `*fp32:16`, `i32`, `i32:16`, `i32:1`.
struct TypeEntry {
  TritonType type;
  unsigned divisibility = 1;
  bool equalToOne = false;
};
} // namespace

/// `tensordesc<T[d0,d1,...]>`: a tensor descriptor of T moved in blocks of
/// d0 x d1 x ...; spaces allowed. Errors say what is wrong with it.
static llvm::Expected<TritonType> parseDescriptorType(StringRef text) {
  text = text.trim();
  auto bad = [&](const llvm::Twine &why) {
    return makeError("'" + text + "': " + why +
                     " (expected tensordesc<T[d0,d1,...]>, e.g. "
                     "tensordesc<fp16[128,64]>)");
  };
  StringRef body = text;
  if (!body.consume_front("tensordesc"))
    return bad("not a descriptor type");
  body = body.ltrim();
  if (!body.consume_front("<"))
    return bad("missing '<'");
  if (!body.consume_back(">"))
    return bad("missing '>'");
  size_t open = body.find('[');
  if (open == StringRef::npos)
    return bad("missing the block shape in brackets");
  StringRef dtypeText = body.take_front(open);
  StringRef rest = body.drop_front(open + 1).rtrim();
  if (!rest.consume_back("]"))
    return bad("missing ']'");
  auto dtype = DType::parse(dtypeText.trim());
  if (!dtype)
    return bad("unknown element type '" + dtypeText.trim() + "'");
  if (dtype->isBool())
    return bad("descriptors of i1 are not supported");
  llvm::SmallVector<StringRef> dims;
  rest.split(dims, ',');
  llvm::SmallVector<int64_t> shape;
  int64_t numel = 1;
  for (StringRef d : dims) {
    int64_t n;
    if (d.trim().getAsInteger(10, n) || n <= 0)
      return bad("block dimension '" + d.trim() +
                 "' is not a positive integer");
    if (!llvm::isPowerOf2_64(n))
      return bad("block dimension " + llvm::Twine(n) + " is not a power of 2");
    numel *= n;
    if (numel > (int64_t(1) << 20))
      return bad("the block has more than 2^20 elements");
    shape.push_back(n);
  }
  if (shape.size() > 5)
    return bad("descriptors have rank 1 to 5, got " +
               llvm::Twine(shape.size()));
  return TritonType::tensorDescriptor(*dtype, shape);
}

/// `tensordesc<...>:16` is the descriptor `tensordesc<...>` with every
/// extent divisible by 16 (what the aligned variant assumes, and the launcher
/// checks): the descriptor's text, and the hint in `divisibility`. Any other
/// hint is an error.
static llvm::Expected<StringRef> splitDescriptorHint(StringRef text,
                                                     unsigned &divisibility) {
  text = text.trim();
  auto [type, hint] = text.rsplit('>');
  if (type == text || hint.trim().empty())
    return text;
  StringRef h = hint.trim();
  if (!h.consume_front(":") || h.trim() != "16")
    return makeError("'" + text +
                     "': a descriptor takes only the hint :16 (every extent "
                     "divisible by 16)");
  divisibility = 16;
  return text.drop_back(hint.size());
}

static std::optional<TypeEntry> parseTypeEntry(StringRef text) {
  TypeEntry entry;
  text = text.trim();
  if (text.starts_with("tensordesc")) {
    auto typeText = splitDescriptorHint(text, entry.divisibility);
    if (!typeText) {
      llvm::consumeError(typeText.takeError());
      return std::nullopt;
    }
    auto type = parseDescriptorType(*typeText);
    if (!type) {
      llvm::consumeError(type.takeError());
      return std::nullopt;
    }
    entry.type = *type;
    return entry;
  }
  auto [typeText, hint] = text.split(':');
  if (typeText.consume_front("*"))
    entry.type.isPointer = true;
  auto dtype = DType::parse(typeText.trim());
  if (!dtype)
    return std::nullopt;
  entry.type.element = *dtype;
  if (!hint.empty()) {
    unsigned d;
    if (hint.trim().getAsInteger(10, d) || (d != 1 && d != 16))
      return std::nullopt;
    if (d == 16)
      entry.divisibility = 16;
    else
      entry.equalToOne = true;
  }
  return entry;
}

/// What a tuple element may be, for errors.
static constexpr llvm::StringLiteral kTupleElementKinds =
    "a type (*T or T, optionally with :16, or :1 for integers), a constexpr "
    "value (an int, float, bool, string, None or tl dtype) or a nested tuple";

/// Bounds on tuples, far beyond what kernels take (a tensor's strides), so
/// that a malformed signature gets an error instead of a deep recursion; the
/// metadata's reader (kiln-codegen) accepts positions up to 1023.
static constexpr unsigned kMaxTupleDepth = 8;
static constexpr unsigned kMaxTupleElements = 1024;

/// Fills `tuple` from `text`, "(e0, e1, ...)": each element a type with its
/// hint, a constexpr value or a tuple. `tuple`'s name and tupleIndex are set;
/// errors name the parameter and the element.
static llvm::Error fillTuple(ParamSpec &tuple, StringRef text) {
  std::string where = tuple.displayName();
  if (tuple.tupleIndex.size() >= kMaxTupleDepth)
    return makeError(
        llvm::formatv("parameter '{0}': tuples nest at most {1} deep", where,
                      kMaxTupleDepth));
  StringRef written = text.trim();
  text = written;
  if (!text.consume_front("(") || !text.consume_back(")"))
    return makeError(llvm::formatv(
        "parameter '{0}': '{1}' is not a tuple (expected '(' elements ')', "
        "e.g. (i32, i32:16))",
        where, written));
  llvm::SmallVector<StringRef> items =
      kiln::splitSignatureEntries(text, /*keepEmpty=*/true);
  // `(i32,)` is a tuple of one, as in Python.
  if (items.size() > 1 && items.back().empty())
    items.pop_back();
  if (items.size() == 1 && items.front().empty())
    return makeError(llvm::formatv(
        "parameter '{0}': an empty tuple has no elements to pass; drop the "
        "parameter or give it elements, e.g. (i32, i32)",
        where));
  if (items.size() > kMaxTupleElements)
    return makeError(llvm::formatv(
        "parameter '{0}': a tuple has at most {1} elements, got {2}", where,
        kMaxTupleElements, items.size()));
  tuple.isTuple = true;
  for (auto [i, item] : llvm::enumerate(items)) {
    ParamSpec element;
    element.name = tuple.name;
    element.tupleIndex = tuple.tupleIndex;
    element.tupleIndex.push_back(unsigned(i));
    std::string at = element.displayName();
    if (item.empty())
      return makeError(
          llvm::formatv("parameter '{0}': element {1} is empty (expected {2})",
                        where, i, kTupleElementKinds));
    if (item.starts_with("(")) {
      if (auto err = fillTuple(element, item))
        return err;
    } else if (item.starts_with("tensordesc")) {
      return makeError(llvm::formatv(
          "parameter '{0}': a tensor descriptor cannot be a tuple element; "
          "make it a parameter of its own",
          at));
    } else if (item == "None") {
      element.isConstexpr = true;
      element.value = *parseConstexprLiteral(item);
    } else if (std::optional<TypeEntry> entry = parseTypeEntry(item)) {
      if (entry->equalToOne &&
          (entry->type.isPointer || !entry->type.element.isInteger() ||
           entry->type.element.isBool()))
        return makeError(llvm::formatv(
            "parameter '{0}': ':1' (the argument equals 1) applies to "
            "integer types i8..i64 and u8..u64 only, got '{1}'; pointers take "
            "':16'",
            at, item));
      element.type = entry->type;
      element.divisibility = entry->divisibility;
      element.equalToOne = entry->equalToOne;
    } else if (std::optional<ConstexprLiteral> lit =
                   parseConstexprLiteral(item);
               lit && lit->kind != ConstexprLiteral::Kind::Function) {
      element.isConstexpr = true;
      element.value = *lit;
    } else {
      StringRef typeName = item.split(':').first;
      bool pointer = typeName.consume_front("*");
      return makeError(llvm::formatv(
          "parameter '{0}': '{1}' is not {2}{3}", at, item, kTupleElementKinds,
          didYouMean(typeName, kElementTypes, pointer ? "*" : "")));
    }
    tuple.elements.push_back(std::move(element));
  }
  return llvm::Error::success();
}

static void appendLeaves(const ParamSpec &p,
                         std::vector<const ParamSpec *> &leaves);

static llvm::Error fillParam(ParamSpec &spec, const ParamDecl &decl,
                             StringRef text) {
  spec.name = decl.name;
  spec.isConstexpr = decl.isConstexpr;
  // A tuple of compile-time values (`SHAPE=(2, 4)`): bound as a tuple whose
  // elements are constexprs, which is how upstream's constexpr of a tuple
  // behaves (indexing, len, iteration give the values).
  if (decl.isConstexpr && text.trim().starts_with("(")) {
    spec.isConstexpr = false;
    if (auto err = fillTuple(spec, text))
      return err;
    std::vector<const ParamSpec *> leaves;
    appendLeaves(spec, leaves);
    for (const ParamSpec *leaf : leaves)
      if (!leaf->isConstexpr)
        return makeError(llvm::formatv(
            "parameter '{0}' is tl.constexpr: its tuple holds compile-time "
            "values only (ints, floats, bools, strings, dtypes), got a type "
            "for element {1}",
            decl.name, leaf->displayName()));
    return llvm::Error::success();
  }
  if (decl.isConstexpr) {
    auto lit = parseConstexprLiteral(text);
    if (!lit)
      return makeError(
          llvm::formatv("parameter '{0}' is tl.constexpr and needs "
                        "a value (an int, float, bool, string, tl dtype or "
                        "@triton.jit function), got '{1}'",
                        decl.name, text.trim()));
    spec.value = *lit;
    return llvm::Error::success();
  }
  // None for a run-time parameter: the variant is specialized for None (as
  // upstream's JIT does when the argument is None) and the parameter leaves
  // the kernel ABI.
  if (text.trim() == "None") {
    spec.isConstexpr = true;
    spec.value = *parseConstexprLiteral("None");
    return llvm::Error::success();
  }
  if (text.trim().starts_with("("))
    return fillTuple(spec, text);
  if (text.trim().starts_with("tensordesc")) {
    unsigned divisibility = 1;
    auto typeText = splitDescriptorHint(text, divisibility);
    if (!typeText)
      return makeError(llvm::formatv("parameter '{0}': {1}", decl.name,
                                     llvm::toString(typeText.takeError())));
    auto type = parseDescriptorType(*typeText);
    if (!type)
      return makeError(llvm::formatv("parameter '{0}': {1}", decl.name,
                                     llvm::toString(type.takeError())));
    spec.type = *type;
    spec.divisibility = divisibility;
    return llvm::Error::success();
  }
  auto entry = parseTypeEntry(text);
  if (!entry) {
    if (auto lit = parseConstexprLiteral(text);
        lit && lit->kind != ConstexprLiteral::Kind::Function)
      return makeError(llvm::formatv(
          "parameter '{0}' is not tl.constexpr, so it needs a type such as "
          "'*fp32' or 'i32', got the value '{1}'",
          decl.name, text.trim()));
    StringRef element = text.trim().split(':').first;
    bool pointer = element.consume_front("*");
    return makeError(llvm::formatv(
        "parameter '{0}': unknown type '{1}'{2} (expected *T or T with T "
        "one of i1 i8 i16 i32 i64 u8 u16 u32 u64 fp16 bf16 fp32 fp64 "
        "fp8e4nv fp8e5 fp8e4b15, "
        "optionally followed by :16, or an integer type by :1; "
        "tensordesc<T[d0,d1,...]>; or a tuple of these, (i32, i32:16))",
        decl.name, text.trim(),
        didYouMean(element, kElementTypes, pointer ? "*" : "")));
  }
  if (entry->equalToOne &&
      (entry->type.isPointer || !entry->type.element.isInteger() ||
       entry->type.element.isBool()))
    return makeError(llvm::formatv(
        "parameter '{0}': ':1' (the argument equals 1) applies to integer "
        "types i8..i64 and u8..u64 only, got '{1}'; pointers take ':16'",
        decl.name, text.trim()));
  spec.type = entry->type;
  spec.divisibility = entry->divisibility;
  spec.equalToOne = entry->equalToOne;
  return llvm::Error::success();
}

/// Calls `fn` on each parameter of `params` that is not a tuple, and on each
/// element of a tuple that is not one, recursively.
template <typename Fn>
static void forEachLeaf(std::vector<ParamSpec> &params, Fn fn) {
  for (ParamSpec &p : params) {
    if (p.isTuple)
      forEachLeaf(p.elements, fn);
    else
      fn(p);
  }
}

static llvm::Error setOption(KernelSpec &spec, StringRef key, StringRef value) {
  unsigned v;
  bool bad = value.trim().getAsInteger(10, v);
  // num_stages=0 is upstream's "no pipelining", as 1 is (FLASHNN's paged
  // attention configs use it).
  if (!bad && v == 0 && key == "num_stages")
    v = 1;
  if (bad || v == 0)
    return makeError(llvm::formatv("option '{0}' needs a positive integer, got "
                                   "'{1}'",
                                   key, value.trim()));
  if (key == "num_warps") {
    if (!llvm::isPowerOf2_32(v) || v > 32)
      return makeError(
          llvm::formatv("num_warps must be a power of 2 up to 32, got {0}", v));
    spec.numWarps = v;
    spec.numWarpsGiven = true;
  } else if (key == "num_stages") {
    spec.numStages = v;
    spec.numStagesGiven = true;
  } else {
    spec.numCtas = v;
  }
  return llvm::Error::success();
}

llvm::SmallVector<StringRef>
kiln::frontend::splitSignature(StringRef signature) {
  return kiln::splitSignatureEntries(signature);
}

llvm::Expected<KernelSpec>
kiln::frontend::parseSignature(StringRef signature,
                               llvm::ArrayRef<ParamDecl> params, bool aligned) {
  KernelSpec spec;
  llvm::SmallVector<StringRef> entries = splitSignature(signature);
  // Python rejects a def naming one parameter twice; an entry could not
  // say which of them it types.
  for (size_t i = 0; i < params.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (params[i].name == params[j].name)
        return makeError("the kernel has two parameters named '" +
                         params[i].name + "'");

  bool named = !entries.empty() && isNamedEntry(entries.front());
  if (llvm::any_of(entries,
                   [&](StringRef e) { return isNamedEntry(e) != named; }))
    return makeError("the signature mixes named (name=value) and positional "
                     "entries; use one form");
  spec.params.resize(params.size());
  if (named) {
    std::vector<bool> seen(params.size(), false);
    for (StringRef entry : entries) {
      auto [key, value] = entry.split('=');
      key = key.trim();
      // A kernel parameter named like a launch option stays a parameter
      // (upstream binds the keyword to the parameter first).
      bool isParam = llvm::any_of(
          params, [&](const ParamDecl &p) { return p.name == key; });
      if (!isParam &&
          (key == "num_warps" || key == "num_stages" || key == "num_ctas")) {
        if (auto err = setOption(spec, key, value))
          return std::move(err);
        continue;
      }
      auto it = llvm::find_if(
          params, [&](const ParamDecl &p) { return p.name == key; });
      if (it == params.end()) {
        llvm::SmallVector<std::string> unnamed;
        for (const ParamDecl &p : params)
          if (!llvm::any_of(entries, [&](StringRef e) {
                return e.split('=').first.trim() == p.name;
              }))
            unnamed.push_back(p.name);
        return makeError(llvm::formatv(
            "the kernel has no parameter '{0}'{1}; its parameters are: {2} "
            "(and the launch options num_warps, num_stages, num_ctas)",
            key, didYouMean(key, unnamed), parameterList(params)));
      }
      size_t index = it - params.begin();
      if (seen[index])
        return makeError(llvm::formatv("parameter '{0}' is given twice", key));
      seen[index] = true;
      if (auto err = fillParam(spec.params[index], *it, value))
        return std::move(err);
    }
    for (size_t i = 0; i < params.size(); ++i) {
      if (seen[i])
        continue;
      if (params[i].isConstexpr && params[i].defaultValue) {
        spec.params[i].name = params[i].name;
        spec.params[i].isConstexpr = true;
        spec.params[i].value = *params[i].defaultValue;
        spec.params[i].fromDefault = true;
        continue;
      }
      if (params[i].fromHeuristic) {
        spec.params[i].name = params[i].name;
        spec.params[i].isConstexpr = true;
        spec.params[i].pendingHeuristic = true;
        continue;
      }
      if (params[i].defaultsToNone) {
        spec.params[i].name = params[i].name;
        spec.params[i].isConstexpr = true;
        spec.params[i].value = *parseConstexprLiteral("None");
        spec.params[i].fromDefault = true;
        continue;
      }
      if (!params[i].defaultError.empty())
        return makeError(llvm::formatv(
            "parameter '{0}' is missing from the signature and its default "
            "cannot be evaluated at compile time (give its value):\n{1}",
            params[i].name, StringRef(params[i].defaultError).rtrim()));
      return makeError(llvm::formatv("parameter '{0}' is missing from the "
                                     "signature ({1})",
                                     params[i].name,
                                     params[i].isConstexpr
                                         ? "it is tl.constexpr: give its value"
                                         : "give its type, e.g. *fp32 or i32"));
    }
  } else {
    if (entries.size() != params.size())
      return makeError(llvm::formatv(
          "the signature has {0} entries but the kernel has {1} parameters "
          "({2}); the positional form needs one entry per parameter, in order",
          entries.size(), params.size(), parameterList(params)));
    for (size_t i = 0; i < params.size(); ++i)
      if (auto err = fillParam(spec.params[i], params[i], entries[i]))
        return std::move(err);
  }
  if (aligned)
    forEachLeaf(spec.params, [](ParamSpec &p) {
      if (p.isKernelArgument() &&
          (p.type.isTensorDescriptor() || p.type.isPointer ||
           p.type.element.isInteger()) &&
          !p.type.element.isBool())
        p.divisibility = 16; // a descriptor's: its extents
    });
  return spec;
}

void kiln::frontend::assumeAlignedPointers(KernelSpec &spec) {
  forEachLeaf(spec.params, [](ParamSpec &p) {
    if (p.isKernelArgument() && p.type.isPointer)
      p.divisibility = 16;
  });
}

std::string ParamSpec::displayName() const {
  std::string text = name;
  for (unsigned i : tupleIndex)
    text += "[" + std::to_string(i) + "]";
  return text;
}

/// One parameter's entry in the positional form.
static std::string positionalEntry(const ParamSpec &p) {
  if (p.isTuple) {
    std::vector<std::string> elements;
    for (const ParamSpec &e : p.elements)
      elements.push_back(positionalEntry(e));
    // A tuple of one keeps its comma, as Python writes it.
    return "(" + llvm::join(elements, ", ") +
           (elements.size() == 1 ? ",)" : ")");
  }
  if (p.isConstexpr) {
    if (p.value.kind != ConstexprLiteral::Kind::String)
      return p.value.text;
    // The quote character the text does not hold.
    char quote = StringRef(p.value.text).contains('"') ? '\'' : '"';
    return quote + p.value.text + quote;
  }
  return p.type.str() + (p.equalToOne           ? ":1"
                         : p.divisibility == 16 ? ":16"
                                                : "");
}

std::string KernelSpec::str() const {
  std::vector<std::string> entries;
  for (const ParamSpec &p : params)
    entries.push_back(positionalEntry(p));
  return llvm::join(entries, ", ");
}

static void appendLeaves(const ParamSpec &p,
                         std::vector<const ParamSpec *> &leaves) {
  if (!p.isTuple) {
    leaves.push_back(&p);
    return;
  }
  for (const ParamSpec &e : p.elements)
    appendLeaves(e, leaves);
}

std::vector<const ParamSpec *> KernelSpec::leaves() const {
  std::vector<const ParamSpec *> result;
  for (const ParamSpec &p : params)
    appendLeaves(p, result);
  return result;
}

std::string kiln::frontend::withEqualToOne(StringRef signature,
                                           llvm::ArrayRef<ParamDecl> params,
                                           llvm::ArrayRef<std::string> names) {
  llvm::SmallVector<StringRef> entries = splitSignature(signature);
  bool named = isNamedSignature(signature);
  // A tuple's elements are retyped inside it, not here: it stays as is.
  auto retyped = [](StringRef type) {
    if (type.trim().starts_with("("))
      return type.trim().str();
    return (type.split(':').first.trim() + ":1").str();
  };
  std::vector<std::string> out;
  for (auto [i, entry] : llvm::enumerate(entries)) {
    if (named) {
      auto [key, value] = entry.split('=');
      out.push_back(llvm::is_contained(names, key.trim())
                        ? (key.trim() + "=" + retyped(value)).str()
                        : entry.str());
    } else {
      bool rewrite =
          i < params.size() && llvm::is_contained(names, params[i].name);
      out.push_back(rewrite ? retyped(entry) : entry.str());
    }
  }
  return llvm::join(out, ", ");
}

llvm::Error
kiln::frontend::checkLaunchOptionsSupported(const KernelSpec &spec) {
  // Thread-block clusters are not compiled: program ids, the grid and the
  // metadata know nothing of them, so a cluster launch would run num_ctas
  // times the programs, each believing it is a whole program.
  if (spec.numCtas != 1)
    return makeError(llvm::formatv(
        "num_ctas={0} is not supported (Kiln does not compile thread-block "
        "clusters yet); use num_ctas=1, the default",
        spec.numCtas));
  return llvm::Error::success();
}

bool kiln::frontend::isNamedSignature(StringRef signature) {
  llvm::SmallVector<StringRef> entries = splitSignature(signature);
  return !entries.empty() && isNamedEntry(entries.front());
}
