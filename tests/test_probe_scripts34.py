"""Third-party programs, round 33 (continued from test_probe_scripts33.py): more official PyTorch tutorials and
notes on tiny synthetic data, run with torch 2.13 and with torchish from ``torch.manual_seed`` with default
initialisation and compared by ``assert_script_matches`` (tests/oracle.py), prints captured as text (object
addresses removed) and warnings by message: the N-gram language model and the CBOW exercise of "Word Embeddings:
Encoding Lexical Semantics" (NLP series), the Parametrizations tutorial (Symmetric, Skew, CayleyMap and
MatrixExponential modules, concatenated parametrizations, ``cached()``, ``right_inverse`` assignments, removal with
and without ``leave_parametrized``), the "Gradcheck mechanics" note, "Understanding requires_grad, retain_grad,
Leaf, and Non-leaf Tensors" and "Visualizing Gradients" (tensor hooks attached by forward hooks, with and without
BatchNorm). The Mario double-DQN agent, the Modules note and the autograd page of the "Introduction to PyTorch"
series are in test_probe_scripts35.py.

Fixed here: ``torch.autograd.gradcheck``/``gradgradcheck`` raised NotImplementedError for complex inputs and
outputs; they now check them as PyTorch does (complex outputs as their imaginary and real parts, complex inputs by
the conjugate Wirtinger derivative ``ds/dx + 1j * ds/dy``, split into parts in forward mode; fast mode with a
vector per part), with PyTorch's "While considering the imaginary part of complex outputs only" messages and
complex random grad_outputs in gradgradcheck.

Also probed and matching (kept out for time): the Knowledge Distillation tutorial (a teacher and a student CNN,
soft targets by hand, ``avg_pool1d`` of the teacher's features against the student's with CosineEmbeddingLoss, a
Conv2d regressor on feature maps with MSELoss, dropout on), the optimizer docs' named-parameter state dicts adapted
by ``register_load_state_dict_pre_hook``, chained ExponentialLR + MultiStepLR, EMA/SWA through
``get_ema_multi_avg_fn``, SWALR and ``update_bn``; the channels-last tutorial's strides; the "Building Models" page
of the "Introduction to PyTorch" series; the autograd mechanics note's saved tensors (``_saved_self``,
``_raw_saved_self.register_hooks``, ``allow_mutation_on_saved_tensors``, inference mode).
"""
import contextlib
import io
import re
import warnings

import pytest

from oracle import script_test, torch_one_thread

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def _printed(fn):
    """What ``fn()`` prints (object addresses removed), the user warnings it gives, and its result."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn()
    # (UserWarnings: PyTorch's own DeprecationWarnings of torch.jit.script, called inside gradcheck, are not the
    # program's; nor is the build path PyTorch's C++ warnings end with)
    messages = [str(w.message).split(" (Triggered internally at ")[0] for w in caught
                if issubclass(w.category, UserWarning)]
    return re.sub(r" at 0x[0-9a-f]+", "", buf.getvalue()), messages, result


SONNET = """When forty winters shall besiege thy brow,
And dig deep trenches in thy beauty's field,
Thy youth's proud livery so gazed on now,
Will be a totter'd weed of small worth held""".split()

SICP = """We are about to study the idea of a computational process.
Computational processes are abstract beings that inhabit computers.""".split()


