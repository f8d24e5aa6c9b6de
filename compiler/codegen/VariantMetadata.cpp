//===- VariantMetadata.cpp - One compiled variant's metadata JSON ---------===//

#include "VariantMetadata.h"

#include "TritonTypes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <map>
#include <set>

using namespace llvm;

namespace kiln::codegen {

namespace {

bool isIdentifier(StringRef s) {
  return !s.empty() && !isDigit(s.front()) &&
         all_of(s, [](char c) { return isAlnum(c) || c == '_'; });
}

/// Reads the fields of one JSON object, collecting the first error.
class FieldReader {
public:
  FieldReader(const json::Object &object, std::string where)
      : object(object), where(std::move(where)) {}

  void string(StringRef key, std::string &out, bool required = true) {
    const json::Value *value = object.get(key);
    if (!value) {
      if (required)
        fail(formatv("missing key \"{0}\"", key));
      return;
    }
    if (std::optional<StringRef> s = value->getAsString())
      out = s->str();
    else
      fail(formatv("\"{0}\" must be a string", key));
  }

  void integer(StringRef key, int64_t &out, int64_t min, int64_t max) {
    if (!object.get(key))
      return fail(formatv("missing key \"{0}\"", key));
    optionalInteger(key, out, min, max);
  }

  /// Reads `key` if present; returns whether it was (valid or not).
  bool optionalInteger(StringRef key, int64_t &out, int64_t min, int64_t max) {
    const json::Value *value = object.get(key);
    if (!value)
      return false;
    std::optional<int64_t> i = value->getAsInteger();
    if (!i)
      fail(formatv("\"{0}\" must be an integer", key));
    else if (*i < min || *i > max)
      fail(formatv("\"{0}\" is {1}, outside [{2}, {3}]", key, *i, min, max));
    else
      out = *i;
    return true;
  }

  const json::Array *array(StringRef key) {
    const json::Value *value = object.get(key);
    if (!value) {
      fail(formatv("missing key \"{0}\"", key));
      return nullptr;
    }
    const json::Array *a = value->getAsArray();
    if (!a)
      fail(formatv("\"{0}\" must be an array", key));
    return a;
  }

  void fail(const Twine &message) {
    if (error.empty())
      error = where + message.str();
  }

