#!/usr/bin/env python3
"""Tile sweep for the GEMM form of the fused DW->ReLU6->PW kernel (issue 6), on the device machine.

For each MobileNetV2 DW(3x3)->ReLU6->PW block of bench/fusion_bench.py (BLOCKS) at batch 1 and 32,
runs `tessera-cli run` with the block grouped into one dw-pw kernel under several tiles
(environment TESSERA_DWPW_GEMM="rows,cols,bk"; "off" = the older tile kernel; "" = the default
tile), checks each output against PyTorch (relative L2), and times PyTorch eager (cuDNN, TF32 off)
on the same block. Prints one JSON line per block and a table (times in us).

With --final: the default tile and a few alternatives only, "off" left out, plus the DRAM floor
(compulsory bytes / the device-to-device copy bandwidth measured in the run) and torch.compile
(default mode, warm) for blocks 0, 2 and 10 (fusion_bench.py --quick's three).

With --wide (issue 6 run 3): the tall tiles covering every filter ("rows,cols,bk[,rm]", rows =
K rounded up to 32) against the tile the rule gave before them (64 or 128 rows, 16 columns, BK
32), for the blocks with >= 384 channels.

With --prefetch: the default tile without and with register prefetch ("pf", environment
TESSERA_DWPW_PREFETCH=1), and prefetch with twice the columns ("pf:rows,cols,bk").

With --final3: as --final, but the default tile only, plus the pre-run-3 tile for the wide blocks.

With --run4 (issue 6 run 4): the default tile against the split reduction (TESSERA_DWPW_SPLIT=2/4:
"sp2", "sp4"), the raw-tap prefetch (TESSERA_DWPW_RAW=1 with prefetch on: "raw"), both, and a few
split tiles of the wide blocks ("T:rows,cols,bk,rm,split", "+raw" adds the raw-tap prefetch).
With --final4 (run 4's last call, under commit 5359e1e's rule): the default and, where that rule split at
batch 32, "sp1" (TESSERA_DWPW_SPLIT=1: the tile before run 4, unsplit, no raw taps) and the other
split; batch 1 the default only.
With --next (not yet run; run 4's open questions at batch 32): for the blocks with >= 384 channels
the default against the raw taps alone ("raw") and 2 / 4 groups without them ("sp2+noraw",
"sp4+noraw": 64 registers for the 96-filter tiles, so two blocks of 512 threads fit an SM).

With --compile-all (with --final or --final3): torch.compile for every block measured.

With --runs (issue 6 run 6): B runs (TESSERA_DWPW_RUN=2|4: a thread produces 2 or 4 consecutive
pixels of one channel, sharing the depthwise weights and the overlapping input taps) against the
default, at batch 32 for the blocks whose output rows are even, with tiles giving 4 B elements
per thread where the default gives 2 ("T:rows,cols,bk+run4"); at batch 1 "run4+noraw" (runs are
not used with the raw-tap prefetch the split tiles have).

With --mma3 (run 7 call 5): the default, plus "mma" for the 16- and 320-filter blocks.

With --mma2 (run 7 call 4): warp layouts ("W:wy,wx"), BK 16 and prefetch off ("nopf") on the
wide 14x14 / 7x7 blocks under the MMA rule (the 320-filter block with "mma" asked for).

With --mma (issue 6 run 7): tensor-core MMAs (TESSERA_DWPW_MMA=tf32x3: mma.sync m16n8k8 with
3xTF32 operand splitting, f32-level products; "mma") on the default tile and on other tile shapes
("mma+T:rows,cols,bk[,rm]"), warp layouts ("W:wy,wx"), against the SIMT default.

Usage: bench/dwpw_sweep.py CLI_PATH WORK_DIR [--batch 1|32] [--blocks i,j,..] [--final|--final3] [--prefetch] [--wide] [--run4|--final4|--next|--runs|--runs2|--runs3|--runs4|--runs5|--runs6] [--default-only] [--compile-all]
"""
import json
import os
import statistics
import subprocess
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

