#!/usr/bin/python3
"""Models saved with a plain torch.jit.trace(...).save or
torch.jit.script(...).save (no ober.export: the file records no input
shapes), run by ober-run with their inputs as .npy files, against PyTorch
(1e-4 relative). The recurrent models also build a training step
(`--input-shape` gives ober-opt the shapes) whose gradients match autograd
(1e-4 relative). Scripted modules keep their control flow (if, for, while),
which the importer resolves at import time.

  torchscript_models_test.py --bin build/bin
"""
import argparse
import os
import sys
import tempfile
import unittest
import warnings

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from training_parity_test import check_gradients, rel_close, run  # noqa: E402

BIN = None
warnings.filterwarnings("ignore")


class LSTMClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 16, num_layers=2, batch_first=True,
                            bidirectional=True)
        self.fc = nn.Linear(32, 5)

    def forward(self, x):
        out, (h, c) = self.lstm(x)
        return self.fc(out[:, -1])


class GRULanguageModel(nn.Module):
    def __init__(self, vocab=20):
        super().__init__()
        self.emb = nn.Embedding(vocab, 12)
        self.gru = nn.GRU(12, 16, num_layers=2)
        self.head = nn.Linear(16, vocab)

    def forward(self, tokens):
        out, h = self.gru(self.emb(tokens))
        return self.head(out)


class ControlFlow(nn.Module):
    """A scripted module's control flow: a loop over the time steps, one
    over a ModuleList, an `if` on the data (a select at run time) and a
    while loop whose condition follows from sizes."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(8, 8) for _ in range(3)])

    def forward(self, x):
        out = torch.zeros(x.size(1), x.size(2))
        for t in range(x.size(0)):
            out = out + x[t] * 0.5
        for layer in self.layers:
            out = torch.tanh(layer(out))
        if bool(out.mean() > 0):
            out = out - 1.0
        else:
            out = out * 3.0
        n = out.size(1)
        while n > 2:
            out = out * 0.5 + 0.25
            n = n // 2
        return out


def vary_statistics(model):
    """Batch-norm running statistics away from (0, 1), so that evaluation
    mode computes something a wrong import would change."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.modules.batchnorm._BatchNorm):
                m.running_mean.normal_(0, 0.1)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.normal_(0, 0.1)
    return model


