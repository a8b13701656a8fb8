from torchish._tensor import Tensor


class MaskedTensor(Tensor):
    pass


def is_masked_tensor(obj):
    return isinstance(obj, MaskedTensor)
