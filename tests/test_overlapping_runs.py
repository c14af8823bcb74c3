"""Overlapping runs: one writer at a time per warehouse and per reports folder. A second run waits for the first
(saying who holds the lock) or gives up with a clear message; a killed run's lock is released by the kernel; and
the next run undoes a killed run's half-done publish without ever restoring a copy older than the last committed
run. Whole runs are real `hweval run` processes, checked afterwards by ops.runs and reports/ agreeing."""

import datetime as dt
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import duckdb
import pytest
from conftest import AS_OF, RUN_ID
from test_fault_injection import last_good, published  # noqa: F401  (last_good is a fixture)

from flows import publish_journal, runlock

# whole runs in their own processes, killed or overlapping: `make test-slow` and CI run them (see README)
pytestmark = pytest.mark.slow

HOLDER = """import sys
from pathlib import Path
from flows import runlock
with runlock.exclusive(Path(sys.argv[1]), Path(sys.argv[2]), float(sys.argv[3]), print):
    print("held", flush=True)
    sys.stdin.read()  # until the test closes stdin, or kills this process
"""
WAIT_LINE = (r"another hweval run \(pid {pid}, started (?:\d{{4}}-\d\d-\d\d )?\d\d:\d\d:\d\d UTC\) holds {path}; "
             r"waiting up to {wait_s} s")


@pytest.fixture
def held(tmp_path):
    """Start a process holding the lock on tmp_path/warehouse/hweval.duckdb and tmp_path/reports; yield it."""
    processes = []

    def start(warehouse_file=tmp_path / "warehouse" / "hweval.duckdb", reports_root=tmp_path / "reports"):
        proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(warehouse_file), str(reports_root), "0"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        processes.append(proc)
        assert proc.stdout.readline() == "held\n"
        return proc

    yield start
    for proc in processes:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def test_a_second_run_waits_for_the_first_then_takes_the_lock(tmp_path, held):
    warehouse_file, reports_root = tmp_path / "warehouse" / "hweval.duckdb", tmp_path / "reports"
    first = held()
    said = []
    started = time.monotonic()  # (before the timer starts: a stall between the two shortened the wait measured)
    threading.Timer(0.5, first.stdin.close).start()  # the first run finishes half a second later
    with runlock.exclusive(warehouse_file, reports_root, 30, said.append):
        waited_s = time.monotonic() - started
        assert first.wait(timeout=5) == 0
        holder = json.loads((tmp_path / "warehouse" / ".hweval.duckdb.lock").read_text())
        assert holder["pid"] == os.getpid()
        assert json.loads((reports_root / ".hweval-reports.lock").read_text())["pid"] == os.getpid()
    assert 0.4 < waited_s < 5
    [line] = said
    assert re.fullmatch(WAIT_LINE.format(pid=first.pid, path=re.escape(str(warehouse_file)), wait_s=30), line)
    # the lock files go with the lock: nothing is left in the warehouse or reports folder
    assert list((tmp_path / "warehouse").iterdir()) == list(reports_root.iterdir()) == []


def test_a_run_told_not_to_wait_names_the_holder_and_how_to_wait(tmp_path, held):
    first = held()
    said = []
    with pytest.raises(runlock.RunLockTimeout) as raised:
        with runlock.exclusive(tmp_path / "warehouse" / "hweval.duckdb", tmp_path / "reports", 0, said.append):
            pytest.fail("got the lock another process holds")
    assert said == []
    assert re.fullmatch(
        rf"another hweval run \(pid {first.pid}, started (?:\d{{4}}-\d\d-\d\d )?\d\d:\d\d:\d\d UTC\) holds "
        rf"{re.escape(str(tmp_path / 'warehouse' / 'hweval.duckdb'))} and this run was told not to wait; nothing was "
        r"changed. Try again when it has finished, or wait longer with --wait SECONDS \(a deployment's "
        r"parameter wait_s, or HWEVAL_LOCK_WAIT_S\)",
        str(raised.value))


