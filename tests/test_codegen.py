"""The machine code of the kernels, read with ``inspect_asm`` (deterministic,
unlike timings): compiled for haswell (AVX2), they use 256-bit ``ymm``
registers and never the AVX-512 ``zmm`` ones; the float8 and int8 encoders
need no vector blend (three micro-operations each on current Intel cores).
Compiled for an AVX-512 CPU, the generated float8 encoder takes 512-bit
vectors, and so do those into one-byte integers; into INT32 only
stochastic rounding does (:mod:`numbacast.engine.vector_width`)."""

import json
import os
import subprocess
import sys
import textwrap

import llvmlite.binding as llvm
import pytest

import numbacast

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


#: For the tests that run kernels compiled for AVX-512.
needs_avx512 = pytest.mark.skipif(
    "+avx512f" not in llvm.get_host_cpu_features().flatten().split(","),
    reason="runs kernels compiled for AVX-512: needs a CPU with AVX-512",
)


def run_probe(script, cache, cpu):
    """The finished child process that ran ``script`` with kernels compiled
    for the CPU ``cpu`` (its own features only) and cached in ``cache``."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), NUMBA_CPU_NAME=cpu, NUMBA_CPU_FEATURES="")
    return subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)


def registers_used(tmp_path, cpu):
    return json.loads(run_probe(PROBE, tmp_path, cpu).stdout)


@pytest.fixture(scope="module")
def haswell_registers(tmp_path_factory):
    """:func:`registers_used` for haswell, probed once for the tests that read it."""
    return registers_used(tmp_path_factory.mktemp("haswell"), "haswell")


def test_haswell_kernels_use_ymm_and_never_zmm(haswell_registers):
    counts = haswell_registers
    assert len(counts) == 6
    for kernel, (ymm, zmm, _, _) in counts.items():
        assert ymm > 0 and zmm == 0, (kernel, ymm, zmm)


@needs_avx512
def test_avx512_kernels_take_512_bit_vectors_for_the_generated_encoders_and_one_byte_integers_only(tmp_path):
    counts = registers_used(tmp_path, "skylake-avx512")
    assert len(counts) == 6
    for kernel, (_, zmm, _, _) in counts.items():
        if "float->float8e4m3fn(" in kernel or "float->int8(" in kernel:
            assert zmm > 0, (kernel, zmm)
        else:
            assert zmm == 0, (kernel, zmm)


ROUNDED_INTEGERS_PROBE = textwrap.dedent("""
    import numpy as np
    import numbacast
    from numbacast.engine import kernels, stochastic

    x = np.ones(100_000, np.float32)
    numbacast.cast(x, "int32", rounding="stochastic", seed=0)
    numbacast.cast(x, "int32", rounding="toward_zero")
    for kernel in (stochastic.stochastic_kernel, kernels.parallel_kernel):
        print(*(kernel.inspect_asm(s).count("%zmm") for s in kernel.signatures))
""")


@needs_avx512
def test_avx512_int32_rounded_stochastically_takes_512_bit_vectors(tmp_path):
    stochastic, parallel = run_probe(ROUNDED_INTEGERS_PROBE, tmp_path, "skylake-avx512").stdout.splitlines()
    assert int(stochastic) > 0
    assert int(parallel) == 0  # toward zero: one instruction an element


def test_haswell_float8_and_int8_encoders_have_no_blend(haswell_registers):
    """FLOAT -> FLOAT8E4M3FN keeps the smaller of its two roundings by a min and
    ors its NaN code in; FLOAT -> INT8 clamps by minps and maxps (LLVM made
    compare-and-blend chains of the same rules written as conditionals)."""
    counts = haswell_registers
    assert sum("float->int8(" in kernel for kernel in counts) == 2
    for kernel, (_, _, blends, minmax) in counts.items():
        if "float->float8e4m3fn(" in kernel or "float->int8(" in kernel:
            assert blends == 0, (kernel, blends)
        if "float->int8(" in kernel:
            assert minmax >= 2, (kernel, minmax)


HALF_PROBE = textwrap.dedent("""
    import hashlib
    import json
    import ml_dtypes
    import numpy as np
    import numbacast
    from numbacast.engine.bits import converts_half_in_hardware

    # every sign, exponent and top 10 mantissa bits, with the dropped 13 bits at the
    # rounding's edges: zero, one, just below half, half, just above, all ones
    top = np.arange(1 << 19, dtype=np.uint32) << np.uint32(13)
    low = np.array([0, 1, 0xFFF, 0x1000, 0x1001, 0x1FFF], np.uint32)
    x = (top[:, None] | low[None, :]).reshape(-1).view(np.float32)
    got = numbacast.cast(x, "float16").view(np.uint16)
    with np.errstate(over="ignore"):
        want = x.astype(np.float16).view(np.uint16)
    nan = np.isnan(x)
    want[nan] = np.uint16(0x7E00) | (want[nan] & np.uint16(0x8000))  # the quiet NaN of its sign
    directed = {
        mode: hashlib.sha256(numbacast.cast(x, "float16", rounding=mode).tobytes()).hexdigest()
        for mode in ("toward_zero", "toward_positive", "toward_negative", "nearest_away")
    }
    # and back: every FLOAT16 code's value, NaN the quiet NaN of its sign
    codes = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    values = numbacast.cast(codes, "float").view(np.uint32)
    exact = codes.astype(np.float32).view(np.uint32)
    nan = np.isnan(codes)
    exact[nan] = (exact[nan] & np.uint32(0x80000000)) | np.uint32(0x7FC00000)
    back = int((values != exact).sum())
    # every code's value of the narrow float types (FLOAT8E5M2: the top byte of a FLOAT16; the
    # others: their fields moved into FLOAT16's), against ml_dtypes, NaN the quiet NaN of its sign
    narrow = {}
    for name in ("float8e5m2", "float8e4m3fn", "float8e4m3fnuz", "float6e2m3", "float6e3m2", "float4e2m1"):
        t = numbacast.resolve(name)
        codes8 = np.tile(np.arange(1 << t.bits, dtype=np.uint8), 200).view(t.storage)  # and in vector lanes
        values8 = numbacast.cast(codes8, "float").view(np.uint32)
        exact8 = codes8.astype(np.float32).view(np.uint32)
        nan8 = np.isnan(codes8.astype(np.float32))
        exact8[nan8] = (values8[nan8] & np.uint32(0x80000000)) | np.uint32(0x7FC00000)  # the sign: below
        narrow[name] = [int((values8 != exact8).sum()), hashlib.sha256(values8.tobytes()).hexdigest()]
    print(json.dumps([converts_half_in_hardware(), int((got != want).sum()), int(x.size), directed, back, narrow]))
