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

Each specialization x arch is compiled at least twice by `kilnc compile` (actions
`TritonCompile`): a general variant and an `--aligned` one that assumes every
pointer and integer argument is divisible by 16; the launcher picks between
them at run time. A specialization with a pointer and an integer (or
descriptor) that carry no hint gets an `--aligned-pointers` variant too
(pointers 16-byte aligned, integers anything: a batch of 1, 12 heads, 1000
tokens). A specialization that gives an integer type to a parameter
with "stride" in its name gets a third, `--unit-strides` variant: the aligned
one with the strides of the kernel's contiguous (last) axes taken equal to 1,
so that row-major calls with unit strides run vectorized code. The
compiles for the highest arch without a suffix also write the variant's PTX
(`ptx = True`, the default), embedded for the driver to JIT on devices no
cubin fits. One `kiln-codegen` action (`TritonCodegen`) then declares the
typed launchers in NAME.h and writes NAME.cc with the tables, and the image
sources NAME.kiln/images_<k>.cc, whose `.incbin` directives embed the
images when the cc_library's compiles run them in parallel (optionally
zstd-compressed: `compress = "zstd"`).
docs/usage.md documents the attributes; the contract of both tools is
docs/architecture.md.

With `autotune = True`, each specialization gives the parameter types only
and is crossed with the kernel's @triton.autotune configs: one TritonCompile
action per (arch, specialization, variant) compiles every config into
a directory (a tree artifact), since how many configs there are is in the
source, which analysis cannot read. Such a target also gets its tuner,
NAME_tune (kiln-tune), and may embed the tables it writes (`tuning_tables`):
the launchers then run the best config for the GPU and the call's key values.