  std::string error;

private:
  const json::Object &object;
  std::string where;
};

/// Reads the optional "tuple_index" of a parameter or constexpr: a
/// non-empty array of integers from 0 to 1023.
void readTupleIndex(const json::Object &object, FieldReader &reader,
                    std::vector<int64_t> &out) {
  const json::Value *value = object.get("tuple_index");
  if (!value)
    return;
  const json::Array *array = value->getAsArray();
  if (!array || array->empty())
    return reader.fail("\"tuple_index\" must be a non-empty array");
  for (const json::Value &i : *array) {
    std::optional<int64_t> n = i.getAsInteger();
    if (!n || *n < 0 || *n > 1023)
      return reader.fail("\"tuple_index\" must hold integers from 0 to 1023");
    out.push_back(*n);
  }
}

std::string indexSuffix(ArrayRef<int64_t> index) {
  std::string text;
  for (int64_t i : index)
    text += "[" + std::to_string(i) + "]";
  return text;
}

/// Checks that the elements of each tuple parameter (run-time ones in
/// `params`, consecutive; constexpr ones in `constexprs`) make up whole
/// tuples: at each level positions 0..n-1, none both an element and a
/// tuple, none twice. Returns an error message, or "".
std::string checkTuples(const VariantMetadata &m) {
  std::map<std::string, std::set<std::vector<int64_t>>> tuples;
  std::set<std::string> closed; // tuples whose run of params has ended
  std::string previous;
  for (const ParamMetadata &p : m.params) {
    if (p.name != previous)
      closed.insert(previous);
    previous = p.name;
    if (p.tupleIndex.empty())
      continue;
    if (closed.count(p.name))
      return "the elements of tuple parameter '" + p.name +
             "' are not consecutive in \"params\"";
    if (parseDescriptorType(p.type))
      return "tuple element " + p.displayName() +
             " is a descriptor; descriptors cannot be tuple elements";
    std::set<std::vector<int64_t>> &seen = tuples[p.name];
    if (!seen.empty() && !(*seen.rbegin() < p.tupleIndex))
      return "the elements of tuple parameter '" + p.name +
             "' are not in order in \"params\" (" + p.displayName() +
             " comes after " + p.name + indexSuffix(*seen.rbegin()) + ")";
    seen.insert(p.tupleIndex);
  }
  for (const ConstexprMetadata &c : m.constexprs)
    if (!c.tupleIndex.empty() && !tuples[c.name].insert(c.tupleIndex).second)
      return "tuple element " + c.displayName() + " is given twice";
  for (const auto &[name, leaves] : tuples) {
    if (any_of(m.params,
               [&](const ParamMetadata &p) {
                 return p.name == name && p.tupleIndex.empty();
               }) ||
        any_of(m.constexprs, [&](const ConstexprMetadata &c) {
          return c.name == name && c.tupleIndex.empty();
        }))
      return "'" + name + "' is both a tuple and a parameter of its own";
    // Each node's children: the next positions seen under it.
    std::map<std::vector<int64_t>, std::set<int64_t>> children;
    for (const std::vector<int64_t> &leaf : leaves)
      for (size_t depth = 0; depth < leaf.size(); ++depth)
        children[std::vector<int64_t>(leaf.begin(), leaf.begin() + depth)]
            .insert(leaf[depth]);
    for (const auto &[node, positions] : children) {
      if (leaves.count(node))
        return "tuple element " + name + indexSuffix(node) +
               " is both an element and a tuple";
      int64_t missing = 0;
      while (positions.count(missing))
        ++missing;
      if (missing != int64_t(positions.size()))
        return "tuple " + name + indexSuffix(node) + " lacks element " + name +
               indexSuffix(node) + "[" + std::to_string(missing) + "]";
    }
  }
  return "";
}

} // namespace

std::string ParamMetadata::displayName() const {
  return name + indexSuffix(tupleIndex);
}

std::optional<std::string> ParamMetadata::requiredValue() const {
  if (equalToOne)
    return std::string("1");
  if (constexprValue && *constexprValue != "None")
    return constexprValue;
  return std::nullopt;
}

std::string ConstexprMetadata::displayName() const {
  return name + indexSuffix(tupleIndex);
}

Expected<VariantMetadata> parseVariantMetadata(StringRef text,
                                               StringRef origin) {
  auto fail = [&](const Twine &message) -> Error {
    return createStringError(inconvertibleErrorCode(),
                             (origin + ": " + message).str());
  };
  Expected<json::Value> parsed = json::parse(text);
  if (!parsed)
    return fail("invalid JSON: " + toString(parsed.takeError()));
  const json::Object *object = parsed->getAsObject();
  if (!object)
    return fail("expected a JSON object");

  VariantMetadata m;
  FieldReader r(*object, "");
  r.string("kernel", m.kernel);
  r.string("entry", m.entry);
  r.string("arch", m.arch);
  r.string("signature", m.signature);
  r.integer("num_warps", m.numWarps, 1, 32);
  r.integer("num_stages", m.numStages, 0, 64);
  r.integer("num_ctas", m.numCtas, 1, 16);
  r.integer("shared_bytes", m.sharedBytes, 0, INT32_MAX);
  r.integer("registers", m.registers, 0, 65536);
  r.integer("spills", m.spills, 0, INT32_MAX);
  int64_t scratch = 0;
  if (r.optionalInteger("global_scratch_bytes", scratch, 0, INT32_MAX))
    m.globalScratchBytes = scratch;
  r.optionalInteger("producer_warps", m.producerWarps, 0, 32);
  r.optionalInteger("launch_warps", m.launchWarps, 1, 32);
  r.string("source_hash", m.sourceHash, /*required=*/false);
  r.string("compiler", m.compiler, /*required=*/false);
  const json::Array *params = r.array("params");
  const json::Array *constexprs = r.array("constexprs");
  if (!r.error.empty())
    return fail(r.error);

  // "add_kernel", or "GELU.forward" for a class's static method.
  SmallVector<StringRef> nameParts;
  StringRef(m.kernel).split(nameParts, '.');
  if (!all_of(nameParts, isIdentifier))
    return fail("\"kernel\" must be identifiers joined by '.', got \"" +
                m.kernel + "\"");
  if (m.entry.empty())
    return fail("\"entry\" is empty");
  if (!isPowerOf2_64(m.numWarps))
    return fail(
        formatv("\"num_warps\" must be a power of 2, got {0}", m.numWarps));
  if (m.launchWarps != 0 &&
      (!isPowerOf2_64(m.launchWarps) || m.launchWarps > m.numWarps))
    return fail(formatv("\"launch_warps\" must be a power of 2 up to "
                        "\"num_warps\" ({0}), got {1}",
                        m.numWarps, m.launchWarps));
  // ptxas-style arch names only: they become C++ literals and table keys.
  StringRef arch = m.arch;
  if (!arch.consume_front("sm_") || arch.empty() ||
      !all_of(arch, [](char c) { return isAlnum(c); }))
    return fail("\"arch\" must look like sm_90a, got \"" + m.arch + "\"");

  for (auto [index, value] : enumerate(*params)) {
    const json::Object *p = value.getAsObject();
    if (!p)
      return fail(formatv("params[{0}] must be an object", index));
    ParamMetadata param;
    FieldReader pr(*p, formatv("params[{0}]: ", index).str());
    pr.string("name", param.name);
    pr.string("type", param.type);
    pr.integer("divisibility", param.divisibility, 1, 16);
    readTupleIndex(*p, pr, param.tupleIndex);
    if (const json::Value *one = p->get("equal_to_1")) {
      std::optional<bool> flag = one->getAsBoolean();
      if (!flag)
        pr.fail("\"equal_to_1\" must be true or false");
      else
        param.equalToOne = *flag;
    }
    if (const json::Value *map = p->get("tensor_map")) {
      const json::Object *layout = map->getAsObject();
      if (!layout) {
        pr.fail("\"tensor_map\" must be an object {\"box\": [...], "
                "\"swizzle\": N}");
      } else {
        FieldReader mr(*layout,
                       pr.error.empty()
                           ? formatv("params[{0}].tensor_map: ", index).str()
                           : "");
        mr.integer("swizzle", param.tensorMapSwizzle, 0, 128);
        if (const json::Array *box = mr.array("box"))
          for (const json::Value &d : *box) {
            std::optional<int64_t> n = d.getAsInteger();
            if (!n || *n < 1 || *n > 256)
              mr.fail("\"box\" must hold integers from 1 to 256");
            else
              param.tensorMapBox.push_back(*n);
          }
        if (!mr.error.empty())
          pr.fail(mr.error);
        param.readsTensorMap = true;
      }
    }
    if (!pr.error.empty())
      return fail(pr.error);
    if (!isIdentifier(param.name))
      return fail(formatv("params[{0}]: name \"{1}\" is not an identifier",
                          index, param.name));
    if (!cppTypeFor(param.type))
      return fail(formatv("params[{0}] ({1}): unknown type \"{2}\" (expected "
                          "i1, i8..i64, u8..u64, fp16, bf16, fp32, fp64, "
                          "fp8e4nv, fp8e5, fp8e4b15, or * before one, or "
                          "tensordesc<T[d0,...]>)",
                          index, param.name, param.type));
    if (std::optional<DescriptorType> desc = parseDescriptorType(param.type)) {
      if (param.equalToOne)
        return fail(formatv("params[{0}] ({1}): a descriptor is never equal "
                            "to 1",
                            index, param.name));
      if (param.readsTensorMap &&
          param.tensorMapBox.size() != desc->blockShape.size())
        return fail(formatv("params[{0}] ({1}): the tensor map's box has {2} "
                            "dimensions, the block {3}",
                            index, param.name, param.tensorMapBox.size(),
                            desc->blockShape.size()));
      if (param.readsTensorMap && param.tensorMapSwizzle != 0 &&
          param.tensorMapSwizzle != 32 && param.tensorMapSwizzle != 64 &&
          param.tensorMapSwizzle != 128)
        return fail(formatv("params[{0}] ({1}): the tensor map's swizzle must "
                            "be 0, 32, 64 or 128 bytes, got {2}",
                            index, param.name, param.tensorMapSwizzle));
    } else if (param.readsTensorMap) {
      return fail(formatv("params[{0}] ({1}): only descriptors have a "
                          "tensor_map",
                          index, param.name));
    }
    if (param.divisibility != 1 && param.divisibility != 16)
      return fail(formatv("params[{0}] ({1}): divisibility must be 1 or 16",
                          index, param.name));
    if (param.divisibility == 16 && !isPointerType(param.type) &&
        !isIntegerType(param.type) && !parseDescriptorType(param.type))
      return fail(formatv("params[{0}] ({1}): only pointers, integers and "
                          "descriptors (their extents) can be divisible by 16",
                          index, param.name));
    if (param.equalToOne && !isIntegerType(param.type))
      return fail(formatv("params[{0}] ({1}): only integers (not {2}) can be "
                          "equal to 1",
                          index, param.name, param.type));
    if (param.equalToOne && param.divisibility != 1)
      return fail(formatv("params[{0}] ({1}): equal to 1 and divisible by 16 "
                          "at once",
                          index, param.name));
    m.params.push_back(std::move(param));
  }
  for (auto [index, value] : enumerate(*constexprs)) {
    const json::Object *c = value.getAsObject();
    if (!c)
      return fail(formatv("constexprs[{0}] must be an object", index));
    ConstexprMetadata constant;
    FieldReader cr(*c, formatv("constexprs[{0}]: ", index).str());
    cr.string("name", constant.name);
    // The contract says a string; tolerate a bare integer.
    if (std::optional<int64_t> i = c->getInteger("value"))
      constant.value = std::to_string(*i);
    else
      cr.string("value", constant.value);
    readTupleIndex(*c, cr, constant.tupleIndex);
    if (!cr.error.empty())
      return fail(cr.error);
    if (!isIdentifier(constant.name))
      return fail(formatv("constexprs[{0}]: name \"{1}\" is not an "
                          "identifier",
                          index, constant.name));
    m.constexprs.push_back(std::move(constant));
  }
  if (std::string error = checkTuples(m); !error.empty())
    return fail(error);
  return m;
}

} // namespace kiln::codegen
