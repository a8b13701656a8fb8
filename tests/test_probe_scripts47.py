"""Third-party programs, round 47: neural style transfer, audio and time-series code in the style of popular
repositories (the Gatys-style transfer of pytorch/examples with LBFGS on the input image, a log-mel front end built
by hand on ``torch.stft``/``istft`` with a 1-D conv classifier, an LSTM forecaster on ``Tensor.unfold`` windows
with teacher forcing and ``clip_grad_value_``), seeded by ``torch.manual_seed`` with default initialisation, run
with torch 2.13 and torchish and compared by ``assert_script_matches`` (tests/oracle.py).
"""
import math

import pytest

from oracle import needs_torch, same_error, script_test, torch_one_thread

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def case_style_transfer_gram_lbfgs_input_image(lib):
    """Style transfer: a frozen conv feature extractor (``requires_grad_(False)``) with content/style loss modules
    inserted into an ``nn.Sequential`` by ``add_module`` (each storing ``self.loss`` in ``forward`` and returning
    its input), gram matrices ``torch.mm(f, f.t()).div(a * b * c * d)``, the input image ``clone()`` optimised by
    ``torch.optim.LBFGS([img.requires_grad_()])`` with a closure that clamps ``img.data.clamp_(0, 1)`` under
    ``torch.no_grad()`` and a Python-list ``run`` counter, then a final ``clamp_``."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(4)

    def gram(x):
        a, b, c, d = x.size()
        f = x.view(a * b, c * d)
        return torch.mm(f, f.t()).div(a * b * c * d)

    class ContentLoss(nn.Module):
        def __init__(self, target):
            super().__init__()
            self.target = target.detach()

        def forward(self, x):
            self.loss = F.mse_loss(x, self.target)
            return x

    class StyleLoss(nn.Module):
        def __init__(self, target):
            super().__init__()
            self.target = gram(target).detach()

        def forward(self, x):
            self.loss = F.mse_loss(gram(x), self.target)
            return x

    class Normalization(nn.Module):
        def __init__(self, mean, std):
            super().__init__()
            self.mean = torch.tensor(mean).view(-1, 1, 1)
            self.std = torch.tensor(std).view(-1, 1, 1)

        def forward(self, img):
            return (img - self.mean) / self.std

    cnn = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 4, 3, padding=1), nn.ReLU(),
                        nn.MaxPool2d(2), nn.Conv2d(4, 6, 3, padding=1), nn.ReLU()).eval().requires_grad_(False)
    style, content = torch.rand(1, 3, 8, 8), torch.rand(1, 3, 8, 8)
    model = nn.Sequential(Normalization([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]))
    content_losses, style_losses = [], []
    i = 0
    for layer in cnn.children():
        if isinstance(layer, nn.Conv2d):
            i += 1
            name = f"conv_{i}"
        elif isinstance(layer, nn.ReLU):
            name = f"relu_{i}"
            layer = nn.ReLU(inplace=False)
        else:
            name = f"pool_{i}"
        model.add_module(name, layer)
        if name == "conv_2":
            cl = ContentLoss(model(content))
            model.add_module(f"content_loss_{i}", cl)
            content_losses.append(cl)
        if name in ("conv_1", "conv_3"):
            sl = StyleLoss(model(style))
            model.add_module(f"style_loss_{i}", sl)
            style_losses.append(sl)
    img = content.clone()
    img.requires_grad_(True)
    model.eval()
    model.requires_grad_(False)
    # 10 iterations, not LBFGS's 20: from about the 13th this float32 trajectory is chaotic (gradients rounded in
    # another order end ~1e-6 from PyTorch's image after 12 iterations, up to 9e-5 after 20)
    optimizer = torch.optim.LBFGS([img], max_iter=10)
    run, history = [0], []
    while run[0] <= 6:
        def closure():
            with torch.no_grad():
                img.clamp_(0, 1)
            optimizer.zero_grad()
            model(img)
            s = sum(sl.loss for sl in style_losses) * 1000
            c = sum(cl.loss for cl in content_losses)
            loss = s + c
            loss.backward()
            run[0] += 1
            history.append((s.item(), c.item()))
            return s + c
        optimizer.step(closure)
    with torch.no_grad():
        img.clamp_(0, 1)
    return img, history, run[0], [n for n, _ in model.named_children()], img.grad


def case_log_mel_stft_istft_conv1d_classifier(lib):
    """Audio: ``torch.hann_window`` with ``torch.stft(center=True, return_complex=True)``, power spectrum
    ``.abs().pow(2)``, a triangular mel filterbank built by hand (HTK mel scale with ``torch.log10``,
    ``torch.linspace``, slopes clamped by ``torch.maximum(torch.zeros(1), torch.minimum(down, up))``), log-mel with
    ``clamp(min=1e-10)``, per-utterance normalisation, ``istft`` reconstruction of the input, and an ``F.conv1d``
    classifier (``nn.Conv1d`` + ``BatchNorm1d`` + ``AdaptiveAvgPool1d``) trained with AdamW for 2 steps. The conv
    before the BatchNorm has ``bias=False`` as in the usual recipe: a bias there gets a gradient of pure round-off
    (~1e-9, BatchNorm removes it) that Adam scales to +-lr, so its value after a step is the sign of noise."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(5)
    sr, n_fft, hop, n_mels = 800, 32, 8, 6
    t = torch.arange(160) / sr
    wav = torch.stack([torch.sin(2 * math.pi * 110 * t), torch.sin(2 * math.pi * 230 * t)])
    wav = wav + 0.05 * torch.randn_like(wav)
    win = torch.hann_window(n_fft)
    spec = torch.stft(wav, n_fft, hop_length=hop, window=win, center=True, return_complex=True)
    power = spec.abs().pow(2)

    def hz_to_mel(f):
        return 2595.0 * torch.log10(1.0 + f / 700.0)

    def mel_to_hz(m):
        return 700.0 * (10 ** (m / 2595.0) - 1.0)

    freqs = torch.linspace(0, sr // 2, n_fft // 2 + 1)
    m_pts = torch.linspace(hz_to_mel(torch.tensor(0.0)), hz_to_mel(torch.tensor(sr / 2)), n_mels + 2)
    f_pts = mel_to_hz(m_pts)
    f_diff = f_pts[1:] - f_pts[:-1]
    slopes = f_pts.unsqueeze(0) - freqs.unsqueeze(1)
    down = -slopes[:, :-2] / f_diff[:-1]
    up = slopes[:, 2:] / f_diff[1:]
    fb = torch.maximum(torch.zeros(1), torch.minimum(down, up))
    mel = torch.matmul(power.transpose(-1, -2), fb).transpose(-1, -2)
    logmel = torch.log(mel.clamp(min=1e-10))
    logmel = (logmel - logmel.mean(dim=-1, keepdim=True)) / (logmel.std(dim=-1, keepdim=True) + 1e-5)
    recon = torch.istft(spec, n_fft, hop_length=hop, window=win, length=wav.shape[-1])

    model = nn.Sequential(nn.Conv1d(n_mels, 8, 3, padding=1, bias=False), nn.BatchNorm1d(8), nn.ReLU(),
                          nn.Conv1d(8, 8, 3, stride=2), nn.ReLU(), nn.AdaptiveAvgPool1d(1), nn.Flatten(),
                          nn.Linear(8, 2))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=1e-2)
    y = torch.tensor([0, 1])
    losses = []
    for _ in range(2):
        loss = F.cross_entropy(model(logmel), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    w = model[0].weight
    direct = F.conv1d(logmel, w, model[3].bias, padding=1)
    return fb, logmel, recon, (recon - wav).abs().max(), losses, direct, model[1].running_var, spec.dtype


def case_lstm_forecaster_unfold_teacher_forcing(lib):
    """Time series: a noisy sine split into windows by ``series.unfold(0, size, step)``, min-max scaled, an
    encoder-decoder LSTM forecaster (``nn.LSTM(batch_first=True)`` encoder, ``nn.LSTMCell`` decoder) with teacher
    forcing decided per step by ``torch.rand(1).item() < ratio``, ``nn.utils.clip_grad_value_(clip_value=0.5)``,
    ``ReduceLROnPlateau``, then an autoregressive rollout under ``torch.no_grad()`` with ``torch.cat`` growth."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(6)
    series = torch.sin(torch.arange(40, dtype=torch.float32) * 0.3) + 0.1 * torch.randn(40)
    lo, hi = series.min(), series.max()
    series = (series - lo) / (hi - lo)
    windows = series.unfold(0, 10, 3)
    x, y = windows[:, :7].unsqueeze(-1), windows[:, 7:]

    class Seq2Seq(nn.Module):
        def __init__(self, h=6):
            super().__init__()
            self.enc = nn.LSTM(1, h, batch_first=True)
            self.dec = nn.LSTMCell(1, h)
            self.out = nn.Linear(h, 1)

        def forward(self, x, horizon, target=None, ratio=0.5):
            _, (h, c) = self.enc(x)
            h, c = h[0], c[0]
            inp = x[:, -1]
            outs = []
            for t in range(horizon):
                h, c = self.dec(inp, (h, c))
                o = self.out(h)
                outs.append(o)
                if target is not None and torch.rand(1).item() < ratio:
                    inp = target[:, t:t + 1]
                else:
                    inp = o
            return torch.cat(outs, dim=1)

    model = Seq2Seq()
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=0)
    losses = []
    for _ in range(3):
        pred = model(x, 3, y)
        loss = F.mse_loss(pred, y)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_value_(model.parameters(), clip_value=0.5)
        opt.step()
        sched.step(loss.item() + 1)
        losses.append(loss.item())
    with torch.no_grad():
        hist = series[-7:].view(1, -1, 1)
        for _ in range(2):
            nxt = model(hist[:, -7:], 1)
            hist = torch.cat([hist, nxt.unsqueeze(-1)], dim=1)
    return (windows.shape, windows.stride(), losses, model.dec.weight_hh.grad, opt.param_groups[0]["lr"],
            hist.squeeze() * (hi - lo) + lo)


test_script_matches_torch = script_test(globals())


def _spec(lib):
    return lib.stft(lib.linspace(-1, 1, 64).view(2, 32), 8, window=lib.hann_window(8), return_complex=True)


@needs_torch
@pytest.mark.parametrize("call", [
    lambda lib: lib.stft(lib.zeros(2, 32), 8, window=lib.hann_window(4), return_complex=True),
    lambda lib: lib.stft(lib.zeros(32), 8, win_length=4, window=lib.ones(8), return_complex=True),
    lambda lib: lib.stft(lib.zeros(32), 8, window=lib.ones(2, 4), return_complex=True),
    lambda lib: lib.istft(_spec(lib), 8, window=lib.hann_window(4)),
    lambda lib: lib.istft(_spec(lib), 8, window=lib.ones(8, 1)),
    lambda lib: lib.istft(_spec(lib)[:, :3], 8, window=lib.hann_window(8)),
    lambda lib: lib.istft(_spec(lib)[:, :3], 8, window=lib.hann_window(8), onesided=False),
    lambda lib: lib.istft(_spec(lib), 8, window=lib.zeros(8)),
    lambda lib: lib.istft(_spec(lib), 8, window=lib.hann_window(8), center=False),
], ids=["stft_window_length", "stft_window_vs_win_length", "stft_window_2d", "istft_window_length",
        "istft_window_2d", "istft_onesided_bins", "istft_twosided_bins", "istft_nola_zero_window",
        "istft_nola_center_false"])
def test_stft_istft_window_and_bin_errors_word_the_call_as_pytorch(call):
    """The window and frequency-bin errors of stft/istft start with PyTorch's description of the call, as its
    length errors already did (an audio script that passes a window of the wrong length, or inverts a spectrogram
    with the wrong n_fft, reads PyTorch's message): stft's window message and istft's own 'Invalid window shape',
    istft's bin-count messages (torchish said 'istft: expected ...') and its NOLA failure, which PyTorch words as
    'istft(...) window overlap add min: 1' with the failed comparison printed as a bool tensor (torchish said
    'istft(...): window overlap add min: 0')."""
    same_error(call)
