"""The seed-count network: its input normalisation, its head (file form, refit) and the shipped model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from omweso_cam.vision.count import (
    CountConfig,
    SeedModel,
    SeedModelError,
    default_seed_model,
    network_input,
)
from omweso_cam.vision.counter_net import (
    COUNTS,
    CounterHead,
    CounterNetError,
    Trunk,
    embed,
    refit_head,
    trunk_path,
)
from tests.vision.rendered import rendered_crops


def _crops(rng: np.random.Generator, n: int = 4, size: int = 48) -> np.ndarray:
    wood = rng.integers(60, 200, (n, 1, 1, 3))
    noise = rng.normal(0, 3, (n, size, size, 3))
    crops = np.clip(wood + noise, 0, 255).astype(np.uint8)
    crops[:, 20:28, 20:28] = 30  # a dark seed in the middle
    return crops


def test_network_input_is_measured_against_the_rim() -> None:
    rng = np.random.default_rng(1)
    crops = _crops(rng)
    x = network_input(crops)
    assert x.shape == (4, 3, 48, 48) and x.dtype == np.float32
    # The rim (bare wood) sits at zero; the seed stands out, darker than the wood.
    assert np.abs(np.median(x[:, :, :4, :4])) < 0.05
    assert np.all(x[:, :, 24, 24] < -0.2)


@pytest.mark.parametrize("crop_px", [48, 31])
def test_network_input_measures_each_crop_against_the_wood_around_its_pit(crop_px: int) -> None:
    # Per crop and channel the median of the pixels outside rim_of_radius pit radii is
    # subtracted and the mean of those medians (plus an offset) divides (an even and an odd
    # number of rim pixels: the median of the two middle values, or the middle one).
    config = CountConfig(crop_px=crop_px)
    crops = np.random.default_rng(5).integers(0, 256, (6, crop_px, crop_px, 3), dtype=np.uint8)
    yy, xx = np.mgrid[0:crop_px, 0:crop_px] + 0.5
    r_px = crop_px / 2 / config.crop_of_radius * config.rim_of_radius
    rim = (xx - crop_px / 2) ** 2 + (yy - crop_px / 2) ** 2 > r_px**2
    level = np.median(crops[:, rim], axis=1)  # (6, 3)
    unit = level.mean(axis=1) + config.rim_unit_offset
    expected = ((crops - level[:, None, None]) / unit[:, None, None, None]).transpose(0, 3, 1, 2)
    for given in (crops, crops.astype(np.float32)):
        x = network_input(given, config=config)
        assert x.shape == (6, 3, crop_px, crop_px) and x.dtype == np.float32 and x.flags["C_CONTIGUOUS"]
        np.testing.assert_allclose(x, expected, rtol=1e-5, atol=1e-6)


def test_network_input_ignores_exposure() -> None:
    rng = np.random.default_rng(2)
    crops = _crops(rng)
    brighter = np.clip(crops.astype(np.float64) * 1.25, 0, 255).astype(np.uint8)
    a, b = network_input(crops), network_input(brighter)
    # A quarter more light moves the input by far less than the seed's own contrast.
    assert np.abs(a - b)[:, :, 20:28, 20:28].mean() < 0.25 * np.abs(a[:, :, 20:28, 20:28]).mean()


def test_network_input_refuses_other_shapes() -> None:
    with pytest.raises(ValueError, match="expected crops"):
        network_input(np.zeros((48, 48, 3), np.uint8))


def test_head_checks_its_shape_and_round_trips() -> None:
    rng = np.random.default_rng(3)
    head = CounterHead(rng.normal(size=(COUNTS, 8)), rng.normal(size=COUNTS))
    again = CounterHead.from_dict(head.to_dict())
    assert np.allclose(again.weights, head.weights, atol=1e-6) and again.trunk == head.trunk
    lp = head.log_probabilities(rng.normal(size=(5, 8)))
    assert lp.shape == (5, COUNTS) and np.allclose(np.exp(lp).sum(axis=1), 1.0)
    with pytest.raises(CounterNetError):
        CounterHead(np.zeros((10, 8)), np.zeros(10))
    with pytest.raises(CounterNetError):
        CounterHead.from_dict({"bias": [0.0] * COUNTS})
    # A seed model carrying a broken head is a bad seed model, not a crash.
    with pytest.raises(SeedModelError):
        SeedModel.from_dict({"counter": {"weights": [[1.0]], "bias": [0.0]}})


def test_refit_head_learns_labelled_examples_but_keeps_the_rest() -> None:
    rng = np.random.default_rng(4)
    dim = 6
    centres = rng.normal(0, 3, (COUNTS, dim))
    base = CounterHead(centres.copy(), -0.5 * (centres**2).sum(axis=1))  # nearest-centre classifier

    # The rig's seeds look different: counts 0..5 sit at shifted embeddings.
    shift = rng.normal(0, 2.5, dim)
    counts = np.repeat(np.arange(6), 30)
    emb = centres[counts] + shift + rng.normal(0, 0.3, (len(counts), dim))
    held = np.repeat(np.arange(6), 10)
    emb_held = centres[held] + shift + rng.normal(0, 0.3, (len(held), dim))

    def accuracy(head: CounterHead, x: np.ndarray, y: np.ndarray) -> float:
        return float((head.log_probabilities(x).argmax(axis=1) == y).mean())

    fitted = refit_head(emb, counts, base)
    assert accuracy(fitted, emb_held, held) > accuracy(base, emb_held, held)
    assert accuracy(fitted, emb_held, held) >= 0.95
    # Counts the examples never showed (heaps) keep nearly the shipped weights.
    assert np.abs(fitted.weights[30:] - base.weights[30:]).max() < 0.1 * np.abs(base.weights[30:]).max()


def test_shipped_model_is_a_network() -> None:
    from omweso_cam.vision.count import default_seed_model

    model = default_seed_model()
    assert model.counter is not None
    assert model.counter.input_px == CountConfig().crop_px


def test_both_engines_count_alike() -> None:
    # ONNX Runtime runs the shipped network; OpenCV's dnn module is the fallback without it.
    # The trunk is 8-bit (benchmarks/quantise_counter.py) and each engine rounds its integer
    # arithmetic its own way (embeddings differ by up to 0.02), so what must agree is what the
    # reader uses: on a rendered board's pits, the same most likely count, probabilities close.
    head = default_seed_model().counter
    path = str(trunk_path(head))
    crops, _ = rendered_crops(801, "default", [int(c) for c in np.random.default_rng(801).integers(0, 9, 32)])
    x = network_input(crops)
    fast, fallback = Trunk(path, "onnxruntime"), Trunk(path, "opencv")
    assert fast.engine == "onnxruntime" and fallback.engine == "opencv"
    a, b = fast.run(x), fallback.run(x)
    assert a.shape == b.shape == (32, head.embedding_size)
    pa, pb = np.exp(head.log_probabilities(a)), np.exp(head.log_probabilities(b))
    assert np.array_equal(pa.argmax(axis=1), pb.argmax(axis=1))
    assert np.abs(pa - pb).max() < 0.03


def test_a_corrupt_network_file_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "seed_counter.onnx"
    bad.write_bytes(b"not a network")
    head = default_seed_model().counter
    broken = CounterHead(head.weights, head.bias, trunk=str(bad))
    with pytest.raises(CounterNetError, match="cannot load the seed counter network"):
        embed(network_input(np.zeros((1, 48, 48, 3), np.uint8)), broken)


def _opset_imports(model: bytes) -> dict[str, int]:
    """The operator sets an ONNX file imports (ModelProto field 8: domain, version), read
    straight from its protobuf encoding (the package does not depend on ``onnx``)."""

    def varint(data: bytes, at: int) -> tuple[int, int]:
        value = shift = 0
        while True:
            byte = data[at]
            value |= (byte & 0x7F) << shift
            at, shift = at + 1, shift + 7
            if byte < 0x80:
                return value, at

    def fields(data: bytes) -> list[tuple[int, int | bytes]]:
        out: list[tuple[int, int | bytes]] = []
        at = 0
        while at < len(data):
            key, at = varint(data, at)
            number, wire = key >> 3, key & 7
            if wire == 0:
                value, at = varint(data, at)
                out.append((number, value))
            elif wire == 2:
                size, at = varint(data, at)
                out.append((number, data[at : at + size]))
                at += size
            else:  # fixed 64 or 32 bits
                at += 8 if wire == 1 else 4
        return out

    imports = {}
    for number, value in fields(model):
        if number == 8 and isinstance(value, bytes):
            opset = dict(fields(value))
            domain = opset.get(1, b"")
            imports[domain.decode() if isinstance(domain, bytes) else ""] = int(opset.get(2, 0))  # type: ignore[call-overload]
    return imports


def test_the_shipped_trunk_loads_in_the_oldest_onnx_runtime_allowed() -> None:
    # ONNX Runtime 1.17 (pyproject's lower bound) refuses a file importing an operator set
    # version it does not know, even one no node uses; the quantiser's preprocessing imports
    # a dozen (benchmarks/quantise_counter.py keeps only the used ones). Checked by hand
    # with onnxruntime 1.17.3 and opencv-python-headless 4.10 on 2026-12-04.
    imports = _opset_imports(trunk_path(default_seed_model().counter).read_bytes())
    assert imports.keys() == {""} and imports[""] <= 20, imports
