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
  bool lexOperator();

  llvm::SourceMgr &sourceMgr;
  std::vector<Token> &tokens;
  const char *cur;
  const char *end;
  std::vector<int> indents{0};
  int bracketDepth = 0;
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
  bool raw = false;
  while (cur < end && strchr("rRbBuUfF", *cur)) {
    if (*cur == 'r' || *cur == 'R')
      raw = true;
    ++cur;
  }
  char quote = *cur;
  bool triple = cur + 2 < end && cur[1] == quote && cur[2] == quote;
  cur += triple ? 3 : 1;
  std::string value;
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
    if (*cur == '\\' && !raw && cur + 1 < end) {
      char c = cur[1];
      cur += 2;
      switch (c) {
      case 'n': value += '\n'; break;
      case 't': value += '\t'; break;
      case '\\': value += '\\'; break;
      case '\'': value += '\''; break;
      case '"': value += '"'; break;
      case '\n': break;
      default: value += '\\'; value += c; break;
      }
      continue;
    }
    value += *cur++;
  }
  push(TokenKind::String, start, cur);
  tokens.back().value = std::move(value);
  return true;
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
  if (!lexLineStart())
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
