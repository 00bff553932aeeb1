"""Names for numbacast's kernels in Linux ``perf`` profiles.

``perf`` shows code that Numba compiled at run time as bare addresses; it
names such code from a map file, ``/tmp/perf-<pid>.map`` (one line per
function: start address, size, name, in hexadecimal), which the process
being profiled writes.  ::

    perf record -F 2000 -- python -m benchmarks.harness.perf_map float8e4m3fn --rounding stochastic
    perf report --no-children --sort symbol

runs one cast (or ``mx:FORMAT``, one ``numbacast.mx.quantize``) again and
again for ``--seconds``, after writing the map of every function of the
kernels it compiled.  It compiles them in a fresh cache directory: a kernel
loaded from the disk cache has no record of its functions' names.  The
names are the start of Numba's mangled names, readable enough (``_block``,
``_fast_run``, ``__numba_parfor_gufunc`` for the body of a ``prange`` loop);
a function LLVM inlined has no name of its own.
"""

import argparse
import atexit
import os
import shutil
import sys
import tempfile
import time

#: Characters of a mangled name kept in the map: the module path and the function's name.
NAME_LENGTH = 120


def compiled_functions(dispatchers):
    """``(address, name)`` of every function defined in the compiled code of
    ``dispatchers`` (Numba dispatchers), by address, without repeats."""
    functions = set()
    for dispatcher in dispatchers:
        for result in dispatcher.overloads.values():
            library = result.library
            module = getattr(library, "_final_module", None)
            if module is None:  # loaded from the disk cache: no names
                continue
            for function in module.functions:
                if function.is_declaration:
                    continue
                address = library.get_pointer_to_function(function.name)
                if address:
                    functions.add((address, function.name))
    return sorted(functions)


#: Bytes a function is taken to span at most: Numba gives each compiled
#: module its own memory, so the last function of one may be followed by
#: unrelated code, and its size is not recorded.
LONGEST = 1 << 16


def map_lines(functions):
    """The lines of a perf map for ``functions`` (``(address, name)`` by
    address): each spans up to the next one's address, :data:`LONGEST`
    bytes at most."""
    lines = []
    for i, (address, name) in enumerate(functions):
        following = functions[i + 1][0] if i + 1 < len(functions) else address + LONGEST
        lines.append(f"{address:x} {min(following - address, LONGEST):x} {name[:NAME_LENGTH]}")
    return lines


def numbacast_dispatchers():
    """Every compiled dispatcher of numbacast's modules imported so far, and their serial twins."""
    from numba.core.registry import CPUDispatcher

    from numbacast.engine import cache

    found = []
    for name, module in list(sys.modules.items()):
        if name.startswith("numbacast.") and module is not None:
            found += [value for value in vars(module).values() if isinstance(value, CPUDispatcher)]
    return found + list(cache._SERIAL_TWINS.values())


def write_perf_map(path=None):
    """Write the perf map of the kernels compiled so far in this process
    (to ``/tmp/perf-<pid>.map`` by default); returns its path."""
    path = path or f"/tmp/perf-{os.getpid()}.map"
    with open(path, "w") as out:
        out.write("".join(line + "\n" for line in map_lines(compiled_functions(numbacast_dispatchers()))))
    return path


def _call(target, rounding, size):
    import numpy as np

    import numbacast

    x = np.random.default_rng(0).standard_normal(size).astype(np.float32)
    if target.startswith("mx:"):
        from numbacast import mx

        return lambda: mx.quantize(x, target[3:], rounding=rounding)
    options = {"rounding": rounding, "seed": 1} if rounding == "stochastic" else {"rounding": rounding}
    out = numbacast.cast(x, target, **options)
    return lambda: numbacast.cast(x, target, out=out, **options)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", help="a numbacast type name, or mx:FORMAT for numbacast.mx.quantize")
    parser.add_argument("--rounding", default="nearest_even")
    parser.add_argument("--size", type=int, default=1 << 18, help="float32 elements (default 2**18)")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--map", help="where to write the map (default /tmp/perf-<pid>.map, where perf reads it)")
    args = parser.parse_args(argv)
    import numba
    from numba.core import config

    config.CACHE_DIR = tempfile.mkdtemp(prefix="numbacast-perf-")  # compile, do not load (read on first use)
    atexit.register(shutil.rmtree, config.CACHE_DIR, True)
    numba.set_num_threads(args.threads)
    call = _call(args.target, args.rounding, args.size)
    call()
    print(f"perf map: {write_perf_map(args.map)}", file=sys.stderr)
    calls, start = 0, time.perf_counter()
    while time.perf_counter() < start + args.seconds:
        call()
        calls += 1
    if calls:
        print(f"{calls} calls, {(time.perf_counter() - start) / calls * 1e6:.1f} us each", file=sys.stderr)


if __name__ == "__main__":
    main()
