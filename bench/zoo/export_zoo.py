#!/usr/bin/env python3
"""Exports a zoo of models Tessera was not designed for, with random weights, and torch's outputs.

Each model is written as NAME.onnx next to NAME.in.<input>.npy (the inputs fed to torch) and
NAME.out.<output>.npy (torch's fp32 outputs on the CPU), and manifest.json lists them all.

  --size small   reduced widths/depths of the same torchvision / torch.nn architectures (what
                 tests/zoo keeps and CI checks on the CPU): a few MB in all
  --size large   the real configurations (ResNet-50, ViT-B/16, BERT-base ...) for bench/ runs
  --exporter     torchscript (torch.onnx.export(dynamo=False)) or dynamo (torch 2.x, opset 18+)
  --opset        13, 17 (TorchScript) or 18+ (dynamo)
  --batch        batch size of the exported inputs (the batch axis stays symbolic: 'N')

Needs torch and torchvision (PyPI); the product itself never imports them.
Usage: python3 bench/zoo/export_zoo.py --out tests/zoo --size small --opset 17
"""
import argparse
import json
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torchvision
from torchvision.models import resnet as tv_resnet
from torchvision.models.convnext import CNBlockConfig, ConvNeXt
from torchvision.models.densenet import DenseNet
from torchvision.models.efficientnet import EfficientNet, _efficientnet_conf
from torchvision.models.mobilenetv3 import MobileNetV3, _mobilenet_v3_conf
from torchvision.models.regnet import BlockParams, RegNet
from torchvision.models.vision_transformer import VisionTransformer