cli, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.benchmark = True
BLOCKS = [(32, 112, 1, 16), (96, 112, 2, 24), (144, 56, 1, 24), (144, 56, 2, 32), (192, 28, 1, 32),
          (192, 28, 2, 64), (384, 14, 1, 64), (384, 14, 1, 96), (576, 14, 1, 96), (576, 14, 2, 160),
          (960, 7, 1, 160), (960, 7, 1, 320)]
batches = [1, 32]
if "--batch" in sys.argv:
    batches = [int(sys.argv[sys.argv.index("--batch") + 1])]
sel = range(len(BLOCKS))
if "--blocks" in sys.argv:
    sel = [int(v) for v in sys.argv[sys.argv.index("--blocks") + 1].split(",")]


def cuda_median(fn, min_ms=100):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times, total = [], 0.0
    while total < min_ms or len(times) < 10:
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        t = s.elapsed_time(e)
        times.append(t)
        total += t
    return statistics.median(times) * 1e-3


def pow2_at_least(v):
    p = 1
    while p < v:
        p *= 2
    return p


final = "--final" in sys.argv or "--final3" in sys.argv


prefetch = "--prefetch" in sys.argv


wide = "--wide" in sys.argv


final4 = "--final4" in sys.argv
nxt = "--next" in sys.argv
runs = "--runs" in sys.argv
mma2 = "--mma2" in sys.argv
mma3 = "--mma3" in sys.argv
mma_mode = "--mma" in sys.argv or mma2 or mma3
run4 = "--run4" in sys.argv or final4 or nxt or runs or mma_mode

# Environment of a --run4 configuration name.
def run4_env(cfg):
    env = {}
    for part in cfg.split("+"):
        if part.startswith("sp"):
            env["TESSERA_DWPW_SPLIT"] = part[2:]
        elif part == "raw":
            env["TESSERA_DWPW_RAW"] = "1"
            env["TESSERA_DWPW_PREFETCH"] = "1"
        elif part.startswith("T:"):
            env["TESSERA_DWPW_GEMM"] = part[2:]
        elif part == "pf":
            env["TESSERA_DWPW_PREFETCH"] = "1"
        elif part == "nopf":
            env["TESSERA_DWPW_PREFETCH"] = "0"
        elif part == "noraw":
            env["TESSERA_DWPW_RAW"] = "0"
        elif part.startswith("run"):
            env["TESSERA_DWPW_RUN"] = part[3:]
        elif part == "mma":
            env["TESSERA_DWPW_MMA"] = "tf32x3"
        elif part == "tf32":
            env["TESSERA_DWPW_MMA"] = "tf32"
        elif part == "simt":
            env["TESSERA_DWPW_MMA"] = "off"
        elif part.startswith("W:"):
            env["TESSERA_DWPW_WARPS"] = part[2:]
    return env


# Run 6's configurations per block (C, K) at batch 32: the default tile's B elements per thread
# are 4 for blocks 0, 7, 8 (runs of 4 / 2 fit), 2 for blocks 1-4 and 6, 1 for block 5 (split).
RUNS_B32 = {
    (32, 16): ["", "run4"],
    (96, 24): ["", "run2", "T:32,64,16+run4", "T:32,32,32+run4"],
    (144, 24): ["", "run2", "T:32,64,16+run4", "T:32,32,32+run4"],
    (144, 32): ["", "run2", "T:32,64,16+run4"],
    (192, 32): ["", "run2", "T:32,64,16+run4"],
    (192, 64): ["", "T:64,32,16+run2"],
    (384, 64): ["", "run2"],
    (384, 96): ["", "run2"],
    (576, 96): ["", "run2"],
    # (7-pixel rows: no runs) the tall tiles with 5 rows per thread (ty = 32 or 64 threads along
    # the filters, 2 or 4 columns each) and, for K 320, 10 rows x 2 columns.
    (576, 160): ["", "T:160,16,32,5"],
    (960, 320): ["", "T:320,16,32,5", "T:320,16,32,10"],
}

