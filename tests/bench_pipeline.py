"""`make bench`: time each pipeline stage on a synthetic price list, as ratios against a baseline in the same process.

The baseline is the irreducible cost of reading the input: `json.loads` of every PriceList item. Each stage is
reported as a multiple of it, so the figures compare across machines; absolute seconds are printed beside them.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import bench_goals  # noqa: E402
from builders import aws_page, aws_product  # noqa: E402

import offer_file_builder  # noqa: E402

from flows import checks, publishing, transform, warehouse  # noqa: E402
from flows.catalog import load_catalog  # noqa: E402
from flows.land import land_batch, prepare_warehouse
from flows.source_batches import SourceBatch
from flows.paths import PROJECT_ROOT  # noqa: E402
from flows.sources import aws_offer_file, aws_pricing  # noqa: E402

AS_OF = dt.date(2026, 11, 30)
TYPES = ["p5.48xlarge", "p5en.48xlarge", "p4d.24xlarge", "g6e.12xlarge", "trn1.32xlarge", "inf2.48xlarge"]
# the accelerators each lists in the Price List's `gpu` attribute (a whole run checks it against the instance types
# EC2 lists: a wrong count is quarantined)
GPUS = {"p5.48xlarge": "8", "p5en.48xlarge": "8", "p4d.24xlarge": "8", "g6e.12xlarge": "4", "trn1.32xlarge": "16",
        "inf2.48xlarge": "12"}
RESERVED = [(length, option, "10.0000000000", None if option == "No Upfront" else "43800")
            for length in ("1yr", "3yr") for option in ("No Upfront", "Partial Upfront", "All Upfront")]


def synthetic_pages(products: int, per_page: int = 100) -> list[tuple[str, dict]]:
    items = [aws_product(TYPES[i % len(TYPES)], f"{10 + i % 97}.0000000000", region=f"region-{i // len(TYPES)}",
                         sku=f"SKU{i:013d}", reserved=RESERVED, gpu=GPUS[TYPES[i % len(TYPES)]])
             for i in range(products)]
    return [(f"page {n}", aws_page(*items[n:n + per_page])) for n in range(0, len(items), per_page)]


def timed(fn, repeat: int = 1):
    """The result and the best wall time of `repeat` calls (stages that write run once)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return result, best


