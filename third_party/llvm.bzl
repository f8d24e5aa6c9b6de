"""Compiler flags for code that includes LLVM or MLIR headers.

`copts` do not propagate through `deps`, so every cc_library/cc_binary/cc_test
that includes LLVM or MLIR headers adds these itself:

    load("//third_party:llvm.bzl", "KILN_MLIR_COPTS")
    cc_library(name = "ir", srcs = [...], copts = KILN_MLIR_COPTS, deps = ["@llvm//:mlir"])

Code that uses neither (the runtime, generated launchers) keeps RTTI.
"""

# Debian's LLVM 22 is built without RTTI; code deriving from its classes must
# match, or links fail on missing typeinfo.
KILN_LLVM_COPTS = ["-fno-rtti"]

# MLIR needs nothing beyond what LLVM does.
KILN_MLIR_COPTS = KILN_LLVM_COPTS
