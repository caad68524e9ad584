"""The command line's rule for output paths: an output may not be one of the command's inputs,
and every file a command reads is an input, also the ones it finds by itself (the ``.query``
sizes beside a data file).

How an output is then written is ``svmmap._files.text.write_atomic``'s rule (``rust/atomic.rs``):
a regular file reached by its name is replaced atomically; anything else (a pipe, a terminal,
``/dev/stdout`` whatever it is open on) is written in place.
"""

from __future__ import annotations

from typing import Iterable, List, Optional, Tuple

__all__ = ["same_file", "refuse_overwriting_inputs", "data_inputs", "wrote", "written", "forget_written"]

#: The outputs the running command has written completely, in order (see ``wrote``).
_WRITTEN: List[str] = []


def same_file(a: str, b: str) -> bool:
    """Whether two paths name one file (same device and inode: through symbolic and hard links)."""
    import os

    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def refuse_overwriting_inputs(out_label: str, out: str, inputs: Iterable[tuple]) -> None:
    """An output path that is one of the inputs would replace the input with the output (the
    atomic write succeeds, and the input is gone): refuse before any work is done. So is an
    output that cannot be written at all, into a folder that does not exist, onto a folder or
    into a folder where no file can be created: found only when the output was written, it
    cost the whole training or classification (with the message the atomic write gives, which
    names the folder)."""
    import errno
    import os

    from .._files.text import path_name

    # The atomic write's rule of names, before the work: a name that is not UTF-8 used to be
    # refused only when the trained model was written.
    path_name(out, out_label, writing=True)
    folder = os.path.dirname(out) or "."
    if os.path.isdir(out):
        raise IsADirectoryError(errno.EISDIR, f"{out_label} is a folder; give a file path", out)
    if not os.path.isdir(folder):
        if os.path.exists(folder):
            raise NotADirectoryError(errno.ENOTDIR, f"'{folder}' is not a folder", out)
        raise FileNotFoundError(errno.ENOENT, f"the folder '{folder}' does not exist", out)
    _check_writable(out)
    for label, path in inputs:
        if same_file(out, path):
            same = "" if out == path else f" (the same file as {label} {path!r})"
            raise ValueError(
                f"{out_label} {out!r} is the input {label}{same}; refusing to overwrite an input: give another output path"
            )


def _check_writable(out: str) -> None:
    """Refuses an output whose folder takes no new file, as the atomic write would after the
    work (it creates its temporary file beside the target): a file is created there and
    removed at once, which answers for root, read-only file systems and access lists alike
    (``os.access`` answers by the mode bits, and yes to root). A device, a FIFO or a
    descriptor (``/dev/stdout``) is written in place, not replaced, and is not checked."""
    import errno
    import os
    import tempfile

    if os.path.exists(out) and not os.path.isfile(out):
        return
    real = os.path.realpath(out)
    if out.startswith("/dev/") or real.startswith("/proc/"):
        return
    # The target of a symbolic link is replaced, so its folder is the one written in.
    folder = os.path.dirname(real) or "."
    try:
        fd, probe = tempfile.mkstemp(prefix=".svmmap-writable-", dir=folder)
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EPERM):
            why = f"no permission to create a file in the folder '{folder}'"
        else:
            why = f"cannot create a file in the folder '{folder}': {exc.strerror}"
        # The atomic write's words (rust/atomic.rs), with the OS error's number and the user's path.
        raise type(exc)(exc.errno, why, out) from None
    os.close(fd)
    os.unlink(probe)


def data_inputs(label: str, path: str, group: Optional[str] = None) -> List[Tuple[str, str]]:
    """The files ``load_letor(path, group=group)`` reads, labelled for messages: the data file
    and its file of query sizes (``--group``, or the ``<path>.query`` it finds by itself)."""
    from ..io import group_file

    inputs = [(label, path)]
    sizes = group_file(path, group)
    if sizes is not None:
        inputs.append(("--group" if group is not None else f"{label}'s query sizes", sizes))
    return inputs


def wrote(path: str) -> None:
    """Records that the command has written ``path`` completely, so that an interrupt after it
    (classify's final evaluation) is reported with what was written, not as "nothing"."""
    _WRITTEN.append(path)


def written() -> List[str]:
    """The outputs written so far by the running command."""
    return list(_WRITTEN)


def forget_written() -> None:
    """Starts a command's record of its outputs afresh."""
    _WRITTEN.clear()
