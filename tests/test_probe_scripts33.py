"""Third-party programs, round 33: official PyTorch tutorials (pytorch/tutorials) that the earlier probe files do
not cover, as they write them, scaled down to tiny synthetic data and a few steps, run with torch 2.13 and with
torchish from ``torch.manual_seed`` with default initialisation and compared by ``assert_script_matches``
(tests/oracle.py). What a tutorial prints is captured (``contextlib.redirect_stdout``) and compared as text, its
warnings by message. This file: "Deep Learning for NLP with PyTorch" (the bag-of-words classifier and the LSTM
part-of-speech tagger of "Sequence Models"; "Word Embeddings" is in test_probe_scripts34.py),
"Text classification with the torchtext library" (EmbeddingBag with offsets from ``cumsum``, StepLR with a float
step size, gradient clipping, ``random_split``) and "Spatial Transformer Networks" (a localisation net whose last
layer starts at the identity transform, ``affine_grid``/``grid_sample``, Dropout2d, ``nll_loss(size_average=
False)``). More tutorials: test_probe_scripts34.py and 35.

Fixed here: ``F.affine_grid`` computed its base grid in float64 and rounded it once, where PyTorch computes its
float linspace in the grid's dtype and then ``range * (n - 1) / n`` with a rounding per operation; points a
rounding below a pixel centre (14 of 28 in a 28-pixel row) floor to the pixel before it in grid_sample, whose
gradient with respect to the grid then differs at the identity transform: the spatial transformer's ``fc_loc``
gradients were 20-40% off after one step. The grid is now PyTorch's to the bit in float32/float64/float16/
bfloat16 (``test_affine_grid_points_are_torchs_to_the_bit``). 2-d ``grid_sample`` unnormalises as PyTorch's
vectorized kernel does, ``(c + 1) * (size / 2) - 0.5`` (its scalar formula ``((c + 1) * size - 1) / 2`` put float64
pixel centres on the other side: ``test_grid_sample_gradient_at_the_identity_transform``), and reflection padding
divides by its span in one IEEE division (float16 reflected the last pixel to the first:
``test_grid_sample_reflection_of_the_last_pixel``).

Also probed and matching (kept out for time): "Language Modeling with nn.Transformer" (PositionalEncoding as a
``(max_len, 1, d_model)`` buffer, a sequence-first TransformerEncoder with dropout, the causal mask from
``nn.Transformer.generate_square_subsequent_mask``, ``batchify``/``get_batch``, SGD(lr=5) with clipping and
StepLR, the best state saved with ``torch.save`` and loaded back, the nested-tensor warning).
"""
import contextlib
import io
import warnings

import numpy as np

import pytest

