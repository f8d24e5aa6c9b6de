//===- LauncherArguments.cpp - The arguments a generated launcher takes ---===//

#include "LauncherArguments.h"

#include "TritonTypes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace llvm;

namespace kiln::codegen {

/// Calls `visit(run, leaf)` for each element, in order, of the (sub)tuple
/// whose leaves (consecutive params, all sharing the first `depth`
/// positions) are `leaves`: `run` the leaves of that element, `leaf` whether
/// it is one parameter rather than a nested tuple.
static void
forEachTupleElement(const VariantMetadata &m, ArrayRef<unsigned> leaves,
                    size_t depth,
                    function_ref<void(ArrayRef<unsigned>, bool)> visit) {
  for (size_t i = 0; i < leaves.size();) {
    const ParamMetadata &first = m.params[leaves[i]];
    size_t end = i + 1;
    while (end < leaves.size() &&
           m.params[leaves[end]].tupleIndex[depth] == first.tupleIndex[depth])
      ++end;
    visit(leaves.slice(i, end - i), first.tupleIndex.size() == depth + 1);
    i = end;
  }
}

/// Sets `argument`'s types for the (sub)tuple whose elements are `leaves`
/// (consecutive params of one tuple, all sharing the first `depth`
/// positions): its C++ type in `cppType`, its Triton type in `tritonType`.
static void setTupleTypes(const VariantMetadata &m, ArrayRef<unsigned> leaves,
                          size_t depth, std::string &cppType,
                          std::string &tritonType) {
  std::vector<std::string> cppElements, tritonElements;
  bool allLeaves = true;
  forEachTupleElement(m, leaves, depth, [&](ArrayRef<unsigned> run, bool leaf) {
    if (leaf) {
      const ParamMetadata &p = m.params[run.front()];
      cppElements.push_back(launcherCppType(p));
      tritonElements.push_back(p.constexprValue ? *p.constexprValue : p.type);
      return;
    }
    cppElements.emplace_back();
    tritonElements.emplace_back();
    setTupleTypes(m, run, depth + 1, cppElements.back(), tritonElements.back());
    allLeaves = false;
  });
  cppType = allLeaves && all_equal(cppElements)
                ? "std::array<" + cppElements.front() + ", " +
                      std::to_string(cppElements.size()) + ">"
                : "std::tuple<" + join(cppElements, ", ") + ">";
  tritonType = "(" + join(tritonElements, ", ") +
               (tritonElements.size() == 1 ? ",)" : ")");
}

std::vector<LauncherArgument> launcherArguments(const VariantMetadata &m) {
  std::vector<LauncherArgument> arguments;
  for (auto [i, p] : enumerate(m.params)) {
    bool continues = !p.tupleIndex.empty() && !arguments.empty() &&
                     arguments.back().isTuple &&
                     arguments.back().name == p.name;
    if (!continues) {
      LauncherArgument argument;
      argument.name = p.name;
      argument.isTuple = !p.tupleIndex.empty();
      arguments.push_back(std::move(argument));
    }
    arguments.back().params.push_back(unsigned(i));
  }
  for (LauncherArgument &argument : arguments) {
    if (argument.isTuple) {
      setTupleTypes(m, argument.params, /*depth=*/0, argument.cppType,
                    argument.tritonType);
      continue;
    }
    argument.tritonType = m.params[argument.params[0]].type;
    argument.cppType = *cppTypeFor(argument.tritonType);
  }
  return arguments;
}

/// The initializers of the elements of the (sub)tuple whose elements are
/// `leaves`, as setTupleTypes lays it out: a nested tuple's braced into its
/// C++ type.
static std::vector<std::string>
tupleInitializers(const VariantMetadata &m, ArrayRef<unsigned> leaves,
                  size_t depth, function_ref<std::string(unsigned)> element) {
  std::vector<std::string> items;
  forEachTupleElement(m, leaves, depth, [&](ArrayRef<unsigned> run, bool leaf) {
    if (leaf) {
      items.push_back(element(run.front()));
      return;
    }
    std::string type, tritonType;
    setTupleTypes(m, run, depth + 1, type, tritonType);
    items.push_back(type + "{" +
                    join(tupleInitializers(m, run, depth + 1, element), ", ") +
                    "}");
  });
  return items;
}

std::vector<std::string>
argumentInitializers(const VariantMetadata &m, const LauncherArgument &argument,
                     function_ref<std::string(unsigned)> element) {
  if (!argument.isTuple)
    return {element(argument.params.front())};
  return tupleInitializers(m, argument.params, /*depth=*/0, element);
}

std::string launcherCppType(const ParamMetadata &p) {
  if (p.constexprValue && p.type == "none")
    return "std::nullptr_t";
  return *cppTypeFor(p.type);
}

std::string elementExpression(StringRef argument,
                              ArrayRef<int64_t> tupleIndex) {
  std::string expression = argument.str();
  for (int64_t i : tupleIndex)
    expression = "std::get<" + std::to_string(i) + ">(" + expression + ")";
  return expression;
}

} // namespace kiln::codegen
