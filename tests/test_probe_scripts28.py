"""Third-party programs, round 27 (continued from test_probe_scripts27.py): the official PyTorch tutorials on tiny
synthetic data, compared with torch 2.13 by ``assert_script_matches`` (tests/oracle.py): DQN (namedtuple
transitions in a deque replayed with ``random.sample``, ``gather``, next-state values written through a bool mask,
SmoothL1Loss, ``clip_grad_value_``, AdamW(amsgrad) and the target net's soft update through ``load_state_dict``),
transfer learning (a replaced head, frozen parameters,
``set_grad_enabled(phase == 'train')``, StepLR, the best weights kept by ``copy.deepcopy(state_dict())``), the
pruning tutorial (random/l1/ln structured pruning, the PruningContainer history, global pruning, a custom
BasePruningMethod, ``prune.identity``/``random_structured``/``remove``) and DCGAN (``weights_init`` applied by class
name with ``nn.init.normal_``/``constant_``, a ConvTranspose2d + BatchNorm2d generator, BCELoss with
``full``/``fill_`` labels, two Adams, ``fake.detach()``, the printed training stats); and the notes' small
programs: Tensor Attributes (the promotion table, in-place casts and their errors, broadcasting, default dtypes),
Tensor Views, Serialization semantics (views saved together stay views), autograd's saved tensors and complex
gradients.

Nothing in these programs differed from PyTorch's results. The char-RNN name classification and generation
program is test_probe_scripts22's ``char_rnn_classify_and_generate`` (the two files' copies merged there).
"""
import copy
import importlib
import io
import math
import random
from collections import deque, namedtuple

import pytest

from oracle import script_test, torch_one_thread
from oracle import formula_data as _data, formula_init as _init

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)

Transition = namedtuple('Transition', ('state', 'action', 'next_state', 'reward'))


