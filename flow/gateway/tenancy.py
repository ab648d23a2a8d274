"""Bind a request body to its caller's user before it reaches a processor.

Processors keep every user's collections, documents and explain traces apart by the `user`
field of each request. Behind an authenticating gateway that field is not the caller's to
choose: it is set from the token, and a body that names somebody else is refused rather than
silently rewritten. Upstream clients call the same thing `workspace`, and send the placeholder
workspace `default` when they have not been told better: for a bound caller that means "my own".
"""

from __future__ import annotations

from typing import Any

from tracegraph.flow.gateway.auth import Identity

# Objects inside a request body that carry their own owner (librarian metadata, bulk imports).
NESTED_OWNERS = ("document-metadata", "document_metadata", "processing-metadata", "processing_metadata", "metadata")
OWNER_KEYS = ("user", "workspace")
PLACEHOLDER_WORKSPACE = "default"
OPEN_CALLER = "admin"  # who acts on an open gateway, where every (loopback) caller is trusted as an admin


class AccessDenied(Exception):
    """The body names a user other than the caller."""


def _named(owner: dict[str, Any]) -> set[str]:
    names = set()
    if isinstance(owner.get("user"), str) and owner["user"]:
        names.add(owner["user"])
    workspace = owner.get("workspace")
    if isinstance(workspace, str) and workspace and workspace != PLACEHOLDER_WORKSPACE:
        names.add(workspace)
    return names


def _claimed(body: dict[str, Any]) -> set[str]:
    """The users a body (and its nested owners) names."""
    claimed = _named(body)
    for key in NESTED_OWNERS:
        if isinstance(body.get(key), dict):
            claimed |= _named(body[key])
    return claimed


def _with_user(body: dict[str, Any], user: str) -> dict[str, Any]:
    bound = {**body, "user": user}
    for key in NESTED_OWNERS:
        if isinstance(body.get(key), dict):
            bound[key] = {**body[key], "user": user}
    return bound


def bind_user(body: dict[str, Any], identity: Identity, workspace: str | None = None) -> dict[str, Any]:
    """`body` with `user` set to the caller's user everywhere it appears.

    On an open gateway the caller may pick the user (`user`, else `workspace`, else the
    envelope's workspace). Bound callers may only name themselves.

    >>> bind_user({"query": "q"}, Identity("alice"))
    {'query': 'q', 'user': 'alice'}
    >>> bind_user({"query": "q", "workspace": "bob"}, Identity(None))["user"]
    'bob'
    >>> bind_user({"query": "q", "workspace": "default"}, Identity("alice"))["user"]
    'alice'
    >>> bind_user({"user": "bob"}, Identity("alice"))
    Traceback (most recent call last):
    ...
    tracegraph.flow.gateway.tenancy.AccessDenied: user 'alice' may not act for user 'bob'
    """
    claimed = _claimed(body) | _named({"workspace": workspace})
    if identity.user is None:
        chosen = body.get("user") or body.get("workspace") or workspace
        return _with_user(body, chosen) if isinstance(chosen, str) and chosen else body
    others = sorted(claimed - {identity.user})
    if others:
        raise AccessDenied(f"user {identity.user!r} may not act for user {others[0]!r}")
    return _with_user(body, identity.user)


def caller_name(identity: Identity) -> str:
    """Who is acting, for a record such as a review's `reviewer`: the token's user, else `admin`.

    >>> caller_name(Identity("alice")), caller_name(Identity(None))
    ('alice', 'admin')
    """
    return identity.user or OPEN_CALLER
