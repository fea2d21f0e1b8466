"""PyTorch models the CPU benchmark and the executable parity test train.

Each builder returns (module, inputs, target, loss) for one training batch:
`loss` is ober's name for the step's loss ("cross-entropy" or "mse"), and
`torch_loss(output, target)` computes the same in PyTorch.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self, sizes=(784, 512, 10)):
        super().__init__()
        self.fc1 = nn.Linear(sizes[0], sizes[1])
        self.fc2 = nn.Linear(sizes[1], sizes[2])

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


class SmallCNN(nn.Module):
    """Convolutions with training-mode batch norm, pooling, a linear head."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(16)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(16 * 4 * 4, 10)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = self.pool(F.relu(self.bn2(self.conv2(x))))
        return self.fc(torch.flatten(x, 1))


class Block(nn.Module):
    """A pre-norm decoder block: causal self-attention and a GELU MLP."""

    def __init__(self, hidden, heads, seq):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(hidden)
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.proj = nn.Linear(hidden, hidden)
        self.ln2 = nn.LayerNorm(hidden)
        self.fc = nn.Linear(hidden, 4 * hidden)
        self.out = nn.Linear(4 * hidden, hidden)
        self.register_buffer("mask", torch.tril(torch.ones(seq, seq)).bool())

    def forward(self, h):
        b, s, d = h.shape
        q, k, v = self.qkv(self.ln1(h)).chunk(3, dim=-1)
        split = lambda t: t.view(b, s, self.heads, -1).transpose(1, 2)
        q, k, v = split(q), split(k), split(v)
        att = (q @ k.transpose(-2, -1)) / (d // self.heads) ** 0.5
        att = att.masked_fill(~self.mask[:s, :s], float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(b, s, d)
        h = h + self.proj(y)
        return h + self.out(F.gelu(self.fc(self.ln2(h))))


class GPT(nn.Module):
    """Token and position embeddings, decoder blocks, a final norm and a
    language-model head; logits flattened to [batch * seq, vocab]."""

    def __init__(self, vocab=1024, seq=128, hidden=256, heads=4, layers=4):
        super().__init__()
        self.vocab = vocab
        self.wte = nn.Embedding(vocab, hidden)
        self.wpe = nn.Embedding(seq, hidden)
        self.blocks = nn.Sequential(*[Block(hidden, heads, seq)
                                      for _ in range(layers)])
        self.lnf = nn.LayerNorm(hidden)
        self.head = nn.Linear(hidden, vocab, bias=False)

    def forward(self, tokens):
        s = tokens.shape[1]
        h = self.wte(tokens) + self.wpe(torch.arange(s))
        return self.head(self.lnf(self.blocks(h))).reshape(-1, self.vocab)


def torch_loss(name, output, target):
    if name == "mse":
        return F.mse_loss(output, target)
    return F.cross_entropy(output, target)


def without_dropout(model):
    """`model` with every dropout's probability 0 (deterministic training,
    comparable across implementations)."""
    for m in model.modules():
        if isinstance(m, nn.Dropout):
            m.p = 0.0
    return model


def build(name, small=False):
    """The model `name` with a seeded batch. `small` shrinks the inputs (for
    tests that also run the interpreter)."""
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    if name == "mlp":
        batch = 8 if small else 64
        x = torch.randn(batch, 784, generator=g)
        return MLP(), (x,), torch.randint(0, 10, (batch,), generator=g), \
            "cross-entropy"
    if name == "cnn":
        x = torch.randn(4, 3, 16, 16, generator=g)
        return SmallCNN(), (x,), torch.randint(0, 10, (4,), generator=g), \
            "cross-entropy"
    if name in ("resnet18", "mobilenet_v2"):
        import torchvision
        model = getattr(torchvision.models, name)(num_classes=10)
        # Small: batch norm's last layers still see 16 values per channel
        # (4 samples of 2x2), not 2 (whose variance f32 cannot resolve).
        batch, size = (4, 48) if small else (8, 64)
        x = torch.randn(batch, 3, size, size, generator=g)
        return model, (x,), torch.randint(0, 10, (batch,), generator=g), \
            "cross-entropy"
    if name == "gpt":
        kw = (dict(vocab=64, seq=16, hidden=32, heads=4, layers=2) if small
              else dict(vocab=1024, seq=128, hidden=256, heads=4, layers=4))
        batch = 2 if small else 8
        tokens = torch.randint(0, kw["vocab"], (batch, kw["seq"]), generator=g)
        target = torch.randint(0, kw["vocab"], (batch * kw["seq"],),
                               generator=g)
        return GPT(**kw), (tokens,), target, "cross-entropy"
    if name == "encoder":
        hidden, seq, batch, layers = (32, 8, 2, 2) if small else (256, 128, 8, 4)
        layer = nn.TransformerEncoderLayer(hidden, 4, 4 * hidden, dropout=0.0,
                                           batch_first=True)
        model = nn.TransformerEncoder(layer, layers,
                                      enable_nested_tensor=False)
        x = torch.randn(batch, seq, hidden, generator=g)
        return model, (x,), torch.randn(batch, seq, hidden, generator=g), "mse"
    raise ValueError(f"unknown model '{name}'")
