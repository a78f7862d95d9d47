"""Which front end reads a file, from its extension and, where that does not say, its text.

- `.ptx` is PTX.
- The CUDA extensions (configuration `extensions`; default `DEFAULT_EXTENSIONS`) are CUDA-C.  Of
  them, `.cu`/`.cuh` are always analysed; a header (`.h`, `.hpp`, `.inl`, ...) is analysed only
  when its text holds device code or a warp primitive (`has_device_code`): a plain C/C++ header
  is "no warp code", quietly, so that walking a C++ tree gives no noise.
- A file named with any other extension is PTX only when its text is PTX (`looks_like_ptx`),
  else CUDA-C read like a header.  A header is never read as PTX.
"""
from __future__ import annotations

import re

PTX_EXTENSIONS = (".ptx",)
SOURCE_EXTENSIONS = (".cu", ".cuh")  # CUDA translation units and CUDA headers: always analysed
HEADER_EXTENSIONS = (".h", ".hh", ".hpp", ".hxx", ".inl", ".inc", ".ipp", ".tcc")
DEFAULT_EXTENSIONS = SOURCE_EXTENSIONS + HEADER_EXTENSIONS

# Patterns, compiled on first use (re's cache): linting a .cu or .ptx file needs none of them.
# device code or warp code spelled out in the text (qualifiers, memory spaces, launches,
# primitives, inline asm, cooperative groups); macros that hide all of them are not seen
_DEVICE_CODE = (
    r"__(?:global|device|shared|constant|launch_bounds)__|<<<|\b__(?:shfl|ballot|any|all|uni|match_|reduce_"
    r"|activemask|syncwarp|syncthreads|barrier_sync)\w*\s*\(|\b(?:asm|__asm__)\b|cooperative_groups"
    r"|\b(?:tiled_partition|coalesced_threads|labeled_partition|binary_partition)\b"
    r"|\b(?:threadIdx|blockIdx|blockDim)\b")
_COMMENT = r"(?s)//[^\n]*|/\*.*?\*/"
_PTX_DIRECTIVE = r"(?m)^\s*\.(?:version|target|address_size|entry|visible|func)\b"


def has_device_code(text: str) -> bool:
    """Device code outside comments (a C++ header that mentions threadIdx in a comment has none)."""
    m = re.search(_DEVICE_CODE, text)
    return m is not None and re.search(_DEVICE_CODE, re.sub(_COMMENT, " ", text)) is not None


def looks_like_ptx(text: str) -> bool:
    """PTX: a `.version`/`.target`/`.entry`/`.func` directive at the start of a line, and no
    preprocessor directive before it (a C header that mentions PTX in a comment is not PTX)."""
    m = re.search(_PTX_DIRECTIVE, text)
    return m is not None and re.search(r"^\s*#\s*(?:include|define|if|pragma)", text[:m.start()], re.M) is None


def language(path: str, text: str, extensions=DEFAULT_EXTENSIONS) -> str | None:
    """"ptx", "cuda", or None: no device code to analyse (a plain header)."""
    if path.endswith(PTX_EXTENSIONS):
        return "ptx"
    if path.endswith(SOURCE_EXTENSIONS):
        return "cuda"
    if not path.endswith(tuple(extensions)) and looks_like_ptx(text):
        return "ptx"
    return "cuda" if has_device_code(text) else None


def is_lintable(name: str, extensions=DEFAULT_EXTENSIONS) -> bool:
    """Does a directory walk pick up a file of this name?"""
    return name.endswith(PTX_EXTENSIONS + tuple(extensions))
