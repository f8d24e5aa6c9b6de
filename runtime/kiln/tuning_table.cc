#include "kiln/tuning_table.h"

#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "kiln/internal/json.h"

namespace kiln {
namespace {

using internal::JsonQuote;
using internal::JsonValue;

constexpr int kFormatVersion = 1;

// Reads one table, failing with the first error; each error names the
// file, the line and the field path ("kernels[0].results[2].key").
class TableReader {
 public:
  explicit TableReader(absl::string_view origin) : origin_(origin) {}

  absl::Status status() const { return status_; }

  bool Fail(const JsonValue& at, const std::string& path,
            absl::string_view message) {
    status_ = absl::InvalidArgumentError(
        absl::StrCat(origin_, ":", at.line, ": ", path, ": ", message));
    return false;
  }

  bool Expect(const JsonValue& value, const std::string& path,
              JsonValue::Kind kind, const char* what) {
    if (value.kind == kind) return true;
    return Fail(value, path,
                absl::StrCat("expected ", what, ", got ", value.KindName()));
  }

  // Checks that `object` has only `allowed` members and every `required`.
  bool Members(const JsonValue& object, const std::string& path,
               std::initializer_list<const char*> required,
               std::initializer_list<const char*> optional) {
    if (!Expect(object, path, JsonValue::Kind::kObject, "an object")) {
      return false;
    }
    for (const auto& [name, value] : object.members) {
      bool known = false;
      for (const char* r : required) known = known || name == r;
      for (const char* o : optional) known = known || name == o;
      if (!known) {
        std::vector<std::string> all(required.begin(), required.end());
        all.insert(all.end(), optional.begin(), optional.end());
        return Fail(value, Join(path, name),
                    absl::StrCat("unknown field; expected one of ",
                                 absl::StrJoin(all, ", ")));
      }
    }
    for (const char* r : required) {
      if (object.Find(r) == nullptr) {
        return Fail(object, Join(path, r), "missing");
      }
    }
    return true;
  }

  static std::string Join(const std::string& path, absl::string_view name) {
    return path.empty() ? std::string(name) : absl::StrCat(path, ".", name);
  }
  static std::string Index(const std::string& path, size_t i) {
    return absl::StrCat(path, "[", i, "]");
  }

  bool String(const JsonValue& v, const std::string& path, std::string& out,
              bool non_empty = true) {
    if (!Expect(v, path, JsonValue::Kind::kString, "a string")) return false;
    if (non_empty && v.string.empty()) {
      return Fail(v, path, "expected a non-empty string");
    }
    out = v.string;
    return true;
  }

  bool Int(const JsonValue& v, const std::string& path, int64_t& out,
           int64_t min) {
    if (v.kind != JsonValue::Kind::kNumber || !v.is_integer) {
      return Fail(v, path,
                  absl::StrCat("expected an integer, got ",
                               v.kind == JsonValue::Kind::kNumber
                                   ? "a number with a fraction"
                                   : v.KindName()));
    }
    if (v.integer < min) {
      return Fail(
          v, path,
          absl::StrCat("expected an integer >= ", min, ", got ", v.integer));
    }
    out = v.integer;
    return true;
  }

  bool Device(const JsonValue& v, TuningDevice& device) {
    const std::string path = "device";
    if (!Members(v, path,
                 {"name", "compute_capability", "sm_count", "driver_version"},
                 {})) {
      return false;
    }
    if (!String(*v.Find("name"), Join(path, "name"), device.name)) {
      return false;
    }
    std::string cc;
    const JsonValue& cc_value = *v.Find("compute_capability");
    if (!String(cc_value, Join(path, "compute_capability"), cc)) return false;
    std::vector<std::string> parts = absl::StrSplit(cc, '.');
    if (parts.size() != 2 ||
        !absl::SimpleAtoi(parts[0], &device.compute_capability_major) ||
        !absl::SimpleAtoi(parts[1], &device.compute_capability_minor) ||
        device.compute_capability_major <= 0 ||
        device.compute_capability_minor < 0) {
      return Fail(cc_value, Join(path, "compute_capability"),
                  absl::StrCat("expected \"MAJOR.MINOR\" such as \"9.0\", got "
                               "\"",
                               cc, "\""));
    }
    int64_t n;
    if (!Int(*v.Find("sm_count"), Join(path, "sm_count"), n, 1)) return false;
    device.sm_count = static_cast<int>(n);
    if (!Int(*v.Find("driver_version"), Join(path, "driver_version"), n, 0)) {
      return false;
    }
    device.driver_version = static_cast<int>(n);
    return true;
  }

