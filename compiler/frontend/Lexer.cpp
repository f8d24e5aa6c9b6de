//===- Lexer.cpp - tokens of the Python subset Triton kernels use ---------===//
#include "compiler/frontend/Lexer.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

using namespace kiln::frontend;
using llvm::SMLoc;
using llvm::StringRef;

namespace {

class Lexer {
public:
  Lexer(llvm::SourceMgr &sourceMgr, std::vector<Token> &tokens,
        unsigned bufferId)
      : sourceMgr(sourceMgr), tokens(tokens) {
    const llvm::MemoryBuffer *buffer = sourceMgr.getMemoryBuffer(
        bufferId ? bufferId : sourceMgr.getMainFileID());
    cur = buffer->getBufferStart();
    end = buffer->getBufferEnd();
  }

  /// A lexer of `text` alone: an expression inside an f-string.
  Lexer(llvm::SourceMgr &sourceMgr, std::vector<Token> &tokens,
        llvm::StringRef text)
      : sourceMgr(sourceMgr), tokens(tokens), cur(text.begin()),
        end(text.end()), bracketDepth(1), expressionOnly(true) {}

  bool run();

private:
  bool error(const char *at, const llvm::Twine &message) {
    sourceMgr.PrintMessage(SMLoc::getFromPointer(at), llvm::SourceMgr::DK_Error,
                           message);
    return false;
  }
  void push(TokenKind kind, const char *start, const char *stop) {
    tokens.push_back(
        {kind, StringRef(start, stop - start), SMLoc::getFromPointer(start), {}});
  }
  bool lexLineStart();
  bool lexNumber();
  bool lexString();
  bool lexFormatField(char quote, bool triple, std::string &value,
                      std::vector<FormatField> &fields);
  bool lexOperator();

  llvm::SourceMgr &sourceMgr;
  std::vector<Token> &tokens;
  const char *cur;
  const char *end;
  std::vector<int> indents{0};
  int bracketDepth = 0;
  bool expressionOnly = false;
};

} // namespace

// At the start of a logical line: measure indentation, skip blank and
// comment-only lines, emit Indent/Dedent.
bool Lexer::lexLineStart() {
  while (cur < end) {
    const char *lineStart = cur;
    int width = 0;
    while (cur < end && (*cur == ' ' || *cur == '\t')) {
      width = *cur == '\t' ? (width / 8 + 1) * 8 : width + 1;
      ++cur;
    }
    if (cur < end && *cur == '#')
      while (cur < end && *cur != '\n')
        ++cur;
    if (cur < end && (*cur == '\n' || *cur == '\r')) {
      ++cur;
      continue; // blank line
    }
    if (cur >= end)
      return true;
    if (width > indents.back()) {
      indents.push_back(width);
      push(TokenKind::Indent, cur, cur);
    } else {
      while (width < indents.back()) {
        indents.pop_back();
        push(TokenKind::Dedent, cur, cur);
      }
      if (width != indents.back())
        return error(cur, "unindent does not match any outer indentation level");
    }
    (void)lineStart;
    return true;
  }
  return true;
}

bool Lexer::lexNumber() {
  const char *start = cur;
  bool isFloat = false;
  if (*cur == '0' && cur + 1 < end && strchr("xXoObB", cur[1])) {
    cur += 2;
    while (cur < end && (llvm::isHexDigit(*cur) || *cur == '_'))
      ++cur;
  } else {
    while (cur < end && (llvm::isDigit(*cur) || *cur == '_'))
      ++cur;
    if (cur < end && *cur == '.') {
      isFloat = true;
      ++cur;
      while (cur < end && (llvm::isDigit(*cur) || *cur == '_'))
        ++cur;
    }
    if (cur < end && (*cur == 'e' || *cur == 'E')) {
      const char *save = cur++;
      if (cur < end && (*cur == '+' || *cur == '-'))
        ++cur;
      if (cur < end && llvm::isDigit(*cur)) {
        isFloat = true;
        while (cur < end && llvm::isDigit(*cur))
          ++cur;
      } else {
        cur = save;
      }
    }
  }
  if (cur < end && (llvm::isAlpha(*cur) || *cur == '_'))
    return error(cur, "invalid character in number literal");
  push(isFloat ? TokenKind::Float : TokenKind::Int, start, cur);
  return true;
}

