"""The cases of tests/gpu/differential.py: one or more per corpus kernel.

Each case is a dict:

  id        unique name; the cubin is ID.cubin (and ID.json, its metadata)
  file      the corpus file, relative to tests/kernels/
  kernel    the @triton.jit function
  sig       the kilnc signature in the named form (a `# kiln-variant:` of the
            file where one fits); constexprs it leaves out take the kernel's
            heuristics or defaults, on both sides
  args      run-time parameter -> value. A number (or bool) for a scalar; for
            a buffer a tuple (KIND, TORCH_DTYPE, NUMEL, *EXTRA) or a callable
            (torch, generator) -> CUDA tensor. KINDs:
              zeros, full (value), arange, perm (a permutation of 0..NUMEL-1),
              randn (scale), uniform (lo, hi; default -1, 1),
              wide (|x| from 1e-8 to 1e6), specials (randn with 0, -0, ±inf,
              NaN), ties (small integers in [-3, 3]), coarse (the same with
              NaNs),
              randbits (every bit pattern of the dtype),
              randint (lo, hi; default ±1000), small [-3, 4), natural
              [0, 1000), bits {0, 1}, index (hi: [0, hi)), nonzero (lo, hi:
              magnitudes in [lo, hi) with random signs),
              window (start, length: zeros but randn there)
  grid      the launch grid
  outputs   every buffer the kernel writes (an input left unchanged may be
            listed too, when the kernel writes nothing else)
  tol / ulp how outputs may differ. tol=0: bitwise (a NaN matches any NaN).
            tol=x: the largest difference over the largest magnitude of the
            output is at most x. ulp=n: every element within n units in the
            last place. per_output={name: dict(tol=..) or dict(ulp=..)}
            overrides one output's rule. Each bound that is not bitwise says
            why beside it.
  may_fail  kilnc may not compile it yet (build_differential.sh says SKIPPED;
            the runner reports NOT RUN, a failure)
  seed      the inputs' random seed (default 1234)

Common reasons for a bound: sums (tl.sum, tl.cumsum, float atomics) add in
another order; a*b+c is one rounding where one compiler contracts it into an
FMA and two where the other does not; approximate instructions and libdevice
functions agree only to a few ulps if the two compilers lower differently.
"""


def cdiv(a, b):
    return (a + b - 1) // b


def case(id, file, kernel, sig, args, grid, outputs, **rules):
    return dict(id=id, file=file, kernel=kernel, sig=sig, args=args, grid=tuple(grid),
                outputs=list(outputs), **rules)


def unary(id, file, kernel, dtype, n, block, x=("randn",), **rules):
    """x_ptr -> out_ptr elementwise kernels with (x_ptr, out_ptr, n, BLOCK)."""
    t = {"float32": "fp32", "float64": "fp64", "float16": "fp16"}[dtype]
    return case(id, file, kernel, f"x_ptr=*{t}, out_ptr=*{t}, n=i32, BLOCK={block}",
                dict(x_ptr=(x[0], dtype, n) + tuple(x[1:]), out_ptr=("zeros", dtype, n), n=n),
                (cdiv(n, block),), ["out_ptr"], **rules)


CASES = []

# --- control_flow/checks_and_printing.py ------------------------------------
F = "control_flow/checks_and_printing.py"
CASES += [
    # The inputs never trip the asserts (no NaN).
    case("checked_copy", F, "checked_copy", "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=256",
         dict(x_ptr=("randn", "float32", 3000), out_ptr=("zeros", "float32", 3000), n=3000),
         (cdiv(3000, 256),), ["out_ptr"], tol=0),
    # Writes nothing: the printed text is not compared, only that x is intact.
    case("printing", F, "printing", "x_ptr=*i32, n=i32, BLOCK=32",
         dict(x_ptr=("randint", "int32", 32), n=20), (2,), ["x_ptr"], tol=0),
    case("static_checks", F, "static_checks", "x_ptr=*fp16, out_ptr=*fp16, BLOCK=128, CHUNK=32",
         dict(x_ptr=("randn", "float16", 128), out_ptr=("zeros", "float16", 128)),
         (1,), ["out_ptr"], tol=0),
]

# --- control_flow/loops.py ---------------------------------------------------
F = "control_flow/loops.py"
CASES += [
    # Seven programs stride over x and add their sums into one float with
    # atomics, in any order: a few roundings of the total apart.
    case("strided_sum", F, "strided_sum", "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=256",
         dict(x_ptr=("randn", "float32", 10000), out_ptr=("zeros", "float32", 1), n=10000),
         (7,), ["out_ptr"], tol=1e-5),
    case("pipelined_sum", F, "pipelined_sum",
         "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=256, STAGES=3, UNROLL=2",
         dict(x_ptr=("randn", "float32", 5000), out_ptr=("zeros", "float32", 256), n=5000),
         (1,), ["out_ptr"], tol=0),
    # 21 iterations by 4: the unrolled loop's remainder runs one.
    case("pipelined_sum_unroll_tail", F, "pipelined_sum",
         "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=256, STAGES=3, UNROLL=4",
         dict(x_ptr=("randn", "float32", 5300), out_ptr=("zeros", "float32", 256), n=5300),
         (1,), ["out_ptr"], tol=0),
    # Horner's rule: y*x + c contracts into an FMA or not.
    case("unrolled_poly_f32", F, "unrolled_poly",
         "x_ptr=*fp32, c_ptr=*fp32, out_ptr=*fp32, n=i32, DEGREE=4, BLOCK=512",
         dict(x_ptr=("uniform", "float32", 3000), c_ptr=("randn", "float32", 5),
              out_ptr=("zeros", "float32", 3000), n=3000),
         (cdiv(3000, 512),), ["out_ptr"], tol=1e-6),
    case("unrolled_poly_f64", F, "unrolled_poly",
         "x_ptr=*fp64, c_ptr=*fp64, out_ptr=*fp64, n=i32, DEGREE=7, BLOCK=128",
         dict(x_ptr=("uniform", "float64", 1000), c_ptr=("randn", "float64", 8),
              out_ptr=("zeros", "float64", 1000), n=1000),
         (cdiv(1000, 128),), ["out_ptr"], tol=1e-14),  # FMA contraction, in fp64
    case("nested_loops", F, "nested_loops", "x_ptr=*fp32, out_ptr=*fp32, M=i32, N=i32, BM=16, BN=64",
         dict(x_ptr=("randn", "float32", 50 * 150), out_ptr=("zeros", "float32", 16 * 64), M=50, N=150),
         (1,), ["out_ptr"], tol=1e-5),  # sums in another order
    # One program per element (n is unused by the kernel); below 10000 the
    # trajectories stay far below 2**31.
    case("collatz_steps", F, "collatz_steps", "x_ptr=*i32, out_ptr=*i32, n=i32",
         dict(x_ptr=("randint", "int32", 500, 1, 10000), out_ptr=("zeros", "int32", 500), n=500),
         (500,), ["out_ptr"], tol=0),
    case("countdown", F, "countdown", "out_ptr=*i32, start=i32, BLOCK=64",
         dict(out_ptr=("zeros", "int32", 64), start=37), (1,), ["out_ptr"], tol=0),
    # range(K, 0, -BLOCK) with K = 1000 (16 blocks, the last partial) and a
    # constant countdown range(3, -4, -3) (3, 0, -3); and K = 0: no iteration.
    case("reversed_blocks", F, "reversed_blocks", "x_ptr=*fp32, out_ptr=*fp32, K=i32, BLOCK=64",
         dict(x_ptr=("randn", "float32", 1000), out_ptr=("zeros", "float32", 64), K=1000),
         (1,), ["out_ptr"], tol=0),
    case("reversed_blocks_empty", F, "reversed_blocks", "x_ptr=*fp32, out_ptr=*fp32, K=i32, BLOCK=64",
         dict(x_ptr=("randn", "float32", 64), out_ptr=("full", "float32", 64, 7.0), K=0),
         (1,), ["out_ptr"], tol=0),
]

# --- control_flow/runtime_branches.py ----------------------------------------
F = "control_flow/runtime_branches.py"
CASES += [
    # Eight programs take all three branches and both sides of the ternary.
    case("clamp_by_program", F, "clamp_by_program",
         "x_ptr=*fp32, out_ptr=*fp32, n=i32, limit=fp32, BLOCK=256",
         dict(x_ptr=("randn", "float32", 2000), out_ptr=("zeros", "float32", 2000), n=2000, limit=0.5),
         (cdiv(2000, 256),), ["out_ptr"], tol=0),
    # Programs 4 and 5 start past n and return early.
    case("skip_tail", F, "skip_tail", "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=256",
         dict(x_ptr=("randn", "float32", 1000), out_ptr=("zeros", "float32", 1000), n=1000),
         (6,), ["out_ptr"], tol=0),
    case("scalar_logic_a", F, "scalar_logic", "out_ptr=*i32, a=i32, b=i32, BLOCK=32",
         dict(out_ptr=("zeros", "int32", 32), a=150, b=-3), (1,), ["out_ptr"], tol=0),
    case("scalar_logic_b", F, "scalar_logic", "out_ptr=*i32, a=i32, b=i32, BLOCK=32",
         dict(out_ptr=("zeros", "int32", 32), a=-5, b=-5), (1,), ["out_ptr"], tol=0),
    case("nested_branches_10x", F, "nested_branches",
         "x_ptr=*fp32, out_ptr=*fp32, n=i32, mode=i32, BLOCK=128",
         dict(x_ptr=("randn", "float32", 1000), out_ptr=("zeros", "float32", 1000), n=1000, mode=20),
         (cdiv(1000, 128),), ["out_ptr"], tol=0),
    case("nested_branches_neg", F, "nested_branches",
         "x_ptr=*fp32, out_ptr=*fp32, n=i32, mode=i32, BLOCK=128",
         dict(x_ptr=("randn", "float32", 1000), out_ptr=("zeros", "float32", 1000), n=1000, mode=0),
         (cdiv(1000, 128),), ["out_ptr"], tol=0),
]

# --- control_flow/static_branches.py -----------------------------------------
F = "control_flow/static_branches.py"
EPI = "x_ptr=*fp32, out_ptr=*fp32, n=i32, MODE=%d, BLOCK=256"
EPI_ARGS = dict(x_ptr=("randn", "float32", 3000), out_ptr=("zeros", "float32", 3000), n=3000)
CASES += [
    case("epilogue_relu", F, "epilogue", EPI % 1, EPI_ARGS, (cdiv(3000, 256),), ["out_ptr"], tol=0),
    # x * sigmoid(x): exp and the division are approximate instructions.
    case("epilogue_silu", F, "epilogue", EPI % 2, EPI_ARGS, (cdiv(3000, 256),), ["out_ptr"], ulp=2),
    case("epilogue_neg", F, "epilogue", EPI % 3, EPI_ARGS, (cdiv(3000, 256),), ["out_ptr"], tol=0),
    case("optional_bias_on", F, "optional_bias",
         "x_ptr=*fp32, bias_ptr=*fp32, out_ptr=*fp32, n=i32, HAS_BIAS=True, BLOCK=128",
         dict(x_ptr=("randn", "float32", 1000), bias_ptr=("randn", "float32", 1000),
              out_ptr=("zeros", "float32", 1000), n=1000), (cdiv(1000, 128),), ["out_ptr"], tol=0),
    case("optional_bias_off", F, "optional_bias",
         "x_ptr=*fp32, bias_ptr=*fp32, out_ptr=*fp32, n=i32, HAS_BIAS=False, BLOCK=128",
         dict(x_ptr=("randn", "float32", 1000), bias_ptr=("randn", "float32", 1000),
              out_ptr=("zeros", "float32", 1000), n=1000), (cdiv(1000, 128),), ["out_ptr"], tol=0),
    case("dtype_dispatch_f16", F, "dtype_dispatch", "x_ptr=*fp16, out_ptr=*fp16, n=i32, BLOCK=128",
         dict(x_ptr=("wide", "float16", 1000), out_ptr=("zeros", "float16", 1000), n=1000),
         (cdiv(1000, 128),), ["out_ptr"], tol=0),
    case("dtype_dispatch_i32", F, "dtype_dispatch", "x_ptr=*i32, out_ptr=*i32, n=i32, BLOCK=128",
         dict(x_ptr=("randbits", "int32", 1000), out_ptr=("zeros", "int32", 1000), n=1000),
         (cdiv(1000, 128),), ["out_ptr"], tol=0),
]

# --- elementwise/arithmetic.py -----------------------------------------------
F = "elementwise/arithmetic.py"


def binary(id, kernel, tx, ty, to, dx, dy, do, n, block, x, y, **rules):
    return case(id, F, kernel, f"x_ptr=*{tx}, y_ptr=*{ty}, out_ptr=*{to}, n=i32, BLOCK={block}",
                dict(x_ptr=(x[0], dx, n) + tuple(x[1:]), y_ptr=(y[0], dy, n) + tuple(y[1:]),
                     out_ptr=("zeros", do, n), n=n), (cdiv(n, block),), ["out_ptr"], **rules)


CASES += [
    # y in [0.5, 2] keeps r / (y + 3) and x % y tame. r - x*2.5 and the
    # like may contract into FMAs.
    binary("float_ops_f32", "float_ops", "fp32", "fp32", "fp32", "float32", "float32", "float32",
           3000, 256, ("randn",), ("uniform", 0.5, 2.0), tol=1e-6),
    binary("float_ops_f16", "float_ops", "fp16", "fp16", "fp32", "float16", "float16", "float32",
           3000, 256, ("randn",), ("uniform", 0.5, 2.0), tol=1e-3),  # fp16 math: one fp16 rounding
    binary("float_ops_f64", "float_ops", "fp64", "fp64", "fp64", "float64", "float64", "float64",
           1000, 128, ("randn",), ("uniform", 0.5, 2.0), tol=1e-14),  # FMA contraction in fp64
    # Operands keep away from INT_MIN // -1, whose result LLVM leaves undefined.
    binary("int_ops_i32", "int_ops", "i32", "i32", "i32", "int32", "int32", "int32",
           3000, 256, ("randint", -10**9, 10**9), ("randint", -70000, 70000), tol=0),
    binary("int_ops_i64", "int_ops", "i64", "i64", "i64", "int64", "int64", "int64",
           3000, 256, ("randint", -10**15, 10**15), ("randint", -10**6, 10**6), tol=0),
    binary("int_ops_i8_i16", "int_ops", "i8", "i8", "i16", "int8", "int8", "int16",
           3000, 256, ("randint", -127, 128), ("randint", -127, 128), tol=0),
    binary("int_ops_i16", "int_ops", "i16", "i16", "i16", "int16", "int16", "int16",
           3000, 256, ("randint", -32767, 32768), ("randint", -300, 300), tol=0),
    binary("unsigned_ops_u32", "unsigned_ops", "u32", "u32", "u32", "uint32", "uint32", "uint32",
           3000, 256, ("randbits",), ("randbits",), tol=0),
    binary("unsigned_ops_u8", "unsigned_ops", "u8", "u8", "u8", "uint8", "uint8", "uint8",
           3000, 256, ("randbits",), ("randbits",), tol=0),
    binary("unsigned_ops_u16", "unsigned_ops", "u16", "u16", "u16", "uint16", "uint16", "uint16",
           3000, 256, ("randbits",), ("randbits",), tol=0),
    binary("unsigned_ops_u64", "unsigned_ops", "u64", "u64", "u64", "uint64", "uint64", "uint64",
           3000, 256, ("randbits",), ("randbits",), tol=0),
    # ab + bc + half + scaled: b*c may contract with the addition into an FMA.
    case("mixed_promotion", F, "mixed_promotion",
         "a_ptr=*i32, b_ptr=*fp16, c_ptr=*bf16, out_ptr=*fp32, n=i32, BLOCK=128",
         dict(a_ptr=("randint", "int32", 2000, -50, 50), b_ptr=("randn", "float16", 2000),
              c_ptr=("randn", "bfloat16", 2000), out_ptr=("zeros", "float32", 2000), n=2000),
         (cdiv(2000, 128),), ["out_ptr"], tol=1e-6),
]

# --- elementwise/casts.py: every conversion is exact or exactly rounded ------
F = "elementwise/casts.py"
TY = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float64": "fp64", "int64": "i64",
      "int32": "i32", "uint8": "u8", "int8": "i8", "int16": "i16", "uint16": "u16", "uint64": "u64",
      "uint32": "u32", "bool": "i1", "float8_e4m3fn": "fp8e4nv", "float8_e5m2": "fp8e5"}


def convert(id, src, dst, x, n=3000):
    return case(id, F, "convert", f"in_ptr=*{TY[src]}, out_ptr=*{TY[dst]}, n=i32, BLOCK=1024",
                dict(in_ptr=(x[0], src, n) + tuple(x[1:]), out_ptr=("zeros", dst, n), n=n),
                (cdiv(n, 1024),), ["out_ptr"], tol=0)


CASES += [
    convert("convert_f32_f16", "float32", "float16", ("wide",)),       # overflow, subnormals
    convert("convert_f32_bf16", "float32", "bfloat16", ("wide",)),
    convert("convert_f16_f32", "float16", "float32", ("randbits",)),   # every fp16, NaNs too
    convert("convert_f32_f64", "float32", "float64", ("randbits",)),
    convert("convert_f64_i64", "float64", "int64", ("randn", 1e12)),   # in range: no UB
    convert("convert_i32_f32", "int32", "float32", ("randbits",)),
    convert("convert_u8_f32", "uint8", "float32", ("randbits",)),
    convert("convert_i8_i64", "int8", "int64", ("randbits",)),
    convert("convert_i64_i16", "int64", "int16", ("randbits",)),
    convert("convert_u16_u64", "uint16", "uint64", ("randbits",)),
    convert("convert_u32_f32", "uint32", "float32", ("randbits",)),    # >= 2**31 too
    convert("convert_f32_u8", "float32", "uint8", ("uniform", 0.0, 255.9)),  # in range: no UB
    convert("convert_i1_i32", "bool", "int32", ("bits",)),
    convert("convert_f32_i1", "float32", "bool", ("specials",)),       # 0, -0, NaN
    convert("convert_f16_fp8e4nv", "float16", "float8_e4m3fn", ("randn",)),
    convert("convert_f16_fp8e4nv_sat", "float16", "float8_e4m3fn", ("randn", 300.0)),  # past 448
    convert("convert_fp8e5_f32", "float8_e5m2", "float32", ("randbits",)),
    case("convert_to_dtype_f16", F, "convert_to_dtype",
         "in_ptr=*fp32, out_ptr=*fp16, n=i32, DTYPE=tl.float16, BLOCK=512",
         dict(in_ptr=("wide", "float32", 3000), out_ptr=("zeros", "float16", 3000), n=3000),
         (cdiv(3000, 512),), ["out_ptr"], tol=0),
    case("convert_to_dtype_fp8e5", F, "convert_to_dtype",
         "in_ptr=*fp32, out_ptr=*fp8e5, n=i32, DTYPE=tl.float8e5, BLOCK=512",
         dict(in_ptr=("randn", "float32", 3000, 100.0), out_ptr=("zeros", "float8_e5m2", 3000), n=3000),
         (cdiv(3000, 512),), ["out_ptr"], tol=0),
    case("convert_to_dtype_u32", F, "convert_to_dtype",
         "in_ptr=*i32, out_ptr=*u32, n=i32, DTYPE=tl.uint32, BLOCK=512",
         dict(in_ptr=("randbits", "int32", 3000), out_ptr=("zeros", "uint32", 3000), n=3000),
         (cdiv(3000, 512),), ["out_ptr"], tol=0),
    case("bitcasts", F, "bitcasts", "f_ptr=*fp32, i_ptr=*i32, h_ptr=*fp16, s_ptr=*i16, n=i32, BLOCK=256",
         dict(f_ptr=("randbits", "float32", 2000), i_ptr=("zeros", "int32", 2000),
              h_ptr=("randbits", "float16", 2000), s_ptr=("zeros", "int16", 2000), n=2000),
         (cdiv(2000, 256),), ["i_ptr", "s_ptr"], tol=0),
    case("downcast_rounding", F, "downcast_rounding", "in_ptr=*fp32, out_ptr=*fp16, n=i32, BLOCK=256",
         dict(in_ptr=("wide", "float32", 3000), out_ptr=("zeros", "float16", 3000), n=3000),
         (cdiv(3000, 256),), ["out_ptr"], tol=0),
    # fp32 to fp8e5 toward zero: fp16's high byte after cvt.rz, bit for bit
    # (specials: zeros, infinities and NaNs among normal values).
    case("downcast_rounding_fp8e5", F, "downcast_rounding", "in_ptr=*fp32, out_ptr=*fp8e5, n=i32, BLOCK=256",
         dict(in_ptr=("specials", "float32", 3000), out_ptr=("zeros", "float8_e5m2", 3000), n=3000),
         (cdiv(3000, 256),), ["out_ptr"], tol=0),
    case("downcast_rounding_fp8e5_wide", F, "downcast_rounding", "in_ptr=*fp32, out_ptr=*fp8e5, n=i32, BLOCK=256",
         dict(in_ptr=("wide", "float32", 3000), out_ptr=("zeros", "float8_e5m2", 3000), n=3000),
         (cdiv(3000, 256),), ["out_ptr"], tol=0),
]

# --- elementwise/fp8e4b15.py ---------------------------------------------------
# Bitwise: upstream's conversions are exact integer recipes. The inputs cover
# the clamp (|x| > 1.75, inf, NaN), ties of the rounding and subnormals; the
# bytes of a u8 buffer stand for fp8e4b15 values (torch has no such dtype).
F = "elementwise/fp8e4b15.py"
CASES += [
    case("e4b15_round_trip_f32", F, "round_trip", "in_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=1024",
         dict(in_ptr=("specials", "float32", 5000), out_ptr=("zeros", "float32", 5000), n=5000),
         (cdiv(5000, 1024),), ["out_ptr"], tol=0),
    case("e4b15_round_trip_f32_wide", F, "round_trip", "in_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=1024",
         dict(in_ptr=("wide", "float32", 5000), out_ptr=("zeros", "float32", 5000), n=5000),
         (cdiv(5000, 1024),), ["out_ptr"], tol=0),
    case("e4b15_round_trip_f16", F, "round_trip", "in_ptr=*fp16, out_ptr=*fp16, n=i32, BLOCK=1024",
         dict(in_ptr=("randbits", "float16", 5000), out_ptr=("zeros", "float16", 5000), n=5000),
         (cdiv(5000, 1024),), ["out_ptr"], tol=0),
    case("e4b15_round_trip_bf16", F, "round_trip", "in_ptr=*fp16, out_ptr=*bf16, n=i32, BLOCK=512",
         dict(in_ptr=("specials", "float16", 3000), out_ptr=("zeros", "bfloat16", 3000), n=3000),
         (cdiv(3000, 512),), ["out_ptr"], tol=0),
    case("e4b15_encode_f32", F, "encode", "in_ptr=*fp32, out_ptr=*u8, n=i32, BLOCK=1024",
         dict(in_ptr=("uniform", "float32", 5000, -2.5, 2.5), out_ptr=("zeros", "uint8", 5000), n=5000),
         (cdiv(5000, 1024),), ["out_ptr"], tol=0),
    case("e4b15_decode_u8", F, "decode", "in_ptr=*u8, out_ptr=*fp32, n=i32, BLOCK=256",
         dict(in_ptr=("randbits", "uint8", 3000), out_ptr=("zeros", "float32", 3000), n=3000),
         (cdiv(3000, 256),), ["out_ptr"], tol=0),
    case("e4b15_dot", F, "dot_e4b15", "a_ptr=*u8, b_ptr=*u8, c_ptr=*fp32, M=i32, N=i32, K=i32, BM=64, BN=64, BK=32",
         dict(a_ptr=("randbits", "uint8", 200 * 72), b_ptr=("randbits", "uint8", 72 * 130),
              c_ptr=("zeros", "float32", 200 * 130), M=200, N=130, K=72),
         (cdiv(200, 64), cdiv(130, 64)), ["c_ptr"], tol=1e-5),
]

# --- elementwise/integer_ops.py ----------------------------------------------
F = "elementwise/integer_ops.py"
CASES += [
    case("hash_u32", F, "hash_u32", "in_ptr=*u32, out_ptr=*u32, n=i32, BLOCK=1024",
         dict(in_ptr=("randbits", "uint32", 3000), out_ptr=("zeros", "uint32", 3000), n=3000),
         (cdiv(3000, 1024),), ["out_ptr"], tol=0),
    case("mulhi_u32", F, "mulhi_kernel", "a_ptr=*u32, b_ptr=*u32, out_ptr=*u32, n=i32, BLOCK=1024",
         dict(a_ptr=("randbits", "uint32", 3000), b_ptr=("randbits", "uint32", 3000),
              out_ptr=("zeros", "uint32", 3000), n=3000), (cdiv(3000, 1024),), ["out_ptr"], tol=0),
    case("mulhi_i32", F, "mulhi_kernel", "a_ptr=*i32, b_ptr=*i32, out_ptr=*i32, n=i32, BLOCK=1024",
         dict(a_ptr=("randbits", "int32", 3000), b_ptr=("randbits", "int32", 3000),
              out_ptr=("zeros", "int32", 3000), n=3000), (cdiv(3000, 1024),), ["out_ptr"], tol=0),
    case("grouped_order", F, "grouped_order", "pid_ptr=*i32, tile_ptr=*i32, GROUP=3, TILE=8",
         dict(pid_ptr=("zeros", "int32", 2 * 5 * 4), tile_ptr=("zeros", "int32", 64)),
         (5, 4), ["pid_ptr", "tile_ptr"], tol=0),
    case("block_counts", F, "block_counts", "sizes_ptr=*i32, out_ptr=*i32, n=i32, TILE=64, BLOCK=128",
         dict(sizes_ptr=("natural", "int32", 128), out_ptr=("zeros", "int32", 128), n=100),
         (1,), ["out_ptr"], tol=0),
]

