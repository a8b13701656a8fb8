"""Images for TensorBoard without Pillow: arrays laid out as HWC, scaled to uint8 and encoded as PNG here.

The layout handling and the scaling rule (floats times 255, uint8 as is) are tensorboardX's; only the PNG
encoding (8-bit grey, RGB or RGBA, no filtering) is done here so that logging images needs no imaging library.
"""
from __future__ import annotations

import struct
import zlib

import numpy as np

_COLOR_TYPE = {1: 0, 3: 2, 4: 6}  # channels -> PNG colour type (grey, RGB, RGBA)


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def encode_png(hwc: np.ndarray) -> bytes:
    """PNG bytes of a ``(height, width, channels)`` uint8 array with 1, 3 or 4 channels."""
    h, w, c = hwc.shape
    if c not in _COLOR_TYPE:
        raise ValueError(f"an image needs 1, 3 or 4 channels, got {c}")
    rows = np.concatenate([np.zeros((h, 1), np.uint8), np.ascontiguousarray(hwc, np.uint8).reshape(h, w * c)], 1)
    header = struct.pack(">IIBBBBB", w, h, 8, _COLOR_TYPE[c], 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(rows.tobytes(), 6))
            + _chunk(b"IEND", b""))


def image_summary(tag: str, array: np.ndarray, dataformats: str):
    """A tensorboardX ``Summary`` holding ``array`` (laid out as ``dataformats``) as one PNG image."""
    from tensorboardX.proto.summary_pb2 import Summary
    from tensorboardX.utils import convert_to_HWC
    hwc = convert_to_HWC(np.asarray(array), dataformats)
    if hwc.dtype != np.uint8:
        hwc = (hwc.astype(np.float32) * 255.0).clip(0, 255).astype(np.uint8)
    h, w, c = hwc.shape
    img = Summary.Image(height=h, width=w, colorspace=c, encoded_image_string=encode_png(hwc))
    return Summary(value=[Summary.Value(tag=tag, image=img)])