def case_dqn_namedtuple_replay(lib):
    """The DQN tutorial: Transition namedtuples in a deque ReplayMemory sampled with Python's seeded ``random``,
    epsilon-greedy actions by ``max(1).indices.view(1, 1)``, the batch by ``Transition(*zip(*transitions))``, a
    bool tensor from ``map``, ``gather``, next-state values assigned through the mask under no_grad,
    SmoothL1Loss, ``clip_grad_value_``, AdamW(amsgrad) and the soft target update through state dicts; durations
    averaged by ``unfold``."""
    nn, F, optim = lib.nn, lib.nn.functional, lib.optim
    random.seed(3)
    lib.manual_seed(3)

    class ReplayMemory(object):
        def __init__(self, capacity):
            self.memory = deque([], maxlen=capacity)

        def push(self, *args):
            self.memory.append(Transition(*args))

        def sample(self, batch_size):
            return random.sample(self.memory, batch_size)

        def __len__(self):
            return len(self.memory)

    class DQN(nn.Module):
        def __init__(self, n_observations, n_actions):
            super().__init__()
            self.layer1 = nn.Linear(n_observations, 16)
            self.layer2 = nn.Linear(16, 16)
            self.layer3 = nn.Linear(16, n_actions)

        def forward(self, x):
            x = F.relu(self.layer1(x))
            x = F.relu(self.layer2(x))
            return self.layer3(x)

    BATCH_SIZE, GAMMA, EPS_START, EPS_END, EPS_DECAY, TAU, LR = 4, 0.99, 0.9, 0.05, 10, 0.005, 1e-3
    n_actions, n_observations = 2, 4
    device = "cpu"
    policy_net = DQN(n_observations, n_actions).to(device)
    target_net = DQN(n_observations, n_actions).to(device)
    target_net.load_state_dict(policy_net.state_dict())
    optimizer = optim.AdamW(policy_net.parameters(), lr=LR, amsgrad=True)
    memory = ReplayMemory(50)
    steps_done = 0

    def select_action(state):
        nonlocal steps_done
        sample = random.random()
        eps_threshold = EPS_END + (EPS_START - EPS_END) * math.exp(-1. * steps_done / EPS_DECAY)
        steps_done += 1
        if sample > eps_threshold:
            with lib.no_grad():
                return policy_net(state).max(1).indices.view(1, 1)
        else:
            return lib.tensor([[random.randrange(n_actions)]], device=device, dtype=lib.long)

    losses = []

    def optimize_model():
        if len(memory) < BATCH_SIZE:
            return
        transitions = memory.sample(BATCH_SIZE)
        batch = Transition(*zip(*transitions))
        non_final_mask = lib.tensor(tuple(map(lambda s: s is not None, batch.next_state)), device=device,
                                    dtype=lib.bool)
        non_final_next_states = lib.cat([s for s in batch.next_state if s is not None])
        state_batch = lib.cat(batch.state)
        action_batch = lib.cat(batch.action)
        reward_batch = lib.cat(batch.reward)
        state_action_values = policy_net(state_batch).gather(1, action_batch)
        next_state_values = lib.zeros(BATCH_SIZE, device=device)
        with lib.no_grad():
            next_state_values[non_final_mask] = target_net(non_final_next_states).max(1).values
        expected_state_action_values = (next_state_values * GAMMA) + reward_batch
        criterion = nn.SmoothL1Loss()
        loss = criterion(state_action_values, expected_state_action_values.unsqueeze(1))
        optimizer.zero_grad()
        loss.backward()
        lib.nn.utils.clip_grad_value_(policy_net.parameters(), 100)
        optimizer.step()
        losses.append(loss.item())

    def env_step(state, action):
        s = state.squeeze(0).tolist()
        nxt = [math.sin(v + 0.3 * (action * 2 - 1) + i) for i, v in enumerate(s)]
        terminated = sum(nxt) > 2.0
        return nxt, 1.0 if not terminated else -1.0, terminated

    durations = []
    for i_episode in range(3):
        state = [0.1 * i_episode, 0.2, -0.1, 0.05]
        state = lib.tensor(state, dtype=lib.float32, device=device).unsqueeze(0)
        for t in range(6):
            action = select_action(state)
            observation, reward, terminated = env_step(state, action.item())
            reward = lib.tensor([reward], device=device)
            done = terminated or t == 5
            if terminated:
                next_state = None
            else:
                next_state = lib.tensor(observation, dtype=lib.float32, device=device).unsqueeze(0)
            memory.push(state, action, next_state, reward)
            state = next_state
            optimize_model()
            target_net_state_dict = target_net.state_dict()
            policy_net_state_dict = policy_net.state_dict()
            for key in policy_net_state_dict:
                target_net_state_dict[key] = policy_net_state_dict[key] * TAU + target_net_state_dict[key] * (1 - TAU)
            target_net.load_state_dict(target_net_state_dict)
            if done:
                durations.append(t + 1)
                break
    durations_t = lib.tensor(durations, dtype=lib.float)
    means = durations_t.unfold(0, 2, 1).mean(1).view(-1)
    means = lib.cat((lib.zeros(1), means))
    return (losses, durations, means, dict(target_net.state_dict()), steps_done,
            optimizer.state_dict()["state"][0]["max_exp_avg_sq"])