# --- elementwise/math_functions.py -------------------------------------------
F = "elementwise/math_functions.py"
CASES += [
    # A sum of exp, exp2, log, log2, sqrt, rsqrt, sin*cos, erf: approximate
    # instructions and libdevice agree only to a few ulps if lowered apart.
    unary("unary_math_f32", F, "unary_math", "float32", 3000, 512, tol=1e-6),
    unary("unary_math_f64", F, "unary_math", "float64", 1000, 256, tol=1e-14),
    # fdiv (div.full, 2 ulp) beside fma, div_rn, sqrt_rn; y in [0.5, 2].
    case("rounding_math", F, "rounding_math",
         "x_ptr=*fp32, y_ptr=*fp32, z_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=512",
         dict(x_ptr=("randn", "float32", 3000), y_ptr=("uniform", "float32", 3000, 0.5, 2.0),
              z_ptr=("randn", "float32", 3000), out_ptr=("zeros", "float32", 3000), n=3000),
         (cdiv(3000, 512),), ["out_ptr"], tol=1e-6),
    # sigmoid's exp and division are approximate; the fp16 output rounds once more.
    case("activations_f32", F, "activations", "x_ptr=*fp32, out_ptr=*fp32, n=i32, lo=fp32, hi=fp32, BLOCK=1024",
         dict(x_ptr=("randn", "float32", 5000, 3.0), out_ptr=("zeros", "float32", 5000), n=5000,
              lo=-0.5, hi=0.75), (cdiv(5000, 1024),), ["out_ptr"], tol=1e-6),
    case("activations_f16", F, "activations", "x_ptr=*fp16, out_ptr=*fp16, n=i32, lo=fp32, hi=fp32, BLOCK=1024",
         dict(x_ptr=("randn", "float16", 5000, 3.0), out_ptr=("zeros", "float16", 5000), n=5000,
              lo=-0.5, hi=0.75), (cdiv(5000, 1024),), ["out_ptr"], tol=1e-3),
]

# --- elementwise/scalars.py --------------------------------------------------
F = "elementwise/scalars.py"
CASES += [
    # Triton types the Python float `shift` as fp32 where the cubin takes
    # fp64: shift = 0.25 is exact in both, and x*scale + shift is one
    # rounding (FMA) or two.
    case("scale_shift_f32", F, "scale_shift",
         "x_ptr=*fp32, out_ptr=*fp32, n=i32, scale=fp32, shift=fp64, BLOCK=256",
         dict(x_ptr=("randn", "float32", 3000), out_ptr=("zeros", "float32", 3000), n=3000,
              scale=1.7, shift=0.25), (cdiv(3000, 256),), ["out_ptr"], tol=1e-6),
    case("scale_shift_f16", F, "scale_shift",
         "x_ptr=*fp16, out_ptr=*fp16, n=i32, scale=fp32, shift=fp32, BLOCK=256",
         dict(x_ptr=("randn", "float16", 3000), out_ptr=("zeros", "float16", 3000), n=3000,
              scale=-2.5, shift=0.125), (cdiv(3000, 256),), ["out_ptr"], tol=1e-3),  # one fp16 rounding
    # Triton types b (> 2**31) as i64, f (>= 2**63) as u64 and g as i1 like
    # the cubin, but c, d, e as i32: their values keep every intermediate in
    # range, so the result is the same either way.
    case("int_scalars", F, "int_scalars",
         "out_ptr=*i64, a=i32, b=i64, c=u32, d=i8, e=i16, f=u64, g=i1, BLOCK=128",
         dict(out_ptr=("zeros", "int64", 128), a=-7, b=2**33 + 5, c=1000, d=-5, e=300,
              f=2**63 + 2**40 + 17, g=True), (1,), ["out_ptr"], tol=0),
    case("literal_types", F, "literal_types", "out_ptr=*i64, n=i32, BLOCK=128",
         dict(out_ptr=("zeros", "int64", 128), n=100), (1,), ["out_ptr"], tol=0),
]

# --- elementwise/where_select.py ---------------------------------------------
F = "elementwise/where_select.py"
CASES += [
    case("select_kernel", F, "select_kernel",
         "c_ptr=*i1, x_ptr=*fp32, y_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=512",
         dict(c_ptr=("bits", "bool", 3000), x_ptr=("randn", "float32", 3000),
              y_ptr=("randn", "float32", 3000), out_ptr=("zeros", "float32", 3000), n=3000),
         (cdiv(3000, 512),), ["out_ptr"], tol=0),
    case("nan_aware", F, "nan_aware", "x_ptr=*fp32, y_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=512",
         dict(x_ptr=("specials", "float32", 3000), y_ptr=("specials", "float32", 3000),
              out_ptr=("zeros", "float32", 3000), n=3000), (cdiv(3000, 512),), ["out_ptr"], tol=0),
    case("other_casting", F, "other_casting",
         "x_ptr=*fp16, out_ptr=*fp16, i_ptr=*u8, iout_ptr=*i32, n=i32, BLOCK=256",
         dict(x_ptr=("randn", "float16", 1000), out_ptr=("zeros", "float16", 1000),
              i_ptr=("randbits", "uint8", 1000), iout_ptr=("zeros", "int32", 1000), n=1000),
         (cdiv(1000, 256),), ["out_ptr", "iout_ptr"], tol=0),
]

# --- language/autotune_heuristics.py: decorators looked through -------------
F = "language/autotune_heuristics.py"
CASES += [
    case("tuned_scale", F, "tuned_scale", "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=4096, num_warps=8",
         dict(x_ptr=("randn", "float32", 10000), out_ptr=("zeros", "float32", 10000), n=10000),
         (cdiv(10000, 4096),), ["out_ptr"], tol=0),
    case("even_blocks_even", F, "even_blocks", "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=256, EVEN=True",
         dict(x_ptr=("randn", "float32", 2560), out_ptr=("zeros", "float32", 2560), n=2560),
         (10,), ["out_ptr"], tol=0),
    case("even_blocks_ragged", F, "even_blocks", "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=256, EVEN=False",
         dict(x_ptr=("randn", "float32", 2500), out_ptr=("zeros", "float32", 2500), n=2500),
         (cdiv(2500, 256),), ["out_ptr"], tol=0),
    # The row mean is a sum in another order; the output is fp16.
    case("tuned_and_heuristic", F, "tuned_and_heuristic",
         "x_ptr=*fp16, out_ptr=*fp16, n_rows=i32, n_cols=i32, BLOCK_N=1024, ROWS=4",
         dict(x_ptr=("randn", "float16", 30 * 1000), out_ptr=("zeros", "float16", 30 * 1000),
              n_rows=30, n_cols=1000), (cdiv(30, 4),), ["out_ptr"], tol=1e-3),
    # BLOCK_N and EVEN come from the heuristics (128 and False; 256 and True).
    case("row_scale_heuristics", F, "row_scale", "x_ptr=*fp32, out_ptr=*fp32, n_rows=i32, N_COLS=100",
         dict(x_ptr=("randn", "float32", 50 * 100), out_ptr=("zeros", "float32", 50 * 100), n_rows=50),
         (50,), ["out_ptr"], tol=0, heuristics=True),
    case("row_scale_even_f16", F, "row_scale", "x_ptr=*fp16, out_ptr=*fp16, n_rows=i32, N_COLS=256",
         dict(x_ptr=("randn", "float16", 20 * 256), out_ptr=("zeros", "float16", 20 * 256), n_rows=20),
         (20,), ["out_ptr"], tol=0, heuristics=True),
    case("row_scale_explicit", F, "row_scale",
         "x_ptr=*fp32, out_ptr=*fp32, n_rows=i32, N_COLS=100, BLOCK_N=512, EVEN=False",
         dict(x_ptr=("randn", "float32", 50 * 100), out_ptr=("zeros", "float32", 50 * 100), n_rows=50),
         (50,), ["out_ptr"], tol=0),
]

# --- language/constructors.py ------------------------------------------------
F = "language/constructors.py"
CASES += [
    case("fill_patterns_f32", F, "fill_patterns", "out_ptr=*fp32, value=fp32, BLOCK=256",
         dict(out_ptr=("zeros", "float32", 256), value=2.5), (1,), ["out_ptr"], tol=0),
    case("fill_patterns_f16", F, "fill_patterns", "out_ptr=*fp16, value=fp32, BLOCK=128",
         dict(out_ptr=("zeros", "float16", 128), value=-1.25), (1,), ["out_ptr"], tol=0),
    case("fill_2d_i32", F, "fill_2d", "out_ptr=*i32, fill=i32, M=16, N=32",
         dict(out_ptr=("zeros", "int32", 16 * 32), fill=7), (1,), ["out_ptr"], tol=0),
    case("fill_2d_u8", F, "fill_2d", "out_ptr=*u8, fill=i32, M=8, N=8",
         dict(out_ptr=("zeros", "uint8", 64), fill=9), (1,), ["out_ptr"], tol=0),
]

# --- language/expressions.py -------------------------------------------------
F = "language/expressions.py"
CASES += [
    # Small integers with NaNs: ties and unordered comparisons.
    case("comparisons_f32", F, "comparisons", "x_ptr=*fp32, y_ptr=*fp32, out_ptr=*i8, n=i32, BLOCK=256",
         dict(x_ptr=("coarse", "float32", 3000), y_ptr=("coarse", "float32", 3000),
              out_ptr=("zeros", "int8", 3000), n=3000), (cdiv(3000, 256),), ["out_ptr"], tol=0),
    case("comparisons_i64", F, "comparisons", "x_ptr=*i64, y_ptr=*i64, out_ptr=*i8, n=i32, BLOCK=256",
         dict(x_ptr=("randint", "int64", 3000, -4, 4), y_ptr=("randint", "int64", 3000, -4, 4),
              out_ptr=("zeros", "int8", 3000), n=3000), (cdiv(3000, 256),), ["out_ptr"], tol=0),
    case("constexpr_builtins_a", F, "constexpr_builtins", "out_ptr=*fp32, A=48, B=100, RATIO=0.25",
         dict(out_ptr=("zeros", "float32", 32)), (1,), ["out_ptr"], tol=0),
    case("constexpr_builtins_b", F, "constexpr_builtins", "out_ptr=*fp32, A=16, B=8, RATIO=2.0",
         dict(out_ptr=("zeros", "float32", 32)), (1,), ["out_ptr"], tol=0),
    case("optional_pointer_none", F, "optional_pointer",
         "x_ptr=*fp32, scale_ptr=None, out_ptr=*fp32, n=i32, BLOCK=128",
         dict(x_ptr=("randn", "float32", 1000), out_ptr=("zeros", "float32", 1000), n=1000),
         (cdiv(1000, 128),), ["out_ptr"], tol=0),
    case("optional_pointer_given", F, "optional_pointer",
         "x_ptr=*fp32, scale_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=128",
         dict(x_ptr=("randn", "float32", 1000), scale_ptr=("randn", "float32", 1),
              out_ptr=("zeros", "float32", 1000), n=1000), (cdiv(1000, 128),), ["out_ptr"], tol=0),
    case("attributes", F, "attributes", "x_ptr=*bf16, out_ptr=*fp32, R=16, C=32",
         dict(x_ptr=("randn", "bfloat16", 16 * 32), out_ptr=("zeros", "float32", 32 * 16)),
         (1,), ["out_ptr"], tol=0),
]

# --- language/functions.py ---------------------------------------------------
F = "language/functions.py"
CASES += [
    # x*scale + shift in the helper: FMA contraction.
    case("call_styles", F, "call_styles", "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=256",
         dict(x_ptr=("randn", "float32", 3000), out_ptr=("zeros", "float32", 3000), n=3000),
         (cdiv(3000, 256),), ["out_ptr"], tol=1e-6),
    case("call_styles_scale3", F, "call_styles", "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=128, SCALE=3",
         dict(x_ptr=("randn", "float32", 3000), out_ptr=("zeros", "float32", 3000), n=3000),
         (cdiv(3000, 128),), ["out_ptr"], tol=1e-6),
    case("divmod_kernel", F, "divmod_kernel",
         "a_ptr=*i32, b_ptr=*i32, q_ptr=*i32, r_ptr=*i32, n=i32, BLOCK=256",
         dict(a_ptr=("randint", "int32", 3000, -10**6, 10**6), b_ptr=("nonzero", "int32", 3000, 1, 100),
              q_ptr=("zeros", "int32", 3000), r_ptr=("zeros", "int32", 3000), n=3000),
         (cdiv(3000, 256),), ["q_ptr", "r_ptr"], tol=0),
    case("apply_fn", F, "apply_fn", "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=256",
         dict(x_ptr=("randn", "float32", 3000), out_ptr=("zeros", "float32", 3000), n=3000),
         (cdiv(3000, 256),), ["out_ptr"], tol=0),
    # A jit function given as the FN constexpr, None, and FN's default.
    case("given_fn_cube", F, "given_fn", "x_ptr=*fp32, out_ptr=*fp32, n=i32, FN=_cube, BLOCK=256",
         dict(x_ptr=("randn", "float32", 3000), out_ptr=("zeros", "float32", 3000), n=3000),
         (cdiv(3000, 256),), ["out_ptr"], tol=0),
    case("given_fn_none", F, "given_fn", "x_ptr=*fp32, out_ptr=*fp32, n=i32, FN=None, BLOCK=256",
         dict(x_ptr=("randn", "float32", 3000), out_ptr=("zeros", "float32", 3000), n=3000),
         (cdiv(3000, 256),), ["out_ptr"], tol=0),
    case("given_fn_default", F, "given_fn", "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=256",
         dict(x_ptr=("randn", "float32", 3000), out_ptr=("zeros", "float32", 3000), n=3000),
         (cdiv(3000, 256),), ["out_ptr"], tol=1e-6),
    case("store_helper_kernel", F, "store_helper_kernel", "out_ptr=*fp32, n=i32, BLOCK=64",
         dict(out_ptr=("full", "float32", 64, -1.0), n=50), (1,), ["out_ptr"], tol=0),
]

# --- language/inline_asm.py --------------------------------------------------
F = "language/inline_asm.py"
CASES += [
    case("shift_left_asm", F, "shift_left_asm", "x_ptr=*u32, out_ptr=*u32, n=i32, BLOCK=512",
         dict(x_ptr=("randbits", "uint32", 3000), out_ptr=("zeros", "uint32", 3000), n=3000),
         (cdiv(3000, 512),), ["out_ptr"], tol=0),
    case("funnel_and_sum", F, "funnel_and_sum", "x_ptr=*u32, y_ptr=*u32, out_ptr=*u32, n=i32, BLOCK=512",
         dict(x_ptr=("randbits", "uint32", 3000), y_ptr=("randbits", "uint32", 3000),
              out_ptr=("zeros", "uint32", 3000), n=3000), (cdiv(3000, 512),), ["out_ptr"], tol=0),
    case("paired_words_asm", F, "paired_words", "x_ptr=*fp32, y_ptr=*i32, out_ptr=*fp16, n=i32, BLOCK=512",
         dict(x_ptr=("randn", "float32", 3000), y_ptr=("randint", "int32", 3000),
              out_ptr=("zeros", "float16", 3000), n=3000), (cdiv(3000, 512),), ["out_ptr"], tol=0),
    case("paired_halves_asm", F, "paired_halves", "x_ptr=*fp16, out_ptr=*fp16, n=i32, BLOCK=512",
         dict(x_ptr=("randn", "float16", 3000), out_ptr=("zeros", "float16", 3000), n=3000),
         (cdiv(3000, 512),), ["out_ptr"], tol=0),
    # n = 2999: the last packed register of four bytes is partly masked.
    case("packed_bytes_asm", F, "packed_bytes", "x_ptr=*u8, out_ptr=*u8, n=i32, BLOCK=1024",
         dict(x_ptr=("randbits", "uint8", 3000), out_ptr=("zeros", "uint8", 3000), n=2999),
         (cdiv(2999, 1024),), ["out_ptr"], tol=0),
]

# --- language/number_operand_types.py -----------------------------------------
# Comparisons with python floats in fp32, as upstream: values at and around
# 0.1 and 0.3 rounded to fp16 / bf16, where rounding the literal instead
# would flip the result.
def near_literals(dtype, n):
    def make(torch, gen):
        dt = getattr(torch, dtype)
        base = torch.tensor([0.1, 0.3], device="cuda").to(dt).view(torch.int16)
        steps = torch.arange(-4, 5, device="cuda", dtype=torch.int16)
        near = (base[:, None] + steps[None, :]).reshape(-1).view(dt)
        rest = (torch.rand(n - near.numel(), generator=gen, device="cuda") * 0.4).to(dt)
        return torch.cat([near, rest])
    return make


F = "language/number_operand_types.py"
CASES += [
    case(f"thresholds_{t}", F, "thresholds", f"x_ptr=*{t}, out_ptr=*i8, BLOCK=256",
         dict(x_ptr=near_literals(dtype, 256), out_ptr=("zeros", "int8", 256)),
         (1,), ["out_ptr"], tol=0)
    for t, dtype in (("fp16", "float16"), ("bf16", "bfloat16"))
] + [
    # Numbers of a higher kind than the block promote their own type (fp16 +
    # True stays fp16, int32 * 1e-300 is fp64); unsigned sums wrap.
    case("weak_numbers", F, "weak_numbers",
         "h_ptr=*fp16, b_ptr=*i1, i8_ptr=*i8, u8_ptr=*u8, i32_ptr=*i32, u32_ptr=*u32, "
         "i64_ptr=*i64, out_ptr=*fp64, BLOCK=64",
         dict(h_ptr=("randn", "float16", 64), b_ptr=("bits", "bool", 64),
              i8_ptr=("small", "int8", 64), u8_ptr=("natural", "uint8", 64),
              i32_ptr=("randint", "int32", 64), u32_ptr=("natural", "uint32", 64),
              i64_ptr=("randint", "int64", 64), out_ptr=("zeros", "float64", 64)),
         (1,), ["out_ptr"], tol=0),
    # Numbers assigned to names (or returned by a jit function) are fp32 /
    # int32 scalars beside fp16 / int8 blocks.
    case("assigned_numbers", F, "assigned_numbers",
         "h_ptr=*fp16, i8_ptr=*i8, out_ptr=*fp32, B=128, BLOCK=128",
         dict(h_ptr=("randn", "float16", 128), i8_ptr=("small", "int8", 128),
              out_ptr=("zeros", "float32", 128)),
         (1,), ["out_ptr"], tol=1e-6),
]

# --- language/module_level.py ------------------------------------------------
F = "language/module_level.py"
CASES += [
    # BLOCK_SIZE is the module's constexpr global, 512.
    case("scaled_copy_f32", F, "scaled_copy", "x_ptr=*fp32, out_ptr=*fp32, n=i32",
         dict(x_ptr=("randn", "float32", 3000), out_ptr=("zeros", "float32", 3000), n=3000),
         (cdiv(3000, 512),), ["out_ptr"], tol=0),
    case("scaled_copy_f16", F, "scaled_copy", "x_ptr=*fp16, out_ptr=*fp16, n=i32",
         dict(x_ptr=("randn", "float16", 3000), out_ptr=("zeros", "float16", 3000), n=3000),
         (cdiv(3000, 512),), ["out_ptr"], tol=0),
    case("clipped_tanh", F, "clipped_tanh", "x_ptr=*fp32, out_ptr=*fp32, n=i32",
         dict(x_ptr=("randn", "float32", 3000), out_ptr=("zeros", "float32", 3000), n=3000),
         (cdiv(3000, 512),), ["out_ptr"], ulp=2),  # libdevice tanh
    case("uses_helpers", F, "uses_helpers", "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=256",
         dict(x_ptr=("randn", "float32", 3000), out_ptr=("zeros", "float32", 3000), n=3000),
         (cdiv(3000, 256),), ["out_ptr"], tol=1e-6),  # a*a + b*b: FMA contraction
]

# --- language/random.py: Philox, as in Triton --------------------------------
F = "language/random.py"
RANDN = dict(g_ptr=dict(ulp=2))  # randn: Box-Muller through log, sqrt, cos approximations
CASES += [
    case("random_fill_i32_seed", F, "random_fill",
         "u_ptr=*fp32, g_ptr=*fp32, i_ptr=*u32, n=i32, seed=i32, BLOCK=1024",
         dict(u_ptr=("zeros", "float32", 5000), g_ptr=("zeros", "float32", 5000),
              i_ptr=("zeros", "uint32", 5000), n=5000, seed=20240611),
         (cdiv(5000, 1024),), ["u_ptr", "g_ptr", "i_ptr"], tol=0, per_output=RANDN),
    # A seed past 2**31, so that Triton types it i64 as the cubin does.
    case("random_fill_i64_seed", F, "random_fill",
         "u_ptr=*fp32, g_ptr=*fp32, i_ptr=*u32, n=i32, seed=i64, BLOCK=512",
         dict(u_ptr=("zeros", "float32", 5000), g_ptr=("zeros", "float32", 5000),
              i_ptr=("zeros", "uint32", 5000), n=5000, seed=2**40 + 12345),
         (cdiv(5000, 512),), ["u_ptr", "g_ptr", "i_ptr"], tol=0, per_output=RANDN),
    # A seed and an offset past 2**31, so that Triton types them i64.
    case("philox_streams", F, "philox_streams", "out_ptr=*u32, n=i32, seed=i64, offset=i64, BLOCK=256",
         dict(out_ptr=("zeros", "uint32", 4 * 1000), n=1000, seed=2**33 + 12345, offset=2**32 + 777),
         (cdiv(1000, 256),), ["out_ptr"], tol=0),
    case("random_4x", F, "random_4x", "out_ptr=*u32, n=i32, SEED=1234, ROUNDS=7, BLOCK=256",
         dict(out_ptr=("zeros", "uint32", 4 * 1000), n=1000), (cdiv(1000, 256),), ["out_ptr"], tol=0),
]

# --- language/histogram.py: tl.histogram, values within the bins (upstream
# leaves others unspecified)
CASES += [
    case("histogram_bins", "language/histogram.py", "bin_counts",
         "x_ptr=*i32, out_ptr=*i32, n=i32, BLOCK=256, BINS=16",
         dict(x_ptr=("randint", "int32", 256, 0, 16), out_ptr=("zeros", "int32", 48), n=200),
         (1,), ["out_ptr"], tol=0),
    # Past 8192 bins x elements: shared-memory atomics.
    case("histogram_bins_atomic", "language/histogram.py", "bin_counts",
         "x_ptr=*i32, out_ptr=*i32, n=i32, BLOCK=1024, BINS=64",
         dict(x_ptr=("randint", "int32", 1024, 0, 64), out_ptr=("zeros", "int32", 3 * 64), n=1000),
         (1,), ["out_ptr"], tol=0),
    # (Triton 3.6 fails to compile tl.histogram of uint8 or int64.)
    case("histogram_bins_256", "language/histogram.py", "bin_counts",
         "x_ptr=*i32, out_ptr=*i32, n=i32, BLOCK=2048, BINS=256",
         dict(x_ptr=("index", "int32", 2048, 256), out_ptr=("zeros", "int32", 3 * 256), n=1500),
         (1,), ["out_ptr"], tol=0),
]

# --- language/gather_thin_dot_wide_rand.py: the third real-world sample's forms
F = "language/gather_thin_dot_wide_rand.py"
CASES += [
    case("gather_lookup", F, "lookup", "table_ptr=*fp16, codes_ptr=*u8, out_ptr=*fp16, K=32",
         dict(table_ptr=("randn", "float16", 16), codes_ptr=("randint", "uint8", 256, 0, 256),
              out_ptr=("zeros", "float16", 256)), (1,), ["out_ptr"], tol=0),
    # Kiln multiplies and sums along K; Triton pads to the tensor cores:
    # sums in another order.
    case("dot_n1_matvec", F, "matvec", "a_ptr=*bf16, x_ptr=*bf16, out_ptr=*fp32, M=64, K=128",
         dict(a_ptr=("randn", "bfloat16", 64 * 128), x_ptr=("randn", "bfloat16", 128),
              out_ptr=("zeros", "float32", 64)), (1,), ["out_ptr"], tol=1e-5),
    # An offset base past 2**32 and a seed past 2**31 (both i64 in Triton).
    case("rand_wide_offsets", F, "rand_wide", "out_ptr=*fp32, n=i32, seed=i64, base=i64, BLOCK=256",
         dict(out_ptr=("zeros", "float32", 1000), n=1000, seed=2**35 + 99, base=2**33 + 5),
         (cdiv(1000, 256),), ["out_ptr"], tol=0),
]

# --- language/tuple_params.py: strides passed as tuples ----------------------
F = "language/tuple_params.py"
CASES += [
    # x is 100 x 70, out its 70 x 100 transpose, both row-major.
    case("tuple_strides_transpose", F, "strided_transpose",
         "x_ptr=*fp32, out_ptr=*fp32, M=i32, N=i32, x_strides=(i32, i32:1), out_strides=(i32, i32), "
         "BM=32, BN=32",
         dict(x_ptr=("randn", "float32", 100 * 70), out_ptr=("zeros", "float32", 70 * 100), M=100, N=70,
              x_strides=(70, 1), out_strides=(100, 1)),
         (cdiv(100, 32), cdiv(70, 32)), ["out_ptr"], tol=0),
]

