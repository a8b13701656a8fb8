"""Regression tests from running the vision model and training code people copy from timm and torchvision on
torchish and on PyTorch: ConvNeXt blocks (both channels-first LayerNorms, LayerScale, timm's drop_path), MobileNetV2's
inverted residual, EfficientNet's MBConv with squeeze-excitation, ResNet's BasicBlock/Bottleneck with the zero-init
of the last BN and torchvision's ``_initialize_weights``, ViT (patch embedding, cls token, timm's bicubic position
embedding resample, pre-norm blocks with nn.MultiheadAttention and with a hand-written qkv attention), and the
training recipes (mixup/cutmix with a fixed lambda and permutation, label smoothing and soft-target cross entropy,
nesterov SGD with weight decay, warmup + cosine schedules, timm's ModelEmaV2, channels_last, BatchNorm train/eval).
Each ``case_*`` is written against the PyTorch API only; inputs and weights come from formulas (tests/oracle.py) and
random draws are replaced by deterministic choices (fixed lambda, flip(0) permutation, drop_prob 0 or eval mode).

Where a program differs from the repository it imitates, a comment says why."""
import copy
import math
from functools import partial

from oracle import formula_data as _data, formula_init as _init, script_test


# ----------------------------------------------------------------------------------------------------- ConvNeXt


def _drop_path(x, drop_prob: float = 0., training: bool = False, scale_by_keep: bool = True):
    """timm.layers.drop.drop_path."""
    if drop_prob == 0. or not training:
        return x
    keep_prob = 1 - drop_prob
    shape = (x.shape[0],) + (1,) * (x.ndim - 1)
    random_tensor = x.new_empty(shape).bernoulli_(keep_prob)
    if keep_prob > 0.0 and scale_by_keep:
        random_tensor.div_(keep_prob)
    return x * random_tensor


def _convnext(lib):
    nn, F = lib.nn, lib.nn.functional

    class DropPath(nn.Module):
        def __init__(self, drop_prob: float = 0., scale_by_keep: bool = True):
            super().__init__()
            self.drop_prob = drop_prob
            self.scale_by_keep = scale_by_keep

        def forward(self, x):
            return _drop_path(x, self.drop_prob, self.training, self.scale_by_keep)

        def extra_repr(self):
            return f'drop_prob={round(self.drop_prob, 3):0.3f}'

    class LayerNorm2d(nn.LayerNorm):
        """timm's LayerNorm2d: permute to channels-last, F.layer_norm, permute back."""
        def forward(self, x):
            x = x.permute(0, 2, 3, 1)
            x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
            return x.permute(0, 3, 1, 2)

    class LayerNormCF(nn.Module):
        """The original ConvNeXt LayerNorm, data_format="channels_first": mean/var by hand."""
        def __init__(self, normalized_shape, eps=1e-6):
            super().__init__()
            self.weight = nn.Parameter(lib.ones(normalized_shape))
            self.bias = nn.Parameter(lib.zeros(normalized_shape))
            self.eps = eps

        def forward(self, x):
            u = x.mean(1, keepdim=True)
            s = (x - u).pow(2).mean(1, keepdim=True)
            x = (x - u) / lib.sqrt(s + self.eps)
            return self.weight[:, None, None] * x + self.bias[:, None, None]

    class LayerScale(nn.Module):
        def __init__(self, dim, init_values=1e-5, inplace=False):
            super().__init__()
            self.inplace = inplace
            self.gamma = nn.Parameter(init_values * lib.ones(dim))

        def forward(self, x):
            return x.mul_(self.gamma) if self.inplace else x * self.gamma

    class Block(nn.Module):
        """ConvNeXt block: dwconv -> LayerNorm -> Linear (channels-last) -> GELU -> Linear -> gamma -> DropPath."""
        def __init__(self, dim, drop_path=0., layer_scale_init_value=1e-6, hand_norm=False):
            super().__init__()
            self.dwconv = nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim)
            self.hand_norm = hand_norm
            self.norm = LayerNormCF(dim) if hand_norm else nn.LayerNorm(dim, eps=1e-6)
            self.pwconv1 = nn.Linear(dim, 4 * dim)
            self.act = nn.GELU()
            self.pwconv2 = nn.Linear(4 * dim, dim)
            self.gamma = nn.Parameter(layer_scale_init_value * lib.ones((dim)), requires_grad=True) \
                if layer_scale_init_value > 0 else None
            self.drop_path = DropPath(drop_path) if drop_path > 0. else nn.Identity()

        def forward(self, x):
            input = x
            x = self.dwconv(x)
            if self.hand_norm:
                x = self.norm(x).permute(0, 2, 3, 1)
            else:
                x = x.permute(0, 2, 3, 1)  # (N, C, H, W) -> (N, H, W, C)
                x = self.norm(x)
            x = self.pwconv1(x)
            x = self.act(x)
            x = self.pwconv2(x)
            if self.gamma is not None:
                x = self.gamma * x
            x = x.permute(0, 3, 1, 2)
            return input + self.drop_path(x)

    class TimmBlock(nn.Module):
        """timm's ConvNeXtBlock with conv_mlp=True: LayerNorm2d, 1x1 convs, LayerScale module with mul_."""
        def __init__(self, dim, drop_path=0.):
            super().__init__()
            self.conv_dw = nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim, bias=True)
            self.norm = LayerNorm2d(dim, eps=1e-6)
            self.fc1 = nn.Conv2d(dim, 2 * dim, 1)
            self.act = nn.GELU(approximate='tanh')
            self.fc2 = nn.Conv2d(2 * dim, dim, 1)
            self.ls = LayerScale(dim, 0.5)
            self.drop_path = DropPath(drop_path)

        def forward(self, x):
            shortcut = x
            x = self.norm(self.conv_dw(x))
            x = self.fc2(self.act(self.fc1(x)))
            x = x.mul(self.ls.gamma.reshape(1, -1, 1, 1))
            return self.drop_path(x) + shortcut

    return Block, TimmBlock, LayerNorm2d, LayerNormCF, DropPath


