"""The public architecture corpus (../shared/data/architecture, read in place) and the plain-text rules
bench/architecture_public.py scores with: which file goes to which collection as which kind, lenient
but transparent name matching, content-word overlap, and the automatic judge of an answer.

Pure functions only (no stack, no I/O beyond reading the corpus folder), so each rule can be read and
tested on its own (tests/unit/test_architecture_gold.py)."""

from __future__ import annotations

import html
import json
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "architecture"
# gold system → the corpus folders it is made of (gold.json → meta.systems)
SYSTEMS: dict[str, tuple[str, ...]] = {
    "otel-demo": ("opentelemetry-demo", "opentelemetry.io"), "online-boutique": ("microservices-demo",),
    "govuk": ("govuk-infrastructure",), "moj-cloud-platform": ("cloud-platform",),
    "island.is": ("island.is",), "rust-infra": ("blog.rust-lang.org",)}
FOLDER_SYSTEM = {folder: system for system, folders in SYSTEMS.items() for folder in folders}
CODEOWNERS_KIND = "text/x-codeowners"

# Words that do not tell two names apart ("cart service" = "cart", "Kafka topic" = "Kafka").
GENERIC = frozenset("service services svc database db topic queue cluster server system component app "
                    "application project repository repo team instance".split())
# Words that describe which one rather than name it ("self-hosted Jenkins", "the management EKS cluster"): left
# over beside a name, they do not make it another thing.
DESCRIPTORS = frozenset("self hosted managed default shared dedicated internal external legacy new old current "
                        "production prod staging primary backup main local remote in management pipeline".split())
STOP_WORDS = frozenset("""a about above after again against all also an and any are as at be because been before
being below between both but by can could did do does doing down during each either else for from further had has
have having he her here hers him his how however i if in into is it its itself just least less may me might more
most much must my no nor not now of off on once one only or other our ours out over own per same she should since
so some such than that the their theirs them then there these they this those through thus to too under until up
upon us very via was we were what when where whether which while who whom whose why will with within without would
yet you your""".split())
# The whole system's own names: every record is about them, so an architecture route asked about one
# says little about the question (bench/architecture_public.py skips them when it picks the entity).
SYSTEM_NAMES = frozenset({"gov uk", "govuk", "opentelemetry", "opentelemetry demo", "otel demo", "demo",
                          "online boutique", "moj", "ministry of justice", "cloud platform", "island is",
                          "digital iceland", "rust"})
_CONNECTORS = re.compile(r",|;|\+|\s/\s|\band\b|\bor\b")
_HANDLE = re.compile(r"@[\w.-]+(?:/([\w.-]+))?")


@dataclass(frozen=True)
class CorpusFile:
    system: str
    path: str  # "<folder>/<path inside it>", the document's title and `path`
    file: Path
    kind: str


def kind_of(name: str) -> str:
    """The document kind a user's loader would give: CODEOWNERS by name, Markdown by any .md/.markdown
    suffix (x.html.md.erb too), everything else (.yml included) plain text.

    >>> kind_of("CODEOWNERS"), kind_of("2020-09-21-x.html.md.erb"), kind_of("component_owners.yml")
    ('text/x-codeowners', 'text/markdown', 'text/plain')
    """
    if name == "CODEOWNERS":
        return CODEOWNERS_KIND
    return "text/markdown" if {".md", ".markdown"} & {s.lower() for s in Path(name).suffixes} else "text/plain"


def collection_of(system: str) -> str:
    return re.sub(r"[^a-z0-9-]+", "-", system.lower())


def corpus_files(data: Path, system: str) -> list[CorpusFile]:
    """Every file of the system's folders except licences (README.md and gold.json sit at the root)."""
    out = []
    for folder in SYSTEMS[system]:
        for file in sorted((data / folder).rglob("*")):
            if file.is_file() and not file.name.upper().startswith(("LICENSE", "LICENCE")):
                path = f"{folder}/{file.relative_to(data / folder).as_posix()}"
                out.append(CorpusFile(system, path, file, kind_of(file.name)))
    return out


