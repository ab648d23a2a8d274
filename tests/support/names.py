"""Names for test topics and subscriptions that no other test, or earlier run, uses."""

import uuid


def unique(prefix: str = "t") -> str:
    """`<prefix>-test-<random>`: the `-test-` part lets the broker expire what tests leave behind."""
    return f"{prefix}-test-{uuid.uuid4().hex[:10]}"
