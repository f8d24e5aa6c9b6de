# Idioms of the twelfth real-world sample that the front end took as errors,
# and upstream Triton 3.6 compiles: Triton's decorator and annotation through
# module-level aliases (ArcticTraining's `triton_jit = triton.jit`, Fast-LLM's
# `tl_constexpr = tl.constexpr`), a decorator a host factory defers (Fast-LLM's
# `triton_jit = try_decorate(lambda: triton.jit)`, applied as `@triton_jit()`),
# and `import triton.knobs` in a module-level try whose except branch would
# leave the aliases unset (triton.knobs.runtime.interpret is False: compiled
# kernels do not run in the interpreter).
# RUN: %kilnc compile %s -n aliased -s "x_ptr=*fp32, n=i32, BLOCK=64" --arch sm_90a --emit kiln -o - | FileCheck %s
# RUN: %kilnc compile %s -n deferred -s "x_ptr=*fp32, n=i32, BLOCK=64" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=DEFERRED
# RUN: not %kilnc compile %s -n not_a_kernel -s "x_ptr=*fp32" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=HOST
# RUN: not %kilnc compile %s -n plain_annotation -s "x_ptr=*fp32, BLOCK=64" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=PLAIN
try:
    import triton
    import triton.knobs
    import triton.language as tl

    tl_constexpr = tl.constexpr
    interpret = triton.knobs.runtime.interpret
except ImportError as e:
    triton = None
    tl_constexpr = None
    interpret = True


def try_decorate(get_decorator):
    def new_decorator(*args, **kwargs):
        return get_decorator()(*args, **kwargs)

    return new_decorator


triton_jit = triton.jit
deferred_jit = try_decorate(lambda: triton.jit)
not_jit = try_decorate(lambda: 3)
int_alias = int


# CHECK-LABEL: func.func @aliased
# CHECK: kiln.make_range {end = 64 : i32, start = 0 : i32}
@triton_jit
def aliased(x_ptr, n, BLOCK: tl_constexpr):
    tl.static_assert(not interpret)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


# DEFERRED-LABEL: func.func @deferred
# DEFERRED: kiln.make_range {end = 64 : i32, start = 0 : i32}
@deferred_jit()
def deferred(x_ptr, n, BLOCK: tl_constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 1.0, mask=offs < n)


# HOST: error: no @triton.jit function named 'not_a_kernel' in {{.*}}twelfth_sample_idioms.py (it has: aliased, deferred, plain_annotation)
@not_jit()
def not_a_kernel(x_ptr):
    pass


# An annotation that is not tl.constexpr under another name stays a runtime
# parameter's.
# PLAIN: error: bad signature for 'plain_annotation': parameter 'BLOCK' is not tl.constexpr
@triton.jit
def plain_annotation(x_ptr, BLOCK: int_alias):
    pass
