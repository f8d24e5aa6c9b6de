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


def case(id, file, kernel, sig, args, grid, outputs, bytes, tol, **rules):
    if file.startswith(LIGER_ROOT + "/"):
        rules.setdefault("package", LIGER_ROOT)
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
