"""Running deep work on a stack of its own: a new thread, optionally with a stack size set.

Python counts recursion per thread, and native code (llguidance's Rust parser builder)
recurses on the thread's C stack, whose size is fixed when the thread starts. So work whose
depth follows its input runs here: the caller's depth does not matter, and native recursion
gets a stack many times what the input limits allow (:mod:`.grammar_gate`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["on_fresh_stack"]

T = TypeVar("T")

# threading.stack_size is process-wide state read when a thread starts: set it, start the
# thread, restore it, one caller at a time.
_STACK_SIZE_LOCK = threading.Lock()


def on_fresh_stack(
    work: Callable[[], T], *, stack_bytes: int | None = None, name: str = "harmony-grammar"
) -> T:
    """``work()`` run in a new thread, its exception re-raised here.

    ``stack_bytes`` sizes the new thread's stack (address space reserved, touched only as
    used); None keeps the platform's default.
    """
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append((True, work()))
        except BaseException as exc:  # handed back to the caller's thread as it is
            outcome.append((False, exc))

    thread = threading.Thread(target=run, name=name)
    if stack_bytes is None:
        thread.start()
    else:
        with _STACK_SIZE_LOCK:
            previous = threading.stack_size(stack_bytes)
            try:
                thread.start()
            finally:
                threading.stack_size(previous)
    thread.join()
    ok, value = outcome[0]
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]