def case_transfer_learning_freeze(lib):
    """Transfer learning: fine-tuning with a replaced ``fc`` head and freezing the backbone (``requires_grad =
    False``, an optimizer over the head only), ``set_grad_enabled(phase == 'train')``, ``torch.max(outputs,
    1)``, running corrects as a tensor made double, StepLR, the best weights deep-copied and loaded back."""
    nn = lib.nn
    lr_scheduler = lib.optim.lr_scheduler

    class TinyResNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 4, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(4)
            self.relu = nn.ReLU(inplace=True)
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(4, 10)

        def forward(self, x):
            x = self.relu(self.bn1(self.conv1(x)))
            x = lib.flatten(self.avgpool(x), 1)
            return self.fc(x)

    lib.manual_seed(0)
    res = {}
    images = _data(lib, 8, 3, 4, 4)
    labels = lib.tensor([0, 1, 1, 0, 1, 0, 0, 1])
    dataloaders = {"train": lib.utils.data.DataLoader(lib.utils.data.TensorDataset(images, labels), batch_size=4,
                                                      shuffle=True),
                   "val": lib.utils.data.DataLoader(lib.utils.data.TensorDataset(images[:4] * 0.9, labels[:4]),
                                                    batch_size=4)}
    dataset_sizes = {"train": 8, "val": 4}

    def train_model(model, criterion, optimizer, scheduler, num_epochs=3):
        best_model_params = copy.deepcopy(model.state_dict())
        best_acc = 0.0
        log = []
        for epoch in range(num_epochs):
            for phase in ['train', 'val']:
                if phase == 'train':
                    model.train()
                else:
                    model.eval()
                running_loss = 0.0
                running_corrects = 0
                for inputs, labels in dataloaders[phase]:
                    optimizer.zero_grad()
                    with lib.set_grad_enabled(phase == 'train'):
                        outputs = model(inputs)
                        _, preds = lib.max(outputs, 1)
                        loss = criterion(outputs, labels)
                        if phase == 'train':
                            loss.backward()
                            optimizer.step()
                    running_loss += loss.item() * inputs.size(0)
                    running_corrects += lib.sum(preds == labels.data)
                if phase == 'train':
                    scheduler.step()
                epoch_loss = running_loss / dataset_sizes[phase]
                epoch_acc = running_corrects.double() / dataset_sizes[phase]
                log.append(f'{phase} Loss: {epoch_loss:.4f} Acc: {epoch_acc:.4f}')
                log.append((epoch_acc, type(running_corrects).__name__, running_corrects.dtype,
                            scheduler.get_last_lr()))
                if phase == 'val' and epoch_acc > best_acc:
                    best_acc = epoch_acc
                    best_model_params = copy.deepcopy(model.state_dict())
        model.load_state_dict(best_model_params)
        return model, log, best_acc

    model_ft = _init(lib, TinyResNet())
    num_ftrs = model_ft.fc.in_features
    model_ft.fc = nn.Linear(num_ftrs, 2)
    criterion = nn.CrossEntropyLoss()
    optimizer_ft = lib.optim.SGD(model_ft.parameters(), lr=0.1, momentum=0.9)
    exp_lr_scheduler = lr_scheduler.StepLR(optimizer_ft, step_size=2, gamma=0.1)
    model_ft, log, best = train_model(model_ft, criterion, optimizer_ft, exp_lr_scheduler)
    res["ft"] = log, best, model_ft.fc.weight, model_ft.bn1.running_mean
    model_conv = _init(lib, TinyResNet())
    for param in model_conv.parameters():
        param.requires_grad = False
    model_conv.fc = nn.Linear(num_ftrs, 2)
    optimizer_conv = lib.optim.SGD(model_conv.fc.parameters(), lr=0.1, momentum=0.9)
    exp_lr_scheduler = lr_scheduler.StepLR(optimizer_conv, step_size=2, gamma=0.1)
    model_conv, log, best = train_model(model_conv, criterion, optimizer_conv, exp_lr_scheduler)
    res["conv"] = (log, best, model_conv.conv1.weight.grad, model_conv.fc.weight.grad, model_conv.fc.weight,
                   model_conv.bn1.running_var, sum(p.numel() for p in model_conv.parameters() if p.requires_grad))
    model_conv.eval()
    with lib.no_grad():
        outputs = model_conv(images[:2])
        _, preds = lib.max(outputs, 1)
    res["pred"] = preds, outputs
    return res