def case_convnext_blocks(lib):
    """ConvNeXt's Block both ways (nn.LayerNorm after a permute, and the hand-written channels-first LayerNorm),
    timm's block (LayerNorm2d, 1x1 conv MLP, GELU tanh); outputs, a backward and every parameter's gradient; the two
    LayerNorms agree with each other; the modules' reprs."""
    Block, TimmBlock, LayerNorm2d, LayerNormCF, DropPath = _convnext(lib)
    out = []
    x = _data(lib, 2, 8, 9, 9)
    for hand in (False, True):
        blk = _init(lib, Block(8, drop_path=0.1, layer_scale_init_value=0.5, hand_norm=hand))
        blk.eval()  # DropPath is the identity in eval mode
        y = blk(x)
        y.pow(2).mean().backward()
        out += [y, {n: p.grad for n, p in blk.named_parameters()}]
    tb = _init(lib, TimmBlock(8, drop_path=0.2), seed=3)
    tb.eval()
    xr = x.clone().requires_grad_()
    y = tb(xr)
    y.sum().backward()
    out += [y, xr.grad, {n: p.grad for n, p in tb.named_parameters()}]
    a = _init(lib, LayerNorm2d(8, eps=1e-6), seed=1)
    b = _init(lib, LayerNormCF(8), seed=1)
    out += [a(x), b(x), (a(x) - b(x)).abs().max() < 1e-4]
    out.append(repr(Block(8, drop_path=0.25)).replace("torchish", "torch"))
    return out


