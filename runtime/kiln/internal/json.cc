#include "kiln/internal/json.h"

#include <cerrno>
#include <cstdlib>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace kiln {
namespace internal {
namespace {

// Documents nest at most this deep: a tuning table needs five levels.
constexpr int kMaxDepth = 64;

class Parser {
 public:
  Parser(absl::string_view text, absl::string_view origin)
      : text_(text), origin_(origin) {}

  absl::StatusOr<JsonValue> Document() {
    JsonValue value;
    if (!Value(value, 0)) return error_;
    SkipSpace();
    if (pos_ != text_.size()) {
      Fail("expected the end of the document after the top-level value");
      return error_;
    }
    return value;
  }

 private:
  bool Fail(absl::string_view expectation) {
    int line = 1, column = 1;
    for (size_t i = 0; i < pos_ && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    error_ = absl::InvalidArgumentError(absl::StrCat(
        origin_, ":", line, ":", column, ": malformed JSON: ", expectation));
    return false;
  }

  int Line() const {
    int line = 1;
    for (size_t i = 0; i < pos_; ++i) line += text_[i] == '\n';
    return line;
  }

  void SkipSpace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' ||
            text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool Literal(absl::string_view word) {
    if (text_.substr(pos_, word.size()) != word) {
      return Fail(absl::StrCat("expected '", word, "'"));
    }
    pos_ += word.size();
    return true;
  }

  bool Value(JsonValue& out, int depth) {
    if (depth > kMaxDepth) return Fail("values nested too deeply");
    SkipSpace();
    if (pos_ >= text_.size()) return Fail("expected a value, got the end");
    out.line = Line();
    char c = text_[pos_];
    switch (c) {
      case 'n':
        out.kind = JsonValue::Kind::kNull;
        return Literal("null");
      case 't':
        out.kind = JsonValue::Kind::kBool;
        out.boolean = true;
        return Literal("true");
      case 'f':
        out.kind = JsonValue::Kind::kBool;
        return Literal("false");
      case '"':
        out.kind = JsonValue::Kind::kString;
        return String(out.string);
      case '[':
        return Array(out, depth);
      case '{':
        return Object(out, depth);
      default:
        if (c == '-' || (c >= '0' && c <= '9')) return Number(out);
        return Fail(
            absl::StrCat("expected a value, got '", std::string(1, c), "'"));
    }
  }

  bool Number(JsonValue& out) {
    size_t start = pos_;
    bool integral = true;
    if (text_[pos_] == '-') ++pos_;
    auto digits = [&] {
      size_t first = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
        ++pos_;
      }
      return pos_ > first;
    };
    if (pos_ < text_.size() && text_[pos_] == '0') {
      ++pos_;
    } else if (!digits()) {
      return Fail("expected digits in a number");
    }
    if (pos_ < text_.size() && text_[pos_] == '.') {
      ++pos_;
      integral = false;
      if (!digits()) return Fail("expected digits after '.'");
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      ++pos_;
      integral = false;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) {
        ++pos_;
      }
      if (!digits()) return Fail("expected digits in an exponent");
    }
    std::string token(text_.substr(start, pos_ - start));
    out.kind = JsonValue::Kind::kNumber;
    out.number = std::strtod(token.c_str(), nullptr);
    if (integral) {
      errno = 0;
      long long value = std::strtoll(token.c_str(), nullptr, 10);  // NOLINT
      if (errno == 0) {
        out.is_integer = true;
        out.integer = value;
      }
    }
    return true;
  }

  static void AppendUtf8(std::string& out, unsigned code) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  bool Hex4(unsigned& code) {
    if (pos_ + 4 > text_.size()) return Fail("expected four hex digits");
    code = 0;
    for (int i = 0; i < 4; ++i) {
      char h = text_[pos_++];
      code <<= 4;
      if (h >= '0' && h <= '9') {
        code |= h - '0';
      } else if (h >= 'a' && h <= 'f') {
        code |= h - 'a' + 10;
      } else if (h >= 'A' && h <= 'F') {
        code |= h - 'A' + 10;
      } else {
        return Fail("expected four hex digits after \\u");
      }
    }
    return true;
  }

  bool String(std::string& out) {
    ++pos_;  // '"'
    while (true) {
      if (pos_ >= text_.size()) return Fail("unterminated string");
      char c = text_[pos_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) {
        --pos_;
        return Fail("control character in a string (escape it)");
      }
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) return Fail("unterminated string");
      char e = text_[pos_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out += e;
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          unsigned code;
          if (!Hex4(code)) return false;
          if (code >= 0xD800 && code < 0xDC00 &&
              text_.substr(pos_, 2) == "\\u") {
            pos_ += 2;
            unsigned low;
            if (!Hex4(low)) return false;
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
          }
          AppendUtf8(out, code);
          break;
        }
        default:
          --pos_;
          return Fail(absl::StrCat("unknown escape '\\", std::string(1, e),
                                   "' in a string"));
      }
    }
  }

  bool Array(JsonValue& out, int depth) {
    out.kind = JsonValue::Kind::kArray;
    ++pos_;
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == ']') {
      ++pos_;
      return true;
    }
    while (true) {
      out.items.emplace_back();
      if (!Value(out.items.back(), depth + 1)) return false;
      SkipSpace();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == ']') {
        ++pos_;
        return true;
      }
      return Fail("expected ',' or ']' in an array");
    }
  }

  bool Object(JsonValue& out, int depth) {
    out.kind = JsonValue::Kind::kObject;
    ++pos_;
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == '}') {
      ++pos_;
      return true;
    }
    while (true) {
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != '"') {
        return Fail("expected a member name (a string) in an object");
      }
      std::string name;
      size_t name_pos = pos_;
      if (!String(name)) return false;
      if (out.Find(name) != nullptr) {
        pos_ = name_pos;
        return Fail(absl::StrCat("member \"", name, "\" repeated"));
      }
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != ':') {
        return Fail("expected ':' after a member name");
      }
      ++pos_;
      out.members.emplace_back(std::move(name), JsonValue());
      if (!Value(out.members.back().second, depth + 1)) return false;
      SkipSpace();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == '}') {
        ++pos_;
        return true;
      }
      return Fail("expected ',' or '}' in an object");
    }
  }

  absl::string_view text_;
  absl::string_view origin_;
  size_t pos_ = 0;
  absl::Status error_;
};

}  // namespace

const JsonValue* JsonValue::Find(absl::string_view name) const {
  for (const auto& member : members) {
    if (member.first == name) return &member.second;
  }
  return nullptr;
}

const char* JsonValue::KindName() const {
  switch (kind) {
    case Kind::kNull:
      return "null";
    case Kind::kBool:
      return "a boolean";
    case Kind::kNumber:
      return "a number";
    case Kind::kString:
      return "a string";
    case Kind::kArray:
      return "an array";
    case Kind::kObject:
      return "an object";
  }
  return "a value";
}

absl::StatusOr<JsonValue> ParseJson(absl::string_view text,
                                    absl::string_view origin) {
  return Parser(text, origin).Document();
}

std::string JsonQuote(absl::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += absl::StrFormat("\\u%04x", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

}  // namespace internal
}  // namespace kiln