# Run 6, second call (--runs2): larger tiles with runs of 4 for the stride-1 blocks that gained,
# and the 5/10-rows-per-thread tall tiles again.
RUNS2_B32 = {
    (32, 16): ["", "T:16,128,16+run4", "T:16,64,32+run4"],
    (144, 24): ["", "T:32,64,16+run4", "T:32,128,16+run4", "T:32,64,32+run4", "T:32,128,8+run4"],
    (192, 32): ["", "T:32,64,16+run4", "T:32,128,16+run4", "T:32,64,32+run4"],
    (384, 64): ["", "run2", "T:64,32,32+run2"],
    (576, 160): ["", "T:160,16,32,5"],
    (960, 160): ["", "T:160,16,32,5"],
    (960, 320): ["", "T:320,16,32,10"],
}
# Run 6, third call (--runs3): wider tiles without runs for the stride-2 blocks.
RUNS3_B32 = {
    (96, 24): ["", "T:32,64,16", "T:32,128,16"],
    (144, 32): ["", "T:32,64,16", "T:32,128,16"],
    (192, 64): ["", "T:64,32,16", "T:64,16,32"],
}
# Run 6, fourth call (--runs4): 3 rows x 4 columns per thread for the 96-filter tall tiles, BK 16
# for C960 K160 and C384 K64.
RUNS4_B32 = {
    (384, 64): ["", "T:64,16,16"],
    (384, 96): ["", "T:96,32,32,3"],
    (576, 96): ["", "T:96,32,32,3"],
    (960, 160): ["", "T:160,16,16", "T:160,16,32,5"],
}
# Run 6, fifth call (--runs5): the 7x7 blocks under short tiles split over 2 / 4 thread groups
# (more warps per SM; each intermediate value computed ceil(K / rows) times).
RUNS5_B32 = {
    (576, 160): ["", "T:64,16,32,0,4", "T:160,16,32,5,2"],
    (960, 160): ["", "T:64,16,32,0,4", "T:64,16,32,0,2", "T:32,16,32,0,4", "T:64,16,32,0,4+noraw"],
    (960, 320): ["", "T:64,16,32,0,4", "T:64,16,32,0,2", "T:128,16,16,0,4"],
}
# Run 6, last call (--runs6): the 320-filter block as two 160-row tiles (196 blocks, all SMs busy,
# the intermediate computed twice), never measured before.
if "--runs6" in sys.argv:
    runs, run4, RUNS5_B32 = True, True, {(960, 320): ["", "T:160,16,32", "T:160,16,32,5"]}
if "--runs5" in sys.argv or "--runs6" in sys.argv:
    runs, run4, RUNS_B32 = True, True, RUNS5_B32
if "--runs4" in sys.argv:
    runs, run4, RUNS3_B32 = True, True, RUNS4_B32
    RUNS_B32 = RUNS4_B32
if "--runs3" in sys.argv:
    runs, run4, RUNS_B32 = True, True, RUNS3_B32
if "--runs2" in sys.argv:
    runs, run4, RUNS_B32 = True, True, RUNS2_B32