def case_drop_path(lib):
    """timm's drop_path: identity in eval mode and for drop_prob=0 in train mode (same object); in train mode with
    drop_prob > 0 the result keeps the input's shape and dtype and each sample is either 0 or x / keep_prob."""
    *_, DropPath = _convnext(lib)
    x = _data(lib, 4, 3, 5, 5)
    out = []
    dp = DropPath(0.3)
    dp.eval()
    out.append(dp(x) is x)
    dp0 = DropPath(0.0).train()
    out.append(dp0(x) is x)
    dp.train()
    y = dp(x)
    out += [y.shape, y.dtype, y.is_contiguous()]
    ratio = y / x
    per_sample = [(ratio[i] - ratio[i].flatten()[0]).abs().max().item() < 1e-5 for i in range(4)]
    vals = [round(ratio[i].flatten()[0].item(), 4) for i in range(4)]
    out += [per_sample, all(v in (0.0, round(1 / 0.7, 4)) for v in vals)]
    xd = _data(lib, 2, 3, dtype=lib.float64)
    yd = _drop_path(xd, 0.5, True)
    out += [yd.dtype, yd.shape]
    mask = xd.new_empty((2, 1))
    out += [mask.dtype, mask.shape, mask.bernoulli_(1.0), mask.div_(0.5)]
    out.append(repr(dp))
    return out



# --------------------------------------------------------------------------------- MobileNet / EfficientNet / ResNet


def _make_divisible(v, divisor, min_value=None):
    """torchvision.models._utils._make_divisible."""
    if min_value is None:
        min_value = divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


def _mobilenet(lib):
    nn, F = lib.nn, lib.nn.functional

    class ConvBNActivation(nn.Sequential):
        def __init__(self, in_planes, out_planes, kernel_size=3, stride=1, groups=1, norm_layer=None,
                     activation_layer=None):
            padding = (kernel_size - 1) // 2
            norm_layer = norm_layer or nn.BatchNorm2d
            activation_layer = activation_layer or nn.ReLU6
            super().__init__(
                nn.Conv2d(in_planes, out_planes, kernel_size, stride, padding, groups=groups, bias=False),
                norm_layer(out_planes),
                activation_layer(inplace=True))
            self.out_channels = out_planes

    class InvertedResidual(nn.Module):
        def __init__(self, inp, oup, stride, expand_ratio):
            super().__init__()
            self.stride = stride
            hidden_dim = int(round(inp * expand_ratio))
            self.use_res_connect = self.stride == 1 and inp == oup
            layers = []
            if expand_ratio != 1:
                layers.append(ConvBNActivation(inp, hidden_dim, kernel_size=1))
            layers.extend([
                ConvBNActivation(hidden_dim, hidden_dim, stride=stride, groups=hidden_dim),
                nn.Conv2d(hidden_dim, oup, 1, 1, 0, bias=False),
                nn.BatchNorm2d(oup),
            ])
            self.conv = nn.Sequential(*layers)
            self.out_channels = oup
            self._is_cn = stride > 1

        def forward(self, x):
            if self.use_res_connect:
                return x + self.conv(x)
            return self.conv(x)

    class SqueezeExcitation(nn.Module):
        """torchvision.ops.SqueezeExcitation (EfficientNet: SiLU activation, sigmoid gate)."""
        def __init__(self, input_channels, squeeze_channels, activation=nn.ReLU, scale_activation=nn.Sigmoid):
            super().__init__()
            self.avgpool = nn.AdaptiveAvgPool2d(1)
            self.fc1 = nn.Conv2d(input_channels, squeeze_channels, 1)
            self.fc2 = nn.Conv2d(squeeze_channels, input_channels, 1)
            self.activation = activation()
            self.scale_activation = scale_activation()

        def _scale(self, input):
            scale = self.avgpool(input)
            scale = self.fc1(scale)
            scale = self.activation(scale)
            scale = self.fc2(scale)
            return self.scale_activation(scale)

        def forward(self, input):
            scale = self._scale(input)
            return scale * input

    class SEFunctional(nn.Module):
        """timm's SqueezeExcite written with F.adaptive_avg_pool2d / x.mean((2, 3), keepdim=True) and x.sigmoid()."""
        def __init__(self, chs, rd):
            super().__init__()
            self.conv_reduce = nn.Conv2d(chs, rd, 1, bias=True)
            self.act1 = nn.SiLU(inplace=True)
            self.conv_expand = nn.Conv2d(rd, chs, 1, bias=True)

        def forward(self, x):
            x_se = x.mean((2, 3), keepdim=True)
            x_se = self.conv_reduce(x_se)
            x_se = self.act1(x_se)
            x_se = self.conv_expand(x_se)
            return x * x_se.sigmoid()

    class MBConv(nn.Module):
        """torchvision's EfficientNet MBConv: expand 1x1, depthwise kxk, SE, project 1x1, stochastic depth
        (eval: identity), residual."""
        def __init__(self, inp, oup, expand, k, stride, se_ratio=0.25, functional_se=False):
            super().__init__()
            self.use_res_connect = stride == 1 and inp == oup
            act = nn.SiLU
            exp = _make_divisible(inp * expand, 8)
            layers = []
            if exp != inp:
                layers.append(ConvBNActivation(inp, exp, kernel_size=1, activation_layer=act))
            layers.append(ConvBNActivation(exp, exp, kernel_size=k, stride=stride, groups=exp,
                                           activation_layer=act))
            sq = max(1, int(inp * se_ratio))
            layers.append(SEFunctional(exp, sq) if functional_se else
                          SqueezeExcitation(exp, sq, activation=partial(nn.SiLU, inplace=True)))
            layers.append(ConvBNActivation(exp, oup, kernel_size=1, activation_layer=nn.Identity))
            self.block = nn.Sequential(*layers)

        def forward(self, input):
            result = self.block(input)
            if self.use_res_connect:
                result = result + input
            return result

    return ConvBNActivation, InvertedResidual, MBConv