class TorchScriptModels(unittest.TestCase):
    def trace(self, tmp, model, inputs, no_grad=False, script=False):
        """Saves the traced (or scripted) model and its inputs; returns the
        .pt path, the --input arguments and PyTorch's outputs."""
        path = os.path.join(tmp, "model.pt")
        model.eval()
        with torch.no_grad():
            traced = torch.jit.trace(model, inputs, check_trace=False) \
                if no_grad and not script else None
            expected = model(*inputs)
        if script:
            traced = torch.jit.script(model)
        if traced is None:
            traced = torch.jit.trace(model, inputs, check_trace=False)
        traced.save(path)
        args = []
        for i, x in enumerate(inputs):
            np.save(os.path.join(tmp, f"x{i}.npy"), x.numpy())
            args += ["--input", os.path.join(tmp, f"x{i}.npy")]
        if isinstance(expected, torch.Tensor):
            expected = (expected,)
        return path, args, [e.numpy() for e in expected]

    def check_inference(self, model, *inputs, no_grad=False, script=False):
        with tempfile.TemporaryDirectory() as tmp:
            path, args, expected = self.trace(tmp, model, inputs, no_grad,
                                              script)
            out = os.path.join(tmp, "out")
            run([os.path.join(BIN, "ober-run"), path, "--output-dir", out]
                + args)
            for i, e in enumerate(expected):
                got = np.load(os.path.join(out, f"{i}.npy"))
                self.assertEqual(got.shape, e.shape)
                self.assertGreater(float(np.abs(e).max()), 1e-3)
                rel_close(self, got, e, f"output {i}")

    def check_training(self, model, x, y, script=False):
        """The training step's gradients against autograd."""
        torch.manual_seed(0)
        with tempfile.TemporaryDirectory() as tmp:
            path, args, _ = self.trace(tmp, model, (x,), script=script)
            shape = "x".join(map(str, x.shape)) + ":" + \
                str(x.dtype).replace("torch.", "")
            step = os.path.join(tmp, "step.mlir")
            run([os.path.join(BIN, "ober-opt"), path, "--input-shape=" + shape,
                 "--ober-build-train-step=loss=cross-entropy optimizer=sgd",
                 "-o", step])
            np.save(os.path.join(tmp, "y.npy"), y.numpy())
            model.train()
            check_gradients(self, BIN, step, model, x, y,
                            [args[1], os.path.join(tmp, "y.npy")],
                            os.path.join(tmp, "grads"))

    def test_resnet18(self):
        import torchvision
        torch.manual_seed(1)
        model = vary_statistics(torchvision.models.resnet18(num_classes=10))
        self.check_inference(model, torch.randn(2, 3, 32, 32))

    def test_mobilenet_v3(self):
        import torchvision
        torch.manual_seed(2)
        model = vary_statistics(
            torchvision.models.mobilenet_v3_small(num_classes=10))
        with torch.no_grad():
            model.classifier[-1].weight.normal_(0, 1.0)
        self.check_inference(model, torch.randn(2, 3, 64, 64))

    def test_lstm_classifier(self):
        torch.manual_seed(3)
        model, x = LSTMClassifier(), torch.randn(3, 7, 8)
        self.check_inference(model, x)
        self.check_training(model, x, torch.randint(0, 5, (3,)))

    def test_gru_language_model(self):
        torch.manual_seed(4)
        model, tokens = GRULanguageModel(), torch.randint(0, 20, (7, 3))
        self.check_inference(model, tokens)
        self.check_training(model, tokens, torch.randint(0, 20, (7, 3)))

    def test_rnn_unbatched(self):
        torch.manual_seed(5)
        self.check_inference(nn.RNN(8, 6, nonlinearity="relu"),
                             torch.randn(5, 8))

    def test_transformer_encoder(self):
        torch.manual_seed(6)
        for norm_first, activation in ((False, "relu"), (True, "gelu")):
            layer = nn.TransformerEncoderLayer(
                16, 2, 32, batch_first=True, norm_first=norm_first,
                activation=activation)
            model = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            x = torch.randn(2, 5, 16)
            # With gradients: the unfused ops; under no_grad: PyTorch's
            # fused kernel (aten::_transformer_encoder_layer_fwd).
            self.check_inference(model, x)
            self.check_inference(model, x, no_grad=True)

    def test_multi_head_attention(self):
        torch.manual_seed(7)
        mha = nn.MultiheadAttention(16, 2, batch_first=True)

        class Wrap(nn.Module):
            def __init__(self):
                super().__init__()
                self.attn = mha

            def forward(self, q, kv):
                return self.attn(q, kv, kv)

        self.check_inference(Wrap(), torch.randn(2, 5, 16),
                             torch.randn(2, 7, 16), no_grad=True)


    def test_fused_paths_with_key_padding_masks(self):
        # Under no_grad a layer (or attention) given a key padding mask
        # calls the fused kernel with the mask.
        torch.manual_seed(8)
        x = torch.randn(2, 5, 16)
        pad = torch.tensor([[False, False, False, True, True]] + [[False] * 5])
        layer = nn.TransformerEncoderLayer(16, 4, 32, batch_first=True)
        mha = nn.MultiheadAttention(16, 2, batch_first=True)

        class Layer(nn.Module):
            def __init__(self):
                super().__init__()
                self.layer = layer

            def forward(self, x, pad):
                return self.layer(x, src_key_padding_mask=pad)

        class Attention(nn.Module):
            def __init__(self):
                super().__init__()
                self.attn = mha

            def forward(self, x, pad):
                return self.attn(x, x, x, key_padding_mask=pad)[0]

        self.check_inference(Layer(), x, pad, no_grad=True)
        self.check_inference(Attention(), x, pad, no_grad=True)

    def test_scripted_control_flow(self):
        torch.manual_seed(9)
        self.check_inference(ControlFlow(), torch.randn(5, 2, 8), script=True)
        self.check_inference(ControlFlow(), -torch.rand(5, 2, 8) - 4,
                             script=True)

    def test_scripted_recurrent(self):
        torch.manual_seed(10)
        model, x = LSTMClassifier(), torch.randn(3, 7, 8)
        self.check_inference(model, x, script=True)
        self.check_training(model, x, torch.randint(0, 5, (3,)), script=True)
        self.check_inference(GRULanguageModel(), torch.randint(0, 20, (7, 3)),
                             script=True)

    def test_scripted_transformer_encoder(self):
        torch.manual_seed(11)
        layer = nn.TransformerEncoderLayer(16, 4, 32, batch_first=True)
        self.check_inference(nn.TransformerEncoder(layer, 2),
                             torch.randn(2, 5, 16), script=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    args, rest = parser.parse_known_args()
    BIN = args.bin
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
