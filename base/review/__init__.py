"""The review queue: doubtful extractions held back from the graph until a reviewer decides."""

from tracegraph.base.review.queue import Approved, Decision, Enqueued, decide, enqueue, list_items

__all__ = ["Approved", "Decision", "Enqueued", "decide", "enqueue", "list_items"]