from oracle import needs_torch, script_test, torch, torch_one_thread, torchish

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def _printed(fn):
    """What ``fn()`` prints, and its result."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        result = fn()
    return buf.getvalue(), result


def case_nlp_bag_of_words_classifier(lib):
    """"Deep Learning with PyTorch" of the NLP series: a Linear layer and the activations on seeded ``randn``, then
    the Spanish/English bag-of-words classifier (``vec[word_to_ix[word]] += 1``, ``torch.LongTensor``, NLLLoss,
    SGD, ``model.zero_grad()``), its log-probabilities printed before and after training and the column of the
    word "creo" (``next(model.parameters())[:, ix]``). Five epochs instead of 100."""
    torch, nn, F, optim = lib, lib.nn, lib.nn.functional, lib.optim

    def program():
        torch.manual_seed(1)
        lin = nn.Linear(5, 3)
        data = torch.randn(2, 5)
        print(lin(data))
        data = torch.randn(2, 2)
        print(data)
        print(F.relu(data))
        data = torch.randn(5)
        print(data)
        print(F.softmax(data, dim=0))
        print(F.softmax(data, dim=0).sum())
        print(F.log_softmax(data, dim=0))

        data = [("me gusta comer en la cafeteria".split(), "SPANISH"),
                ("Give it to me".split(), "ENGLISH"),
                ("No creo que sea una buena idea".split(), "SPANISH"),
                ("No it is not a good idea to get lost at sea".split(), "ENGLISH")]
        test_data = [("Yo creo que si".split(), "SPANISH"),
                     ("it is lost on me".split(), "ENGLISH")]
        word_to_ix = {}
        for sent, _ in data + test_data:
            for word in sent:
                if word not in word_to_ix:
                    word_to_ix[word] = len(word_to_ix)
        print(word_to_ix)
        VOCAB_SIZE = len(word_to_ix)
        NUM_LABELS = 2

        class BoWClassifier(nn.Module):
            def __init__(self, num_labels, vocab_size):
                super(BoWClassifier, self).__init__()
                self.linear = nn.Linear(vocab_size, num_labels)

            def forward(self, bow_vec):
                return F.log_softmax(self.linear(bow_vec), dim=1)

        def make_bow_vector(sentence, word_to_ix):
            vec = torch.zeros(len(word_to_ix))
            for word in sentence:
                vec[word_to_ix[word]] += 1
            return vec.view(1, -1)

        def make_target(label, label_to_ix):
            return torch.LongTensor([label_to_ix[label]])

        model = BoWClassifier(NUM_LABELS, VOCAB_SIZE)
        for param in model.parameters():
            print(param)
        with torch.no_grad():
            sample = data[0]
            bow_vector = make_bow_vector(sample[0], word_to_ix)
            log_probs = model(bow_vector)
            print(log_probs)

        label_to_ix = {"SPANISH": 0, "ENGLISH": 1}
        with torch.no_grad():
            for instance, label in test_data:
                bow_vec = make_bow_vector(instance, word_to_ix)
                log_probs = model(bow_vec)
                print(log_probs)
        print(next(model.parameters())[:, word_to_ix["creo"]])

        loss_function = nn.NLLLoss()
        optimizer = optim.SGD(model.parameters(), lr=0.1)
        losses = []
        for epoch in range(5):
            for instance, label in data:
                model.zero_grad()
                bow_vec = make_bow_vector(instance, word_to_ix)
                target = make_target(label, label_to_ix)
                log_probs = model(bow_vec)
                loss = loss_function(log_probs, target)
                loss.backward()
                optimizer.step()
                losses.append(loss.item())

        with torch.no_grad():
            for instance, label in test_data:
                bow_vec = make_bow_vector(instance, word_to_ix)
                log_probs = model(bow_vec)
                print(log_probs)
        print(next(model.parameters())[:, word_to_ix["creo"]])
        return losses, model.linear.weight, make_target("ENGLISH", label_to_ix)

    return _printed(program)


def case_nlp_lstm_part_of_speech_tagger(lib):
    """"Sequence Models and Long Short-Term Memory Networks": an LSTM stepped one element at a time with the
    hidden state carried, then run on the whole sequence (``torch.cat(inputs).view(len(inputs), 1, -1)``), both
    printed; the LSTMTagger (Embedding -> LSTM -> Linear -> log_softmax over ``lstm_out.view(len(sentence), -1)``)
    on the two tagged sentences, scores printed under no_grad before and after training. Three epochs instead
    of 300."""
    torch, nn, F, optim = lib, lib.nn, lib.nn.functional, lib.optim

    def program():
        torch.manual_seed(1)
        lstm = nn.LSTM(3, 3)
        inputs = [torch.randn(1, 3) for _ in range(5)]
        hidden = (torch.randn(1, 1, 3), torch.randn(1, 1, 3))
        for i in inputs:
            out, hidden = lstm(i.view(1, 1, -1), hidden)
        print(out)
        inputs = torch.cat(inputs).view(len(inputs), 1, -1)
        hidden = (torch.randn(1, 1, 3), torch.randn(1, 1, 3))
        out, hidden = lstm(inputs, hidden)
        print(out)
        print(hidden)

        def prepare_sequence(seq, to_ix):
            idxs = [to_ix[w] for w in seq]
            return torch.tensor(idxs, dtype=torch.long)

        training_data = [
            ("The dog ate the apple".split(), ["DET", "NN", "V", "DET", "NN"]),
            ("Everybody read that book".split(), ["NN", "V", "DET", "NN"])
        ]
        word_to_ix = {}
        for sent, tags in training_data:
            for word in sent:
                if word not in word_to_ix:
                    word_to_ix[word] = len(word_to_ix)
        print(word_to_ix)
        tag_to_ix = {"DET": 0, "NN": 1, "V": 2}
        EMBEDDING_DIM = 6
        HIDDEN_DIM = 6

        class LSTMTagger(nn.Module):
            def __init__(self, embedding_dim, hidden_dim, vocab_size, tagset_size):
                super(LSTMTagger, self).__init__()
                self.hidden_dim = hidden_dim
                self.word_embeddings = nn.Embedding(vocab_size, embedding_dim)
                self.lstm = nn.LSTM(embedding_dim, hidden_dim)
                self.hidden2tag = nn.Linear(hidden_dim, tagset_size)

            def forward(self, sentence):
                embeds = self.word_embeddings(sentence)
                lstm_out, _ = self.lstm(embeds.view(len(sentence), 1, -1))
                tag_space = self.hidden2tag(lstm_out.view(len(sentence), -1))
                tag_scores = F.log_softmax(tag_space, dim=1)
                return tag_scores

        model = LSTMTagger(EMBEDDING_DIM, HIDDEN_DIM, len(word_to_ix), len(tag_to_ix))
        loss_function = nn.NLLLoss()
        optimizer = optim.SGD(model.parameters(), lr=0.1)
        with torch.no_grad():
            inputs = prepare_sequence(training_data[0][0], word_to_ix)
            tag_scores = model(inputs)
            print(tag_scores)
        losses = []
        for epoch in range(3):
            for sentence, tags in training_data:
                model.zero_grad()
                sentence_in = prepare_sequence(sentence, word_to_ix)
                targets = prepare_sequence(tags, tag_to_ix)
                tag_scores = model(sentence_in)
                loss = loss_function(tag_scores, targets)
                loss.backward()
                optimizer.step()
                losses.append(loss.item())
        with torch.no_grad():
            inputs = prepare_sequence(training_data[0][0], word_to_ix)
            tag_scores = model(inputs)
            print(tag_scores)
        return losses, model.lstm.weight_hh_l0, tag_scores.argmax(1)

    return _printed(program)


def case_text_classification_embedding_bag(lib):
    """"Text classification with the torchtext library" without torchtext: token ids drawn with ``randint`` for
    texts of two or three tokens, ``collate_batch`` (offsets by ``torch.tensor(offsets[:-1]).cumsum(dim=0)``,
    ``torch.cat`` of the texts), TextClassificationModel (EmbeddingBag + Linear, ``init_weights`` by ``uniform_``
    on ``.data``), SGD(lr=5) with ``StepLR(optimizer, 1.0, gamma=0.1)`` stepped when the validation accuracy
    drops, ``clip_grad_norm_(0.1)``, ``random_split`` and shuffled DataLoaders, the accuracy bookkeeping and the
    ``predict`` helper (``model(text, torch.tensor([0]))``)."""
    torch, nn = lib, lib.nn
    from_data = lib.utils.data

    torch.manual_seed(2)  # (a seed whose validation accuracy drops once: the scheduler steps)
    lengths = [2, 3, 3, 2, 3, 2, 2, 3, 3, 2, 3, 2]  # (two lengths: few distinct batch totals, few compiles)
    labels = torch.randint(1, 5, (len(lengths),)).tolist()
    dataset = [(y, (torch.randint(0, 8, (n,)) + 3 * (y - 1)).tolist()) for y, n in zip(labels, lengths)]
    label_pipeline = lambda x: int(x) - 1  # noqa: E731  (the tutorial's)
    text_pipeline = lambda x: x  # noqa: E731  (ids already: the tutorial's vocab(tokenizer(x)))

    def collate_batch(batch):
        label_list, text_list, offsets = [], [], [0]
        for _label, _text in batch:
            label_list.append(label_pipeline(_label))
            processed_text = torch.tensor(text_pipeline(_text), dtype=torch.int64)
            text_list.append(processed_text)
            offsets.append(processed_text.size(0))
        label_list = torch.tensor(label_list, dtype=torch.int64)
        offsets = torch.tensor(offsets[:-1]).cumsum(dim=0)
        text_list = torch.cat(text_list)
        return label_list, text_list, offsets

    class TextClassificationModel(nn.Module):
        def __init__(self, vocab_size, embed_dim, num_class):
            super(TextClassificationModel, self).__init__()
            self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, sparse=False)
            self.fc = nn.Linear(embed_dim, num_class)
            self.init_weights()

        def init_weights(self):
            initrange = 0.5
            self.embedding.weight.data.uniform_(-initrange, initrange)
            self.fc.weight.data.uniform_(-initrange, initrange)
            self.fc.bias.data.zero_()

        def forward(self, text, offsets):
            embedded = self.embedding(text, offsets)
            return self.fc(embedded)

    model = TextClassificationModel(20, 8, 4)
    criterion = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=5)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.1)
    log = []

    def train(dataloader):
        model.train()
        total_acc, total_count = 0, 0
        for idx, (label, text, offsets) in enumerate(dataloader):
            optimizer.zero_grad()
            predicted_label = model(text, offsets)
            loss = criterion(predicted_label, label)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
            optimizer.step()
            total_acc += (predicted_label.argmax(1) == label).sum().item()
            total_count += label.size(0)
            log.append(round(loss.item(), 5))
        return total_acc / total_count

    def evaluate(dataloader):
        model.eval()
        total_acc, total_count = 0, 0
        with torch.no_grad():
            for idx, (label, text, offsets) in enumerate(dataloader):
                predicted_label = model(text, offsets)
                loss = criterion(predicted_label, label)
                total_acc += (predicted_label.argmax(1) == label).sum().item()
                total_count += label.size(0)
                log.append(round(loss.item(), 5))  # (the tutorial computes it and leaves it unused)
        return total_acc / total_count

    train_dataset, test_dataset = dataset[:10], dataset[10:]
    num_train = int(len(train_dataset) * 0.6)
    split_train_, split_valid_ = from_data.random_split(train_dataset, [num_train, len(train_dataset) - num_train])
    train_dataloader = from_data.DataLoader(split_train_, batch_size=4, shuffle=True, collate_fn=collate_batch)
    valid_dataloader = from_data.DataLoader(split_valid_, batch_size=4, shuffle=True, collate_fn=collate_batch)
    test_dataloader = from_data.DataLoader(test_dataset, batch_size=4, shuffle=True, collate_fn=collate_batch)
    total_accu = None
    accs = []
    for epoch in range(1, 4):
        accs.append(train(train_dataloader))
        accu_val = evaluate(valid_dataloader)
        if total_accu is not None and total_accu > accu_val:
            scheduler.step()
        else:
            total_accu = accu_val
        accs.append((accu_val, scheduler.get_last_lr()))
    accs.append(evaluate(test_dataloader))

    def predict(text, text_pipeline):
        with torch.no_grad():
            text = torch.tensor(text_pipeline(text))
            output = model(text, torch.tensor([0]))
            return output.argmax(1).item() + 1

    return (log, accs, predict([3, 7, 11], text_pipeline), collate_batch(dataset[:3]), model.embedding.weight,
            scheduler.state_dict())


def case_spatial_transformer_network(lib):
    """"Spatial Transformer Networks Tutorial" on synthetic 28x28 images: the localisation net (Conv2d, MaxPool2d,
    ReLU(True)) and ``fc_loc`` whose last Linear starts at the identity (``weight.data.zero_()``,
    ``bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float))``), ``F.affine_grid(theta, x.size())``
    and ``F.grid_sample`` without align_corners (their warnings compared), the classifier with Dropout2d and
    ``F.dropout(training=self.training)``, SGD(lr=0.01) on ``nll_loss``, the test loop's
    ``nll_loss(size_average=False)`` (its deprecation warning), ``output.max(1, keepdim=True)[1]`` and
    ``pred.eq(target.view_as(pred))``, and the transformed batch turned into an image by ``numpy().transpose``."""
    torch, nn, F, optim = lib, lib.nn, lib.nn.functional, lib.optim

    class Net(nn.Module):
        def __init__(self):
            super(Net, self).__init__()
            self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
            self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
            self.conv2_drop = nn.Dropout2d()
            self.fc1 = nn.Linear(320, 50)
            self.fc2 = nn.Linear(50, 10)
            self.localization = nn.Sequential(
                nn.Conv2d(1, 8, kernel_size=7),
                nn.MaxPool2d(2, stride=2),
                nn.ReLU(True),
                nn.Conv2d(8, 10, kernel_size=5),
                nn.MaxPool2d(2, stride=2),
                nn.ReLU(True)
            )
            self.fc_loc = nn.Sequential(
                nn.Linear(10 * 3 * 3, 32),
                nn.ReLU(True),
                nn.Linear(32, 3 * 2)
            )
            self.fc_loc[2].weight.data.zero_()
            self.fc_loc[2].bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float))

        def stn(self, x):
            xs = self.localization(x)
            xs = xs.view(-1, 10 * 3 * 3)
            theta = self.fc_loc(xs)
            theta = theta.view(-1, 2, 3)
            grid = F.affine_grid(theta, x.size())
            x = F.grid_sample(x, grid)
            return x

        def forward(self, x):
            x = self.stn(x)
            x = F.relu(F.max_pool2d(self.conv1(x), 2))
            x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
            x = x.view(-1, 320)
            x = F.relu(self.fc1(x))
            x = F.dropout(x, training=self.training)
            x = self.fc2(x)
            return F.log_softmax(x, dim=1)

    torch.manual_seed(0)
    model = Net()
    images = torch.rand(6, 1, 28, 28)
    labels = torch.randint(0, 10, (6,))
    train_loader = [(images[:3], labels[:3]), (images[3:], labels[3:])]
    test_loader = [(images[1:4], labels[1:4])]  # (batches of one size: one compile of each kernel)
    optimizer = optim.SGD(model.parameters(), lr=0.01)
    log = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for epoch in range(2):
            model.train()
            for batch_idx, (data, target) in enumerate(train_loader):
                optimizer.zero_grad()
                output = model(data)
                loss = F.nll_loss(output, target)
                loss.backward()
                optimizer.step()
                log.append(loss.item())
            with torch.no_grad():
                model.eval()
                test_loss = 0
                correct = 0
                for data, target in test_loader:
                    output = model(data)
                    test_loss += F.nll_loss(output, target, size_average=False).item()
                    pred = output.max(1, keepdim=True)[1]
                    correct += pred.eq(target.view_as(pred)).sum().item()
                test_loss /= 3
                log.append((test_loss, correct))
        with torch.no_grad():
            data = images[:3]
            input_tensor = data.cpu()
            transformed_input_tensor = model.stn(data).cpu()
            inp = transformed_input_tensor[0].numpy().transpose((1, 2, 0))
    messages = sorted({str(w.message) for w in caught})
    theta = model.fc_loc(model.localization(images[2:5]).view(-1, 90))
    return (log, messages, float(inp.sum()), inp.shape, input_tensor.shape, theta, model.fc_loc[2].bias.grad,
            model.conv1.weight.grad)


test_script_matches_torch = script_test(globals())


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("size,align_corners", [((2, 1, 5, 7), False), ((1, 1, 28, 28), False),
                                                ((1, 2, 3, 4, 6), False), ((1, 1, 6, 3), True)])
def test_affine_grid_points_are_torchs_to_the_bit(dtype, size, align_corners):
    """The identity transform's grid, equal to PyTorch's bit for bit (2-D and 3-D, with and without
    align_corners)."""
    grids = []
    for lib in (torch, torchish):
        theta = lib.eye(len(size) - 2, len(size) - 1, dtype=getattr(lib, dtype))[None].repeat(size[0], 1, 1)
        grids.append(lib.nn.functional.affine_grid(theta, size, align_corners=align_corners).float().numpy())
    np.testing.assert_array_equal(grids[1], grids[0])


@needs_torch
def test_grid_sample_gradient_at_the_identity_transform():
    """grid_sample's gradient with respect to theta at the identity, where every grid point lies on a pixel centre
    (or a rounding off it): PyTorch's (it looked at the other neighbour for some of the points)."""
    x = np.cos(np.arange(2 * 28 * 28) * 0.37).reshape(2, 1, 28, 28)  # (float64: no summation-order noise)
    grads = []
    for lib in (torch, torchish):
        theta = lib.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]] * 2, dtype=lib.float64, requires_grad=True)
        grid = lib.nn.functional.affine_grid(theta, (2, 1, 28, 28), align_corners=False)
        out = lib.nn.functional.grid_sample(lib.tensor(x), grid, align_corners=False)
        (out * lib.tensor(x[::-1].copy())).sum().backward()
        grads.append(theta.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-7, atol=1e-9)


@needs_torch
@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_grid_sample_reflection_of_the_last_pixel(dtype):
    """Reflection padding of a point on the last pixel (``floor(11 / 11)``): float16 sampled the first pixel
    (XLA divided by the constant span through its float16 reciprocal, 11 / 11 < 1)."""
    size = (1, 1, 2, 3, 12)
    x = np.cos(np.arange(72) * 0.37).reshape(size)
    outs = []
    for lib in (torch, torchish):
        theta = lib.eye(3, 4, dtype=getattr(lib, dtype))[None]
        grid = lib.nn.functional.affine_grid(theta, size, align_corners=True)
        outs.append(lib.nn.functional.grid_sample(lib.tensor(x, dtype=getattr(lib, dtype)), grid, mode="nearest",
                                                  padding_mode="reflection", align_corners=True).float().numpy())
    np.testing.assert_array_equal(outs[1], outs[0])