# --- memory/atomics.py -------------------------------------------------------
F = "memory/atomics.py"


def atomic_rmw(id, t, dt, n, block, vals):
    # atomic_cas is unmasked: counts_ptr needs every lane of the last block.
    size = cdiv(n, block) * block
    return case(id, F, "atomic_rmw", f"counts_ptr=*{t}, vals_ptr=*{t}, out_ptr=*{t}, n=i32, BLOCK={block}",
                dict(counts_ptr=(vals[0], dt, size) + tuple(vals[1:]), vals_ptr=(vals[0], dt, n) + tuple(vals[1:]),
                     out_ptr=("zeros", dt, n), n=n), (cdiv(n, block),), ["counts_ptr", "out_ptr"], tol=0)


CASES += [
    # Each address is touched by one program only: the results are
    # deterministic despite the atomics.
    atomic_rmw("atomic_rmw_i32", "i32", "int32", 1000, 256, ("randint",)),
    atomic_rmw("atomic_rmw_u32", "u32", "uint32", 1000, 256, ("randbits",)),  # unsigned max/min
    atomic_rmw("atomic_rmw_i64", "i64", "int64", 1000, 128, ("randint", -10**12, 10**12)),
    case("atomic_float_f32", F, "atomic_float", "acc_ptr=*fp32, x_ptr=*fp32, n=i32, BLOCK=512",
         dict(acc_ptr=("randn", "float32", 3 * 3000), x_ptr=("randn", "float32", 3000), n=3000),
         (cdiv(3000, 512),), ["acc_ptr"], tol=0),
    case("atomic_float_f64", F, "atomic_float", "acc_ptr=*fp64, x_ptr=*fp64, n=i32, BLOCK=256",
         dict(acc_ptr=("randn", "float64", 3 * 3000), x_ptr=("randn", "float64", 3000), n=3000),
         (cdiv(3000, 256),), ["acc_ptr"], tol=0),
    case("atomic_add_f16", F, "atomic_add_half", "acc_ptr=*fp16, x_ptr=*fp16, n=i32, BLOCK=512",
         dict(acc_ptr=("randn", "float16", 3000), x_ptr=("randn", "float16", 3000), n=3000),
         (cdiv(3000, 512),), ["acc_ptr"], tol=0),
    case("atomic_add_bf16", F, "atomic_add_half", "acc_ptr=*bf16, x_ptr=*bf16, n=i32, BLOCK=512",
         dict(acc_ptr=("randn", "bfloat16", 3000), x_ptr=("randn", "bfloat16", 3000), n=3000),
         (cdiv(3000, 512),), ["acc_ptr"], tol=0),
    # Each address once: the old values are the initial ones, exactly.
    case("atomic_add_old_f32", F, "atomic_add_old",
         "acc_ptr=*fp32:16, x_ptr=*fp32:16, old_ptr=*fp32:16, n=i32:16, BLOCK=512",
         dict(acc_ptr=("randn", "float32", 3008), x_ptr=("randn", "float32", 3008),
              old_ptr=("zeros", "float32", 3008), n=3008),
         (cdiv(3008, 512),), ["acc_ptr", "old_ptr"], tol=0),
    case("atomic_add_old_f16", F, "atomic_add_old",
         "acc_ptr=*fp16:16, x_ptr=*fp16:16, old_ptr=*fp16:16, n=i32:16, BLOCK=512",
         dict(acc_ptr=("randn", "float16", 3008), x_ptr=("randn", "float16", 3008),
              old_ptr=("zeros", "float16", 3008), n=3008),
         (cdiv(3008, 512),), ["acc_ptr", "old_ptr"], tol=0),
    # Three programs race on the flag, but every successful CAS is undone:
    # only the final counts (12 each) and flag (0) are compared.
    case("atomic_orderings", F, "atomic_orderings", "ptr=*i32, flag_ptr=*i32, n=i32, BLOCK=64",
         dict(ptr=("zeros", "int32", 64), flag_ptr=("zeros", "int32", 1), n=50),
         (3,), ["ptr", "flag_ptr"], tol=0),
    # Counts are order-independent.
    case("histogram_atomic", F, "histogram_atomic", "x_ptr=*i32, hist_ptr=*i32, n=i32, BINS=64, BLOCK=1024",
         dict(x_ptr=("natural", "int32", 5000), hist_ptr=("zeros", "int32", 64), n=5000),
         (cdiv(5000, 1024),), ["hist_ptr"], tol=0),
]

# --- memory/block_pointers.py (block_ptr_matmul: tl.dot) ---------------------
F = "memory/block_pointers.py"
CASES += [
    case("tile_copy_block_ptr", F, "tile_copy",
         "src_ptr=*fp32, dst_ptr=*fp32, M=i32, N=i32, stride_m=i32, stride_n=i32, BM=64, BN=64",
         dict(src_ptr=("randn", "float32", 100 * 150), dst_ptr=("zeros", "float32", 100 * 150),
              M=100, N=150, stride_m=150, stride_n=1),
         (cdiv(100, 64), cdiv(150, 64)), ["dst_ptr"], tol=0),
    case("tile_copy_block_ptr_f16", F, "tile_copy",
         "src_ptr=*fp16, dst_ptr=*fp16, M=i32, N=i32, stride_m=i32, stride_n=i32, BM=128, BN=32",
         dict(src_ptr=("randn", "float16", 300 * 64), dst_ptr=("zeros", "float16", 300 * 64),
              M=300, N=50, stride_m=64, stride_n=1),
         (cdiv(300, 128), cdiv(50, 32)), ["dst_ptr"], tol=0),
    # stride_m = 300 fits i32, which Triton then uses: no product overflows.
    case("row_sum_block_ptr", F, "row_sum_block_ptr",
         "x_ptr=*fp32, out_ptr=*fp32, M=i32, N=i32, stride_m=i64, BM=32, BN=128",
         dict(x_ptr=("randn", "float32", 70 * 300), out_ptr=("zeros", "float32", 70),
              M=70, N=300, stride_m=300),
         (cdiv(70, 32),), ["out_ptr"], tol=1e-6),  # sums in another order
]

# --- memory/load_store_options.py --------------------------------------------
F = "memory/load_store_options.py"
CASES += [
    case("cached_copy_f32", F, "cached_copy", "src_ptr=*fp32, dst_ptr=*fp32, n=i32, BLOCK=1024",
         dict(src_ptr=("randn", "float32", 5000), dst_ptr=("zeros", "float32", 5000), n=5000),
         (cdiv(5000, 1024),), ["dst_ptr"], tol=0),
    case("cached_copy_bf16", F, "cached_copy", "src_ptr=*bf16, dst_ptr=*bf16, n=i32, BLOCK=2048",
         dict(src_ptr=("randn", "bfloat16", 5000), dst_ptr=("zeros", "bfloat16", 5000), n=5000),
         (cdiv(5000, 2048),), ["dst_ptr"], tol=0),
    # The flag is set before the launch: the loop exits at once.
    case("volatile_poll", F, "volatile_poll", "flag_ptr=*i32, data_ptr=*fp32, out_ptr=*fp32, BLOCK=128",
         dict(flag_ptr=("full", "int32", 1, 1), data_ptr=("randn", "float32", 128),
              out_ptr=("zeros", "float32", 128)), (2,), ["out_ptr"], tol=0),
    case("scalar_access", F, "scalar_access", "in_ptr=*i64, out_ptr=*i64, index=i32",
         dict(in_ptr=("randbits", "int64", 10), out_ptr=("zeros", "int64", 10), index=7),
         (1,), ["out_ptr"], tol=0),
]

# --- memory/broadcast_loads.py: a per-row scale read through a tile of
# pointers (each run of equal addresses loaded once), rows past M masked.
F = "memory/broadcast_loads.py"
CASES += [
    case(f"row_broadcast_{t}_{bm}x{bn}", F, "row_broadcast",
         f"s_ptr=*{t}{h}, x_ptr=*{t}{h}, y_ptr=*{t}{h}, M=i32, BM={bm}, BN={bn}",
         dict(s_ptr=("randn", dtype, 1000), x_ptr=("randn", dtype, 1000 * bn),
              y_ptr=("zeros", dtype, 1000 * bn), M=1000),
         (cdiv(1000, bm),), ["y_ptr"], tol=0)
    for t, dtype, h, bm, bn in (("fp32", "float32", ":16", 64, 64), ("fp16", "float16", "", 32, 128))
]

# --- memory/comparison_masks.py: masks comparing contiguous offsets with a
# bound, constant over runs only where the comparison cannot flip inside one.
# Data movement and small-integer weights: bitwise.
F = "memory/comparison_masks.py"
CASES += [
    case("shifted_by_one", F, "shifted_by_one", "x_ptr=*fp32:16, y_ptr=*fp32:16, n=i32:16, BLOCK=1024",
         dict(x_ptr=("randn", "float32", 4096), y_ptr=("zeros", "float32", 4096), n=4096),
         (4,), ["y_ptr"], tol=0),
    # c = 2048: inside the second block, where each comparison flips.
    case("compared_masks", F, "compared_masks",
         "x_ptr=*fp32:16, y_ptr=*fp32:16, n=i32:16, c=i32:16, BLOCK=1024",
         dict(x_ptr=("randn", "float32", 4096), y_ptr=("zeros", "float32", 4096), n=4096, c=2048),
         (4,), ["y_ptr"], tol=0),
]

# --- memory/strided_access.py ------------------------------------------------
F = "memory/strided_access.py"
BIG = 2**31 + 100  # row_len: > 2**31 elements, so Triton types it i64 too
CASES += [
    case("transpose_f32", F, "transpose_tile",
         "src_ptr=*fp32, dst_ptr=*fp32, M=i32, N=i32, src_stride=i32, dst_stride=i32, BM=32, BN=32",
         dict(src_ptr=("randn", "float32", 70 * 45), dst_ptr=("zeros", "float32", 45 * 70),
              M=70, N=45, src_stride=45, dst_stride=70),
         (cdiv(70, 32), cdiv(45, 32)), ["dst_ptr"], tol=0),
    case("transpose_f16", F, "transpose_tile",
         "src_ptr=*fp16, dst_ptr=*fp16, M=i32, N=i32, src_stride=i32, dst_stride=i32, BM=64, BN=64",
         dict(src_ptr=("randn", "float16", 130 * 100), dst_ptr=("zeros", "float16", 100 * 130),
              M=130, N=100, src_stride=100, dst_stride=130),
         (cdiv(130, 64), cdiv(100, 64)), ["dst_ptr"], tol=0),
    # 200 x 150 column-major (stride 208 between columns) to row-major
    # (stride 160): edges masked on both sides.
    case("column_major_read", F, "column_major_read",
         "src_ptr=*fp32:16, dst_ptr=*fp32:16, M=i32, N=i32, src_stride=i32:16, dst_stride=i32:16, BM=64, BN=64",
         dict(src_ptr=("randn", "float32", 208 * 150), dst_ptr=("zeros", "float32", 200 * 160),
              M=200, N=150, src_stride=208, dst_stride=160),
         (cdiv(200, 64), cdiv(150, 64)), ["dst_ptr"], tol=0),
    case("column_major_write", F, "column_major_write",
         "src_ptr=*bf16:16, dst_ptr=*bf16:16, M=i32, N=i32, src_stride=i32:16, dst_stride=i32:16, BM=128, BN=32",
         dict(src_ptr=("randn", "bfloat16", 300 * 112), dst_ptr=("zeros", "bfloat16", 304 * 100),
              M=300, N=100, src_stride=112, dst_stride=304),
         (cdiv(300, 128), cdiv(100, 32)), ["dst_ptr"], tol=0),
    # 50 indices into a 300-row table of D = 60 (< BLOCK_D) columns.
    case("gather_rows", F, "gather_rows",
         "table_ptr=*fp32, idx_ptr=*i64, out_ptr=*fp32, n_idx=i32, D=i32, BLOCK_I=16, BLOCK_D=64",
         dict(table_ptr=("randn", "float32", 300 * 60), idx_ptr=("index", "int64", 50, 300),
              out_ptr=("zeros", "float32", 50 * 60), n_idx=50, D=60),
         (cdiv(50, 16),), ["out_ptr"], tol=0),
    case("hinted_copy", F, "hinted_copy", "src_ptr=*fp32, dst_ptr=*fp32, n=i32, BLOCK=1024",
         dict(src_ptr=("randn", "float32", 5000), dst_ptr=("zeros", "float32", 5000), n=5000),
         (cdiv(5000, 1024),), ["dst_ptr"], tol=0),
    # Offsets past 2**31 elements: about 26 GB of GPU memory (src, and dst
    # once per compiler). Triton specializes row = 1 as a constant.
    case("big_offsets", F, "big_offsets", "src_ptr=*fp32, dst_ptr=*fp32, row=i64, row_len=i64, BLOCK=256",
         dict(src_ptr=("window", "float32", BIG + 256, BIG, 256), dst_ptr=("zeros", "float32", BIG + 256),
              row=1, row_len=BIG), (1,), ["dst_ptr"], tol=0),
]

# --- probes/construct_probes.py ----------------------------------------------
F = "probes/construct_probes.py"


def probe(id, sig, args, outputs, grid=(1,), **rules):
    return case(id, F, id, sig, args, grid, outputs, **rules)


CASES += [
    probe("probe_outer", "x_ptr=*fp32, out_ptr=*fp32, BLOCK=32",
          dict(x_ptr=("randn", "float32", 32), out_ptr=("zeros", "float32", 32 * 32)), ["out_ptr"], tol=0),
    probe("probe_zeros", "out_ptr=*fp32, BLOCK=128",
          dict(out_ptr=("full", "float32", 128, 3.0)), ["out_ptr"], tol=0),
    probe("probe_zeros_like", "x_ptr=*fp32, out_ptr=*fp32, BLOCK=128",
          dict(x_ptr=("randn", "float32", 128), out_ptr=("full", "float32", 128, 3.0)), ["out_ptr"], tol=0),
    probe("probe_full", "out_ptr=*i32, value=i32, BLOCK=128",
          dict(out_ptr=("zeros", "int32", 128), value=-42), ["out_ptr"], tol=0),
    # The store is unmasked: the lanes past n hold the `other` value, inf.
    probe("probe_inf_other", "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=128",
          dict(x_ptr=("randn", "float32", 128), out_ptr=("zeros", "float32", 128), n=100), ["out_ptr"], tol=0),
    probe("probe_num_programs", "out_ptr=*i32", dict(out_ptr=("zeros", "int32", 7)), ["out_ptr"],
          grid=(7,), tol=0),
    probe("probe_shape_len", "x_ptr=*fp32, out_ptr=*fp32, BLOCK=64",
          dict(x_ptr=("randn", "float32", 64), out_ptr=("zeros", "float32", 64)), ["out_ptr"], tol=0),
    probe("probe_dtype", "x_ptr=*fp16, out_ptr=*fp16, BLOCK=64",
          dict(x_ptr=("randn", "float16", 64), out_ptr=("zeros", "float16", 64)), ["out_ptr"], tol=0),
    probe("probe_transpose", "x_ptr=*fp32, out_ptr=*fp32, BLOCK=16",
          dict(x_ptr=("randn", "float32", 256), out_ptr=("zeros", "float32", 256)), ["out_ptr"], tol=0),
    case("probe_constexpr_compare_double", F, "probe_constexpr_compare",
         "x_ptr=*fp32, out_ptr=*fp32, BLOCK=128, MODE='double'",
         dict(x_ptr=("randn", "float32", 128), out_ptr=("zeros", "float32", 128)), (1,), ["out_ptr"], tol=0),
    case("probe_constexpr_compare_copy", F, "probe_constexpr_compare",
         "x_ptr=*fp32, out_ptr=*fp32, BLOCK=64, MODE='copy'",
         dict(x_ptr=("randn", "float32", 64), out_ptr=("zeros", "float32", 64)), (1,), ["out_ptr"], tol=0),
    probe("probe_ternary_constexpr", "x_ptr=*fp32, out_ptr=*fp32, BLOCK=64, NEG=True",
          dict(x_ptr=("randn", "float32", 64), out_ptr=("zeros", "float32", 64)), ["out_ptr"], tol=0),
    # Each lane adds 16 values in the same order on both sides.
    probe("probe_for_range", "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=64",
          dict(x_ptr=("randn", "float32", 1000), out_ptr=("zeros", "float32", 64), n=1000), ["out_ptr"], tol=0),
    probe("probe_for_constexpr_range", "out_ptr=*fp32, BLOCK=64, STEPS=3",
          dict(out_ptr=("zeros", "float32", 64)), ["out_ptr"], tol=0),
    probe("probe_static_range", "out_ptr=*fp32, BLOCK=64, STEPS=3",
          dict(out_ptr=("zeros", "float32", 64)), ["out_ptr"], tol=0),
    probe("probe_while", "out_ptr=*i32, n=i32", dict(out_ptr=("zeros", "int32", 1), n=10), ["out_ptr"], tol=0),
    probe("probe_runtime_if", "out_ptr=*fp32, flag=i32, BLOCK=64",
          dict(out_ptr=("zeros", "float32", 64), flag=1), ["out_ptr"], tol=0),
    probe("probe_runtime_if_else", "out_ptr=*fp32, flag=i32, BLOCK=64",
          dict(out_ptr=("full", "float32", 64, 5.0), flag=0), ["out_ptr"], tol=0),
    probe("probe_pass", "out_ptr=*fp32, BLOCK=64", dict(out_ptr=("zeros", "float32", 64)), ["out_ptr"], tol=0),
    # These three write nothing: x must come back intact and the launch must
    # not fail (no NaN for the assert, x >= 0 for the device_assert).
    probe("probe_assert", "x_ptr=*fp32, BLOCK=64", dict(x_ptr=("randn", "float32", 64)), ["x_ptr"], tol=0),
    probe("probe_device_assert", "x_ptr=*fp32, BLOCK=64",
          dict(x_ptr=("uniform", "float32", 64, 0.0, 4.0)), ["x_ptr"], tol=0),
    probe("probe_device_print", "x_ptr=*fp32, BLOCK=64", dict(x_ptr=("randn", "float32", 64)), ["x_ptr"], tol=0),
    probe("probe_debug_barrier", "out_ptr=*fp32, BLOCK=64",
          dict(out_ptr=("full", "float32", 64, 7.0)), ["out_ptr"], tol=0),
    probe("probe_cdiv", "out_ptr=*i32, n=i32, BLOCK=64", dict(out_ptr=("zeros", "int32", 64), n=1000),
          ["out_ptr"], tol=0),
    probe("probe_sum", "x_ptr=*fp32, out_ptr=*fp32, BLOCK=128",
          dict(x_ptr=("randn", "float32", 128), out_ptr=("zeros", "float32", 1)), ["out_ptr"],
          tol=1e-6),  # a sum in another order
    probe("probe_max", "x_ptr=*fp32, out_ptr=*fp32, BLOCK=128",
          dict(x_ptr=("randn", "float32", 128), out_ptr=("zeros", "float32", 1)), ["out_ptr"], tol=0),
    probe("probe_min", "x_ptr=*i32, out_ptr=*i32, BLOCK=128",
          dict(x_ptr=("randint", "int32", 128), out_ptr=("zeros", "int32", 1)), ["out_ptr"], tol=0),
    # Five programs add 1.0 to each element: exact in any order.
    probe("probe_atomic_add", "out_ptr=*fp32, BLOCK=64", dict(out_ptr=("zeros", "float32", 64)), ["out_ptr"],
          grid=(5,), tol=0),
    probe("probe_bitcast", "x_ptr=*fp32, out_ptr=*i32, BLOCK=64",
          dict(x_ptr=("randbits", "float32", 64), out_ptr=("zeros", "int32", 64)), ["out_ptr"], tol=0),
    # Stores x back into x_ptr.
    probe("probe_is_none", "x_ptr=*fp32, bias_ptr=None, BLOCK=64",
          dict(x_ptr=("randn", "float32", 64)), ["x_ptr"], tol=0),
    probe("probe_runtime_ternary", "out_ptr=*fp32, flag=i32", dict(out_ptr=("zeros", "float32", 1), flag=1),
          ["out_ptr"], tol=0),
    probe("probe_runtime_bool_ops", "out_ptr=*i32, a=i32, b=i32",
          dict(out_ptr=("full", "int32", 1, 9), a=3, b=-2), ["out_ptr"], tol=0),
]

# --- probes/libdevice_cuda.py ------------------------------------------------
F = "probes/libdevice_cuda.py"
CASES += [
    # atan2 + cbrt from libdevice: a few ulps of each, added.
    unary("probe_cuda_libdevice_f32", F, "probe_cuda_libdevice", "float32", 1000, 128, tol=1e-6),
    unary("probe_cuda_libdevice_f64", F, "probe_cuda_libdevice", "float64", 1000, 128, tol=1e-14),
]

# --- probes/math_probes.py: one function each --------------------------------
F = "probes/math_probes.py"
POS = ("uniform", 0.01, 50.0)
CASES += [
    # Approximate instructions (ex2/lg2/rsqrt .approx) or libdevice: a couple
    # of ulps if the two compilers lower differently; exact ones bitwise.
    unary("probe_exp", F, "probe_exp", "float32", 1000, 128, ulp=2),
    unary("probe_exp2", F, "probe_exp2", "float32", 1000, 128, ulp=2),
    unary("probe_log", F, "probe_log", "float32", 1000, 128, x=POS, ulp=2),
    unary("probe_log2", F, "probe_log2", "float32", 1000, 128, x=POS, ulp=2),
    unary("probe_sqrt", F, "probe_sqrt", "float32", 1000, 128, x=POS, ulp=1),
    unary("probe_sqrt_rn", F, "probe_sqrt_rn", "float32", 1000, 128, x=POS, tol=0),
    unary("probe_rsqrt", F, "probe_rsqrt", "float32", 1000, 128, x=POS, ulp=2),
    # sin.approx/cos.approx bound the absolute error, not the relative one.
    unary("probe_sin", F, "probe_sin", "float32", 1000, 128, x=("randn", 3.0), tol=1e-6),
    unary("probe_cos", F, "probe_cos", "float32", 1000, 128, x=("randn", 3.0), tol=1e-6),
    unary("probe_sigmoid", F, "probe_sigmoid", "float32", 1000, 128, x=("randn", 4.0), ulp=4),
    unary("probe_erf", F, "probe_erf", "float32", 1000, 128, ulp=2),
    unary("probe_floor", F, "probe_floor", "float32", 1000, 128, x=("randn", 10.0), tol=0),
    unary("probe_ceil", F, "probe_ceil", "float32", 1000, 128, x=("randn", 10.0), tol=0),
    unary("probe_abs", F, "probe_abs", "float32", 1000, 128, x=("specials",), tol=0),
    unary("probe_maximum", F, "probe_maximum", "float32", 1000, 128, tol=0),
    unary("probe_minimum", F, "probe_minimum", "float32", 1000, 128, tol=0),
    unary("probe_clamp", F, "probe_clamp", "float32", 1000, 128, x=("randn", 2.0), tol=0),
    unary("probe_fma", F, "probe_fma", "float32", 1000, 128, tol=0),
    unary("probe_fdiv", F, "probe_fdiv", "float32", 1000, 128, x=POS, ulp=2),  # div.full: 2 ulp
    unary("probe_div_rn", F, "probe_div_rn", "float32", 1000, 128, x=POS, tol=0),
    unary("probe_where", F, "probe_where", "float32", 1000, 128, tol=0),
    unary("probe_libdevice", F, "probe_libdevice", "float32", 1000, 128, ulp=2),  # libdevice tanh
]

# --- reductions/argminmax.py -------------------------------------------------
F = "reductions/argminmax.py"


def tile_extremes_input(torch, gen):
    # Every column's minimum in row 5: the kernel's BN stores to out[r]
    # then all hold the same value (argmax of row r + 5), so the result
    # does not depend on which store lands last.
    x = torch.randn(32, 32, generator=gen, device="cuda")
    x[5] -= 100.0
    return x.reshape(-1)


CASES += [
    case("row_argmax_f32", F, "row_argmax", "x_ptr=*fp32, idx_ptr=*i32, val_ptr=*fp32, N=i32, BLOCK=1024",
         dict(x_ptr=("randn", "float32", 8 * 1000), idx_ptr=("zeros", "int32", 8),
              val_ptr=("zeros", "float32", 8), N=1000), (8,), ["idx_ptr", "val_ptr"], tol=0),
    # fp16 has ties: argmax takes the leftmost.
    case("row_argmax_f16", F, "row_argmax", "x_ptr=*fp16, idx_ptr=*i32, val_ptr=*fp16, N=i32, BLOCK=512",
         dict(x_ptr=("ties", "float16", 12 * 500), idx_ptr=("zeros", "int32", 12),
              val_ptr=("zeros", "float16", 12), N=500), (12,), ["idx_ptr", "val_ptr"], tol=0),
    case("row_argmin_i32", F, "row_argmin", "x_ptr=*i32, idx_ptr=*i64, val_ptr=*i32, N=i32, BLOCK=256",
         dict(x_ptr=("randint", "int32", 10 * 200, -20, 20), idx_ptr=("zeros", "int64", 10),
              val_ptr=("zeros", "int32", 10), N=200), (10,), ["idx_ptr", "val_ptr"], tol=0),
    # 32 warps along the row: the warps' partials are combined with lane
    # shuffles, and the leftmost of the ties must still win.
    case("row_argmax_f16_32warps", F, "row_argmax",
         "x_ptr=*fp16, idx_ptr=*i32, val_ptr=*fp16, N=i32, BLOCK=4096, num_warps=32",
         dict(x_ptr=("ties", "float16", 6 * 4000), idx_ptr=("zeros", "int32", 6),
              val_ptr=("zeros", "float16", 6), N=4000), (6,), ["idx_ptr", "val_ptr"], tol=0),
    case("tile_extremes", F, "tile_extremes", "x_ptr=*fp32, out_ptr=*i32, BM=32, BN=32",
         dict(x_ptr=tile_extremes_input, out_ptr=("zeros", "int32", 32)), (1,), ["out_ptr"], tol=0),
]

