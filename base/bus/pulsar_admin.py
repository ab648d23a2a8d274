"""What Pulsar's binary protocol does not tell a client, asked of its admin REST API: topic stats.

The broker's web service (http://host:8080 by default) reports per topic which subscriptions exist
and how many consumers each has; the Pulsar engine counts a service's consumers with it and refuses
a request nobody could ever receive, as RabbitMQ's `mandatory` publish does.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from urllib.parse import quote

import aiohttp

log = logging.getLogger(__name__)

ADMIN_URL_VARIABLE = "TG_PULSAR_ADMIN_URL"
ADMIN_TIMEOUT = 3.0  # seconds; a stats call that takes longer counts as "cannot tell"
_SERVICE = re.compile(r"(pulsar(?:\+ssl)?)://(?:[^@/]*@)?(\[[^\]]+\]|[^:,/]+)")


def admin_url(service_url: str, configured: str | None = None) -> str:
    """The admin REST base: `configured`, else TG_PULSAR_ADMIN_URL, else the service's first host on 8080.

    >>> admin_url("pulsar://broker.example:6650,other:6650")
    'http://broker.example:8080'
    >>> admin_url("pulsar+ssl://broker.example:6651")
    'https://broker.example:8443'
    """
    chosen = configured or os.environ.get(ADMIN_URL_VARIABLE)
    if chosen:
        return chosen.rstrip("/")
    match = _SERVICE.match(service_url)
    if not match:
        return "http://127.0.0.1:8080"
    scheme, host = match.groups()
    return f"https://{host}:8443" if scheme == "pulsar+ssl" else f"http://{host}:8080"


def stats_path(pulsar_name: str) -> str:
    """`persistent://tg/request/x` -> `/admin/v2/persistent/tg/request/x/stats`."""
    scheme, rest = pulsar_name.split("://", 1)
    return f"/admin/v2/{scheme}/{quote(rest, safe='/')}/stats"


def subscription_consumers(stats: Mapping[str, object] | None, subscription: str) -> int:
    """Consumers of `subscription` in a topic-stats answer (None: the topic does not exist)."""
    subscriptions = (stats or {}).get("subscriptions") or {}
    entry = subscriptions.get(subscription) if isinstance(subscriptions, Mapping) else None
    return len(entry.get("consumers") or []) if isinstance(entry, Mapping) else 0


def subscription_backlog(stats: Mapping[str, object] | None, subscription: str) -> int:
    """Messages of `subscription` not yet handed to a consumer: its backlog less those delivered unacked."""
    subscriptions = (stats or {}).get("subscriptions") or {}
    entry = subscriptions.get(subscription) if isinstance(subscriptions, Mapping) else None
    if not isinstance(entry, Mapping):
        return 0
    return max(0, int(entry.get("msgBacklog") or 0) - int(entry.get("unackedMessages") or 0))


def has_subscriptions(stats: Mapping[str, object] | None) -> bool:
    """Whether any subscription would receive a message published now."""
    return bool((stats or {}).get("subscriptions"))


class UnknownStats(Exception):
    """The admin API did not answer usefully: the caller cannot tell, and must not guess zero."""


class PulsarAdmin:
    """A small aiohttp client of the broker's admin REST API; one session, opened on first use."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url.rstrip("/")
        self._session: aiohttp.ClientSession | None = None

    async def topic_stats(self, pulsar_name: str) -> Mapping[str, object] | None:
        """The topic's stats, None when the topic does not exist; raises UnknownStats otherwise."""
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=ADMIN_TIMEOUT))
        try:
            async with self._session.get(self.base_url + stats_path(pulsar_name)) as answer:
                if answer.status == 404:
                    return None
                if answer.status != 200:
                    raise UnknownStats(f"HTTP {answer.status} from {self.base_url}")
                return await answer.json()
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            raise UnknownStats(f"{self.base_url}: {exc or type(exc).__name__}") from exc

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()
