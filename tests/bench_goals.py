"""`make bench`, part 2: issue 15's goals, each as a ratio against its floor measured in the same run.

- P1: `hweval run` on the embedded snapshot against an empty Prefect flow with the same server setup (each in its own
  process, no PREFECT_API_URL: both start Prefect's temporary server), wall time and peak memory (the process's
  maximum resident set). Goal: <= 1.5x on both.
- P4: a re-run of the same as-of date with unchanged inputs against the cold run before it. Goal: <= 0.5x.
- P5: N live sources that each take T seconds to answer (a loopback server that sleeps), through nightly's fetch
  phase with room for all N at once, against T. Goal: <= 1.5x.

Runs alternate (floor, measured, floor, ...) so that a machine getting busier weighs on both; min / median / max over
`--repeat` runs are printed, and PASS or FAIL against each goal. The exit status is 0 either way: a goal not met is a
finding to read, not a broken benchmark.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
HWEVAL = Path(sys.executable).with_name("hweval")
EMPTY_FLOW = textwrap.dedent("""
    from prefect import flow

    @flow(name="empty")
    def empty() -> int:
        return 0

    empty()
""")


def child(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and peak resident MiB of one child process (its own rusage, not the bench's)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    stderr = proc.stderr.read()
    proc.stderr.close()
    if proc.returncode != 0:
        raise SystemExit(f"bench: {' '.join(argv)} exited {proc.returncode}:\n{stderr[-2000:]}")
    return seconds, usage.ru_maxrss / 1024  # ru_maxrss is KiB on Linux


def run_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API")}
    env["PYTHONWARNINGS"] = "ignore"
    return env


def own_prefect_home(tmp: str) -> None:
    """Prefect's temporary servers keep their database under PREFECT_HOME: one of the bench's own, so that another
    Prefect on the machine (a test run, a deployment) neither slows the bench nor is locked by it."""
    os.environ["PREFECT_HOME"] = str(Path(tmp) / "prefect-home")


def spread(values: list[float]) -> str:
    return f"{min(values):.2f} / {statistics.median(values):.2f} / {max(values):.2f}"


def verdict(ratios: list[float], goal: float) -> str:
    return "PASS" if statistics.median(ratios) <= goal else "FAIL"


def p1_and_p4(repeat: int) -> list[tuple[str, list[float], float, str]]:
    env = run_env()
    floor_s, floor_mib, run_s, run_mib, rerun_s = [], [], [], [], []
    with tempfile.TemporaryDirectory(prefix="hweval-bench-") as tmp:
        empty = Path(tmp) / "empty_flow.py"
        empty.write_text(EMPTY_FLOW)
        child([sys.executable, str(empty)], env)  # warm-up: the first server start creates its database
        for n in range(repeat):
            s, mib = child([sys.executable, str(empty)], env)
            floor_s.append(s)
            floor_mib.append(mib)
            target = Path(tmp) / f"run{n}"
            argv = [str(HWEVAL), "run", "--as-of", "2026-11-30", "--warehouse", str(target / "w.duckdb"),
                    "--reports", str(target / "reports")]
            s, mib = child(argv, env)
            run_s.append(s)
            run_mib.append(mib)
            s, _ = child(argv, env)  # the same date again, nothing changed
            rerun_s.append(s)
            print(f"  repeat {n + 1}: empty flow {floor_s[-1]:.1f} s {floor_mib[-1]:.0f} MiB; "
                  f"run {run_s[-1]:.1f} s {run_mib[-1]:.0f} MiB; re-run {rerun_s[-1]:.1f} s", flush=True)
    time_ratios = [r / f for r, f in zip(run_s, floor_s, strict=True)]
    memory_ratios = [r / f for r, f in zip(run_mib, floor_mib, strict=True)]
    rerun_ratios = [r / c for r, c in zip(rerun_s, run_s, strict=True)]
    return [
        ("P1 make run / empty flow, time", time_ratios, 1.5,
         f"run {spread(run_s)} s against {spread(floor_s)} s"),
        ("P1 make run / empty flow, peak memory", memory_ratios, 1.5,
         f"run {spread(run_mib)} MiB against {spread(floor_mib)} MiB"),
        ("P4 unchanged re-run / cold run", rerun_ratios, 0.5,
         f"re-run {spread(rerun_s)} s against {spread(run_s)} s (nothing is reused yet: issue 15 item 3)"),
    ]


class SlowServer:
    """Azure Retail Prices on 127.0.0.1: every request answered after `delay_s` with one item of its region."""

    def __init__(self, delay_s: float):
        delay = delay_s

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                time.sleep(delay)
                body = (b'{"BillingCurrency": "USD", "Items": [], "NextPageLink": null, "Count": 0}')
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.httpd.server_address[1]}/api/retail/prices"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def p5(repeat: int, sources: int, delay_s: float) -> tuple[str, list[float], float, str]:
    from prefect import flow

    from flows.catalog import load_catalog
    from flows.nightly import fetch_all

    server = SlowServer(delay_s)
    phases: list[float] = []
    with tempfile.TemporaryDirectory(prefix="hweval-bench-") as tmp:
        catalogs = Path(tmp) / "catalogs"
        import shutil

        shutil.copytree(ROOT / "catalogs", catalogs)
        path = catalogs / "sources.yaml"
        declared = yaml.safe_load(path.read_text())
        declared["mode"] = "live"
        declared["fetch_concurrency"] = {"azure": sources}
        declared["sources"] = {f"azure_{n}": {"kind": "azure_retail", "description": f"region r{n}",
                                              "live": {"regions": [f"r{n}"], "endpoint": server.endpoint}}
                               for n in range(1, sources + 1)}
        path.write_text(yaml.safe_dump(declared, sort_keys=False))
        catalog = load_catalog(catalogs)

        @flow(name="bench-fetch-phase")
        def phase() -> float:
            start = time.perf_counter()
            batches = fetch_all(catalog, list(catalog.sources.sources))
            assert all(b.error is None for b in batches), [b.error for b in batches]
            return time.perf_counter() - start

        for _ in range(repeat):
            phases.append(phase())
    server.close()
    return (f"P5 fetch phase of {sources} sources / one source's {delay_s:g} s", [p / delay_s for p in phases], 1.5,
            f"phase {spread(phases)} s (one after another: {sources * delay_s:g} s)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each measurement (default 3)")
    parser.add_argument("--sources", type=int, default=7, help="P5: live sources fetched at once (default 7)")
    parser.add_argument("--delay", type=float, default=2.0, help="P5: seconds each source takes (default 2)")
    args = parser.parse_args()
    home = tempfile.TemporaryDirectory(prefix="hweval-bench-prefect-")
    own_prefect_home(home.name)
    print("goals (issue 15): ratios min / median / max over repeats; PASS when the median meets the goal", flush=True)
    results = p1_and_p4(args.repeat)
    results.append(p5(args.repeat, args.sources, args.delay))
    print(f"\n{'goal':<48}{'ratio min / median / max':>28}{'goal':>8}  verdict")
    for name, ratios, goal, detail in results:
        print(f"{name:<48}{spread(ratios):>28}{'<= ' + format(goal, 'g'):>8}  {verdict(ratios, goal)}")
        print(f"{'':<4}{detail}")
    print("P2 (a 1e6-row offer file through a whole run) and P3 (five years of nightly runs) are not measured here yet.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
