"""mlir_tablegen: run mlir-tblgen on an ODS file in a genrule.

Example (compiler/ir/BUILD.bazel):

    load("//third_party:tblgen.bzl", "mlir_tablegen")

    mlir_tablegen(
        name = "kiln_ops_decls",
        td_file = "KilnOps.td",
        td_srcs = ["KilnDialect.td"],
        out = "KilnOps.h.inc",
        flags = ["-gen-op-decls"],
    )

The outputs land in bazel-bin under the package, so a cc_library that lists
them in `hdrs` (or `textual_hdrs`) includes them as "compiler/ir/KilnOps.h.inc".
"""

# Declared so that the sandbox holds MLIR's .td files; its path gives the -I.
_MLIR_TD_ANCHOR = "@llvm//:include/mlir/IR/OpBase.td"
_MLIR_TBLGEN = "@llvm//:bin/mlir-tblgen"

def mlir_tablegen(name, td_file, out, flags, includes = [], td_srcs = [], **kwargs):
    """Generates `out` from `td_file` with /usr/lib/llvm-22/bin/mlir-tblgen.

    Args:
      name: name of the genrule.
      td_file: the .td file to process (a label or a file of this package).
      out: the file to write, relative to the package (for example "KilnOps.h.inc").
      flags: mlir-tblgen options, a list of strings (for example
        ["-gen-op-decls"] or ["-gen-pass-decls", "-name=Kiln"]).
      includes: extra include directories, relative to the workspace root; the
        root itself (and its bazel-bin twin) and MLIR's include directory are
        always searched, so `include "compiler/ir/KilnDialect.td"` and
        `include "mlir/IR/OpBase.td"` work without any.
      td_srcs: other .td files that `td_file` includes, so that edits to them
        rerun the genrule and the sandbox holds them.
      **kwargs: passed to the genrule (visibility, tags, ...).
    """
    if type(flags) == type(""):
        flags = [flags]
    include_args = ["-I", ".", "-I", "$(GENDIR)"]
    for inc in includes:
        include_args += ["-I", inc, "-I", "$(GENDIR)/" + inc]
    cmd = " ".join([
        "MLIR_INC=$$(dirname $(execpath %s))/../.. &&" % _MLIR_TD_ANCHOR,
        "$(execpath %s)" % _MLIR_TBLGEN,
        " ".join(flags),
        "-I", "$$MLIR_INC",
        " ".join(include_args),
        "$(execpath %s)" % td_file,
        "-o", "$@",
    ])
    native.genrule(
        name = name,
        srcs = [td_file, _MLIR_TD_ANCHOR, "@llvm//:mlir_td_files"] + td_srcs,
        outs = [out],
        tools = [_MLIR_TBLGEN],
        cmd = cmd,
        message = "Generating %s with mlir-tblgen" % out,
        **kwargs
    )