def configs(k, cols, c):
    if mma3:  # run 7 call 5: the default, and MMAs asked for where the rule keeps SIMT
        return ["", "mma"] if k in (16, 320) else [""]
    if mma2:  # run 7 call 4: warp layouts, BK and prefetch on the 14x14 / 7x7 wide blocks
        if k == 96:
            return ["", "mma+T:96,16,32+W:3,2", "mma+T:96,16,32+W:2,2", "mma+T:96,16,16", "nopf"]
        if k == 160:
            return ["", "mma+W:1,2", "mma+W:2,1", "mma+T:160,16,16", "nopf"]
        if k == 320:
            return ["", "mma+W:5,1", "mma+W:2,2", "mma+nopf", "nopf"]
        return [""]
    if mma_mode:
        if "--default-only" in sys.argv:
            return [""]
        if cols < 1000:  # batch 1
            return ["", "mma"]
        out = ["", "mma"]
        if c >= 384:
            r = -(-k // 32) * 32
            if k == 64:
                out += ["mma+T:64,32,32", "mma+T:64,64,32", "mma+T:64,64,16"]
            elif k <= 128:
                out += [f"mma+T:{r},32,32", f"mma+T:{r},64,16", f"mma+T:{r},16,32"]
            elif k <= 160:
                out += [f"mma+T:{r},32,32", f"mma+T:{r},16,32", f"mma+T:{r},32,16"]
            else:
                out += [f"mma+T:{r},32,16", f"mma+T:{r},16,32", f"mma+T:{r},32,32"]
        elif k >= 64:
            out += [f"mma+T:64,64,32", f"mma+T:64,32,32"]
        else:
            out += ["mma+W:1,8"]
        return out
    if runs:
        if cols < 1000:  # batch 1
            return ["", "run4+noraw"]
        return RUNS_B32.get((c, k), [""])
    if nxt:
        return ["", "raw", "sp2+noraw", "sp4+noraw"] if c >= 384 and cols >= 1000 else [""]
    if final4:
        if cols < 1000:  # batch 1
            return [""]
        if c < 192 or (c == 192 and k < 64):
            return [""]
        if c < 384:
            return ["", "sp1"]
        out = ["", "sp1", "sp2+raw" if cols // 16 < 132 else "sp4+raw"]
        if k == 320:  # (the rule's 4 groups do not fit: the default is 2 groups)
            out[2] = "T:160,16,32,0,2+raw"
        if k == 160:
            out.append("T:160,8,32,0,2+raw")
        return out
    if run4:
        if "--default-only" in sys.argv:
            return [""]
        if cols < 1000:  # batch 1
            return ["", "sp2", "sp4+raw"]
        if c < 384:
            return ["", "sp2", "sp4", "sp2+raw"]
        out = ["", "sp2", "sp4", "raw", "sp2+raw", "sp4+raw"]
        if k == 160:
            out += ["T:160,8,32,0,2+raw"]
        if k == 320:
            out += ["T:160,16,32,0,2+raw"]
        return out
    if wide:
        old = f"{128 if 64 < k <= 128 else 64},16,32" if c >= 256 else None
        r = -(-k // 32) * 32
        out = ["", old]
        # (the default "" is already r,16,32 for K > 128 and r,32,32 for K = 96 at batch 32)
        if k == 64:
            out += ["64,32,32"]
        elif k <= 128:
            out += [f"{r},16,32", f"{r},64,16"]
        elif k <= 160:
            out += [f"{r},16,32,5", f"{r},8,32", f"{r},32,16"]
        else:
            out += [f"{r},16,16", f"{r},8,32", f"{r},16,32,10", f"{r // 2},16,32"]
        return [v for i, v in enumerate(out) if v is not None and v not in out[:i]]
    if prefetch:
        rows0 = max(16, pow2_at_least(k)) if k <= 128 else 64
        bk0 = 32 if c >= 256 else 16
        cc = max(16, 1024 // rows0)
        return ["", "pf", f"pf:{rows0},{2 * cc},{bk0}"]
    if "--default-only" in sys.argv:
        return [""]
    if final and "--final3" in sys.argv:
        # Run 3: the default tile, and for the wide blocks also the tile the rule gave before.
        return [""] + ([f"{128 if 64 < k <= 128 else 64},16,32"] if c >= 384 and k > 64 else [])
    if final:
        rows0 = max(16, pow2_at_least(k)) if k <= 128 else 64
        bk0 = 32 if c >= 256 else 16
        out = [""]
        if k > 128:
            out += [f"128,16,{bk0}", f"32,32,{bk0}"]
        elif rows0 >= 64:
            out += [f"{rows0},16,16" if bk0 == 32 else f"{rows0},32,{bk0}"]
        else:
            out += [f"{rows0},{2048 // rows0},{bk0}"]
        return out
    rows0 = max(16, pow2_at_least(k)) if k <= 128 else 64
    bk0 = 32 if c >= 256 else 16
    out = ["off", ""]
    for cc in ((64, 128, 256) if rows0 == 16 else (32, 64, 128) if rows0 == 32 else (16, 32, 64)):
        out.append(f"{rows0},{cc},{bk0}")
    alt = 8 if bk0 == 16 else 16
    out.append(f"{rows0},{max(16, 4096 // rows0)},{alt}")
    if k > 128:
        out.append(f"128,64,{bk0 if bk0 < 32 else 16}")
    seen, res = set(), []
    for v in out:
        if v not in seen:
            seen.add(v)
            res.append(v)
    return res


def make_block(path, n, c, h, s, k, rng):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    wd = (rng.standard_normal((c, 1, 3, 3)) * 0.3).astype(np.float32)
    bd = (rng.standard_normal(c) * 0.1).astype(np.float32)
    wp = (rng.standard_normal((k, c, 1, 1)) / np.sqrt(c)).astype(np.float32)
    bp = (rng.standard_normal(k) * 0.1).astype(np.float32)
    ho = (h + 2 - 3) // s + 1
    nodes = [
        helper.make_node("Conv", ["x", "wd", "bd"], ["d"], name="dw", group=c, kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1], strides=[s, s]),
        helper.make_node("Clip", ["d", "lo", "hi"], ["r"], name="relu6"),
        helper.make_node("Conv", ["r", "wp", "bp"], ["y"], name="pw", kernel_shape=[1, 1]),
    ]
    inits = [numpy_helper.from_array(wd, "wd"), numpy_helper.from_array(bd, "bd"),
             numpy_helper.from_array(wp, "wp"), numpy_helper.from_array(bp, "bp"),
             numpy_helper.from_array(np.array(0.0, np.float32), "lo"),
             numpy_helper.from_array(np.array(6.0, np.float32), "hi")]
    g = helper.make_graph(nodes, "block", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n, c, h, h])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n, k, ho, ho])], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), path)
    return wd, bd, wp, bp, ho


