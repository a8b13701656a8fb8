"""Video classification with torchish: which way is the square moving?

A synthetic video dataset is made in-process: each clip is ``FRAMES`` frames of a coloured square moving one pixel
per frame in one of 8 directions, from a random start, over Gaussian noise. A model of two Conv3d blocks and a GRU
over time learns the direction. The training loop is ordinary PyTorch code (``import torchish as torch``): a
``DataLoader``, AdamW with a cosine learning-rate schedule, gradient accumulation over micro-batches, gradient
clipping, activation checkpointing of the conv blocks, and the whole train step (forward, backward, clipping,
optimizer update) compiled into one XLA program with ``torch.compile``. At the end the model and optimizer are saved,
reloaded into a fresh model, and the held-out accuracy of both is compared.

Run::

    python examples/video_classification.py            # full run: > 90% held-out accuracy in a few minutes on CPU
    python examples/video_classification.py --quick    # a few-second smoke run (also TORCHISH_EXAMPLE_QUICK=1)
    python examples/video_classification.py --eager    # the same without torch.compile
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np
from tqdm import tqdm

import torchish as torch
import torchish.nn as nn
import torchish.nn.functional as F
from torchish.optim.lr_scheduler import CosineAnnealingLR
from torchish.utils.checkpoint import checkpoint
from torchish.utils.data import DataLoader, Dataset

FRAMES, SIZE, SQUARE = 8, 16, 3
DIRECTIONS = {"E": (1, 0), "NE": (1, -1), "N": (0, -1), "NW": (-1, -1),
              "W": (-1, 0), "SW": (-1, 1), "S": (0, 1), "SE": (1, 1)}
TARGET_ACCURACY = 0.90


class MovingSquares(Dataset):
    """Clips ``(3, FRAMES, SIZE, SIZE)`` of a square moving one pixel per frame; the label is its direction.

    The square's colour, start position and the noise are random; the whole path stays inside the frame.
    """

    def __init__(self, n, noise=0.3, seed=0):
        rng = np.random.default_rng(seed)
        self.labels = rng.integers(0, len(DIRECTIONS), n)
        self.clips = rng.normal(0.0, noise, (n, 3, FRAMES, SIZE, SIZE)).astype(np.float32)
        steps = list(DIRECTIONS.values())
        travel = FRAMES - 1
        for clip, label in zip(self.clips, self.labels):
            dx, dy = steps[label]
            x0 = rng.integers(max(0, -dx * travel), SIZE - SQUARE - max(0, dx * travel) + 1)
            y0 = rng.integers(max(0, -dy * travel), SIZE - SQUARE - max(0, dy * travel) + 1)
            colour = rng.uniform(0.5, 1.0, (3, 1, 1)).astype(np.float32)
            for t in range(FRAMES):
                x, y = x0 + dx * t, y0 + dy * t
                clip[:, t, y:y + SQUARE, x:x + SQUARE] += colour

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return self.clips[i], int(self.labels[i])   # default_collate stacks these into Tensors


class ConvBlock(nn.Module):
    """Conv3d over (time, height, width) halving height and width (time is kept), then GroupNorm and ReLU."""

    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv3d(cin, cout, kernel_size=3, stride=(1, 2, 2), padding=1)
        self.norm = nn.GroupNorm(4, cout)

    def forward(self, x):
        return F.relu(self.norm(self.conv(x)))


class VideoNet(nn.Module):
    """Two Conv3d blocks per clip, then a GRU over the frames' features; the last hidden state is classified."""

    def __init__(self, channels=(16, 32), hidden=64, num_classes=len(DIRECTIONS), checkpoint_blocks=True):
        super().__init__()
        c1, c2 = channels
        self.blocks = nn.ModuleList([ConvBlock(3, c1), ConvBlock(c1, c2)])
        self.gru = nn.GRU(c2 * (SIZE // 4) ** 2, hidden, batch_first=True)
        self.head = nn.Linear(hidden, num_classes)
        self.checkpoint_blocks = checkpoint_blocks

    def forward(self, clips):                          # (N, 3, T, H, W)
        x = clips
        for block in self.blocks:
            if self.checkpoint_blocks and self.training:
                x = checkpoint(block, x, use_reentrant=False)   # activations recomputed in backward
            else:
                x = block(x)
        x = x.permute(0, 2, 1, 3, 4).flatten(2)           # (N, T, C * H' * W'): one feature vector per frame
        out, _ = self.gru(x)
        return self.head(out[:, -1])


def evaluate(model, loader):
    """Held-out accuracy and the predictions (to compare two models exactly)."""
    model.eval()
    preds, labels = [], []
    with torch.no_grad():
        for clips, y in loader:
            preds.append(model(clips).argmax(dim=1))
            labels.append(y)
    preds, labels = torch.cat(preds), torch.cat(labels)
    model.train()
    return (preds == labels).float().mean().item(), preds


def save_checkpoint(path, model, optimizer, epoch):
    """torch.save to a temporary file in the same folder, then rename: a crash never leaves half a checkpoint."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
    os.close(fd)
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}, tmp)
    os.replace(tmp, path)


def plot_losses(losses, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: skipping the loss-curve plot (pip install matplotlib)")
        return
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(losses, lw=1)
    ax.set(xlabel="optimizer step", ylabel="training loss", yscale="log", title="video classification")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(f"loss curve written to {path}")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="tiny smoke run (also TORCHISH_EXAMPLE_QUICK=1)")
    p.add_argument("--eager", action="store_true", help="run the train step without torch.compile")
    p.add_argument("--epochs", type=int, default=None)
    p.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "torchish_video_classification"),
                   help="folder for the checkpoint and the loss curve")
    args = p.parse_args()
    args.quick = args.quick or os.environ.get("TORCHISH_EXAMPLE_QUICK", "") not in ("", "0")
    return args


def main():
    args = parse_args()
    torch.manual_seed(0)
    # (train clips, test clips, epochs, batch); each optimizer step accumulates `accum` micro-batches
    n_train, n_test, epochs, batch, accum = (64, 64, 1, 32, 2) if args.quick else (4096, 512, 2, 64, 2)
    epochs = args.epochs or epochs
    train_loader = DataLoader(MovingSquares(n_train, seed=0), batch_size=batch, shuffle=True, drop_last=True)
    test_loader = DataLoader(MovingSquares(n_test, seed=1), batch_size=256)

    model = VideoNet()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-2)
    scheduler = CosineAnnealingLR(optimizer, T_max=epochs * len(train_loader))
    print(f"{sum(p.numel() for p in model.parameters())} parameters; {n_train} training clips, {n_test} held out; "
          f"{'eager' if args.eager else 'compiled'} train step")

    def train_step(clips, labels):
        """One optimizer step over `accum` micro-batches: gradients accumulate in .grad between backward calls."""
        loss_sum, correct = 0.0, 0
        for x, y in zip(clips.chunk(accum), labels.chunk(accum)):
            logits = model(x)
            loss = F.cross_entropy(logits, y)
            (loss / accum).backward()
            loss_sum = loss_sum + loss.detach()
            correct = correct + (logits.argmax(dim=1) == y).sum()
        nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        optimizer.step()
        optimizer.zero_grad()
        return loss_sum / accum, correct

    step = train_step if args.eager else torch.compile(train_step)
    losses = []
    start = time.perf_counter()
    for epoch in range(epochs):
        seen = right = 0
        bar = tqdm(train_loader, desc=f"epoch {epoch + 1}/{epochs}", ncols=100)
        for clips, labels in bar:
            loss, correct = step(clips, labels)
            scheduler.step()
            losses.append(loss.item())
            seen, right = seen + len(labels), right + correct.item()
            bar.set_postfix(loss=f"{losses[-1]:.3f}", acc=f"{right / seen:.3f}")
    train_time = time.perf_counter() - start
    accuracy, preds = evaluate(model, test_loader)
    print(f"held-out accuracy: {accuracy:.1%} after {epochs} epochs ({train_time:.0f} s of training)")

    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "video_classification.pt")
    save_checkpoint(path, model, optimizer, epochs)
    saved = torch.load(path)
    fresh = VideoNet()
    fresh.load_state_dict(saved["model"])
    fresh_optimizer = torch.optim.AdamW(fresh.parameters(), lr=3e-3, weight_decay=1e-2)
    fresh_optimizer.load_state_dict(saved["optimizer"])   # ready to resume training
    reloaded_accuracy, reloaded_preds = evaluate(fresh, test_loader)
    if reloaded_accuracy != accuracy or not torch.equal(preds, reloaded_preds):
        raise SystemExit(f"reloaded model differs: {reloaded_accuracy:.1%} vs {accuracy:.1%}")
    print(f"checkpoint saved to {path}; reloaded model: identical held-out accuracy {reloaded_accuracy:.1%}")
    plot_losses(losses, os.path.join(args.out, "loss_curve.png"))
    if not args.quick and accuracy <= TARGET_ACCURACY:
        raise SystemExit(f"held-out accuracy {accuracy:.1%} did not reach the target {TARGET_ACCURACY:.0%}")


if __name__ == "__main__":
    main()