def load_gold(data: Path) -> dict[str, Any]:
    return json.loads((data / "gold.json").read_text(encoding="utf-8"))


def system_of_path(path: str) -> str | None:
    return FOLDER_SYSTEM.get(path.split("/", 1)[0])


# ------------------------------------------------------------------ names

def fold(text: str) -> str:
    """Lower case, HTML entities decoded, accents dropped: 'D&#xF3;nal' -> 'donal'."""
    decomposed = unicodedata.normalize("NFKD", html.unescape(text))
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


def words(name: str) -> tuple[str, ...]:
    """Lower-case word tuple; a leading article goes, and a glued 'service' suffix with it.

    >>> words("The cartservice"), words("product-catalog"), words("@alphagov/govuk-data-engineering")
    (('cart',), ('product', 'catalog'), ('alphagov', 'govuk', 'data', 'engineering'))
    """
    out = [w[:-7] if w.endswith("service") and len(w) > 7 else w for w in re.findall(r"[a-z0-9]+", fold(name))]
    while out and out[0] in ("the", "a", "an"):
        out.pop(0)
    return tuple(out)


@lru_cache(maxsize=65536)
def variants(name: str) -> tuple[tuple[str, ...], ...]:
    """The word tuples a name can be known by: the whole, the part outside parentheses/brackets, each
    parenthesised part, each piece of those split at commas, ';', '+', ' / ', 'and', 'or', the part
    before a colon, and for a handle '@org/team' also 'team'.

    >>> variants("queue (Kafka)")
    (('queue', 'kafka'), ('queue',), ('kafka',))
    """
    text = html.unescape(name)
    main = re.sub(r"\([^)]*\)|\[[^\]]*\]", " ", text)
    parts = [text, main, *re.findall(r"\(([^)]*)\)", text)]
    pieces = list(parts)
    for part in parts:
        pieces += _CONNECTORS.split(part.split(":", 1)[0])
        pieces += [m.group(1) or m.group(0) for m in _HANDLE.finditer(part)]
    return tuple(dict.fromkeys(w for w in map(words, pieces) if w))