def test_a_run_that_waits_too_long_gives_up(tmp_path, held):
    first = held()
    said = []
    started = time.monotonic()
    with pytest.raises(runlock.RunLockTimeout, match=rf"\(pid {first.pid}, .* after 0.6 s of waiting; "):
        with runlock.exclusive(tmp_path / "warehouse" / "hweval.duckdb", tmp_path / "reports", 0.6, said.append):
            pytest.fail("got the lock another process holds")
    assert 0.6 <= time.monotonic() - started < 3
    assert len(said) == 1 and said[0].endswith("; waiting up to 0.6 s")


def test_the_reports_folder_is_locked_too(tmp_path, held):
    """Two warehouses, one reports folder: the second run waits on the reports folder."""
    first = held(warehouse_file=tmp_path / "a" / "hweval.duckdb")
    with pytest.raises(runlock.RunLockTimeout, match=rf"\(pid {first.pid}, .*\) holds {re.escape(str(tmp_path))}"
                                                     r"/reports and this run was told not to wait"):
        with runlock.exclusive(tmp_path / "b" / "hweval.duckdb", tmp_path / "reports", 0, print):
            pytest.fail("got the lock another process holds")
    assert list((tmp_path / "b").iterdir()) == []  # the warehouse lock it took first is released


def test_the_lock_of_a_killed_run_is_released(tmp_path, held):
    first = held()
    first.kill()
    assert first.wait(timeout=5) == -signal.SIGKILL
    lock_file = tmp_path / "warehouse" / ".hweval.duckdb.lock"
    assert json.loads(lock_file.read_text())["pid"] == first.pid  # left behind, but nobody holds it
    with runlock.exclusive(tmp_path / "warehouse" / "hweval.duckdb", tmp_path / "reports", 0, print):
        assert json.loads(lock_file.read_text())["pid"] == os.getpid()
    assert not lock_file.exists()


def test_a_second_lock_in_the_same_process_does_not_get_in(tmp_path):
    warehouse_file, reports_root = tmp_path / "warehouse" / "hweval.duckdb", tmp_path / "reports"
    with runlock.exclusive(warehouse_file, reports_root, 0, print):
        with pytest.raises(runlock.RunLockTimeout, match=rf"\(pid {os.getpid()}, "):
            with runlock.exclusive(warehouse_file, reports_root, 0, print):
                pytest.fail("got the lock this process already holds")


def killed_publish(tmp_path: Path, pid: int) -> tuple[Path, Path]:
    """What a run with `pid`, killed while moving its reports in, leaves: its new warehouse in place with the old one
    beside it, its new dated folder placed, and reports/latest moved aside (the old one) but not yet replaced."""
    warehouse_file, reports_root = tmp_path / "warehouse" / "hweval.duckdb", tmp_path / "reports"
    warehouse_file.parent.mkdir()
    warehouse_file.with_name(f".hweval.duckdb.previous-{pid}").write_text("the last committed warehouse")
    warehouse_file.write_text("the killed run's warehouse")
    (reports_root / "2026-12-01").mkdir(parents=True)
    (reports_root / "2026-12-01" / "index.md").write_text("the killed run's report")
    (reports_root / f".latest.old-{pid}").mkdir()
    (reports_root / f".latest.old-{pid}" / "index.md").write_text("the last committed report")
    (reports_root / f".publish-{pid}.json").write_text(json.dumps({
        "publish_id": "0" * 32, "run_id": "killed", "warehouse": str(warehouse_file), "warehouse_existed": True,
        "placing": {"2026-12-01": False, "latest": True}}))
    return warehouse_file, reports_root