# --- reductions/custom_reduce.py ---------------------------------------------
F = "reductions/custom_reduce.py"
CASES += [
    # 200 factors in [0.95, 1.05] multiplied in another order: up to one
    # rounding (2**-24) per factor.
    case("product_reduce", F, "product_reduce", "x_ptr=*fp32, out_ptr=*fp32, N=i32, BLOCK=256",
         dict(x_ptr=("uniform", "float32", 20 * 200, 0.95, 1.05), out_ptr=("zeros", "float32", 20), N=200),
         (20,), ["out_ptr"], tol=1.2e-5),
    case("abs_argmax_reduce", F, "abs_argmax_reduce",
         "x_ptr=*fp32, out_val_ptr=*fp32, out_idx_ptr=*i32, N=i32, BLOCK=512",
         dict(x_ptr=("ties", "float32", 16 * 400), out_val_ptr=("zeros", "float32", 16),
              out_idx_ptr=("zeros", "int32", 16), N=400),
         (16,), ["out_val_ptr", "out_idx_ptr"], tol=0, seed=7),
    # A user's combine (value and index, ties to the left) over 32 warps.
    case("abs_argmax_reduce_32warps", F, "abs_argmax_reduce",
         "x_ptr=*fp32, out_val_ptr=*fp32, out_idx_ptr=*i32, N=i32, BLOCK=2048, num_warps=32",
         dict(x_ptr=("ties", "float32", 5 * 2000), out_val_ptr=("zeros", "float32", 5),
              out_idx_ptr=("zeros", "int32", 5), N=2000),
         (5,), ["out_val_ptr", "out_idx_ptr"], tol=0, seed=11),
    # xor is order-independent, atomics included.
    case("checksum_i32", F, "checksum", "x_ptr=*i32, out_ptr=*i32, n=i32, BLOCK=1024",
         dict(x_ptr=("randbits", "int32", 5000), out_ptr=("zeros", "int32", 1), n=5000),
         (cdiv(5000, 1024),), ["out_ptr"], tol=0),
    case("checksum_u64", F, "checksum", "x_ptr=*u64, out_ptr=*u64, n=i32, BLOCK=256",
         dict(x_ptr=("randbits", "uint64", 1000), out_ptr=("zeros", "uint64", 1), n=1000),
         (cdiv(1000, 256),), ["out_ptr"], tol=0),
]

# --- reductions/row_reductions.py --------------------------------------------
F = "reductions/row_reductions.py"
CASES += [
    case("row_stats_f32", F, "row_stats",
         "x_ptr=*fp32, sum_ptr=*fp32, max_ptr=*fp32, min_ptr=*fp32, M=i32, N=i32, stride=i32, BM=16, BN=128",
         dict(x_ptr=("randn", "float32", 100 * 100), sum_ptr=("zeros", "float32", 100),
              max_ptr=("zeros", "float32", 100), min_ptr=("zeros", "float32", 100),
              M=100, N=100, stride=100),
         (cdiv(100, 16),), ["sum_ptr", "max_ptr", "min_ptr"], tol=1e-6),  # sums in another order
    # Several rows a program, 32 warps along each: one shuffled combine per
    # row a thread holds.
    case("row_stats_f32_32warps", F, "row_stats",
         "x_ptr=*fp32, sum_ptr=*fp32, max_ptr=*fp32, min_ptr=*fp32, M=i32, N=i32, stride=i32, BM=4, "
         "BN=4096, num_warps=32",
         dict(x_ptr=("randn", "float32", 30 * 4000), sum_ptr=("zeros", "float32", 30),
              max_ptr=("zeros", "float32", 30), min_ptr=("zeros", "float32", 30),
              M=30, N=4000, stride=4000),
         (cdiv(30, 4),), ["sum_ptr", "max_ptr", "min_ptr"], tol=1e-6),  # sums in another order
    case("row_stats_i32", F, "row_stats",
         "x_ptr=*i32, sum_ptr=*i32, max_ptr=*i32, min_ptr=*i32, M=i32, N=i32, stride=i32, BM=8, BN=256",
         dict(x_ptr=("randint", "int32", 37 * 200), sum_ptr=("zeros", "int32", 37),
              max_ptr=("zeros", "int32", 37), min_ptr=("zeros", "int32", 37),
              M=37, N=200, stride=200),
         (cdiv(37, 8),), ["sum_ptr", "max_ptr", "min_ptr"], tol=0),
    case("row_stats_f16", F, "row_stats",
         "x_ptr=*fp16, sum_ptr=*fp32, max_ptr=*fp16, min_ptr=*fp16, M=i32, N=i32, stride=i32, BM=32, BN=64",
         dict(x_ptr=("randn", "float16", 70 * 64), sum_ptr=("zeros", "float32", 70),
              max_ptr=("zeros", "float16", 70), min_ptr=("zeros", "float16", 70),
              M=70, N=60, stride=64),
         # tl.sum of fp16 adds in fp16 (as upstream does): a few fp16 ulps
         # (2^-10 each) apart when the order of additions differs.
         (cdiv(70, 32),), ["sum_ptr", "max_ptr", "min_ptr"], tol=4e-3),
    case("row_softmax_f32", F, "row_softmax",
         "x_ptr=*fp32, out_ptr=*fp32, M=i32, N=i32, stride=i32, BM=16, BN=128",
         dict(x_ptr=("randn", "float32", 100 * 120), out_ptr=("zeros", "float32", 100 * 120),
              M=100, N=120, stride=120),
         (cdiv(100, 16),), ["out_ptr"], tol=1e-6),  # sums in another order, approximate exp
    # Every int32 bit pattern (INT_MIN included: -INT_MIN wraps on both sides).
    case("negated_extrema", F, "negated_extrema",
         "x_ptr=*i32, max_ptr=*i32, min_ptr=*i32, K=i32, stride=i32, BK=64, BN=32",
         dict(x_ptr=("randbits", "int32", 32 * 35), max_ptr=("zeros", "int32", 32),
              min_ptr=("zeros", "int32", 32), K=32, stride=35),
         (1,), ["max_ptr", "min_ptr"], tol=0),
    case("column_sum_keepdims", F, "column_sum_keepdims", "x_ptr=*fp32, out_ptr=*fp32, M=i32, N=i32, BM=64, BN=32",
         dict(x_ptr=("randn", "float32", 50 * 70), out_ptr=("zeros", "float32", 50 * 70), M=50, N=70),
         (cdiv(70, 32),), ["out_ptr"], tol=1e-6),  # sums in another order
    # Five programs' sums meet in one float atomic, in any order.
    case("block_total", F, "block_total", "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=1024",
         dict(x_ptr=("randn", "float32", 5000), out_ptr=("zeros", "float32", 1), n=5000),
         (cdiv(5000, 1024),), ["out_ptr"], tol=1e-5),
]

# --- reductions/scans.py -----------------------------------------------------
F = "reductions/scans.py"
CASES += [
    case("prefix_sums_f32", F, "prefix_sums", "x_ptr=*fp32, sum_ptr=*fp32, prod_ptr=*fp32, n=i32, BLOCK=1024",
         dict(x_ptr=("uniform", "float32", 1000), sum_ptr=("zeros", "float32", 1000),
              prod_ptr=("zeros", "float32", 1000), n=1000),
         (1,), ["sum_ptr", "prod_ptr"], tol=1e-5),  # scans associate in another order
    case("prefix_sums_i32", F, "prefix_sums", "x_ptr=*i32, sum_ptr=*i32, prod_ptr=*i32, n=i32, BLOCK=256",
         dict(x_ptr=("small", "int32", 200), sum_ptr=("zeros", "int32", 200),
              prod_ptr=("zeros", "int32", 200), n=200),
         (1,), ["sum_ptr", "prod_ptr"], tol=0),
    # 2-D scans along either axis: lanes, warps and register repetitions
    # along the scanned axis in turn, depending on the tile's shape.
    case("tile_scans", F, "tile_scans", "x_ptr=*fp32, out_ptr=*fp32, BM=16, BN=64",
         dict(x_ptr=("uniform", "float32", 16 * 64), out_ptr=("zeros", "float32", 16 * 64)),
         (1,), ["out_ptr"], tol=1e-5),  # scans associate in another order
    case("tile_scans_tall", F, "tile_scans", "x_ptr=*fp32, out_ptr=*fp32, BM=128, BN=8",
         dict(x_ptr=("uniform", "float32", 128 * 8), out_ptr=("zeros", "float32", 128 * 8)),
         (1,), ["out_ptr"], tol=1e-5),
    case("tile_scans_wide", F, "tile_scans", "x_ptr=*fp32, out_ptr=*fp32, BM=2, BN=1024, num_warps=8",
         dict(x_ptr=("uniform", "float32", 2 * 1024), out_ptr=("zeros", "float32", 2 * 1024)),
         (1,), ["out_ptr"], tol=1e-5),
    # bf16 tiles scanned down their columns into fp32, 3 programs.
    *[case(f"widened_cumsum_{name}", F, "widened_cumsum",
           f"x_ptr=*bf16:16, out_ptr=*fp32:16, REVERSE={rev}, BM=64, BN=64{extra}",
           dict(x_ptr=("uniform", "bfloat16", 3 * 64 * 64),
                out_ptr=("zeros", "float32", 3 * 64 * 64)),
           (3,), ["out_ptr"], tol=1e-5)  # scans associate in another order
      for name, rev, extra in [("forward", False, ""), ("reverse_w8", True, ", num_warps=8")]],
    case("tile_int_cumsum", F, "tile_int_cumsum", "x_ptr=*i32, out_ptr=*i32, BM=64, BN=32, num_warps=8",
         dict(x_ptr=("randint", "int32", 64 * 32), out_ptr=("zeros", "int32", 64 * 32)),
         (1,), ["out_ptr"], tol=0),
    case("tile_running_argmax_rows", F, "tile_running_argmax",
         "x_ptr=*fp32, val_ptr=*fp32, idx_ptr=*i32, AXIS=0, BM=64, BN=16",
         dict(x_ptr=("randn", "float32", 64 * 16), val_ptr=("zeros", "float32", 64 * 16),
              idx_ptr=("zeros", "int32", 64 * 16)),
         (1,), ["val_ptr", "idx_ptr"], tol=0),
    case("tile_running_argmax_cols", F, "tile_running_argmax",
         "x_ptr=*fp32, val_ptr=*fp32, idx_ptr=*i32, AXIS=1, BM=8, BN=256",
         dict(x_ptr=("randn", "float32", 8 * 256), val_ptr=("zeros", "float32", 8 * 256),
              idx_ptr=("zeros", "int32", 8 * 256)),
         (1,), ["val_ptr", "idx_ptr"], tol=0),
    # The scan reads a blocked copy of the dot's result, the row sum the same
    # copy, the carried row sum moves to it (kiln-assign-layouts). Inputs of
    # about 1: sums of 64 products, then prefixes of 32 and 32-row sums.
    case("scan_of_dot", F, "scan_of_dot",
         "a_ptr=*bf16:16, b_ptr=*bf16:16, out_ptr=*fp32:16, n=i32:16, BM=32, BN=32, BK=64",
         dict(a_ptr=("uniform", "bfloat16", 32 * 64, -1.0, 1.0),
              b_ptr=("uniform", "bfloat16", 64 * 256, -1.0, 1.0),
              out_ptr=("zeros", "float32", 256), n=256),
         (1,), ["out_ptr"], tol=1e-3),
    case("running_max", F, "running_max", "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=512",
         dict(x_ptr=("randn", "float32", 500), out_ptr=("zeros", "float32", 500), n=500),
         (1,), ["out_ptr"], tol=0),
    case("segmented_sum", F, "segmented_sum", "x_ptr=*fp32, flag_ptr=*i32, out_ptr=*fp32, n=i32, BLOCK=512",
         dict(x_ptr=("randn", "float32", 500), flag_ptr=("bits", "int32", 500),
              out_ptr=("zeros", "float32", 500), n=500),
         (1,), ["out_ptr"], tol=1e-5),  # scans associate in another order
]

# --- reductions/sort.py ------------------------------------------------------
F = "reductions/sort.py"
CASES += [
    case("sort_rows_f32", F, "sort_rows", "x_ptr=*fp32, out_ptr=*fp32, DESCENDING=0, N=128",
         dict(x_ptr=("randn", "float32", 4 * 128), out_ptr=("zeros", "float32", 4 * 128)),
         (4,), ["out_ptr"], tol=0),
    case("sort_rows_i32", F, "sort_rows", "x_ptr=*i32, out_ptr=*i32, DESCENDING=1, N=256",
         dict(x_ptr=("randint", "int32", 4 * 256), out_ptr=("zeros", "int32", 4 * 256)),
         (4,), ["out_ptr"], tol=0),
    case("sort_rows_f16", F, "sort_rows", "x_ptr=*fp16, out_ptr=*fp16, DESCENDING=True, N=64",
         dict(x_ptr=("randn", "float16", 6 * 64), out_ptr=("zeros", "float16", 6 * 64)),
         (6,), ["out_ptr"], tol=0),
    # tl.topk: the k largest of each row, descending (k = N: a sort). k = 1
    # fails upstream (its last reshape of a scalar).
    case("topk_rows_f32", F, "topk_rows", "x_ptr=*fp32, out_ptr=*fp32, N=128, K=8",
         dict(x_ptr=("randn", "float32", 5 * 128), out_ptr=("zeros", "float32", 5 * 8)),
         (5,), ["out_ptr"], tol=0),
    case("topk_rows_i32", F, "topk_rows", "x_ptr=*i32, out_ptr=*i32, N=64, K=64",
         dict(x_ptr=("randint", "int32", 3 * 64), out_ptr=("zeros", "int32", 3 * 64)),
         (3,), ["out_ptr"], tol=0),
    case("topk_rows_f16", F, "topk_rows", "x_ptr=*fp16, out_ptr=*fp16, N=256, K=2",
         dict(x_ptr=("randn", "float16", 4 * 256), out_ptr=("zeros", "float16", 4 * 2)),
         (4,), ["out_ptr"], tol=0),
    # Values past 2**31: an unsigned comparison.
    case("sort_tile_u32", F, "sort_tile", "x_ptr=*u32, out_ptr=*u32, BM=8, BN=32",
         dict(x_ptr=("randbits", "uint32", 8 * 32), out_ptr=("zeros", "uint32", 8 * 32)),
         (1,), ["out_ptr"], tol=0),
]

# --- language/cuda_extras.py -------------------------------------------------
F = "language/cuda_extras.py"
CASES += [
    # num_warps, num_threads, and 1s for an SM id and a timer in range.
    case("cuda_launch_shape_w8", F, "launch_shape", "out_ptr=*i32, num_warps=8",
         dict(out_ptr=("zeros", "int32", 3 * 4)), (3,), ["out_ptr"], tol=0),
    case("cuda_launch_shape_w4", F, "launch_shape", "out_ptr=*i32",
         dict(out_ptr=("zeros", "int32", 2 * 4)), (2,), ["out_ptr"], tol=0),
    case("cuda_dependent_copy", F, "dependent_copy", "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=256",
         dict(x_ptr=("randn", "float32", 1000), out_ptr=("zeros", "float32", 1000), n=1000),
         (cdiv(1000, 256),), ["out_ptr"], tol=0),
    # tl.target_info's answers for the GPU: the cubin's arch against the
    # JIT's (both 9.0 on the H200).
    case("cuda_target_flags", F, "target_flags", "out_ptr=*i32",
         dict(out_ptr=("zeros", "int32", 1)), (1,), ["out_ptr"], tol=0),
]

# --- shapes/join_split.py ----------------------------------------------------
F = "shapes/join_split.py"
CASES += [
    # ar*br - ai*bi: FMA contraction.
    case("complex_multiply", F, "complex_multiply", "a_ptr=*fp32, b_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=256",
         dict(a_ptr=("randn", "float32", 2 * 700), b_ptr=("randn", "float32", 2 * 700),
              out_ptr=("zeros", "float32", 2 * 700), n=700),
         (cdiv(700, 256),), ["out_ptr"], tol=1e-6),
    case("interleave_halves", F, "interleave_halves", "x_ptr=*fp16, y_ptr=*fp16, out_ptr=*fp16, BLOCK=128",
         dict(x_ptr=("randn", "float16", 128), y_ptr=("randn", "float16", 128),
              out_ptr=("zeros", "float16", 256)), (1,), ["out_ptr"], tol=0),
    # cat may reorder: the kernel stores only the (integer) sum.
    case("concat_blocks", F, "concat_blocks", "x_ptr=*i32, y_ptr=*i32, out_ptr=*i32, BLOCK=64",
         dict(x_ptr=("randint", "int32", 64), y_ptr=("randint", "int32", 64), out_ptr=("zeros", "int32", 1)),
         (1,), ["out_ptr"], tol=0),
    case("split_halves", F, "split_halves", "x_ptr=*fp32, lo_ptr=*fp32, hi_ptr=*fp32, R=16, C=64",
         dict(x_ptr=("randn", "float32", 16 * 64), lo_ptr=("zeros", "float32", 16 * 32),
              hi_ptr=("zeros", "float32", 16 * 32)), (1,), ["lo_ptr", "hi_ptr"], tol=0),
    # Joined, transposed and merged (or split) in each thread's registers.
    case("unpack_int4_rows", F, "unpack_int4_rows", "q_ptr=*u8:16, out_ptr=*bf16:16, BK=16, BN=256",
         dict(q_ptr=("randbits", "uint8", 16 * 256), out_ptr=("zeros", "bfloat16", 32 * 256)),
         (1,), ["out_ptr"], tol=0),
    case("split_pairs", F, "split_pairs", "x_ptr=*fp32:16, out_ptr=*fp32:16, BM=64, BN=128",
         dict(x_ptr=("randn", "float32", 64 * 128), out_ptr=("zeros", "float32", 64 * 64)),
         (1,), ["out_ptr"], tol=1e-6),  # FMA contraction
    # Shifts reshaped from [R * C, 8] to [R, 8C] where the words are held.
    case("unpack_awq_words", F, "unpack_awq_words", "q_ptr=*i32:16, z_ptr=*i32:16, out_ptr=*i32:16, R=32, C=32",
         dict(q_ptr=("randbits", "int32", 32 * 32), z_ptr=("randbits", "int32", 32),
              out_ptr=("zeros", "int32", 32 * 256)), (1,), ["out_ptr"], tol=0),
]

# --- shapes/reshape_permute.py -----------------------------------------------
F = "shapes/reshape_permute.py"
CASES += [
    case("reshape_roundtrip_f32", F, "reshape_roundtrip", "x_ptr=*fp32, out_ptr=*fp32, R=8, C=32",
         dict(x_ptr=("randn", "float32", 256), out_ptr=("zeros", "float32", 256)), (1,), ["out_ptr"], tol=0),
    case("reshape_roundtrip_i16", F, "reshape_roundtrip", "x_ptr=*i16, out_ptr=*i16, R=16, C=16",
         dict(x_ptr=("randbits", "int16", 256), out_ptr=("zeros", "int16", 256)), (1,), ["out_ptr"], tol=0),
    case("permute_3d", F, "permute_3d", "x_ptr=*fp16, out_ptr=*fp16, A=4, B=8, C=16",
         dict(x_ptr=("randn", "float16", 4 * 8 * 16), out_ptr=("zeros", "float16", 4 * 8 * 16)),
         (1,), ["out_ptr"], tol=0),
    case("broadcasting", F, "broadcasting", "row_ptr=*fp32, col_ptr=*fp32, out_ptr=*fp32, M=32, N=64",
         dict(row_ptr=("randn", "float32", 64), col_ptr=("randn", "float32", 32),
              out_ptr=("zeros", "float32", 32 * 64)),
         (1,), ["out_ptr"], tol=1e-6),  # rb*cb + full: FMA contraction
    case("outer_product", F, "outer_product", "a_ptr=*fp32, b_ptr=*fp32, out_ptr=*fp32, M=64, N=32",
         dict(a_ptr=("randn", "float32", 64), b_ptr=("randn", "float32", 32),
              out_ptr=("zeros", "float32", 64 * 32)), (1,), ["out_ptr"], tol=0),
]

# --- tutorials/dropout.py ----------------------------------------------------
F = "tutorials/dropout.py"
CASES += [
    # x * (1 / (1 - p)) and x / (1 - p): `/` on fp32 may lower to div.full
    # (2 ulp) on one side and div.rn on the other.
    case("masked_dropout", F, "masked_dropout",
         "x_ptr=*fp32, keep_ptr=*i8, out_ptr=*fp32, n=i32, p=fp32, BLOCK=1024",
         dict(x_ptr=("randn", "float32", 5000), keep_ptr=("bits", "int8", 5000),
              out_ptr=("zeros", "float32", 5000), n=5000, p=0.3),
         (cdiv(5000, 1024),), ["out_ptr"], ulp=2),
    case("seeded_dropout_f32", F, "seeded_dropout",
         "x_ptr=*fp32, out_ptr=*fp32, n=i32, p=fp32, seed=i32, BLOCK=1024",
         dict(x_ptr=("randn", "float32", 5000), out_ptr=("zeros", "float32", 5000), n=5000, p=0.3, seed=42),
         (cdiv(5000, 1024),), ["out_ptr"], ulp=2),
    # A seed past 2**31, so that Triton types it i64 as the cubin does.
    case("seeded_dropout_f16", F, "seeded_dropout",
         "x_ptr=*fp16, out_ptr=*fp16, n=i32, p=fp32, seed=i64, BLOCK=2048",
         dict(x_ptr=("randn", "float16", 5000), out_ptr=("zeros", "float16", 5000), n=5000, p=0.3,
              seed=2**35 + 7), (cdiv(5000, 2048),), ["out_ptr"], ulp=1),
]

# --- tutorials/fused_softmax.py ----------------------------------------------
F = "tutorials/fused_softmax.py"
CASES += [
    # Sixteen programs stride over 100 rows; exp is approximate and the
    # row sum adds in another order.
    case("softmax_rows_f32", F, "softmax_rows",
         "out_ptr=*fp32, in_ptr=*fp32, in_row_stride=i32, out_row_stride=i32, n_rows=i32, n_cols=i32, "
         "BLOCK=1024, STAGES=2",
         dict(out_ptr=("zeros", "float32", 100 * 1000), in_ptr=("randn", "float32", 100 * 1024),
              in_row_stride=1024, out_row_stride=1000, n_rows=100, n_cols=1000),
         (16,), ["out_ptr"], tol=1e-6),
    case("softmax_rows_f16", F, "softmax_rows",
         "out_ptr=*fp16, in_ptr=*fp16, in_row_stride=i32, out_row_stride=i32, n_rows=i32, n_cols=i32, "
         "BLOCK=4096, STAGES=3, num_warps=16",
         dict(out_ptr=("zeros", "float16", 64 * 3000), in_ptr=("randn", "float16", 64 * 3000),
              in_row_stride=3000, out_row_stride=3000, n_rows=64, n_cols=3000),
         (20,), ["out_ptr"], tol=1e-3),  # and one fp16 rounding
    # row_stride = 200 fits i32, which Triton then uses: no product overflows.
    case("softmax_one_row", F, "softmax_one_row",
         "out_ptr=*fp32, in_ptr=*fp32, row_stride=i64, n_cols=i32, BLOCK=256",
         dict(out_ptr=("zeros", "float32", 40 * 200), in_ptr=("randn", "float32", 40 * 200),
              row_stride=200, n_cols=200),
         (40,), ["out_ptr"], tol=1e-6),
]

# --- tutorials/layer_norm.py -------------------------------------------------
F = "tutorials/layer_norm.py"
LN_F16 = ("x_ptr=*fp16, y_ptr=*fp16, w_ptr=*fp16, b_ptr=*fp16, mean_ptr=*fp32, rstd_ptr=*fp32, "
          "row_stride=i32, N=i32, eps=fp32, BLOCK=1024")
LN_F32 = ("x_ptr=*fp32, y_ptr=*fp32, w_ptr=*fp32, b_ptr=*fp32, mean_ptr=*fp32, rstd_ptr=*fp32, "
          "row_stride=i32, N=i32, eps=fp32, BLOCK=4096, num_warps=8")
