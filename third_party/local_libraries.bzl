"""`local_library`: a repository of a library installed on this machine.

Used by MODULE.bazel (Bzlmod) through the `kiln_local` module extension, so
that MODULE.bazel names no machine paths: the path comes from an environment
variable, else the first of the Debian locations that exists. WORKSPACE (Bazel
4.2.3, what CI runs) uses new_local_repository with the same BUILD files.
"""

def _local_library_impl(repository_ctx):
    candidates = []
    override = repository_ctx.os.environ.get(repository_ctx.attr.env, "")
    if override:
        candidates.append(override)
    candidates.extend(repository_ctx.attr.candidates)
    for candidate in candidates:
        root = repository_ctx.path(candidate)
        if root.get_child(repository_ctx.attr.marker).exists:
            for child in root.readdir():
                repository_ctx.symlink(child, child.basename)
            repository_ctx.symlink(repository_ctx.attr.build_file, "BUILD.bazel")
            return
    fail("%s: none of %s holds %s; set %s to the library's root" % (
        repository_ctx.name,
        ", ".join(candidates),
        repository_ctx.attr.marker,
        repository_ctx.attr.env,
    ))

local_library = repository_rule(
    implementation = _local_library_impl,
    local = True,
    attrs = {
        "env": attr.string(mandatory = True, doc = "environment variable that overrides the path"),
        "candidates": attr.string_list(doc = "paths tried in order when `env` is unset"),
        "marker": attr.string(mandatory = True, doc = "a file that must exist under the root"),
        "build_file": attr.label(mandatory = True, allow_single_file = True),
    },
)

def _kiln_local_impl(module_ctx):
    local_library(
        name = "llvm",
        env = "KILN_LLVM_ROOT",
        candidates = ["/usr/lib/llvm-22"],
        marker = "include/mlir/IR/Operation.h",
        build_file = "//third_party:llvm.BUILD",
    )
    local_library(
        name = "absl",
        env = "KILN_ABSL_INCLUDE_ROOT",
        candidates = ["/usr/include"],
        marker = "absl/status/status.h",
        build_file = "//third_party:absl.BUILD",
    )

# Bazel 7+ only (module_extension does not exist in Bazel 4).
kiln_local = module_extension(implementation = _kiln_local_impl)