def whole_run(pages: list[tuple[str, dict]]) -> tuple[float, float, str]:
    """`hweval run` on the embedded snapshot with `pages` in place of aws_pricing's (one file a page), in a process
    of its own with its temporary Prefect server: wall seconds, the peak of the summed PSS of its processes (the
    Prefect server and the workers it starts included: bench_goals.TreeMemory), and the line it ends with."""
    home = os.environ.get("PREFECT_HOME")
    with tempfile.TemporaryDirectory(prefix="hweval-bench-") as tmp:
        bench_goals.own_prefect_home(tmp)
        env = bench_goals.run_env() | {"HWEVAL_CACHE": str(Path(tmp) / "cache")}
        empty = Path(tmp) / "empty_flow.py"
        empty.write_text(bench_goals.EMPTY_FLOW)
        bench_goals.child([sys.executable, str(empty)], env)  # the first server start creates its database: untimed
        argv = [str(bench_goals.HWEVAL), "run", "--as-of", AS_OF.isoformat(), "--warehouse", str(Path(tmp) / "w.duckdb"),
                "--reports", str(Path(tmp) / "reports")]
        for n, (_, page) in enumerate(pages):
            path = Path(tmp) / f"aws-pricing-page-{n}.json"
            path.write_text(json.dumps(page))
            argv += ["--source", f"aws_pricing={path}@{AS_OF}"]
        out = Path(tmp) / "run.txt"
        seconds, peak_mib, _ = bench_goals.child(argv, env, stdout=out)
        summary = next((line for line in out.read_text().splitlines() if line.startswith("run ")), None)
        if summary is None:
            raise SystemExit(f"bench: the whole run printed no `run ...` line:\n{out.read_text()[-2000:]}")
    if home is None:  # the bench's own Prefect home went with its folder
        os.environ.pop("PREFECT_HOME", None)
    else:
        os.environ["PREFECT_HOME"] = home
    return seconds, peak_mib, summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--products", type=int, default=5000, help="synthetic products (each ~19 price rows)")
    parser.add_argument("--offer-file-lines", type=int, default=500_000, help="lines of the synthetic offer file")
    args = parser.parse_args()
    catalog = load_catalog(PROJECT_ROOT / "catalogs")
    pages = synthetic_pages(args.products)
    run_s, run_mib, run_summary = whole_run(pages)

    _, baseline = timed(lambda: sum(1 for _, page in pages for item in page["PriceList"] if json.loads(item)), repeat=3)
    rows, parse = timed(lambda: aws_pricing.rows_from_pages(pages), repeat=3)
    batch = SourceBatch.of_rows("bench", "aws_pricing", "aws_pricing", ["bench"], AS_OF,
                        [r | {"row_no": i, "source_id": "bench", "data_as_of": AS_OF} for i, r in enumerate(rows)])
    with tempfile.TemporaryDirectory() as tmp:
        con = warehouse.connect(Path(tmp) / "bench.duckdb")
        warehouse.apply_ddl(con)
        prepare_warehouse(con, catalog, AS_OF)
        # one row landed first, untimed: Great Expectations' process starts and imports GX (an empty batch starts none)
        land_batch(con, SourceBatch.of_rows("warm", "aws_pricing", "aws_pricing", [], AS_OF,
                                            [rows[0] | {"row_no": 0, "source_id": "warm", "data_as_of": AS_OF}]),
                   "bench", AS_OF, catalog)
        _, derive = timed(lambda: checks.add_check_columns([batch], catalog, con))
        _, land = timed(lambda: land_batch(con, batch, "bench", AS_OF, catalog))
        _, build = timed(lambda: transform.build_models(con, "bench", AS_OF))
        # the report pages, CSVs and charts of that market, drawn anew (a chart cache of the bench's own, empty)
        os.environ["HWEVAL_CACHE"] = str(Path(tmp) / "chart-cache")
        written, render = timed(lambda: publishing.render_reports_to(con, AS_OF, Path(tmp) / "reports"))
        # a workload page's lists are bounded (flows/reports.py), as is offers.md (flows/offers_page.py: one row per
        # instance type; every offer is in offers.csv); index.md and estimates.md are short
        workload_pages = [p for p in written if p.suffix == ".md" and p.name not in ("index.md", "offers.md",
                                                                                     "estimates.md")]
        largest = max(workload_pages, key=lambda p: p.stat().st_size)
        largest_kb, reports_mb = largest.stat().st_size / 1e3, sum(p.stat().st_size for p in written) / 1e6
        offers_kb = (Path(tmp) / "reports" / "offers.md").stat().st_size / 1e3
        con.close()

    print(f"{len(rows):,} price rows from {args.products:,} products on {len(pages)} pages")
    print(f"{'stage':<32}{'seconds':>10}{'x baseline':>12}")
    for name, seconds in [("baseline: json.loads of items", baseline), ("parse into rows", parse),
                          ("derive multi-row checks", derive), ("validate (GX) + land", land),
                          ("build staging -> marts", build), ("render the reports", render)]:
        print(f"{name:<32}{seconds:>10.3f}{seconds / baseline:>12.1f}")
    print(f"reports: {len(written)} files, {reports_mb:,.1f} MB (mostly each workload's full ranking as CSV); the "
          f"largest workload page {largest.name}, {largest_kb:,.0f} KB; offers.md {offers_kb:,.0f} KB")
    print(f"{'whole hweval run (own process)':<32}{run_s:>10.3f}{run_s / baseline:>12.1f}")
    print(f"  its peak memory {run_mib:,.0f} MiB (the summed PSS of its process and those it started); {run_summary}")

    # The bulk offer file: DuckDB's filtered scan against reading every line with Python's csv module.
    import csv

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "index.csv"
        lines = offer_file_builder.write_offer_file(path, offer_file_builder.products(min_rows=args.offer_file_lines))

        def read_every_line():
            with path.open(encoding="utf-8", newline="") as f:
                return sum(1 for _ in csv.reader(f))

        _, csv_baseline = timed(read_every_line, repeat=3)
        kept, scan = timed(lambda: aws_offer_file.read_file(path, "index.csv"), repeat=3)
        size_mb = path.stat().st_size / 1e6
    print(f"\noffer file: {lines:,} lines ({size_mb:,.0f} MB), {len(kept):,} accelerated price rows kept")
    print(f"{'stage':<32}{'seconds':>10}{'x baseline':>12}")
    for name, seconds in [("baseline: csv.reader every line", csv_baseline), ("DuckDB scan + filter", scan)]:
        print(f"{name:<32}{seconds:>10.3f}{seconds / csv_baseline:>12.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