CASES += [
    # Row sums in another order and 1/sqrt: mean and rstd a few fp32 ulps
    # apart; y rounds once more to fp16.
    case("layer_norm_fwd_f16", F, "layer_norm_fwd", LN_F16,
         dict(x_ptr=("randn", "float16", 64 * 1000), y_ptr=("zeros", "float16", 64 * 1000),
              w_ptr=("randn", "float16", 1000), b_ptr=("randn", "float16", 1000),
              mean_ptr=("zeros", "float32", 64), rstd_ptr=("zeros", "float32", 64),
              row_stride=1000, N=1000, eps=1e-5),
         (64,), ["y_ptr", "mean_ptr", "rstd_ptr"], tol=1e-5, per_output=dict(y_ptr=dict(tol=1e-3))),
    # N = 5000 > BLOCK: every loop runs twice, the second time masked.
    case("layer_norm_fwd_f32", F, "layer_norm_fwd", LN_F32,
         dict(x_ptr=("randn", "float32", 30 * 5000), y_ptr=("zeros", "float32", 30 * 5000),
              w_ptr=("randn", "float32", 5000), b_ptr=("randn", "float32", 5000),
              mean_ptr=("zeros", "float32", 30), rstd_ptr=("zeros", "float32", 30),
              row_stride=5000, N=5000, eps=1e-5),
         (30,), ["y_ptr", "mean_ptr", "rstd_ptr"], tol=1e-5),
    # 200 rows into 64 groups under a spin lock: the rows of a group add
    # into dw/db in any order (fp32, a few roundings); dx rounds to fp16;
    # the locks end at 0 and the first-row flags at 1 (bitwise).
    case("layer_norm_bwd_dx", F, "layer_norm_bwd_dx",
         "dx_ptr=*fp16, dy_ptr=*fp16, dw_part_ptr=*fp32, db_part_ptr=*fp32, x_ptr=*fp16, w_ptr=*fp16, "
         "mean_ptr=*fp32, rstd_ptr=*fp32, lock_ptr=*i32, row_stride=i32, N=i32, GROUPS=64, BLOCK=1024",
         dict(dx_ptr=("zeros", "float16", 200 * 1000), dy_ptr=("randn", "float16", 200 * 1000),
              dw_part_ptr=("zeros", "float32", 64 * 1000), db_part_ptr=("zeros", "float32", 64 * 1000),
              x_ptr=("randn", "float16", 200 * 1000), w_ptr=("randn", "float16", 1000),
              mean_ptr=("randn", "float32", 200, 0.1), rstd_ptr=("uniform", "float32", 200, 0.5, 2.0),
              lock_ptr=("zeros", "int32", 2 * 64), row_stride=1000, N=1000),
         (200,), ["dx_ptr", "dw_part_ptr", "db_part_ptr", "lock_ptr"], tol=1e-6,
         per_output=dict(dx_ptr=dict(tol=2e-3), lock_ptr=dict(tol=0))),
    case("layer_norm_bwd_dwdb", F, "layer_norm_bwd_dwdb",
         "dw_part_ptr=*fp32, db_part_ptr=*fp32, dw_ptr=*fp16, db_ptr=*fp16, G=i32, N=i32, BLOCK_G=32, BLOCK_N=128",
         dict(dw_part_ptr=("randn", "float32", 40 * 300), db_part_ptr=("randn", "float32", 40 * 300),
              dw_ptr=("zeros", "float16", 300), db_ptr=("zeros", "float16", 300), G=40, N=300),
         (cdiv(300, 128),), ["dw_ptr", "db_ptr"], tol=2e-3),  # column sums, then one fp16 rounding
]

# --- tutorials/libdevice_math.py ---------------------------------------------
F = "tutorials/libdevice_math.py"
CASES += [
    case("asin_libdevice", F, "asin_kernel", "x_ptr=*fp32, y_ptr=*fp32, n=i32, BLOCK=1024",
         dict(x_ptr=("uniform", "float32", 5000), y_ptr=("zeros", "float32", 5000), n=5000),
         (cdiv(5000, 1024),), ["y_ptr"], ulp=4),
    # libdevice asinf: Triton 3.6 ships CUDA 12.8's libdevice, Kiln links the
    # CUDA 13 toolkit's, whose asinf has another polynomial (3 ulp apart seen).
    case("asin_libdevice_f64", F, "asin_kernel", "x_ptr=*fp64, y_ptr=*fp64, n=i32, BLOCK=512",
         dict(x_ptr=("uniform", "float64", 5000), y_ptr=("zeros", "float64", 5000), n=5000),
         (cdiv(5000, 512),), ["y_ptr"], ulp=2),  # libdevice asin
    # libdevice tanh inside a polynomial: FMA contraction around it.
    case("gelu_tanh_libdevice", F, "gelu_tanh", "x_ptr=*fp32, y_ptr=*fp32, n=i32, BLOCK=1024",
         dict(x_ptr=("randn", "float32", 5000), y_ptr=("zeros", "float32", 5000), n=5000),
         (cdiv(5000, 1024),), ["y_ptr"], tol=1e-6),
]

# --- tutorials/vector_add.py -------------------------------------------------
F = "tutorials/vector_add.py"
CASES += [
    case("vector_add_f32", F, "vector_add", "a_ptr=*fp32, b_ptr=*fp32, c_ptr=*fp32, numel=i32, TILE=1024",
         dict(a_ptr=("randn", "float32", 98765), b_ptr=("randn", "float32", 98765),
              c_ptr=("zeros", "float32", 98765), numel=98765), (cdiv(98765, 1024),), ["c_ptr"], tol=0),
    case("vector_add_f16", F, "vector_add",
         "a_ptr=*fp16, b_ptr=*fp16, c_ptr=*fp16, numel=i32, TILE=2048, num_warps=8",
         dict(a_ptr=("randn", "float16", 98765), b_ptr=("randn", "float16", 98765),
              c_ptr=("zeros", "float16", 98765), numel=98765), (cdiv(98765, 2048),), ["c_ptr"], tol=0),
    # numel = 98765 fits i32, which Triton then uses: no offset overflows.
    case("vector_add_bf16", F, "vector_add", "a_ptr=*bf16, b_ptr=*bf16, c_ptr=*bf16, numel=i64, TILE=512",
         dict(a_ptr=("randn", "bfloat16", 98765), b_ptr=("randn", "bfloat16", 98765),
              c_ptr=("zeros", "bfloat16", 98765), numel=98765), (cdiv(98765, 512),), ["c_ptr"], tol=0),
]

# --- tl.dot ---------------------------------------------------------------------
# Triton 3.6 multiplies on tensor cores; Kiln (for now) takes K fused
# multiply-adds per element in fp32 (or in the integer accumulator). Products
# of fp16/bf16/fp8/int8 operands are exact on both sides; what differs is the
# order of the fp32 sums, and where Triton rounds more: tf32 operands (10-bit
# mantissas), an fp16 accumulator. Each bound says which.
F = "matmul/dot_variants.py"


def dot_args(dtype, out, m, n, k, kind=("randn",)):
    return dict(a_ptr=(kind[0], dtype, m * k) + tuple(kind[1:]),
                b_ptr=(kind[0], dtype, k * n) + tuple(kind[1:]),
                c_ptr=("zeros", out, m * n))


CASES += [
    case("dot_tile_f16", F, "dot_tile", "a_ptr=*fp16, b_ptr=*fp16, c_ptr=*fp32, M=64, N=64, K=32",
         dot_args("float16", "float32", 64, 64, 32), (1,), ["c_ptr"],
         tol=1e-5),  # fp32 sums in another order
    case("dot_tile_bf16", F, "dot_tile", "a_ptr=*bf16, b_ptr=*bf16, c_ptr=*fp32, M=64, N=128, K=64",
         dot_args("bfloat16", "float32", 64, 128, 64), (1,), ["c_ptr"],
         tol=1e-5),  # fp32 sums in another order
    case("dot_tile_fp8e4nv", F, "dot_tile",
         "a_ptr=*fp8e4nv, b_ptr=*fp8e4nv, c_ptr=*fp32, M=64, N=64, K=64",
         dot_args("float8_e4m3fn", "float32", 64, 64, 64), (1,), ["c_ptr"],
         # Triton's fp8 products on sm_90 accumulate with fewer mantissa bits
         # (max_num_imprecise_acc defaults to 2^30 there): 2.1e-4 measured.
         tol=1e-3),
    case("dot_tile_fp8e5", F, "dot_tile", "a_ptr=*fp8e5, b_ptr=*fp8e5, c_ptr=*fp32, M=64, N=64, K=64",
         dot_args("float8_e5m2", "float32", 64, 64, 64), (1,), ["c_ptr"],
         tol=1e-3),  # as above: 1.0e-4 measured
    case("dot_fp32_tf32", F, "dot_fp32_precision",
         "a_ptr=*fp32, b_ptr=*fp32, c_ptr=*fp32, PRECISION='tf32', M=32, N=32, K=32",
         dot_args("float32", "float32", 32, 32, 32), (1,), ["c_ptr"],
         tol=5e-3),  # Triton rounds the operands to tf32 (10-bit mantissas)
    case("dot_fp32_tf32x3", F, "dot_fp32_precision",
         "a_ptr=*fp32, b_ptr=*fp32, c_ptr=*fp32, PRECISION='tf32x3', M=32, N=32, K=32",
         dot_args("float32", "float32", 32, 32, 32), (1,), ["c_ptr"],
         tol=1e-5),  # three tf32 products recover about fp32's precision
    case("dot_fp32_bf16x3", F, "dot_fp32_precision",
         "a_ptr=*fp32, b_ptr=*fp32, c_ptr=*fp32, PRECISION='bf16x3', M=32, N=32, K=32",
         dot_args("float32", "float32", 32, 32, 32), (1,), ["c_ptr"],
         tol=1e-4),  # three bf16 products: about 16 bits, split in two ways
    case("dot_fp32_bf16x6", F, "dot_fp32_precision",
         "a_ptr=*fp32, b_ptr=*fp32, c_ptr=*fp32, PRECISION='bf16x6', M=32, N=32, K=32",
         dot_args("float32", "float32", 32, 32, 32), (1,), ["c_ptr"],
         tol=1e-5),  # six bf16 products recover about fp32's precision
    *[case(f"matmul_fp32_{p}", F, "matmul_fp32_precision",
           "a_ptr=*fp32:16, b_ptr=*fp32:16, c_ptr=*fp32:16, M=i32, N=i32:16, K=i32:16, "
           f"PRECISION='{p}', BM=64, BN=64, BK=32" + (", num_warps=8" if p == "bf16x6" else ""),
           dict(dot_args("float32", "float32", 200, 192, 256), M=200, N=192, K=256),
           (4, 3), ["c_ptr"], tol=tol)
      for p, tol in (("tf32x3", 1e-5), ("bf16x3", 1e-4), ("bf16x6", 1e-5))],
    *[case(f"dot_batched_{name}", F, "dot_batched",
           f"a_ptr=*{t}, b_ptr=*{t}, c_ptr=*{out}, K=i32, B={b}, BM={bm}, BN={bn}, BK={bk}"
           + (f", num_warps={w}" if w != 4 else ""),
           dict(a_ptr=(kind[0], torch_t, b * bm * k) + kind[1:],
                b_ptr=(kind[0], torch_t, b * k * bn) + kind[1:],
                c_ptr=("zeros", torch_out, b * bm * bn), K=k),
           (1,), ["c_ptr"], tol=tol)
      for name, t, torch_t, out, torch_out, b, bm, bn, bk, k, w, kind, tol in (
          # fp32 sums in another order
          ("f16", "fp16", "float16", "fp32", "float32", 2, 64, 32, 32, 64, 4, ("randn",), 1e-5),
          ("bf16", "bf16", "bfloat16", "fp32", "float32", 4, 16, 16, 16, 32, 4, ("randn",), 1e-5),
          ("f16_w8", "fp16", "float16", "fp32", "float32", 8, 16, 32, 16, 48, 8, ("randn",), 1e-5),
          # both round the operands to tf32
          ("tf32", "fp32", "float32", "fp32", "float32", 2, 32, 32, 16, 32, 4, ("randn",), 5e-3),
          # (int8 3-D dots: upstream Triton 3.6 rejects them; Kiln's are in
          # the corpus and tests/lit/dot_batched_to_ptx.py)
          # Triton's fp8 products accumulate with fewer mantissa bits
          ("fp8e5", "fp8e5", "float8_e5m2", "fp32", "float32", 2, 32, 32, 32, 64, 4,
           ("randn",), 1e-3))],
    case("dot_fp32_ieee", F, "dot_fp32_precision",
         "a_ptr=*fp32, b_ptr=*fp32, c_ptr=*fp32, PRECISION='ieee', M=32, N=32, K=32",
         dot_args("float32", "float32", 32, 32, 32), (1,), ["c_ptr"],
         tol=1e-6),  # fp32 sums in another order
    case("dot_halves", F, "dot_halves", "a_ptr=*fp16, b_ptr=*fp16, c_ptr=*fp16, M=64, N=128, K=64",
         dot_args("float16", "float16", 64, 128, 64), (1,), ["c_ptr"],
         tol=2e-3),  # fp32 sums in another order, then one fp16 rounding (2^-11)
    case("dot_fp16_out", F, "dot_fp16_out", "a_ptr=*fp16, b_ptr=*fp16, c_ptr=*fp16, M=64, N=64, K=64",
         dot_args("float16", "float16", 64, 64, 64), (1,), ["c_ptr"],
         tol=5e-3),  # both accumulate in fp16, maybe in another order
    case("dot_int8", F, "dot_int8", "a_ptr=*i8, b_ptr=*i8, c_ptr=*i32, M=64, N=64, K=64",
         dot_args("int8", "int32", 64, 64, 64, ("randint", -128, 128)), (1,), ["c_ptr"], tol=0),
    case("dot_transposed", F, "dot_transposed", "a_ptr=*fp16, b_ptr=*fp16, c_ptr=*fp32, M=64, N=64, K=64",
         dot_args("float16", "float32", 64, 64, 64), (1,), ["c_ptr"],
         tol=1e-5),  # fp32 sums in another order
]

# --- matmul/gathered_dots.py: dots over tiles gathered through indices the
# loop loads (paged decode attention, a GEMM over picked b rows). kilnc
# pipelines them: the index loads run ahead of the copies, masked past the
# loop's end; sequences of 0 and 1 tokens take no or one iteration.
F = "matmul/gathered_dots.py"


def paged_decode_args(dtype, lengths, kv_heads, group, d, page):
    seqs, tokens = len(lengths), len(lengths) * page
    rows = seqs * kv_heads * group * d
    return dict(Q=("randn", dtype, rows), K=("randn", dtype, tokens * kv_heads * d),
                V=("randn", dtype, tokens * kv_heads * d), Out=("zeros", dtype, rows),
                Pages=("index", "int32", seqs * page, tokens),
                lengths=lambda torch, g: torch.tensor(lengths, dtype=torch.int32, device="cuda"),
                stride_page=page, sm_scale=d ** -0.5)


CASES += [
    case("paged_decode_f16_w2s2", F, "paged_decode",
         "Q=*fp16:16, K=*fp16:16, V=*fp16:16, Out=*fp16:16, Pages=*i32:16, lengths=*i32:16, "
         "stride_page=i32:16, sm_scale=fp32, GROUP=4, D=64, BLOCK_N=16, STAGES=2, num_warps=2",
         paged_decode_args("float16", [0, 1, 17, 300, 1000], 2, 4, 64, 1008), (5, 2), ["Out"],
         tol=1e-2),  # exp and row sums in another order; p rounded to fp16
    case("paged_decode_bf16_w4s3", F, "paged_decode",
         "Q=*bf16:16, K=*bf16:16, V=*bf16:16, Out=*bf16:16, Pages=*i32:16, lengths=*i32:16, "
         "stride_page=i32:16, sm_scale=fp32, GROUP=8, D=128, BLOCK_N=32, STAGES=3, num_warps=4",
         paged_decode_args("bfloat16", [5, 64, 1000, 33, 0, 4096], 2, 8, 128, 4096), (6, 2), ["Out"],
         tol=2e-2),  # as above; p rounded to bf16
    *[case(f"gathered_rows_matmul_{bm}", F, "gathered_rows_matmul",
           "a_ptr=*fp16:16, b_ptr=*fp16:16, idx_ptr=*i32:16, c_ptr=*fp32:16, M=i32, N=i32:16, "
           f"K=i32:16, BM={bm}, BN=64, BK=32, STAGES={stages}" + (f", num_warps={w}" if w != 4 else ""),
           dict(a_ptr=("randn", "float16", 300 * 512), b_ptr=("randn", "float16", 700 * 192),
                idx_ptr=("index", "int32", 512, 700), c_ptr=("zeros", "float32", 300 * 192),
                M=300, N=192, K=512),
           (cdiv(300, bm), 3), ["c_ptr"], tol=1e-5)  # fp32 sums in another order
      for bm, stages, w in ((128, 3, 4), (16, 4, 2))],
    # K = 32: one iteration, the stage's index loads all past the end.
    case("gathered_rows_matmul_one_step", F, "gathered_rows_matmul",
         "a_ptr=*fp16:16, b_ptr=*fp16:16, idx_ptr=*i32:16, c_ptr=*fp32:16, M=i32, N=i32:16, "
         "K=i32:16, BM=128, BN=64, BK=32, STAGES=3",
         dict(a_ptr=("randn", "float16", 130 * 32), b_ptr=("randn", "float16", 50 * 64),
              idx_ptr=("index", "int32", 32, 50), c_ptr=("zeros", "float32", 130 * 64),
              M=130, N=64, K=32),
         (2, 1), ["c_ptr"], tol=1e-5),  # fp32 sums in another order
    # rank 48 of R = 64 (the mask cuts each column), columns that wrap at
    # WIDTH; the dot's fp32 sum rounded to fp16 and added into fp16.
    case("gathered_columns_matmul", F, "gathered_columns_matmul",
         "x_ptr=*fp16:16, w_ptr=*fp16:16, rows_ptr=*i64:16, out_ptr=*fp16:16, M=i32, rank=i32, "
         "BM=32, BN=128, R=64, WIDTH=4096",
         dict(x_ptr=("randn", "float16", 100 * 64), w_ptr=("randn", "float16", 64 * 4096),
              rows_ptr=("index", "int64", 64, 64), out_ptr=("randn", "float16", 100 * 4096),
              M=100, rank=48),
         (cdiv(100, 32), 32), ["out_ptr"], tol=1e-2),
]

# --- matmul/scaled_dots.py: dots scaled by per-k vectors the loop loads
# from pointers it carries (loaded in their broadcast's layout), and a masked
# copy whose row compares are shared between rows 8 apart.
F = "matmul/scaled_dots.py"
CASES += [
    # M = 300: the last block's rows wrap (rm % M) and its stores are masked.
    case("row_scaled_matmul", F, "row_scaled_matmul",
         "a_ptr=*fp16:16, b_ptr=*fp16:16, s_ptr=*fp32:16, c_ptr=*fp32:16, M=i32, N=i32:16, "
         "K=i32:16, BM=64, BN=64, BK=32, STAGES=3",
         dict(a_ptr=("randn", "float16", 300 * 512), b_ptr=("randn", "float16", 512 * 192),
              s_ptr=("uniform", "float32", 300 * 16), c_ptr=("zeros", "float32", 300 * 192),
              M=300, N=192, K=512),
         (cdiv(300, 64), 3), ["c_ptr"], tol=1e-5),  # fp32 sums in another order
    # L = 1000, 64 and 40: a masked tail, one full step, one partial step.
    *[case(f"decayed_matmul_{L}", F, "decayed_matmul",
           "a_ptr=*fp32:16, x_ptr=*fp16:16, d_ptr=*fp32:16, t_ptr=*fp32:16, c_ptr=*fp32:16, "
           "L=i32, N=i32:16, BM=64, BN=64, BK=64",
           dict(a_ptr=("randn", "float32", L * L), x_ptr=("randn", "float16", L * 128),
                d_ptr=("uniform", "float32", L), t_ptr=("uniform", "float32", L),
                c_ptr=("zeros", "float32", L * 128), L=L, N=128),
           (cdiv(L, 64), 2), ["c_ptr"], tol=1e-2)  # a rounded to fp16 after exp
      for L in (1000, 64, 40)],
    # K = 1000 (a masked last k block), M = 300, N = 384.
    case("carried_k_masks", F, "carried_k_masks",
         "a_ptr=*fp16:16, b_ptr=*fp16:16, sa_ptr=*fp32:16, sb_ptr=*fp32:16, c_ptr=*fp16:16, "
         "M=i32, N=i32:16, K=i32, BM=64, BN=128, BK=64",
         dict(a_ptr=("randn", "float16", 300 * 1000), b_ptr=("randn", "float16", 1000 * 384),
              sa_ptr=("uniform", "float32", 300), sb_ptr=("uniform", "float32", 384),
              c_ptr=("zeros", "float16", 300 * 384), M=300, N=384, K=1000),
         (cdiv(300, 64), 3), ["c_ptr"], tol=1e-2),  # fp32 sums in another order, fp16 out
    # A decode GEMM's tiles (16 x 256 x 128 over 8 warps, 2 stages; K = 1008
    # masks the last k block): mma.sync, its rings one slot each, refilled
    # where the dot read, so that two blocks fit an SM.
    case("carried_k_masks_decode", F, "carried_k_masks",
         "a_ptr=*bf16:16, b_ptr=*bf16:16, sa_ptr=*fp32:16, sb_ptr=*fp32:16, c_ptr=*fp16:16, "
         "M=i32, N=i32:16, K=i32:16, BM=16, BN=256, BK=128, num_warps=8, num_stages=2",
         dict(a_ptr=("randn", "bfloat16", 40 * 1008), b_ptr=("randn", "bfloat16", 1008 * 608),
              sa_ptr=("uniform", "float32", 40), sb_ptr=("uniform", "float32", 608),
              c_ptr=("zeros", "float16", 40 * 608), M=40, N=608, K=1008),
         (cdiv(40, 16), cdiv(608, 256)), ["c_ptr"], tol=1e-2),  # fp32 sums in another order, fp16 out
    # M = 592 (a multiple of 16, not of 128), N = 1000: both edges masked.
    case("masked_rows", F, "masked_rows",
         "x_ptr=*bf16:16, y_ptr=*bf16:16, stride=i32:16, M=i32:16, N=i32, BM=128, BN=128",
         dict(x_ptr=("randn", "bfloat16", 600 * 1008), y_ptr=("zeros", "bfloat16", 600 * 1008),
              stride=1008, M=592, N=1000),
         (cdiv(592, 128), cdiv(1000, 128)), ["y_ptr"], tol=0),
]

# --- tl.dot_scaled ----------------------------------------------------------------
# Below sm_100 both sides upcast the operands to bf16 (fp16 when one is fp16),
# multiply by 2^(scale - 127) and take an ordinary dot: every product is
# exact, only the order of the fp32 sums differs. Scales stay within 2^±8 so
# that nothing overflows; e2m1 bytes take every bit pattern (all 16 values).
F = "matmul/dot_scaled.py"
DOT_SCALED_STORAGE = {"e4m3": ("fp8e4nv", "float8_e4m3fn", ("randn",)),
                      "e5m2": ("fp8e5", "float8_e5m2", ("randn",)),
                      "e2m1": ("u8", "uint8", ("randbits",)),
                      "bf16": ("bf16", "bfloat16", ("randn",)),
                      "fp16": ("fp16", "float16", ("randn",))}


