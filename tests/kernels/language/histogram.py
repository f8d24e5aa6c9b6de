# tl.histogram (native-sparse-attention's block counts): how many of a
# block's elements equal each bin 0 .. num_bins-1, with and without a mask;
# small ones by comparison, larger ones (bins x elements past 8192) with
# shared-memory atomics.
#
# kiln-variant: -n bin_counts -s "x_ptr=*i32, out_ptr=*i32, n=i32, BLOCK=256, BINS=16"
# kiln-variant: -n bin_counts -s "x_ptr=*i32, out_ptr=*i32, n=i32, BLOCK=1024, BINS=64"
# kiln-variant: -n bin_counts -s "x_ptr=*i32, out_ptr=*i32, n=i32, BLOCK=2048, BINS=256"
# kiln-covers: bin_counts: tl.histogram
import triton
import triton.language as tl


@triton.jit
def bin_counts(x_ptr, out_ptr, n, BLOCK: tl.constexpr, BINS: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    bins = tl.arange(0, BINS)
    tl.store(out_ptr + bins, tl.histogram(x, BINS))
    tl.store(out_ptr + BINS + bins, tl.histogram(x, BINS, mask=offs < n))
    tl.store(out_ptr + 2 * BINS + bins, (x // 2).histogram(BINS))
