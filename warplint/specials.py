"""PTX special registers, in one table: which names are special (never renamed, never a
user's variable) and over how many threads one value is shared, and the CUDA built-in
variables that read them."""
from __future__ import annotations

# how far one value is shared: "lane" (differs per lane), "warp", "block" (the same in a whole
# block), "time" (changes from one read to the next: clocks, counters)
_SCOPES: dict[str, str] = {}
for _scope, _names in {
    "lane": ["laneid", "tid", "lanemask_lt", "lanemask_le", "lanemask_eq", "lanemask_ge", "lanemask_gt"],
    "warp": ["warpid", "smid"],
    "block": ["ntid", "ctaid", "nctaid", "nsmid", "gridid", "nwarpid", "clusterid", "nclusterid",
              "cluster_ctaid", "cluster_nctaid", "cluster_ctarank", "cluster_nctarank",
              "is_explicit_cluster", "total_smem_size", "dynamic_smem_size", "aggr_smem_size",
              "reserved_smem_offset_begin", "reserved_smem_offset_end", "reserved_smem_offset_cap",
              "reserved_smem_offset_0", "reserved_smem_offset_1"]
             + [f"envreg{i}" for i in range(32)],
    "time": ["clock", "clock_hi", "clock64", "globaltimer", "globaltimer_lo", "globaltimer_hi"]
            + [f"pm{i}" for i in range(8)] + [f"pm{i}_64" for i in range(8)],
}.items():
    for _name in _names:
        _SCOPES[_name] = _scope

# CUDA's built-in variables: `threadIdx.x` reads `%tid.x`
CUDA_BUILTINS = {"threadIdx": "%tid", "blockIdx": "%ctaid", "blockDim": "%ntid", "gridDim": "%nctaid"}


def special_scope(name: str) -> str | None:
    """The scope of special register `name` (`%tid.x`, `%lanemask_lt`, `WARP_SZ`), else None."""
    if name == "WARP_SZ":
        return "block"
    if not name.startswith("%"):
        return None
    return _SCOPES.get(name[1:].split(".", 1)[0])


def is_special(name: str) -> bool:
    return special_scope(name) is not None
