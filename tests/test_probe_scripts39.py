"""Third-party programs, round 39 (continued from test_probe_scripts38.py): sparse routing, graphs and metric
learning in the style of popular repositories (Hugging Face's Mixtral sparse MoE block with its load-balancing loss
and a Switch-style capacity dispatch, an EdgeConv + GCN network on a k-NN graph, batch-hard triplet mining),
seeded by ``torch.manual_seed`` with default initialisation and compared with torch 2.13 by
``assert_script_matches``.

Fixed here: ``sort``/``argsort`` (``stable`` not given or False) returned equal values in index order, the stable
order; PyTorch's CPU kernel runs ``std::sort``, whose order among ties differs beyond 16 elements. The PK sampler's
``labels.argsort()`` (20 labels, 4 classes) and the graph's ``row.argsort()`` picked other samples and edge orders
than PyTorch's; torchish now replays ``std::sort`` for such rows (``torchish/ops/cpu_order.py``; regression tests
in tests/test_cpu_order.py).
"""
import pytest

from oracle import script_test, torch_one_thread

_torch_single_thread = pytest.fixture(autouse=True)(torch_one_thread)


def case_mixtral_sparse_moe_block_and_switch_dispatch(lib):
    """Hugging Face's MixtralSparseMoeBlock: ``F.softmax(router_logits, dim=1, dtype=torch.float)``,
    ``torch.topk(routing_weights, top_k, dim=-1)``, ``routing_weights /= routing_weights.sum(dim=-1,
    keepdim=True)``, ``expert_mask = F.one_hot(selected_experts, num_classes=E).permute(2, 1, 0)``, ``idx, top_x =
    torch.where(expert_mask[expert_idx])``, ``hidden_states[None, top_x].reshape(-1, hidden_dim)`` and
    ``final_hidden_states.index_add_(0, top_x, current_hidden_states.to(hidden_states.dtype))``; the
    ``load_balancing_loss_func`` (``torch.mean(expert_mask.float(), dim=0)`` times the mean router probability);
    a Switch-style top-1 dispatch with capacity (``cumsum`` positions, ``scatter_add_`` of an expanded index into
    per-expert slots, ``torch.gather`` back); AdamW steps with a router z-loss (``torch.logsumexp``) and
    jitter noise (``torch.empty_like(...).uniform_(1.0 - eps, 1.0 + eps)``)."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(8)
    hidden_dim, ffn_dim, num_experts, top_k = 6, 8, 4, 2

    class BlockSparseTop2MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.w1 = nn.Linear(hidden_dim, ffn_dim, bias=False)
            self.w2 = nn.Linear(ffn_dim, hidden_dim, bias=False)
            self.w3 = nn.Linear(hidden_dim, ffn_dim, bias=False)
            self.act_fn = nn.SiLU()

        def forward(self, hidden_states):
            return self.w2(self.act_fn(self.w1(hidden_states)) * self.w3(hidden_states))

    class SparseMoeBlock(nn.Module):
        def __init__(self):
            super().__init__()
            self.gate = nn.Linear(hidden_dim, num_experts, bias=False)
            self.experts = nn.ModuleList([BlockSparseTop2MLP() for _ in range(num_experts)])
            self.jitter_noise = 0.1

        def forward(self, hidden_states):
            batch_size, sequence_length, hidden_dim_ = hidden_states.shape
            if self.training and self.jitter_noise > 0:
                hidden_states *= torch.empty_like(hidden_states).uniform_(1.0 - self.jitter_noise,
                                                                          1.0 + self.jitter_noise)
            hidden_states = hidden_states.view(-1, hidden_dim_)
            router_logits = self.gate(hidden_states)
            routing_weights = F.softmax(router_logits, dim=1, dtype=torch.float)
            routing_weights, selected_experts = torch.topk(routing_weights, top_k, dim=-1)
            routing_weights /= routing_weights.sum(dim=-1, keepdim=True)
            routing_weights = routing_weights.to(hidden_states.dtype)
            final_hidden_states = torch.zeros((batch_size * sequence_length, hidden_dim_), dtype=hidden_states.dtype)
            expert_mask = F.one_hot(selected_experts, num_classes=num_experts).permute(2, 1, 0)
            for expert_idx in range(num_experts):
                expert_layer = self.experts[expert_idx]
                idx, top_x = torch.where(expert_mask[expert_idx])
                current_state = hidden_states[None, top_x].reshape(-1, hidden_dim_)
                current_hidden_states = expert_layer(current_state) * routing_weights[top_x, idx, None]
                final_hidden_states.index_add_(0, top_x, current_hidden_states.to(hidden_states.dtype))
            final_hidden_states = final_hidden_states.reshape(batch_size, sequence_length, hidden_dim_)
            return final_hidden_states, router_logits

    def load_balancing_loss_func(gate_logits, num_experts, top_k):
        routing_weights = torch.nn.functional.softmax(gate_logits, dim=-1)
        _, selected_experts = torch.topk(routing_weights, top_k, dim=-1)
        expert_mask = torch.nn.functional.one_hot(selected_experts, num_experts)
        tokens_per_expert = torch.mean(expert_mask.float(), dim=0)
        router_prob_per_expert = torch.mean(routing_weights, dim=0)
        return torch.sum(tokens_per_expert * router_prob_per_expert.unsqueeze(0)) * num_experts

    moe = SparseMoeBlock()
    opt = torch.optim.AdamW(moe.parameters(), lr=1e-2, weight_decay=0.1)
    x = torch.randn(2, 5, hidden_dim)
    out = []
    for _ in range(2):
        y, router_logits = moe(x.clone())
        aux = load_balancing_loss_func(router_logits, num_experts, top_k)
        z_loss = torch.logsumexp(router_logits, dim=-1).pow(2).mean()
        loss = y.pow(2).mean() + 0.01 * aux + 1e-3 * z_loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        out.append((loss, aux, z_loss, moe.gate.weight.grad.clone()))

    # Switch top-1 dispatch with an expert capacity of 3 tokens
    tokens = x.view(-1, hidden_dim).requires_grad_()
    probs = F.softmax(moe.gate(tokens), dim=-1)
    gate_val, expert_index = probs.max(dim=-1)
    mask = F.one_hot(expert_index, num_experts)
    position_in_expert = (torch.cumsum(mask, dim=0) - 1) * mask
    keep = (position_in_expert < 3).all(dim=-1) & (mask.sum(-1) > 0)
    slot = expert_index * 3 + position_in_expert.sum(-1)
    slot = torch.where(keep, slot, torch.full_like(slot, num_experts * 3))
    buckets = torch.zeros(num_experts * 3 + 1, hidden_dim)
    buckets = buckets.scatter_add(0, slot.unsqueeze(-1).expand(-1, hidden_dim), tokens)
    processed = torch.stack([moe.experts[e](buckets[e * 3:(e + 1) * 3]) for e in range(num_experts)]).flatten(0, 1)
    processed = torch.cat([processed, torch.zeros(1, hidden_dim)])
    combined = torch.gather(processed, 0, slot.unsqueeze(-1).expand(-1, hidden_dim)) * gate_val.unsqueeze(-1)
    combined.sum().backward()
    return out, keep, slot, combined, tokens.grad, [p.grad for p in moe.experts[0].parameters()]


def case_edgeconv_gnn_sorted_edges_amax_aggregation(lib):
    """A PyG-style message-passing layer written by hand: ``edge_index`` from a k-NN graph (``torch.cdist`` +
    ``topk(k + 1, largest=False)`` dropping self loops), edges sorted by target with ``argsort`` as ``to_csr``
    helpers do (ties in the target broken as PyTorch's sort breaks them), ``x.index_select(0, edge_index[0])``,
    EdgeConv messages ``mlp(torch.cat([x_i, x_j - x_i], dim=-1))`` through ReLU (tied zero maxima), aggregation
    by ``scatter_reduce(reduce="amax", include_self=False)`` into zeros, a GCN-normalised branch with
    ``torch.bincount`` degrees, ``pow(-0.5)``, ``masked_fill_(deg_inv_sqrt == float("inf"), 0)`` and
    ``index_add_``, global mean pooling by ``scatter_reduce(reduce="mean")`` per graph, CrossEntropy and Adam; the
    CSR ``rowptr`` by ``cumsum`` of ``bincount``."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(9)
    num_nodes, k = 10, 3
    pos = torch.randn(num_nodes, 2)
    batch = torch.tensor([0] * 5 + [1] * 5)
    dist = torch.cdist(pos, pos)
    dist = dist.masked_fill(batch[:, None] != batch[None, :], float("inf"))
    nbr = dist.topk(k + 1, dim=1, largest=False).indices[:, 1:]
    row = nbr.reshape(-1)
    col = torch.arange(num_nodes).repeat_interleave(k)
    perm = row.argsort()
    edge_index = torch.stack([col[perm], row[perm]], dim=0)
    rowptr = torch.cat([torch.zeros(1, dtype=torch.long), torch.bincount(row, minlength=num_nodes).cumsum(0)])

    class EdgeConv(nn.Module):
        def __init__(self, in_channels, out_channels):
            super().__init__()
            self.mlp = nn.Sequential(nn.Linear(2 * in_channels, out_channels), nn.ReLU())

        def forward(self, x, edge_index):
            src, dst = edge_index
            x_i, x_j = x.index_select(0, dst), x.index_select(0, src)
            msg = self.mlp(torch.cat([x_i, x_j - x_i], dim=-1))
            out = torch.zeros(x.size(0), msg.size(1))
            return out.scatter_reduce(0, dst.unsqueeze(-1).expand_as(msg), msg, reduce="amax", include_self=False)

    class GCNConv(nn.Module):
        def __init__(self, in_channels, out_channels):
            super().__init__()
            self.lin = nn.Linear(in_channels, out_channels, bias=False)
            self.bias = nn.Parameter(torch.zeros(out_channels))

        def forward(self, x, edge_index):
            src, dst = edge_index
            deg = torch.bincount(dst, minlength=x.size(0)).float()
            deg_inv_sqrt = deg.pow(-0.5)
            deg_inv_sqrt.masked_fill_(deg_inv_sqrt == float("inf"), 0)
            norm = deg_inv_sqrt[src] * deg_inv_sqrt[dst]
            h = self.lin(x)
            out = torch.zeros_like(h).index_add_(0, dst, h[src] * norm.view(-1, 1))
            return out + self.bias

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.conv2 = EdgeConv(2, 8), GCNConv(8, 8)
            self.head = nn.Linear(8, 3)

        def forward(self, x, edge_index, batch):
            h = self.conv1(x, edge_index)
            h = F.relu(self.conv2(h, edge_index))
            pooled = torch.zeros(int(batch.max()) + 1, h.size(1)).scatter_reduce(
                0, batch.unsqueeze(-1).expand_as(h), h, reduce="mean", include_self=False)
            return self.head(pooled)

    model = Net()
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    y = torch.tensor([2, 0])
    losses = []
    for _ in range(2):
        opt.zero_grad()
        loss = F.cross_entropy(model(pos, edge_index, batch), y)
        loss.backward()
        opt.step()
        losses.append(loss)
    return edge_index, perm, rowptr, losses, [p.grad for p in model.parameters()]


def case_batch_hard_triplet_mining_cdist(lib):
    """Batch-hard triplet loss (Hermans et al., as in the open-reid / pytorch-metric-learning style codes):
    ``torch.cdist`` of L2-normalised embeddings, ``is_pos = labels.expand(N, N).eq(labels.expand(N, N).t())``,
    ``dist_ap, relative_p_inds = torch.max(dist_mat[is_pos].contiguous().view(N, -1), 1, keepdim=True)``, hardest
    negatives by ``masked_fill(is_pos, float("inf")).min(1)``, ``nn.MarginRankingLoss`` with ``y =
    dist_an.new().resize_as_(dist_an).fill_(1)``, ``nn.TripletMarginLoss(margin=0.3)`` on the mined triplets
    gathered by index, a soft-margin variant ``F.softplus(dist_ap - dist_an)``, a PK sampler that argsorts the
    labels (ties broken as PyTorch's sort breaks them), SGD with a MultiStepLR, and recall@1 by ``cdist`` +
    ``fill_diagonal_(float("inf"))`` + ``argmin``."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(10)
    labels_all = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 3, 3, 3, 3, 0, 1, 2, 3])
    order = labels_all.argsort()
    data = torch.randn(20, 6) + labels_all.unsqueeze(1).float() * 0.5
    net = nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.PReLU(), nn.Linear(8, 4))
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[1], gamma=0.1)
    ranking_loss = nn.MarginRankingLoss(margin=0.3)
    triplet = nn.TripletMarginLoss(margin=0.3, p=2)
    out = []
    for step in range(2):
        sel = order.view(4, 5)[:, step * 2:step * 2 + 3].reshape(-1)
        x, labels = data[sel], labels_all[sel]
        emb = F.normalize(net(x), p=2, dim=1)
        N = emb.size(0)
        dist_mat = torch.cdist(emb, emb).clamp(min=1e-12)
        is_pos = labels.expand(N, N).eq(labels.expand(N, N).t())
        is_neg = labels.expand(N, N).ne(labels.expand(N, N).t())
        dist_ap, relative_p_inds = torch.max(dist_mat[is_pos].contiguous().view(N, -1), 1, keepdim=True)
        dist_an, relative_n_inds = torch.min(dist_mat[is_neg].contiguous().view(N, -1), 1, keepdim=True)
        dist_ap, dist_an = dist_ap.squeeze(1), dist_an.squeeze(1)
        y = dist_an.new().resize_as_(dist_an).fill_(1)
        loss_rank = ranking_loss(dist_an, dist_ap, y)
        hard_neg = dist_mat.masked_fill(is_pos, float("inf")).argmin(1)
        hard_pos = (dist_mat * is_pos.float()).argmax(1)
        loss_trip = triplet(emb, emb[hard_pos], emb[hard_neg])
        loss_soft = F.softplus(dist_ap - dist_an).mean()
        loss = loss_rank + loss_trip + 0.5 * loss_soft
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        out.append((sel, loss_rank, loss_trip, loss_soft, relative_p_inds, relative_n_inds, hard_pos, hard_neg))
    net.eval()
    with torch.no_grad():
        emb = F.normalize(net(data), dim=1)
        d = torch.cdist(emb, emb)
        d.fill_diagonal_(float("inf"))
        recall1 = (labels_all[d.argmin(1)] == labels_all).float().mean()
    return out, recall1, d, [p.grad for p in net.parameters()], net[1].running_mean


test_script_matches_torch = script_test(globals())
