"""The machine code of the kernels, read with ``inspect_asm`` (deterministic,
unlike timings): compiled for haswell (AVX2), they use 256-bit ``ymm``
registers and never the AVX-512 ``zmm`` ones; the float8 and int8 encoders
need no vector blend (three micro-operations each on current Intel cores)."""

import json
import os
import subprocess
import sys
import textwrap

PROBE = textwrap.dedent("""
    import json, re, sys
    import numpy as np
    import numbacast
    from numbacast.engine import kernels

    counts = {}
    for source, target in [("float32", "float8e4m3fn"), ("float32", "int8"), ("float64", "int32")]:
        x = np.ones(kernels.PARALLEL_MIN, source)
        numbacast.cast(x, target)
        numbacast.cast(x[:10], target)
    for name, kernel in (("serial", kernels.serial_kernel), ("parallel", kernels.parallel_kernel)):
        for signature in kernel.signatures:
            asm = kernel.inspect_asm(signature)
            blends = len(re.findall(r"\\bv(p?blendv[a-z]*)\\b", asm))
            minmax = len(re.findall(r"\\bv(min|max)ps\\b", asm))
            counts[f"{name} {signature}"] = [asm.count("%ymm"), asm.count("%zmm"), blends, minmax]
    print(json.dumps(counts))
""")


def registers_used(tmp_path, cpu):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), NUMBA_CPU_NAME=cpu, NUMBA_CPU_FEATURES="")
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_haswell_kernels_use_ymm_and_never_zmm(tmp_path):
    counts = registers_used(tmp_path, "haswell")
    assert len(counts) == 6
    for kernel, (ymm, zmm, _, _) in counts.items():
        assert ymm > 0 and zmm == 0, (kernel, ymm, zmm)


def test_haswell_float8_and_int8_encoders_have_no_blend(tmp_path):
    """FLOAT -> FLOAT8E4M3FN keeps the smaller of its two roundings by a min and
    ors its NaN code in; FLOAT -> INT8 clamps by minps and maxps (LLVM made
    compare-and-blend chains of the same rules written as conditionals)."""
    counts = registers_used(tmp_path, "haswell")
    assert sum("float->int8(" in kernel for kernel in counts) == 2
    for kernel, (_, _, blends, minmax) in counts.items():
        if "float->float8e4m3fn(" in kernel or "float->int8(" in kernel:
            assert blends == 0, (kernel, blends)
        if "float->int8(" in kernel:
            assert minmax >= 2, (kernel, minmax)