def _no_inplace_identity(lib):
    """nn.Identity takes no inplace argument: torchvision passes activation_layer=None for the projection; the
    helper above calls activation_layer(inplace=True), so wrap Identity."""


def case_mobilenet_efficientnet_blocks(lib):
    """MobileNetV2 InvertedResidual (ReLU6, depthwise, BN, residual / strided) and EfficientNet MBConv (SiLU, SE with
    adaptive average pooling and a sigmoid gate, both the torchvision module and timm's functional form) in train mode
    (batch statistics, running stats updated) and eval mode; a backward through each; BN running stats."""
    nn = lib.nn

    class Identity(nn.Identity):
        def __init__(self, inplace=False):
            super().__init__()
    orig_identity = nn.Identity
    ConvBNActivation, InvertedResidual, MBConv = _mobilenet(lib)
    out = []
    x = _data(lib, 2, 8, 8, 8)
    for blk in (InvertedResidual(8, 8, 1, 6), InvertedResidual(8, 16, 2, 1)):
        _init(lib, blk)
        blk.train()
        y = blk(x)
        y.square().mean().backward()
        blk.eval()
        out += [y, blk(x), {n: b for n, b in blk.named_buffers()},
                {n: p.grad for n, p in blk.named_parameters()}, blk.use_res_connect]
    try:
        nn.Identity = Identity
        for functional_se in (False, True):
            blk = _init(lib, MBConv(8, 8, 4, 3, 1, functional_se=functional_se), seed=2)
            xr = x.clone().requires_grad_()
            y = blk(xr)
            y.sum().backward()
            blk.eval()
            out += [y, xr.grad, blk(x), {n: b for n, b in blk.named_buffers()},
                    {n: p.grad for n, p in blk.named_parameters()}]
        blk = _init(lib, MBConv(8, 16, 6, 5, 2), seed=1)
        out.append(blk(x))
    finally:
        nn.Identity = orig_identity
    return out


