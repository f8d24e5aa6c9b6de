//===- SignatureEntries.h - one kernel signature split into its entries ---===//
//
// The front end (compiler/frontend/Signature.cpp) and kiln-codegen
// (compiler/codegen/TritonTypes.cpp) both split a signature string into its
// comma-separated entries; they must agree on every signature, so they share
// this one splitter. Header-only: kiln-codegen does not link the front end.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_SIGNATURE_SIGNATUREENTRIES_H
#define KILN_SIGNATURE_SIGNATUREENTRIES_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

namespace kiln {

/// The entries of `signature`, trimmed, empty ones dropped. Commas split
/// entries except inside brackets ("[16, 16]", "<fp16, 2>", a tuple's
/// "(i32, i32)") and inside a quoted string value ("a, b" or 'a, b'), which
/// is one entry; an unclosed quote runs to the end. With `keepEmpty`, empty
/// entries are kept (a tuple's elements are checked one by one).
inline llvm::SmallVector<llvm::StringRef>
splitSignatureEntries(llvm::StringRef signature, bool keepEmpty = false) {
  llvm::SmallVector<llvm::StringRef> entries;
  int depth = 0;
  char quote = 0;
  size_t start = 0;
  for (size_t i = 0; i <= signature.size(); ++i) {
    bool end = i == signature.size();
    char c = end ? ',' : signature[i];
    if (quote != 0 && !end) {
      if (c == quote)
        quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '[' || c == '<' || c == '(') {
      ++depth;
    } else if ((c == ']' || c == '>' || c == ')') && depth > 0) {
      --depth;
    } else if (c == ',' && (depth == 0 || end)) {
      llvm::StringRef entry = signature.slice(start, i).trim();
      if (!entry.empty() || keepEmpty)
        entries.push_back(entry);
      start = i + 1;
    }
  }
  return entries;
}

} // namespace kiln

#endif // KILN_SIGNATURE_SIGNATUREENTRIES_H