def case_prune_tutorial(lib):
    """The pruning tutorial on a LeNet: named parameters/buffers around random_unstructured, l1_unstructured by
    count on the bias, ln_structured on top (the PruningContainer history), state_dict keys, ``prune.remove``,
    per-layer pruning in a loop, global pruning with sparsity prints, a custom BasePruningMethod,
    ``prune.identity``, ``random_structured`` and gradients through the masks."""
    nn, F = lib.nn, lib.nn.functional
    prune = importlib.import_module(lib.__name__ + ".nn.utils.prune")
    lib.manual_seed(11)

    class LeNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 3, 3)
            self.conv2 = nn.Conv2d(3, 4, 3)
            self.fc1 = nn.Linear(4 * 2 * 2, 6)
            self.fc2 = nn.Linear(6, 3)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
            x = F.relu(self.conv2(x))
            x = x.view(-1, int(x.nelement() / x.shape[0]))
            x = F.relu(self.fc1(x))
            return self.fc2(x)

    model = _init(lib, LeNet())
    module = model.conv1
    res = {"params0": list(module.named_parameters()), "buffers0": list(module.named_buffers())}
    prune.random_unstructured(module, name="weight", amount=0.3)
    res["after_random"] = (list(module.named_parameters()), list(module.named_buffers()), module.weight,
                           len(module._forward_pre_hooks))
    prune.l1_unstructured(module, name="bias", amount=3)
    res["bias"] = (list(module.named_buffers()), module.bias, len(module._forward_pre_hooks))
    prune.ln_structured(module, name="weight", amount=0.5, n=2, dim=0)
    res["ln"] = (module.weight, module.weight_mask)
    for hook in module._forward_pre_hooks.values():
        if hook._tensor_name == "weight":
            break
    res["history"] = [type(h).__name__ for h in hook], type(hook).__name__
    res["keys"] = list(model.state_dict().keys())
    prune.remove(module, 'weight')
    res["removed"] = (list(module.named_parameters()), [n for n, _ in module.named_buffers()])
    new_model = _init(lib, LeNet())
    for name, module in new_model.named_modules():
        if isinstance(module, lib.nn.Conv2d):
            prune.l1_unstructured(module, name='weight', amount=0.2)
        elif isinstance(module, lib.nn.Linear):
            prune.l1_unstructured(module, name='weight', amount=0.4)
    res["masks"] = list(dict(new_model.named_buffers()).keys())
    model = _init(lib, LeNet(), seed=2)
    parameters_to_prune = ((model.conv1, 'weight'), (model.conv2, 'weight'), (model.fc1, 'weight'),
                           (model.fc2, 'weight'))
    prune.global_unstructured(parameters_to_prune, pruning_method=prune.L1Unstructured, amount=0.2)
    spars = []
    for m in (model.conv1, model.conv2, model.fc1, model.fc2):
        spars.append("Sparsity in weight: {:.2f}%".format(
            100. * float(lib.sum(m.weight == 0)) / float(m.weight.nelement())))
    total = sum(float(lib.sum(m.weight == 0)) for m in (model.conv1, model.conv2, model.fc1, model.fc2))
    res["global"] = spars, total

    class FooBarPruningMethod(prune.BasePruningMethod):
        PRUNING_TYPE = 'unstructured'

        def compute_mask(self, t, default_mask):
            mask = default_mask.clone()
            mask.view(-1)[::2] = 0
            return mask

    def foobar_unstructured(module, name):
        FooBarPruningMethod.apply(module, name)
        return module

    model = _init(lib, LeNet())
    foobar_unstructured(model.fc2, name='bias')
    res["foobar"] = (model.fc2.bias_mask, model.fc2.bias)
    prune.identity(model.fc1, "bias")
    prune.random_structured(model.conv2, "weight", amount=0.5, dim=1)
    x = _data(lib, 2, 1, 10, 10)
    out = model(x)
    out.sum().backward()
    res["fw"] = (out, model.fc2.bias_orig.grad, model.conv2.weight_orig.grad, model.conv2.weight_mask.sum(),
                 prune.is_pruned(model), lib.rand(2))
    return res


