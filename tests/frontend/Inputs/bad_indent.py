import triton

@triton.jit
def kernel(x_ptr):
        x = 1
    return