plan_path = os.path.join(work, "plan.json")
with open(plan_path, "w") as f:
    json.dump({"format": "tessera-fusion-plan", "version": 1, "planner": "user", "hardware": "h200",
               "groups": [{"name": "block", "kind": "dw-pw", "ops": ["dw", "relu6", "pw"], "anchor": "dw",
                           "prologue": [], "epilogue": [], "tile": {"h": 0, "w": 0, "depth": 0, "filters": 0},
                           "predicted_bytes": -1, "predicted_bytes_saved": 0, "redundant_flops": 0,
                           "reason": "sweep"}]}, f)
rng = np.random.default_rng(0)
rows = []
copy_bw = None
if final:
    a = torch.empty(1 << 28, dtype=torch.float32, device="cuda").uniform_()
    b = torch.empty_like(a)
    copy_bw = 2 * 4 * (1 << 28) / cuda_median(lambda: b.copy_(a))
    print("d2d copy GB/s", copy_bw * 1e-9, flush=True)
    del a, b
for batch in batches:
    for bi in sel:
        c, h, s, k = BLOCKS[bi]
        tag = f"b{batch}_c{c}_h{h}_s{s}_k{k}"
        path = os.path.join(work, f"block_{tag}.onnx")
        wd, bd, wp, bp, ho = make_block(path, batch, c, h, s, k, rng)
        x = rng.standard_normal((batch, c, h, h)).astype(np.float32)
        xp = os.path.join(work, f"x_{tag}.npy")
        np.save(xp, x)
        tx = torch.from_numpy(x).cuda()
        twd, tbd, twp, tbp = (torch.from_numpy(v).cuda() for v in (wd, bd, wp, bp))
        with torch.no_grad():
            def block(inp):
                return F.conv2d(torch.clamp(F.conv2d(inp, twd, tbd, stride=s, padding=1, groups=c), 0, 6), twp, tbp)
            y_ref = block(tx).double().cpu().numpy()
            t_eager = cuda_median(lambda: block(tx))
            t_comp = None
            if final and ("--compile-all" in sys.argv or ("--final3" not in sys.argv and bi in (0, 2, 10))):
                try:
                    cb = torch.compile(block)
                    t_comp = cuda_median(lambda: cb(tx))
                except Exception as ex:  # noqa: BLE001
                    print("torch.compile failed:", ex, flush=True)
        rec = {"batch": batch, "C": c, "H": h, "stride": s, "K": k, "eager_us": t_eager * 1e6, "tiles": {}}
        if t_comp:
            rec["compile_us"] = t_comp * 1e6
        if copy_bw:
            rec["floor_us"] = 4 * (x.size + wd.size + bd.size + wp.size + bp.size + batch * k * ho * ho) / copy_bw * 1e6
        for cfg in configs(k, batch * ho * ho, c):
            env = dict(os.environ)
            env.pop("TESSERA_DWPW_PREFETCH", None)
            tile = cfg
            if run4:
                for kk in ("TESSERA_DWPW_SPLIT", "TESSERA_DWPW_RAW", "TESSERA_DWPW_GEMM", "TESSERA_DWPW_RUN",
                           "TESSERA_DWPW_MMA", "TESSERA_DWPW_WARPS"):
                    env.pop(kk, None)
                env.update(run4_env(cfg))
                tile = ""
            elif cfg.startswith("pf"):
                env["TESSERA_DWPW_PREFETCH"] = "1"
                tile = cfg[3:]
            if tile:
                env["TESSERA_DWPW_GEMM"] = tile
            elif not run4:
                env.pop("TESSERA_DWPW_GEMM", None)
            out_dir = os.path.join(work, f"out_{tag}")
            p = subprocess.run([cli, "run", path, "--target", "cuda", "--json", "--plan", plan_path, "--input",
                                f"x={xp}", "--output-dir", out_dir], capture_output=True, text=True, env=env,
                               timeout=120)
            try:
                j = json.loads(p.stdout)
                t = sum(kk["time_s"] for kk in j["kernels"]) * 1e6
                y = np.load(os.path.join(out_dir, "y.npy"))
                err = float(np.linalg.norm(y - y_ref) / np.linalg.norm(y_ref))
                rec["tiles"][cfg or "default"] = [round(t, 2), err, len(j["kernels"])]
            except Exception as ex:  # noqa: BLE001
                rec["tiles"][cfg or "default"] = [None, str(ex)[:80] + " " + p.stderr[-300:]]
        print(json.dumps({"sweep": rec}), flush=True)
        rows.append(rec)
        del tx