  bool Result(const JsonValue& v, const std::string& path, size_t key_size,
              TuningResult& result) {
    if (!Members(v, path, {"types", "key", "ranking"}, {"rejected"})) {
      return false;
    }
    if (!String(*v.Find("types"), Join(path, "types"), result.types)) {
      return false;
    }
    const JsonValue& key = *v.Find("key");
    if (!Expect(key, Join(path, "key"), JsonValue::Kind::kArray, "an array")) {
      return false;
    }
    if (key.items.size() != key_size) {
      return Fail(key, Join(path, "key"),
                  absl::StrCat("expected ", key_size,
                               " values (one per name of the kernel's key), "
                               "got ",
                               key.items.size()));
    }
    for (size_t i = 0; i < key.items.size(); ++i) {
      int64_t value;
      if (!Int(key.items[i], Index(Join(path, "key"), i), value, INT64_MIN)) {
        return false;
      }
      result.key.push_back(value);
    }
    const JsonValue& ranking = *v.Find("ranking");
    const std::string ranking_path = Join(path, "ranking");
    if (!Expect(ranking, ranking_path, JsonValue::Kind::kArray, "an array")) {
      return false;
    }
    if (ranking.items.empty()) {
      return Fail(ranking, ranking_path,
                  "expected at least one config (the fastest first)");
    }
    std::set<std::string> seen;
    for (size_t i = 0; i < ranking.items.size(); ++i) {
      const JsonValue& entry = ranking.items[i];
      const std::string entry_path = Index(ranking_path, i);
      if (!Members(entry, entry_path, {"config", "ms"}, {})) return false;
      RankedConfig ranked;
      if (!String(*entry.Find("config"), Join(entry_path, "config"),
                  ranked.config)) {
        return false;
      }
      if (!seen.insert(ranked.config).second) {
        return Fail(
            *entry.Find("config"), Join(entry_path, "config"),
            absl::StrCat("config \"", ranked.config, "\" is ranked twice"));
      }
      const JsonValue& ms = *entry.Find("ms");
      if (ms.kind != JsonValue::Kind::kNumber || !(ms.number > 0)) {
        return Fail(ms, Join(entry_path, "ms"),
                    absl::StrCat("expected a positive number, got ",
                                 ms.kind == JsonValue::Kind::kNumber
                                     ? absl::StrCat(ms.number)
                                     : ms.KindName()));
      }
      ranked.ms = ms.number;
      if (!result.ranking.empty() && ranked.ms < result.ranking.back().ms) {
        return Fail(
            ms, Join(entry_path, "ms"),
            absl::StrCat("the ranking must be fastest first, but ", ranked.ms,
                         " ms follows ", result.ranking.back().ms, " ms"));
      }
      result.ranking.push_back(std::move(ranked));
    }
    if (const JsonValue* rejected = v.Find("rejected")) {
      const std::string rejected_path = Join(path, "rejected");
      if (!Expect(*rejected, rejected_path, JsonValue::Kind::kArray,
                  "an array")) {
        return false;
      }
      for (size_t i = 0; i < rejected->items.size(); ++i) {
        const JsonValue& entry = rejected->items[i];
        const std::string entry_path = Index(rejected_path, i);
        if (!Members(entry, entry_path, {"config", "reason"}, {})) {
          return false;
        }
        RejectedConfig r;
        if (!String(*entry.Find("config"), Join(entry_path, "config"),
                    r.config) ||
            !String(*entry.Find("reason"), Join(entry_path, "reason"),
                    r.reason)) {
          return false;
        }
        result.rejected.push_back(std::move(r));
      }
    }
    return true;
  }

