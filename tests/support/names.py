"""Names for test topics and subscriptions that no other test, or earlier run, uses."""

import uuid


def unique(prefix: str = "t") -> str:
    """`<prefix>-test-<random>`: the `-test-` part lets the broker expire what tests leave behind."""
    return f"{prefix}-test-{uuid.uuid4().hex[:10]}"


def vhost_of(amqp_url: str) -> str:
    """The vhost an amqp:// URL names ("/" when it names none), for rabbitmqctl's -p."""
    from urllib.parse import unquote, urlsplit
    path = urlsplit(amqp_url).path
    return unquote(path[1:]) if len(path) > 1 else "/"