def case_dcgan(lib):
    """The DCGAN tutorial scaled down: ``weights_init`` applied by class name, generator/discriminator reprs,
    BCELoss with ``full``/``fill_`` labels, the discriminator's real and fake (detached) passes, the generator's
    step, the training stats printed with %-formats, BatchNorm running statistics and the fixed-noise samples."""
    nn = lib.nn
    lib.manual_seed(999)
    nz, ngf, ndf, nc = 4, 4, 4, 1

    def weights_init(m):
        classname = m.__class__.__name__
        if classname.find('Conv') != -1:
            nn.init.normal_(m.weight.data, 0.0, 0.02)
        elif classname.find('BatchNorm') != -1:
            nn.init.normal_(m.weight.data, 1.0, 0.02)
            nn.init.constant_(m.bias.data, 0)

    class Generator(nn.Module):
        def __init__(self, ngpu):
            super().__init__()
            self.ngpu = ngpu
            self.main = nn.Sequential(
                nn.ConvTranspose2d(nz, ngf * 2, 2, 1, 0, bias=False),
                nn.BatchNorm2d(ngf * 2),
                nn.ReLU(True),
                nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False),
                nn.BatchNorm2d(ngf),
                nn.ReLU(True),
                nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False),
                nn.Tanh())

        def forward(self, input):
            return self.main(input)

    class Discriminator(nn.Module):
        def __init__(self, ngpu):
            super().__init__()
            self.ngpu = ngpu
            self.main = nn.Sequential(
                nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),
                nn.LeakyReLU(0.2, inplace=True),
                nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),
                nn.BatchNorm2d(ndf * 2),
                nn.LeakyReLU(0.2, inplace=True),
                nn.Conv2d(ndf * 2, 1, 2, 1, 0, bias=False),
                nn.Sigmoid())

        def forward(self, input):
            return self.main(input)

    device = lib.device("cpu")
    netG = Generator(0).to(device)
    netG.apply(weights_init)
    netD = Discriminator(0).to(device)
    netD.apply(weights_init)
    res = {"G": str(netG), "D": str(netD)}
    criterion = nn.BCELoss()
    fixed_noise = lib.randn(4, nz, 1, 1, device=device)
    real_label, fake_label = 1., 0.
    lr, beta1 = 0.0002 * 50, 0.5
    optimizerD = lib.optim.Adam(netD.parameters(), lr=lr, betas=(beta1, 0.999))
    optimizerG = lib.optim.Adam(netG.parameters(), lr=lr, betas=(beta1, 0.999))
    G_losses, D_losses, stats = [], [], []
    data = _data(lib, 8, 1, 8, 8).tanh()
    dataloader = lib.utils.data.DataLoader(lib.utils.data.TensorDataset(data), batch_size=4, shuffle=True)
    for epoch in range(2):
        for i, batch in enumerate(dataloader, 0):
            netD.zero_grad()
            real_cpu = batch[0].to(device)
            b_size = real_cpu.size(0)
            label = lib.full((b_size,), real_label, dtype=lib.float, device=device)
            output = netD(real_cpu).view(-1)
            errD_real = criterion(output, label)
            errD_real.backward()
            D_x = output.mean().item()
            noise = lib.randn(b_size, nz, 1, 1, device=device)
            fake = netG(noise)
            label.fill_(fake_label)
            output = netD(fake.detach()).view(-1)
            errD_fake = criterion(output, label)
            errD_fake.backward()
            D_G_z1 = output.mean().item()
            errD = errD_real + errD_fake
            optimizerD.step()
            netG.zero_grad()
            label.fill_(real_label)
            output = netD(fake).view(-1)
            errG = criterion(output, label)
            errG.backward()
            D_G_z2 = output.mean().item()
            optimizerG.step()
            stats.append('[%d/%d][%d/%d]\tLoss_D: %.4f\tLoss_G: %.4f\tD(x): %.4f\tD(G(z)): %.4f / %.4f'
                         % (epoch, 2, i, len(dataloader), errD.item(), errG.item(), D_x, D_G_z1, D_G_z2))
            G_losses.append(errG.item())
            D_losses.append(errD.item())
    with lib.no_grad():
        fake = netG(fixed_noise).detach().cpu()
    res.update(stats=stats, G=G_losses, D=D_losses, fake=fake, bn=(netG.main[1].running_mean, netG.main[1].running_var,
               netD.main[3].num_batches_tracked), w=netG.main[0].weight, r=lib.rand(2))
    return res


