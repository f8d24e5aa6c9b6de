"""Tests that use the compiler built once, in the exec configuration.

triton_kernel runs kilnc as a tool (cfg = "exec"), so `bazel test //...`
compiles the compiler's ~100 MLIR translation units for the exec
configuration. A cc_test that links compiler libraries, or a test with
kilnc in its data, would compile all of them a second time for the target
configuration (Bazel keeps the two apart): on CI's two cold cores that
second copy cost about ten minutes. These rules build such tests' binaries
and tools in the exec configuration instead, where the objects already are.
On a single-platform build (every build Kiln runs) the two configurations
run on the same machine, so nothing changes for the test itself.
"""

def _exec_binary_test_impl(ctx):
    binary = ctx.executable.binary
    test = ctx.actions.declare_file(ctx.label.name)
    ctx.actions.symlink(output = test, target_file = binary, is_executable = True)
    runfiles = ctx.runfiles(files = [binary] + ctx.files.data)
    runfiles = runfiles.merge(ctx.attr.binary[DefaultInfo].default_runfiles)
    for target in ctx.attr.data:
        runfiles = runfiles.merge(target[DefaultInfo].default_runfiles)
    return [DefaultInfo(executable = test, runfiles = runfiles)]

exec_binary_test = rule(
    implementation = _exec_binary_test_impl,
    doc = "Runs `binary`, built in the exec configuration, as a test.",
    attrs = {
        "binary": attr.label(
            mandatory = True,
            executable = True,
            cfg = "exec",
            doc = "The test program (a testonly cc_binary).",
        ),
        "data": attr.label_list(allow_files = True, doc = "Files the test reads."),
    },
    test = True,
)

def _exec_tool_impl(ctx):
    tool = ctx.executable.tool
    return [DefaultInfo(
        files = depset([tool]),
        runfiles = ctx.runfiles(files = [tool]).merge(ctx.attr.tool[DefaultInfo].default_runfiles),
    )]

exec_tool = rule(
    implementation = _exec_tool_impl,
    doc = "`tool` built in the exec configuration, for a test's data " +
          "(`$(rootpath :name)` names its executable).",
    attrs = {
        "tool": attr.label(mandatory = True, executable = True, cfg = "exec"),
    },
)

def compiler_cc_test(name, size = None, tags = None, data = None, **kwargs):
    """A cc_test linking compiler libraries, compiled in the exec configuration.

    Takes cc_test's arguments: all but size, tags and data go to the
    testonly cc_binary NAME_bin that exec_binary_test runs.
    """
    native.cc_binary(
        name = name + "_bin",
        testonly = True,
        tags = ["manual"],
        **kwargs
    )
    exec_binary_test(
        name = name,
        binary = ":" + name + "_bin",
        data = data or [],
        size = size,
        tags = tags or [],
    )
