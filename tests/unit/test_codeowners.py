"""CODEOWNERS parsing and matching against GitHub's documented semantics (base/architecture/codeowners.py)."""

import doctest

import pytest
import tracegraph.base.architecture.codeowners as codeowners_module
from hypothesis import given, settings
from hypothesis import strategies as st
from tracegraph.base.architecture.codeowners import (
    CodeOwners,
    Owner,
    Rule,
    matches,
    owner,
    parse,
)

REALISTIC = """\
# Corvid monorepo owners
*                                  @corvid/platform
/services/                         @corvid/backend
/services/skyline/                 @corvid/grid-analytics @ada-kern
/services/skyline/migrations/      @corvid/data
*.sql                              dba@corvid.example
/services/skyline/README.md        @corvid/docs  # docs team reviews the readme
/services/skyline/vendor/
/services/tidewater/               @corvid/ocean
/services/tidewater/*              @corvid/ocean-leads
/services/tidewater/               @corvid/ocean-core
"""


def handles(rule: Rule | None) -> list[str] | None:
    return None if rule is None else [each.handle for each in rule.owners]


def test_doctests_pass():
    result = doctest.testmod(codeowners_module)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize(("handle", "expected"), [
    ("@corvid/grid-analytics", Owner("@corvid/grid-analytics", "team", "grid-analytics team")),
    ("@corvid/platform-team", Owner("@corvid/platform-team", "team", "platform-team")),
    ("@ada-kern", Owner("@ada-kern", "person", "ada-kern")),
    ("ada@corvid.example", Owner("ada@corvid.example", "person", "ada@corvid.example")),
    ("corvid-team", None),
    ("@", None),
    ("@corvid/", None),
    ("@corvid/a/b", None),
    ("ada@corvid", None),
    ("#comment", None),
])
def test_owner_handles(handle, expected):
    assert owner(handle) == expected


def test_later_line_wins():
    rules = parse("*.py @corvid/python\nservices/ @corvid/backend\n")
    assert handles(rules.rule_for("services/api.py")) == ["@corvid/backend"]
    assert handles(rules.rule_for("tools/build.py")) == ["@corvid/python"]
    assert rules.rule_for("README.md") is None


def test_unowned_later_line_clears_owners():
    rules = parse("/apps/ @octocat\n/apps/github\n")
    assert handles(rules.rule_for("apps/web/index.js")) == ["@octocat"]
    cleared = rules.rule_for("apps/github/main.go")
    assert cleared is not None and cleared.line == 2 and cleared.owners == ()


@pytest.mark.parametrize(("pattern", "path", "expected"), [
    ("*", "README.md", True),
    ("*", "a/b/c.txt", True),
    ("*.js", "web/app.js", True),
    ("*.js", "web/app.jsx", False),
    ("*.js", "web/app.JS", False),                 # case-sensitive
    ("docs/*", "docs/getting-started.md", True),
    ("docs/*", "docs/build-app/troubleshooting.md", False),
    ("docs/*", "guide/docs/intro.md", False),      # an inner / anchors at the root
    ("/docs/", "docs/a/b/c.md", True),
    ("/docs/", "src/docs/a.md", False),
    ("/docs/", "docs", False),                     # a trailing / matches a directory, not a file
    ("apps/", "deep/down/apps/x.js", True),        # no other slash: a name at any depth
    ("apps/", "apps", False),
    ("Makefile", "tools/Makefile", True),
    ("Makefile", "tools/Makefile.am", False),
    ("logs", "build/logs/app.log", True),          # a matched directory brings what is under it
    ("**/logs", "deeply/nested/logs/app.log", True),
    ("**/logs", "logs/app.log", True),
    ("**/logs", "catalogs/x", False),
    ("src/**/test.py", "src/test.py", True),
    ("src/**/test.py", "src/a/b/test.py", True),
    ("src/**/test.py", "lib/src/a/test.py", False),
    ("src/**", "src/a/b.py", True),
    ("src/**", "src", False),
    ("src/*/main.go", "src/cmd/main.go", True),
    ("src/*/main.go", "src/cmd/sub/main.go", False),   # * does not cross /
    ("file?.txt", "file1.txt", True),
    ("file?.txt", "file12.txt", False),
    ("file?.txt", "file/.txt", False),
    ("/build/logs/", "build/logs/x/y.log", True),
    ("/build/logs/", "x/build/logs/y.log", False),
    ("a.b", "axb", False),                         # regex characters are literal
    ("#notes.md", "#notes.md", True),
    ("/*", "setup.py", True),
    ("/*", "src/setup.py", False),
])
def test_globs(pattern, path, expected):
    assert matches(pattern, path) is expected