def case_tensor_attributes_doc(lib):
    """The "Tensor Attributes" and "Broadcasting semantics" notes: their type-promotion table (zero-dim and
    dimensioned operands, bool/uint8/complex), in-place products that may and may not cast (PyTorch's messages),
    broadcast results and errors, finfo/iinfo/promote_types/result_type/can_cast, and
    ``set_default_dtype(float64)``'s effect on inference and factories."""
    float_tensor = lib.ones(1, dtype=lib.float)
    double_tensor = lib.ones(1, dtype=lib.double)
    complex_float_tensor = lib.ones(1, dtype=lib.complex64)
    complex_double_tensor = lib.ones(1, dtype=lib.complex128)
    int_tensor = lib.ones(1, dtype=lib.int)
    long_tensor = lib.ones(1, dtype=lib.long)
    uint_tensor = lib.ones(1, dtype=lib.uint8)
    bool_tensor = lib.ones(1, dtype=lib.bool)
    long_zerodim = lib.tensor(1, dtype=lib.long)
    int_zerodim = lib.tensor(1, dtype=lib.int)
    res = [(5 * int_tensor).dtype, (int_tensor + 5.5).dtype, (int_tensor + long_zerodim).dtype,
           (long_tensor + int_tensor).dtype, (bool_tensor + long_tensor).dtype, (bool_tensor + uint_tensor).dtype,
           (float_tensor + double_tensor).dtype, (complex_float_tensor + complex_double_tensor).dtype,
           (bool_tensor + int_tensor).dtype, lib.add(long_tensor, float_tensor).dtype,
           (int_zerodim + 1.0).dtype, (float_tensor + complex_double_tensor).dtype]
    float_tensor *= float_tensor
    float_tensor *= int_tensor
    float_tensor *= uint_tensor
    float_tensor *= bool_tensor
    float_tensor *= double_tensor
    int_tensor *= long_tensor
    int_tensor *= uint_tensor
    uint_tensor *= int_tensor
    res.append((float_tensor, int_tensor, uint_tensor))
    errs = []
    for f in (lambda: int_tensor.__imul__(float_tensor), lambda: uint_tensor.__imul__(float_tensor),
              lambda: float_tensor.__imul__(complex_float_tensor), lambda: lib.ones(5, 1, 4).add_(lib.ones(3, 1, 1)),
              lambda: lib.empty(5, 2, 4, 1) + lib.empty(3, 1, 1), lambda: lib.ones(1, 4).add_(lib.ones(3, 1))):
        try:
            f()
            errs.append(None)
        except Exception as e:
            errs.append((type(e).__name__, str(e)))
    res.append(errs)
    res += [lib.finfo(lib.float16).eps, lib.finfo(lib.bfloat16).tiny, lib.iinfo(lib.int16).max, str(lib.finfo()),
            lib.promote_types(lib.int8, lib.uint8), lib.result_type(lib.tensor([1, 2]), 1.0),
            lib.can_cast(lib.double, lib.float), lib.can_cast(lib.float, lib.int)]
    x = lib.empty(5, 7, 3)
    y = lib.empty(5, 7, 3)
    res += [(x + y).size(), (lib.empty(5, 3, 4, 1) + lib.empty(3, 1, 1)).size(),
            (lib.empty(1) + lib.empty(3, 1, 7)).size()]
    res += [lib.get_default_dtype(), lib.tensor([1.2, 3]).dtype, lib.tensor([1.2, 3j]).dtype]
    lib.set_default_dtype(lib.float64)
    try:
        res += [lib.tensor([1.2, 3]).dtype, lib.tensor([1.2, 3j]).dtype, lib.arange(3.).dtype, lib.rand(1).dtype]
    finally:
        lib.set_default_dtype(lib.float32)
    return res


