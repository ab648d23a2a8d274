"""Vectors as RDF literals (`tg:embedding`): base64 of little-endian float32. Community reports and
RAPTOR nodes carry their vector this way, so global search and the tree walk read text and vectors
in one query, from the store the structure already lives in. They number in thousands, not millions."""

from __future__ import annotations

import base64
from collections.abc import Sequence

import numpy as np


def encode_vector(vector: Sequence[float] | np.ndarray) -> str:
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


def decode_vector(text: str) -> np.ndarray:
    """The float32 vector (read-only: a view of the decoded bytes)."""
    return np.frombuffer(base64.b64decode(text), dtype="<f4")