def dot_scaled_case(id, fa, fb, m, n, k, extra="", **rules):
    (ta, torch_a, kind_a), (tb, torch_b, kind_b) = DOT_SCALED_STORAGE[fa], DOT_SCALED_STORAGE[fb]
    ka, kb = (k // 2 if fa == "e2m1" else k), (k // 2 if fb == "e2m1" else k)
    return case(id, F, "dot_scaled_tile",
                f"a_ptr=*{ta}, a_scale_ptr=*u8, b_ptr=*{tb}, b_scale_ptr=*u8, c_ptr=*fp32, "
                f"M={m}, N={n}, K={k}, A_FORMAT='{fa}', B_FORMAT='{fb}'" + extra,
                dict(a_ptr=(kind_a[0], torch_a, m * ka), b_ptr=(kind_b[0], torch_b, kb * n),
                     a_scale_ptr=("randint", "uint8", m * k // 32, 119, 136),
                     b_scale_ptr=("randint", "uint8", n * k // 32, 119, 136),
                     c_ptr=("zeros", "float32", m * n)),
                (1,), ["c_ptr"], **rules)


CASES += [
    dot_scaled_case("dot_scaled_e4m3", "e4m3", "e4m3", 64, 64, 64, tol=1e-5),  # sum order
    dot_scaled_case("dot_scaled_e2m1", "e2m1", "e2m1", 64, 64, 128, tol=1e-5),  # sum order
    dot_scaled_case("dot_scaled_e5m2_e2m1", "e5m2", "e2m1", 32, 64, 64, tol=1e-5),  # sum order
    dot_scaled_case("dot_scaled_bf16_unscaled_rhs", "bf16", "e4m3", 64, 32, 64,
                    ", B_SCALED=False", tol=1e-5),  # sum order
    dot_scaled_case("dot_scaled_fp16_e2m1_fast", "fp16", "e2m1", 64, 64, 64,
                    ", FAST_MATH=True", tol=1e-5),  # sum order
    case("dot_scaled_matmul", F, "dot_scaled_matmul",
         "a_ptr=*fp8e4nv:16, a_scale_ptr=*u8:16, b_ptr=*u8:16, b_scale_ptr=*u8:16, c_ptr=*fp32:16, "
         "M=i32, N=i32:16, K=i32:16, BM=64, BN=64, BK=128",
         dict(a_ptr=("randn", "float8_e4m3fn", 100 * 512), b_ptr=("randbits", "uint8", 256 * 128),
              a_scale_ptr=("randint", "uint8", 100 * 16, 119, 136),
              b_scale_ptr=("randint", "uint8", 128 * 16, 119, 136),
              c_ptr=("zeros", "float32", 100 * 128), M=100, N=128, K=512),
         (cdiv(100, 64), 2), ["c_ptr"], tol=1e-5),  # sum order
]

F = "memory/block_pointers.py"
CASES += [
    case("block_ptr_matmul", F, "block_ptr_matmul",
         "a_ptr=*fp16, b_ptr=*fp16, c_ptr=*fp32, M=i32, N=i32, K=i32, sam=i32, sak=i32, sbk=i32, "
         "sbn=i32, scm=i32, scn=i32, BM=64, BN=64, BK=32",
         dict(a_ptr=("randn", "float16", 100 * 70), b_ptr=("randn", "float16", 70 * 90),
              c_ptr=("zeros", "float32", 100 * 90), M=100, N=90, K=70,
              sam=70, sak=1, sbk=90, sbn=1, scm=90, scn=1),
         (cdiv(100, 64), cdiv(90, 64)), ["c_ptr"], tol=1e-5),  # fp32 sums in another order
]

F = "tutorials/matmul.py"
MATMUL_SIG = ("a_ptr=*{t}, b_ptr=*{t}, c_ptr=*{o}, M=i32, N=i32, K=i32, stride_am=i32, "
              "stride_ak=i32, stride_bk=i32, stride_bn=i32, stride_cm=i32, stride_cn=i32, {rest}")


def matmul_args(dtype, out, m, n, k):
    return dict(a_ptr=("randn", dtype, m * k), b_ptr=("randn", dtype, k * n),
                c_ptr=("zeros", out, m * n), M=m, N=n, K=k, stride_am=k, stride_ak=1,
                stride_bk=n, stride_bn=1, stride_cm=n, stride_cn=1)


CASES += [
    case("matmul_f16_leaky_relu", F, "matmul_kernel",
         MATMUL_SIG.format(t="fp16", o="fp32",
                           rest="BM=64, BN=64, BK=32, GROUP=4, ACTIVATION='leaky_relu'"),
         matmul_args("float16", "float32", 200, 150, 100),
         (cdiv(200, 64) * cdiv(150, 64),), ["c_ptr"], tol=1e-5),  # fp32 sums in another order
    case("matmul_bf16_relu", F, "matmul_kernel",
         MATMUL_SIG.format(t="bf16", o="bf16", rest="BM=128, BN=64, BK=64, GROUP=8, ACTIVATION='relu'"),
         matmul_args("bfloat16", "bfloat16", 256, 192, 128),
         (cdiv(256, 128) * cdiv(192, 64),), ["c_ptr"],
         tol=1e-2),  # fp32 sums in another order, then one bf16 rounding (2^-8)
    # 64-row tiles at 8 warps: on sm_90a the two warpgroups split N (each
    # wgmma m64n128 or m64n64 over its own columns of b's tile), b
    # N-major, or K-major (b^T, stride_bk 1); ragged M, N and K.
    case("matmul_warpgroups_along_n_f16", F, "matmul_kernel",
         "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp32:16, M=i32, N=i32, K=i32, stride_am=i32:16, "
         "stride_ak=i32:1, stride_bk=i32:16, stride_bn=i32:1, stride_cm=i32:16, stride_cn=i32:1, "
         "BM=64, BN=256, BK=64, GROUP=4, ACTIVATION='leaky_relu', num_warps=8, num_stages=3",
         dict(matmul_args("float16", "float32", 200, 600, 208), stride_bk=608, stride_cm=608,
              b_ptr=("randn", "float16", 208 * 608), c_ptr=("zeros", "float32", 200 * 608)),
         (cdiv(200, 64) * cdiv(600, 256),), ["c_ptr"], tol=1e-5),  # fp32 sums in another order
    case("matmul_warpgroups_along_n_bt_bf16", F, "matmul_kernel",
         "a_ptr=*bf16:16, b_ptr=*bf16:16, c_ptr=*bf16:16, M=i32, N=i32, K=i32, stride_am=i32:16, "
         "stride_ak=i32:1, stride_bk=i32:1, stride_bn=i32:16, stride_cm=i32:16, stride_cn=i32:1, "
         "BM=64, BN=128, BK=64, GROUP=4, num_warps=8, num_stages=3",
         dict(matmul_args("bfloat16", "bfloat16", 200, 300, 208), stride_bk=1, stride_bn=208,
              stride_cm=304, c_ptr=("zeros", "bfloat16", 200 * 304)),
         (cdiv(200, 64) * cdiv(300, 128),), ["c_ptr"],
         tol=1e-2),  # fp32 sums in another order, then one bf16 rounding (2^-8)
]

# --- matmul/persistent_reset_after.py: a flat persistent GEMM whose
# offsets are carried and recomputed at a tile's first step and whose
# accumulator is zeroed after its last (FBGEMM's fp8 GEMMs): 3 programs over
# 3 x 2 tiles of c = a @ b^T with ragged rows, columns and K (its last step
# masked), so each program stores two tiles and restarts once.
F = "matmul/persistent_reset_after.py"
CASES += [
    case(f"flat_persistent_matmul_{name}", F, "flat_persistent_matmul",
         f"a_ptr=*{t}:16, b_ptr=*{t}:16, c_ptr=*{o}:16, M=i32, N=i32, K=i32:16, "
         "stride_am=i32:16, stride_bn=i32:16, stride_cm=i32:16, BM=128, BN=128, BK=64, GROUP=8, "
         "NUM_SMS=3, num_warps=8",
         dict(a_ptr=("randn", dtype, 300 * 208), b_ptr=("randn", dtype, 208 * 208),
              c_ptr=("zeros", out, 300 * 208), M=300, N=208, K=208, stride_am=208,
              stride_bn=208, stride_cm=208),
         (3,), ["c_ptr"], tol=tol)
    for name, t, dtype, o, out, tol in [
        # fp32 sums in another order, then one fp16 rounding (2^-11)
        ("f16", "fp16", "float16", "fp16", "float16", 2e-3),
        # fp32 sums of exact fp8 products, then one bf16 rounding (2^-8)
        ("fp8e5", "fp8e5", "float8_e5m2", "bf16", "bfloat16", 1e-2)]
]

# 1-D blocks that load bf16/fp16 and store fp32: 4 a thread (one fp32
# store's), the loads 8 bytes a lane. 3008 = 2 blocks and a masked third;
# 37 rows of 3008 logits, the second loop's last chunk masked.
F = "memory/widening_stores.py"
CASES += [
    case("widen_sum", F, "widen_sum",
         "x_ptr=*bf16:16, y_ptr=*fp16:16, out_ptr=*fp32:16, rounded_ptr=*bf16:16, n=i32:16, BLOCK=1024",
         dict(x_ptr=("randn", "bfloat16", 3008), y_ptr=("randn", "float16", 3008),
              out_ptr=("zeros", "float32", 3008), rounded_ptr=("zeros", "bfloat16", 3008), n=3008),
         (3,), ["out_ptr", "rounded_ptr"], tol=0),
    # exp and log approximate on both sides, the sums in another order
    case("log_softmax_rows", F, "log_softmax_rows",
         "x_ptr=*bf16:16, out_ptr=*fp32:16, N=i32:16, BLOCK=1024, num_warps=1",
         dict(x_ptr=("randn", "bfloat16", 37 * 3008), out_ptr=("zeros", "float32", 37 * 3008), N=3008),
         (37,), ["out_ptr"], tol=1e-5),
]

# fp8 `acc += tl.dot(a, b)`, summed apart: the two 128-register
# accumulators take the dot that adds c after its product, 128 columns at a
# time (kiln-sum-dots-apart); 64 x 128 keeps its async dot. 300 x 520 x 208:
# ragged rows and columns, K's last step masked.
F = "matmul/fp8_sum_apart.py"
CASES += [
    case(f"fp8_sum_apart_{name}", F, "fp8_matmul_sum_apart",
         f"a_ptr=*{t}:16, b_ptr=*{t}:16, c_ptr=*{o}:16, M=i32, N=i32, K=i32:16, stride_am=i32:16, "
         f"stride_bn=i32:16, stride_cm=i32:16, BM={bm}, BN={bn}, BK=64, num_warps={w}, num_stages=3",
         dict(a_ptr=("randn", dtype, 300 * 208), b_ptr=("randn", dtype, 520 * 208),
              c_ptr=("zeros", out, 300 * 520), M=300, N=520, K=208, stride_am=208,
              stride_bn=208, stride_cm=520),
         (-(-300 // bm), -(-520 // bn)), ["c_ptr"], tol=tol)
    for name, t, dtype, o, out, bm, bn, w, tol in [
        # fp32 sums of exact fp8 products in another order, one bf16 rounding
        ("e4m3_128x256_w8", "fp8e4nv", "float8_e4m3fn", "bf16", "bfloat16", 128, 256, 8, 1e-2),
        # fp32 out: on sm_90a only the order of the sums differs (0 on an
        # H100); sm_90's mma.sync adds fp8 products at its own precision
        # (1.1e-4 of the output's scale there)
        ("e5m2_128x128_w4", "fp8e5", "float8_e5m2", "fp32", "float32", 128, 128, 4, 1e-3),
        ("e4m3_64x128_w4", "fp8e4nv", "float8_e4m3fn", "bf16", "bfloat16", 64, 128, 4, 1e-2)]
] + [
    # max_num_imprecise_acc=MOST: on sm_90a partial sums of MOST of K added
    # to the fp32 accumulator, as Triton's (K = 416: the last step masked).
    # fp32 out; sm_90's mma.sync sums fp8 products at its own precision.
    case(f"fp8_bounded_imprecise_{name}", F, "fp8_matmul_bounded_imprecise",
         f"a_ptr=*{t}:16, b_ptr=*{t}:16, c_ptr=*fp32:16, M=i32, N=i32, K=i32:16, stride_am=i32:16, "
         f"stride_bn=i32:16, stride_cm=i32:16, BM={bm}, BN={bn}, BK={bk}, MOST={most}, num_warps={w}, "
         "num_stages=3",
         dict(a_ptr=("randn", dtype, 300 * 416), b_ptr=("randn", dtype, 520 * 416),
              c_ptr=("zeros", "float32", 300 * 520), M=300, N=520, K=416, stride_am=416,
              stride_bn=416, stride_cm=520),
         (-(-300 // bm), -(-520 // bn)), ["c_ptr"], tol=1e-3)
    for name, t, dtype, bm, bn, bk, most, w in [
        ("e4m3_128x256x128_most32", "fp8e4nv", "float8_e4m3fn", 128, 256, 128, 32, 8),
        # 96 of K 128: partial sums of 96 and 32
        ("e4m3_128x256x128_most96", "fp8e4nv", "float8_e4m3fn", 128, 256, 128, 96, 8),
        ("e5m2_64x128x64_most64", "fp8e5", "float8_e5m2", 64, 128, 64, 64, 4)]
]

F = "matmul/staged_tf32_operands.py"
CASES += [
    # tf32 operands staged with rows along the dimension their registers run
    # (four elements a store): a and b row-major, both transposed, K in
    # chunks (64 x 64 x 128: two of 64), N of one mma tile (rows of 24 elements).
    *[case(f"staged_tf32_{kernel}_{m}x{n}x{k}", F, kernel,
           f"a_ptr=*fp32:16, b_ptr=*fp32:16, c_ptr=*fp32:16, M={m}, N={n}, K={k}",
           dot_args("float32", "float32", m, n, k), (1,), ["c_ptr"],
           tol=5e-3)  # both round the operands to tf32; sums in another order
      for kernel, m, n, k in [("rows_then_columns", 32, 128, 32),
                              ("rows_then_columns", 64, 64, 128),
                              ("columns_then_rows", 32, 64, 64),
                              ("columns_then_rows", 16, 8, 32)]],
    # Attention's p @ v over 4 warps of 32 rows, v N-contiguous, unpipelined.
    case("staged_tf32_scores_times_values", F, "scores_times_values",
         "q_ptr=*fp32:16, k_ptr=*fp32:16, v_ptr=*fp32:16, o_ptr=*fp32:16, S=i32, M=32, N=32, "
         "D=128, CHUNK=32",
         dict(q_ptr=("randn", "float32", 160 * 128, 0.1), k_ptr=("randn", "float32", 160 * 128, 0.1),
              v_ptr=("randn", "float32", 160 * 128), o_ptr=("zeros", "float32", 160 * 128), S=160),
         (5,), ["o_ptr"], tol=1e-2),  # tf32 scores and products, exp of both
    # Lightning Attention-2's block state: k^T (M contiguous) scaled by a
    # decay and v widened from bf16, both staged in a pipelined loop. 3
    # blocks of 4 chunks of 32 rows.
    case("staged_tf32_decayed_state", F, "decayed_state",
         "k_ptr=*bf16:16, v_ptr=*bf16:16, s_ptr=*fp32, kv_ptr=*fp32:16, D=64, E=64, CHUNK=32, CHUNKS=4",
         dict(k_ptr=("randn", "bfloat16", 384 * 64, 0.1), v_ptr=("randn", "bfloat16", 384 * 64),
              s_ptr=("uniform", "float32", 1, 0.01, 0.05), kv_ptr=("zeros", "float32", 3 * 64 * 64)),
         (3,), ["kv_ptr"], tol=1e-2),  # tf32 products of 128 rows, exp to an ulp
]

F = "tutorials/persistent_matmul.py"
CASES += [
    case("persistent_matmul_f16", F, "persistent_matmul",
         MATMUL_SIG.format(t="fp16", o="fp16", rest="BM=128, BN=128, BK=64, GROUP=8, NUM_SMS=132, "
                           "num_warps=8"),
         matmul_args("float16", "float16", 384, 256, 128), (6,), ["c_ptr"],
         tol=2e-3),  # fp32 sums in another order, then one fp16 rounding (2^-11)
    # Flattened: 3 programs over 3 x 2 tiles with ragged rows, columns and K
    # (K's last step masked), so each program runs two epilogues. Aligned
    # K and strides, as the pipeline's 16-byte copies need.
    *[case(f"persistent_matmul_flattened_{name}", F, "persistent_matmul",
           f"a_ptr=*{t}:16, b_ptr=*{t}:16, c_ptr=*fp16:16, M=i32, N=i32, K=i32:16, "
           "stride_am=i32:16, stride_ak=i32:1, stride_bk=i32:16, stride_bn=i32:1, stride_cm=i32:16, "
           f"stride_cn=i32:1, BM=128, BN=128, BK={bk}, GROUP=8, NUM_SMS=3, FLATTEN=True, num_warps=8",
           matmul_args(dtype, "float16", 300, 208, k), (3,), ["c_ptr"],
           tol=2e-3)  # fp32 sums in another order, then one fp16 rounding (2^-11)
      for name, t, dtype, bk, k in [("f16", "fp16", "float16", 64, 208),
                                    ("fp8", "fp8e4nv", "float8_e4m3fn", 128, 304)]],
    # The general variant (no alignment known: element-wise loads) with b
    # row-major or given as b^T (N x K, K-contiguous: stride_bk = 1), nested
    # and flattened; 3 programs over ragged tiles, K's last step masked.
    *[case(f"persistent_matmul_general_{layout}_{form}", F, "persistent_matmul",
           MATMUL_SIG.format(t="fp16", o="fp16", rest="BM=128, BN=128, BK=64, GROUP=8, NUM_SMS=3, "
                             f"FLATTEN={form == 'flattened'}, num_warps=8"),
           dict(matmul_args("float16", "float16", 300, 200, 200),
                **({} if layout == "b" else dict(stride_bk=1, stride_bn=200))),
           (3,), ["c_ptr"], tol=2e-3)  # fp32 sums in another order, then one fp16 rounding
      for layout in ("b", "bt") for form in ("nested", "flattened")],
]

F = "tutorials/fused_attention.py"
ATTN_Z, ATTN_H, ATTN_N, ATTN_D = 2, 3, 128, 64
ATTN_NUMEL = ATTN_Z * ATTN_H * ATTN_N * ATTN_D
# The bf16 cases' parameters up to HEAD_DIM 64, and their arguments.
ATTN_BF16_SIG = ("q_ptr=*bf16, k_ptr=*bf16, v_ptr=*bf16, o_ptr=*bf16, lse_ptr=*fp32, sm_scale=fp32, "
                 "stride_qz=i64, stride_qh=i64, stride_qm=i64, stride_kz=i64, stride_kh=i64, stride_kn=i64, "
                 "stride_vz=i64, stride_vh=i64, stride_vn=i64, stride_oz=i64, stride_oh=i64, stride_om=i64, "
                 "H=i32, N_CTX=i32, HEAD_DIM=64, ")
ATTN_BF16_ARGS = dict(
    q_ptr=("randn", "bfloat16", ATTN_NUMEL), k_ptr=("randn", "bfloat16", ATTN_NUMEL),
    v_ptr=("randn", "bfloat16", ATTN_NUMEL), o_ptr=("zeros", "bfloat16", ATTN_NUMEL),
    lse_ptr=("zeros", "float32", ATTN_Z * ATTN_H * ATTN_N), sm_scale=0.125,
    stride_qz=ATTN_H * ATTN_N * ATTN_D, stride_qh=ATTN_N * ATTN_D, stride_qm=ATTN_D,
    stride_kz=ATTN_H * ATTN_N * ATTN_D, stride_kh=ATTN_N * ATTN_D, stride_kn=ATTN_D,
    stride_vz=ATTN_H * ATTN_N * ATTN_D, stride_vh=ATTN_N * ATTN_D, stride_vn=ATTN_D,
    stride_oz=ATTN_H * ATTN_N * ATTN_D, stride_oh=ATTN_N * ATTN_D, stride_om=ATTN_D,
    H=ATTN_H, N_CTX=ATTN_N)
CASES += [
    case("attention_fwd_bf16_causal", F, "attention_fwd",
         ATTN_BF16_SIG + "BLOCK_M=64, BLOCK_N=32, CAUSAL=True",
         dict(ATTN_BF16_ARGS),
         (cdiv(ATTN_N, 64), ATTN_Z * ATTN_H), ["o_ptr", "lse_ptr"],
         # Scores summed in another order, then p rounded to bf16 (2^-8)
         # before the second product: outputs agree to about bf16's precision.
         tol=5e-3, per_output=dict(lse_ptr=dict(tol=1e-4))),
    # 16-row tiles on one warp, unpipelined (NSA's selected attention's
    # shape): too few rows for wgmma, so on sm_90a too both dots run
    # mma.sync on staged tiles, p @ v with p from registers.
    case("attention_fwd_bf16_m16_w1", F, "attention_fwd",
         ATTN_BF16_SIG + "BLOCK_M=16, BLOCK_N=16, CAUSAL=False, num_warps=1, num_stages=1",
         dict(ATTN_BF16_ARGS),
         (cdiv(ATTN_N, 16), ATTN_Z * ATTN_H), ["o_ptr", "lse_ptr"],
         # As attention_fwd_bf16_causal: p rounded to bf16.
         tol=5e-3, per_output=dict(lse_ptr=dict(tol=1e-4))),
    # HEAD_DIM 128: q and k^T (49 KiB in fp16) exceed the dot's staging
    # budget, so K is staged in two chunks.
    case("attention_fwd_f16_d128_causal", F, "attention_fwd",
         "q_ptr=*fp16, k_ptr=*fp16, v_ptr=*fp16, o_ptr=*fp16, lse_ptr=*fp32, sm_scale=fp32, "
         "stride_qz=i64, stride_qh=i64, stride_qm=i64, stride_kz=i64, stride_kh=i64, stride_kn=i64, "
         "stride_vz=i64, stride_vh=i64, stride_vn=i64, stride_oz=i64, stride_oh=i64, stride_om=i64, "
         "H=i32, N_CTX=i32, HEAD_DIM=128, BLOCK_M=128, BLOCK_N=64, CAUSAL=True, num_warps=8",
         dict(q_ptr=("randn", "float16", 2 * ATTN_N * 128), k_ptr=("randn", "float16", 2 * ATTN_N * 128),
              v_ptr=("randn", "float16", 2 * ATTN_N * 128), o_ptr=("zeros", "float16", 2 * ATTN_N * 128),
              lse_ptr=("zeros", "float32", 2 * ATTN_N), sm_scale=0.088,
              stride_qz=ATTN_N * 128, stride_qh=ATTN_N * 128, stride_qm=128,
              stride_kz=ATTN_N * 128, stride_kh=ATTN_N * 128, stride_kn=128,
              stride_vz=ATTN_N * 128, stride_vh=ATTN_N * 128, stride_vn=128,
              stride_oz=ATTN_N * 128, stride_oh=ATTN_N * 128, stride_om=128,
              H=1, N_CTX=ATTN_N),
         (cdiv(ATTN_N, 128), 2), ["o_ptr", "lse_ptr"],
         # p rounded to fp16 (2^-11) before the second product.
         tol=2e-3, per_output=dict(lse_ptr=dict(tol=1e-4))),
    # 64-row tiles over 8 warps, a 512-wide head (DeepSeek-V3's MLA shape):
    # on sm_90a p @ v's two warpgroups split its 512 columns, each reading
    # all of p from registers, and both compute the scores (q @ k^T with all
    # warps along M, the second warpgroup's rows a copy of the first's). The
    # diagonal loop's dots take mma.sync in the same layouts.
    case("attention_fwd_f16_d512_m64_w8", F, "attention_fwd",
         "q_ptr=*fp16, k_ptr=*fp16, v_ptr=*fp16, o_ptr=*fp16, lse_ptr=*fp32, sm_scale=fp32, "
         "stride_qz=i64, stride_qh=i64, stride_qm=i64, stride_kz=i64, stride_kh=i64, stride_kn=i64, "
         "stride_vz=i64, stride_vh=i64, stride_vn=i64, stride_oz=i64, stride_oh=i64, stride_om=i64, "
         "H=i32, N_CTX=i32, HEAD_DIM=512, BLOCK_M=64, BLOCK_N=64, CAUSAL=True, num_warps=8, num_stages=1",
         dict(q_ptr=("randn", "float16", 2 * ATTN_N * 512), k_ptr=("randn", "float16", 2 * ATTN_N * 512),
              v_ptr=("randn", "float16", 2 * ATTN_N * 512), o_ptr=("zeros", "float16", 2 * ATTN_N * 512),
              lse_ptr=("zeros", "float32", 2 * ATTN_N), sm_scale=0.044,
              stride_qz=2 * ATTN_N * 512, stride_qh=ATTN_N * 512, stride_qm=512,
              stride_kz=2 * ATTN_N * 512, stride_kh=ATTN_N * 512, stride_kn=512,
              stride_vz=2 * ATTN_N * 512, stride_vh=ATTN_N * 512, stride_vn=512,
              stride_oz=2 * ATTN_N * 512, stride_oh=ATTN_N * 512, stride_om=512,
              H=2, N_CTX=ATTN_N),
         (cdiv(ATTN_N, 64), 2), ["o_ptr", "lse_ptr"],
         # p rounded to fp16 (2^-11) before the second product.
         tol=2e-3, per_output=dict(lse_ptr=dict(tol=1e-4))),
]

# --- matmul/packed_weights.py: 4-bit weights packed eight to an int32 word,
# their rows of words kept once per eight rows of k in the pipeline's ring.
# fp32 sums of the dots' products in another order: tol 1e-5.
F = "matmul/packed_weights.py"
CASES += [
    # M = 300: the last block's rows wrap (rm % M) and its stores are masked.
    case("packed_rows_matmul_64", F, "packed_rows_matmul",
         "a_ptr=*fp16:16, b_ptr=*i32:16, s_ptr=*fp16:16, c_ptr=*fp32:16, M=i32, N=i32:16, "
         "K=i32:16, BM=64, BN=64, BK=64, GROUP=64, STAGES=3",
         dict(a_ptr=("randn", "float16", 300 * 512), b_ptr=("randbits", "int32", 64 * 192),
              s_ptr=("uniform", "float16", 8 * 192, 0.01, 0.05), c_ptr=("zeros", "float32", 300 * 192),
              M=300, N=192, K=512),
         (cdiv(300, 64), 3), ["c_ptr"], tol=1e-5),
    case("packed_rows_matmul_128", F, "packed_rows_matmul",
         "a_ptr=*fp16:16, b_ptr=*i32:16, s_ptr=*fp16:16, c_ptr=*fp32:16, M=i32, N=i32:16, "
         "K=i32:16, BM=128, BN=128, BK=64, GROUP=128, STAGES=4",
         dict(a_ptr=("randn", "float16", 256 * 1024), b_ptr=("randbits", "int32", 128 * 256),
              s_ptr=("uniform", "float16", 8 * 256, 0.01, 0.05), c_ptr=("zeros", "float32", 256 * 256),
              M=256, N=256, K=1024),
         (2, 2), ["c_ptr"], tol=1e-5),
    # N = 192 of two 128-column tiles: the second's words and scales are
    # masked past N (the scales' row is copied into a ring with other=0).
    case("ragged_packed_rows_matmul", F, "ragged_packed_rows_matmul",
         "a_ptr=*fp16:16, b_ptr=*i32:16, s_ptr=*fp16:16, c_ptr=*fp32:16, M=i32, N=i32:16, "
         "K=i32:16, BM=64, BN=128, BK=64, GROUP=64",
         dict(a_ptr=("randn", "float16", 100 * 512), b_ptr=("randbits", "int32", 64 * 192),
              s_ptr=("uniform", "float16", 8 * 192, 0.01, 0.05), c_ptr=("zeros", "float32", 100 * 192),
              M=100, N=192, K=512),
         (cdiv(100, 64), 2), ["c_ptr"], tol=1e-5),
    # K = 1008: the last step has 48 of 64 rows (six words); K = 16, one
    # partial step (two words).
    *[case(f"masked_packed_rows_matmul_{K}", F, "masked_packed_rows_matmul",
           "a_ptr=*fp16:16, b_ptr=*i32:16, c_ptr=*fp32:16, M=i32, N=i32:16, K=i32:16, "
           "stride_am=i32:16, BM=64, BN=64, BK=64",
           dict(a_ptr=("randn", "float16", 200 * K), b_ptr=("randbits", "int32", K // 8 * 128),
                c_ptr=("zeros", "float32", 200 * 128), M=200, N=128, K=K, stride_am=K),
           (cdiv(200, 64), 2), ["c_ptr"], tol=1e-5) for K in (1008, 16)],
    case("packed_columns_matmul", F, "packed_columns_matmul",
         "a_ptr=*fp16:16, b_ptr=*i32:16, c_ptr=*fp32:16, M=i32, N=i32:16, K=i32:16, BM=64, BN=64, BK=32",
         dict(a_ptr=("randn", "float16", 128 * 256), b_ptr=("randbits", "int32", 256 * 16),
              c_ptr=("zeros", "float32", 128 * 128), M=128, N=128, K=256),
         (2, 2), ["c_ptr"], tol=1e-5),
    # GPTQ's zeros, unpacked and scaled as vectors: both vectors in rings.
    # q * s - z * s in fp16, contracted or not: tol 2e-3.
    case("packed_zeros_matmul", F, "packed_zeros_matmul",
         "a_ptr=*fp16:16, b_ptr=*i32:16, s_ptr=*fp16:16, z_ptr=*i32:16, c_ptr=*fp32:16, M=i32, "
         "N=i32:16, K=i32:16, BM=64, BN=256, BK=32, GROUP=128",
         dict(a_ptr=("randn", "float16", 300 * 512), b_ptr=("randbits", "int32", 64 * 512),
              s_ptr=("uniform", "float16", 4 * 512, 0.01, 0.05), z_ptr=("randbits", "int32", 4 * 64),
              c_ptr=("zeros", "float32", 300 * 512), M=300, N=512, K=512),
         (cdiv(300, 64), 2), ["c_ptr"], tol=2e-3),
]

# --- matmul/recurrent_state.py: a state carried through two dots whose
# operands are computed from it in the loop (the delta rule's chunks).
F = "matmul/recurrent_state.py"
CASES += [
    # k and w small (0.1), so that the state stays near the values' scale.
    case("delta_rule_state", F, "delta_rule_state",
         "k_ptr=*bf16:16, w_ptr=*bf16:16, v_ptr=*bf16:16, h_ptr=*bf16:16, v_new_ptr=*bf16:16, "
         "final_ptr=*fp32:16, T=i32, stride_t=i32:16, K=64, BV=32, BT=64",
         dict(k_ptr=("randn", "bfloat16", 200 * 64, 0.1), w_ptr=("randn", "bfloat16", 200 * 64, 0.1),
              v_ptr=("randn", "bfloat16", 200 * 32), h_ptr=("zeros", "bfloat16", 4 * 64 * 32),
              v_new_ptr=("zeros", "bfloat16", 200 * 32), final_ptr=("zeros", "float32", 64 * 32),
              T=200, stride_t=64),
         # fp32 sums in another order, rounded to bf16 each chunk (2^-8).
         (1,), ["h_ptr", "v_new_ptr", "final_ptr"], tol=2e-2),
    # Two halves of a 128-row state, the second w @ h accumulating the
    # first's result (staged and issued with it on sm_90a).
    case("delta_rule_state_halves", F, "delta_rule_state_halves",
         "k_ptr=*bf16:16, w_ptr=*bf16:16, v_ptr=*bf16:16, v_new_ptr=*bf16:16, final_ptr=*fp32:16, "
         "T=i32, stride_t=i32:16, BV=32, BT=64",
         dict(k_ptr=("randn", "bfloat16", 200 * 128, 0.1), w_ptr=("randn", "bfloat16", 200 * 128, 0.1),
              v_ptr=("randn", "bfloat16", 200 * 32), v_new_ptr=("zeros", "bfloat16", 200 * 32),
              final_ptr=("zeros", "float32", 128 * 32), T=200, stride_t=128),
         (1,), ["v_new_ptr", "final_ptr"], tol=2e-2),
]

# --- matmul/linear_attention.py: four tf32 dots an iteration over bf16
# tiles widened in the loop, one reading the carried state as its b
# (Lightning Attention-2's forward): pipelined on sm_90a, the state staged
# each iteration. T = 200: three whole blocks and a tail of 8 rows.
F = "matmul/linear_attention.py"
CASES += [
    case("decayed_linear_attention", F, "decayed_linear_attention",
         "q_ptr=*bf16:16, k_ptr=*bf16:16, v_ptr=*bf16:16, o_ptr=*bf16:16, decay=fp32, T=i32, "
         "D=128, E=32, BT=64",
         dict(q_ptr=("randn", "bfloat16", 200 * 128, 0.1), k_ptr=("randn", "bfloat16", 200 * 128, 0.1),
              v_ptr=("randn", "bfloat16", 200 * 32), o_ptr=("zeros", "bfloat16", 200 * 32),
              decay=0.05, T=200),
         # tf32 products summed in another order, rounded to bf16 (2^-8).
         (1,), ["o_ptr"], tol=2e-2),
]

# --- matmul/sector_sized.py: accesses in layouts of their own (an fp32
# accumulator's 16-byte stores, an fp32 tile copied 16 bytes a thread, b
# stored N x K read down its columns). Every edge masked: hdim = 100 of
# rows padded to 112, dstate = 192 (two 128-wide tiles), L = 200 (a tail of
# 8); M = 300, N = 100, K = 200 (a tail of 8); K = 80 of a 128-wide tile;
# split-K's atomically added partial tiles.
F = "matmul/sector_sized.py"
CASES += [
    case("decayed_state", F, "decayed_state",
         "x_ptr=*bf16:16, b_ptr=*bf16:16, out_ptr=*fp32:16, dt_ptr=*fp32:16, hdim=i32, dstate=i32, "
         "L=i32, stride_x_seq=i32:16, stride_x_hdim=i32:1, stride_b_seq=i32:16, stride_b_dstate=i32:1, "
         "stride_o_m=i32:16, stride_o_n=i32:1, BM=64, BN=128, BK=32",
         dict(x_ptr=("randn", "bfloat16", 200 * 112), b_ptr=("randn", "bfloat16", 200 * 192),
              out_ptr=("zeros", "float32", 100 * 192), dt_ptr=("uniform", "float32", 200),
              hdim=100, dstate=192, L=200, stride_x_seq=112, stride_x_hdim=1, stride_b_seq=192,
              stride_b_dstate=1, stride_o_m=192, stride_o_n=1),
         (2, 2), ["out_ptr"], tol=1e-2),  # b rounded to bf16 after exp
    case("scaled_rows_matmul", F, "scaled_rows_matmul",
         "cb_ptr=*fp32:16, x_ptr=*bf16:16, out_ptr=*fp32:16, dt_ptr=*fp32:16, M=i32, N=i32, K=i32, "
         "stride_cb=i32:16, stride_x=i32:16, stride_out=i32:16, BM=128, BN=64, BK=64",
         dict(cb_ptr=("randn", "float32", 300 * 208), x_ptr=("randn", "bfloat16", 200 * 112),
              out_ptr=("zeros", "float32", 300 * 112), dt_ptr=("uniform", "float32", 208),
              M=300, N=100, K=200, stride_cb=208, stride_x=112, stride_out=112),
         (cdiv(300, 128), 2), ["out_ptr"], tol=1e-2),  # cb rounded to bf16
    case("transposed_b_once", F, "transposed_b_once",
         "c_ptr=*bf16:16, s_ptr=*bf16:16, out_ptr=*fp32:16, M=i32, N=i32, K=i32:16, stride_c=i32:16, "
         "stride_s_n=i32:16, stride_out=i32:16, BM=64, BN=64, BK=128",
         dict(c_ptr=("randn", "bfloat16", 300 * 80), s_ptr=("randn", "bfloat16", 100 * 80),
              out_ptr=("zeros", "float32", 300 * 112), M=300, N=100, K=80, stride_c=80,
              stride_s_n=80, stride_out=112),
         (cdiv(300, 64), 2), ["out_ptr"], tol=1e-5),  # fp32 sums in another order
    # gk: decays of up to 0.5 a token (log2), so exp2 stays in (0, 1].
    case("decayed_keys_state", F, "decayed_keys_state",
         "k_ptr=*bf16:16, gk_ptr=*fp32:16, v_ptr=*bf16:16, h_ptr=*fp32:16, T=i32, stride_t=i32:16, "
         "BK=64, BV=64, BT=64",
         dict(k_ptr=("randn", "bfloat16", 200 * 64), gk_ptr=lambda torch, gen: -(
             torch.rand(200, 64, generator=gen, device="cuda") * 0.5).cumsum(0).reshape(-1),
              v_ptr=("randn", "bfloat16", 200 * 64), h_ptr=("zeros", "float32", 64 * 64), T=200,
              stride_t=64),
         (1,), ["h_ptr"], tol=1e-2),  # k scaled, rounded to bf16 after exp2
    # Partial tiles added atomically in whatever order the programs finish:
    # M = 300, N = 200, K = 1008 (the last step of each split partial).
    case("split_k_matmul_f32", F, "split_k_matmul",
         "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp32:16, M=i32, N=i32, K=i32:16, stride_a=i32:16, "
         "stride_b=i32:16, stride_c=i32:16, BM=128, BN=128, BK=64, SPLIT_K=4",
         dict(a_ptr=("randn", "float16", 300 * 1008), b_ptr=("randn", "float16", 1008 * 208),
              c_ptr=("zeros", "float32", 300 * 208), M=300, N=200, K=1008, stride_a=1008,
              stride_b=208, stride_c=208),
         (cdiv(300, 128), cdiv(200, 128), 4), ["c_ptr"], tol=1e-5),
    case("split_k_matmul_f16", F, "split_k_matmul",
         "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, M=i32, N=i32, K=i32:16, stride_a=i32:16, "
         "stride_b=i32:16, stride_c=i32:16, BM=64, BN=128, BK=64, SPLIT_K=3",
         dict(a_ptr=("randn", "float16", 300 * 1008), b_ptr=("randn", "float16", 1008 * 208),
              c_ptr=("zeros", "float16", 300 * 208), M=300, N=200, K=1008, stride_a=1008,
              stride_b=208, stride_c=208),
         (cdiv(300, 64), cdiv(200, 128), 3), ["c_ptr"], tol=5e-3),  # fp16 partial sums rounded
]

# --- matmul/row_major_8bit.py: 8-bit GEMMs with b stored K x N, restaged
# K-major for wgmma. K = 496: the last step has 48 of 64 rows (or 112 of
# 128); M = 200 wraps (rm % M). int8 exact. fp8: Triton's wgmma keeps
# fewer bits in its fp8 sums (its results end in zero bits) than mma.sync's
# fp32 ones, which plain sm_90 takes: 7.3e-4 apart there; tol 2e-3.
F = "matmul/row_major_8bit.py"
CASES += [
    *[case(f"row_major_int8_matmul_{bm}", F, "int8_matmul",
           f"a_ptr=*i8:16, b_ptr=*i8:16, c_ptr=*i32:16, M=i32, N=i32:16, K=i32:16, BM={bm}, BN={bm}, "
           f"BK={bm}" + (", num_stages=4" if bm == 128 else ""),
           dict(a_ptr=("randint", "int8", 200 * 496, -128, 128), b_ptr=("randint", "int8", 496 * 256, -128, 128),
                c_ptr=("zeros", "int32", 200 * 256), M=200, N=256, K=496),
           (cdiv(200, bm), 256 // bm), ["c_ptr"], tol=0) for bm in (64, 128)],
    case("row_major_fp8_matmul", F, "fp8_matmul",
         "a_ptr=*fp8e4nv:16, b_ptr=*fp8e4nv:16, c_ptr=*fp32:16, M=i32, N=i32:16, K=i32:16, BM=128, BN=64, BK=64",
         dict(a_ptr=("randn", "float8_e4m3fn", 200 * 496), b_ptr=("randn", "float8_e4m3fn", 496 * 192),
              c_ptr=("zeros", "float32", 200 * 192), M=200, N=192, K=496),
         (cdiv(200, 128), 3), ["c_ptr"], tol=2e-3),
]

# --- matmul/fp16_accumulator.py: fp16 sums on the tensor cores (gemlite's
# carried fp16 accumulator, SageAttention's fp16 step products). M = 200
# wraps (rm % M), K = 496 masks its last step. Inputs uniform in [-1, 1]:
# sums of about 7 in magnitude, whose fp16 steps are 2^-7. Equal to
# Triton's bit for bit on an H200, on sm_90a (wgmma) and on sm_90
# (mma.sync rounds each k-16 step as wgmma does); the bounds leave an ulp
# or two per step for other orders.
F = "matmul/fp16_accumulator.py"
CASES += [
    *[case(f"carried_fp16_matmul_{bm}", F, "carried_fp16_matmul",
           f"a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, M=i32, N=i32:16, K=i32:16, BM={bm}, BN={bm}, "
           f"BK={bk}, num_warps=4, num_stages={stages}",
           dict(a_ptr=("uniform", "float16", 200 * 496, -1.0, 1.0),
                b_ptr=("uniform", "float16", 496 * 256, -1.0, 1.0),
                c_ptr=("zeros", "float16", 200 * 256), M=200, N=256, K=496),
           (cdiv(200, bm), 256 // bm), ["c_ptr"], tol=0.05)
      for bm, bk, stages in ((128, 64, 4), (64, 32, 3))],
    case("fp16_steps_fp32_sum", F, "fp16_steps_fp32_sum",
         "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp32:16, M=i32, N=i32:16, K=i32:16, BM=128, BN=64, BK=64, "
         "num_warps=8, num_stages=3",
         dict(a_ptr=("uniform", "float16", 200 * 496, -1.0, 1.0),
              b_ptr=("uniform", "float16", 496 * 192, -1.0, 1.0),
              c_ptr=("zeros", "float32", 200 * 192), M=200, N=192, K=496),
         (cdiv(200, 128), 3), ["c_ptr"], tol=0.02),
    # Single tiles, inputs of about 1: fp16 sums of 64 products.
    case("batched_fp16_dot", F, "batched_fp16_dot",
         "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, B=4, M=32, N=64, K=64",
         dict(a_ptr=("uniform", "float16", 4 * 32 * 64, -1.0, 1.0),
              b_ptr=("uniform", "float16", 4 * 64 * 64, -1.0, 1.0),
              c_ptr=("zeros", "float16", 4 * 32 * 64)),
         (1,), ["c_ptr"], tol=0.02),
    case("thin_fp16_dot", F, "thin_fp16_dot",
         "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, M=8, N=64, K=64",
         dict(a_ptr=("uniform", "float16", 8 * 64, -1.0, 1.0),
              b_ptr=("uniform", "float16", 64 * 64, -1.0, 1.0),
              c_ptr=("zeros", "float16", 8 * 64)),
         (1,), ["c_ptr"], tol=0.02),
]

# --- matmul/thin_dots.py: M or N under 16 on the tensor cores (repeated up
# to 16). Inputs of about 1; fp32 sums of 64-128 products.
F = "matmul/thin_dots.py"


def thin(id, kernel, t, c, M, N, K, B=None, tol=1e-2, x=("uniform", -1.0, 1.0), extra=""):
    torch_t = {"fp16": "float16", "bf16": "bfloat16", "i8": "int8", "fp32": "float32",
               "fp8e5": "float8_e5m2"}
    b_ = B or 1
    sig = f"a_ptr=*{t}:16, b_ptr=*{t}:16, c_ptr=*{c}:16, " + (f"B={B}, " if B else "") + f"M={M}, N={N}, K={K}" + extra
    src = x if t != "i8" else ("randint", -8, 8)
    return case(id, F, kernel, sig,
                dict(a_ptr=(src[0], torch_t[t], b_ * M * K) + tuple(src[1:]),
                     b_ptr=(src[0], torch_t[t], b_ * K * N) + tuple(src[1:]),
                     c_ptr=("uniform", torch_t[c], b_ * M * N, -1.0, 1.0) if c != "i32"
                     else ("randint", "int32", b_ * M * N, -100, 100)),
                (1,), ["c_ptr"], tol=tol)


CASES += [
    thin("thin_dot_8x32_fp16", "thin_dot", "fp16", "fp32", 8, 32, 64),
    thin("thin_dot_4x128_bf16", "thin_dot", "bf16", "fp32", 4, 128, 64),
    thin("thin_dot_64x8_fp16", "thin_dot", "fp16", "fp32", 64, 8, 128),
    # int8: exact.
    thin("thin_dot_8x64_i8", "thin_dot_i8", "i8", "i32", 8, 64, 64, tol=0),
    # tf32 (the default precision) against upstream's tf32.
    thin("thin_dot_2x128_tf32", "thin_dot", "fp32", "fp32", 2, 128, 64),
    thin("thin_dot_f16_out", "thin_dot_f16_out", "fp16", "fp16", 8, 64, 128, tol=0.05),
    # Thin matrices of few products a thread go to the tensor cores too
    # (GGUF's decode GEMM step: 8 x 32 by 32 x 16 on 2 warps, its 8 rows held
    # twice in the mma tiles; 4 x 16 by 16 x 4 on 1, padded).
    thin("thin_dot_8x16_k32_w2", "thin_dot", "fp16", "fp32", 8, 16, 32, extra=", num_warps=2"),
    thin("thin_dot_4x4_k16_bf16_w1", "thin_dot", "bf16", "fp32", 4, 4, 16, extra=", num_warps=1"),
    # Of 8 rows the dot is not padded: its mma.sync tiles hold the rows
    # twice, its tiles copied ahead in a loop along K (a decode step's GEMM),
    # a row-major or column-major (ldmatrix.trans; tf32 element by element).
    thin("thin_loop_8x64_fp16_w2", "thin_dot_loop", "fp16", "fp32", 8, 64, 256,
         extra=", BK=32, A_COLUMNS=False, num_warps=2"),
    # 8 x 32 halves at 8 warps: 16-byte copies on a quarter of the threads.
    thin("thin_loop_8x16_fp16_w8", "thin_dot_loop", "fp16", "fp32", 8, 16, 256,
         extra=", BK=32, A_COLUMNS=False, num_warps=8"),
    thin("thin_loop_8x32_bf16_acols", "thin_dot_loop", "bf16", "fp32", 8, 32, 256,
         extra=", BK=64, A_COLUMNS=True"),
    thin("thin_loop_8x32_tf32_acols", "thin_dot_loop", "fp32", "fp32", 8, 32, 128,
         extra=", BK=32, A_COLUMNS=True"),
    thin("thin_loop_8x64_fp8e5", "thin_dot_loop", "fp8e5", "fp32", 8, 64, 256,
         extra=", BK=64, A_COLUMNS=False", tol=1e-3, x=("randn",)),
    # An 8-row p computed in registers feeds p @ v from shared memory (its
    # mma tiles hold the rows twice, which no register fragment takes).
    *[case(f"thin_chained_dots_{t}_w{w}", F, "thin_chained_dots",
           f"q_ptr=*{t}:16, k_ptr=*{t}:16, v_ptr=*{t}:16, o_ptr=*fp32:16, n=i32:16, "
           f"M=8, D=64, BN=32, num_warps={w}",
           dict(q_ptr=("uniform", torch_t, 8 * 64, -0.25, 0.25),
                k_ptr=("uniform", torch_t, 256 * 64, -0.25, 0.25),
                v_ptr=("uniform", torch_t, 256 * 64, -1.0, 1.0),
                o_ptr=("zeros", "float32", 8 * 64), n=256),
           (1,), ["o_ptr"], tol=tol)
      for t, torch_t, w, tol in (("fp16", "float16", 1, 1e-2), ("bf16", "bfloat16", 4, 2e-2),
                                 ("fp8e5", "float8_e5m2", 2, 0.1))],
    thin("thin_batched_dot", "thin_batched_dot", "fp16", "fp32", 4, 64, 64, B=2),
    # Batched dots thinner than the mma tile (M under 16, N under 8) are not
    # padded: the tiles hold them repeated. Warps along the batch, and
    # replicated ones (8 x 8 at 4 warps over 2 batches).
    thin("thin_batched_4x4_bf16_w1", "thin_batched_dot", "bf16", "fp32", 4, 4, 64, B=4,
         extra=", num_warps=1"),
    thin("thin_batched_8x8_fp16", "thin_batched_dot", "fp16", "fp32", 8, 8, 128, B=2),
    thin("thin_batched_16x4_tf32", "thin_batched_dot", "fp32", "fp32", 16, 4, 64, B=4),
    thin("thin_batched_2x64_i8", "thin_batched_dot_i8", "i8", "i32", 2, 64, 64, B=4, tol=0),
    thin("thin_batched_loop_4x4_bf16", "thin_batched_dot_loop", "bf16", "fp32", 4, 4, 256, B=16,
         extra=", BK=64"),
    thin("thin_batched_loop_4x2_fp16_w1", "thin_batched_dot_loop", "fp16", "fp32", 4, 2, 128, B=8,
         extra=", BK=64, num_warps=1"),
    # fp8 (widened to fp32 and multiplied as tf32, exact): Triton's fp8
    # products accumulate with fewer mantissa bits.
    thin("thin_batched_4x8_fp8e5_w1", "thin_batched_dot", "fp8e5", "fp32", 4, 8, 64, B=4,
         extra=", num_warps=1", tol=1e-3, x=("randn",)),
    # Matrix-vector products (M or N of 1) are multiplied and summed in the
    # operands' rank. Triton takes them on the tensor cores (the M = N = 1
    # one's fp32 operands as tf32): sums in another order.
    case("vector_dots", F, "vector_dots",
         "x_ptr=*bf16:16, y_ptr=*bf16:16, w_ptr=*bf16:16, rows_ptr=*fp32:16, cols_ptr=*fp32:16, "
         "total_ptr=*fp32:16, M=64, K=64, N=32",
         dict(x_ptr=("randn", "bfloat16", 64 * 64), y_ptr=("randn", "bfloat16", 64 * 64),
              w_ptr=("randn", "bfloat16", 64 * 32), rows_ptr=("zeros", "float32", 64),
              cols_ptr=("zeros", "float32", 32), total_ptr=("zeros", "float32", 1)),
         (1,), ["rows_ptr", "cols_ptr", "total_ptr"], tol=1e-2),
    case("batched_matvec", F, "batched_matvec",
         "a_ptr=*fp16:16, x_ptr=*fp16:16, c_ptr=*fp32:16, B=4, M=16, K=64",
         dict(a_ptr=("uniform", "float16", 4 * 16 * 64, -1.0, 1.0),
              x_ptr=("uniform", "float16", 4 * 64, -1.0, 1.0),
              c_ptr=("uniform", "float32", 4 * 16, -1.0, 1.0)),
         (1,), ["c_ptr"], tol=1e-2),
]

# --- matmul/transposed_accumulators.py: a dot's result transposed into the
# next dot's a, staged through the tile's transposed view.
F = "matmul/transposed_accumulators.py"
CASES += [
    case("transposed_accumulator_loop", F, "in_loop",
         "q_ptr=*bf16:16, k_ptr=*bf16:16, out_ptr=*bf16:16, n=i32, BT=64, D=128, num_warps=4, "
         "num_stages=2",
         dict(q_ptr=("uniform", "bfloat16", 4 * 64 * 128, -1.0, 1.0),
              k_ptr=("uniform", "bfloat16", 4 * 64 * 128, -1.0, 1.0),
              out_ptr=("zeros", "bfloat16", 64 * 128), n=4),
         (1,), ["out_ptr"], tol=2e-2),
    case("transposed_accumulator", F, "straight",
         "q_ptr=*bf16:16, k_ptr=*bf16:16, out_ptr=*bf16:16, BT=64, D=128, num_warps=4",
         dict(q_ptr=("uniform", "bfloat16", 64 * 128, -1.0, 1.0),
              k_ptr=("uniform", "bfloat16", 64 * 128, -1.0, 1.0),
              out_ptr=("zeros", "bfloat16", 64 * 128)),
         (1,), ["out_ptr"], tol=2e-2),
]

# --- matmul/chunk_gradients.py: three independent dots staged together, a
# tile's product summed whole where its elements are, decays computed in
# the accumulator's layout. T = 200: the last chunk is a tail of 8.
F = "matmul/chunk_gradients.py"
CASES += [
    case("chunk_gradients", F, "chunk_gradients",
         "q_ptr=*bf16:16, k_ptr=*bf16:16, v_ptr=*bf16:16, g_ptr=*fp32:16, h_ptr=*bf16:16, do_ptr=*bf16:16, "
         "dh_ptr=*bf16:16, dq_ptr=*bf16:16, dk_ptr=*bf16:16, dg_ptr=*fp32:16, T=i32, scale=fp32, K=64, V=64, BT=64",
         dict(q_ptr=("randn", "bfloat16", 200 * 64), k_ptr=("randn", "bfloat16", 200 * 64),
              v_ptr=("randn", "bfloat16", 200 * 64), g_ptr=lambda torch, gen: -(
                  torch.rand(200, generator=gen, device="cuda") * 0.1).cumsum(0),
              h_ptr=("randn", "bfloat16", 4 * 64 * 64, 0.1), do_ptr=("randn", "bfloat16", 200 * 64),
              dh_ptr=("randn", "bfloat16", 4 * 64 * 64, 0.1), dq_ptr=("zeros", "bfloat16", 200 * 64),
              dk_ptr=("zeros", "bfloat16", 200 * 64), dg_ptr=("zeros", "float32", 200), T=200,
              scale=0.125),
         # fp32 sums in another order; ds rounded to bf16 for its dots.
         (cdiv(200, 64),), ["dq_ptr", "dk_ptr", "dg_ptr"], tol=1e-2),
]

# --- language/bit_atomics_and_offsets.py: bitwise atomics on fp32 bits, a
# bool offset, tl.cat of int8 with uint8, a constexpr tuple as the shape.
F = "language/bit_atomics_and_offsets.py"
CASES += [
    # Each element's atomics are its own thread's, in program order: exact.
    case("float_bits", F, "float_bits",
         "x_ptr=*fp32, and_ptr=*fp32, or_ptr=*fp32, bits_ptr=*i32, i8_ptr=*i8, u8_ptr=*u8, "
         "sum_ptr=*i32, BLOCK=128",
         dict(x_ptr=("randn", "float32", 128), and_ptr=("randn", "float32", 128),
              or_ptr=("randn", "float32", 128), bits_ptr=("zeros", "int32", 256),
              i8_ptr=("randint", "int8", 16, -100, 100), u8_ptr=("natural", "uint8", 16),
              sum_ptr=("zeros", "int32", 1)),
         (1,), ["x_ptr", "and_ptr", "or_ptr", "bits_ptr", "sum_ptr"], tol=0),
    case("tuple_shape", F, "tuple_shape", "x_ptr=*fp32, out_ptr=*fp32, SHAPE=(8, 16)",
         dict(x_ptr=("randn", "float32", 128), out_ptr=("zeros", "float32", 128), SHAPE=(8, 16)),
         (1,), ["out_ptr"], tol=1e-6),
]

# --- language/tuples_and_types.py: tuples through loops and ifs, type
# introspection, tl.reduce_or, tl.bitonic_merge.
F = "language/tuples_and_types.py"
CASES += [
    # Sums in the same order on both sides, but sq + x * x may contract.
    case("moments_tuple_f32", F, "running_moments",
         "x_ptr=*fp32, out_ptr=*fp32, n_chunks=i32, BLOCK=64",
         dict(x_ptr=("randn", "float32", 5 * 64), out_ptr=("zeros", "float32", 2 * 64), n_chunks=5),
         (1,), ["out_ptr"], tol=1e-6),
    case("moments_tuple_f16", F, "running_moments",
         "x_ptr=*fp16, out_ptr=*fp32, n_chunks=i32, BLOCK=128",
         dict(x_ptr=("randn", "float16", 3 * 128), out_ptr=("zeros", "float32", 2 * 128), n_chunks=3),
         (1,), ["out_ptr"], tol=1e-6),
    case("moments_tuple_zero_trips", F, "running_moments",
         "x_ptr=*fp32, out_ptr=*fp32, n_chunks=i32, BLOCK=64",
         dict(x_ptr=("randn", "float32", 64), out_ptr=("full", "float32", 2 * 64, 5.0), n_chunks=0),
         (1,), ["out_ptr"], tol=0),
    case("halving_count_tuple", F, "halving_count", "x_ptr=*i32, out_ptr=*i32, BLOCK=32",
         dict(x_ptr=("randint", "int32", 32, -100000, 100000), out_ptr=("zeros", "int32", 32)),
         (1,), ["out_ptr"], tol=0),
    # Each path of the if/elif/else; t0 * t1 + ... may contract into an FMA.
    case("pick_pair_pos", F, "pick_pair", "x_ptr=*fp32, out_ptr=*fp32, mode=i32, BLOCK=64",
         dict(x_ptr=("randn", "float32", 64), out_ptr=("zeros", "float32", 128), mode=3),
         (1,), ["out_ptr"], tol=1e-6),
    case("pick_pair_neg", F, "pick_pair", "x_ptr=*fp32, out_ptr=*fp32, mode=i32, BLOCK=64",
         dict(x_ptr=("randn", "float32", 64), out_ptr=("zeros", "float32", 128), mode=-2),
         (1,), ["out_ptr"], tol=1e-6),
    case("pick_pair_zero", F, "pick_pair", "x_ptr=*fp32, out_ptr=*fp32, mode=i32, BLOCK=64",
         dict(x_ptr=("randn", "float32", 64), out_ptr=("zeros", "float32", 128), mode=0),
         (1,), ["out_ptr"], tol=1e-6),
    case("describe_types_f16", F, "describe_types", "x_ptr=*fp16, out_ptr=*i32, BLOCK=64",
         dict(x_ptr=("randn", "float16", 64), out_ptr=("zeros", "int32", 64)),
         (1,), ["out_ptr"], tol=0),
    case("describe_types_i8", F, "describe_types", "x_ptr=*i8, out_ptr=*i32, BLOCK=16",
         dict(x_ptr=("small", "int8", 16), out_ptr=("zeros", "int32", 16)),
         (1,), ["out_ptr"], tol=0),
    case("clamp_to_i16", F, "clamp_to_type", "x_ptr=*i32, out_ptr=*i16, BLOCK=64",
         dict(x_ptr=("randint", "int32", 64, -100000, 100000), out_ptr=("zeros", "int16", 64)),
         (1,), ["out_ptr"], tol=0),
    case("reduce_or_rows", F, "row_flags", "x_ptr=*i32, out_ptr=*i32, BM=8, BN=32",
         dict(x_ptr=lambda torch, gen: (torch.randint(0, 1 << 20, (8 * 32,), generator=gen,
                                                      device="cuda", dtype=torch.int32)
                                        & (1 << torch.randint(0, 20, (8 * 32,), generator=gen,
                                                              device="cuda", dtype=torch.int32))),
              out_ptr=("zeros", "int32", 8 + 32)),
         (1,), ["out_ptr"], tol=0),
    case("bitonic_merge_f32", F, "merge_rows",
         "x_ptr=*fp32, out_ptr=*fp32, BM=4, BN=64, DESCENDING=0",
         dict(x_ptr=("randn", "float32", 4 * 64), out_ptr=("zeros", "float32", 4 * 64)),
         (1,), ["out_ptr"], tol=0),
    case("bitonic_merge_i32_desc", F, "merge_rows",
         "x_ptr=*i32, out_ptr=*i32, BM=2, BN=16, DESCENDING=1",
         dict(x_ptr=("randint", "int32", 2 * 16), out_ptr=("zeros", "int32", 2 * 16)),
         (1,), ["out_ptr"], tol=0),
]

# --- language/gather_tables.py: tl.gather through shared memory.
F = "language/gather_tables.py"
CASES += [
    case("gather_tile_rows_f32", F, "gather_tile",
         "src_ptr=*fp32, idx_ptr=*i32, out_ptr=*fp32, BM=64, BN=64, BI=64, AXIS=1",
         dict(src_ptr=("randn", "float32", 64 * 64), idx_ptr=("index", "int32", 64 * 64, 64),
              out_ptr=("zeros", "float32", 64 * 64)),
         (1,), ["out_ptr"], tol=0),
    case("gather_tile_cols_f16_i64", F, "gather_tile",
         "src_ptr=*fp16, idx_ptr=*i64, out_ptr=*fp16, BM=128, BN=32, BI=64, AXIS=0",
         dict(src_ptr=("randn", "float16", 128 * 32), idx_ptr=("index", "int64", 64 * 32, 128),
              out_ptr=("zeros", "float16", 64 * 32)),
         (1,), ["out_ptr"], tol=0),
    # u8 indices up to 255: the table's last columns too.
    case("gather_tile_rows_i8_u8", F, "gather_tile",
         "src_ptr=*i8, idx_ptr=*u8, out_ptr=*i8, BM=32, BN=256, BI=128, AXIS=1",
         dict(src_ptr=("randbits", "int8", 32 * 256), idx_ptr=("index", "uint8", 32 * 128, 256),
              out_ptr=("zeros", "int8", 32 * 128)),
         (1,), ["out_ptr"], tol=0),
    case("gather_permute_bf16", F, "permute_vector",
         "src_ptr=*bf16, perm_ptr=*i32, out_ptr=*bf16, N=1024",
         dict(src_ptr=("randn", "bfloat16", 1024), perm_ptr=("perm", "int32", 1024),
              out_ptr=("zeros", "bfloat16", 1024)),
         (1,), ["out_ptr"], tol=0),
]

# --- language/functional_forms.py: tl.add/sub/mul, tl.philox_impl,
# tl.pair_uniform_to_normal, tl.range(disable_licm=).
F = "language/functional_forms.py"
CASES += [
    case("arith_functions_i32", F, "arithmetic_functions",
         "x_ptr=*i32, y_ptr=*i32, out_ptr=*i32, BLOCK=128",
         dict(x_ptr=("randbits", "int32", 128), y_ptr=("randbits", "int32", 128),
              out_ptr=("zeros", "int32", 3 * 128)),
         (1,), ["out_ptr"], tol=0),
    case("arith_functions_f32", F, "arithmetic_functions",
         "x_ptr=*fp32, y_ptr=*fp32, out_ptr=*fp32, BLOCK=64",
         dict(x_ptr=("randn", "float32", 64), y_ptr=("randn", "float32", 64),
              out_ptr=("zeros", "float32", 3 * 64)),
         (1,), ["out_ptr"], tol=0),
    # The key loaded, so that both sides type it as the counters.
    case("philox_impl_u32", F, "philox_rounds",
         "c_ptr=*u32, k_ptr=*u32, out_ptr=*u32, ROUNDS=10, BLOCK=128",
         dict(c_ptr=("randbits", "uint32", 128), k_ptr=("randbits", "uint32", 1),
              out_ptr=("zeros", "uint32", 4 * 128)),
         (1,), ["out_ptr"], tol=0),
    case("philox_impl_u64", F, "philox_rounds",
         "c_ptr=*u64, k_ptr=*u64, out_ptr=*u64, ROUNDS=6, BLOCK=64",
         dict(c_ptr=("randbits", "uint64", 64), k_ptr=("randbits", "uint64", 1),
              out_ptr=("zeros", "uint64", 4 * 64)),
         (1,), ["out_ptr"], tol=0),
    case("pair_uniform_to_normal", F, "normal_pairs", "u_ptr=*fp32, out_ptr=*fp32, BLOCK=128",
         dict(u_ptr=("uniform", "float32", 256, 0.0, 1.0), out_ptr=("zeros", "float32", 256)),
         (1,), ["out_ptr"], tol=1e-5),  # Box-Muller through log, sqrt, cos, sin approximations
    case("summed_rows_no_licm", F, "summed_rows", "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=128",
         dict(x_ptr=("randn", "float32", 7 * 128), out_ptr=("zeros", "float32", 128), n=7),
         (1,), ["out_ptr"], tol=0),
    case("summed_rows_while_condition", F, "summed_rows_while", "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=128",
         dict(x_ptr=("randn", "float32", 7 * 128), out_ptr=("zeros", "float32", 128), n=7),
         (1,), ["out_ptr"], tol=0),
    case("scalar_and_flags_i32", F, "scalar_and_flags", "x_ptr=*i32, out_ptr=*i32, BLOCK=64",
         dict(x_ptr=("small", "int32", 64), out_ptr=("zeros", "int32", 65)),
         (1,), ["out_ptr"], tol=0),
    case("scalar_and_flags_f32", F, "scalar_and_flags", "x_ptr=*fp32, out_ptr=*fp32, BLOCK=32",
         dict(x_ptr=("randn", "float32", 32), out_ptr=("zeros", "float32", 33)),
         (1,), ["out_ptr"], tol=0),
]

# --- language/constexpr_functions.py: constexpr functions as host Python.
F = "language/constexpr_functions.py"
CASES += [
    case("constexpr_fn_f32", F, "sized_copy", "x_ptr=*fp32, out_ptr=*fp32, n=i32, WANT=20",
         dict(x_ptr=("randn", "float32", 100), out_ptr=("zeros", "float32", 100), n=100),
         (cdiv(100, 32),), ["out_ptr"], tol=0),
    case("constexpr_fn_f16", F, "sized_copy", "x_ptr=*fp16, out_ptr=*fp16, n=i32, WANT=100",
         dict(x_ptr=("randn", "float16", 300), out_ptr=("zeros", "float16", 300), n=300),
         (cdiv(300, 128),), ["out_ptr"], tol=0),
]

# --- language/map_elementwise.py ---------------------------------------------
F = "language/map_elementwise.py"
CASES += [
    # exp on the negative branch: the same ex2.approx as Triton's.
    case("map_selu_fp32", F, "selu_kernel", "x_ptr=*fp32, out_ptr=*fp32, n=i32, alpha=fp32, BLOCK=1024",
         dict(x_ptr=("randn", "float32", 3000), out_ptr=("zeros", "float32", 3000), n=3000, alpha=1.6732632),
         (cdiv(3000, 1024),), ["out_ptr"], tol=1e-6),
    case("map_selu_fp16", F, "selu_kernel",
         "x_ptr=*fp16, out_ptr=*fp16, n=i32, alpha=fp32, BLOCK=512, num_warps=8",
         dict(x_ptr=("randn", "float16", 3000), out_ptr=("zeros", "float16", 3000), n=3000, alpha=1.6732632),
         (cdiv(3000, 512),), ["out_ptr"], tol=1e-3),
    # Per-element trip counts (up to a few hundred steps below 10000).
    case("map_collatz", F, "collatz_kernel", "x_ptr=*i32, out_ptr=*i32, n=i32, BLOCK=256",
         dict(x_ptr=("randint", "int32", 3000, 1, 10000), out_ptr=("zeros", "int32", 3000), n=3000),
         (cdiv(3000, 256),), ["out_ptr"], tol=0),
    case("map_sorted_pairs_fp16", F, "sorted_pairs",
         "a_ptr=*fp16, b_ptr=*fp16, lo_ptr=*fp16, hi_ptr=*fp16, n=i32, BLOCK=1024",
         dict(a_ptr=("randn", "float16", 3000), b_ptr=("randn", "float16", 3000),
              lo_ptr=("zeros", "float16", 3000), hi_ptr=("zeros", "float16", 3000), n=3000),
         (cdiv(3000, 1024),), ["lo_ptr", "hi_ptr"], tol=0),
    case("map_sorted_pairs_fp32", F, "sorted_pairs",
         "a_ptr=*fp32:16, b_ptr=*fp32:16, lo_ptr=*fp32:16, hi_ptr=*fp32:16, n=i32:16, BLOCK=256",
         dict(a_ptr=("randn", "float32", 4096), b_ptr=("randn", "float32", 4096),
              lo_ptr=("zeros", "float32", 4096), hi_ptr=("zeros", "float32", 4096), n=4000),
         (cdiv(4000, 256),), ["lo_ptr", "hi_ptr"], tol=0),
    case("map_two_results", F, "two_results", "x_ptr=*fp32, idx_ptr=*i32, out_ptr=*fp32, n=i32, BLOCK=128",
         dict(x_ptr=("randn", "float32", 3000), idx_ptr=("randint", "int32", 3000, -50, 50),
              out_ptr=("zeros", "float32", 3000), n=3000),
         (cdiv(3000, 128),), ["out_ptr"], tol=0),
]

# --- matmul/copied_operands.py: dot operands copied into their tiles with
# cp.async where they are loaded (read back elsewhere, one read as a
# transposed view), read-back rings of two- and three-stage loops. T = 200:
# the last chunk is a tail of 8.
F = "matmul/copied_operands.py"
CASES += [
    case("reread_operands", F, "reread_operands",
         "q_ptr=*bf16:16, k_ptr=*bf16:16, x_ptr=*fp32:16, s_ptr=*fp32, T=i32, BT=64, D=128",
         dict(q_ptr=("randn", "bfloat16", 200 * 128), k_ptr=("randn", "bfloat16", 200 * 128),
              x_ptr=("zeros", "float32", 200 * 64), s_ptr=("zeros", "float32", 4), T=200),
         (cdiv(200, 64),), ["x_ptr", "s_ptr"], tol=1e-3),
] + [
    case(f"decayed_state_s{stages}", F, "decayed_state",
         "k_ptr=*bf16:16, g_ptr=*fp32:16, v_ptr=*bf16:16, h_ptr=*fp32:16, T=i32, K=64, V=64, BT=64, "
         f"num_stages={stages}",
         dict(k_ptr=("randn", "bfloat16", 200 * 64),
              g_ptr=lambda torch, gen: -(torch.rand(200, 64, generator=gen, device="cuda") * 0.1)
              .cumsum(0).reshape(-1),
              v_ptr=("randn", "bfloat16", 200 * 64), h_ptr=("zeros", "float32", 64 * 64), T=200),
         # The gated keys are rounded to bf16 for the dot: exp2 may round
         # them one step apart.
         (1,), ["h_ptr"], tol=1e-2)
    for stages in (2, 3)
] + [
    case("summed_and_transposed", F, "summed_and_transposed",
         "q_ptr=*fp16:16, k_ptr=*fp16:16, dk_ptr=*fp32:16, s_ptr=*fp32, n=i32, num_stages=1",
         dict(q_ptr=("randn", "float16", 128 * 64), k_ptr=("randn", "float16", 64 * 64),
              dk_ptr=("zeros", "float32", 64 * 64), s_ptr=("zeros", "float32", 1), n=128),
         # s is rounded to fp16 for the second dot.
         (1,), ["dk_ptr", "s_ptr"], tol=1e-2),
]

# --- language/strings_and_shapes.py: a constexpr string's Python
# operations, tl.div_rn by a Python int, tl.reshape to (), tl.sort of
# booleans, a load whose mask is larger than its pointers.
F = "language/strings_and_shapes.py"
CASES += [
    # ' Leaky_ReLU ' -> 'leakyrelu': the leaky branch, doubled; 'gelu': erf.
    case(f"named_activation_{tag}", F, "named_activation",
         f"x_ptr=*fp32, out_ptr=*fp32, n=i32, ACT='{act}', BLOCK=128",
         dict(x_ptr=("randn", "float32", 300), out_ptr=("zeros", "float32", 300), n=300),
         (cdiv(300, 128),), ["out_ptr"], tol=1e-6)
    for tag, act in (("leaky", "Leaky_ReLU "), ("gelu", "gelu"))
] + [
    # div_rn is correctly rounded on both sides; the rest moves values.
    case("shapes_and_flags", F, "shapes_and_flags",
         "x_ptr=*fp32, out_ptr=*fp32, flags_ptr=*i32, col_ptr=*fp32, sum_ptr=*fp32",
         dict(x_ptr=("randn", "float32", 16), out_ptr=("zeros", "float32", 16),
              flags_ptr=("zeros", "int32", 16), col_ptr=("zeros", "float32", 64),
              sum_ptr=("zeros", "float32", 1)),
         (1,), ["out_ptr", "flags_ptr", "col_ptr", "sum_ptr"], tol=0),
] + [
    # f-string keys: 'relu_128' takes the maximum; 'gelu_64' scales by 9.
    case(f"formatted_names_{tag}", F, "formatted_names",
         f"x_ptr=*fp32, out_ptr=*fp32, n=i32, ACT='{act}', BLOCK={block}",
         dict(x_ptr=("randn", "float32", 300), out_ptr=("zeros", "float32", 300), n=300),
         (cdiv(300, block),), ["out_ptr"], tol=0)
    for tag, act, block in (("relu", "ReLU", 128), ("gelu", "gelu", 64))
] + [
    # A 64-bit multiplicative hash with uint64 constants: bitwise.
    case("hashed_keys", F, "hashed_keys", "x_ptr=*i64, out_ptr=*i64, n=i32, BLOCK=128",
         dict(x_ptr=("randbits", "int64", 300), out_ptr=("zeros", "int64", 300), n=300),
         (cdiv(300, 128),), ["out_ptr"], tol=0),
]

# --- matmul/copied_operands.py: one-stage attention, v copied at the
# iteration's top (n = 200: the last block of keys is a tail of 8).
CASES += [
    case("one_stage_attention", "matmul/copied_operands.py", "one_stage_attention",
         "q_ptr=*fp16:16, k_ptr=*fp16:16, v_ptr=*fp16:16, o_ptr=*fp32:16, n=i32, num_stages=1",
         dict(q_ptr=("randn", "float16", 64 * 64), k_ptr=("randn", "float16", 200 * 64),
              v_ptr=("randn", "float16", 200 * 64), o_ptr=("zeros", "float32", 64 * 64), n=200),
         # p is rounded to fp16 for the second dot; exp may differ in its
         # last bits.
         (1,), ["o_ptr"], tol=1e-2),
]

# --- matmul/chained_operands.py: a dot whose operand is another dot's fp32
# result (tf32), in the loop that makes it and from before the loop.
F = "matmul/chained_operands.py"
CASES += [
    *[case(f"dot_of_dot_{b}", F, "dot_of_dot",
           f"k_ptr=*bf16:16, w_ptr=*bf16:16, out_ptr=*fp32:16, NT=i32, BT={b}, BK={b}",
           dict(k_ptr=("randn", "bfloat16", 3 * b * b, 0.125),
                w_ptr=("randn", "bfloat16", 3 * b * b, 0.125),
                out_ptr=("zeros", "float32", b * b), NT=3),
           (1,), ["out_ptr"], tol=1e-2)  # tf32 products of products
      for b in (64, 32)],
    case("invariant_dot_operand", F, "invariant_dot_operand",
         "x_ptr=*fp32:16, z_ptr=*fp32:16, out_ptr=*fp32:16, N=i32, BT=64",
         dict(x_ptr=("randn", "float32", 64 * 64, 0.125), z_ptr=("randn", "float32", 5 * 64 * 64),
              out_ptr=("zeros", "float32", 5 * 64 * 64), N=5),
         (1,), ["out_ptr"], tol=1e-2),  # tf32
]

# --- matmul/vector_rings.py: float vectors copied with a loop's operand
# tiles into rings of their own and read back where they were loaded (a
# chunked scan's decays, at two and three stages), and attention
# backward's row statistics beside a column of scales of the carried
# accumulator, both kept in registers. T = 200: the last chunk is a tail
# of 8.
F = "matmul/vector_rings.py"
CASES += [
    case(f"decayed_chunk_state_s{stages}", F, "decayed_chunk_state",
         "x_ptr=*fp16:16, b_ptr=*fp16:16, g_ptr=*fp32:16, s_ptr=*fp32:16, gsum_ptr=*fp32:16, T=i32, "
         f"BN=64, BK=64, BT={bt}, num_stages={stages}",
         dict(x_ptr=("randn", "float16", 200 * 64), b_ptr=("randn", "float16", 200 * 64),
              g_ptr=lambda torch, gen: -torch.rand(200, generator=gen, device="cuda") * 2,
              s_ptr=("zeros", "float32", 64 * 64), gsum_ptr=("zeros", "float32", cdiv(200, bt)),
              T=200),
         # x * 2^g is rounded to fp16 for the dot.
         (1,), ["s_ptr", "gsum_ptr"], tol=1e-2)
    for stages, bt in ((2, 64), (3, 32))
] + [
    case("row_decayed_scores", F, "row_decayed_scores",
         "q_ptr=*fp16:16, k_ptr=*fp16:16, m_ptr=*fp32:16, w_ptr=*fp32:16, dk_ptr=*fp32:16, n=i32, "
         "num_stages=3",
         dict(q_ptr=("randn", "float16", 160 * 64, 0.125), k_ptr=("randn", "float16", 64 * 64, 0.125),
              m_ptr=("randn", "float32", 160), w_ptr=("uniform", "float32", 5 * 64),
              dk_ptr=("zeros", "float32", 64 * 64), n=160),
         # p is rounded to fp16 for the second dot.
         (1,), ["dk_ptr"], tol=1e-2),
]

# --- matmul/zero_tile_other.py: a K loop whose masked loads fill with a
# (1, 1) zero tile (FBGEMM's `other=_0`), staged by cp.async like
# `other=0.0`. K = 208: the last tile of K has 16 live columns of 32 (fp16)
# or 64 (fp8e5); M = 100 leaves a partial tile of rows.
F = "matmul/zero_tile_other.py"
CASES += [
    case(f"zero_tile_other_matmul_{name}", F, "zero_tile_other_matmul",
         f"A=*{ty}:16, B=*{ty}:16, C=*{out}:16, M=i32, N=i32:16, K=i32:16, stride_am=i32:16, stride_bk=i32:16, "
         f"stride_cm=i32:16, BM=64, BN=64, BK={bk}, num_stages=3",
         dict(A=("randn", torch_ty, 100 * 208), B=("randn", torch_ty, 208 * 128),
              C=("zeros", torch_out, 100 * 128), M=100, N=128, K=208, stride_am=208, stride_bk=128,
              stride_cm=128),
         (2, 2), ["C"], tol=2e-2)
    for name, ty, torch_ty, out, torch_out, bk in (
        ("fp16", "fp16", "float16", "fp16", "float16", 32),
        ("fp8e5", "fp8e5", "float8_e5m2", "bf16", "bfloat16", 64))
]

# --- matmul/nibble_select.py: a weight-only GEMM choosing each packed
# byte's low or high nibble with an `if` on the iteration (GGUF Q4_K's
# form), pipelined through the `if`; at 8 rows a thin dot padded to 16.
# M = 5 and 29: the rows past M are masked. K = 512.
F = "matmul/nibble_select.py"
CASES += [
    case(f"nibble_select_matmul_{bm}x{bn}", F, "nibble_select_matmul",
         "x_ptr=*fp16:16, q_ptr=*u8:16, s_ptr=*fp16:16, out_ptr=*fp32:16, M=i32, N=i32:16, K=i32:16, "
         f"BM={bm}, BN={bn}, num_warps={w}, num_stages={s}",
         dict(x_ptr=("randn", "float16", m * 512), q_ptr=("randbits", "uint8", 256 * 128),
              s_ptr=("uniform", "float16", 16 * 128, 0.01, 0.03), out_ptr=("zeros", "float32", m * 128),
              M=m, N=128, K=512),
         (1, 128 // bn), ["out_ptr"], tol=1e-2)
    for bm, bn, w, s, m in ((8, 16, 2, 2, 5), (32, 64, 4, 3, 29))
]
