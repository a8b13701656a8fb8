def masked_tensor(data, mask, requires_grad=False):
    raise NotImplementedError


def as_masked_tensor(data, mask):
    raise NotImplementedError
