#include "kiln/tune/spec.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "kiln/internal/json.h"

namespace kiln {
namespace tune {
namespace {

using internal::JsonValue;

class SpecReader {
public:
  explicit SpecReader(absl::string_view origin) : origin_(origin) {}

  absl::Status Fail(const JsonValue &at, const std::string &path,
                    absl::string_view message) {
    return absl::InvalidArgumentError(
        absl::StrCat(origin_, ":", at.line, ": ", path, ": ", message));
  }

  absl::Status Expect(const JsonValue &v, const std::string &path,
                      JsonValue::Kind kind, const char *what) {
    if (v.kind == kind)
      return absl::OkStatus();
    return Fail(v, path,
                absl::StrCat("expected ", what, ", got ", v.KindName()));
  }

  absl::Status Arg(const JsonValue &v, const std::string &path, ArgSpec &arg) {
    if (v.kind == JsonValue::Kind::kString) {
      arg.expression = v.string;
      return absl::OkStatus();
    }
    if (v.kind == JsonValue::Kind::kNumber) {
      arg.is_number = true;
      arg.number = v.number;
      if (v.is_integer)
        arg.expression = absl::StrCat(v.integer);
      return absl::OkStatus();
    }
    if (v.kind != JsonValue::Kind::kObject) {
      return Fail(v, path,
                  absl::StrCat("expected a buffer {\"elements\": ...}, an "
                               "expression or a number, got ",
                               v.KindName()));
    }
    arg.buffer = true;
    for (const auto &[name, value] : v.members) {
      std::string at = absl::StrCat(path, ".", name);
      if (name == "elements") {
        if (value.kind == JsonValue::Kind::kNumber && value.is_integer) {
          arg.elements = absl::StrCat(value.integer);
        } else if (absl::Status s = Expect(value, at, JsonValue::Kind::kString,
                                           "an expression");
                   !s.ok()) {
          return s;
        } else {
          arg.elements = value.string;
        }
      } else if (name == "init") {
        if (absl::Status s =
                Expect(value, at, JsonValue::Kind::kString, "a string");
            !s.ok()) {
          return s;
        }
        if (value.string != "random" && value.string != "zeros" &&
            value.string != "ones") {
          return Fail(value, at,
                      absl::StrCat("expected \"random\", \"zeros\" or "
                                   "\"ones\", got \"",
                                   value.string, "\""));
        }
        arg.init = value.string;
      } else if (name == "output") {
        if (absl::Status s =
                Expect(value, at, JsonValue::Kind::kBool, "true or false");
            !s.ok()) {
          return s;
        }
        arg.output = value.boolean;
      } else {
        return Fail(value, at,
                    "unknown field; expected elements, init or output");
      }
    }
    if (arg.elements.empty()) {
      return Fail(v, absl::StrCat(path, ".elements"), "missing");
    }
    if (arg.output)
      arg.init = "zeros";
    return absl::OkStatus();
  }

  absl::Status Kernel(const JsonValue &v, const std::string &path,
                      KernelSpec &spec) {
    if (absl::Status s = Expect(v, path, JsonValue::Kind::kObject, "an object");
        !s.ok()) {
      return s;
    }
    for (const auto &[name, value] : v.members) {
      std::string at = absl::StrCat(path, ".", name);
      if (name == "kernel" || name == "types") {
        if (absl::Status s =
                Expect(value, at, JsonValue::Kind::kString, "a string");
            !s.ok()) {
          return s;
        }
        (name == "kernel" ? spec.kernel : spec.types) = value.string;
      } else if (name == "grid") {
        if (absl::Status s = Expect(value, at, JsonValue::Kind::kArray,
                                    "an array of one to three expressions");
            !s.ok()) {
          return s;
        }
        if (value.items.empty() || value.items.size() > 3) {
          return Fail(value, at, "expected one to three expressions");
        }
        for (size_t i = 0; i < value.items.size(); ++i) {
          const JsonValue &e = value.items[i];
          if (e.kind == JsonValue::Kind::kNumber && e.is_integer) {
            spec.grid.push_back(absl::StrCat(e.integer));
            continue;
          }
          if (absl::Status s =
                  Expect(e, absl::StrCat(at, "[", i, "]"),
                         JsonValue::Kind::kString, "an expression");
              !s.ok()) {
            return s;
          }
          spec.grid.push_back(e.string);
        }
      } else if (name == "args") {
        if (absl::Status s =
                Expect(value, at, JsonValue::Kind::kObject, "an object");
            !s.ok()) {
          return s;
        }
        for (const auto &[arg, arg_value] : value.members) {
          if (absl::Status s =
                  Arg(arg_value, absl::StrCat(at, ".", arg), spec.args[arg]);
              !s.ok()) {
            return s;
          }
        }
      } else if (name == "shapes") {
        if (absl::Status s = Expect(value, at, JsonValue::Kind::kArray,
                                    "an array of objects");
            !s.ok()) {
          return s;
        }
        for (size_t i = 0; i < value.items.size(); ++i) {
          const JsonValue &shape = value.items[i];
          std::string shape_at = absl::StrCat(at, "[", i, "]");
          if (absl::Status s = Expect(shape, shape_at, JsonValue::Kind::kObject,
                                      "an object");
              !s.ok()) {
            return s;
          }
          std::vector<std::pair<std::string, int64_t>> values;
          for (const auto &[n, x] : shape.members) {
            if (x.kind != JsonValue::Kind::kNumber || !x.is_integer) {
              return Fail(
                  x, absl::StrCat(shape_at, ".", n),
                  absl::StrCat("expected an integer, got ", x.KindName()));
            }
            values.emplace_back(n, x.integer);
          }
          spec.shapes.push_back(std::move(values));
        }
      } else if (name == "rtol" || name == "atol") {
        if (value.kind != JsonValue::Kind::kNumber || value.number < 0) {
          return Fail(value, at, "expected a number >= 0");
        }
        (name == "rtol" ? spec.rtol : spec.atol) = value.number;
      } else {
        return Fail(value, at,
                    "unknown field; expected kernel, types, grid, args, "
                    "shapes, rtol or atol");
      }
    }
    for (const char *required : {"kernel", "grid", "args", "shapes"}) {
      if (v.Find(required) == nullptr) {
        return Fail(v, absl::StrCat(path, ".", required), "missing");
      }
    }
    return absl::OkStatus();
  }

private:
  std::string origin_;
};

} // namespace

absl::StatusOr<std::vector<KernelSpec>>
ParseTuneSpec(absl::string_view json, absl::string_view origin) {
  absl::StatusOr<JsonValue> root = internal::ParseJson(json, origin);
  if (!root.ok())
    return root.status();
  SpecReader reader(origin);
  const JsonValue *kernels = root->Find("kernels");
  if (root->kind != JsonValue::Kind::kObject || kernels == nullptr ||
      root->members.size() != 1) {
    return reader.Fail(*root, "(top level)",
                       "expected an object with one field, \"kernels\"");
  }
  if (absl::Status s = reader.Expect(*kernels, "kernels",
                                     JsonValue::Kind::kArray, "an array");
      !s.ok()) {
    return s;
  }
  std::vector<KernelSpec> specs;
  for (size_t i = 0; i < kernels->items.size(); ++i) {
    KernelSpec spec;
    if (absl::Status s = reader.Kernel(kernels->items[i],
                                       absl::StrCat("kernels[", i, "]"), spec);
        !s.ok()) {
      return s;
    }
    specs.push_back(std::move(spec));
  }
  return specs;
}

} // namespace tune
} // namespace kiln
