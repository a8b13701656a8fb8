"""``SummaryWriter``: PyTorch's TensorBoard logger, writing real event files through ``tensorboardX``.

torchish Tensors (and Parameters, and their ``.grad``) are accepted wherever PyTorch takes tensors; they are
detached and read as numpy arrays before tensorboardX sees them. ``add_graph`` draws the autograd graph of one
forward pass, grouped by module (see :mod:`._graph`), since TorchScript tracing does not exist here.

Example:
    >>> import torchish
    >>> from torchish.utils.tensorboard import SummaryWriter
    >>> with SummaryWriter("runs/demo") as w:            # doctest: +SKIP
    ...     w.add_scalar("loss", 0.5, global_step=0)
"""
from __future__ import annotations

from ..._tensor import Tensor

_MISSING = ("torchish.utils.tensorboard needs the tensorboardX package, which is not installed: "
            "pip install torchish[tensorboard]")


def _np(x):
    """A torchish Tensor as a detached numpy array (float32 for bfloat16/float16); anything else as is."""
    if isinstance(x, Tensor):
        x = x.detach()
        if x.dtype.is_floating_point and x.element_size() < 4:
            x = x.float()
        return x.numpy()
    return x


def _scalar(x):
    if isinstance(x, Tensor):
        if x.numel() != 1:
            raise ValueError(f"add_scalar(): expected a scalar value, got a tensor of shape {tuple(x.shape)}")
        return x.item()
    return x


class SummaryWriter:
    """Writes TensorBoard event files under ``log_dir`` (``runs/<date>_<host><comment>`` by default).

    Args:
        log_dir: the directory of the event files (created if needed).
        comment: suffix of the default ``log_dir``.
        purge_step: as in PyTorch: events at or after this step are hidden from earlier runs in the same dir.
        max_queue: pending events kept in memory before a write.
        flush_secs: seconds between automatic flushes.
        filename_suffix: suffix of the event file's name.

    Example:
        >>> w = SummaryWriter("runs/exp1")                 # doctest: +SKIP
        >>> for step in range(3):                          # doctest: +SKIP
        ...     w.add_scalar("loss", 1.0 / (step + 1), step)
        >>> w.add_histogram("fc.weight", model.fc.weight, 3)   # doctest: +SKIP
        >>> w.close()                                      # doctest: +SKIP
    """

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120,
                 filename_suffix=""):
        try:
            import tensorboardX
        except ImportError:
            raise ImportError(_MISSING) from None
        self._w = tensorboardX.SummaryWriter(logdir=log_dir, comment=comment, purge_step=purge_step,
                                             max_queue=max_queue, flush_secs=flush_secs,
                                             filename_suffix=filename_suffix)

    @property
    def log_dir(self) -> str:
        return self._w.logdir

    def get_logdir(self) -> str:
        return self._w.logdir

    # ---- values -------------------------------------------------------------------------------------------
    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        """Log one number (a Python number or a one-element Tensor) under ``tag`` at ``global_step``."""
        self._w.add_scalar(tag, _scalar(scalar_value), global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Log several numbers as curves of one chart, each in its own run ``<log_dir>/<main_tag>/<tag>``
        (tensorboardX's layout; PyTorch names the run ``<main_tag>_<tag>``)."""
        self._w.add_scalars(main_tag, {k: _scalar(v) for k, v in tag_scalar_dict.items()}, global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None, max_bins=None):
        """Log the distribution of ``values`` (a Tensor, e.g. a weight or its ``.grad``, or an array)."""
        self._w.add_histogram(tag, _np(values), global_step, bins=bins, walltime=walltime, max_bins=max_bins)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """Log an image: floats in [0, 1] or uint8 in [0, 255], laid out as ``dataformats`` (CHW, HWC, HW)."""
        self._add_image(tag, img_tensor, global_step, walltime, dataformats)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        """Log a batch of images as one grid."""
        self._add_image(tag, img_tensor, global_step, walltime, dataformats)

    def _add_image(self, tag, img, global_step, walltime, dataformats):
        from ._image import image_summary
        self._w._get_file_writer().add_summary(image_summary(tag, _np(img), dataformats), global_step, walltime)

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None):
        """Log a matplotlib figure (or a list of them) as an image."""
        self._w.add_figure(tag, figure, global_step, close, walltime)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        """Log text (Markdown) under ``tag``."""
        self._w.add_text(tag, text_string, global_step, walltime)

    def add_embedding(self, mat, metadata=None, label_img=None, global_step=None, tag="default",
                      metadata_header=None):
        """Log points (rows of ``mat``) for TensorBoard's projector."""
        self._w.add_embedding(_np(mat), metadata=metadata, label_img=_np(label_img), global_step=global_step,
                              tag=tag, metadata_header=metadata_header)

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None, global_step=None):
        """Log one run's hyper-parameters with its final metrics (TensorBoard's HPARAMS tab), in a sub-run named
        ``run_name`` (default: the current time)."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        self._w.add_hparams({k: _scalar(v) for k, v in hparam_dict.items()},
                            {k: _scalar(v) for k, v in metric_dict.items()}, name=run_name, global_step=global_step)

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        """Log the graph of one forward pass of ``model`` on ``input_to_model`` (a Tensor or a tuple of them).

        The graph is torchish's autograd graph (nodes named like PyTorch's grad_fns), with parameters named as in
        ``model.named_parameters()`` and ops grouped into the modules that ran them. ``use_strict_trace`` is
        accepted for PyTorch compatibility and has no effect.
        """
        from tensorboardX.proto import event_pb2
        from ._graph import graph_def
        gd = graph_def(model, input_to_model)
        if verbose:
            print(gd)
        self._w._get_file_writer().add_event(event_pb2.Event(graph_def=gd.SerializeToString()))

    # ---- lifetime -----------------------------------------------------------------------------------------
    def flush(self):
        """Write pending events to disk."""
        self._w.flush()

    def close(self):
        """Flush and close the event files (a later ``add_*`` opens a new one)."""
        self._w.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
