#!/usr/bin/env python3
"""Peer for import_bench: the onnx Python package loading a model and running its shape inference
(what Netron-like tools and exporters do). Prints 'RESULT import PATH MEDIAN_MS'."""
import statistics
import sys
import time

import onnx
import onnx.shape_inference

for path in sys.argv[1:]:
    times = []
    start = time.perf_counter()
    while len(times) < 5 or time.perf_counter() - start < 0.5:
        t0 = time.perf_counter()
        m = onnx.load(path)
        onnx.shape_inference.infer_shapes(m)
        times.append((time.perf_counter() - t0) * 1e3)
        if len(times) >= 200:
            break
    print(f"RESULT import {path} {statistics.median(times):.3f}")