@pytest.mark.parametrize("pid_now", ["another process", "this process"])
def test_recovery_undoes_a_killed_publish_even_when_its_pid_is_in_use_again(tmp_path, pid_now):
    """Under the run lock no other run is publishing: a pid in those names is a dead run's, even if a live process
    (or this one) has that pid now. Skipping it would let the run build on the killed run's half-published warehouse
    and later restore a copy older than what it committed."""
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        pid = sleeper.pid if pid_now == "another process" else os.getpid()
        warehouse_file, reports_root = killed_publish(tmp_path, pid)
        actions = publish_journal.recover_killed_publish(warehouse_file, reports_root)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert actions == [f"restored the warehouse a killed run (pid {pid}) was replacing",
                       "removed reports/2026-12-01, which the killed run had just placed", "restored reports/latest"]
    assert warehouse_file.read_text() == "the last committed warehouse"
    assert (reports_root / "latest" / "index.md").read_text() == "the last committed report"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["hweval.duckdb", "index.md", "latest", "reports",
                                                           "warehouse"]


# Whole runs: each is `hweval run` in its own process, against the test Prefect server.

D1, D2 = dt.date(2026, 12, 1), dt.date(2026, 12, 2)
PAUSE = """import os, sys, time
from pathlib import Path
from flows import publishing, transform

def pause():
    Path(os.environ["HWEVAL_TEST_PAUSED"]).write_text(str(os.getpid()))
    while True:  # until the test kills this process
        time.sleep(1)

if os.environ.get("HWEVAL_TEST_PAUSE_IN") == "build":
    transform.build_models = lambda *args, **kwargs: pause()
elif os.environ.get("HWEVAL_TEST_PAUSE_IN") == "publish":
    real_swap_in = publishing._swap_in

    def paused_swap_in(new, target):
        if target.name == "latest":  # the warehouse and the dated folder are in, reports/latest is moved aside
            old = target.with_name("." + target.name + ".old-" + str(os.getpid()))
            if target.exists():
                os.replace(target, old)
            pause()
        return real_swap_in(new, target)

    publishing._swap_in = paused_swap_in

if os.environ.get("HWEVAL_TEST_HOLD_BUILD_UNTIL"):  # the build waits for the test to say go
    real_build_models = transform.build_models

    def held_build_models(*args, **kwargs):
        while not Path(os.environ["HWEVAL_TEST_HOLD_BUILD_UNTIL"]).exists():
            time.sleep(0.2)
        return real_build_models(*args, **kwargs)

    transform.build_models = held_build_models

from flows.cli import main
sys.exit(main(sys.argv[1:]))
"""


def start_run(root: Path, as_of: dt.date, logs: Path, **env) -> subprocess.Popen:
    """`hweval run --as-of` into root/warehouse and root/reports, in its own process; its output goes to
    `logs`.out and `logs`.err."""
    from prefect.settings import PREFECT_API_URL

    out, err = (open(logs.with_suffix(f".{stream}"), "w") for stream in ("out", "err"))  # noqa: SIM115
    with out, err:
        return subprocess.Popen(
            [sys.executable, "-c", PAUSE, "run", "--as-of", as_of.isoformat(), "--wait", "600",
             "--warehouse", str(root / "warehouse" / "hweval.duckdb"), "--reports", str(root / "reports")],
            env=dict(os.environ, PREFECT_API_URL=PREFECT_API_URL.value(), **env), stdout=out, stderr=err)


def wait_for(condition, what: str, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.2)


def committed_runs(root: Path) -> dict[dt.date, str]:
    con = duckdb.connect(str(root / "warehouse" / "hweval.duckdb"), read_only=True)
    try:
        return dict(con.execute("select as_of, run_id from ops.runs order by as_of").fetchall())
    finally:
        con.close()


def published_run_id(folder: Path) -> str:
    return re.search(r"^Run `([^`]+)`", (folder / "index.md").read_text(), re.MULTILINE).group(1)


def assert_runs_and_reports_agree(root: Path) -> dict[dt.date, str]:
    """Every run in ops.runs has its dated report, naming it; reports/latest is the newest, and reports/latest.json
    names it; no other date is published and nothing private is left behind."""
    runs = committed_runs(root)
    reports = root / "reports"
    assert sorted(p.name for p in reports.iterdir()) == sorted([d.isoformat() for d in runs] + ["latest",
                                                                                               "latest.json"])
    for as_of, run_id in runs.items():
        assert published_run_id(reports / as_of.isoformat()) == run_id
    assert published_run_id(reports / "latest") == runs[max(runs)]
    manifest = publish_journal.read_manifest(reports)
    assert (manifest["latest_run_id"], manifest["latest_as_of"]) == (runs[max(runs)], max(runs).isoformat())
    assert [p.name for p in (root / "warehouse").iterdir()] == ["hweval.duckdb"]
    return runs


