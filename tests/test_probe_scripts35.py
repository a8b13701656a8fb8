"""Third-party programs, round 33 (continued from test_probe_scripts33/34.py): official PyTorch tutorials and notes
on tiny synthetic data, run with torch 2.13 and with torchish from ``torch.manual_seed`` with default initialisation
and compared by ``assert_script_matches`` (tests/oracle.py), prints captured as text (object addresses removed) and
warnings by message: the "Train a Mario-playing RL Agent" double-DQN agent, the Modules note (docs/notes/modules)
and the autograd page of the "Introduction to PyTorch" series.

Nothing in these programs differed from PyTorch's results but one print: the autograd page's ``print(d.sum())`` of
25 float32 values (PyTorch's vectorized cascade sum gives ``tensor(25.)``, XLA's reduction ``tensor(25.0000)``,
4e-6 below), not compared as text: the sum is returned as a tensor instead.
"""
import io
import math
import os
import random
import tempfile
from collections import deque

import numpy as np
import pytest

from oracle import script_test, torch_one_thread
from test_probe_scripts34 import _printed

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def case_mario_double_dqn(lib):
    """The "Train a Mario-playing RL Agent" tutorial's agent on a numpy stand-in for the game: observations turned
    to CHW float tensors by ``np.transpose`` + ``torch.tensor(observation.copy(), dtype=torch.float)``, resized
    by ``F.interpolate`` (torchvision's Resize) and scaled, frames stacked; MarioNet's online and target CNNs (the
    target's parameters frozen by ``p.requires_grad = False``), epsilon-greedy ``act`` (numpy's draws, then
    ``torch.argmax(action_values, axis=1).item()``), a deque replay memory of tensors sampled by Python's
    ``random`` and stacked, ``td_estimate``'s ``[np.arange(0, batch_size), action]`` index, ``td_target`` under
    the ``@torch.no_grad()`` decorator with ``(1 - done.float())``, SmoothL1Loss, Adam, the target synced by
    ``load_state_dict`` and the checkpoint dict saved with ``torch.save``. 36x36 frames and narrow layers instead
    of 84x84 and 32/64/512."""
    torch, nn, F = lib, lib.nn, lib.nn.functional

    class MarioNet(nn.Module):
        """mini CNN structure: input -> (conv2d + relu) x 3 -> flatten -> (dense + relu) x 2 -> output"""

        def __init__(self, input_dim, output_dim):
            super().__init__()
            c, h, w = input_dim
            if h != 36:
                raise ValueError(f"Expecting input height: 36, got: {h}")
            self.online = self.__build_cnn(c, output_dim)
            self.target = self.__build_cnn(c, output_dim)
            self.target.load_state_dict(self.online.state_dict())
            for p in self.target.parameters():
                p.requires_grad = False

        def forward(self, input, model):
            if model == "online":
                return self.online(input)
            elif model == "target":
                return self.target(input)

        def __build_cnn(self, c, output_dim):
            return nn.Sequential(
                nn.Conv2d(in_channels=c, out_channels=8, kernel_size=8, stride=4), nn.ReLU(),
                nn.Conv2d(in_channels=8, out_channels=8, kernel_size=4, stride=2), nn.ReLU(),
                nn.Conv2d(in_channels=8, out_channels=8, kernel_size=3, stride=1), nn.ReLU(),
                nn.Flatten(), nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, output_dim),
            )

    class Mario:
        def __init__(self, state_dim, action_dim, save_dir):
            self.state_dim = state_dim
            self.action_dim = action_dim
            self.save_dir = save_dir
            self.device = "cpu"
            self.net = MarioNet(self.state_dim, self.action_dim).float()
            self.net = self.net.to(device=self.device)
            self.exploration_rate = 1
            self.exploration_rate_decay = 0.9
            self.exploration_rate_min = 0.1
            self.curr_step = 0
            self.save_every = 6
            self.memory = deque(maxlen=100)
            self.batch_size = 4
            self.gamma = 0.9
            self.optimizer = torch.optim.Adam(self.net.parameters(), lr=0.00025)
            self.loss_fn = torch.nn.SmoothL1Loss()
            self.burnin = 4
            self.learn_every = 2
            self.sync_every = 5

        def act(self, state):
            if np.random.rand() < self.exploration_rate:
                action_idx = np.random.randint(self.action_dim)
            else:
                state = state[0].__array__() if isinstance(state, tuple) else state.__array__()
                state = torch.tensor(state, device=self.device).unsqueeze(0)
                action_values = self.net(state, model="online")
                action_idx = torch.argmax(action_values, axis=1).item()
            self.exploration_rate *= self.exploration_rate_decay
            self.exploration_rate = max(self.exploration_rate_min, self.exploration_rate)
            self.curr_step += 1
            return action_idx

        def cache(self, state, next_state, action, reward, done):
            def first_if_tuple(x):
                return x[0] if isinstance(x, tuple) else x
            state = first_if_tuple(state).__array__()
            next_state = first_if_tuple(next_state).__array__()
            state = torch.tensor(state)
            next_state = torch.tensor(next_state)
            action = torch.tensor([action])
            reward = torch.tensor([reward])
            done = torch.tensor([done])
            self.memory.append((state, next_state, action, reward, done))

        def recall(self):
            batch = random.sample(self.memory, self.batch_size)
            state, next_state, action, reward, done = map(torch.stack, zip(*batch))
            return state, next_state, action.squeeze(), reward.squeeze(), done.squeeze()

        def td_estimate(self, state, action):
            current_Q = self.net(state, model="online")[np.arange(0, self.batch_size), action]  # Q_online(s,a)
            return current_Q

        @torch.no_grad()
        def td_target(self, reward, next_state, done):
            next_state_Q = self.net(next_state, model="online")
            best_action = torch.argmax(next_state_Q, axis=1)
            next_Q = self.net(next_state, model="target")[np.arange(0, self.batch_size), best_action]
            return (reward + (1 - done.float()) * self.gamma * next_Q).float()

        def update_Q_online(self, td_estimate, td_target):
            loss = self.loss_fn(td_estimate, td_target)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            return loss.item()

        def sync_Q_target(self):
            self.net.target.load_state_dict(self.net.online.state_dict())

        def save(self):
            save_path = os.path.join(self.save_dir, f"mario_net_{int(self.curr_step // self.save_every)}.chkpt")
            torch.save(dict(model=self.net.state_dict(), exploration_rate=self.exploration_rate), save_path)
            self.saved = save_path

        def learn(self):
            if self.curr_step % self.sync_every == 0:
                self.sync_Q_target()
            if self.curr_step % self.save_every == 0:
                self.save()
            if self.curr_step < self.burnin:
                return None, None
            if self.curr_step % self.learn_every != 0:
                return None, None
            state, next_state, action, reward, done = self.recall()
            td_est = self.td_estimate(state, action)
            td_tgt = self.td_target(reward, next_state, done)
            loss = self.update_Q_online(td_est, td_tgt)
            return (td_est.mean().item(), loss)

    def observation(frame):  # GrayScaleObservation's permute_orientation, then ResizeObservation
        observation = np.transpose(frame, (2, 0, 1))
        observation = torch.tensor(observation.copy(), dtype=torch.float)
        observation = observation.mean(0, keepdim=True)
        observation = F.interpolate(observation[None], size=(36, 36), mode="bilinear", antialias=True)[0, 0]
        return (observation / 255).numpy()

    rng = np.random.default_rng(0)
    frames = rng.integers(0, 256, size=(12, 48, 48, 3)).astype(np.uint8)
    rewards = [float(r) for r in rng.normal(size=12).round(3)]
    np.random.seed(1)
    random.seed(1)
    torch.manual_seed(1)
    log = []
    with tempfile.TemporaryDirectory() as save_dir:
        mario = Mario(state_dim=(4, 36, 36), action_dim=3, save_dir=save_dir)
        stack = deque([observation(frames[0])] * 4, maxlen=4)
        state = np.stack(stack)
        for step in range(1, 12):
            action = mario.act(state)
            stack.append(observation(frames[step]))
            next_state = np.stack(stack)
            done = step % 7 == 0
            mario.cache(state, next_state, action, rewards[step], done)
            q, loss = mario.learn()
            log.append((action, q, loss, round(mario.exploration_rate, 6)))
            state = next_state
        saved = torch.load(mario.saved)
    return (log, sorted(saved), saved["exploration_rate"], saved["model"]["online.0.weight"],
            mario.net.target[7].weight.requires_grad, mario.net.online[9].bias, mario.net.target[9].bias)


