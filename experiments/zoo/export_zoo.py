#!/usr/bin/python3
"""Exports the zoo of real-size models (issue #33 item 4) to ONNX: structure only.

Run with Debian's interpreter (/usr/bin/python3: torch 1.13, torchvision 0.14):
    /usr/bin/python3 experiments/zoo/export_zoo.py OUT_DIR [--models gpt12,resnet152,...]

Writes OUT_DIR/<model>.onnx for
  gpt12, gpt48     a GPT-style decoder: token and position embeddings, N pre-norm
                   nn.TransformerEncoderLayer blocks (d = 768, 12 heads, feed-forward 3072,
                   GELU) under a causal mask, a final LayerNorm and a language-model head
                   (GPT-2's vocabulary, 50257); sequence 128, batch 8
  gptN             the same with N layers (e.g. gpt2, the CI test's variant)
  gptNwD           N layers of width D (heads D / 64, feed-forward 4 D): the deep, narrow
                   decoders of the scale benchmark (issue #34), e.g. gpt450w128, about 50k
                   training ops whose parameters fit a small machine. Decoders deeper than
                   BLOCKWISE_ABOVE layers are exported piece by piece (export_blockwise)
  resnet152, inception_v3, googlenet, vit_b_16   torchvision, weights=None
Nothing is downloaded and no weights are written (export_params=False: the parameters
become graph inputs with shapes, which `placeto import` takes as parameters; docs/IMPORT.md).
Every model is exported in eval mode, opset 13, like tests/onnx/export_models.py. The
torchvision models are exported at batch 1 and their training batch is given to
`placeto import --training --batch B` (import_zoo.sh), which scales activations by B; the
decoders are exported at their training batch, 8 (their input is (sequence, batch), and
`--batch` takes the first dimension for the batch). The data input is named `input` (ViT
needs `--inputs input`).
"""
import argparse
import os
import re
import sys
import time

import torch
import torch.nn as nn
import torchvision

SEQUENCE = 128
DECODER_BATCH = 8
VOCAB = 50257  # GPT-2's


class Decoder(nn.Module):
    """A GPT-style decoder: nn.TransformerEncoderLayer blocks under a causal mask."""

    def __init__(self, layers, d_model=768, heads=12, seq=SEQUENCE, vocab=VOCAB):
        super().__init__()
        self.seq = seq
        self.tokens = nn.Embedding(vocab, d_model)
        self.positions = nn.Parameter(torch.zeros(seq, 1, d_model))
        # batch_first=False keeps torch 1.13 off the fused fast path, which ONNX cannot export.
        block = nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=4 * d_model,
                                           dropout=0.1, activation="gelu", norm_first=True)
        self.blocks = nn.TransformerEncoder(block, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab, bias=False)

    def forward(self, tokens):  # tokens: (seq, batch)
        # The mask depends on no input: the export folds it into a constant (Trilu needs
        # opset 14, a comparison of two aranges does not).
        i = torch.arange(self.seq)
        mask = torch.zeros(self.seq, self.seq).masked_fill(i[None, :] > i[:, None],
                                                           float("-inf"))
        x = self.tokens(tokens) + self.positions
        return self.head(self.norm(self.blocks(x, mask=mask)))


