"""Who is calling: bearer tokens mapped to users, so every request can be bound to one user.

Three regimes, chosen by settings:
- no secret and no token file: open, for loopback only; a request may name any user;
- `TG_GATEWAY_SECRET`: one token, for the user `default`;
- `TG_GATEWAY_TOKENS`: a file of `<user> <token> [admin]` lines, one token per user. A token may
  be written as `sha256:<hex>` so that the file need not hold it in the clear.
Changing the config or the flows is for admins (the secret's user is one); reading is for all.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from tracegraph.base.errors import ConfigError
from tracegraph.base.settings import RuntimeSettings

SECRET_USER = "default"


@dataclass(frozen=True)
class Identity:
    """The caller. `user` None means an open gateway: the request's own `user` field is trusted."""

    user: str | None
    admin: bool = True

    @property
    def bound(self) -> bool:
        return self.user is not None


OPEN = Identity(None)  # the open regime trusts loopback callers with everything


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def read_token_file(path: Path) -> dict[bytes, Identity]:
    """sha256(token) → identity, from `<user> <token> [admin]` lines; `#` starts a comment.

    >>> import tempfile, os
    >>> f = tempfile.NamedTemporaryFile("w", delete=False); _ = f.write("alice s3cret admin # ops\\n"); f.close()
    >>> list(read_token_file(Path(f.name)).values()); os.unlink(f.name)
    [Identity(user='alice', admin=True)]
    """
    try:
        lines = path.read_text().splitlines()
    except OSError as exc:
        raise ConfigError(f"cannot read the gateway token file {path}: {exc.strerror}") from None
    tokens: dict[bytes, Identity] = {}
    for number, line in enumerate(lines, 1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        if len(fields) not in (2, 3) or fields[2:] not in ([], ["admin"]):
            raise ConfigError(f"{path}:{number}: expected '<user> <token> [admin]'")
        user, token = fields[:2]
        try:
            digest = bytes.fromhex(token.removeprefix("sha256:")) if token.startswith("sha256:") else _digest(token)
        except ValueError:
            raise ConfigError(f"{path}:{number}: 'sha256:' must be followed by 64 hex digits") from None
        if digest in tokens:
            raise ConfigError(f"{path}:{number}: this token is already given to user {tokens[digest].user!r}")
        tokens[digest] = Identity(user, admin=len(fields) == 3)
    if not tokens:
        raise ConfigError(f"the gateway token file {path} holds no tokens")
    return tokens


class Authenticator:
    """Maps a presented token to an Identity (or None: refused)."""

    def __init__(self, tokens: dict[bytes, Identity] | None) -> None:
        self._tokens = tokens  # None: the open regime

    @classmethod
    def from_settings(cls, settings: RuntimeSettings) -> "Authenticator":
        tokens: dict[bytes, Identity] = {}
        if settings.gateway_tokens is not None:
            tokens.update(read_token_file(settings.gateway_tokens))
        if settings.gateway_secret is not None:
            tokens[_digest(settings.gateway_secret.get_secret_value())] = Identity(SECRET_USER, admin=True)
        return cls(tokens or None)

    @property
    def required(self) -> bool:
        return self._tokens is not None

    @property
    def users(self) -> int:
        return len({i.user for i in self._tokens.values()}) if self._tokens else 0

    def identify(self, token: str | None) -> Identity | None:
        if self._tokens is None:
            return OPEN
        if not token:
            return None
        # Looking up the token's hash leaks nothing useful through timing: a near-miss token has an unrelated hash.
        return self._tokens.get(_digest(token))

    def from_header(self, header: str | None) -> Identity | None:
        """The identity behind an `Authorization: Bearer <token>` header."""
        token = (header or "").strip()
        if token[:7].lower() == "bearer ":
            token = token[7:].strip()
        elif token:
            return None if self.required else OPEN
        return self.identify(token)
