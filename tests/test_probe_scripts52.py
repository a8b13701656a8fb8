"""Third-party programs, round 52: hook-based feature code in the style of popular repositories (pytorch-grad-cam's
Grad-CAM and guided backpropagation, style-transfer features collected by forward hooks), seeded by
``torch.manual_seed`` with default initialisation, run with torch 2.13 and torchish and compared by
``assert_script_matches`` (tests/oracle.py).
"""
import pytest

from oracle import script_test, torch_one_thread

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def case_gradcam_guided_backprop(lib):
    """pytorch-grad-cam style: a forward hook that stores the activation and registers a tensor hook on it for
    the gradient, a full backward hook on a conv (its grad_input shape), ``logits.backward(gradient=one_hot,
    retain_graph=True)`` with the one-hot from ``scatter_``, the CAM ``relu((mean(grads) * acts).sum(1))``
    upsampled by bilinear ``interpolate`` and min-max normalised; guided backprop by full backward hooks on every
    ReLU that return ``(clamp(grad_input[0], min=0),)``, handles removed; ``retain_grad()`` on a Sequential
    slice's output."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(26)
    model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 6, 3, padding=1), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(6, 3)).eval()
    acts, grads = {}, {}
    def fwd_hook(m, i, o):
        acts["v"] = o.detach()
        o.register_hook(lambda g: grads.__setitem__("v", g.detach()))
    h1 = model[3].register_forward_hook(fwd_hook)
    seen = []
    h2 = model[2].register_full_backward_hook(lambda m, gi, go: seen.append((gi[0].shape, go[0].abs().sum())))
    x = torch.rand(2, 3, 6, 6, requires_grad=True)
    logits = model(x)
    cls = logits.argmax(1)
    model.zero_grad()
    onehot = torch.zeros_like(logits).scatter_(1, cls[:, None], 1.0)
    logits.backward(gradient=onehot, retain_graph=True)
    w = grads["v"].mean(dim=(2, 3), keepdim=True)
    cam = F.relu((w * acts["v"]).sum(1, keepdim=True))
    cam = F.interpolate(cam, size=(12, 12), mode="bilinear", align_corners=False)
    cmin = cam.flatten(1).min(1)[0].view(-1, 1, 1, 1)
    cmax = cam.flatten(1).max(1)[0].view(-1, 1, 1, 1)
    cam = (cam - cmin) / (cmax - cmin + 1e-8)
    h1.remove(); h2.remove()
    handles = []
    for m in model.modules():
        if isinstance(m, nn.ReLU):
            handles.append(m.register_full_backward_hook(lambda m, gi, go: (torch.clamp(gi[0], min=0.0),)))
    x2 = x.detach().clone().requires_grad_()
    out = model(x2)
    out[torch.arange(2), cls].sum().backward()
    guided = x2.grad.clone()
    for h in handles:
        h.remove()
    x3 = x.detach().clone().requires_grad_()
    mid = model[:2](x3)
    mid.retain_grad()
    model[2:](mid).sum().backward()
    return cam, x.grad, guided, seen, mid.grad, model[0].weight.grad


def case_style_features_by_hooks(lib):
    """Style features collected by forward hooks on in-place ReLUs of a frozen extractor (``requires_grad_(False)``
    per parameter), gram matrices by ``bmm``, the input image optimised by Adam with a total-variation term and
    ``clamp_`` under ``no_grad``; the hooked outputs' node name and version counter."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(27)
    feat = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(inplace=True), nn.Conv2d(4, 4, 3), nn.ReLU(inplace=True))
    for p in feat.parameters():
        p.requires_grad_(False)
    store = []
    hs = [feat[i].register_forward_hook(lambda m, i, o: store.append(o)) for i in (1, 3)]
    def gram(y):
        b, c, h, w = y.size()
        f = y.view(b, c, w * h)
        return f.bmm(f.transpose(1, 2)) / (c * h * w)
    style = torch.rand(1, 3, 7, 7)
    feat(style)
    gs = [gram(s).detach() for s in store]
    img = torch.rand(1, 3, 7, 7, requires_grad=True)
    opt = torch.optim.Adam([img], lr=0.05)
    losses = []
    for _ in range(3):
        store.clear()
        feat(img)
        style_loss = sum(F.mse_loss(gram(s), g) for s, g in zip(store, gs)) * 1e3
        loss = style_loss + 1e-2 * (img[:, :, :, 1:] - img[:, :, :, :-1]).pow(2).sum()
        opt.zero_grad(); loss.backward(); opt.step()
        with torch.no_grad():
            img.clamp_(0, 1)
        losses.append(loss.item())
    for h in hs:
        h.remove()
    return losses, img, store[0].grad_fn.name(), store[1]._version


test_script_matches_torch = script_test(globals())