def build(name):
    """The PyTorch model `name` and its example input."""
    torch.manual_seed(0)
    tv = torchvision.models
    m = re.fullmatch(r"gpt(\d+)(?:w(\d+))?", name)
    if m:
        width = int(m.group(2) or 768)
        if width % 64:
            raise SystemExit("%s: the width must be a multiple of 64 (heads of 64)" % name)
        decoder = Decoder(int(m.group(1)), d_model=width, heads=width // 64)
        return decoder, torch.zeros(SEQUENCE, DECODER_BATCH, dtype=torch.long)
    if name == "resnet152":
        return tv.resnet152(weights=None), torch.randn(1, 3, 224, 224)
    if name == "inception_v3":
        model = tv.inception_v3(weights=None, aux_logits=False, init_weights=False)
        return model, torch.randn(1, 3, 299, 299)
    if name == "googlenet":
        model = tv.googlenet(weights=None, aux_logits=False, init_weights=False)
        return model, torch.randn(1, 3, 224, 224)
    if name == "vit_b_16":
        return tv.vit_b_16(weights=None), torch.randn(1, 3, 224, 224)
    raise SystemExit("unknown model %s (gptN, gptNwD, resnet152, inception_v3, googlenet, vit_b_16)"
                     % name)


# torch 1.13's exporter (torch._C._jit_pass_onnx, NodeToONNX) takes time superlinear in the
# graph: a gptNw128 decoder took 3.2 s at 20 layers, 10.8 s at 40 and 1053 s at 180 layers,
# so 450 layers would take hours. Deeper decoders are exported piece by piece instead.
BLOCKWISE_ABOVE = 64


class _Stem(nn.Module):
    def __init__(self, decoder):
        super().__init__()
        self.tokens, self.positions = decoder.tokens, decoder.positions

    def forward(self, tokens):
        return self.tokens(tokens) + self.positions


class _Block(nn.Module):
    """One decoder layer with the causal mask built inside, as Decoder.forward builds it."""

    def __init__(self, layer, seq):
        super().__init__()
        self.layer, self.seq = layer, seq

    def forward(self, x):
        i = torch.arange(self.seq)
        mask = torch.zeros(self.seq, self.seq).masked_fill(i[None, :] > i[:, None],
                                                           float("-inf"))
        return self.layer(x, src_mask=mask)


class _Head(nn.Module):
    def __init__(self, decoder):
        super().__init__()
        self.norm, self.head = decoder.norm, decoder.head

    def forward(self, x):
        return self.head(self.norm(x))


def export_blockwise(decoder, example, path):
    """Exports a Decoder as its stem, each layer and its head, each with torch.onnx.export,
    and joins them with the onnx package: piece k's names get the prefix "pK/" and its data
    input is renamed to piece k-1's output. Time is linear in the layers. The joined graph
    computes what Decoder.forward computes (nn.TransformerEncoder with
    enable_nested_tensor=False and no final norm calls each layer in turn with the mask);
    on gpt40w128 its import equals the whole-model export's (experiments/zoo/README.md)."""
    import io

    import onnx
    import onnx.compose

    pieces = [_Stem(decoder)] + [_Block(layer, decoder.seq) for layer in decoder.blocks.layers]
    pieces.append(_Head(decoder))
    graph = onnx.GraphProto(name="main_graph")
    opset = None
    x = example
    previous_output = None
    for k, piece in enumerate(pieces):
        buffer = io.BytesIO()
        torch.onnx.export(piece, (x,), buffer, export_params=False, opset_version=13,
                          do_constant_folding=True, input_names=["input"])
        with torch.no_grad():
            x = piece(x)
        model = onnx.load_from_string(buffer.getvalue())
        opset = model.opset_import
        if k:
            model = onnx.compose.add_prefix(model, "p%d/" % k)
            data_input = "p%d/input" % k
            for node in model.graph.node:
                for j, name in enumerate(node.input):
                    if name == data_input:
                        node.input[j] = previous_output
        graph.node.extend(model.graph.node)
        graph.initializer.extend(model.graph.initializer)
        graph.value_info.extend(model.graph.value_info)
        graph.input.extend(i for i in model.graph.input if not (k and i.name == "p%d/input" % k))
        previous_output = model.graph.output[0].name
        if k + 1 == len(pieces):
            graph.output.extend(model.graph.output)
    joined = onnx.helper.make_model(graph, opset_imports=opset, producer_name="pytorch")
    onnx.checker.check_model(joined)
    onnx.save(joined, path)


def export(name, out_dir, blockwise=False):
    model, example = build(name)
    model.eval()
    path = os.path.join(out_dir, name + ".onnx")
    if isinstance(model, Decoder) and (blockwise or len(model.blocks.layers) > BLOCKWISE_ABOVE):
        export_blockwise(model, example, path)
        return path
    # Gradients stay enabled: under no_grad torch 1.13's nn.MultiheadAttention (ViT's, with
    # batch_first=True) takes its fused fast path, which ONNX cannot export.
    torch.onnx.export(model, (example,), path, export_params=False, opset_version=13,
                      do_constant_folding=True, input_names=["input"])
    return path


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out_dir")
    p.add_argument("--models", default="gpt12,gpt48,resnet152,inception_v3,googlenet,vit_b_16")
    p.add_argument("--blockwise", action="store_true",
                   help="export decoders piece by piece at any depth (the default above %d "
                   "layers)" % BLOCKWISE_ABOVE)
    a = p.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    for name in a.models.split(","):
        t0 = time.time()
        path = export(name, a.out_dir, a.blockwise)
        print("%s: %d bytes in %.1f s" % (path, os.path.getsize(path), time.time() - t0),
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
