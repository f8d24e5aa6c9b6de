"""triton_kernel: compile Triton-language kernels ahead of time into a cc_library.

    load("//rules:triton_kernel.bzl", "triton_kernel")

    triton_kernel(
        name = "add",
        srcs = ["add.py"],
        kernel = "add_kernel",
        archs = ["sm_80", "sm_90a"],
        specializations = [
            {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": 1024},
            {"x_ptr": "*fp16", "y_ptr": "*fp16", "out_ptr": "*fp16", "n": "i32", "BLOCK": 2048,
             "num_warps": 8},
        ],
    )

    cc_binary(name = "demo", srcs = ["main.cc"], deps = [":add"])  # #include "pkg/add.h"

Each specialization x arch is compiled twice by `kilnc compile` (actions
`TritonCompile`): a general variant and an `--aligned` one that assumes every
pointer and integer argument is divisible by 16; the launcher picks between
them at run time. One `kiln-codegen` action (`TritonCodegen`) then embeds all
cubins in NAME.cc and declares the typed launchers in NAME.h. The contract of
both tools is docs/architecture.md.
"""

load("@rules_cc//cc:defs.bzl", "cc_library")

# Targets kilnc compiles for (docs/architecture.md, "Conversion and target").
SUPPORTED_ARCHS = ["sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100a", "sm_120a"]

# Per-variant launch options a specialization may set besides its parameters.
LAUNCH_OPTIONS = ["num_warps", "num_stages", "num_ctas"]

_VARIANTS = [("general", False), ("aligned", True)]

# Powers of two: a CTA is num_warps warps, and Triton's layouts need 2^k.
_NUM_WARPS = [1, 2, 4, 8, 16, 32]

def _fail(name, attr, message):
    fail("triton_kernel(name = \"%s\"): attribute '%s': %s" % (name, attr, message))

def _is_identifier(s):
    if not s or s[0].isdigit():
        return False
    for c in s.elems():
        if not (c.isalnum() or c == "_"):
            return False
    return True

def _signature_string(name, index, spec):
    """Turns one element of `specializations` into a `kilnc -s` argument."""
    where = "specializations[%d]" % index
    if type(spec) == type(""):
        spec = spec.strip()
        if not spec:
            _fail(name, "specializations", "%s is an empty string" % where)
        return spec
    if type(spec) != type({}):
        _fail(name, "specializations", (
            "%s must be a dict {parameter: type or constexpr value} or a signature " +
            "string such as \"*fp32:16, *fp32:16, i32, 1024\", got %s %r"
        ) % (where, type(spec), spec))
    if not spec:
        _fail(name, "specializations", "%s is an empty dict" % where)
    entries = []
    params = 0
    for key, value in spec.items():
        if type(key) != type("") or not _is_identifier(key):
            _fail(name, "specializations", "%s: key %r is not a parameter name" % (where, key))
        if key in LAUNCH_OPTIONS:
            if type(value) != type(0) or value < 1:
                _fail(name, "specializations", "%s: %s must be a positive int, got %r" % (where, key, value))
            if key == "num_warps" and value not in _NUM_WARPS:
                _fail(name, "specializations", "%s: num_warps must be a power of 2, got %d" % (where, value))
        elif type(value) == type(0):
            params += 1
        elif type(value) == type(""):
            if not value.strip() or "," in value or "=" in value:
                _fail(name, "specializations", (
                    "%s: parameter '%s' has value %r; expected a type such as \"*fp32\" or " +
                    "\"i32\", or a constexpr value"
                ) % (where, key, value))
            params += 1
        else:
            _fail(name, "specializations", (
                "%s: parameter '%s' must map to a string (a type such as \"*fp32\" or \"i32\") " +
                "or an int (a constexpr value), got %s %r"
            ) % (where, key, type(value), value))
        entries.append("%s=%s" % (key, value if type(value) == type("") else str(value)))
    if params == 0:
        _fail(name, "specializations", "%s names only launch options, no kernel parameters" % where)
    return ", ".join(entries)

def _package_dir(label, a_file):
    """The execution-root path of `label`'s package, given one file in it."""
    parts = [a_file.root.path, label.workspace_root, label.package]
    return "/".join([p for p in parts if p]) or "."

