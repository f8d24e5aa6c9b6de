//===- UpstreamNames.h - the names upstream Triton's modules have ---------===//
//
// Host code tests for features by name (`hasattr(triton.language,
// "gather")`, fla's `_experimental_make_tensor_descriptor` fallbacks) and
// picks what to define from the answer. Kiln answers as Triton 3.6 does, the
// release whose language it compiles, so the same branch is taken; a name
// that exists upstream but that Kiln does not implement then fails where a
// kernel uses it, not by a silently different choice.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_FRONTEND_UPSTREAMNAMES_H
#define KILN_FRONTEND_UPSTREAMNAMES_H

#include "llvm/ADT/StringRef.h"

namespace kiln::frontend {

/// Whether `dir(triton.language)` of Triton 3.6 has `name`.
bool isTritonLanguageName(llvm::StringRef name);

} // namespace kiln::frontend

#endif // KILN_FRONTEND_UPSTREAMNAMES_H
