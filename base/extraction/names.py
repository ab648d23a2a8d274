"""Entity names as one thing means them: "the Orders service", "Orders service" and "orders" are the service
Orders; "the Billing squad" is a team, a different entity from the service Billing; "the PostgreSQL database"
is the datastore PostgreSQL. Identity is the name's slug, so case never splits or drops a name."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

EntityKind = Literal["service", "team", "person", "datastore", "library", "platform", ""]

# The last word of a name that says what kind of thing it is, and whether it stays part of the name.
# "Billing team" keeps "team" (the team is not the service Billing); "cart service" drops "service".
KIND_WORDS: dict[str, tuple[EntityKind, bool]] = {
    **{w: ("service", False) for w in (
        "service", "services", "microservice", "svc", "server", "app", "application", "system", "backend",
        "component", "api", "daemon", "worker", "job")},
    **{w: ("team", True) for w in ("team", "squad", "group", "guild", "tribe", "crew", "chapter", "org",
                                   "organisation", "organization", "department", "unit")},
    **{w: ("datastore", False) for w in ("database", "db", "datastore", "cache", "store", "topic", "queue",
                                         "bucket", "table", "index", "stream", "broker")},
    **{w: ("library", False) for w in ("library", "sdk", "package", "module", "framework", "plugin", "extension",
                                       "cli")},
    **{w: ("platform", True) for w in ("cluster", "platform", "environment", "account", "region", "vpc")},
}
_LEADING = frozenset("""the a an this that these those our their its his her my your whose which every each
all both any some no another""".split())
_LEADING_LOWER = frozenset("other such same new old current existing".split())  # "the new X"; not "New York"
_HONORIFICS = frozenset("dr mr mrs ms miss mx prof sir dame lord lady".split())
_GLUED = re.compile(r"([a-z][a-z0-9]{2,}?)[-_]?service")
_WRAPPING = "\"'`´“”‘’«»„*_[](){}<>:;,.!? \t\n"
_POSSESSIVE = re.compile(r"(?<=\w)['’]s$|(?<=s)['’]$")


@dataclass(frozen=True, slots=True)
class Name:
    """A canonical entity name and the kind its words say it is ("" when they say none)."""

    label: str
    kind: EntityKind = ""


def clean(text: str) -> str:
    """`text` without surrounding quotes, emphasis, brackets and punctuation, a possessive "'s", or runs of
    spaces.

    >>> clean(' "**Billing\\'s**" '), clean("`frontend-proxy`"), clean("docs.rs."), clean("Pink Floyd (band)")
    ('Billing', 'frontend-proxy', 'docs.rs', 'Pink Floyd (band)')
    """
    text, before = " ".join(text.split()), None
    while text != before:
        before = text
        text = _POSSESSIVE.sub("", text.strip(_WRAPPING))
        for opening, closing in ("()", "[]"):  # "Pink Floyd (band)" keeps the bracket it opened
            if before.endswith(closing) and text.count(opening) > text.count(closing):
                text += closing
    return text


def canonical_name(text: str) -> Name:
    """The name a phrase gives an entity, and its kind from a kind word at its end.

    >>> canonical_name("the Orders service"), canonical_name("Billing squad")
    (Name(label='Orders', kind='service'), Name(label='Billing squad', kind='team'))
    >>> canonical_name("the PostgreSQL database"), canonical_name("AWS Elasticsearch Service")
    (Name(label='PostgreSQL', kind='datastore'), Name(label='AWS Elasticsearch Service', kind='service'))
    >>> canonical_name("the management EKS cluster"), canonical_name("Service")
    (Name(label='management EKS cluster', kind='platform'), Name(label='Service', kind=''))
    """
    words = clean(text).split()
    while len(words) > 1 and (words[0].lower() in _LEADING or words[0] in _LEADING_LOWER):
        words = words[1:]
    if len(words) >= 3 and words[0].lower().rstrip(".") in _HONORIFICS:  # "Dr. Ada Kern" is Ada Kern; "Mr. Sexxx" stays
        words = words[1:]
    if not words:
        return Name("")
    glued = _GLUED.fullmatch(words[-1])
    if len(words) == 1 and glued:  # "cartservice", "checkout-service": the cart service
        return Name(glued.group(1), "service")
    kind: EntityKind = ""
    last = words[-1]
    found = KIND_WORDS.get(last.lower().strip(".,"))
    if found and len(words) > 1:
        kind, keep = found
        # A lower-case kind word is a description ("the cart service"); a capitalised one after a single word
        # is too ("Quote Service"), but a longer capitalised name keeps it ("AWS Elasticsearch Service").
        drop = not keep and (last.islower() or len(words) == 2)
        if drop:
            words = words[:-1]
    return Name(clean(" ".join(words)), kind)


_HANDLE = re.compile(r"@[A-Za-z0-9][\w.-]*(?:/[\w.-]+)?")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


def handles_in(text: str) -> list[str]:
    """The @handles (`@jdno`, `@org/team`) and e-mail addresses written in `text`, in order."""
    emails = _EMAIL.findall(text)
    bare = _EMAIL.sub(" ", text)
    return [*(m for m in _HANDLE.findall(bare)), *emails]


def handle_matches(handle: str, name: str) -> bool:
    """Whether a handle plausibly names a person by their name parts: `@aruiz`, `@ana-ruiz`, `ana.ruiz@x.org`
    and `@anaruiz` all name Ana Ruiz; `@ruiz` alone does not (a surname is shared).

    >>> [handle_matches(h, "Ana Ruiz") for h in ("@aruiz", "@ana-ruiz", "ana.ruiz@example.org", "@ruiz", "@bob")]
    [True, True, True, False, False]
    """
    local = handle.lstrip("@").split("@")[0].rsplit("/", 1)[-1].lower()
    local = re.sub(r"[^a-z0-9]", "", local)
    parts = [re.sub(r"[^a-z0-9]", "", p.lower()) for p in name.split()]
    parts = [p for p in parts if p]
    if len(parts) < 2 or not local:
        return False
    first, last = parts[0], parts[-1]
    forms = {first + last, first[0] + last, first + last[0], last + first, last + first[0], first[0] + last[0] + last}
    return local in forms or (local.startswith(first) and local.endswith(last))
