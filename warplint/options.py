"""Everything that decides how a file is analysed; built by config.py and the CLI."""
from __future__ import annotations

from dataclasses import dataclass, field

from .languages import DEFAULT_EXTENSIONS


@dataclass
class Options:
    targets: list[str] | None = None  # e.g. ["sm_60", "sm_80"]; None: from the file, else default set
    select: list[str] | None = None  # rule ids/slugs/prefixes to run (None: all)
    ignore: list[str] = field(default_factory=list)
    report_possible: bool = True  # report "possible" findings at all
    possible_severity: str | None = None  # override level of possible findings (None: rule default)
    defines: dict[str, str] = field(default_factory=dict)  # CUDA-C -D
    include_paths: list[str] = field(default_factory=list)  # CUDA-C -I
    via_nvcc: bool = False
    nvcc: str = "nvcc"
    nvcc_auto: bool = False  # `--via-nvcc=auto`: compile only files the direct route could not analyse
    nvcc_flags: list[str] = field(default_factory=list)  # from the compile database (compdb.py)
    nvcc_timeout: float = 120.0  # seconds per compilation
    nvcc_jobs: int = 1  # compilations of one file (one per target) run at once
    library_findings: str = "drop"  # compiled code with no frame in the linted tree: "drop" | "keep"
    compdb: object = None  # compdb.CompileDatabase: per-file flags
    block_dim: tuple[int, int, int] | None = None  # None: 1-D, blockDim.x a multiple of 32
    work_bound: int = 200_000  # analysis steps per function before giving up with a note
    map_ptx_locations: bool = True  # report PTX findings at the .loc source line when present
    use_cache: bool = False  # reuse results of unchanged files (see cache.py); the CLI turns it on
    show_masks: bool = False  # also describe the masks of every warp primitive (`--show-masks`)
    extensions: tuple[str, ...] = DEFAULT_EXTENSIONS  # CUDA-C files and headers (see languages.py)


DEFAULT_TARGETS = ["sm_60", "sm_70"]  # one pre-Volta and one independent-thread-scheduling target
