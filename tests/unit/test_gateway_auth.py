"""Tokens to users, and bodies bound to their caller's user."""

import hashlib

import pytest
from pydantic import SecretStr

from tracegraph.base.errors import ConfigError
from tracegraph.base.settings import RuntimeSettings
from tracegraph.flow.gateway.auth import OPEN, Authenticator, Identity, read_token_file
from tracegraph.flow.gateway.tenancy import AccessDenied, bind_user


def test_open_gateway_trusts_the_request(tmp_path):
    auth = Authenticator.from_settings(RuntimeSettings(data_dir=tmp_path))
    assert not auth.required
    assert auth.from_header(None) is OPEN
    assert bind_user({"user": "bob", "collection": "c"}, OPEN) == {"user": "bob", "collection": "c"}


def test_secret_belongs_to_the_default_admin(tmp_path):
    auth = Authenticator.from_settings(RuntimeSettings(data_dir=tmp_path, gateway_secret=SecretStr("s3")))
    assert auth.required
    assert auth.from_header("Bearer s3") == Identity("default", admin=True)
    assert auth.from_header("bearer  s3 ") == Identity("default", admin=True)
    for refused in (None, "", "Bearer", "Bearer s4", "s3", "Basic s3"):
        assert auth.from_header(refused) is None, refused


def test_token_file_gives_each_user_a_token(tmp_path):
    hashed = hashlib.sha256(b"bob-token").hexdigest()
    path = tmp_path / "tokens"
    path.write_text(f"# user token [admin]\nalice alice-token admin\n\nbob sha256:{hashed}  # stored hashed\n")
    auth = Authenticator.from_settings(RuntimeSettings(data_dir=tmp_path, gateway_tokens=path))
    assert auth.identify("alice-token") == Identity("alice", admin=True)
    assert auth.identify("bob-token") == Identity("bob", admin=False)
    assert auth.identify(f"sha256:{hashed}") is None  # the hash itself is not a token
    assert auth.users == 2


@pytest.mark.parametrize("text, complaint", [
    ("alice\n", "expected '<user> <token> [admin]'"),
    ("alice t1 root\n", "expected '<user> <token> [admin]'"),
    ("alice t1\nbob t1\n", "already given to user 'alice'"),
    ("alice sha256:zz\n", "64 hex digits"),
    ("# nothing\n", "holds no tokens"),
])
def test_bad_token_files_are_refused_with_the_line(tmp_path, text, complaint):
    path = tmp_path / "tokens"
    path.write_text(text)
    with pytest.raises(ConfigError, match=complaint.replace("[", r"\[").replace("]", r"\]")):
        read_token_file(path)


def test_missing_token_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="cannot read the gateway token file"):
        read_token_file(tmp_path / "absent")


def test_bound_caller_cannot_name_another_user_anywhere():
    alice = Identity("alice", admin=False)
    assert bind_user({"query": "q", "user": "alice"}, alice)["user"] == "alice"
    assert bind_user({"workspace": "default"}, alice)["user"] == "alice"  # upstream clients' placeholder
    for body in ({"user": "bob"}, {"workspace": "bob"},
                 {"document-metadata": {"user": "bob", "title": "t"}},
                 {"processing-metadata": {"user": "bob"}}, {"metadata": {"user": "bob"}}):
        with pytest.raises(AccessDenied, match="'alice' may not act for user 'bob'"):
            bind_user(body, alice)
    with pytest.raises(AccessDenied):
        bind_user({"query": "q"}, alice, workspace="bob")


def test_binding_reaches_nested_owners():
    bound = bind_user({"operation": "add-document", "document-metadata": {"title": "t"}, "metadata": {"id": "x"}},
                      Identity("alice"))
    assert bound["user"] == bound["document-metadata"]["user"] == bound["metadata"]["user"] == "alice"
