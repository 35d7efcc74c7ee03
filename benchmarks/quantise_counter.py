"""Quantise the seed-count network's trunk to 8 bits, for the reader's second looks at unsure pits.

    /tmp/train/bin/pip install onnx onnxruntime    # in the training venv (see train_counter.py)
    .venv/bin/python benchmarks/counter_data.py --boards 120 --seed 5600000 --out /tmp/c/calib.npz
    .venv/bin/python benchmarks/counter_data.py --boards 80 --seed 5650000 --style randomised --out /tmp/c/calib_r.npz
    /tmp/train/bin/python benchmarks/quantise_counter.py --calib /tmp/c/calib.npz /tmp/c/calib_r.npz \
        --trunk calibration/seed_counter.onnx --out calibration/seed_counter_int8.onnx

ONNX Runtime's static quantisation (QDQ, weights 8-bit per output channel, activations
8-bit with ranges from the 99.999th percentile of what the calibration crops give, in
all eight views). The first and last convolutions stay 32-bit, as is usual: the first
reads the rim-relative input, whose range 8 bits fit worst, and the last gives the
embedding the head reads. Measured on 9,337 crops of 300 default-style boards and
4,651 of 150 unseen-style ones (2026-12-01): with those two kept, second looks at unsure
pits changed 52 and 20 counts, against 72-81 and 44-46 with every convolution quantised;
and the three inner convolutions run faster quantised than all five (73 crops 4.7 ms,
all five 5.2 ms, 32-bit 9.4 ms). The output names the trunk it was made from (its SHA-256, in the
model's metadata as ``quantised_from_sha256``): the reader uses it only beside that
trunk (:func:`omweso_cam.vision.counter_net.embed`). The ``onnx`` package is needed
here only, never by omweso-cam itself.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
from pathlib import Path

import numpy as np

from omweso_cam.vision.count import CountConfig, _head_input, default_seed_model, view_of

sys.path.insert(0, str(Path(__file__).resolve().parent))
from train_counter import canonical  # noqa: E402

#: Network inputs given to the calibration (drawn at random from all views of all crops).
CALIBRATION_INPUTS = 6000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calib", type=Path, nargs="+", required=True, help="crops from counter_data.py")
    parser.add_argument("--trunk", type=Path, default=Path("calibration/seed_counter.onnx"))
    parser.add_argument("--out", type=Path, default=Path("calibration/seed_counter_int8.onnx"))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    import onnx
    import onnxruntime
    from onnxruntime.quantization import CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    head = default_seed_model().counter
    x = np.concatenate([_head_input(canonical(np.load(p)["crops"], head.input_px), head, CountConfig())
                        for p in args.calib]).astype(np.float32)
    views = np.concatenate([view_of(x, v) for v in range(8)])
    rng = np.random.default_rng(args.seed)
    views = views[rng.permutation(len(views))[:CALIBRATION_INPUTS]]
    name = onnxruntime.InferenceSession(str(args.trunk), providers=["CPUExecutionProvider"]).get_inputs()[0].name

    class Batches(CalibrationDataReader):
        def __init__(self) -> None:
            self._it = iter([{name: np.ascontiguousarray(views[i:i + 200])} for i in range(0, len(views), 200)])

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self._it, None)

    with tempfile.TemporaryDirectory() as tmp:
        prepared = Path(tmp) / "prepared.onnx"
        quant_pre_process(str(args.trunk), str(prepared), skip_symbolic_shape=True)
        convolutions = [n.name for n in onnx.load(str(prepared)).graph.node if n.op_type == "Conv"]
        quantize_static(str(prepared), str(args.out), Batches(), quant_format=QuantFormat.QDQ, per_channel=True,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                        calibrate_method=CalibrationMethod.Percentile,
                        nodes_to_exclude=[convolutions[0], convolutions[-1]])
    model = onnx.load(str(args.out))
    onnx.helper.set_model_props(model, {"quantised_from_sha256": hashlib.sha256(args.trunk.read_bytes()).hexdigest()})
    onnx.save(model, str(args.out))
    print(f"{len(views)} network inputs from {len(x)} crops -> {args.out} ({args.out.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