def _triton_kernel_codegen_impl(ctx):
    src = ctx.files.srcs[0]
    kernel_desc = ctx.attr.kernel or src.short_path
    compiled = []  # (metadata, cubin) of every variant, in a fixed order.
    for arch in ctx.attr.archs:
        for index, signature in enumerate(ctx.attr.signatures):
            for variant, aligned in _VARIANTS:
                stem = "%s.kiln/%s/s%d_%s" % (ctx.attr.library_name, arch, index, variant)
                cubin = ctx.actions.declare_file(stem + ".cubin")
                metadata = ctx.actions.declare_file(stem + ".json")
                args = ctx.actions.args()
                args.add("compile")
                args.add(src)
                if ctx.attr.kernel:
                    args.add("-n", ctx.attr.kernel)
                args.add("-s", signature)
                args.add("--arch", arch)
                if aligned:
                    args.add("--aligned")
                args.add("-o", cubin)
                args.add("--metadata", metadata)
                ctx.actions.run(
                    executable = ctx.executable.kilnc,
                    arguments = [args],
                    inputs = ctx.files.srcs,
                    outputs = [cubin, metadata],
                    mnemonic = "TritonCompile",
                    progress_message = "Compiling Triton kernel %s for %s (variant s%d %s)" % (
                        kernel_desc,
                        arch,
                        index,
                        variant,
                    ),
                    # kilnc runs ptxas from $CUDA_HOME (passed by --action_env).
                    use_default_shell_env = True,
                )
                compiled.append((metadata, cubin))

    templates = ctx.files.templates
    if not templates:
        fail("%s: the codegen templates target %s has no files" % (ctx.label, ctx.attr.templates.label))
    out_header = ctx.outputs.out_header
    out_source = ctx.outputs.out_source
    args = ctx.actions.args()
    args.add("--name", ctx.attr.library_name)
    args.add("--namespace", ctx.attr.namespace)
    # Relative to the repository root, which is on the include path.
    include_path = "/".join([p for p in [ctx.label.package, out_header.basename] if p])
    args.add("--include-path", include_path)
    args.add("--templates", _package_dir(ctx.attr.templates.label, templates[0]))
    args.add("--out-header", out_header)
    args.add("--out-source", out_source)
    for metadata, cubin in compiled:
        args.add("%s=%s" % (metadata.path, cubin.path))
    ctx.actions.run(
        executable = ctx.executable.kiln_codegen,
        arguments = [args],
        inputs = [f for pair in compiled for f in pair] + templates,
        outputs = [out_header, out_source],
        mnemonic = "TritonCodegen",
        progress_message = "Generating launchers %s for Triton kernel %s (%d variants)" % (
            include_path,
            kernel_desc,
            len(compiled),
        ),
    )
    return [
        DefaultInfo(files = depset([out_header, out_source])),
        OutputGroupInfo(
            cubins = depset([cubin for _, cubin in compiled]),
            metadata = depset([metadata for metadata, _ in compiled]),
        ),
    ]

triton_kernel_codegen = rule(
    implementation = _triton_kernel_codegen_impl,
    doc = """Compiles every (arch, specialization, general/aligned) variant of one Triton
kernel with kilnc and generates NAME.h/NAME.cc with kiln-codegen. Use the
`triton_kernel` macro, which validates its arguments, calls this rule and wraps
the outputs in a cc_library. Output groups `cubins` and `metadata` hold the
per-variant files (`bazel build :NAME_codegen --output_groups=metadata`).""",
    attrs = {
        "srcs": attr.label_list(
            allow_files = [".py"],
            mandatory = True,
            doc = "The Python file that defines the kernel, first, then any Python files it " +
                  "imports (inputs of every compile action).",
        ),
        "kernel": attr.string(
            doc = "The @triton.jit function to compile (`kilnc -n`); empty when the first " +
                  "file of `srcs` has exactly one kernel.",
        ),
        "archs": attr.string_list(
            mandatory = True,
            doc = "GPU architectures to compile for, each one of: " + ", ".join(SUPPORTED_ARCHS) + ".",
        ),
        "signatures": attr.string_list(
            mandatory = True,
            doc = "One `kilnc -s` signature per specialization, named " +
                  "(\"x_ptr=*fp32, n=i32, BLOCK=1024, num_warps=8\") or positional " +
                  "(\"*fp32:16, i32, 1024\"). Specialization i is variant \"s<i>\".",
        ),
        "namespace": attr.string(
            default = "kernels",
            doc = "C++ namespace of the generated launchers.",
        ),
        "library_name": attr.string(
            mandatory = True,
            doc = "NAME: the generated files are NAME.h and NAME.cc, and kiln-codegen's --name.",
        ),
        "out_header": attr.output(
            mandatory = True,
            doc = "The generated header, NAME.h, included as \"<package>/NAME.h\".",
        ),
        "out_source": attr.output(
            mandatory = True,
            doc = "The generated source, NAME.cc, with the cubins embedded.",
        ),
        "kilnc": attr.label(
            default = Label("//compiler/driver:kilnc"),
            executable = True,
            cfg = "exec",
            doc = "The Kiln compiler that runs each TritonCompile action.",
        ),
        "kiln_codegen": attr.label(
            default = Label("//compiler/codegen:kiln-codegen"),
            executable = True,
            cfg = "exec",
            doc = "The launcher generator that runs the TritonCodegen action.",
        ),
        "templates": attr.label(
            default = Label("//codegen_templates:templates"),
            allow_files = True,
            doc = "kiln-codegen's templates; all files must lie in the target's package " +
                  "directory, which is passed as --templates.",
        ),
    },
)

