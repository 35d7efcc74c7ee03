"""Quantise the seed-count network's trunk to 8-bit integers, for ONNX Runtime.

    python -m venv /tmp/quant && /tmp/quant/bin/pip install onnx onnxruntime numpy "opencv-python-headless<5" tqdm
    /tmp/quant/bin/pip install --no-deps -e .
    .venv/bin/python benchmarks/counter_data.py --boards 150 --seed 7100000 --out /tmp/q8/cal_def.npz
    .venv/bin/python benchmarks/counter_data.py --boards 150 --seed 7200000 --style randomised --out /tmp/q8/cal_rand.npz
    /tmp/quant/bin/python benchmarks/quantize_counter.py --data /tmp/q8/cal_def.npz /tmp/q8/cal_rand.npz \
        --trunk calibration/seed_counter.onnx --out calibration/seed_counter.int8.onnx

The float trunk (``seed_counter.onnx``) is what the seed models' heads were fitted to; the
8-bit one beside it reads the same crops in half the time (10 vs 20 ms for 144 crops on one
core), which is what brings a full read under the 20 ms budget. The reader runs it whenever
ONNX Runtime is installed and the file's metadata names the float trunk's SHA-256
(``counter_net.Trunk``); after retraining, run this script again or the reader falls back
to the float trunk.

Static quantisation: every convolution, weights per output channel; activation ranges
(min/max) measured on network inputs of real pit crops (``counter_data.py``, default and
``randomised`` styles, each crop in one of its eight views). Weights and activations are
both unsigned 8-bit (U8U8): x86 processors without VNNI instructions compute unsigned-by-
signed products in 16 bits, which can saturate, and 7-bit weights (``reduce_range``), the
other remedy, read heaps measurably worse (docs/vision.md, "An 8-bit trunk").

Heavy dependency (``onnx``, for the quantiser) is needed only here, never by omweso-cam.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from train_counter import canonical

from omweso_cam.vision.count import CountConfig, network_input, view_of

#: The metadata key tying an 8-bit trunk to the float trunk it was made from.
SOURCE_KEY = "quantized_from_sha256"


def calibration_inputs(paths: list[Path]) -> np.ndarray:
    """Network inputs (N, 3, S, S) of the stored crops, each in one of its eight views, shuffled."""
    config = CountConfig()
    parts = []
    for path in paths:
        data = np.load(path)
        x = network_input(canonical(data["crops"], config.crop_px), config=config)
        parts.append(np.concatenate([view_of(x[v::8], v) for v in range(8)]))
    x = np.concatenate(parts)
    return np.ascontiguousarray(x[np.random.default_rng(0).permutation(len(x))], np.float32)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, nargs="+", required=True, help="crops from counter_data.py")
    parser.add_argument("--trunk", type=Path, default=Path("calibration/seed_counter.onnx"))
    parser.add_argument("--out", type=Path, default=Path("calibration/seed_counter.int8.onnx"))
    parser.add_argument("--batch", type=int, default=128)
    args = parser.parse_args(argv)
    import onnx
    import onnxruntime
    from onnxruntime.quantization import (
        CalibrationDataReader,
        QuantFormat,
        QuantType,
        quantize_static,
    )
    from onnxruntime.quantization.shape_inference import quant_pre_process

    x = calibration_inputs(args.data)
    name = onnxruntime.InferenceSession(str(args.trunk), providers=["CPUExecutionProvider"]).get_inputs()[0].name
    # Whole batches only: the range collector stacks them.
    batches = [x[i : i + args.batch] for i in range(0, len(x) - args.batch + 1, args.batch)]

    class Inputs(CalibrationDataReader):
        def __init__(self) -> None:
            self._it = iter(batches)

        def get_next(self) -> dict[str, np.ndarray] | None:
            batch = next(self._it, None)
            return None if batch is None else {name: batch}

    with tempfile.TemporaryDirectory() as tmp:
        prepared = str(Path(tmp) / "prepared.onnx")
        quant_pre_process(str(args.trunk), prepared, skip_symbolic_shape=True)
        quantize_static(prepared, str(args.out), Inputs(), quant_format=QuantFormat.QOperator,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QUInt8, per_channel=True,
                        reduce_range=False)
    model = onnx.load(str(args.out))
    digest = hashlib.sha256(args.trunk.read_bytes()).hexdigest()
    onnx.helper.set_model_props(model, {SOURCE_KEY: digest,
                                        "calibration": f"{len(batches) * args.batch} crops from "
                                                       + ", ".join(p.name for p in args.data)})
    onnx.save(model, str(args.out))
    print(f"wrote {args.out} ({args.out.stat().st_size // 1024} KB) from {args.trunk} (sha256 {digest[:12]}...), "
          f"ranges from {len(batches) * args.batch} crops")
    return 0


if __name__ == "__main__":
    sys.exit(main())
