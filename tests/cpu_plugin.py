"""`pytest --cpu-durations=N`: the N tests that cost the most CPU (this process and the child
processes it waited for: servers, CLIs, builds), and the run's total. Unlike --durations, the
figures do not grow with the machine's load, so they say which tests make a loop slow on a quiet
machine wherever they are measured. The quick loop keeps to the cheap ones (docs/development.md).
Works on one process and on pytest-xdist's workers (each report carries its phase's CPU; each
worker sends its session's total when it ends)."""

from __future__ import annotations

import resource

import pytest

_PHASE_START = pytest.StashKey[float]()
_PHASE_CPU = pytest.StashKey[float]()


def _cpu(children: bool = True) -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN) if children else None
    return me.ru_utime + me.ru_stime + (kids.ru_utime + kids.ru_stime if kids else 0.0)


def pytest_addoption(parser):
    parser.addoption("--cpu-durations", type=int, default=None, metavar="N",
                     help="show the N tests that cost the most CPU (with their child processes)")


def pytest_configure(config):
    config._cpu_start = _cpu()
    config._cpu_own_start = _cpu(children=False)
    config._cpu_costs = {}  # nodeid -> CPU seconds over setup, call and teardown
    config._cpu_workers = []  # each pytest-xdist worker's whole session, as it reports it


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    item.stash[_PHASE_START] = _cpu()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    item.stash[_PHASE_START] = _cpu()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item):
    item.stash[_PHASE_START] = _cpu()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    started = item.stash.get(_PHASE_START, None)
    if started is not None:
        # a plain attribute: pytest-xdist carries a report's attributes to the controller
        outcome.get_result().cpu_seconds = _cpu() - started


class _Costs:
    def __init__(self, config):
        self.config = config

    def pytest_runtest_logreport(self, report):
        seconds = getattr(report, "cpu_seconds", None)
        if seconds is not None:
            costs = self.config._cpu_costs
            costs[report.nodeid] = costs.get(report.nodeid, 0.0) + seconds

    @pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: absent without it
    def pytest_testnodedown(self, node, error):  # pytest-xdist's controller: a worker has ended
        total = getattr(node, "workeroutput", {}).get("cpu_total")
        if total is not None:
            self.config._cpu_workers.append(total)


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session):
    session.config.pluginmanager.register(_Costs(session.config), "cpu-costs")


def pytest_sessionfinish(session):
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # a pytest-xdist worker: tell the controller its session's CPU
        workeroutput["cpu_total"] = _cpu() - session.config._cpu_start


def pytest_terminal_summary(terminalreporter, config):
    n = config.getoption("--cpu-durations")
    if n is None or hasattr(config, "workeroutput"):
        return
    costs = sorted(config._cpu_costs.items(), key=lambda kv: -kv[1])
    if config._cpu_workers:  # the controller's own CPU and each worker's (not their sum twice)
        total = _cpu(children=False) - config._cpu_own_start + sum(config._cpu_workers)
    else:
        total = _cpu() - config._cpu_start
    terminalreporter.write_sep("=", f"most CPU: {min(n, len(costs))} of {len(costs)} tests")
    for nodeid, seconds in costs[:n]:
        terminalreporter.write_line(f"{seconds:7.2f}s CPU  {nodeid}")
    workers = f", {len(config._cpu_workers)} workers" if config._cpu_workers else ""
    terminalreporter.write_line(f"the session's CPU: {total:.1f} s (tests {sum(dict(costs).values()):.1f} s{workers})")