print("\n== tile sweep (us; eager = cuDNN warm; ratio = eager / best GEMM tile)")
for r in rows:
    ts = {kk: v[0] for kk, v in r["tiles"].items() if v[0] is not None}
    bad = [kk for kk, v in r["tiles"].items() if v[0] is None or v[1] > 1e-4]
    gem = {kk: v for kk, v in ts.items() if kk != "off"}
    best = min(gem, key=gem.get) if gem else "-"
    cells = " ".join(f"{kk}={v:.1f}" for kk, v in ts.items())
    extra = f" compile {r['compile_us']:.1f}" if r.get("compile_us") else ""
    extra += f" floor {r['floor_us']:.1f}" if r.get("floor_us") else ""
    print(f"b{r['batch']:<2} c{r['C']:<3} h{r['H']:<3} s{r['stride']} k{r['K']:<3} eager {r['eager_us']:7.1f}{extra} | {cells} | "
          f"best {best} x{r['eager_us'] / gem[best] if gem else 0:.2f} bad {bad}")
for batch in batches:
    for which in ("default", "best", "off"):
        v = []
        for r in rows:
            if r["batch"] != batch:
                continue
            ts = {kk: vv[0] for kk, vv in r["tiles"].items() if vv[0] is not None}
            if which == "best":
                gem = [vv for kk, vv in ts.items() if kk != "off"]
                t = min(gem) if gem else None
            else:
                t = ts.get(which)
            if t:
                v.append(r["eager_us"] / t)
        if v:
            print(f"batch {batch} {which}: geomean speedup over eager {float(np.exp(np.mean(np.log(v)))):.2f}x ({len(v)} blocks)")
