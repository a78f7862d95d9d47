"""Reading files the user named or that lie in the linted tree: regular files only, size-capped,
and no call that can block (a FIFO, a device or a socket is refused before it is read)."""
from __future__ import annotations

import os
import stat

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


class InputFileError(Exception):
    """The file cannot be read as input; the message says why (no path in it)."""


def kind_of(mode: int) -> str:
    """'a FIFO', 'a character device', ... for a non-regular file's mode."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def not_regular(path: str, *, follow_symlinks: bool = True) -> str | None:
    """Why `path` is not a regular file ('a FIFO', ...), or None when it is one (or is missing)."""
    try:
        mode = os.stat(path, follow_symlinks=follow_symlinks).st_mode
    except (OSError, ValueError):
        return None
    return None if stat.S_ISREG(mode) else kind_of(mode)


def read_regular(path: str, max_bytes: int, *, follow_symlinks: bool = True) -> bytes:
    """The bytes of a regular file of at most `max_bytes`.  Non-regular files are refused by a
    stat before they are opened and by an fstat after (the file may be swapped in between); the
    open is non-blocking, so a FIFO put there meanwhile cannot hang the run."""
    kind = not_regular(path, follow_symlinks=follow_symlinks)
    if kind:
        raise InputFileError(f"not a regular file ({kind})")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow_symlinks:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except (OSError, ValueError) as e:
        raise InputFileError(f"cannot read file: {getattr(e, 'strerror', None) or e}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputFileError(f"not a regular file ({kind_of(st.st_mode)})")
        if st.st_size > max_bytes:
            raise InputFileError(f"file is {st.st_size} bytes; the limit is {max_bytes}")
        chunks, size = [], 0
        while size <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > max_bytes:  # it grew while being read
            raise InputFileError(f"file is more than {max_bytes} bytes; the limit is {max_bytes}")
        return b"".join(chunks)
    except OSError as e:
        raise InputFileError(f"cannot read file: {e.strerror or e}") from None
    finally:
        os.close(fd)