  bool Kernel(const JsonValue& v, const std::string& path,
              KernelTuning& kernel) {
    if (!Members(v, path, {"kernel", "key", "results"}, {})) return false;
    if (!String(*v.Find("kernel"), Join(path, "kernel"), kernel.kernel)) {
      return false;
    }
    const JsonValue& key = *v.Find("key");
    if (!Expect(key, Join(path, "key"), JsonValue::Kind::kArray,
                "an array of argument names")) {
      return false;
    }
    for (size_t i = 0; i < key.items.size(); ++i) {
      std::string name;
      if (!String(key.items[i], Index(Join(path, "key"), i), name)) {
        return false;
      }
      kernel.key.push_back(std::move(name));
    }
    const JsonValue& results = *v.Find("results");
    if (!Expect(results, Join(path, "results"), JsonValue::Kind::kArray,
                "an array")) {
      return false;
    }
    std::set<std::pair<std::string, std::vector<int64_t>>> seen;
    for (size_t i = 0; i < results.items.size(); ++i) {
      TuningResult result;
      const std::string result_path = Index(Join(path, "results"), i);
      if (!Result(results.items[i], result_path, kernel.key.size(), result)) {
        return false;
      }
      if (!seen.insert({result.types, result.key}).second) {
        return Fail(results.items[i], Join(result_path, "key"),
                    "these types and key values have another result before");
      }
      kernel.results.push_back(std::move(result));
    }
    return true;
  }

  bool Table(const JsonValue& root, TuningTable& table) {
    if (!Members(root, "", {"kiln_tuning_table", "device", "kernels"},
                 {"kiln_version"})) {
      return false;
    }
    const JsonValue& version = *root.Find("kiln_tuning_table");
    if (version.kind != JsonValue::Kind::kNumber || !version.is_integer ||
        version.integer != kFormatVersion) {
      return Fail(version, "kiln_tuning_table",
                  absl::StrCat("expected the format version ", kFormatVersion,
                               " (this Kiln reads version ", kFormatVersion,
                               " tables)"));
    }
    if (!Device(*root.Find("device"), table.device)) return false;
    if (const JsonValue* kiln_version = root.Find("kiln_version")) {
      if (!String(*kiln_version, "kiln_version", table.kiln_version,
                  /*non_empty=*/false)) {
        return false;
      }
    }
    const JsonValue& kernels = *root.Find("kernels");
    if (!Expect(kernels, "kernels", JsonValue::Kind::kArray, "an array")) {
      return false;
    }
    std::set<std::string> seen;
    for (size_t i = 0; i < kernels.items.size(); ++i) {
      KernelTuning kernel;
      const std::string kernel_path = Index("kernels", i);
      if (!Kernel(kernels.items[i], kernel_path, kernel)) return false;
      if (!seen.insert(kernel.kernel).second) {
        return Fail(*kernels.items[i].Find("kernel"),
                    Join(kernel_path, "kernel"),
                    absl::StrCat("kernel \"", kernel.kernel,
                                 "\" appears twice in this table"));
      }
      table.kernels.push_back(std::move(kernel));
    }
    return true;
  }