def _resnet(lib):
    nn = lib.nn

    def conv3x3(in_planes, out_planes, stride=1, groups=1, dilation=1):
        return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=dilation, groups=groups,
                         bias=False, dilation=dilation)

    def conv1x1(in_planes, out_planes, stride=1):
        return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)

    class BasicBlock(nn.Module):
        expansion = 1

        def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64, dilation=1,
                     norm_layer=None):
            super().__init__()
            if norm_layer is None:
                norm_layer = nn.BatchNorm2d
            self.conv1 = conv3x3(inplanes, planes, stride)
            self.bn1 = norm_layer(planes)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = conv3x3(planes, planes)
            self.bn2 = norm_layer(planes)
            self.downsample = downsample
            self.stride = stride

        def forward(self, x):
            identity = x
            out = self.conv1(x)
            out = self.bn1(out)
            out = self.relu(out)
            out = self.conv2(out)
            out = self.bn2(out)
            if self.downsample is not None:
                identity = self.downsample(x)
            out += identity
            out = self.relu(out)
            return out

    class Bottleneck(nn.Module):
        expansion = 4

        def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64, dilation=1,
                     norm_layer=None):
            super().__init__()
            if norm_layer is None:
                norm_layer = nn.BatchNorm2d
            width = int(planes * (base_width / 64.0)) * groups
            self.conv1 = conv1x1(inplanes, width)
            self.bn1 = norm_layer(width)
            self.conv2 = conv3x3(width, width, stride, groups, dilation)
            self.bn2 = norm_layer(width)
            self.conv3 = conv1x1(width, planes * self.expansion)
            self.bn3 = norm_layer(planes * self.expansion)
            self.relu = nn.ReLU(inplace=True)
            self.downsample = downsample
            self.stride = stride

        def forward(self, x):
            identity = x
            out = self.conv1(x)
            out = self.bn1(out)
            out = self.relu(out)
            out = self.conv2(out)
            out = self.bn2(out)
            out = self.relu(out)
            out = self.conv3(out)
            out = self.bn3(out)
            if self.downsample is not None:
                identity = self.downsample(x)
            out += identity
            out = self.relu(out)
            return out

    class ResNet(nn.Module):
        def __init__(self, block, layers, num_classes=5, zero_init_residual=False, groups=1, width_per_group=64,
                     norm_layer=None, base=8):
            super().__init__()
            if norm_layer is None:
                norm_layer = nn.BatchNorm2d
            self._norm_layer = norm_layer
            self.inplanes = base
            self.dilation = 1
            self.groups = groups
            self.base_width = width_per_group
            self.conv1 = nn.Conv2d(3, self.inplanes, kernel_size=7, stride=2, padding=3, bias=False)
            self.bn1 = norm_layer(self.inplanes)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
            self.layer1 = self._make_layer(block, base, layers[0])
            self.layer2 = self._make_layer(block, base * 2, layers[1], stride=2)
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(base * 2 * block.expansion, num_classes)

            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)
            if zero_init_residual:
                for m in self.modules():
                    if isinstance(m, Bottleneck) and m.bn3.weight is not None:
                        nn.init.constant_(m.bn3.weight, 0)
                    elif isinstance(m, BasicBlock) and m.bn2.weight is not None:
                        nn.init.zeros_(m.bn2.weight)

        def _make_layer(self, block, planes, blocks, stride=1, dilate=False):
            norm_layer = self._norm_layer
            downsample = None
            previous_dilation = self.dilation
            if stride != 1 or self.inplanes != planes * block.expansion:
                downsample = nn.Sequential(
                    conv1x1(self.inplanes, planes * block.expansion, stride),
                    norm_layer(planes * block.expansion),
                )
            layers = [block(self.inplanes, planes, stride, downsample, self.groups, self.base_width,
                            previous_dilation, norm_layer)]
            self.inplanes = planes * block.expansion
            for _ in range(1, blocks):
                layers.append(block(self.inplanes, planes, groups=self.groups, base_width=self.base_width,
                                    dilation=self.dilation, norm_layer=norm_layer))
            return nn.Sequential(*layers)

        def _forward_impl(self, x):
            x = self.conv1(x)
            x = self.bn1(x)
            x = self.relu(x)
            x = self.maxpool(x)
            x = self.layer1(x)
            x = self.layer2(x)
            x = self.avgpool(x)
            x = lib.flatten(x, 1)
            x = self.fc(x)
            return x

        def forward(self, x):
            return self._forward_impl(x)

    return BasicBlock, Bottleneck, ResNet