The specializations are checked by kilnc itself (`kilnc check-spec`, the
signature parser of `kilnc compile`, against the kernel's source) in one
TritonCheckSpec action that every compile waits for: a mistake fails once,
before anything compiles, with an error naming the attribute, the element and
the kernel parameter. Analysis, which cannot run tools, only writes each
element as a signature, which decides the variants and so the outputs.
"""

load("@cuda//:archs.bzl", "PTXAS_ARCHS")
load("@rules_cc//cc:defs.bzl", "cc_binary", "cc_library")

# The archs kilnc compiles for: LLVM 22's NVPTX archs from sm_80 on (what
# `kilnc archs --all` prints).
COMPILER_ARCHS = [
    "sm_80", "sm_86", "sm_87", "sm_88", "sm_89", "sm_90", "sm_90a",
    "sm_100", "sm_100a", "sm_100f", "sm_101", "sm_101a", "sm_101f",
    "sm_103", "sm_103a", "sm_103f", "sm_110", "sm_110a", "sm_110f",
    "sm_120", "sm_120a", "sm_120f", "sm_121", "sm_121a", "sm_121f",
]

# Those the toolkit's ptxas assembles (@cuda//:archs.bzl, from `ptxas
# --help` when the @cuda repository is made): a new toolkit brings its archs.
SUPPORTED_ARCHS = [a for a in COMPILER_ARCHS if a in PTXAS_ARCHS] or COMPILER_ARCHS

# `all-major`: each major's first arch without a suffix (sm_80, sm_90, ...).
ALL_MAJOR_ARCHS = [a for a in SUPPORTED_ARCHS if a.endswith("0")]

# Integer types: a parameter with "stride" in its name given one of these gets
# the unit-stride variant.
_INTEGER_TYPES = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"]

def _split_entries(text):
    """Splits a signature at the commas outside brackets: "d=tensordesc<fp16[128,64]>"
    is one entry."""
    entries = []
    depth = 0
    current = ""
    for c in text.elems():
        if c in "[<(":
            depth += 1
        elif c in "]>)" and depth > 0:
            depth -= 1
        elif c == "," and depth == 0:
            entries.append(current)
            current = ""
            continue
        current += c
    entries.append(current)
    return entries

def _has_stride_parameter(signature):
    """Whether the named `signature` gives an integer type without a
    hint to a parameter with "stride" in its name. The positional form names
    none: it spells its hints, as upstream's AOT tool does."""
    for entry in _split_entries(signature):
        if "=" not in entry:
            return False
        key, value = [s.strip() for s in entry.split("=", 1)]
        if "stride" in key.lower() and value in _INTEGER_TYPES:
            return True
    return False

def _entry_type(entry):
    """The type (or value) of one signature entry, named or positional."""
    entry = entry.strip()
    if "=" in entry:
        key, value = entry.split("=", 1)
        if key.strip().replace("_", "a").isalnum():
            return value.strip()
    return entry

def _has_unhinted_pointer_and_integer(signature):
    """Whether `signature` has a pointer and an integer (or a descriptor,
    whose extents are integers) that carry no hint: the aligned-pointers
    variant differs from the general and the aligned ones only then."""
    pointer = False
    integer = False
    for entry in _split_entries(signature):
        value = _entry_type(entry)

        # A tuple's elements count as parameters (nesting flattened).
        elements = [value]
        if value.startswith("("):
            elements = [e.strip() for e in value.replace("(", "").replace(")", "").split(",")]
        for element in elements:
            if element.startswith("*") and ":" not in element:
                pointer = True
            elif element in _INTEGER_TYPES or (element.startswith("tensordesc<") and element.endswith(">")):
                integer = True
    return pointer and integer

def _variants(signature):
    """(name, kilnc flags) of each variant compiled for `signature`."""
    variants = [("general", []), ("aligned", ["--aligned"])]
    if _has_unhinted_pointer_and_integer(signature):
        variants.append(("aligned_pointers", ["--aligned-pointers"]))
    if _has_stride_parameter(signature):
        variants.append(("unit_stride", ["--unit-strides"]))
    return variants

_ATTR_DOC_SPECIALIZATIONS = """One element per compiled configuration. Either a dict mapping every
kernel parameter to its type ("*fp32", "*bf16", "i32", "fp32", ...; "*" marks
a pointer) or, for a tl.constexpr parameter, to its value (an int, a bool, or
a string such as "0.5", "tl.float16" or "'name'"), plus the optional launch
options "num_warps", "num_stages", "num_ctas" (Triton's defaults 4, 3, 1);
or a string in kilnc's positional form ("*fp32, *fp32, *fp32, i32, 1024") or
named form ("x_ptr=*fp32, ..., BLOCK=1024, num_warps=8")."""

def _message(name, attr, message):
    return "triton_kernel(name = \"%s\"): attribute '%s': %s" % (name, attr, message)

def _fail(name, attr, message):
    fail(_message(name, attr, message))

def _is_identifier(s):
    if type(s) != type("") or not s or s[0].isdigit():
        return False
    for c in s.elems():
        if not (c.isalnum() or c == "_"):
            return False
    return True

def _is_kernel_name(s):
    """Whether `s` names a @triton.jit function as `kilnc -n` takes it:
    "add_kernel", or "GELU.forward" for a class's static method."""
    if type(s) != type(""):
        return False
    for part in s.split("."):
        if not _is_identifier(part):
            return False
    return True

def cpp_kernel_name(kernel):
    """The C++ name the generated names start with: "GELU.forward" ->
    "GELU_forward" (launch_GELU_forward, GELU_forward_config, ...)."""
    return kernel.replace(".", "_")

def check_kernels(name, kernel, kernels):
    """Returns None when `kernel` / `kernels` name @triton.jit functions whose
    C++ names differ, else the error naming the attribute."""
    if kernel != None and kernels != None:
        return _message(name, "kernels", "cannot be given with 'kernel' ('kernel' names one kernel, 'kernels' several)")
    if kernel != None and not _is_kernel_name(kernel):
        return _message(name, "kernel", ("must be the name of a @triton.jit function (add_kernel, or " +
                                         "Cls.method for a class's @staticmethod), got %r") % (kernel,))
    if kernels == None:
        return None
    if type(kernels) != type([]) or not kernels:
        return _message(name, "kernels", "must be a non-empty list of @triton.jit function names, got %r" % (kernels,))
    seen = {}
    for k in kernels:
        if not _is_kernel_name(k):
            return _message(name, "kernels", ("%r is not the name of a @triton.jit function (add_kernel, or " +
                                              "Cls.method for a class's @staticmethod)") % (k,))
        cpp = cpp_kernel_name(k)
        if cpp in seen:
            if seen[cpp] == k:
                return _message(name, "kernels", "lists %r twice" % k)
            return _message(name, "kernels", ("%r and %r would both be named %s in C++ (launch_%s, %s_config, " +
                                              "%s_info); build them in separate targets") % (seen[cpp], k, cpp, cpp, cpp, cpp))
        seen[cpp] = k
    return None

def _edit_distance(a, b):
    """Levenshtein distance, for "did you mean" hints on short names."""
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
        previous = current
    return previous[len(b)]

def _closest(word, candidates):
    """The candidate within edit distance 2 of `word` (1 for short words), or None."""
    best = None
    best_distance = 3 if len(word) > 3 else 2
    for candidate in candidates:
        distance = _edit_distance(word.lower(), candidate.lower())
        if distance < best_distance:
            best = candidate
            best_distance = distance
    return best

def _entry_text(value):
    """The signature text of a dict value (a type or a constexpr value), or None."""
    if type(value) == type(True):
        return "True" if value else "False"
    if type(value) == type(0):
        return str(value)
    if type(value) == type("") and "=" not in value and len(_split_entries(value)) == 1:
        return value.strip()
    return None

def specialization_signatures(name, specializations):
    """Returns (signatures, error): the `kilnc -s` text of every element.

    Only what analysis needs is checked here: that each element can be
    written as one signature, whose text names the variants and so the
    outputs, and that no two are the same variant. Whether a signature fits
    the kernel (its parameters, types, values, launch options) is kilnc's to
    say, in the TritonCheckSpec action: kilnc parses signatures for `kilnc
    compile`, and only kilnc reads the kernel's source.
    """
    if type(specializations) != type([]) or not specializations:
        return None, _message(name, "specializations", "must be a non-empty list of dicts or signature strings")
    signatures = []
    for index, spec in enumerate(specializations):
        where = "specializations[%d]" % index
        if type(spec) == type(""):
            signature = spec.strip()
        elif type(spec) == type({}):
            entries = []
            for key, value in spec.items():
                if not _is_identifier(key):
                    return None, _message(name, "specializations", "%s: key %r is not a parameter name" % (where, key))
                text = _entry_text(value)
                if text == None:
                    return None, _message(name, "specializations", (
                        "%s: parameter '%s' must map to a type string such as \"*fp32\" or \"i32\", or to " +
                        "a constexpr value (an int, a bool, or a string such as \"0.5\"), got %s %r"
                    ) % (where, key, type(value), value))
                entries.append("%s=%s" % (key, text))
            signature = ", ".join(entries)
        else:
            return None, _message(name, "specializations", ("%s must be a dict {parameter: type or constexpr " +
                                                            "value} or a signature string, got %s %r") % (where, type(spec), spec))
        if signature in signatures:
            return None, _message(name, "specializations", "%s repeats specializations[%d]: %s" % (
                where,
                signatures.index(signature),
                signature,
            ))
        signatures.append(signature)
    return signatures, None

def normalize_arch(arch):
    """The sm_ name of one arch spelling ("sm_90a", "90a", "90a-real"), or None."""
    if type(arch) != type(""):
        return None
    name = arch if arch.startswith("sm_") else "sm_" + (arch[:-len("-real")] if arch.endswith("-real") else arch)
    return name if name in SUPPORTED_ARCHS else None

def _arch_number(arch):
    """sm_90a -> 90, sm_100f -> 100."""
    digits = arch[len("sm_"):]
    if digits[-1] in "af":
        digits = digits[:-1]
    return int(digits)

def ptx_fallback_arch(archs):
    """The arch whose PTX a target embeds: the highest without a suffix.

    PTX for sm_XY can be JIT-compiled for any GPU of compute capability X.Y
    or later; that of sm_XYa only for X.Y, that of sm_XYf only within its
    family. None when every arch has a suffix.
    """
    best = None
    for arch in archs:
        if arch[-1] in "af":
            continue
        if best == None or _arch_number(arch) > _arch_number(best):
            best = arch
    return best

def check_archs(name, archs, setting = None):
    """Checks a list of arch spellings; returns (normalized list, None) or (None, the error).

    The error names the `archs` attribute, or `setting`, the build setting
    that gives the list when the attribute is unset.
    """
    prefix = _message(name, "archs", "")
    if setting:
        prefix = "triton_kernel(name = \"%s\"): attribute 'archs' is unset, so the build setting %s gives it (--%s=sm_80,sm_90a): " % (name, setting, setting)
    if type(archs) != type([]) or not archs:
        return None, prefix + ("must be a non-empty list of GPU architectures, from: " + " ".join(SUPPORTED_ARCHS) +
                               ", or [\"all-major\"]")
    if archs == ["all-major"]:
        archs = ALL_MAJOR_ARCHS
    seen = {}
    normalized = []
    for arch in archs:
        if arch == "native":
            return None, prefix + ("'native' would make the build depend on the GPUs of the machine " +
                                   "that runs it (remote execution, caches); list the archs, e.g. " +
                                   "[\"sm_80\", \"sm_90a\"], or use [\"all-major\"]")
        sm = normalize_arch(arch)
        if sm == None and type(arch) == type(""):
            bare = arch if arch.startswith("sm_") else "sm_" + (arch[:-len("-real")] if arch.endswith("-real") else arch)
            if bare in COMPILER_ARCHS:
                return None, prefix + ("%r: the toolkit's ptxas (@cuda) cannot assemble %s; it takes: %s" % (
                    arch,
                    bare,
                    " ".join(SUPPORTED_ARCHS),
                ))
        if sm == None:
            guess = _closest(str(arch), SUPPORTED_ARCHS + [a[len("sm_"):] for a in SUPPORTED_ARCHS])
            return None, prefix + ("unknown arch %r%s; supported: %s (or without the sm_ prefix, as CMake's CUDA_ARCHITECTURES spells them: 80, 90a, ...)" % (
                arch,
                " (did you mean %r?)" % guess if guess else "",
                " ".join(SUPPORTED_ARCHS),
            ))
        if sm in seen:
            return None, prefix + ("%r is listed twice%s" % (
                arch,
                "" if arch == seen[sm] else " (as %r, both meaning %s)" % (seen[sm], sm),
            ))
        seen[sm] = arch
        normalized.append(sm)
    return normalized, None

KilnArchsInfo = provider(
    doc = "The project-wide default of triton_kernel's `archs` (//rules:archs).",
    fields = {"archs": "list of arch spellings, as given on the command line"},
)

def _archs_setting_impl(ctx):
    return [KilnArchsInfo(archs = ctx.build_setting_value)]

kiln_archs_setting = rule(
    implementation = _archs_setting_impl,
    build_setting = config.string_list(flag = True),
    doc = "A build setting (//rules:archs) holding the archs of every triton_kernel " +
          "that sets no `archs`: --//rules:archs=sm_80,90a.",
)

def check_namespace(name, namespace):
    """Returns None when `namespace` is a C++ namespace, else the error."""
    if type(namespace) != type("") or not namespace:
        return _message(name, "namespace", "must be a non-empty string, got %r" % (namespace,))
    for part in namespace.split("::"):
        if not _is_identifier(part):
            return _message(name, "namespace", "%r is not a C++ namespace (identifiers joined by ::)" % namespace)
    return None

def _package_dir(label, a_file):
    """The execution-root path of `label`'s package, given one file in it."""
    parts = [a_file.root.path, label.workspace_root, label.package]
    return "/".join([p for p in parts if p]) or "."

def _check_spec_action(ctx, src, kernel, stamp_name, signatures):
    """Declares the TritonCheckSpec action: `kilnc check-spec` of every signature.

    kilnc parses them against the kernel's source, as `kilnc compile` will,
    and names the attribute and the element in its errors. Returns the stamp
    it writes on success, an input of every compile action, so that a bad
    element fails once, here, before anything compiles.
    """
    stamp = ctx.actions.declare_file("%s.kiln/%s" % (ctx.attr.library_name, stamp_name))
    args = ctx.actions.args()
    args.add("check-spec")
    args.add(src)
    if kernel:
        args.add("-n", kernel)
    if ctx.attr.autotune:
        args.add("--autotune")
    args.add("--where", "triton_kernel(name = \"%s\"): attribute 'specializations': element" % ctx.attr.library_name)
    args.add("-o", stamp)
    args.add_all(signatures)
    ctx.actions.run(
        executable = ctx.executable.kilnc,
        arguments = [args],
        inputs = ctx.files.srcs,
        outputs = [stamp],
        mnemonic = "TritonCheckSpec",
        progress_message = "Checking the specializations of Triton kernel %s, %s" % (kernel or src.short_path, ctx.label),
    )
    return stamp

def _compile_action(ctx, src, kernel, kernel_dir, arch, index, signature, variant, flags, with_ptx, checked):
    """Declares the kilnc action of one (kernel, arch, specialization, variant).

    `kernel` is the `kilnc -n` name ("" for the file's only kernel), and
    `kernel_dir` the directory its files go in under the arch's ("" or "/"
    and its C++ name).

    `checked` is the TritonCheckSpec stamp: an input, so that the compile
    waits for the check.

    Returns [metadata, cubin], plus the PTX when `with_ptx` (the same
    compile writes it: kilnc --ptx-output); with autotune, one tree artifact
    (a directory of config<K>.json, config<K>.cubin and, with `with_ptx`,
    config<K>.ptx).
    """
    stem = "%s.kiln/%s%s/s%d_%s" % (ctx.attr.library_name, arch, kernel_dir, index, variant)
    outputs = []
    args = ctx.actions.args()
    args.add("compile")
    args.add(src)
    # The other srcs are modules the kernel's file may import.
    for other in ctx.files.srcs[1:]:
        args.add("--src", other)
    if kernel:
        args.add("-n", kernel)
    args.add("-s", signature)
    args.add("--arch", arch)
    args.add_all(flags)
    if ctx.attr.debug:
        args.add("--debug")

    # The toolkit's files are declared inputs, passed by path: the action
    # needs no CUDA_HOME and no shell environment, and a new ptxas or
    # libdevice changes its key.
    args.add("--ptxas", ctx.file._ptxas)
    args.add("--libdevice", ctx.file._libdevice)
    args.add_all(ctx.attr.kilnc_opts)
    if ctx.attr.autotune:
        # How many configs there are is in the source, which analysis cannot
        # read: one action compiles them all into a directory.
        directory = ctx.actions.declare_directory(stem + "_autotune")
        args.add("--autotune")
        if with_ptx:
            args.add("--ptx-output", "config<K>.ptx")
        args.add("-o", directory.path)
        outputs = [directory]
    else:
        cubin = ctx.actions.declare_file(stem + ".cubin")
        metadata = ctx.actions.declare_file(stem + ".json")
        args.add("-o", cubin)
        args.add("--metadata", metadata)
        outputs = [metadata, cubin]
        if with_ptx:
            ptx = ctx.actions.declare_file(stem + ".ptx")
            args.add("--ptx-output", ptx)
            outputs.append(ptx)
    ctx.actions.run(
        executable = ctx.executable.kilnc,
        arguments = [args],
        inputs = ctx.files.srcs + [ctx.file._libdevice, checked],
        tools = [ctx.file._ptxas],
        outputs = outputs,
        mnemonic = "TritonCompile",
        progress_message = "Compiling Triton kernel %s for %s to %s, %s %s: specializations[%d] = %s" % (
            (kernel or src.short_path) + ("'s @triton.autotune configs" if ctx.attr.autotune else ""),
            arch,
            ("cubins" if ctx.attr.autotune else "a cubin") + (" and PTX" if with_ptx else ""),
            ctx.label,
            variant,
            index,
            signature,
        ),
    )
    return outputs

def _triton_kernel_codegen_impl(ctx):
    name = ctx.attr.library_name
    specializations = []
    for encoded in ctx.attr.specializations:
        spec = json.decode(encoded)
        if type(spec) == type([]):  # a dict, as [[key, value], ...] to keep its order
            spec = {pair[0]: pair[1] for pair in spec}
        specializations.append(spec)
    signatures, error = specialization_signatures(name, specializations)
    if ctx.attr.archs:
        archs, arch_error = check_archs(name, ctx.attr.archs)
    else:
        setting = ctx.attr._default_archs
        archs, arch_error = check_archs(name, setting[KilnArchsInfo].archs, str(setting.label))
    kernel = ctx.attr.kernel or None
    kernels = ctx.attr.kernels or None
    error = error or arch_error or check_namespace(name, ctx.attr.namespace) or check_kernels(name, kernel, kernels)
    if error:
        fail(error)

    src = ctx.files.srcs[0]

    # (kilnc -n name, directory under each arch, check stamp) per kernel:
    # with `kernels`, each in a directory named by its C++ name.
    if kernels:
        targets = [(k, "/" + cpp_kernel_name(k), cpp_kernel_name(k) + ".specializations.checked") for k in kernels]
    else:
        targets = [(kernel or "", "", "specializations.checked")]
    kernel_desc = ", ".join(kernels) if kernels else (kernel or src.short_path)

    # The PTX fallback: that of the highest arch without a suffix, which the
    # driver can JIT for any later GPU; its compile actions write it too.
    ptx_arch = ptx_fallback_arch(archs) if ctx.attr.ptx else None

    checked = [_check_spec_action(ctx, src, target[0], target[2], signatures) for target in targets]

    # (metadata, cubin or ptx) of every image, in a fixed order; with
    # autotune, (directory, directory) pairs that kiln-codegen expands.
    compiled = []
    for arch in archs:
        for index, signature in enumerate(signatures):
            for t, target in enumerate(targets):
                for variant, flags in _variants(signature):
                    outputs = _compile_action(ctx, src, target[0], target[1], arch, index, signature, variant, flags, arch == ptx_arch, checked[t])
                    if ctx.attr.autotune:
                        compiled.append((outputs[0], outputs[0]))
                    else:
                        compiled.append((outputs[0], outputs[1]))
                        if arch == ptx_arch:
                            compiled.append((outputs[0], outputs[2]))

    templates = ctx.files.templates
    if not templates:
        fail("%s: the codegen templates target %s has no files" % (ctx.label, ctx.attr.templates.label))
    out_header = ctx.outputs.out_header
    out_source = ctx.outputs.out_source
    args = ctx.actions.args()
    args.add("--name", name)
    args.add("--namespace", ctx.attr.namespace)

    # Relative to the repository root, which is on the include path.
    include_path = "/".join([p for p in [ctx.label.package, out_header.basename] if p])
    args.add("--include-path", include_path)
    args.add("--templates", _package_dir(ctx.attr.templates.label, templates[0]))
    args.add("--out-header", out_header)
    args.add("--out-source", out_source)
    outputs = [out_header, out_source]
    if ctx.outputs.out_tuner_main:
        args.add("--out-tuner-main", ctx.outputs.out_tuner_main)
        outputs.append(ctx.outputs.out_tuner_main)

    # Named by their workspace-relative path in errors and in the generated
    # code, so that the output does not depend on the output base.
    for table in ctx.files.tuning_tables:
        args.add("--tuning-table", "%s=%s" % (table.short_path, table.path))
    shards = ctx.outputs.out_shards
    blobs = ctx.outputs.out_blobs
    if shards:
        # The images reach the binary through the assembler (.incbin in
        # NAME.kiln/images_<k>.cc, which the cc_library compiles in
        # parallel), not as hex that the C++ compiler parses.
        args.add("--embed", "incbin")
        args.add("--asm-prefix", shards[0].path[:-len("0.cc")])
        args.add("--asm-shards", str(len(shards)))
    if ctx.attr.compress:
        args.add("--compress", ctx.attr.compress)
    for metadata, image in compiled:
        args.add("%s=%s" % (metadata.path, image.path))
    inputs = {}
    for pair in compiled:
        for f in pair:
            inputs[f] = True
    ctx.actions.run(
        executable = ctx.executable.kiln_codegen,
        arguments = [args],
        inputs = inputs.keys() + templates + ctx.files.tuning_tables,
        outputs = outputs + shards + blobs,
        mnemonic = "TritonCodegen",
        progress_message = "Generating launchers %s for Triton kernel%s %s (%d %s%s)" % (
            include_path,
            "s" if kernels and len(kernels) > 1 else "",
            kernel_desc,
            len(compiled),
            "directories of autotune configs" if ctx.attr.autotune else "images",
            ", %d tuning tables" % len(ctx.files.tuning_tables) if ctx.files.tuning_tables else "",
        ),
    )
    images = [image for _, image in compiled]
    if ctx.attr.autotune:
        groups = OutputGroupInfo(
            cubins = depset(images),
            ptx = depset(images if ptx_arch else []),
            metadata = depset(images),
            # What the shards' .incbin directives read (the cc_library's
            # textual_hdrs, so that they are inputs of its compile actions).
            embedded = depset(blobs if blobs else (images if shards else [])),
        )
    else:
        groups = OutputGroupInfo(
            cubins = depset([image for image in images if image.extension == "cubin"]),
            ptx = depset([image for image in images if image.extension == "ptx"]),
            metadata = depset([m for m, image in compiled if image.extension == "cubin"]),
            embedded = depset(blobs if blobs else (images if shards else [])),
        )
    return [DefaultInfo(files = depset([out_header, out_source] + shards)), groups]

triton_kernel_codegen = rule(
    implementation = _triton_kernel_codegen_impl,
    doc = """Compiles every (arch, specialization, variant) of one Triton
kernel with kilnc and generates NAME.h/NAME.cc with kiln-codegen. Use the
`triton_kernel` macro, which calls this rule and wraps the outputs in a
cc_library. Output groups `cubins`, `ptx` and `metadata` hold the per-variant
files (`bazel build :NAME_codegen --output_groups=metadata`).""",
    attrs = {
        "srcs": attr.label_list(
            allow_files = [".py"],
            mandatory = True,
            doc = "The Python file that defines the kernel, first, then any Python files it " +
                  "imports (inputs of every compile action).",
        ),
        "kernel": attr.string(
            doc = "The @triton.jit function to compile (`kilnc -n`: add_kernel, or Cls.method " +
                  "for a class's @staticmethod); empty when the first file of `srcs` has " +
                  "exactly one kernel.",
        ),
        "kernels": attr.string_list(
            doc = "Instead of `kernel`: several @triton.jit functions, each compiled with every " +
                  "specialization, their files under NAME.kiln/<arch>/<C++ name>/.",
        ),
        "archs": attr.string_list(
            doc = "GPU architectures to compile for, each one of: " + ", ".join(SUPPORTED_ARCHS) +
                  " (those the toolkit's ptxas assembles), or without sm_ (80, 90a: CMake's " +
                  "spelling); or [\"all-major\"]. Empty: the //rules:archs build setting.",
        ),
        "kilnc_opts": attr.string_list(
            doc = "Extra kilnc compile flags for every compile action of this target " +
                  "(--mlir-timing, --mlir-print-ir-after-failure, ...).",
        ),
        "_default_archs": attr.label(
            default = Label("//rules:archs"),
            providers = [KilnArchsInfo],
        ),
        "_ptxas": attr.label(
            default = Label("@cuda//:ptxas"),
            allow_single_file = True,
            cfg = "exec",
        ),
        "_libdevice": attr.label(
            default = Label("@cuda//:libdevice"),
            allow_single_file = True,
        ),
        "specializations": attr.string_list(
            mandatory = True,
            doc = "The macro's `specializations`, each element JSON-encoded. " + _ATTR_DOC_SPECIALIZATIONS +
                  " Element i is variant \"s<i>\".",
        ),
        "autotune": attr.bool(
            default = False,
            doc = "Cross every specialization with the kernel's @triton.autotune configs: " +
                  "the specializations give the parameter types by name, each config the " +
                  "constexpr values and launch options; one TritonCompile action per (arch, " +
                  "specialization, variant) compiles every config into a directory.",
        ),
        "tuning_tables": attr.label_list(
            allow_files = [".json"],
            doc = "Tuning tables written by the target's tuner (kiln-tune): embedded, and " +
                  "consulted by the launchers' default overload for the device and the call's " +
                  "@triton.autotune key values (docs/usage.md, \"Tuning\"). Needs autotune.",
        ),
        "out_tuner_main": attr.output(
            doc = "With autotune: the generated main() of the target's tuner, NAME_tune.",
        ),
        "debug": attr.bool(
            default = False,
            doc = "Keep tl.device_assert and asserts on run-time values (kilnc --debug, " +
                  "upstream's debug=True); tl.device_print prints in every build.",
        ),
        "ptx": attr.bool(
            default = True,
            doc = "Embed each variant's PTX for the highest of `archs` without a suffix " +
                  "(the same compile writes it), which the runtime JIT-compiles only on a " +
                  "device that no cubin fits. On by default, as nvcc does; False opts out.",
        ),
        "compress": attr.string(
            default = "",
            values = ["", "zstd"],
            doc = "\"zstd\": store every image as a zstd frame, inflated once at its first " +
                  "load (the runtime dlopens libzstd.so.1 then). Off by default.",
        ),
        "out_shards": attr.output_list(
            doc = "NAME.kiln/images_<k>.cc: the sources that embed the images with .incbin; " +
                  "empty: hex arrays in NAME.cc.",
        ),
        "out_blobs": attr.output_list(
            doc = "NAME.kiln/images_<k>.bin, one per shard, with `compress`: the compressed " +
                  "images the shards embed.",
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
        specializations,
        archs = None,
        kernel = None,
        kernels = None,
        namespace = "kernels",
        ptx = True,
        compress = None,
        embed = "incbin",
        image_shards = 4,
        autotune = False,
        tuning_tables = [],
        debug = False,
        kilnc_opts = [],
        deps = [],
        visibility = None,
        kilnc = None,
        kiln_codegen = None,
        templates = None,
        **kwargs):
    """Compiles a Triton kernel ahead of time into cc_library NAME with typed launchers.

    Defines `NAME_codegen` (the compile and codegen actions) and the cc_library
    `NAME`, whose header users include as "<package>/NAME.h". It declares, per
    kernel, `namespace::launch_<kernel>(...)` overloads, one per set of
    parameter types, and the config type `namespace::<kernel>_config` that
    picks among specializations differing in constexpr values or launch
    options. The launchers pick the cubin for the device and the
    unit-stride, aligned, aligned-pointers or general variant for the
    arguments at run time.
    docs/usage.md has the whole story.

    Args:
      name: NAME of the cc_library and of the generated NAME.h/NAME.cc; a C
        identifier.
      srcs: the .py file that defines the kernel, then any .py files it imports.
      archs: GPU architectures to build cubins for, from SUPPORTED_ARCHS
        (sm_80 ... sm_90a, sm_100/a/f, ..., sm_121f: those of kilnc that
        the toolkit's ptxas assembles), also spelled without sm_ (80, 90a)
        as CMake's CUDA_ARCHITECTURES does, or ["all-major"] (sm_80, sm_90,
        sm_100, sm_110, sm_120). Left out: the build setting //rules:archs
        (--//rules:archs=sm_80,sm_90a).
      specializations: a list; each element is one compiled configuration.
        Either a dict mapping every kernel parameter to its type ("*fp32",
        "*bf16", "i32", "fp32", ...) or, for tl.constexpr parameters, to its
        value (an int, a bool, or a string such as "0.5", "tl.float16" or
        "'name'"; a constexpr with a default in the kernel may be left out),
        plus optional launch options "num_warps", "num_stages", "num_ctas"
        (ints; Triton's defaults 4, 3, 1 otherwise); or a string in kilnc's
        positional form ("*fp32, *fp32, *fp32, i32, 1024") or named form
        ("x_ptr=*fp32, ..., BLOCK=1024, num_warps=8"). The first element with
        given parameter types is those types' default config.
      kernel: the @triton.jit function to compile; may be omitted when the
        first file has exactly one kernel that no other calls. Naming it makes
        progress messages name it too. A class's @staticmethod is named
        "Cls.method" (nested classes "Outer.Inner.method"), and its C++ names
        join the parts with '_': launch_Cls_method, Cls_method_config.
      kernels: instead of `kernel`, a list of kernels, each compiled with
        every specialization into the one library (["GELU.forward",
        "ReLU.forward"]); their C++ names must differ.
      namespace: C++ namespace of the launchers ("a::b" allowed).
      ptx: embed, per variant, the PTX of the highest of `archs` without a
        suffix (sm_80 of sm_80 and sm_90a), written by the same compile;
        the driver JIT-compiles it only on a device none of the cubins fits
        (a newer GPU). True by default, as nvcc does; False opts out. All
        archs arch-specific (sm_90a alone): no PTX, since that of sm_XYa
        runs on sm_XY only.
      compress: "zstd" stores every image as a zstd frame, inflated once at
        its first load (the runtime dlopens libzstd.so.1 then; no link
        dependency). Off by default.
      embed: "incbin" (default): the images reach the binary through the
        assembler, in `image_shards` sources NAME.kiln/images_<k>.cc that
        compile in parallel, each with `.incbin` directives (ELF targets);
        "hex": as hex arrays in NAME.cc, which the C++ compiler parses
        (portable, slow for many variants).
      image_shards: how many image sources with embed = "incbin".
      autotune: take the constexpr values and launch options from the
        kernel's @triton.autotune configs: each specialization (dict or named
        string, parameter types only, no launch options) is compiled once per
        config, and the first config is the default. Also defines the
        tuner NAME_tune (kiln-tune over the target's kernels).
      tuning_tables: with autotune, tuning tables (.json) written by
        NAME_tune on the target GPUs: the launchers' default overload runs
        the best config for the device and the call's `key` values
        (docs/usage.md, "Tuning").
      debug: keep tl.device_assert and `assert` on run-time values (kilnc
        --debug, as upstream's debug=True); a failed one stops the kernel and
        the launch's stream reports an error.
      kilnc_opts: extra flags of every `kilnc compile` of this target, such as
        ["--mlir-timing"] or ["--mlir-print-ir-after-failure"].
      deps: extra deps of the cc_library.
      visibility: visibility of the cc_library and the codegen target.
      kilnc: overrides //compiler/driver:kilnc (for example a prebuilt one).
      kiln_codegen: overrides //compiler/codegen:kiln-codegen.
      templates: overrides //codegen_templates:templates.
      **kwargs: common attributes (tags, testonly, target_compatible_with, ...)
        passed to both targets.
    """

    # What must hold to define the targets at all is checked here; archs,
    # namespace and kernel names when the codegen rule is analyzed, so that a
    # mistake there fails only this target; the specializations by kilnc, in
    # the target's TritonCheckSpec action.
    if not _is_identifier(name):
        _fail(name, "name", "must be a C identifier (it names NAME.h, NAME.cc and C++ symbols)")

    if not srcs:
        _fail(name, "srcs", "is empty; give the .py file that defines the kernel")
    for src in srcs:
        if type(src) == type("") and not (src.endswith(".py") or src.startswith(":") or src.startswith("//") or src.startswith("@")):
            _fail(name, "srcs", "%r is not a .py file" % src)


    if type(specializations) != type([]) or not specializations:
        _fail(name, "specializations", "must be a non-empty list of dicts or signature strings")
    encoded = []
    for index, spec in enumerate(specializations):
        if type(spec) not in [type(""), type({})]:
            _fail(name, "specializations", ("specializations[%d] must be a dict {parameter: type or constexpr " +
                                            "value} or a signature string, got %s %r") % (index, type(spec), spec))
        # json.encode sorts a dict's keys; pairs keep the order written.
        encoded.append(json.encode([[k, v] for k, v in spec.items()] if type(spec) == type({}) else spec))

    if tuning_tables and not autotune:
        _fail(name, "tuning_tables", "needs autotune = True: tables rank the kernel's @triton.autotune configs")
    if embed not in ["incbin", "hex"]:
        _fail(name, "embed", "must be \"incbin\" or \"hex\", got %r" % (embed,))
    if compress not in [None, "", "zstd"]:
        _fail(name, "compress", "must be \"zstd\" or unset, got %r" % (compress,))
    if type(image_shards) != type(0) or image_shards < 1:
        _fail(name, "image_shards", "must be a positive int, got %r" % (image_shards,))
    shards = []
    blobs = []
    if embed == "incbin":
        shards = ["%s.kiln/images_%d.cc" % (name, k) for k in range(image_shards)]
        if compress:
            blobs = ["%s.kiln/images_%d.bin" % (name, k) for k in range(image_shards)]

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
        kernels = kernels or [],
        archs = archs or [],
        kilnc_opts = kilnc_opts,
        specializations = encoded,
        autotune = autotune,
        tuning_tables = tuning_tables,
        debug = debug,
        ptx = ptx,
        compress = compress or "",
        namespace = namespace,
        library_name = name,
        out_header = name + ".h",
        out_source = name + ".cc",
        out_tuner_main = name + "_tune_main.cc" if autotune else None,
        out_shards = shards,
        out_blobs = blobs,
        visibility = visibility,
        **dict(kwargs, **tools)
    )

    textual_hdrs = []
    if shards:
        # The files the shards' .incbin directives read, as inputs of the
        # library's compile actions (textual: never parsed).
        native.filegroup(
            name = name + "_embedded",
            srcs = [":" + name + "_codegen"],
            output_group = "embedded",
            visibility = ["//visibility:private"],
            **kwargs
        )
        textual_hdrs = [":" + name + "_embedded"]

    cc_library(
        name = name,
        hdrs = [name + ".h"],
        srcs = [name + ".cc"] + shards,
        textual_hdrs = textual_hdrs,
        deps = [Label("//runtime:kiln_runtime")] + deps,
        visibility = visibility,
        **kwargs
    )

    if autotune:
        # The tuner: `bazel run //pkg:NAME_tune -- --spec S.json --out T.json`.
        cc_binary(
            name = name + "_tune",
            srcs = [name + "_tune_main.cc"],
            deps = [":" + name, Label("//tools/kiln_tune:kiln_tune_main")],
            visibility = visibility,
            **kwargs
        )
