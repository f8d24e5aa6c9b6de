# A package whose kernels import helpers three and four packages up, as the
# fifteenth real-world sample's XMA (`from ....triton_utils import matmul`).