@pytest.mark.parametrize(("pattern", "directory", "expected"), [
    ("/services/skyline/", "services/skyline/", True),
    ("services/", "services/skyline/", True),
    ("*", "services/skyline/", True),
    ("*.sql", "services/skyline/", False),
    ("/services/skyline/*", "services/skyline/", False),   # direct files only, not the directory as a whole
    ("/services/skyline/api/", "services/skyline/", False),
])
def test_directory_paths_ask_whether_the_whole_directory_is_covered(pattern, directory, expected):
    assert matches(pattern, directory) is expected


def test_comments_blank_lines_and_trailing_comments():
    rules = parse("# heading\n\n   \n\t# indented comment\n*.js    @js-owner #This is an inline comment.\n"
                  "*.go docs@example.com # two owners? no: # ends them @not-an-owner\n"
                  "/vendor/ # nobody owns vendored code\n")
    assert [(rule.line, rule.pattern, handles(rule)) for rule in rules.rules] == [
        (5, "*.js", ["@js-owner"]), (6, "*.go", ["docs@example.com"]), (7, "/vendor/", [])]
    assert rules.problems == ()


def test_escaped_hash_is_a_pattern_not_a_comment():
    rules = parse("\\#notes.md @ada-kern\n#notes.md @someone-else\n")
    assert [(rule.line, rule.pattern) for rule in rules.rules] == [(1, "#notes.md")]
    assert handles(rules.rule_for("wiki/#notes.md")) == ["@ada-kern"]


def test_malformed_lines_are_reported_and_skipped_while_the_rest_parse():
    text = ("* @corvid/platform\n"
            "/services/ corvid-team\n"
            "!vendor/ @ada-kern\n"
            "Python/ceval*.[ch] @markshannon\n"
            "@ada-kern\n"
            "/docs/ @corvid/docs\n"
            "/data/ @corvid/data @ok ada@corvid\n")
    rules = parse(text)
    assert [(rule.line, rule.pattern) for rule in rules.rules] == [(1, "*"), (6, "/docs/")]
    assert [(problem.line, problem.reason) for problem in rules.problems] == [
        (2, "owner 'corvid-team' is not @user, @org/team or an e-mail address"),
        (3, "negation ('!') is not supported in CODEOWNERS"),
        (4, "character ranges ('[ ]') are not supported in CODEOWNERS"),
        (5, "the line holds only the owner '@ada-kern', no path pattern"),
        (7, "owner 'ada@corvid' is not @user, @org/team or an e-mail address"),
    ]
    assert rules.problems[0].text == "/services/ corvid-team"
    assert handles(rules.rule_for("services/api.py")) == ["@corvid/platform"]  # the bad line owns nothing


def test_problem_text_is_truncated():
    problem = parse("!" + "x" * 500 + " @ada")
    assert len(problem.problems[0].text) == 200


def test_crlf_and_bom_read_like_plain_lf():
    lf = "# owners\n* @corvid/platform\n\n/services/ @corvid/backend\nbad-line nobody\n"
    crlf = "\ufeff" + lf.replace("\n", "\r\n")
    assert parse(crlf) == parse(lf)
    assert parse(crlf).problems[0].text == "bad-line nobody"
    assert parse("\ufeff* @ada").rules[0].pattern == "*"


def test_directory_rule_on_a_realistic_file():
    rules = parse(REALISTIC)
    skyline = rules.directory_rule("services/skyline")
    assert skyline is not None and skyline.line == 4
    assert handles(skyline) == ["@corvid/grid-analytics", "@ada-kern"]
    assert rules.directory_rule("services/skyline/") == skyline
    assert rules.directory_rule("services/skyline/migrations").line == 5
    assert rules.directory_rule("services/skyline/vendor").owners == ()      # explicitly unowned
    assert rules.directory_rule("services/skyline/src/engine").line == 4     # nothing closer
    assert rules.directory_rule("services/harbor").line == 3
    assert rules.directory_rule("tools").line == 2
    assert rules.directory_rule("").line == 2
    assert rules.directory_rule("services/tidewater").line == 11              # last of three lines wins