 private:
  std::string origin_;
  absl::Status status_;
};

// A double with enough digits to read back the same value, without
// trailing noise for the usual microsecond figures.
std::string Number(double value) { return absl::StrFormat("%.6g", value); }

}  // namespace

absl::StatusOr<TuningTable> ParseTuningTable(absl::string_view json,
                                             absl::string_view origin) {
  absl::StatusOr<JsonValue> root = internal::ParseJson(json, origin);
  if (!root.ok()) return root.status();
  TuningTable table;
  TableReader reader(origin);
  if (!reader.Table(*root, table)) return reader.status();
  return table;
}

std::string WriteTuningTable(const TuningTable& table) {
  std::string out = absl::StrCat("{\n  \"kiln_tuning_table\": ", kFormatVersion,
                                 ",\n  \"device\": {");
  absl::StrAppend(&out, "\"name\": ", JsonQuote(table.device.name),
                  ", \"compute_capability\": \"",
                  table.device.compute_capability_major, ".",
                  table.device.compute_capability_minor,
                  "\", \"sm_count\": ", table.device.sm_count,
                  ", \"driver_version\": ", table.device.driver_version,
                  "},\n  \"kiln_version\": ", JsonQuote(table.kiln_version),
                  ",\n  \"kernels\": [");
  for (size_t k = 0; k < table.kernels.size(); ++k) {
    const KernelTuning& kernel = table.kernels[k];
    std::vector<std::string> names;
    for (const std::string& name : kernel.key) names.push_back(JsonQuote(name));
    absl::StrAppend(&out, k == 0 ? "" : ",",
                    "\n    {\"kernel\": ", JsonQuote(kernel.kernel),
                    ", \"key\": [", absl::StrJoin(names, ", "),
                    "], \"results\": [");
    for (size_t r = 0; r < kernel.results.size(); ++r) {
      const TuningResult& result = kernel.results[r];
      absl::StrAppend(&out, r == 0 ? "" : ",",
                      "\n      {\"types\": ", JsonQuote(result.types),
                      ",\n       \"key\": [", absl::StrJoin(result.key, ", "),
                      "],\n       \"ranking\": [");
      for (size_t i = 0; i < result.ranking.size(); ++i) {
        absl::StrAppend(&out, i == 0 ? "" : ",", "\n         {\"config\": ",
                        JsonQuote(result.ranking[i].config),
                        ", \"ms\": ", Number(result.ranking[i].ms), "}");
      }
      absl::StrAppend(&out, "]");
      if (!result.rejected.empty()) {
        absl::StrAppend(&out, ",\n       \"rejected\": [");
        for (size_t i = 0; i < result.rejected.size(); ++i) {
          absl::StrAppend(
              &out, i == 0 ? "" : ",",
              "\n         {\"config\": ", JsonQuote(result.rejected[i].config),
              ", \"reason\": ", JsonQuote(result.rejected[i].reason), "}");
        }
        absl::StrAppend(&out, "]");
      }
      absl::StrAppend(&out, "}");
    }
    absl::StrAppend(&out, "]}");
  }
  absl::StrAppend(&out, "]\n}\n");
  return out;
}

int TuningBucket(int64_t value) {
  if (value <= 0) return -1;
  int exponent = 0;
  while (exponent < 63 && (int64_t{1} << exponent) < value) ++exponent;
  return exponent;
}

KeyMatch MatchTuningKey(
    absl::Span<const int64_t> call, int count,
    absl::FunctionRef<absl::Span<const int64_t>(int)> result_key) {
  KeyMatch best;
  double best_value_distance = 0;
  for (int i = 0; i < count; ++i) {
    absl::Span<const int64_t> key = result_key(i);
    if (key == call) return KeyMatch{KeyMatchKind::kExact, i, 0};
    int buckets = 0;
    double values = 0;
    for (size_t j = 0; j < call.size() && j < key.size(); ++j) {
      buckets += std::abs(TuningBucket(call[j]) - TuningBucket(key[j]));
      values +=
          std::abs(static_cast<double>(call[j]) - static_cast<double>(key[j]));
    }
    if (best.kind == KeyMatchKind::kNone || buckets < best.bucket_distance ||
        (buckets == best.bucket_distance && values < best_value_distance)) {
      best = KeyMatch{KeyMatchKind::kNearestBucket, i, buckets};
      best_value_distance = values;
    }
  }
  return best;
}

}  // namespace kiln