def test_two_runs_started_together_run_one_after_the_other(prefect_server, tmp_path):
    # the run that takes the lock first holds it in its build until the other is seen waiting (on a loaded machine
    # the second could otherwise start after the first had finished)
    go = tmp_path / "go"
    runs = {as_of: start_run(tmp_path, as_of, tmp_path / f"run-{as_of}", HWEVAL_TEST_HOLD_BUILD_UNTIL=str(go))
            for as_of in (D1, D2)}
    wait_for(lambda: any("waiting up to 600 s" in (tmp_path / f"run-{as_of}.err").read_text() for as_of in (D1, D2)),
             "one run to wait for the other", timeout_s=300)
    go.touch()
    for as_of, proc in runs.items():
        assert proc.wait(timeout=400) == 0, (tmp_path / f"run-{as_of}.err").read_text()[-3000:]
    errs = {as_of: (tmp_path / f"run-{as_of}.err").read_text() for as_of in (D1, D2)}
    waited = [as_of for as_of, err in errs.items() if re.search(WAIT_LINE.format(
        pid=r"\d+", path=re.escape(str(tmp_path / "warehouse" / "hweval.duckdb")), wait_s=600), err)]
    assert len(waited) == 1, errs
    assert list(assert_runs_and_reports_agree(tmp_path)) == [D1, D2]


@pytest.mark.parametrize("pause_in", ["build", "publish"])
def test_a_run_killed_while_another_waits_loses_nothing_committed(prefect_server, last_good, tmp_path, pause_in):  # noqa: F811
    """Run A holds the lock, paused in its build or half way through its publish; run B waits; A is SIGKILLed.
    B goes on: the golden run committed before A is kept, B is committed and published, nothing of A is."""
    before = published(last_good)
    paused = tmp_path / "a.paused"
    a = start_run(last_good, D1, tmp_path / "a", HWEVAL_TEST_PAUSE_IN=pause_in, HWEVAL_TEST_PAUSED=str(paused))
    try:
        wait_for(paused.exists, f"run A to pause in its {pause_in}")
        b = start_run(last_good, D2, tmp_path / "b")
        wait_for(lambda: "waiting up to 600 s" in (tmp_path / "b.err").read_text(), "run B to wait for run A")
        if pause_in == "build":
            assert published(last_good) == before
        # B is stopped while A is killed and reaped: a dead child not yet reaped still answers `kill -0`, and B
        # would keep what that run rendered as if it were alive
        os.kill(b.pid, signal.SIGSTOP)
    finally:
        a.kill()
        assert a.wait(timeout=10) == -signal.SIGKILL
    os.kill(b.pid, signal.SIGCONT)
    assert b.wait(timeout=400) == 0, (tmp_path / "b.err").read_text()[-3000:]
    runs = assert_runs_and_reports_agree(last_good)
    assert list(runs) == [AS_OF, D2] and runs[AS_OF] == RUN_ID
    assert published_run_id(last_good / "reports" / AS_OF.isoformat()) == RUN_ID
    if pause_in == "publish":
        assert f"restored the warehouse a killed run (pid {a.pid}) was replacing" in (tmp_path / "b.err").read_text()
    # B started while A lived: it finds A's run file once it has the lock A held (flows/run_files.py), and says at
    # which step A died; nothing is left beside the warehouse
    step = {"build": "its build and render", "publish": "its publish"}[pause_in]
    assert re.search(rf"\(pid {a.pid}, started [^)]*\) on \S+ was killed outright during {step} \(it never finished\)",
                     (tmp_path / "b.err").read_text())
