"""Third-party programs, round 38 (continued from test_probe_scripts37.py): language-model sampling, sparse routing,
graphs and embeddings in the style of popular repositories (word2vec SGNS, minGPT/nanoGPT ``generate`` and the
Hugging Face top-p warper, a beam search),
seeded by ``torch.manual_seed`` with default initialisation and compared with torch 2.13 by
``assert_script_matches``.
"""
import collections

import numpy as np
import pytest

from oracle import script_test, torch_one_thread

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)

CORPUS = ("the cat sat on the mat the dog sat on the log the cat saw the dog and the dog saw the cat "
          "a bird sat on the dog").split()


def case_word2vec_sgns_unigram_table_multinomial(lib):
    """Skip-gram with negative sampling as in the popular PyTorch word2vec repositories: subsampling by
    ``1 - np.sqrt(t / freq)`` with Python's ``random``, ``noise_dist = torch.from_numpy(unigram ** 0.75 /
    np.sum(unigram ** 0.75))``, ``torch.multinomial(noise_dist, batch_size * n_samples, replacement=True)``,
    ``in_embed``/``out_embed`` initialised by ``uniform_(-1, 1)``, ``torch.bmm(output_vectors, input_vectors)
    .sigmoid().log()`` and ``torch.bmm(noise_vectors.neg(), input_vectors).sigmoid().log().squeeze().sum(1)``, the
    same loss by ``F.logsigmoid``, Adam; cosine-similarity "closest words" by ``torch.mm`` of normalised rows and
    ``topk``; then ``multinomial`` without replacement from the float64 table and from a 2-D count matrix."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    import random
    random.seed(0)
    torch.manual_seed(6)
    counts = collections.Counter(CORPUS)
    vocab = sorted(counts, key=counts.get, reverse=True)
    vocab_to_int = {w: i for i, w in enumerate(vocab)}
    int_words = [vocab_to_int[w] for w in CORPUS]
    total = len(int_words)
    freqs = {w: c / total for w, c in collections.Counter(int_words).items()}
    p_drop = {w: 1 - np.sqrt(0.05 / freqs[w]) for w in freqs}
    train_words = [w for w in int_words if random.random() < (1 - p_drop[w])]
    word_freqs = np.array(sorted(freqs.values(), reverse=True))
    unigram_dist = word_freqs / word_freqs.sum()
    noise_dist = torch.from_numpy(unigram_dist ** 0.75 / np.sum(unigram_dist ** 0.75))

    class SkipGramNeg(nn.Module):
        def __init__(self, n_vocab, n_embed, noise_dist=None):
            super().__init__()
            self.n_vocab, self.n_embed, self.noise_dist = n_vocab, n_embed, noise_dist
            self.in_embed = nn.Embedding(n_vocab, n_embed)
            self.out_embed = nn.Embedding(n_vocab, n_embed)
            self.in_embed.weight.data.uniform_(-1, 1)
            self.out_embed.weight.data.uniform_(-1, 1)

        def forward_noise(self, batch_size, n_samples):
            noise_words = torch.multinomial(self.noise_dist, batch_size * n_samples, replacement=True)
            return self.out_embed(noise_words).view(batch_size, n_samples, self.n_embed)

    def get_target(words, idx, window_size=2):
        r = 2
        start = idx - r if (idx - r) > 0 else 0
        return list(set(words[start:idx] + words[idx + 1:idx + r + 1]) - {words[idx]})[:1] or [words[idx]]

    model = SkipGramNeg(len(vocab), 6, noise_dist=noise_dist)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = []
    for start in range(0, 12, 6):
        batch = train_words[start:start + 6]
        x = [w for i, w in enumerate(batch) for _ in get_target(batch, i)]
        y = [t for i, w in enumerate(batch) for t in get_target(batch, i)]
        inputs, targets = torch.LongTensor(x), torch.LongTensor(y)
        input_vectors = model.in_embed(inputs)
        output_vectors = model.out_embed(targets)
        noise_vectors = model.forward_noise(inputs.shape[0], 3)
        bsz, embed_size = input_vectors.shape
        input_vectors = input_vectors.view(bsz, embed_size, 1)
        output_vectors = output_vectors.view(bsz, 1, embed_size)
        out_loss = torch.bmm(output_vectors, input_vectors).sigmoid().log().squeeze()
        noise_loss = torch.bmm(noise_vectors.neg(), input_vectors).sigmoid().log().squeeze().sum(1)
        loss = -(out_loss + noise_loss).mean()
        alt = -(F.logsigmoid(torch.bmm(output_vectors, input_vectors)).flatten()
                + F.logsigmoid(-torch.bmm(noise_vectors, input_vectors)).squeeze(-1).sum(1)).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append((loss, alt))
    embeds = model.in_embed.weight.detach()
    magnitudes = embeds.pow(2).sum(dim=1).sqrt().unsqueeze(0)
    valid = torch.LongTensor(np.array([0, 2, 4]))
    similarities = torch.mm(model.in_embed(valid), embeds.t()) / magnitudes
    _, closest = similarities.topk(3)
    no_repl = torch.multinomial(noise_dist, 4)
    rows = torch.multinomial(torch.tensor([[0., 3., 1., 0.], [2., 2., 2., 2.]]), 3)
    return losses, similarities, closest, no_repl, rows, torch.rand(2)


def case_gpt_generate_topk_topp_and_beam_search(lib):
    """minGPT's ``generate`` (``idx_cond = idx if idx.size(1) <= block_size else idx[:, -block_size:]``,
    ``logits[:, -1, :] / temperature``, ``v, _ = torch.topk(logits, top_k)``, ``logits[logits < v[:, [-1]]] =
    -float('Inf')``, ``torch.multinomial(probs, num_samples=1)``, ``torch.cat((idx, idx_next), dim=1)``) on a tiny
    causal GPT with a ``torch.tril`` bias buffer and ``masked_fill(bias[:, :, :T, :T] == 0, float('-inf'))``,
    ``do_sample=False`` by ``torch.topk(probs, k=1, dim=-1)``; Hugging Face's TopPLogitsWarper (ascending
    ``torch.sort``, ``cumsum``, ``<= (1 - top_p)``, ``[..., -1:] = 0``, ``scatter(1, sorted_indices,
    sorted_indices_to_remove)``, ``masked_fill``) under ``@torch.no_grad()``; and a beam search over flattened
    ``(beam * vocab)`` scores with ``topk``, ``torch.div(..., rounding_mode="floor")`` and ``%``."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(7)
    V, C, block_size = 11, 8, 5

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(C, 3 * C)
            self.c_proj = nn.Linear(C, C)
            self.n_head = 2
            self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size))
                                 .view(1, 1, block_size, block_size))

        def forward(self, x):
            B, T, C_ = x.size()
            q, k, v = self.c_attn(x).split(C, dim=2)
            k = k.view(B, T, self.n_head, C_ // self.n_head).transpose(1, 2)
            q = q.view(B, T, self.n_head, C_ // self.n_head).transpose(1, 2)
            v = v.view(B, T, self.n_head, C_ // self.n_head).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / (k.size(-1) ** 0.5))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            y = att @ v
            y = y.transpose(1, 2).contiguous().view(B, T, C_)
            return self.c_proj(y)

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(V, C), nn.Embedding(block_size, C)
            self.ln = nn.LayerNorm(C)
            self.attn = CausalSelfAttention()
            self.lm_head = nn.Linear(C, V, bias=False)

        def forward(self, idx):
            pos = torch.arange(0, idx.size(1), dtype=torch.long).unsqueeze(0)
            x = self.wte(idx) + self.wpe(pos)
            x = x + self.attn(self.ln(x))
            return self.lm_head(x)

        @torch.no_grad()
        def generate(self, idx, max_new_tokens, temperature=1.0, do_sample=False, top_k=None):
            for _ in range(max_new_tokens):
                idx_cond = idx if idx.size(1) <= block_size else idx[:, -block_size:]
                logits = self(idx_cond)
                logits = logits[:, -1, :] / temperature
                if top_k is not None:
                    v, _ = torch.topk(logits, top_k)
                    logits[logits < v[:, [-1]]] = -float("Inf")
                probs = F.softmax(logits, dim=-1)
                if do_sample:
                    idx_next = torch.multinomial(probs, num_samples=1)
                else:
                    _, idx_next = torch.topk(probs, k=1, dim=-1)
                idx = torch.cat((idx, idx_next), dim=1)
            return idx

    model = GPT().eval()
    prompt = torch.tensor([[1, 2], [3, 3]])
    sampled = model.generate(prompt, 5, temperature=0.8, do_sample=True, top_k=4)
    greedy = model.generate(prompt, 4)

    def top_p_warp(scores, top_p=0.7, filter_value=-float("Inf"), min_tokens_to_keep=1):
        sorted_logits, sorted_indices = torch.sort(scores, descending=False)
        cumulative_probs = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
        sorted_indices_to_remove = cumulative_probs <= (1 - top_p)
        sorted_indices_to_remove[..., -min_tokens_to_keep:] = 0
        indices_to_remove = sorted_indices_to_remove.scatter(1, sorted_indices, sorted_indices_to_remove)
        return scores.masked_fill(indices_to_remove, filter_value)

    with torch.no_grad():
        scores = model(sampled[:, -block_size:])[:, -1, :]
        warped = top_p_warp(scores)
        nucleus = torch.multinomial(F.softmax(warped, dim=-1), num_samples=2, replacement=True)

    beam_size, seqs = 3, torch.tensor([[4]])
    beam_scores = torch.zeros(1)
    with torch.no_grad():
        for _ in range(3):
            log_probs = F.log_softmax(model(seqs[:, -block_size:])[:, -1, :], dim=-1)
            next_scores = (beam_scores[:, None] + log_probs).view(-1)
            top_scores, top_ids = next_scores.topk(beam_size, dim=0, largest=True, sorted=True)
            beam_idx = torch.div(top_ids, V, rounding_mode="floor")
            token_idx = top_ids % V
            seqs = torch.cat([seqs.index_select(0, beam_idx), token_idx.unsqueeze(1)], dim=-1)
            beam_scores = top_scores
    return sampled, greedy, warped, nucleus, seqs, beam_scores


test_script_matches_torch = script_test(globals())
