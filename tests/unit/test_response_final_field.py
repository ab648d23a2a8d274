"""Every service response declares the boolean its `final_field` names: without it a processor's last
response is never marked final and the caller waits until its timeout (as the first temporal service did)."""

from __future__ import annotations

import importlib
import pkgutil

import tracegraph.schemas
from tracegraph.schemas.base import _REGISTRY, ServiceResponse


def test_every_service_response_has_its_final_field():
    for module in pkgutil.iter_modules(tracegraph.schemas.__path__):
        importlib.import_module(f"tracegraph.schemas.{module.name}")
    responses = [cls for cls in _REGISTRY.values() if issubclass(cls, ServiceResponse)]
    assert len(responses) > 10
    missing = [cls.__name__ for cls in responses if cls.final_field not in cls.model_fields]
    assert missing == []