bool Lexer::lexString() {
  const char *start = cur;
  // Optional prefixes: r, b, f, u (any case, any order of two).
  bool raw = false, formatted = false;
  while (cur < end && strchr("rRbBuUfF", *cur)) {
    if (*cur == 'r' || *cur == 'R')
      raw = true;
    if (*cur == 'f' || *cur == 'F')
      formatted = true;
    ++cur;
  }
  const char *body = cur;
  char quote = *cur;
  bool triple = cur + 2 < end && cur[1] == quote && cur[2] == quote;
  std::vector<FormatField> fields;
  std::string value;
  // An f-string whose fields do not scan (Python would reject it, or a
  // newer Python's nesting) is kept as its plain text, as before f-strings
  // were evaluated: the file still lexes, and only a kernel using it fails.
  for (int attempt = formatted ? 0 : 1; attempt < 2; ++attempt) {
    bool scanFields = attempt == 0;
    cur = body + (triple ? 3 : 1);
    fields.clear();
    value.clear();
    bool scanned = true;
    while (true) {
      if (cur >= end)
        return error(start, "unterminated string literal");
      if (triple && cur + 2 < end && cur[0] == quote && cur[1] == quote &&
          cur[2] == quote) {
        cur += 3;
        break;
      }
      if (!triple && *cur == quote) {
        ++cur;
        break;
      }
      if (!triple && *cur == '\n')
        return error(start, "unterminated string literal");
      if (scanFields && (*cur == '{' || *cur == '}')) {
        if (cur + 1 < end && cur[1] == *cur) { // `{{` and `}}` are braces
          value += *cur;
          cur += 2;
          continue;
        }
        if (*cur == '}' || !lexFormatField(quote, triple, value, fields)) {
          scanned = false;
          break;
        }
        continue;
      }
      if (*cur == '\\' && !raw && cur + 1 < end) {
        char c = cur[1];
        cur += 2;
        switch (c) {
        case 'n':
          value += '\n';
          break;
        case 't':
          value += '\t';
          break;
        case '\\':
          value += '\\';
          break;
        case '\'':
          value += '\'';
          break;
        case '"':
          value += '"';
          break;
        case '\n':
          break;
        default:
          value += '\\';
          value += c;
          break;
        }
        continue;
      }
      value += *cur++;
    }
    if (scanned) {
      formatted = scanFields;
      break;
    }
  }
  push(TokenKind::String, start, cur);
  tokens.back().value = std::move(value);
  tokens.back().formatted = formatted;
  tokens.back().fields = std::move(fields);
  return true;
}

// At the `{` of an f-string's replacement field: records its expression
// (up to a top-level `!` conversion, `:` format spec or the closing `}`)
// and moves past the field; false where it does not scan. Format specs
// are skipped: upstream formats every value with "{}" or "{!c}". A
// self-documenting field (`{BLOCK=}`) puts its source text, `=` included,
// into `value` before the value, which it shows as repr() unless a
// conversion or spec says otherwise (as Python 3.8+ does).
bool Lexer::lexFormatField(char quote, bool triple, std::string &value,
                           std::vector<FormatField> &fields) {
  ++cur; // the `{`
  const char *exprBegin = cur, *exprEnd = nullptr;
  const char *echoEnd = nullptr; // past a self-documenting `=` and spaces
  char conversion = 0;
  bool spec = false;
  int depth = 0;
  char inner = 0; // the quote of a string inside the expression
  for (; cur < end; ++cur) {
    char c = *cur;
    if ((!triple && c == '\n') || (c == quote && !inner))
      return false;
    if (inner) {
      if (c == inner)
        inner = 0;
      continue;
    }
    if (c == '\'' || c == '"') {
      inner = c;
    } else if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if ((c == ')' || c == ']' || c == '}') && depth > 0) {
      --depth;
    } else if (depth == 0 && !exprEnd && c == '=' && cur > exprBegin &&
               !StringRef("=!<>").contains(cur[-1]) && cur + 1 < end &&
               cur[1] != '=') {
      // `=` that is not part of `==`, `!=`, `<=` or `>=`: a
      // self-documenting field when only spaces, `!`, `:` or `}` follow.
      const char *next = cur + 1;
      while (next < end && *next == ' ')
        ++next;
      if (next < end && StringRef("!:}").contains(*next)) {
        exprEnd = cur;
        echoEnd = next;
        cur = next - 1;
      }
    } else if (depth == 0 && (!exprEnd || (echoEnd && cur == echoEnd)) &&
               !conversion && !spec && c == '!' && cur + 1 < end &&
               cur[1] != '=') {
      if (!exprEnd)
        exprEnd = cur;
      conversion = cur[1];
      ++cur;
    } else if (depth == 0 && !spec && c == ':' &&
               (!exprEnd || (echoEnd && cur == echoEnd) || conversion)) {
      if (!exprEnd)
        exprEnd = cur;
      spec = true;
    } else if (depth == 0 && c == '}') {
      if (!exprEnd)
        exprEnd = cur;
      if (StringRef(exprBegin, exprEnd - exprBegin).trim().empty() ||
          (conversion && !StringRef("rsa").contains(conversion)))
        return false;
      if (echoEnd) {
        value += StringRef(exprBegin, echoEnd - exprBegin).str();
        if (!conversion && !spec)
          conversion = 'r';
      }
      fields.push_back({value.size(), StringRef(exprBegin, exprEnd - exprBegin),
                        conversion});
      ++cur;
      return true;
    }
  }
  return false;
}