def test_directory_rule_ignores_extension_and_file_rules_but_takes_direct_file_rules():
    rules = parse("/db/ @corvid/data\n*.sql dba@corvid.example\n/db/schema.txt @ada\n/web/* @corvid/web\n"
                  "/db/? @one-letter-names\n/db/*.* @dotted-names\n")
    assert rules.directory_rule("db").line == 1
    assert rules.directory_rule("web").line == 4
    assert rules.directory_rule("web/static") is None   # `/web/*` does not reach deeper
    assert CodeOwners(()).directory_rule("anything") is None


def test_partial_rules_on_a_realistic_file():
    rules = parse(REALISTIC)
    assert [rule.line for rule in rules.partial_rules("services/skyline")] == [5, 6, 7, 8]
    assert rules.partial_rules("services/skyline/vendor") == []      # covered whole by its own line
    assert [rule.line for rule in rules.partial_rules("services/skyline/migrations")] == [6]
    # line 11 covers tidewater whole, replacing the `*.sql` line before it for paths there
    assert rules.partial_rules("services/tidewater") == []
    # lines 9 and 10 lie wholly under services/tidewater, which line 11 covers
    assert [rule.line for rule in rules.partial_rules("services")] == [4, 5, 6, 7, 8, 11]


def test_partial_rules_leave_out_the_direct_file_rule_and_repeated_patterns():
    rules = parse("* @a\n/web/*.css @css\n/web/api/ @api\n/web/* @web\n/web/*.css @css2\n")
    assert rules.directory_rule("web").line == 4
    assert [rule.line for rule in rules.partial_rules("web")] == [3, 5]


def test_the_index_finds_the_last_match_in_a_large_file():
    lines = ["* @corvid/platform"] + [f"/services/svc{n}/ @corvid/team-{n}" for n in range(3000)]
    lines += ["*.sql dba@corvid.example", "**/generated/", "/services/svc7/*.md @corvid/docs"]
    rules = parse("\n".join(lines))
    assert rules.directory_rule("services/svc2999").line == 3001
    assert rules.rule_for("services/svc12/db/schema.sql").line == 3002
    assert rules.rule_for("services/svc12/generated/x.py").line == 3003
    assert rules.rule_for("services/svc7/README.md").line == 3004
    assert rules.directory_rule("elsewhere/deep").line == 1


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_parse_never_raises(text):
    parsed = parse(text)
    assert all(problem.line >= 1 and len(problem.text) <= 200 for problem in parsed.problems)
    parsed.rule_for("a/b.txt")
    parsed.directory_rule("a")
    parsed.partial_rules("a")


_LINE_PARTS = st.sampled_from(["*", "**", "/", "\\#", "#", "!", "[a]", "a", "b.sql", "*.sql", "?", " ", "\t",
                               "@ada", "@corvid/data", "x@y.io", "bad", "\r\n", "\n", "\ufeff"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINE_PARTS, max_size=40).map("".join))
def test_parse_never_raises_on_codeowners_like_text(text):
    parsed = parse(text)
    lines = text.split("\n")
    assert all(1 <= item.line <= len(lines) for item in (*parsed.rules, *parsed.problems))


_SEGMENTS = st.sampled_from(["a", "b", "*", "**", "*.sql", "a.sql", "?", "x*", "gen"])
_PATTERNS = st.builds(lambda lead, segments, trail: lead + "/".join(segments) + trail,
                      st.sampled_from(["", "/"]), st.lists(_SEGMENTS, min_size=1, max_size=3),
                      st.sampled_from(["", "/"]))
_PATHS = st.lists(st.sampled_from(["a", "b", "a.sql", "c.sql", "gen", "x1", "q"]), min_size=1, max_size=4
                  ).map("/".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(_PATTERNS, min_size=1, max_size=12), _PATHS)
def test_indexed_lookup_agrees_with_scanning_every_rule(patterns, path):
    rules = CodeOwners(tuple(Rule(line, pattern, ()) for line, pattern in enumerate(patterns, start=1)))
    scanned = next((rule for rule in reversed(rules.rules) if matches(rule.pattern, path)), None)
    assert rules.rule_for(path) == scanned


@settings(max_examples=200, deadline=None)
@given(st.text(), st.text())
def test_matches_never_raises(pattern, path):
    assert matches(pattern, path) in (True, False)
