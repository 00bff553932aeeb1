"""The machine code of the kernels, read with ``inspect_asm`` (deterministic,
unlike timings): compiled for haswell (AVX2), they use 256-bit ``ymm``
registers and never the AVX-512 ``zmm`` ones."""

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
            counts[f"{name} {signature}"] = [asm.count("%ymm"), asm.count("%zmm")]
    print(json.dumps(counts))
""")


def registers_used(tmp_path, cpu):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), NUMBA_CPU_NAME=cpu, NUMBA_CPU_FEATURES="")
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_haswell_kernels_use_ymm_and_never_zmm(tmp_path):
    counts = registers_used(tmp_path, "haswell")
    assert len(counts) == 6
    for kernel, (ymm, zmm) in counts.items():
        assert ymm > 0 and zmm == 0, (kernel, ymm, zmm)