def triton_kernel(
        name,
        srcs,
        archs,
        specializations,
        kernel = None,
        namespace = "kernels",
        deps = [],
        visibility = None,
        kilnc = None,
        kiln_codegen = None,
        templates = None,
        **kwargs):
    """Compiles a Triton kernel ahead of time into cc_library NAME with typed launchers.

    Defines `NAME_codegen` (the compile and codegen actions) and the cc_library
    `NAME`, whose header users include as "<package>/NAME.h". It declares
    `namespace::launch_<kernel>(...)` overloads, one per set of parameter
    types, which pick the cubin for the device and the aligned or general
    variant for the arguments at run time.

    Args:
      name: NAME of the cc_library and of the generated NAME.h/NAME.cc; a C
        identifier.
      srcs: the .py file that defines the kernel, then any .py files it imports.
      archs: GPU architectures to build cubins for, from SUPPORTED_ARCHS
        (sm_80 sm_86 sm_89 sm_90 sm_90a sm_100a sm_120a).
      specializations: a list; each element is one compiled configuration.
        Either a dict mapping every kernel parameter to its type ("*fp32",
        "*bf16", "i32", "fp32", ...) or, for constexpr parameters, to its value
        (an int, or a string kilnc parses), plus optional launch options
        "num_warps", "num_stages", "num_ctas" (ints; Triton's defaults 4, 3, 1
        otherwise); or a string in kilnc's positional form
        ("*fp32:16, *fp32:16, *fp32:16, i32, 1024") or named form
        ("x_ptr=*fp32, ..., BLOCK=1024, num_warps=8").
      kernel: the @triton.jit function to compile; may be omitted when the
        first file has exactly one kernel that no other calls. Naming it makes
        progress messages name it too.
      namespace: C++ namespace of the launchers ("a::b" allowed).
      deps: extra deps of the cc_library.
      visibility: visibility of the cc_library and the codegen target.
      kilnc: overrides //compiler/driver:kilnc (for example a prebuilt one).
      kiln_codegen: overrides //compiler/codegen:kiln-codegen.
      templates: overrides //codegen_templates:templates.
      **kwargs: common attributes (tags, testonly, target_compatible_with, ...)
        passed to both targets.
    """
    if not _is_identifier(name):
        _fail(name, "name", "must be a C identifier (it names NAME.h, NAME.cc and C++ symbols)")

    if not srcs:
        _fail(name, "srcs", "is empty; give the .py file that defines the kernel")
    for src in srcs:
        if type(src) == type("") and not (src.endswith(".py") or src.startswith(":") or src.startswith("//") or src.startswith("@")):
            _fail(name, "srcs", "%r is not a .py file" % src)

    if kernel != None and (type(kernel) != type("") or not _is_identifier(kernel)):
        _fail(name, "kernel", "must be the name of a @triton.jit function, got %r" % (kernel,))

    if type(namespace) != type("") or not namespace:
        _fail(name, "namespace", "must be a non-empty string, got %r" % (namespace,))
    for part in namespace.split("::"):
        if not _is_identifier(part):
            _fail(name, "namespace", "%r is not a C++ namespace (identifiers joined by ::)" % namespace)

    if type(archs) != type([]) or not archs:
        _fail(name, "archs", "must be a non-empty list of GPU architectures, from: " + " ".join(SUPPORTED_ARCHS))
    seen_archs = {}
    for arch in archs:
        if arch not in SUPPORTED_ARCHS:
            _fail(name, "archs", "unknown arch %r; supported: %s" % (arch, " ".join(SUPPORTED_ARCHS)))
        if arch in seen_archs:
            _fail(name, "archs", "%r is listed twice" % arch)
        seen_archs[arch] = True

    if type(specializations) != type([]) or not specializations:
        _fail(name, "specializations", "must be a non-empty list of dicts or signature strings")
    signatures = []
    for index, spec in enumerate(specializations):
        signature = _signature_string(name, index, spec)
        if signature in signatures:
            _fail(name, "specializations", "specializations[%d] repeats specializations[%d]: %s" % (
                index,
                signatures.index(signature),
                signature,
            ))
        signatures.append(signature)

    tools = {}
    if kilnc != None:
        tools["kilnc"] = kilnc
    if kiln_codegen != None:
        tools["kiln_codegen"] = kiln_codegen
    if templates != None:
        tools["templates"] = templates

    triton_kernel_codegen(
        name = name + "_codegen",
        srcs = srcs,
        kernel = kernel or "",
        archs = archs,
        signatures = signatures,
        namespace = namespace,
        library_name = name,
        out_header = name + ".h",
        out_source = name + ".cc",
        visibility = visibility,
        **dict(kwargs, **tools)
    )

    cc_library(
        name = name,
        hdrs = [name + ".h"],
        srcs = [name + ".cc"],
        deps = [Label("//runtime:kiln_runtime")] + deps,
        visibility = visibility,
        **kwargs
    )