bool Lexer::lexOperator() {
  static const char *const kOps[] = {
      "**=", "//=", ">>=", "<<=", "...", "->", "**", "//", "<<", ">>", "<=",
      ">=", "==", "!=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@=",
      ":=", "+", "-", "*", "/", "%", "@", "&", "|", "^", "~", "<", ">", "(",
      ")", "[", "]", "{", "}", ",", ":", ".", ";", "=",
  };
  for (const char *op : kOps) {
    size_t n = strlen(op);
    if (static_cast<size_t>(end - cur) >= n && StringRef(cur, n) == op) {
      if (StringRef("([{").contains(*op) && n == 1)
        ++bracketDepth;
      if (StringRef(")]}").contains(*op) && n == 1) {
        if (bracketDepth == 0)
          return error(cur, llvm::Twine("unmatched '") + op + "'");
        --bracketDepth;
      }
      push(TokenKind::Op, cur, cur + n);
      cur += n;
      return true;
    }
  }
  return error(cur, llvm::Twine("unexpected character '") + StringRef(cur, 1) +
                        "'");
}

bool Lexer::run() {
  if (!expressionOnly && !lexLineStart())
    return false;
  while (cur < end) {
    char c = *cur;
    if (c == ' ' || c == '\t' || c == '\r') {
      ++cur;
    } else if (c == '#') {
      while (cur < end && *cur != '\n')
        ++cur;
    } else if (c == '\\' && cur + 1 < end && cur[1] == '\n') {
      cur += 2; // explicit line joining
    } else if (c == '\n') {
      if (bracketDepth > 0) {
        ++cur; // implicit line joining inside brackets
        continue;
      }
      if (!tokens.empty() && !tokens.back().is(TokenKind::Newline) &&
          !tokens.back().is(TokenKind::Indent) &&
          !tokens.back().is(TokenKind::Dedent))
        push(TokenKind::Newline, cur, cur);
      ++cur;
      if (!lexLineStart())
        return false;
    } else if (llvm::isDigit(c) ||
               (c == '.' && cur + 1 < end && llvm::isDigit(cur[1]))) {
      if (!lexNumber())
        return false;
    } else if (c == '"' || c == '\'' ||
               ((strchr("rRbBuUfF", c) && cur + 1 < end) &&
                (cur[1] == '"' || cur[1] == '\'' ||
                 (strchr("rRbBuUfF", cur[1]) && cur + 2 < end &&
                  (cur[2] == '"' || cur[2] == '\''))))) {
      if (!lexString())
        return false;
    } else if (llvm::isAlpha(c) || c == '_' ||
               static_cast<unsigned char>(c) >= 0x80) {
      const char *start = cur;
      while (cur < end && (llvm::isAlnum(*cur) || *cur == '_' ||
                           static_cast<unsigned char>(*cur) >= 0x80))
        ++cur;
      push(TokenKind::Name, start, cur);
    } else if (!lexOperator()) {
      return false;
    }
  }
  if (!tokens.empty() && !tokens.back().is(TokenKind::Newline) &&
      !tokens.back().is(TokenKind::Dedent))
    push(TokenKind::Newline, end, end);
  while (indents.size() > 1) {
    indents.pop_back();
    push(TokenKind::Dedent, end, end);
  }
  push(TokenKind::Eof, end, end);
  return true;
}

bool kiln::frontend::tokenize(llvm::SourceMgr &sourceMgr,
                              std::vector<Token> &tokens, unsigned bufferId) {
  return Lexer(sourceMgr, tokens, bufferId).run();
}

bool kiln::frontend::tokenizeExpression(llvm::SourceMgr &sourceMgr,
                                        StringRef text,
                                        std::vector<Token> &tokens) {
  return Lexer(sourceMgr, tokens, text).run();
}
