//===- Lexer.h - tokens of the Python subset Triton kernels use -----------===//
//
// An indentation-aware lexer: it emits Indent/Dedent tokens as Python does,
// joins lines inside brackets and after a backslash, and records the source
// location of every token so diagnostics can point at it.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_FRONTEND_LEXER_H
#define KILN_FRONTEND_LEXER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

#include <string>
#include <vector>

namespace llvm {
class SourceMgr;
}

namespace kiln::frontend {

enum class TokenKind {
  Name,
  Int,
  Float,
  String,
  Op, // operators and delimiters: + - ( ) [ ] : , . == ...
  Newline,
  Indent,
  Dedent,
  Eof,
};

/// A replacement field `{expr!c:spec}` of an f-string: its expression's
/// source text and where its value goes in the decoded literal text.
struct FormatField {
  size_t offset;        // position in Token::value
  llvm::StringRef expr; // points into the source buffer
  char conversion = 0;  // 'r', 's', 'a' or 0
};

struct Token {
  TokenKind kind;
  llvm::StringRef text; // points into the source buffer (empty for synthetic)
  llvm::SMLoc loc;
  std::string value; // decoded string literal contents
  bool formatted = false; // an f-string: `fields` go into `value`
  std::vector<FormatField> fields;

  bool is(TokenKind k) const { return kind == k; }
  bool isOp(llvm::StringRef op) const {
    return kind == TokenKind::Op && text == op;
  }
  bool isKeyword(llvm::StringRef word) const {
    return kind == TokenKind::Name && text == word;
  }
};

/// Splits buffer `bufferId` of `sourceMgr` (default: the main one) into
/// tokens. Returns false after reporting the first lexical error through
/// `sourceMgr`.
bool tokenize(llvm::SourceMgr &sourceMgr, std::vector<Token> &tokens,
              unsigned bufferId = 0);

/// Tokens of one expression written at `text` inside a buffer of
/// `sourceMgr` (an f-string's replacement field), newlines joined as inside
/// brackets, ending with Newline and Eof.
bool tokenizeExpression(llvm::SourceMgr &sourceMgr, llvm::StringRef text,
                        std::vector<Token> &tokens);

} // namespace kiln::frontend

#endif // KILN_FRONTEND_LEXER_H
