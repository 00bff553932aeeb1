"""Ctrl-C during a compilation: delivered once the compilation is done.

Numba compiles through LLVM, which calls back into Python through ctypes.  A
``KeyboardInterrupt`` raised inside such a callback cannot leave it: Python
prints "Exception ignored on calling ctypes callback function", the
compilation goes on and the interrupt is lost.  An interrupt that lands
elsewhere in Numba's compiler leaves a half-built dispatcher behind.

:func:`interrupts_deferred` wraps a compilation: on the main thread it
replaces the SIGINT handler for its duration by one that only records the
signal, then restores the handler and, if a SIGINT came, calls it (by default
raising ``KeyboardInterrupt``) as if the signal had just arrived.  A
compilation takes seconds at most, and the cast that waits for it is
interrupted before any of its work is returned.
"""

import contextlib
import signal
import threading


@contextlib.contextmanager
def interrupts_deferred():
    """Hold SIGINT back while the block runs; deliver it afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signals are delivered to the main thread only
        return
    try:
        previous = signal.getsignal(signal.SIGINT)
    except ValueError:  # no signal support in this interpreter
        yield
        return
    if not callable(previous):  # SIG_IGN, SIG_DFL or a handler set outside Python: leave them be
        yield
        return
    received = []

    def record(signum, frame):
        received.append(frame)

    signal.signal(signal.SIGINT, record)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if received:
            previous(signal.SIGINT, received[0])
