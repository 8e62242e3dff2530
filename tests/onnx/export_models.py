#!/usr/bin/python3
"""Exports the real models that `placeto import` is tested on, into a directory.

Run with Debian's interpreter (/usr/bin/python3: torch 1.13, torchvision 0.14):
    /usr/bin/python3 tests/onnx/export_models.py OUT_DIR [--params] [--models resnet50,...]

Writes OUT_DIR/<model>.onnx for resnet50, inception_v3, transformer and seq2seq.  Models are
exported in eval mode at batch 1; without --params the weights are left out (they become graph
inputs with shapes), which keeps files small and tests the importer's no-weights path.
"""
import argparse
import os
import sys
import time

import torch
import torch.nn as nn
import torchvision


class Seq2Seq(nn.Module):
    """An LSTM encoder-decoder with teacher forcing (the decoder reads the target tokens)."""

    def __init__(self, vocab=1000, emb=256, hidden=512, layers=2):
        super().__init__()
        self.src_emb = nn.Embedding(vocab, emb)
        self.tgt_emb = nn.Embedding(vocab, emb)
        self.encoder = nn.LSTM(emb, hidden, layers)
        self.decoder = nn.LSTM(emb, hidden, layers)
        self.proj = nn.Linear(hidden, vocab)

    def forward(self, src, tgt):
        _, state = self.encoder(self.src_emb(src))
        out, _ = self.decoder(self.tgt_emb(tgt), state)
        return torch.log_softmax(self.proj(out), dim=-1)


def transformer():
    # batch_first=False keeps torch 1.13 off the fused fast path, which ONNX cannot export.
    layer = nn.TransformerEncoderLayer(d_model=256, nhead=8, dim_feedforward=1024, dropout=0.1)
    return nn.TransformerEncoder(layer, num_layers=4)


def build(name):
    """The PyTorch model `name` (seeded: the same weights every time) and its example inputs."""
    torch.manual_seed(0)
    if name == "resnet50":
        model, args = torchvision.models.resnet50(weights=None), (torch.randn(1, 3, 224, 224),)
    elif name == "inception_v3":
        model = torchvision.models.inception_v3(weights=None, aux_logits=False, init_weights=False)
        args = (torch.randn(1, 3, 299, 299),)
    elif name == "transformer":
        model, args = transformer(), (torch.randn(64, 1, 256),)  # (seq, batch, d_model)
    elif name == "seq2seq":
        model = Seq2Seq()
        args = (torch.randint(0, 1000, (32, 1)), torch.randint(0, 1000, (32, 1)))
    elif name == "mobilenet_v2":  # not in the tests' default list; docs/COST_MODEL.md uses it
        model, args = torchvision.models.mobilenet_v2(weights=None), (torch.randn(1, 3, 224, 224),)
    else:
        raise SystemExit("unknown model " + name)
    return model, args


def export(name, out_dir, params):
    model, args = build(name)
    model.eval()
    path = os.path.join(out_dir, name + ".onnx")
    with torch.no_grad():
        torch.onnx.export(model, args, path, export_params=params, opset_version=13,
                          do_constant_folding=True)
    return path


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out_dir")
    p.add_argument("--params", action="store_true", help="include the weights")
    p.add_argument("--models", default="resnet50,inception_v3,transformer,seq2seq")
    a = p.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    for name in a.models.split(","):
        t0 = time.time()
        path = export(name, a.out_dir, a.params)
        print("%s: %d bytes in %.1f s" % (path, os.path.getsize(path), time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