def case_modules_note(lib):
    """The Modules note (docs/notes/modules): MyLinear with ``randn`` parameters, ``named_parameters``/
    ``named_children``/``named_modules`` of Net and BigNet, DynamicNet with a ModuleList and a ModuleDict and its
    repr, ``apply`` of an init function, a training loop (SGD with weight decay and momentum on ``abs`` of the
    output; five steps instead of 10000), a ModalModule switched by ``eval()``, the RunningMean buffer through
    ``state_dict``/``torch.save``/``load_state_dict``, persistent and non-persistent buffers, ``skip_init`` then
    ``orthogonal_``, a meta-device Linear materialised by ``to_empty``, and the forward pre-/forward/full-backward
    hooks demo printing its outputs and gradients."""
    torch, nn, F = lib, lib.nn, lib.nn.functional

    def program():
        torch.manual_seed(0)

        class MyLinear(nn.Module):
            def __init__(self, in_features, out_features):
                super().__init__()
                self.weight = nn.Parameter(torch.randn(in_features, out_features))
                self.bias = nn.Parameter(torch.randn(out_features))

            def forward(self, input):
                return (input @ self.weight) + self.bias

        m = MyLinear(4, 3)
        sample_input = torch.randn(4)
        print(m(sample_input))
        for parameter in m.named_parameters():
            print(parameter)

        net = nn.Sequential(MyLinear(4, 3), nn.ReLU(), MyLinear(3, 1))
        print(net(sample_input))

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.l0 = MyLinear(4, 3)
                self.l1 = MyLinear(3, 1)

            def forward(self, x):
                x = self.l0(x)
                x = F.relu(x)
                x = self.l1(x)
                return x

        net = Net()
        for child in net.named_children():
            print(child)

        class BigNet(nn.Module):
            def __init__(self):
                super().__init__()
                self.l1 = MyLinear(5, 4)
                self.net = Net()

            def forward(self, x):
                return self.net(self.l1(x))

        big_net = BigNet()
        for module in big_net.named_modules():
            print(module)

        class DynamicNet(nn.Module):
            def __init__(self, num_layers):
                super().__init__()
                self.linears = nn.ModuleList([MyLinear(4, 4) for _ in range(num_layers)])
                self.activations = nn.ModuleDict({'relu': nn.ReLU(), 'lrelu': nn.LeakyReLU()})
                self.final = MyLinear(4, 1)

            def forward(self, x, act):
                for linear in self.linears:
                    x = linear(x)
                x = self.activations[act](x)
                x = self.final(x)
                return x

        dynamic_net = DynamicNet(3)
        sample_input = torch.randn(4)
        print(dynamic_net(sample_input, 'relu'))
        print(dynamic_net(sample_input, 'lrelu'))
        for parameter in dynamic_net.named_parameters():
            print(parameter[0], parameter[1].shape)
        print(dynamic_net)

        @torch.no_grad()
        def init_weights(m):
            if isinstance(m, nn.Linear):
                nn.init.xavier_normal_(m.weight)
                m.bias.fill_(0.0)

        seq = nn.Sequential(nn.Linear(5, 3), nn.ReLU(), nn.Linear(3, 2)).apply(init_weights)
        print(seq[2].weight)

        net = Net()
        optimizer = torch.optim.SGD(net.parameters(), lr=1e-2, weight_decay=1e-2, momentum=0.9)
        for _ in range(5):
            input = torch.randn(4)
            output = net(input)
            loss = torch.abs(output)
            net.zero_grad()
            loss.backward()
            optimizer.step()
        print(net.l1.weight)
        net.eval()
        print(net(input))

        class ModalModule(nn.Module):
            def __init__(self):
                super().__init__()

            def forward(self, x):
                if self.training:
                    return x + 1.
                else:
                    return x - 1.

        m = ModalModule()
        x = torch.randn(4)
        print('training mode output: {}'.format(m(x)))
        m.eval()
        print('evaluation mode output: {}'.format(m(x)))

        class RunningMean(nn.Module):
            def __init__(self, num_features, momentum=0.9):
                super().__init__()
                self.momentum = momentum
                self.register_buffer('mean', torch.zeros(num_features))

            def forward(self, x):
                self.mean = self.momentum * self.mean + (1.0 - self.momentum) * x
                return self.mean

        m = RunningMean(4)
        for _ in range(10):
            input = torch.randn(4)
            m(input)
        print(m)
        print(m.buffers)
        print(m.state_dict())
        buf = io.BytesIO()
        torch.save(m.state_dict(), buf)
        buf.seek(0)
        m_loaded = RunningMean(4)
        m_loaded.load_state_dict(torch.load(buf))
        print(m_loaded.mean)

        class ModuleWithBuffers(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer('persistent', torch.zeros(3))
                self.register_buffer('non_persistent', torch.zeros(3), persistent=False)

        m = ModuleWithBuffers()
        print(list(m.named_buffers()))
        print(m.state_dict())
        m = m.to(torch.float64)
        print(m.non_persistent.dtype, m.persistent.dtype)

        m = nn.Linear(5, 3, dtype=torch.half)
        print(m.weight.dtype)
        m = torch.nn.utils.skip_init(nn.Linear, 5, 1)
        nn.init.orthogonal_(m.weight)
        print(m.weight)
        m = nn.Linear(5, 3, device='meta')
        print(m.weight)
        m.to_empty(device='cpu')
        nn.init.zeros_(m.weight)
        print(m.weight.device, m.weight.sum())

        torch.manual_seed(1)

        def forward_pre_hook(m, inputs):
            input = inputs[0]
            return input + 1.

        def forward_hook(m, inputs, output):
            return output + inputs[0]

        def backward_hook(m, grad_inputs, grad_outputs):
            new_grad_inputs = [torch.ones_like(gi) * 42. for gi in grad_inputs]
            return new_grad_inputs

        m = nn.Linear(3, 3)
        x = torch.randn(2, 3, requires_grad=True)
        print('output with no forward hooks: {}'.format(m(x)))
        forward_pre_hook_handle = m.register_forward_pre_hook(forward_pre_hook)
        print('output with forward pre hook: {}'.format(m(x)))
        forward_hook_handle = m.register_forward_hook(forward_hook)
        print('output with both forward hooks: {}'.format(m(x)))
        forward_pre_hook_handle.remove()
        forward_hook_handle.remove()
        print('output after removing forward hooks: {}'.format(m(x)))
        m(x).sum().backward()
        print('x.grad with no backwards hook: {}'.format(x.grad))
        m.zero_grad()
        x.grad.zero_()
        m.register_full_backward_hook(backward_hook)
        m(x).sum().backward()
        print('x.grad with backwards hook: {}'.format(x.grad))
        return m.weight.grad

    return _printed(program)


def case_autograd_intro_series(lib):
    """The "Introduction to PyTorch" series' autograd page: ``linspace(0., 2. * math.pi, steps=25,
    requires_grad=True)`` through sin, ``2 * b``, ``c + 1`` and ``sum`` with every tensor and ``grad_fn``
    printed and ``next_functions`` walked; TinyModel (16 x 10 -> 8 -> 4 instead of 1000 -> 100 -> 10) with a
    weight slice and its gradient printed before and after ``optimizer.step()``, gradients accumulated over five
    backwards and ``zero_grad(set_to_none=False)``; autograd switched off by ``no_grad`` (block and decorator)
    and ``detach``; the in-place ``torch.sin_`` on a leaf (its RuntimeError); the doubling loop on
    ``y.data.norm()`` with ``backward(v)``; ``autograd.functional.jacobian`` of ``exp_adder`` and ``vjp`` of the
    doubling function."""
    torch = lib

    def program():
        torch.manual_seed(0)
        a = torch.linspace(0., 2. * math.pi, steps=25, requires_grad=True)
        print(a)
        b = torch.sin(a)
        print(b)
        c = 2 * b
        print(c)
        d = c + 1
        print(d)
        out = d.sum()
        total = out  # (printed by the tutorial: returned instead, see the module's docstring)
        print('d:')
        print(d.grad_fn)
        print(d.grad_fn.next_functions)
        print(d.grad_fn.next_functions[0][0].next_functions)
        print(d.grad_fn.next_functions[0][0].next_functions[0][0].next_functions)
        print(d.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0].next_functions)
        print('\nc:')
        print(c.grad_fn)
        print('\nb:')
        print(b.grad_fn)
        print('\na:')
        print(a.grad_fn)
        out.backward()
        print(a.grad)

        BATCH_SIZE, DIM_IN, HIDDEN_SIZE, DIM_OUT = 16, 10, 8, 4

        class TinyModel(torch.nn.Module):
            def __init__(self):
                super(TinyModel, self).__init__()
                self.layer1 = torch.nn.Linear(DIM_IN, HIDDEN_SIZE)
                self.relu = torch.nn.ReLU()
                self.layer2 = torch.nn.Linear(HIDDEN_SIZE, DIM_OUT)

            def forward(self, x):
                x = self.layer1(x)
                x = self.relu(x)
                x = self.layer2(x)
                return x

        some_input = torch.randn(BATCH_SIZE, DIM_IN, requires_grad=False)
        ideal_output = torch.randn(BATCH_SIZE, DIM_OUT, requires_grad=False)
        model = TinyModel()
        print(model.layer2.weight[0][0:10])
        print(model.layer2.weight.grad)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.001)
        prediction = model(some_input)
        loss = (ideal_output - prediction).pow(2).sum()
        print(loss)
        loss.backward()
        print(model.layer2.weight[0][0:10])
        print(model.layer2.weight.grad[0][0:10])
        optimizer.step()
        print(model.layer2.weight[0][0:10])
        print(model.layer2.weight.grad[0][0:10])
        print(model.layer2.weight.grad[0][0:10])
        for i in range(0, 5):
            prediction = model(some_input)
            loss = (ideal_output - prediction).pow(2).sum()
            loss.backward()
        print(model.layer2.weight.grad[0][0:10])
        optimizer.zero_grad(set_to_none=False)
        print(model.layer2.weight.grad[0][0:10])

        a = torch.ones(2, 3, requires_grad=True)
        print(a)
        b1 = 2 * a
        print(b1)
        a.requires_grad = False
        b2 = 2 * a
        print(b2)
        a = torch.ones(2, 3, requires_grad=True) * 2
        b = torch.ones(2, 3, requires_grad=True) * 3
        c1 = a + b
        print(c1)
        with torch.no_grad():
            c2 = a + b
        print(c2)
        c3 = a * b
        print(c3)

        def add_tensors1(x, y):
            return x + y

        @torch.no_grad()
        def add_tensors2(x, y):
            return x + y

        c1 = add_tensors1(a, b)
        print(c1)
        c2 = add_tensors2(a, b)
        print(c2)
        x = torch.rand(5, requires_grad=True)
        y = x.detach()
        print(x)
        print(y)

        a = torch.linspace(0., 2. * math.pi, steps=25, requires_grad=True)
        try:
            torch.sin_(a)
        except RuntimeError as e:
            print(e)

        x = torch.randn(3, requires_grad=True)
        y = x * 2
        while y.data.norm() < 1000:
            y = y * 2
        print(y)
        v = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float)
        y.backward(v)
        print(x.grad)

        def exp_adder(x, y):
            return 2 * x.exp() + 3 * y

        inputs = (torch.rand(1), torch.rand(1))
        print(inputs)
        print(torch.autograd.functional.jacobian(exp_adder, inputs))
        inputs = (torch.rand(3), torch.rand(3))
        print(inputs)
        print(torch.autograd.functional.jacobian(exp_adder, inputs))

        def do_some_doubling(x):
            y = x * 2
            while y.data.norm() < 1000:
                y = y * 2
            return y

        inputs = torch.randn(3)
        my_gradients = torch.tensor([0.1, 1.0, 0.0001])
        print(torch.autograd.functional.vjp(do_some_doubling, inputs, v=my_gradients))
        return model.layer1.weight.grad, total

    return _printed(program)


test_script_matches_torch = script_test(globals())
