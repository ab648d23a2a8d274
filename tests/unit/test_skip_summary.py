"""The end-of-run summary of skipped tests: grouped by reason, counted, silent when nothing was skipped."""

from __future__ import annotations

import pytest

from support.skips import skip_counts, skip_reason

pytest_plugins = ["pytester"]


def skipped(reason: str, where: str = "tests/x.py") -> pytest.TestReport:
    return pytest.TestReport(nodeid=f"{where}::t", location=(where, 1, "t"), keywords={}, outcome="skipped",
                             longrepr=(where, 1, f"Skipped: {reason}"), when="setup")


def passed() -> pytest.TestReport:
    return pytest.TestReport(nodeid="tests/x.py::ok", location=("tests/x.py", 1, "ok"), keywords={},
                             outcome="passed", longrepr=None, when="call")


def test_reasons_are_grouped_and_counted_commonest_first():
    reports = [skipped("no Chromium"), skipped("TG_PULSAR_URL not set", "tests/a.py"),
               skipped("TG_PULSAR_URL not set", "tests/b.py"), passed(), skipped("no Chromium", "tests/c.py"),
               skipped("TG_PULSAR_URL not set", "tests/c.py")]
    assert skip_counts(reports) == [("TG_PULSAR_URL not set", 3), ("no Chromium", 2)]
    assert skip_reason(skipped("no RabbitMQ at 127.0.0.1:5672")) == "no RabbitMQ at 127.0.0.1:5672"
    assert skip_counts([passed()]) == []


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A throwaway test project whose conftest uses the summary as ours does."""
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makeconftest("""
        from support.skips import write_skip_summary

        def pytest_terminal_summary(terminalreporter):
            write_skip_summary(terminalreporter)
    """)
    return pytester


def test_a_run_ends_with_one_line_per_skip_reason(project: pytest.Pytester):
    project.makepyfile("""
        import pytest

        @pytest.mark.parametrize("n", range(3))
        def test_browser(n):
            pytest.skip("no Chromium; install chromium or set TG_REQUIRE_BROWSER=1")

        @pytest.mark.skipif(True, reason="TG_PULSAR_URL not set")
        def test_pulsar():
            pass

        def test_runs():
            pass
    """)
    result = project.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, skipped=4)
    result.stdout.fnmatch_lines(["*4 skipped, by reason*",
                                 "    3  no Chromium; install chromium or set TG_REQUIRE_BROWSER=1",
                                 "    1  TG_PULSAR_URL not set"])


def test_a_run_without_skips_prints_no_summary(project: pytest.Pytester):
    project.makepyfile("def test_runs():\n    pass\n")
    result = project.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "skipped, by reason" not in result.stdout.str()
