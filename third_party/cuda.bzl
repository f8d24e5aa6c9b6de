"""The `cuda_toolkit` repository rule: exposes the CUDA toolkit as @cuda.

The toolkit is found at $CUDA_HOME, or /usr/local/cuda when that is unset;
changing CUDA_HOME re-runs the rule. The repository links the toolkit's
`include/`, `bin/` and `nvvm/` directories and adds cuda.BUILD from this
directory (@cuda//:headers, :ptxas, :libdevice).
"""

_DEFAULT_CUDA_HOME = "/usr/local/cuda"

def _cuda_toolkit_impl(repository_ctx):
    cuda_home = repository_ctx.os.environ.get("CUDA_HOME", "") or _DEFAULT_CUDA_HOME
    root = repository_ctx.path(cuda_home)
    if not root.get_child("include").get_child("cuda.h").exists:
        fail("cuda_toolkit: no include/cuda.h under CUDA_HOME=%s; install the CUDA 13 toolkit " % cuda_home +
             "or point CUDA_HOME at it (Kiln needs its headers and ptxas at build time)")
    for child in ["include", "bin", "nvvm"]:
        if root.get_child(child).exists:
            repository_ctx.symlink(root.get_child(child), child)
    repository_ctx.symlink(repository_ctx.attr.build_file, "BUILD.bazel")

cuda_toolkit = repository_rule(
    implementation = _cuda_toolkit_impl,
    environ = ["CUDA_HOME"],
    local = True,
    attrs = {
        "build_file": attr.label(
            default = Label("//third_party:cuda.BUILD"),
            allow_single_file = True,
            doc = "BUILD file placed at the root of the repository.",
        ),
    },
    doc = "Exposes the CUDA toolkit found at $CUDA_HOME (default /usr/local/cuda).",
)