""")


def half_casts(tmp_path, cpu):
    return json.loads(run_probe(HALF_PROBE, tmp_path / cpu, cpu).stdout)


def test_float_to_float16_by_the_conversion_instruction_or_the_bit_formula(tmp_path):
    """FLOAT -> FLOAT16 is one conversion instruction where the compile target has
    one (F16C in haswell), and the bit formula where it has none (LLVM's own
    conversion there calls a function Numba does not link: the process
    crashed); both give NumPy's rounding, and the quiet NaN of its sign, on
    3,145,728 float32 covering every exponent and the rounding's edges; in the
    directed modes the instruction's result, moved a step where it lies on the
    wrong side, gives the bit formula's codes (ties away from zero: the bit
    formula on both); and FLOAT16 -> FLOAT by the instruction and by the
    formula gives every code's value, as does
    FLOAT8E5M2 -> FLOAT (its code moved up 8 bits is a FLOAT16) and the other
    narrow float types -> FLOAT (their fields moved into FLOAT16's, the
    value scaled), every code, NaN signs the same both ways."""
    by_instruction, by_formula = half_casts(tmp_path, "haswell"), half_casts(tmp_path, "x86-64")
    assert by_instruction[:3] == [True, 0, 3145728]
    assert by_formula[:3] == [False, 0, 3145728]
    assert by_instruction[3] == by_formula[3]
    assert by_instruction[4] == by_formula[4] == 0  # FLOAT16 -> FLOAT, every code, by both
    # the narrow float types -> FLOAT, every code: ml_dtypes' values by both, and the same bits (NaN signs)
    assert len(by_instruction[5]) == 6
    for name, (mismatches, digest) in by_instruction[5].items():
        assert mismatches == by_formula[5][name][0] == 0, name
        assert digest == by_formula[5][name][1], name


LANES_PROBE = textwrap.dedent("""
    import json, re
    import numpy as np
    import numbacast
    from numbacast.engine import kernels, stochastic

    x = np.linspace(-300, 300, kernels.PARALLEL_MIN, dtype=np.float32)
    nearest, toward_zero = {}, {"rounding": "toward_zero"}
    random_64 = {"rounding": "stochastic", "seed": 1}
    random_8 = dict(random_64, stochastic_bits=8)
    user_format = numbacast.p3109(8, 4, signed=False)
    for target, options in [("float8e4m3fn", nearest), ("float8e4m3fn", toward_zero), ("float8e4m3fn", random_64),
                            ("float8e4m3fn", random_8), ("float4e2m1", nearest), ("float4e2m1", random_8),
                            (user_format, nearest), (user_format, toward_zero), (user_format, random_64),
                            ("float16", nearest)]:
        numbacast.cast(x, target, **options)
    packs = {}
    for kernel in (kernels.parallel_kernel, stochastic._block):
        for signature in kernel.signatures:
            packs[str(signature)] = len(re.findall(r"\\bvpackuswb\\b", kernel.inspect_asm(signature)))
    from numbacast import mx
    from numbacast.engine import blocks

    for fmt, options in [("mxfp8_e4m3", {}), ("mxfp4_e2m1", {"rounding": "stochastic", "seed": 1}),
                         ("mxfp8_e4m3", {"rounding": "toward_zero"}), ("nvfp4", {})]:
        mx.quantize(x, fmt, **options)
        signature = blocks.quantize_kernel.signatures[-1]
        asm = blocks.quantize_kernel.inspect_asm(signature)
        packs[f"{fmt} {options}"] = len(re.findall(r"\\bvpackuswb\\b", asm))
    mx.quantize(x, "mxfp8_e4m3", block_size=16)
    asm = blocks.quantize_kernel.inspect_asm(blocks.quantize_kernel.signatures[-1])
    packs["blocks of 16: vector products"] = len(re.findall(r"\\bvmulps\\b[^\\n]*%ymm", asm))
    print(json.dumps(packs))
