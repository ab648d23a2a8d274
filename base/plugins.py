"""Named implementations imported on first use (rdflib's plugin registry idea): a broker or store
library is needed only by the deployments that choose it."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from tracegraph.base.errors import ConfigError


def load(table: Mapping[str, str], name: str, what: str, extras: Mapping[str, str] | None = None) -> Any:
    """The object `table[name]` names ("module:attribute"), with a clear error for an unknown name
    or a missing optional dependency."""
    target = table.get(name)
    if target is None:
        raise ConfigError(f"unknown {what} {name!r}; choose one of {', '.join(table)}")
    module_name, attribute = target.split(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        hint = (extras or {}).get(name)
        raise ConfigError(f"{what} {name!r} needs `pip install {hint}`: {exc}" if hint else
                          f"{what} {name!r} cannot be imported: {exc}") from exc
    return getattr(module, attribute)
