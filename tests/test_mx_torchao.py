"""numbacast.mx against torchao's ``to_mx`` (its eager CPU path), where torchao
is installed (the ``compare`` extra; not a test dependency: the test is skipped without it).

For each MX float format torchao has (mxfp8 e4m3 and e5m2, mxfp6 e2m3 and
e3m2, mxfp4 e2m1) and each of its scale modes (FLOOR, CEIL, EVEN, RCEIL),
2048 random float32 blocks whose largest magnitudes lie in 2**-100 to 2**100
give the same scale codes and element codes.  Outside that range the two
part, as docs/rules.md#rule-mx-oracles records: a block holding infinity
(torchao: scale ``2**(128 - emax)``, numbacast and gfloat: ``2**127``) and a
block whose scale is ``2**-127`` (torchao divides its elements by ``2**-126``);
both are checked here too.  Rule: docs/rules.md#rule-mx-oracles
"""

import importlib.util

import numpy as np
import pytest
from conftest import nvfp4_tie_block

import numbacast.mx as mx

# checked before importing torch, which takes seconds
if importlib.util.find_spec("torchao") is None or importlib.util.find_spec("torch") is None:
    pytest.skip("torchao and torch are not installed (pip install numbacast[compare])", allow_module_level=True)
import torch  # noqa: E402
from torchao.prototype.mx_formats import constants  # noqa: E402
from torchao.prototype.mx_formats.config import ScaleCalculationMode  # noqa: E402
from torchao.prototype.mx_formats.mx_tensor import to_mx  # noqa: E402

ELEMENTS = {
    "mxfp8_e4m3": torch.float8_e4m3fn,
    "mxfp8_e5m2": torch.float8_e5m2,
    "mxfp6_e2m3": constants.DTYPE_FP6_E2M3,
    "mxfp6_e3m2": constants.DTYPE_FP6_E3M2,
    "mxfp4_e2m1": torch.float4_e2m1fn_x2,
}
MODES = {"floor": "FLOOR", "ceil": "CEIL", "even": "EVEN", "rceil": "RCEIL"}


def torchao_codes(x, name, rule):
    """(scale codes, element codes one per byte) of torchao's ``to_mx``."""
    scales, data = to_mx(torch.from_numpy(x), ELEMENTS[name], 32, getattr(ScaleCalculationMode, MODES[rule]))
    scales = scales.view(torch.uint8).numpy()
    data = data.view(torch.uint8).numpy()
    if name == "mxfp4_e2m1":  # two per byte, the first in the low nibble
        data = np.stack([data & 15, data >> 4], axis=-1).reshape(x.shape)
    return scales, data


@pytest.mark.parametrize("rule", list(MODES))
@pytest.mark.parametrize("name", list(ELEMENTS))
def test_random_blocks_match_torchao(name, rule):
    """Rule: docs/rules.md#rule-mx-scale-rules"""
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((64, 1024)) * np.exp2(rng.integers(-100, 100, (64, 32)).repeat(32, axis=1))).astype(
        np.float32
    )
    q = mx.quantize(x, name, scale_rule=rule)
    scales, data = torchao_codes(x, name, rule)
    assert np.array_equal(q.scales.view(np.uint8), scales)
    assert np.array_equal(q.elements.view(np.uint8), data)


def test_where_torchao_differs():
    """An infinite block: torchao's scale is 2**(128 - emax) (from the
    exponent field of inf), numbacast's 2**127 (the clamp, as gfloat); a block
    on the smallest scale: torchao divides by 2**-126, numbacast by 2**-127.
    Rule: docs/rules.md#rule-mx-oracles"""
    x = np.ones((2, 32), np.float32)
    x[0, 0] = np.inf
    x[1] = 2.0**-130
    scales, data = torchao_codes(x, "mxfp8_e4m3", "floor")
    q = mx.quantize(x, "mxfp8_e4m3")
    assert q.scales.view(np.uint8).tolist() == [[254], [0]]
    assert scales.tolist() == [[127 + 128 - 8], [0]]
    assert (
        q.elements[1, 0] == np.float32(2.0**-3)
        and float(torch.from_numpy(data[1:, :1]).view(torch.float8_e4m3fn)) == 2.0**-4
    )


def torchao_nvfp4_codes(x, tensor_scale):
    """(scale codes, element codes one per byte) of torchao's ``nvfp4_quantize``
    with the per-tensor scale ``tensor_scale``."""
    from torchao.prototype.mx_formats.kernels import unpack_uint4
    from torchao.prototype.mx_formats.nvfp4_tensor import nvfp4_quantize

    scales, data = nvfp4_quantize(torch.from_numpy(x), 16, torch.tensor(float(tensor_scale)))
    return scales.view(torch.uint8).numpy().reshape(x.shape[0], -1), unpack_uint4(data).numpy().reshape(x.shape)


def test_nvfp4_random_blocks_match_torchao_and_where_they_differ():
    """NVFP4 of random blocks: the same tensor scale, block scales and
    elements as torchao's ``nvfp4_quantize``.  They part on rare elements:
    torchao multiplies by ``(1 / tensor_scale) / scale`` in float32 where
    numbacast divides by the divisor; for x = 0.75 + 2**-24 and divisor
    1 + 2**-23 torchao's product rounds below 0.75 (element 0.5), the
    float32 quotient onto it (a tie: 1.0).  Rule: docs/rules.md#rule-mx-nvfp4"""
    rng = np.random.default_rng(4)
    x = (rng.standard_normal((64, 1024)) * np.exp2(rng.integers(-6, 6, (64, 1024)))).astype(np.float32)
    q = mx.quantize(x, "nvfp4")
    scales, data = torchao_nvfp4_codes(x, q.tensor_scale)
    assert np.array_equal(q.scales.view(np.uint8), scales)
    assert np.array_equal(q.elements.view(np.uint8), data)
    x, d = nvfp4_tie_block()
    x = x.reshape(1, 16)
    q = mx.quantize(x, "nvfp4", tensor_scale=d)
    scales, data = torchao_nvfp4_codes(x, d)
    assert q.scales.view(np.uint8).tolist() == scales.tolist() == [[0x38]]
    assert q.elements.astype(np.float32)[0, :2].tolist() == [6.0, 1.0]
    assert data[0, :2].tolist() == [7, 1]  # 6.0 and 0.5
