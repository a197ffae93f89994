"""`pytest --cpu-durations=N`: the N tests that cost the most CPU (this process and the child
processes it waited for: servers, CLIs, builds), and the run's total. Unlike --durations, the
figures do not grow with the machine's load, so they say which tests make a loop slow on a quiet
machine wherever they are measured. The quick loop keeps to the cheap ones (docs/development.md)."""

from __future__ import annotations

import resource

import pytest

_START = pytest.StashKey[float]()


def _cpu() -> float:
    me, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def pytest_addoption(parser):
    parser.addoption("--cpu-durations", type=int, default=None, metavar="N",
                     help="show the N tests that cost the most CPU (with their child processes)")


def pytest_configure(config):
    config.stash[_START] = _cpu()
    config._cpu_costs = {}  # nodeid -> CPU seconds over setup, call and teardown


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    start = _cpu()
    yield
    item.config._cpu_costs[item.nodeid] = _cpu() - start


def pytest_terminal_summary(terminalreporter, config):
    n = config.getoption("--cpu-durations")
    if n is None:
        return
    costs = sorted(config._cpu_costs.items(), key=lambda kv: -kv[1])
    total = _cpu() - config.stash[_START]
    terminalreporter.write_sep("=", f"most CPU: {min(n, len(costs))} of {len(costs)} tests")
    for nodeid, seconds in costs[:n]:
        terminalreporter.write_line(f"{seconds:7.2f}s CPU  {nodeid}")
    terminalreporter.write_line(f"the session's CPU: {total:.1f} s (tests {sum(dict(costs).values()):.1f} s)")