def case_resnet_init_and_blocks(lib):
    """torchvision's ResNet construction: the _initialize_weights loop (kaiming_normal_ fan_out / relu: shapes and
    the std compared to the formula, not values), BN constant_ init, zero_init_residual (constant_ / zeros_ of the
    last BN gamma), downsample Sequential; then formula weights and a train-mode forward/backward through BasicBlock
    and Bottleneck models; state_dict keys; model.apply(fn) counting and re-initialising modules."""
    nn = lib.nn
    BasicBlock, Bottleneck, ResNet = _resnet(lib)
    out = []
    for block in (BasicBlock, Bottleneck):
        m = ResNet(block, [1, 2], zero_init_residual=True)
        last = [mod.bn2 if block is BasicBlock else mod.bn3 for mod in m.modules() if isinstance(mod, block)]
        out.append([bool((b.weight == 0).all()) for b in last])
        out.append([(b.bias == 0).all().item() for b in last])
        stds = []
        for name, p in m.named_parameters():
            if p.dim() == 4:
                fan_out = p.shape[0] * p.shape[2] * p.shape[3]
                want = math.sqrt(2.0) / math.sqrt(fan_out)
                stds.append((name, tuple(p.shape), abs(p.std().item() / want - 1) < 0.6))
        out.append(stds)
        out.append(list(m.state_dict().keys()))
        out.append([type(mod).__name__ for mod in m.modules()])
        counts = {}

        def count(mod):
            counts[type(mod).__name__] = counts.get(type(mod).__name__, 0) + 1

        out.append(m.apply(count) is m)
        out.append(sorted(counts.items()))

        def reinit(mod):
            if isinstance(mod, nn.Linear):
                nn.init.zeros_(mod.bias)
                nn.init.ones_(mod.weight)
        m.apply(reinit)
        out.append(m.fc.weight.sum())
        _init(lib, m)
        x = _data(lib, 2, 3, 16, 16)
        y = m(x)
        lib.nn.functional.cross_entropy(y, lib.tensor([1, 3])).backward()
        out += [y, {n: p.grad for n, p in m.named_parameters()}, {n: b for n, b in m.named_buffers()}]
        m.eval()
        out.append(m(x))
    return out



# ------------------------------------------------------------------------------------------------------------- ViT


def _resample_abs_pos_embed(lib, posemb, new_size, old_size=None, num_prefix_tokens=1, interpolation='bicubic',
                            antialias=True):
    """timm.layers.pos_embed.resample_abs_pos_embed."""
    F = lib.nn.functional
    num_pos_tokens = posemb.shape[1]
    num_new_tokens = new_size[0] * new_size[1] + num_prefix_tokens
    if num_new_tokens == num_pos_tokens and new_size[0] == new_size[1]:
        return posemb
    if old_size is None:
        hw = int(math.sqrt(num_pos_tokens - num_prefix_tokens))
        old_size = hw, hw
    if num_prefix_tokens:
        posemb_prefix, posemb = posemb[:, :num_prefix_tokens], posemb[:, num_prefix_tokens:]
    else:
        posemb_prefix, posemb = None, posemb
    embed_dim = posemb.shape[-1]
    orig_dtype = posemb.dtype
    posemb = posemb.float()
    posemb = posemb.reshape(1, old_size[0], old_size[1], -1).permute(0, 3, 1, 2)
    posemb = F.interpolate(posemb, size=new_size, mode=interpolation, antialias=antialias)
    posemb = posemb.permute(0, 2, 3, 1).reshape(1, -1, embed_dim)
    posemb = posemb.to(orig_dtype)
    if posemb_prefix is not None:
        posemb = lib.cat([posemb_prefix, posemb], dim=1)
    return posemb