def words_match(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Equal (glued or spaced alike), or one's words a subset of the other's with only generic or describing
    words left over; a name of such words alone matches only itself.

    >>> words_match(("kafka",), ("kafka", "topic")), words_match(("cart",), ("redis", "cart"))
    (True, False)
    """
    if "".join(a) == "".join(b):
        return True
    sa, sb = set(a), set(b)
    if not sa - GENERIC - DESCRIPTORS or not sb - GENERIC - DESCRIPTORS:
        return False
    loose = GENERIC | DESCRIPTORS
    return (sa <= sb and sb - sa <= loose) or (sb <= sa and sa - sb <= loose)


def names_match(a: str, b: str) -> bool:
    return any(words_match(x, y) for x in variants(a) for y in variants(b))


def any_match(ours: list[str], gold: str) -> bool:
    return any(names_match(name, gold) for name in ours)


def chain_links(source: str, target: str) -> list[tuple[str, str]]:
    """A gold dependency's (from, to) pairs: 'A -> B -> C' gives A→B, A→C and B→C.

    >>> chain_links("www.gov.uk", "www-cdn -> Fastly")
    [('www.gov.uk', 'www-cdn'), ('www.gov.uk', 'Fastly'), ('www-cdn', 'Fastly')]
    """
    nodes = [n.strip() for n in f"{source} -> {target}".split("->") if n.strip()]
    return [(nodes[i], nodes[j]) for i in range(len(nodes)) for j in range(i + 1, len(nodes))]


def gold_patterns(entity: str) -> set[str]:
    """The CODEOWNERS path patterns a gold ownership entity names (in backticks or starting with '/')."""
    found = re.findall(r"`([^`]+)`", entity) + re.findall(r"(?<![\w`])(/[\w.*/-]+)", entity)
    return {p.lstrip("/") or "/" for p in found}


def pattern_key(pattern: str) -> str:
    return pattern.strip().lstrip("/") or "/"


# ------------------------------------------------------------------ texts

def content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", fold(text)) if w not in STOP_WORDS and len(w) > 1}


def overlap(gold: str, ours: str) -> float:
    """Share of the gold text's content words that `ours` contains."""
    want = content_words(gold)
    return len(want & content_words(ours)) / len(want) if want else 0.0


def status_word(status: str) -> str:
    """'Superseded (⌛️) by 036' -> 'superseded'."""
    found = re.findall(r"[a-z]+", fold(status))
    return found[0] if found else ""


def iso_dates(text: str) -> list[str]:
    return re.findall(r"\b\d{4}-\d{2}-\d{2}\b", text)


def gold_names(gold: dict[str, Any], system: str) -> frozenset[str]:
    """One-word names the system's gold items use (dependency ends, owned things and owners, affected
    systems), so that key_terms knows 'cart' or 'flagd' for names although they are lower case."""
    texts = [end for d in gold["dependencies"] if d["system"] == system
             for link in chain_links(d["from"], d["to"]) for end in link]
    texts += [t for o in gold["ownership"] if o["system"] == system for t in (o["entity"], *o["owners"])]
    texts += [a for i in gold["incidents"] if i["system"] == system for a in i["affected_systems"]]
    return frozenset(v[0] for t in texts for v in variants(t)
                     if len(v) == 1 and v[0] not in GENERIC | STOP_WORDS and not v[0].isdigit())


def key_terms(answer: str, names: frozenset[str] = frozenset()) -> list[str]:
    """Names, numbers and capitalised or code-like words of a gold answer, once each (case folded): a
    word is a name when it is capitalised or one of `names` (gold_names); a possessive 's goes, and a
    plain capitalised word opening a sentence is skipped (Moving, Both, Since).

    >>> key_terms("Checkout calls cart over gRPC, and v1.11.0 via @open-telemetry/demo-approvers in Kafka's queue.",
    ...           frozenset({"cart"}))
    ['cart', 'gRPC', 'v1.11.0', '@open-telemetry/demo-approvers', 'Kafka']
    """
    out: dict[str, str] = {}
    for match in re.finditer(r"[@\w][\w@./:+#*'’-]*", answer):
        token = re.sub(r"['’]s$", "", match.group(0).strip(".,;:!?'\"-"))
        if len(token) < 2 or token.lower() in STOP_WORDS | {"e.g", "i.e", "etc"}:
            continue
        code_like = any(c.isdigit() for c in token) or any(c in token for c in "@/_.:*#+-")
        before = answer[:match.start()].rstrip()
        opening = not before or before[-1] in ".;!?("
        if opening and not code_like and token[:1].isupper() and token[1:].islower():
            continue
        if code_like or any(c.isupper() for c in token) or " ".join(words(token)) in names:
            out.setdefault(token.lower(), token)
    return list(out.values())


@dataclass
class Verdict:
    verdict: str  # right | partly | wrong
    terms: list[str]
    found_terms: list[str]
    gold_sources: list[str]  # returned sources that are gold support files


def judge(answer: str, sources: list[str], gold_answer: str, support: list[str],
          names: frozenset[str] = frozenset()) -> Verdict:
    """'right' when answer + cited sources hold at least half of the gold answer's key terms (as whole words,
    case folded) AND a returned source is a gold support file; 'partly' when one of the two holds; else 'wrong'."""
    terms = key_terms(gold_answer, names)
    haystack = fold(" ".join([answer, *sources]))
    found = [t for t in terms if re.search(rf"(?<!\w){re.escape(fold(t))}(?!\w)", haystack)]
    cited = sorted(set(sources) & set(support))
    hits = int(bool(terms) and 2 * len(found) >= len(terms)) + int(bool(cited))
    return Verdict(("wrong", "partly", "right")[hits], terms, found, cited)