def case_nlp_ngram_and_cbow_embeddings(lib):
    """"Word Embeddings: Encoding Lexical Semantics": an Embedding looked up by a one-element long tensor, the
    N-gram language model (contexts of two words, ``embeds(inputs).view((1, -1))``, NLLLoss, SGD(lr=0.001),
    ``total_loss += loss.item()``; two epochs over the sonnet's first four lines instead of ten over fourteen) and
    the CBOW exercise's data (two words either side, ``make_context_vector``) with a CBOW model summing its
    context embeddings. The vocabularies come from ``set`` as in the tutorial (one process: one order)."""
    torch, nn, F, optim = lib, lib.nn, lib.nn.functional, lib.optim

    def program():
        torch.manual_seed(1)
        word_to_ix = {"hello": 0, "world": 1}
        embeds = nn.Embedding(2, 5)
        lookup_tensor = torch.tensor([word_to_ix["hello"]], dtype=torch.long)
        hello_embed = embeds(lookup_tensor)
        print(hello_embed)

        CONTEXT_SIZE = 2
        EMBEDDING_DIM = 10
        test_sentence = SONNET
        ngrams = [([test_sentence[i - j - 1] for j in range(CONTEXT_SIZE)], test_sentence[i])
                  for i in range(CONTEXT_SIZE, len(test_sentence))]
        print(ngrams[:3])
        vocab = set(test_sentence)
        word_to_ix = {word: i for i, word in enumerate(vocab)}

        class NGramLanguageModeler(nn.Module):
            def __init__(self, vocab_size, embedding_dim, context_size):
                super(NGramLanguageModeler, self).__init__()
                self.embeddings = nn.Embedding(vocab_size, embedding_dim)
                self.linear1 = nn.Linear(context_size * embedding_dim, 128)
                self.linear2 = nn.Linear(128, vocab_size)

            def forward(self, inputs):
                embeds = self.embeddings(inputs).view((1, -1))
                out = F.relu(self.linear1(embeds))
                out = self.linear2(out)
                log_probs = F.log_softmax(out, dim=1)
                return log_probs

        losses = []
        loss_function = nn.NLLLoss()
        model = NGramLanguageModeler(len(vocab), EMBEDDING_DIM, CONTEXT_SIZE)
        optimizer = optim.SGD(model.parameters(), lr=0.001)
        for epoch in range(2):
            total_loss = 0
            for context, target in ngrams:
                context_idxs = torch.tensor([word_to_ix[w] for w in context], dtype=torch.long)
                model.zero_grad()
                log_probs = model(context_idxs)
                loss = loss_function(log_probs, torch.tensor([word_to_ix[target]], dtype=torch.long))
                loss.backward()
                optimizer.step()
                total_loss += loss.item()
            losses.append(total_loss)
        print(model.embeddings.weight[word_to_ix["beauty's"]])

        raw_text = SICP
        vocab = set(raw_text)
        vocab_size = len(vocab)
        word_to_ix = {word: i for i, word in enumerate(vocab)}
        data = []
        for i in range(CONTEXT_SIZE, len(raw_text) - CONTEXT_SIZE):
            context = ([raw_text[i - j - 1] for j in range(CONTEXT_SIZE)]
                       + [raw_text[i + j + 1] for j in range(CONTEXT_SIZE)])
            target = raw_text[i]
            data.append((context, target))
        print(data[:5])

        class CBOW(nn.Module):
            def __init__(self, vocab_size, embedding_dim):
                super().__init__()
                self.embeddings = nn.Embedding(vocab_size, embedding_dim)
                self.linear = nn.Linear(embedding_dim, vocab_size)

            def forward(self, inputs):
                embeds = self.embeddings(inputs).sum(dim=0, keepdim=True)
                return F.log_softmax(self.linear(embeds), dim=-1)

        def make_context_vector(context, word_to_ix):
            idxs = [word_to_ix[w] for w in context]
            return torch.tensor(idxs, dtype=torch.long)

        print(make_context_vector(data[0][0], word_to_ix))
        cbow = CBOW(vocab_size, EMBEDDING_DIM)
        optimizer = optim.SGD(cbow.parameters(), lr=0.01)
        cbow_losses = []
        for context, target in data:
            cbow.zero_grad()
            log_probs = cbow(make_context_vector(context, word_to_ix))
            loss = loss_function(log_probs, torch.tensor([word_to_ix[target]]))
            loss.backward()
            optimizer.step()
            cbow_losses.append(loss.item())
        return losses, cbow_losses, model.linear1.weight.grad, cbow.embeddings.weight

    return _printed(program)


