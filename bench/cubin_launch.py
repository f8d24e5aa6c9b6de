"""Launching kilnc's cubins from Python through the CUDA driver (ctypes), for
the benches that time them beside Triton: load a cubin and its metadata,
pack the entry point's arguments, launch on torch's current stream."""
import ctypes
import json
import os


def pack_arguments(meta, values):
    """The kernel-parameter array (holders, void* array) for `values` (name
    -> Python value) in the order of `meta` (a cubin's JSON metadata); `:1`
    parameters are checked, not passed. Needs no CUDA: the benches' dry runs
    call it alone."""
    holders = []
    for p in meta["params"]:
        value = values[p["name"]]
        if p.get("equal_to_1"):
            assert value == 1, p["name"]
            continue
        if p["type"].startswith("*"):
            holders.append(ctypes.c_uint64(value))
        elif p["type"] == "fp32":
            holders.append(ctypes.c_float(value))
        elif p["type"] in ("i64", "u64"):
            holders.append(ctypes.c_int64(value))
        else:
            holders.append(ctypes.c_int32(value))
    pointers = (ctypes.c_void_p * len(holders))(
        *[ctypes.cast(ctypes.byref(h), ctypes.c_void_p) for h in holders])
    return holders, pointers


class Cubin:
    """NAME.cubin and NAME.json of DIRECTORY, loaded into the current
    context. `shared` is the dynamic shared memory every launch requests
    (opted in past 48 KiB)."""

    def __init__(self, cuda, directory, name):
        self.cuda = cuda
        self.meta = json.load(open(os.path.join(directory, name + ".json")))
        self.module, self.fn = ctypes.c_void_p(), ctypes.c_void_p()
        image = open(os.path.join(directory, name + ".cubin"), "rb").read()
        assert cuda.cuModuleLoadData(ctypes.byref(self.module), image) == 0
        assert cuda.cuModuleGetFunction(ctypes.byref(self.fn), self.module, self.meta["entry"].encode()) == 0
        self.shared = self.meta["shared_bytes"]
        if self.shared > 48 * 1024:  # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            assert cuda.cuFuncSetAttribute(self.fn, 8, self.shared) == 0

    def arguments(self, values):
        """The kernel-parameter array for `values` (name -> Python value),
        in the metadata's order; `:1` parameters are checked, not passed."""
        return pack_arguments(self.meta, values)

    def launch(self, grid, arguments, stream):
        """Launches on `stream` (a CUstream handle) with `arguments` from
        arguments(); grid is (x, y, z) or fewer."""
        x, y, z = (tuple(grid) + (1, 1))[:3]
        assert self.cuda.cuLaunchKernel(self.fn, x, y, z, 32 * self.meta["num_warps"], 1, 1, self.shared,
                                        ctypes.c_void_p(stream), arguments[1], None) == 0

    def unload(self):
        self.cuda.cuModuleUnload(self.module)
