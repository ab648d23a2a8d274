"""Blueprints resolve to per-processor topics for one flow; mistakes are named precisely."""

import json

import pytest

from tracegraph.base.errors import ConfigError
from tracegraph.flow.config.blueprints import flow_parameters, parse_blueprint, resolve
from tracegraph.launch.registry import PROCESSORS, packaged_blueprints

BLUEPRINT = {
    "parameters": {"chunk-size": {"default": "2000"}},
    "processors": {"chunker": {"input": "persistent://tg/flow/chunk:{id}", "size": "{chunk-size}",
                               "svc": {"request": "non-persistent://tg/request/c:{id}",
                                       "response": "non-persistent://tg/response/c:{id}"}}},
    "interfaces": {"load": "persistent://tg/flow/chunk:{id}"},
}


def test_resolve_substitutes_flow_id_and_parameters():
    params = flow_parameters(BLUEPRINT, {"chunk-size": "500"})
    bindings, interfaces = resolve(BLUEPRINT, "f1", params)
    assert bindings["chunker"]["topics"]["input"] == "persistent://tg/flow/chunk:f1"
    assert bindings["chunker"]["topics"]["size"] == "500"
    assert bindings["chunker"]["topics"]["svc"]["response"] == "non-persistent://tg/response/c:f1"
    assert bindings["chunker"]["parameters"] == {"chunk-size": "500"}
    assert interfaces == {"load": "persistent://tg/flow/chunk:f1"}


def test_defaults_apply_and_unknown_parameters_are_refused():
    assert flow_parameters(BLUEPRINT, None) == {"chunk-size": "2000"}
    with pytest.raises(ConfigError, match="unknown flow parameter.*chunk-size"):
        flow_parameters(BLUEPRINT, {"chunksize": "1"})


@pytest.mark.parametrize("text, message", [
    ("{", "not valid JSON"),
    ("[]", "must be a JSON object"),
    ('{"processors": {}}', "names no processors"),
    ('{"processors": {"p": {"in": "persistent://tg/flow/{nope}"}}}', "placeholder {nope}"),
    ('{"processors": {"p": {"in": "persistent://tg/flow/a b"}}}', "processors.p.in: not a topic name"),
])
def test_broken_blueprints_are_refused_with_the_place(text, message):
    with pytest.raises(ConfigError, match=message):
        parse_blueprint(text)


def test_packaged_blueprints_are_valid_and_name_only_registered_processors():
    blueprints = packaged_blueprints()
    assert "default" in blueprints
    for text in blueprints.values():
        blueprint = parse_blueprint(text)
        assert set(blueprint["processors"]) <= set(PROCESSORS)
        json.loads(text)