def case_parametrizations_tutorial(lib):
    """The Parametrizations tutorial: ``symmetric`` by hand, then ``register_parametrization`` of Symmetric on a
    Linear and Skew on a Conv2d, the parametrized module's repr, ``parametrizations.weight.original``,
    a printing parametrization evaluated each time and once under ``parametrize.cached()``, CayleyMap and
    MatrixExponential after Skew (orthogonal weights) and after Symmetric (SPD), ``right_inverse`` on
    ``layer.weight = X`` assignments (an orthogonal X from ``nn.init.orthogonal_`` with its determinant's sign
    fixed by ``X[0].neg_()``), ``remove_parametrizations`` keeping the value and with
    ``leave_parametrized=False``."""
    torch, nn = lib, lib.nn
    parametrize = lib.nn.utils.parametrize

    def program():
        torch.manual_seed(0)
        out = []

        def symmetric(X):
            return X.triu() + X.triu(1).transpose(-1, -2)

        X = torch.rand(3, 3)
        A = symmetric(X)
        out.append(torch.allclose(A, A.T))

        class LinearSymmetric(nn.Module):
            def __init__(self, n_features):
                super().__init__()
                self.weight = nn.Parameter(torch.rand(n_features, n_features))

            def forward(self, x):
                A = symmetric(self.weight)
                return x @ A

        layer = LinearSymmetric(3)
        out.append(layer(torch.rand(8, 3)))

        class Symmetric(nn.Module):
            def forward(self, X):
                return X.triu() + X.triu(1).transpose(-1, -2)

        layer = nn.Linear(3, 3)
        parametrize.register_parametrization(layer, "weight", Symmetric())
        A = layer.weight
        out.append(torch.allclose(A, A.T))
        print(A)

        class Skew(nn.Module):
            def forward(self, X):
                A = X.triu(1)
                return A - A.transpose(-1, -2)

        cnn = nn.Conv2d(in_channels=5, out_channels=8, kernel_size=3)
        parametrize.register_parametrization(cnn, "weight", Skew())
        print(cnn.weight[0, 1])
        print(cnn.weight[2, 2])

        layer = nn.Linear(3, 3)
        print(f"Unparametrized:\n{layer}")
        parametrize.register_parametrization(layer, "weight", Symmetric())
        print(f"\nParametrized:\n{layer}")
        print(layer.parametrizations)
        print(layer.parametrizations.weight)
        print(layer.parametrizations.weight[0])
        print(dict(layer.named_parameters()))
        print(layer.parametrizations.weight.original)
        symmetric_module = Symmetric()
        weight_orig = layer.parametrizations.weight.original
        out.append(torch.dist(layer.weight, symmetric_module(weight_orig)))
        out.append(type(layer).__name__)

        class NoisyParametrization(nn.Module):
            def forward(self, X):
                print("Computing the Parametrization")
                return X

        layer = nn.Linear(4, 4)
        parametrize.register_parametrization(layer, "weight", NoisyParametrization())
        print("Here, layer.weight is recomputed every time we call it")
        foo = layer.weight + layer.weight.T
        bar = layer.weight.sum()
        with parametrize.cached():
            print("Here, it is computed just the first time layer.weight is called")
            foo = layer.weight + layer.weight.T
            bar = layer.weight.sum()
        out += [foo, bar]

        class CayleyMap(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.register_buffer("Id", torch.eye(n))

            def forward(self, X):
                # (I + X)(I - X)^{-1}
                return torch.linalg.solve(self.Id - X, self.Id + X)

        layer = nn.Linear(3, 3)
        parametrize.register_parametrization(layer, "weight", Skew())
        parametrize.register_parametrization(layer, "weight", CayleyMap(3))
        X = layer.weight
        out.append(torch.dist(X.T @ X, torch.eye(3)))

        class MatrixExponential(nn.Module):
            def forward(self, X):
                return torch.matrix_exp(X)

        layer_orthogonal = nn.Linear(3, 3)
        parametrize.register_parametrization(layer_orthogonal, "weight", Skew())
        parametrize.register_parametrization(layer_orthogonal, "weight", MatrixExponential())
        X = layer_orthogonal.weight
        out.append(torch.dist(X.T @ X, torch.eye(3)))

        layer_spd = nn.Linear(3, 3)
        parametrize.register_parametrization(layer_spd, "weight", Symmetric())
        parametrize.register_parametrization(layer_spd, "weight", MatrixExponential())
        X = layer_spd.weight
        out.append(torch.dist(X, X.T))
        out.append((torch.linalg.eigvalsh(X) > 0.).all())
        X.sum().backward()
        out.append(layer_spd.parametrizations.weight.original.grad)

        class Skew(nn.Module):
            def forward(self, X):
                A = X.triu(1)
                return A - A.transpose(-1, -2)

            def right_inverse(self, A):
                # We assume that A is skew-symmetric
                # We take the upper-triangular elements, as these are those used in the forward
                return A.triu(1)

        layer = nn.Linear(3, 3)
        parametrize.register_parametrization(layer, "weight", Skew())
        X = torch.rand(3, 3)
        X = X - X.T
        layer.weight = X
        out.append(torch.dist(layer.weight, X))

        class CayleyMap(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.register_buffer("Id", torch.eye(n))

            def forward(self, X):
                # Assume X skew-symmetric
                # (I + X)(I - X)^{-1}
                return torch.linalg.solve(self.Id - X, self.Id + X)

            def right_inverse(self, A):
                # Assume A orthogonal
                # (A - I)(A + I)^{-1}
                return torch.linalg.solve(A + self.Id, self.Id - A)

        layer_orthogonal = nn.Linear(3, 3)
        parametrize.register_parametrization(layer_orthogonal, "weight", Skew())
        parametrize.register_parametrization(layer_orthogonal, "weight", CayleyMap(3))
        # Sample an orthogonal matrix with positive determinant
        X = torch.empty(3, 3)
        nn.init.orthogonal_(X)
        if X.det() < 0.:
            X[0].neg_()
        layer_orthogonal.weight = X
        out.append(torch.dist(layer_orthogonal.weight, X))
        out.append(layer_orthogonal.parametrizations.weight.original)

        layer = nn.Linear(3, 3)
        print("Before:")
        print(layer)
        print(layer.weight)
        parametrize.register_parametrization(layer, "weight", Skew())
        print("\nParametrized:")
        print(layer)
        print(layer.weight)
        parametrize.remove_parametrizations(layer, "weight")
        print("\nAfter. Weight has skew-symmetric values but it is unconstrained:")
        print(layer)
        print(layer.weight)

        layer = nn.Linear(3, 3)
        print("Before:")
        print(layer)
        print(layer.weight)
        parametrize.register_parametrization(layer, "weight", Skew())
        print("\nParametrized:")
        print(layer)
        print(layer.weight)
        parametrize.remove_parametrizations(layer, "weight", leave_parametrized=False)
        print("\nAfter. Same as Before:")
        print(layer)
        print(layer.weight)
        out.append(parametrize.is_parametrized(layer))
        return out

    return _printed(program)


def case_gradcheck_mechanics_note(lib):
    """The "Gradcheck mechanics" note's settings: ``gradcheck`` of real functions (slow and ``fast_mode``),
    ``gradgradcheck``, a complex-to-real and complex-to-complex function (the note's conjugate Wirtinger
    convention: a complex output is checked as its imaginary then its real part), a float32 input (the double
    precision warning), a custom Function with a wrong backward (GradcheckError, or False with
    ``raise_exception=False``) and a complex one whose backward forgets the conjugate (the message names the
    imaginary part of the complex output)."""
    torch = lib

    def program():
        torch.manual_seed(0)
        out = []
        x = torch.randn(3, dtype=torch.double, requires_grad=True)
        y = torch.randn(3, dtype=torch.double, requires_grad=True)
        out.append(torch.autograd.gradcheck(lambda a, b: (a * b.sin()).sum(), (x, y)))
        out.append(torch.autograd.gradcheck(lambda a, b: a * b.sin(), (x, y), fast_mode=True))
        out.append(torch.autograd.gradgradcheck(lambda a, b: a * b.sin(), (x, y)))
        z = torch.randn(3, dtype=torch.cdouble, requires_grad=True)
        out.append(torch.autograd.gradcheck(lambda c: (c * c.conj()).real, (z,)))
        out.append(torch.autograd.gradcheck(lambda c: c.abs() * c, (z,), fast_mode=True))
        out.append(torch.autograd.gradcheck(lambda c: c.exp(), (z,), check_forward_ad=True))
        out.append(torch.autograd.gradgradcheck(lambda c: c.exp() * c, (z,)))

        class BadExp(torch.autograd.Function):
            @staticmethod
            def forward(ctx, i):
                r = i.exp()
                ctx.save_for_backward(r)
                return r

            @staticmethod
            def backward(ctx, g):
                (r,) = ctx.saved_tensors
                return g * r * 1.1

        class BadSquare(torch.autograd.Function):
            @staticmethod
            def forward(ctx, w):
                ctx.save_for_backward(w)
                return w * w

            @staticmethod
            def backward(ctx, g):
                (w,) = ctx.saved_tensors
                return g * 2 * w  # (the conjugate Wirtinger gradient is g * 2 * w.conj())

        for fn, args, kw in ((BadExp.apply, (x,), {}), (BadExp.apply, (x,), dict(fast_mode=True)),
                             (BadSquare.apply, (z,), {}), (BadSquare.apply, (z,), dict(fast_mode=True))):
            try:
                torch.autograd.gradcheck(fn, args, **kw)
            except Exception as e:
                out.append((type(e).__name__, str(e).split(",")[0]))
        out.append(torch.autograd.gradcheck(BadExp.apply, (x,), raise_exception=False))
        xf = torch.randn(3, requires_grad=True)
        out.append(torch.autograd.gradcheck(torch.sin, (xf,), eps=1e-3, atol=1e-2))
        return out

    return _printed(program)


def case_leaf_and_non_leaf_tensors(lib):
    """"Understanding requires_grad, retain_grad, Leaf, and Non-leaf Tensors": a Linear-ReLU-MSE graph by hand,
    ``is_leaf``/``requires_grad``/``retains_grad``/``grad_fn`` of every tensor printed with f-string ``=``
    specifiers, the UserWarning of reading a non-leaf's ``.grad`` before and after ``backward()``, then the same
    with ``retain_grad()`` on the intermediates (their gradients printed), ``requires_grad_(False)`` and
    ``detach()`` leaves, and the error of ``retain_grad()`` on a tensor that does not require grad... which
    PyTorch raises as a RuntimeError."""
    torch, F = lib, lib.nn.functional

    def program():
        x = torch.ones(1, 3)
        W = torch.ones(3, 2, requires_grad=True)
        b = torch.ones(1, 2, requires_grad=True)
        y = torch.ones(1, 2)
        z = (x @ W) + b
        y_pred = F.relu(z)
        loss = F.mse_loss(y_pred, y)
        names = ["x", "W", "b", "y", "z", "y_pred", "loss"]
        tensors = [x, W, b, y, z, y_pred, loss]

        def table():
            for name, t in zip(names, tensors):
                grad_fn = type(t.grad_fn).__name__ if t.grad_fn is not None else None
                print(f"{name:7}| {t.is_leaf!s:6}| {t.requires_grad!s:6}| {t.retains_grad!s:6}| {grad_fn}")

        table()
        print(f"{x.is_leaf=}")
        print(f"{z.is_leaf=}")
        print(f"{z.requires_grad=}")
        print(f"{y_pred.grad_fn.name()=}")
        print(f"{z.grad=}")
        loss.backward()
        print(f"{W.grad=}")
        print(f"{b.grad=}")
        print(f"{x.grad=}")
        print(f"{z.grad=}")
        print(f"{y_pred.grad=}")

        x = torch.ones(1, 3)
        W = torch.ones(3, 2, requires_grad=True)
        b = torch.ones(1, 2, requires_grad=True)
        z = (x @ W) + b
        y_pred = F.relu(z)
        loss = F.mse_loss(y_pred, y)
        z.retain_grad()
        y_pred.retain_grad()
        loss.retain_grad()
        tensors = [x, W, b, y, z, y_pred, loss]
        table()
        loss.backward()
        print(f"{W.grad=}")
        print(f"{z.grad=}")
        print(f"{y_pred.grad=}")
        print(f"{loss.grad=}")
        z.retain_grad()  # (again: nothing changes)
        print(f"{z.retains_grad=}")
        d = z.detach()
        print(f"{d.is_leaf=} {d.requires_grad=} {d.retains_grad=}")
        W2 = W.detach().requires_grad_(False)
        print(f"{W2.is_leaf=} {W2.requires_grad=}")
        try:
            x.retain_grad()
        except RuntimeError as e:
            print(e)
        try:
            z.requires_grad_(False)
        except RuntimeError as e:
            print(e)
        return W.grad, z.grad

    return _printed(program)


def case_visualizing_gradients(lib):
    """"Visualizing Gradients": ``retain_grad`` on an intermediate, then a net of ``fc_layer`` stacks
    (Linear -> norm -> Sigmoid, the norm ``nn.Identity(out_size)`` or BatchNorm1d), forward hooks registered on
    every leaf module (``any(layer.children()) is False``) that register a tensor hook on the module's output,
    collecting ``(name, grad)`` in backward order; both nets trained by SGD(momentum) on cross entropy, the
    collected list cleared each epoch, the mean absolute gradients per layer compared. 28x28 inputs flattened
    into 16 hidden units; three epochs instead of ten."""
    torch, nn, F, optim = lib, lib.nn, lib.nn.functional, lib.optim
    torch.manual_seed(0)
    a = torch.tensor([2.0, 3.0], requires_grad=True)
    b = a * 3
    b.retain_grad()
    c = b.sin().sum()
    c.backward()
    retained = (a.grad, b.grad, b.retains_grad)

    def fc_layer(in_size, out_size, norm_layer):
        """Return a stack of linear->norm->sigmoid layers"""
        return nn.Sequential(nn.Linear(in_size, out_size), norm_layer(out_size), nn.Sigmoid())

    class Net(nn.Module):
        """Define a network that has num_layers of linear->norm->sigmoid transformations"""
        def __init__(self, in_size=28 * 28, hidden_size=16, out_size=10, num_layers=3, batchnorm=False):
            super().__init__()
            if batchnorm is False:
                norm_layer = nn.Identity
            else:
                norm_layer = nn.BatchNorm1d
            layers = []
            layers.append(fc_layer(in_size, hidden_size, norm_layer))
            for i in range(num_layers - 1):
                layers.append(fc_layer(hidden_size, hidden_size, norm_layer))
            layers.append(nn.Linear(hidden_size, out_size))
            self.layers = nn.Sequential(*layers)

        def forward(self, x):
            x = torch.flatten(x, 1)
            return self.layers(x)

    x = torch.randn(10, 28, 28)
    y = torch.randint(10, (10, ))
    model_bn = Net(batchnorm=True, num_layers=3)
    model_nobn = Net(batchnorm=False, num_layers=3)
    model_bn.train()
    model_nobn.train()
    optimizer_bn = optim.SGD(model_bn.parameters(), lr=0.01, momentum=0.9)
    optimizer_nobn = optim.SGD(model_nobn.parameters(), lr=0.01, momentum=0.9)

    def hook_forward(module_name, grads, hook_backward):
        def hook(module, args, output):
            """Forward pass hook which attaches backward pass hooks to intermediate tensors"""
            output.register_hook(hook_backward(module_name, grads))
        return hook

    def hook_backward(module_name, grads):
        def hook(grad):
            """Backward pass hook which appends gradients"""
            grads.append((module_name, grad))
        return hook

    def get_all_layers(model, hook_forward, hook_backward):
        """Register forward pass hook (hook_forward) to each layer in model"""
        layers = dict()
        grads = []
        for name, layer in model.named_modules():
            # skip Sequential and/or wrapper modules
            if any(layer.children()) is False:
                layers[name] = layer
                layer.register_forward_hook(hook_forward(name, grads, hook_backward))
        return layers, grads

    layers_bn, grads_bn = get_all_layers(model_bn, hook_forward, hook_backward)
    layers_nobn, grads_nobn = get_all_layers(model_nobn, hook_forward, hook_backward)
    losses = []
    for epoch in range(3):
        grads_bn.clear()
        grads_nobn.clear()
        optimizer_bn.zero_grad()
        optimizer_nobn.zero_grad()
        y_pred_bn = model_bn(x)
        y_pred_nobn = model_nobn(x)
        loss_bn = F.cross_entropy(y_pred_bn, y)
        loss_nobn = F.cross_entropy(y_pred_nobn, y)
        loss_bn.backward()
        loss_nobn.backward()
        optimizer_bn.step()
        optimizer_nobn.step()
        losses.append((loss_bn.item(), loss_nobn.item()))

    def averages(grads):
        layer_idx, avg_grads, names = [], [], []
        for idx, (name, grad) in enumerate(grads):
            if grad is not None:
                avg_grad = grad.abs().mean()
                avg_grads.append(avg_grad)
                layer_idx.append(idx)
                names.append(name)
        return layer_idx, names, torch.stack(avg_grads)

    return (retained, list(layers_bn), list(layers_nobn), losses, averages(grads_bn), averages(grads_nobn),
            model_bn.layers[1][1].running_var)


test_script_matches_torch = script_test(globals())