def _vit(lib):
    nn, F = lib.nn, lib.nn.functional

    class PatchEmbed(nn.Module):
        def __init__(self, img_size=16, patch_size=4, in_chans=3, embed_dim=16, flatten=True):
            super().__init__()
            self.img_size = (img_size, img_size)
            self.patch_size = (patch_size, patch_size)
            self.grid_size = tuple(s // p for s, p in zip(self.img_size, self.patch_size))
            self.num_patches = self.grid_size[0] * self.grid_size[1]
            self.flatten = flatten
            self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)
            self.norm = nn.Identity()

        def forward(self, x):
            B, C, H, W = x.shape
            x = self.proj(x)
            if self.flatten:
                x = x.flatten(2).transpose(1, 2)  # NCHW -> NLC
            return self.norm(x)

    class Attention(nn.Module):
        """timm's Attention: one qkv Linear, reshape/permute/unbind, fused (sdpa) or by hand."""
        def __init__(self, dim, num_heads=2, qkv_bias=False, fused=True):
            super().__init__()
            self.num_heads = num_heads
            self.head_dim = dim // num_heads
            self.scale = self.head_dim ** -0.5
            self.fused_attn = fused
            self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
            self.q_norm = nn.Identity()
            self.k_norm = nn.Identity()
            self.attn_drop = nn.Dropout(0.)
            self.proj = nn.Linear(dim, dim)
            self.proj_drop = nn.Dropout(0.)

        def forward(self, x):
            B, N, C = x.shape
            qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
            q, k, v = qkv.unbind(0)
            q, k = self.q_norm(q), self.k_norm(k)
            if self.fused_attn:
                x = F.scaled_dot_product_attention(q, k, v, dropout_p=self.attn_drop.p if self.training else 0.)
            else:
                q = q * self.scale
                attn = q @ k.transpose(-2, -1)
                attn = attn.softmax(dim=-1)
                attn = self.attn_drop(attn)
                x = attn @ v
            x = x.transpose(1, 2).reshape(B, N, C)
            x = self.proj(x)
            return self.proj_drop(x)

    class Mlp(nn.Module):
        def __init__(self, in_features, hidden_features):
            super().__init__()
            self.fc1 = nn.Linear(in_features, hidden_features)
            self.act = nn.GELU()
            self.drop1 = nn.Dropout(0.)
            self.fc2 = nn.Linear(hidden_features, in_features)
            self.drop2 = nn.Dropout(0.)

        def forward(self, x):
            return self.drop2(self.fc2(self.drop1(self.act(self.fc1(x)))))

    class Block(nn.Module):
        def __init__(self, dim, num_heads, mha="timm", fused=True):
            super().__init__()
            self.norm1 = nn.LayerNorm(dim, eps=1e-6)
            self.mha = mha
            if mha == "torch":
                self.attn = nn.MultiheadAttention(dim, num_heads, dropout=0.0, batch_first=True)
            else:
                self.attn = Attention(dim, num_heads, qkv_bias=True, fused=fused)
            self.norm2 = nn.LayerNorm(dim, eps=1e-6)
            self.mlp = Mlp(dim, dim * 4)

        def forward(self, x):
            if self.mha == "torch":  # torchvision's EncoderBlock
                y = self.norm1(x)
                y, _ = self.attn(y, y, y, need_weights=False)
                x = x + y
            else:
                x = x + self.attn(self.norm1(x))
            return x + self.mlp(self.norm2(x))

    class VisionTransformer(nn.Module):
        def __init__(self, img_size=16, patch_size=4, num_classes=5, embed_dim=16, depth=2, num_heads=2,
                     mha="timm", fused=True, global_pool="token"):
            super().__init__()
            self.global_pool = global_pool
            self.num_prefix_tokens = 1
            self.patch_embed = PatchEmbed(img_size, patch_size, 3, embed_dim)
            num_patches = self.patch_embed.num_patches
            self.cls_token = nn.Parameter(lib.zeros(1, 1, embed_dim))
            self.pos_embed = nn.Parameter(lib.randn(1, num_patches + 1, embed_dim) * .02)
            self.pos_drop = nn.Dropout(p=0.)
            self.blocks = nn.Sequential(*[Block(embed_dim, num_heads, mha, fused) for _ in range(depth)])
            self.norm = nn.LayerNorm(embed_dim, eps=1e-6)
            self.head = nn.Linear(embed_dim, num_classes)

        def _pos_embed(self, x):
            H, W = x.shape[-2] // 4, x.shape[-1] // 4
            pos_embed = _resample_abs_pos_embed(lib, self.pos_embed, (H, W), num_prefix_tokens=1)
            x = x.flatten(2).transpose(1, 2) if x.ndim == 4 else x
            x = lib.cat((self.cls_token.expand(x.shape[0], -1, -1), x), dim=1)
            x = x + pos_embed
            return self.pos_drop(x)

        def forward_features(self, x):
            x = self.patch_embed.proj(x)
            x = self._pos_embed(x)
            x = self.blocks(x)
            return self.norm(x)

        def forward_head(self, x, pre_logits=False):
            if self.global_pool == "avg":
                x = x[:, self.num_prefix_tokens:].mean(dim=1)
            else:
                x = x[:, 0]
            return x if pre_logits else self.head(x)

        def forward(self, x):
            return self.forward_head(self.forward_features(x))

    return PatchEmbed, Attention, Block, VisionTransformer