def randomize(model, seed):
    """Random weights where torchvision initialises zeros (ViT's head, class token, biases) and
    random BatchNorm statistics, so that no part of the output is trivially zero or identity."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            if p.numel() and float(p.abs().max()) == 0.0:
                p.copy_(torch.randn(p.shape, generator=g) * 0.05)
        for m in model.modules():
            if isinstance(m, nn.modules.batchnorm._BatchNorm):
                c = m.num_features
                m.running_mean.copy_(torch.randn(c, generator=g) * 0.1)
                m.running_var.copy_(torch.rand(c, generator=g) * 0.5 + 0.75)
                m.weight.copy_(torch.rand(c, generator=g) * 0.5 + 0.75)
                m.bias.copy_(torch.randn(c, generator=g) * 0.1)
    return model.eval()


class MiniResNet(nn.Module):
    """torchvision's ResNet with narrower stages (BasicBlock or Bottleneck blocks as in ResNet-18/50)."""

    def __init__(self, block, layers, widths=(8, 16, 32, 64), classes=10):
        super().__init__()
        self.inplanes = widths[0]
        self.conv1 = nn.Conv2d(3, widths[0], 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(widths[0])
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        stages = []
        for i, (w, n) in enumerate(zip(widths, layers)):
            stages.append(self._make_layer(block, w, n, 1 if i == 0 else 2))
        self.layers = nn.Sequential(*stages)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(widths[-1] * block.expansion, classes)

    def _make_layer(self, block, planes, blocks, stride):
        down = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            down = nn.Sequential(tv_resnet.conv1x1(self.inplanes, planes * block.expansion, stride),
                                 nn.BatchNorm2d(planes * block.expansion))
        out = [block(self.inplanes, planes, stride, down)]
        self.inplanes = planes * block.expansion
        out += [block(self.inplanes, planes) for _ in range(1, blocks)]
        return nn.Sequential(*out)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.avgpool(self.layers(x))
        return self.fc(torch.flatten(x, 1))


class BertLike(nn.Module):
    """An encoder as people write it with torch.nn: embeddings + TransformerEncoder, with a key
    padding mask computed from the ids (id 0 = padding), GELU feed-forward, post-LayerNorm."""

    def __init__(self, vocab, d, heads, ff, layers, seq):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(1, seq, d) * 0.02)
        layer = nn.TransformerEncoderLayer(d, heads, ff, dropout=0.0, activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.pool = nn.Linear(d, d)

    def forward(self, ids):
        pad = ids == 0
        x = self.tok(ids) + self.pos[:, : ids.shape[1]]
        x = self.encoder(x, src_key_padding_mask=pad)
        return x, torch.tanh(self.pool(x[:, 0]))


class GptLike(nn.Module):
    """A decoder-only LM: pre-LayerNorm blocks with a causal mask built from the sequence length,
    a final LayerNorm and an LM head tied to the token embedding."""

    def __init__(self, vocab, d, heads, ff, layers, seq):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(seq, d)
        layer = nn.TransformerEncoderLayer(d, heads, ff, dropout=0.0, activation="gelu", batch_first=True,
                                           norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d)

    def forward(self, ids):
        n = ids.shape[1]
        positions = torch.arange(n, device=ids.device)
        causal = positions[None, :] > positions[:, None]
        x = self.tok(ids) + self.pos(positions)[None]
        x = self.norm(self.blocks(x, mask=causal))
        return x @ self.tok.weight.t()


def image(batch, size, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(batch, 3, size, size, generator=g)


def token_ids(batch, seq, vocab, seed, pad_tail):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(1, vocab, (batch, seq), generator=g)
    for b in range(batch):
        cut = seq - (pad_tail * (b + 1)) % seq if pad_tail else seq
        ids[b, cut:] = 0
    return ids


def zoo(size, batch):
    """(name, constructor, example inputs, input names, output names) for every model."""
    small = size == "small"
    vision = []
    if small:
        vision = [
            ("resnet18", lambda: MiniResNet(tv_resnet.BasicBlock, [2, 1, 1, 1]), 64),
            ("resnet50", lambda: MiniResNet(tv_resnet.Bottleneck, [1, 1, 1, 1]), 64),
            ("mobilenet_v2", lambda: torchvision.models.mobilenet_v2(width_mult=0.25, num_classes=10), 96),
            ("mobilenet_v3_small", lambda: MobileNetV3(*_mobilenet_v3_conf("mobilenet_v3_small", width_mult=0.25),
                                                        num_classes=10), 96),
            # 224 so that the first squeeze-excitation pools 112x112 per channel, as in the full model
            ("efficientnet_b0", lambda: _efficientnet(width_mult=0.25, depth_mult=0.25), 224),
            ("convnext_tiny", lambda: ConvNeXt([CNBlockConfig(16, 32, 1), CNBlockConfig(32, 64, 1),
                                                CNBlockConfig(64, 128, 1), CNBlockConfig(128, None, 1)],
                                               layer_scale=0.5, num_classes=10), 64),
            ("regnet_y", lambda: RegNet(BlockParams.from_init_params(depth=4, w_0=16, w_a=8.0, w_m=2.0, group_width=8,
                                                                     se_ratio=0.25),
                                        stem_width=16, num_classes=10), 64),
            ("densenet", lambda: DenseNet(growth_rate=8, block_config=(2, 2, 2, 2), num_init_features=16, bn_size=2,
                                          num_classes=10), 64),
            ("vit", lambda: VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=32,
                                              mlp_dim=64, num_classes=10), 32),
        ]
        text = [("bert_like", lambda: BertLike(100, 32, 4, 64, 2, 16), 16, 100, 4),
                ("gpt_like", lambda: GptLike(100, 32, 4, 64, 2, 16), 16, 100, 0)]
    else:
        vision = [
            ("resnet18", lambda: torchvision.models.resnet18(), 224),
            ("resnet50", lambda: torchvision.models.resnet50(), 224),
            ("mobilenet_v2", lambda: torchvision.models.mobilenet_v2(), 224),
            ("mobilenet_v3_large", lambda: torchvision.models.mobilenet_v3_large(), 224),
            ("efficientnet_b0", lambda: torchvision.models.efficientnet_b0(), 224),
            ("convnext_tiny", lambda: torchvision.models.convnext_tiny(), 224),
            ("regnet_y_400mf", lambda: torchvision.models.regnet_y_400mf(), 224),
            ("densenet121", lambda: torchvision.models.densenet121(), 224),
            ("vit_b_16", lambda: torchvision.models.vit_b_16(), 224),
        ]
        text = [("bert_like", lambda: BertLike(30522, 768, 12, 3072, 12, 128), 128, 30522, 16),
                ("gpt_like", lambda: GptLike(50257, 768, 12, 3072, 12, 128), 128, 50257, 0)]
    out = []
    for i, (name, make, res) in enumerate(vision):
        out.append((name, make, (image(batch, res, 100 + i),), ["input"], ["logits"]))
    for i, (name, make, seq, vocab, pad) in enumerate(text):
        # two sequences with different padding in the small zoo: attention over a real batch
        ids = token_ids(max(batch, 2) if small else batch, seq, vocab, 200 + i, pad)
        outs = ["hidden", "pooled"] if name.startswith("bert") else ["logits"]
        out.append((name, make, (ids,), ["ids"], outs))
    return out


def _efficientnet(**conf):
    setting, last = _efficientnet_conf("efficientnet_b0", **conf)
    return EfficientNet(setting, dropout=0.0, stochastic_depth_prob=0.0, num_classes=10, last_channel=last)


def export(model, args, path, input_names, output_names, exporter, opset):
    dyn = {n: {0: "N"} for n in input_names}
    if exporter == "torchscript":
        torch.onnx.export(model, args, path, opset_version=opset, input_names=input_names,
                          output_names=output_names, dynamic_axes=dyn, dynamo=False)
    else:
        batch = torch.export.Dim("N", min=1, max=1024)
        prog = torch.onnx.export(model, args, dynamo=True, opset_version=opset, input_names=input_names,
                                 output_names=output_names, dynamic_shapes=tuple({0: batch} for _ in args))
        prog.save(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--size", choices=["small", "large"], default="small")
    ap.add_argument("--exporter", choices=["torchscript", "dynamo"], default="torchscript")
    ap.add_argument("--opset", type=int, default=17)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--only", default="", help="comma-separated model names")
    ap.add_argument("--suffix", default="", help="appended to every file name, e.g. _op13")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    torch.manual_seed(0)
    manifest_path = os.path.join(a.out, "manifest.json")
    manifest = json.load(open(manifest_path)) if os.path.exists(manifest_path) else {"models": []}
    only = set(filter(None, a.only.split(",")))
    failures = 0
    for name, make, inputs, in_names, out_names in zoo(a.size, a.batch):
        if only and name not in only:
            continue
        stem = name + a.suffix
        torch.manual_seed(hash(name) % 1000)
        model = randomize(make(), 7)
        with torch.no_grad():
            ref = model(*inputs)
        refs = ref if isinstance(ref, tuple) else (ref,)
        path = os.path.join(a.out, stem + ".onnx")
        try:
            export(model, inputs, path, in_names, out_names, a.exporter, a.opset)
        except Exception as e:  # an exporter that cannot export a model is a figure too
            print(f"{stem}: export failed: {type(e).__name__}: {str(e).splitlines()[0][:200]}", file=sys.stderr)
            failures += 1
            continue
        entry = {"name": stem, "model": stem + ".onnx", "exporter": a.exporter, "opset": a.opset,
                 "size": a.size, "batch": a.batch, "torch": torch.__version__, "inputs": {}, "outputs": {}}
        for n, t in zip(in_names, inputs):
            f = f"{stem}.in.{n}.npy"
            np.save(os.path.join(a.out, f), t.numpy())
            entry["inputs"][n] = f
        for n, t in zip(out_names, refs):
            f = f"{stem}.out.{n}.npy"
            np.save(os.path.join(a.out, f), t.numpy().astype(np.float32))
            entry["outputs"][n] = f
        manifest["models"] = [m for m in manifest["models"] if m["name"] != stem] + [entry]
        print(f"{stem}: {os.path.getsize(path) / 1e6:.2f} MB, outputs "
              + ", ".join(f"{n}{list(t.shape)}" for n, t in zip(out_names, refs)))
    manifest["models"].sort(key=lambda m: m["name"])
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
