//===- PythonText.h - Python's str() of compile-time numbers --------------===//
//
// How the front end spells Python numbers (messages, f-string fields, host
// code's str()): the digits Python's str() gives, for the 128-bit ints of
// compile-time arithmetic and for floats.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_FRONTEND_PYTHONTEXT_H
#define KILN_FRONTEND_PYTHONTEXT_H

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace kiln::frontend {

/// Python's str() of a compile-time integer.
inline std::string intText(__int128 v) {
  if (v >= INT64_MIN && v <= INT64_MAX)
    return std::to_string(int64_t(v));
  bool negative = v < 0;
  unsigned __int128 m = negative ? -(unsigned __int128)v : v;
  std::string digits;
  for (; m; m /= 10)
    digits.insert(digits.begin(), char('0' + int(m % 10)));
  return (negative ? "-" : "") + digits;
}

/// Python's str() of a float: the shortest digits that read back as the
/// same double, as repr gives them.
inline std::string floatText(double v) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v > 0 ? "inf" : "-inf";
  char buf[32];
  for (int precision = 1; precision <= 17; ++precision) {
    snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v)
      break;
  }
  std::string text = buf;
  if (text.find_first_of(".en") == std::string::npos)
    text += ".0";
  return text;
}

} // namespace kiln::frontend

#endif // KILN_FRONTEND_PYTHONTEXT_H