""")


def test_haswell_element_loops_into_bytes_take_32_lanes(tmp_path):
    """With AVX2 code, the element loops of casts from FLOAT into one-byte codes
    are vectorised 32 elements at a time (:mod:`numbacast.engine.vector_width`):
    their codes are narrowed to bytes by packs (LLVM's 8 lanes narrowed each 8
    by shuffles).  Every hinted loop is vectorised: LLVM prints a remark on
    standard error for a hinted loop it could not vectorise, and there is none
    (nearest-even, a directed mode, stochastic rounding with all random bits and
    with 8, into ONNX and user-defined formats, and FLOAT16, not hinted).
    So are MX quantisation's whole blocks of 32 (to nearest and stochastic,
    not a directed mode's, which LLVM narrows by packs of its own now that
    the codes' width is known to it), and blocks of 16 in 16 lanes (their
    products in 256-bit registers)."""
    done = run_probe(LANES_PROBE, tmp_path, "haswell")
    assert done.stderr == ""
    packs = json.loads(done.stdout)
    assert len(packs) == 15
    for kernel, count in packs.items():
        if "float16" not in kernel and "toward_zero" not in kernel:
            assert count > 0, kernel
    # blocks of 16 are in vector lanes (hinted with 32, they were not)
    assert packs["mxfp8_e4m3 {'rounding': 'toward_zero'}"] > 0


MASK_PROBE = textwrap.dedent("""
    import json, re
    import numpy as np
    import numbacast
    from numbacast.engine import bits, kernels

    x = np.linspace(-300, 300, kernels.PARALLEL_MIN, dtype=np.float32)
    for target, rounding in [("float8e4m3fn", "toward_positive"), ("float4e2m1", "nearest_away"),
                             ("float6e2m3", "toward_negative"), ("float8e5m2", "toward_zero")]:
        numbacast.cast(x, target, rounding=rounding)
    masks = {str(s): len(re.findall(r"\\.(long|short|byte)\\s+(255|0xff)\\b", kernels.parallel_kernel.inspect_asm(s)))
             for s in kernels.parallel_kernel.signatures}
    print(json.dumps([bits.narrows_to_bytes_by_packs(), masks]))
""")


@pytest.mark.parametrize("cpu, packs", [("haswell", True), ("skylake-avx512", False)])
def test_saturating_codes_are_cut_after_rounding_where_bytes_are_narrowed_by_packs(tmp_path, cpu, packs):
    """Where the CPU narrows int32 to bytes by saturating packs (AVX2), the
    saturating float8, float6 and float4 encoders of the modes other than
    nearest even cut the rounded magnitude at the overflow's code instead of
    clamping the bits before the rounding, and LLVM, knowing the codes fit a
    byte, needs no byte mask (a constant 255) before the packs; with AVX-512
    (a truncating narrowing) they clamp first.  (Nearest even always clamps
    first: its code is a sum LLVM cannot bound either way.)"""
    by_packs, masks = json.loads(run_probe(MASK_PROBE, tmp_path, cpu).stdout)
    assert by_packs is packs and len(masks) == 4
    if packs:
        assert not any(masks.values()), masks


def test_the_element_loops_of_float_into_one_byte_codes_ask_for_32_lanes():
    """``Conversion.loop_lanes``: 32 where the kernels ask for wide vectors, the
    source is FLOAT and the codes are one byte; LLVM's choice (0) for two-byte
    codes, other sources, and the targets whose kernels keep 256-bit vectors."""
    from numbacast.engine.conversion import Conversion

    def lanes(source, target, **options):
        return Conversion.make(numbacast.resolve(source), numbacast.resolve(target), **options).loop_lanes

    assert lanes("float", "float8e4m3fn") == lanes("float", "float4e2m1") == 32
    assert lanes("float", "float8e8m0", rounding="stochastic") == lanes("float", numbacast.p3109(8, 3)) == 32
    assert lanes("float", "float16", rounding="stochastic") == lanes("float", "bfloat16") == 0
    assert lanes("double", "float8e4m3fn") == lanes("float16", "float8e4m3fn") == 0
    assert lanes("float", "int8") == lanes("float", "uint4") == lanes("float", "int2") == 32
    assert (
        lanes("float", "int32") == lanes("float", "bool") == lanes("double", "int8") == lanes("float", "float16") == 0
    )