def case_vit_forward_backward(lib):
    """ViT with timm's Attention (fused sdpa and the hand-written softmax(q k^T) v), with torchvision's
    nn.MultiheadAttention(batch_first=True) blocks, cls token expand + cat, head on the cls token or the average of
    the patch tokens; the three attention forms agree; gradients of every parameter; a larger input (20x20) runs
    through the bicubic resample of the position embedding."""
    _, _, _, ViT = _vit(lib)
    x = _data(lib, 2, 3, 16, 16)
    out = []
    ys = []
    for mha, fused, pool in (("timm", True, "token"), ("timm", False, "token"), ("torch", True, "avg")):
        m = _init(lib, ViT(mha=mha, fused=fused, global_pool=pool))
        m.eval()
        y = m(x)
        y.logsumexp(-1).sum().backward()
        out += [y, {n: p.grad for n, p in m.named_parameters()}]
        ys.append(m.forward_features(x))
        out.append(m(_data(lib, 1, 3, 20, 20)))
    out.append([(ys[0] - ys[1]).abs().max() < 1e-5, list(ys[2].shape)])
    out.append(list(m.state_dict().keys()))
    out.append(m.cls_token.expand(2, -1, -1).stride())
    return out


def case_vit_pos_embed_resample(lib):
    """timm's resample_abs_pos_embed: reshape to the grid, permute to NCHW, F.interpolate bicubic (align_corners
    False) with and without antialias, up and down, permute back, cat the prefix token; gradients to the position
    embedding; a float16 embedding goes through float32 and comes back; the unchanged size returns the object."""
    F = lib.nn.functional
    pe = (_data(lib, 1, 17, 6) * 0.5).requires_grad_()
    out = []
    for size in ((6, 6), (3, 3), (4, 6), (2, 5)):
        for aa in (False, True):
            r = _resample_abs_pos_embed(lib, pe, size, antialias=aa)
            w = _data(lib, *r.shape, seed=2)
            g, = lib.autograd.grad((r * w).sum(), pe)
            out += [r, g]
    out.append(_resample_abs_pos_embed(lib, pe, (4, 4)) is pe)
    h = _resample_abs_pos_embed(lib, pe.detach().half(), (5, 5), antialias=False)
    out += [h.dtype, h.float()]
    grid = pe.detach()[:, 1:].reshape(1, 4, 4, -1).permute(0, 3, 1, 2)
    out += [grid.is_contiguous(), F.interpolate(grid, scale_factor=1.5, mode='bicubic', align_corners=False),
            F.interpolate(grid, size=(7, 3), mode='bilinear', align_corners=False, antialias=True),
            F.interpolate(grid.contiguous(), size=(5, 5), mode='bicubic', align_corners=True)]
    return out


test_script_matches_torch = script_test(globals())