def case_views_doc(lib):
    """The "Tensor Views" note: a view shares storage (``untyped_storage().data_ptr()``) and writes through,
    ``_base`` of transposes, narrows, diagonals and splits, contiguity and ``contiguous()`` copies, strides of
    ``T``/``mT``/expand/unfold and storage offsets."""
    t = lib.arange(16.).reshape(4, 4)
    b = t.view(2, 8)
    res = [t.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()]
    b[0][0] = 3.14
    res.append(t[0][0])
    base = lib.tensor([[0, 1], [2, 3]])
    res.append(base.is_contiguous())
    tt = base.transpose(0, 1)
    res += [tt._base is base, tt.is_contiguous(), tt.contiguous()._base is None, tt.contiguous().is_contiguous()]
    res += [t.unflatten(1, (2, 2)).shape, t.narrow(0, 1, 2)._base is t, t.diagonal()._base is t, t.diagonal().stride()]
    res += [t.split(2)[1]._base is t, t.unbind(0)[2].storage_offset(), t.T.stride(), t.mT.stride(), t.view_as(b).shape]
    res += [t.expand(2, 4, 4).stride(), t.unfold(1, 2, 2).stride(), t[:, 1].storage_offset()]
    return res


def case_serialization_views(lib):
    """The "Serialization semantics" note: tensors saved together keep their view relationships (``loaded_evens
    *= 2`` changes ``loaded_numbers``), a saved view keeps its whole storage and a clone does not, and views of
    one base in a dict loaded with ``weights_only=True`` still write through."""
    numbers = lib.arange(1, 10)
    evens = numbers[1::2]
    f = io.BytesIO()
    lib.save([numbers, evens], f)
    f.seek(0)
    loaded_numbers, loaded_evens = lib.load(f)
    loaded_evens *= 2
    res = [loaded_numbers.clone(), loaded_evens.clone(), loaded_evens.storage_offset(), loaded_evens.stride()]
    f = io.BytesIO()
    lib.save(evens, f)
    f.seek(0)
    e2 = lib.load(f)
    res += [e2, e2.stride(), e2.storage_offset(), e2.untyped_storage().size()]
    f = io.BytesIO()
    lib.save(evens.clone(), f)
    f.seek(0)
    e3 = lib.load(f)
    res += [e3.untyped_storage().size(), e3.stride()]
    x = lib.zeros(3, 4)
    d = {"a": x, "row": x[1], "t": x.t()}
    f = io.BytesIO()
    lib.save(d, f)
    f.seek(0)
    l = lib.load(f, weights_only=True)
    l["row"].fill_(7.)
    l["t"][0, 2] = 5.
    res += [l["a"].clone(), l["t"].stride(), l["t"].is_contiguous()]
    return res


def case_saved_tensor_attrs(lib):
    """The autograd mechanics note's saved tensors: ``grad_fn._saved_self is x`` for an input,
    ``_saved_exponent``, ``_saved_result`` equal to the output but not the same object."""
    x = lib.tensor([0.5, -1., 2.], requires_grad=True)
    y = x.pow(2)
    res = [y.grad_fn._saved_self is x, y.grad_fn._saved_exponent, y.grad_fn._saved_self.equal(x)]
    z = x.exp()
    res += [z.grad_fn._saved_result.equal(z), z.grad_fn._saved_result is z]
    w = x.sin()
    res += [w.grad_fn._saved_self is x]
    return res


def case_complex_autograd(lib):
    """The complex-numbers autograd note: gradients of ``abs``, ``z * z.conj()``, ``view_as_real`` and ``polar``
    (conjugate Wirtinger convention)."""
    z = lib.tensor([1 + 2j, -0.5 + 1j], requires_grad=True)
    a = z.abs().sum()
    a.backward()
    res = [z.grad.clone()]
    z.grad = None
    (z * z.conj()).real.sum().backward()
    res.append(z.grad.clone())
    z.grad = None
    lib.view_as_real(z * (1 + 1j)).pow(2).sum().backward()
    res.append(z.grad)
    w = lib.tensor([0.3, 1.2], requires_grad=True)
    c = lib.polar(w, lib.tensor([0.1, 0.7]))
    (c.angle() + c.abs()).sum().backward()
    res.append((c, w.grad))
    return res


test_script_matches_torch = script_test(globals())
