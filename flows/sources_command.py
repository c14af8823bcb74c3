"""`hweval sources`: each declared source, its kind, whether it runs, what it reads in this mode, and its last good
fetch from the warehouse's ops.source_loads."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from flows import paths, query_command


def cmd_sources(args: argparse.Namespace) -> int:
    """Each declared source: kind, whether it runs, what it reads in this mode, and its last good fetch."""
    from flows.catalog import load_catalog

    catalog = load_catalog(args.catalog or paths.catalog_dir())
    mode = "live" if args.live else catalog.sources.mode
    path = Path(args.warehouse or paths.warehouse_path())
    history: dict[str, tuple] = {}
    if path.exists():
        con = query_command.open_warehouse_read_only(path)
        columns = {r[0] for r in con.execute("select column_name from information_schema.columns "
                                             "where table_schema = 'ops' and table_name = 'source_loads'").fetchall()}
        if not {"status", "error"} <= columns:  # built by an older version; the next run adds the columns
            con.close()
            print(f"hweval: {path} was built by an older hweval (no status in ops.source_loads); "
                  f"run `hweval run` once to upgrade it", file=sys.stderr)
            return 1
        try:
            for row in con.execute("""
                select source_id,
                       max(as_of) filter (where status = 'landed') as last_good_run,
                       arg_max(data_as_of, as_of) filter (where status = 'landed') as last_good_data,
                       arg_max(rows_landed, as_of) filter (where status = 'landed') as rows_landed,
                       arg_max(status, as_of) as last_status,
                       arg_max(error, as_of) as last_error
                from ops.source_loads group by source_id""").fetchall():
                history[row[0]] = row[1:]
        finally:
            con.close()
    print(f"mode: {mode} (sources.yaml says {catalog.sources.mode}; `--live` fetches sources with a live block)")
    print(f"warehouse: {path}" + ("" if path.exists() else " (not built yet)"))
    # columns as wide as their widest entry (a kind such as aws_instance_types ran into the next column)
    id_width = max((len(source_id) for source_id in catalog.sources.sources), default=0)
    kind_width = max((len(source.kind) for source in catalog.sources.sources.values()), default=0)
    for source_id, source in catalog.sources.sources.items():
        if not source.enabled:
            state = "disabled"
        elif source.reads_live(mode):
            regions = source.live.get("regions") or []
            state = "live: " + (", ".join(regions) if regions else "every region")
        elif source.files:
            state = f"files ({len(source.files)})"
        else:
            state = "live only: waits for --live"
        last_good_run, last_good_data, rows, status, error = history.get(source_id, (None,) * 5)
        last = (f"last good run {last_good_run} (data as of {last_good_data}, {rows} rows landed)"
                if last_good_run else "never landed")
        if status == "stale":
            last += f"; STALE in the latest run: {error}"
        print(f"  {source_id:<{id_width}}  {source.kind:<{kind_width}}  {state:<44} {last}")
    return 0
