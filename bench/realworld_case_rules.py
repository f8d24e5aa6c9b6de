"""What every batch of real-world cases shares (bench/realworld_cases.py
says what a case is): the case constructor, the sample roots, and input
makers for values a plain random tensor does not model."""

TRL = "tests/realworld/"
TUT = "tests/realworld/tutorials/python/tutorials/"
LIGER_ROOT = "tests/realworld/liger/src"
LIGER = LIGER_ROOT + "/liger_kernel/ops/"
SMS = 132  # the H100/H200 SM count, as the hosts' sm_count grids use it


def cdiv(a, b):
    return (a + b - 1) // b


def strides(*shape):
    """A contiguous tensor's strides."""
    out, step = [], 1
    for size in reversed(shape):
        out.insert(0, step)
        step *= size
    return out


def cached(build):
    """One build shared by the inputs that read parts of it: name -> a
    make_input callable (torch, gen) for that part. Each build draws from
    its own seeded generator on the case generator's device."""
    built = {}

    def part(name):
        def make(torch, gen):
            if not built:
                g = torch.Generator(device=gen.device).manual_seed(1)
                built.update(build(torch, g, gen.device))
            return built[name]
        return make
    return part


def case(id, file, kernel, sig, args, grid, outputs, bytes, tol, **rules):
    if file.startswith(LIGER_ROOT + "/"):
        rules.setdefault("package", LIGER_ROOT)
        # The host helpers its module-level `if compare_version("triton",
        # ...) and not is_npu_available():` runs to choose libdevice.
        rules.setdefault("srcs", [LIGER + "utils.py", LIGER_ROOT + "/liger_kernel/utils.py"])
    return dict(id=id, file=file, kernel=kernel, sig=sig, args=args, grid=tuple(grid),
                outputs=list(outputs), bytes=bytes, tol=tol, **rules)


def fp8_e4m3(numel, std):
    """fp8 (e4m3) values as a per-block quantization to the full range makes
    them: randn * std, clamped to +-448 (torch's cast gives NaN from 480)."""
    return lambda torch, gen: ((torch.randn(numel, generator=gen, device="cuda") * std)
                               .clamp(-448, 448).to(torch.float8_e4m3fn))


def decay_cumsum(rows, length, step):
    """Mamba's dA_cumsum: the running sum along each chunk of dt * A, a decay
    of up to `step` per token (A < 0), so 0 > dA_cumsum, decreasing."""
    return lambda torch, gen: -(torch.rand(rows, length, generator=gen, device="cuda") * step).cumsum(-1).reshape(-1)


def moe_routing(M, E, topk, BM, seed=1, em=None):
    """moe_align_block_size's outputs for M tokens each routed to `topk`
    distinct random experts: sorted_token_ids (pair ids t * topk + j grouped
    by expert, each group padded with M * topk to a multiple of BM; sized
    `em`, by default M * topk + E * (BM - 1) as vLLM allocates it),
    expert_ids (one a block; 0 past the last real block, which the kernel
    never reads), num_tokens_post_padded, and fp32 topk_weights."""
    built = {}
    em = em or M * topk + E * (BM - 1)

    def build(torch):
        if not built:
            gen = torch.Generator(device="cuda").manual_seed(seed)
            ids = torch.rand(M, E, generator=gen, device="cuda").argsort(dim=1)[:, :topk].reshape(-1)
            counts = torch.bincount(ids, minlength=E)
            padded = (counts + BM - 1) // BM * BM
            starts = torch.cumsum(padded, 0) - padded
            cstarts = torch.cumsum(counts, 0) - counts
            order = torch.argsort(ids, stable=True)
            expert_of = ids[order]
            rank = torch.arange(M * topk, device="cuda") - cstarts[expert_of]
            sorted_ids = torch.full((em,), M * topk, dtype=torch.int32, device="cuda")
            sorted_ids[starts[expert_of] + rank] = order.to(torch.int32)
            expert_ids = torch.zeros(cdiv(em, BM), dtype=torch.int32, device="cuda")
            blocks = torch.repeat_interleave(torch.arange(E, device="cuda", dtype=torch.int32), padded // BM)
            expert_ids[:blocks.numel()] = blocks
            built.update(sorted=sorted_ids, experts=expert_ids,
                         post=padded.sum().reshape(1).to(torch.int32),
                         weights=torch.rand(M * topk, generator=gen, device="cuda"))
        return built
    return em, (lambda name: (lambda torch, gen: build(torch)[name]))
