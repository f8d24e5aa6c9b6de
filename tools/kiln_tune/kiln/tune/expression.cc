#include "kiln/tune/expression.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace kiln {
namespace tune {
namespace {

class Evaluator {
public:
  Evaluator(absl::string_view text,
            const std::map<std::string, int64_t> &variables)
      : text_(text), variables_(variables) {}

  absl::StatusOr<int64_t> Run() {
    int64_t value = 0;
    if (!Sum(value))
      return error_;
    Skip();
    if (pos_ != text_.size()) {
      Fail(absl::StrCat("unexpected '", text_.substr(pos_, 1), "'"));
      return error_;
    }
    return value;
  }

private:
  bool Fail(absl::string_view message) {
    if (error_.ok()) {
      error_ = absl::InvalidArgumentError(absl::StrCat(
          "in expression \"", text_, "\" at column ", pos_ + 1, ": ", message));
    }
    return false;
  }

  void Skip() {
    while (pos_ < text_.size() &&
           std::isspace(static_cast<unsigned char>(text_[pos_]))) {
      ++pos_;
    }
  }

  bool Peek(absl::string_view token) {
    Skip();
    return text_.substr(pos_, token.size()) == token;
  }

  bool Sum(int64_t &value) {
    if (!Product(value))
      return false;
    while (true) {
      if (Peek("+") || Peek("-")) {
        char op = text_[pos_++];
        int64_t rhs;
        if (!Product(rhs))
          return false;
        value = op == '+' ? value + rhs : value - rhs;
      } else {
        return true;
      }
    }
  }

  static int64_t FloorDiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
      --q;
    return q;
  }

  bool Product(int64_t &value) {
    if (!Unary(value))
      return false;
    while (true) {
      if (Peek("//")) {
        pos_ += 2;
        int64_t rhs;
        if (!Unary(rhs))
          return false;
        if (rhs == 0)
          return Fail("division by zero");
        value = FloorDiv(value, rhs);
      } else if (Peek("/")) {
        return Fail("'/' divides as floats in Python; write '//'");
      } else if (Peek("*") || Peek("%")) {
        char op = text_[pos_++];
        int64_t rhs;
        if (!Unary(rhs))
          return false;
        if (op == '*') {
          value *= rhs;
        } else {
          if (rhs == 0)
            return Fail("modulo by zero");
          value = value - FloorDiv(value, rhs) * rhs;
        }
      } else {
        return true;
      }
    }
  }

  bool Unary(int64_t &value) {
    if (Peek("-")) {
      ++pos_;
      if (!Unary(value))
        return false;
      value = -value;
      return true;
    }
    return Primary(value);
  }

  bool Primary(int64_t &value) {
    Skip();
    if (pos_ >= text_.size())
      return Fail("expected a value, got the end");
    char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      if (!Sum(value))
        return false;
      if (!Peek(")"))
        return Fail("expected ')'");
      ++pos_;
      return true;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      value = 0;
      while (pos_ < text_.size() &&
             std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        value = value * 10 + (text_[pos_++] - '0');
      }
      return true;
    }
    if (!std::isalpha(static_cast<unsigned char>(c)) && c != '_') {
      return Fail(
          absl::StrCat("expected a value, got '", std::string(1, c), "'"));
    }
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
            text_[pos_] == '_')) {
      ++pos_;
    }
    std::string name(text_.substr(start, pos_ - start));
    if (Peek("(")) {
      ++pos_;
      std::vector<int64_t> args;
      if (!Peek(")")) {
        while (true) {
          int64_t arg;
          if (!Sum(arg))
            return false;
          args.push_back(arg);
          if (Peek(",")) {
            ++pos_;
            continue;
          }
          break;
        }
      }
      if (!Peek(")"))
        return Fail("expected ')' after the arguments");
      ++pos_;
      return Call(name, args, value);
    }
    auto it = variables_.find(name);
    if (it == variables_.end()) {
      std::vector<std::string> known;
      for (const auto &[n, v] : variables_)
        known.push_back(n);
      return Fail(absl::StrCat("unknown name '", name,
                               "'; known: ", absl::StrJoin(known, ", ")));
    }
    value = it->second;
    return true;
  }

  bool Call(const std::string &name, const std::vector<int64_t> &args,
            int64_t &value) {
    if (name == "cdiv") {
      if (args.size() != 2)
        return Fail("cdiv takes two arguments");
      if (args[1] <= 0)
        return Fail("cdiv by a non-positive number");
      value = FloorDiv(args[0] + args[1] - 1, args[1]);
      return true;
    }
    if (name == "next_power_of_2") {
      if (args.size() != 1)
        return Fail("next_power_of_2 takes one argument");
      value = 1;
      while (value < args[0])
        value <<= 1;
      return true;
    }
    if (name == "min" || name == "max") {
      if (args.empty())
        return Fail(name + " takes at least one argument");
      value = args[0];
      for (int64_t a : args)
        value = name == "min" ? std::min(value, a) : std::max(value, a);
      return true;
    }
    return Fail(absl::StrCat("unknown function '", name,
                             "'; known: cdiv, next_power_of_2, min, max"));
  }

  absl::string_view text_;
  const std::map<std::string, int64_t> &variables_;
  size_t pos_ = 0;
  absl::Status error_;
};

} // namespace

absl::StatusOr<int64_t>
EvaluateExpression(absl::string_view text,
                   const std::map<std::string, int64_t> &variables) {
  return Evaluator(text, variables).Run();
}

} // namespace tune
} // namespace kiln
