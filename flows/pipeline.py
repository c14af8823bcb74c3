"""A run's frame around the landing: its as-of date and id, the sources it reads, building the models, its record.

The Prefect flow in flows/nightly.py calls these plain functions (landing: flows/land.py); tests call them directly.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import re
import tempfile
import uuid
from pathlib import Path

import duckdb

from flows import analytics, duckdb_settings, paths, transform, warehouse
from flows.catalog_models import Catalog, CatalogError, SnapshotFile, Source
from flows.formatting import last_loaded
from flows.land import SourceLoad, stale_past_limit
from flows.sources import SAME_SKU_KINDS

log = logging.getLogger(__name__)


# How far past today (UTC) an as-of date may lie: a later one would hold reports/latest until that date comes, every
# run before it being a backfill. `hweval run --allow-future-as-of`, HWEVAL_ALLOW_FUTURE_AS_OF=1 or the flow
# parameter allow_future_as_of lifts it (the test suite, whose fixtures are dated 2026-11-30 and later, sets it).
MAX_AS_OF_DAYS_AHEAD = 1
ALLOW_FUTURE_AS_OF_ENV = "HWEVAL_ALLOW_FUTURE_AS_OF"


class AsOfError(ValueError):
    """An as-of date the run refuses (later than tomorrow, UTC, without allow_future_as_of)."""


def default_as_of() -> dt.date:
    """A run's as-of date when none is given: today's UTC date, when the run starts. Never the machine's local date:
    a worker west of UTC dated the 02:30 UTC nightly the day before. A run a worker takes late is dated by the day it
    runs, not the night it was due: its live prices are that day's."""
    return dt.datetime.now(dt.UTC).date()


def latest_as_of_allowed(today: dt.date | None = None) -> dt.date:
    """Tomorrow (UTC): the latest date a run or its data may be dated without --allow-future-as-of (a machine ahead of
    UTC dates its day ahead of it)."""
    return (today or dt.datetime.now(dt.UTC).date()) + dt.timedelta(days=MAX_AS_OF_DAYS_AHEAD)


def check_as_of(as_of: dt.date, allow_future: bool = False, today: dt.date | None = None) -> None:
    """Refuse an as-of date later than tomorrow (UTC) unless allowed: it would freeze reports/latest."""
    last_allowed = latest_as_of_allowed(today)
    allowed = future_as_of_allowed() or allow_future
    if as_of > last_allowed and not allowed:
        raise AsOfError(
            f"--as-of {as_of.isoformat()} is later than tomorrow ({last_allowed.isoformat()}, UTC): reports/latest "
            f"would show that date until it comes, and every run dated before it would be a backfill. Pass "
            f"--allow-future-as-of (a deployment's parameter allow_future_as_of: true; or set "
            f"{ALLOW_FUTURE_AS_OF_ENV}=1) if that is what you want")


RUN_LIFTS_IT = f"pass --allow-future-as-of or set {ALLOW_FUTURE_AS_OF_ENV}=1 if that is what you want"


def check_files_dated(catalog: Catalog, allow_future: bool = False, source_files: dict[str, list[str]] | None = None,
                      live: bool | None = None, today: dt.date | None = None, lift: str = RUN_LIFTS_IT) -> None:
    """Refuse a sources.yaml file dated later than tomorrow (UTC), unless allowed as a later --as-of is (a typo such as
    2099 would stay the newest data of every run): data is dated by the day it was published or read. Only the files
    a run reads: of an enabled source, not one `source_files` (--source) gives files or replaces, and not one that
    reads its API in this mode (`live`: --live; None: sources.yaml's mode). Tomorrow, as for --as-of: a machine ahead
    of UTC. `lift` says how to allow it, as the caller can."""
    last_allowed = latest_as_of_allowed(today)
    if allow_future or future_as_of_allowed():
        return
    mode = catalog.sources.mode if live is None else ("live" if live else "snapshot")
    not_read = set(source_files or {}) | {other for others in replaced_sources(catalog, source_files).values()
                                          for other in others}
    errors = [f"sources.yaml: sources.{source_id}.files[{j}].as_of: {f.as_of.isoformat()} is later than tomorrow "
              f"({last_allowed.isoformat()}, UTC): data is dated by the day it was published or read ({lift})"
              for source_id, source in catalog.sources.sources.items()
              if source.enabled and source_id not in not_read and not source.reads_live(mode)
              for j, f in enumerate(source.files) if f.as_of > last_allowed]
    if errors:
        raise CatalogError("\n".join(errors))


def future_as_of_allowed(environ: dict[str, str] | None = None) -> bool:
    """HWEVAL_ALLOW_FUTURE_AS_OF: 1 allows an as-of later than tomorrow, 0 or unset refuses it; anything else is an
    error (`false` or `no` allowed it when any value but 0 did)."""
    text = (os.environ if environ is None else environ).get(ALLOW_FUTURE_AS_OF_ENV, "").strip()
    if text not in ("", "0", "1"):
        raise AsOfError(f"{ALLOW_FUTURE_AS_OF_ENV}={text!r}: expected 1 (allow an as-of date later than tomorrow) or "
                        "0 (refuse it, the default)")
    return text == "1"


RUN_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")  # a file name: Data Docs and locks are named by it


def check_run_id(run_id: str) -> str:
    """A run id given as a parameter (a deployment's `run_id`): letters, digits, `.`, `_` and `-`, at most 64, or a
    RunSettingError before the run starts (a `/` in it lost every Data Docs page, and the run passed)."""
    if not isinstance(run_id, str) or not RUN_ID_PATTERN.fullmatch(run_id):  # fullmatch: `$` lets a "\n" through
        raise RunSettingError(f"run_id {str(run_id)[:100]!r}: expected 1 to 64 letters, digits, '.', '_' or '-', not "
                              "starting with '.', '_' or '-' (or none: the run makes its own)")
    return run_id


def check_run_id_unused(con: duckdb.DuckDBPyConnection, run_id: str, as_of: dt.date, where: object) -> None:
    """A RunSettingError if `run_id` is another as-of date's run in the warehouse `con` reads (`where`, named in the
    message). A run id names one date's run: a re-run of that date replaces it, but a run of another date under it
    would fail only as the run is recorded, after every source was fetched and the models built."""
    try:
        taken = con.execute("select as_of from ops.runs where run_id = ? and as_of <> ?", [run_id, as_of]).fetchall()
    except duckdb.CatalogException:  # no ops.runs yet (a new warehouse, before its DDL): no run to clash with
        return
    if taken:
        raise RunSettingError(f"run_id {run_id!r} is already the run as of {taken[0][0]} in {where}; expected a run "
                              f"id no other date's run has (a re-run of {taken[0][0]} may take it again), or none: "
                              "the run makes its own")


def check_run_id_unused_in(warehouse_file: Path, run_id: str, as_of: dt.date) -> None:
    """`check_run_id_unused` on the warehouse file as it stands, before any work; nothing if it cannot be read now
    (none yet, held by a writer, or no DuckDB file): the run checks again on the copy it builds in, under its lock."""
    if not warehouse_file.is_file():
        return
    try:
        con = duckdb.connect(str(warehouse_file), read_only=True, config=duckdb_settings.config())
    except duckdb.Error:
        return
    try:
        check_run_id_unused(con, run_id, as_of, warehouse_file)
    finally:
        con.close()


def new_run_id(as_of: dt.date) -> str:
    return f"{as_of.isoformat()}-{uuid.uuid4().hex[:8]}"


def source_snapshot_files(catalog: Catalog, source_files: dict[str, list[str]],
                          as_of: dt.date) -> dict[str, list[SnapshotFile]]:
    """The files given on the command line for each source, checked: a CatalogError names a source sources.yaml does
    not declare, a date that is no date (an `@` with none after it too), a date later than the run's `as_of` (a
    backfill would read the future) or a file that does not exist. `hweval run` checks them before its flow starts;
    the flow reads them with `with_source_files`.

    Each file is `PATH` or `PATH@YYYY-MM-DD` (the data's as-of date; default: the run's).
    """
    sources = catalog.sources.sources
    given: dict[str, list[SnapshotFile]] = {}
    for source_id, specs in source_files.items():
        if source_id not in sources:
            raise CatalogError(f"--source {source_id}=...: no source {source_id!r} in sources.yaml "
                               f"(expected one of {', '.join(sorted(sources))})")
        files = []
        for spec in [specs] if isinstance(specs, str) else specs:
            path, at, date_text = spec.rpartition("@") if "@" in spec else (spec, "", "")
            if at and not date_text:
                raise CatalogError(f"--source {source_id}={spec}: no date after '@' (expected PATH@YYYY-MM-DD, or "
                                   f"PATH alone for the run's date)")
            try:
                data_as_of = paths.iso_date(date_text) if date_text else as_of
            except ValueError:
                raise CatalogError(f"--source {source_id}={spec}: {date_text!r} is not a date (YYYY-MM-DD)") from None
            if data_as_of > as_of:
                raise CatalogError(f"--source {source_id}={spec}: its data as of {data_as_of.isoformat()} is later "
                                   f"than the run's as-of date {as_of.isoformat()}: a run reads no data from after its "
                                   f"date (run --as-of {data_as_of.isoformat()} or later to read it)")
            file = Path(path).resolve()
            if not file.is_file():
                raise CatalogError(f"--source {source_id}={spec}: no such file {path!r}")
            files.append(SnapshotFile(path=str(file), as_of=data_as_of, source=f"{file.name}, given on the command line"))
        given[source_id] = files
    return given


def check_accept_changes(catalog: Catalog, accept_changes: list[str] | None) -> None:
    """A CatalogError when --accept-changes names a source sources.yaml does not declare."""
    unknown = sorted(set(accept_changes or ()) - set(catalog.sources.sources))
    if unknown:
        raise CatalogError(f"--accept-changes {', '.join(unknown)}: no such source in sources.yaml "
                           f"(expected one of {', '.join(sorted(catalog.sources.sources))})")


def with_source_files(catalog: Catalog, source_files: dict[str, list[str]], as_of: dt.date) -> Catalog:
    """The catalog with some sources reading other files for this run (e.g. a whole MLPerf round): the files of
    `source_snapshot_files`."""
    sources = dict(catalog.sources.sources)
    for source_id, files in source_snapshot_files(catalog, source_files, as_of).items():
        sources[source_id] = reading_given_files(sources[source_id], files)
    for source_id, replaced in replaced_sources(catalog, source_files).items():
        for other_id in replaced:
            log.warning("--source %s: %s is not read in this run (both price the same AWS SKUs); if %s fails, the "
                        "run uses the last good rows of %s", source_id, other_id, source_id, other_id)
            sources[other_id] = sources[other_id].model_copy(update={"enabled": False})
    return catalog.model_copy(update={"sources": catalog.sources.model_copy(update={"sources": sources})})


def reading_given_files(source: Source, files: list[SnapshotFile]) -> Source:
    """A declared source (catalog_models.Source) reading `files` for a run: files given for a source are read in this
    run, from disk, live or not, even if sources.yaml leaves it disabled."""
    return source.model_copy(update={"files": files, "live": None, "enabled": True})


def replaced_sources(catalog: Catalog, source_files: dict[str, list[str]] | None) -> dict[str, list[str]]:
    """The sources that files given on the command line replace for a run: an offer file and the Price List API
    price the same SKUs, so the one given replaces the other (which is its fallback if it fails)."""
    sources = catalog.sources.sources
    replaced: dict[str, list[str]] = {}
    for source_id in source_files or {}:
        if source_id in sources and sources[source_id].kind in SAME_SKU_KINDS:
            others = [other_id for other_id, other in sources.items()
                      if other_id not in source_files and other.enabled and other.kind in SAME_SKU_KINDS]
            if others:
                replaced[source_id] = others
    return replaced


def with_mode(catalog: Catalog, mode: str) -> Catalog:
    """The catalog with its sources switched to `mode` for this run (`hweval run --live`)."""
    return catalog.model_copy(update={"sources": catalog.sources.model_copy(update={"mode": mode})})


def sources_to_run(catalog: Catalog) -> list[str]:
    """Enabled sources that have something to read in this run's mode (a live-only source waits for --live)."""
    mode = catalog.sources.mode
    return [s_id for s_id, s in catalog.sources.sources.items() if s.enabled and (s.files or s.reads_live(mode))]


def record_run(con, run_id: str, as_of: dt.date, started_at: dt.datetime, catalog: Catalog,
               loads: list[SourceLoad]) -> None:
    past_limit = stale_past_limit(catalog, loads, as_of)
    stale_ids = [load.source_id for load in loads if load.status == "stale"]
    if past_limit:
        status = "failed: sources stale past their limit: " + ", ".join(line.split()[0] for line in past_limit)
    elif stale_ids:
        status = "succeeded with stale sources: " + ", ".join(stale_ids)
    else:
        status = "succeeded"
    warehouse.insert_rows(con, "ops.runs", [{
        "run_id": run_id,
        "as_of": as_of,
        "started_at": started_at,
        "finished_at": dt.datetime.now(dt.UTC).replace(tzinfo=None),
        "status": status,
        "catalog_dir": str(catalog.root),
        "sources": ",".join(load.source_id for load in loads),
        "rows_in": sum(load.rows_in for load in loads),
        "rows_landed": sum(load.rows_landed for load in loads),
        "rows_quarantined": sum(load.rows_quarantined for load in loads),
        "stale_sources": "; ".join(
            f"{load.source_id} ({last_loaded(load.stale_since)}): {load.error}"
            for load in loads if load.status == "stale") or None,
        "stale_past_limit": "; ".join(past_limit) or None,
        "catalog_digest": catalog_digest(catalog),
        # the digest the build set (transform.build_models), not one taken now: a release deployed meanwhile, or a
        # build of another sql folder, would record SQL the run did not build with
        "models_digest": con.execute("select getvariable('models_digest')").fetchone()[0],
    }])


def catalog_digest(catalog: Catalog) -> str:
    """A digest of what the rankings rest on (accelerators, instances, models, workloads), to tell a catalog edit."""
    return catalog.digest()


def build(con: duckdb.DuckDBPyConnection, run_id: str, as_of: dt.date, catalog: Catalog) -> list[transform.BuiltModel]:
    """The SQL models, their tests, then schema `analytics`; the models built or reused, the schema last (layer
    `analytics`, name `*`, its views counted in `rows`; `reused` when it was kept as it was)."""
    con.execute("set variable catalog_digest = ?", [catalog_digest(catalog)])
    built = transform.build_models(con, run_id, as_of)
    transform.run_sql_tests(con)
    views, kept = analytics.create_views(con, run_id=run_id)
    return [*built, transform.BuiltModel(analytics.SCHEMA, "*", len(views), reused=kept, view=True)]


class RunSettingError(ValueError):
    """A path a run cannot use for its warehouse or reports, or a run id it cannot take (exit 2, one line)."""


def check_run_paths(warehouse_file: Path, reports_root: Path, flags: tuple[str, str]) -> None:
    """Refuse a warehouse path that is a directory, and a warehouse or reports folder that is not one, cannot be made
    one or cannot be written to: found only after the fetch otherwise, as a traceback. `flags` name what set the two
    paths, in the message (`paths.set_by`: an option, a flow parameter, an environment variable or the default)."""
    if warehouse_file.is_dir():
        raise RunSettingError(f"the warehouse {warehouse_file} is a directory; expected a DuckDB file, or a path where "
                              f"one can be created ({flags[0]})")
    if warehouse_file.is_file() and not is_duckdb_file(warehouse_file):  # a typo'd path to a CSV, an empty file
        raise RunSettingError(f"the warehouse {warehouse_file} is a file but not a DuckDB database; expected a DuckDB "
                              f"file, or a path where one can be created ({flags[0]})")
    for what, folder, flag in (("the warehouse's folder", warehouse_file.parent, flags[0]),
                               ("the reports folder", reports_root, flags[1])):
        blocker = _not_a_folder(folder)
        if blocker is not None:
            problem = "is not a directory" if blocker == folder else f"cannot be created ({blocker} is not a directory)"
            raise RunSettingError(f"{what} {folder} {problem}; expected a directory, or a path where one can be "
                                  f"created ({flag})")
        # written to once (a file without a name where the system has O_TMPFILE), in the folder or the nearest of its
        # parents that exists (the run makes the rest): a read-only or forbidden place is refused here, not after the
        # fetch as a traceback, and a refused run leaves nothing behind
        existing = next(path for path in (folder, *folder.absolute().parents) if path.is_dir())
        try:
            with tempfile.TemporaryFile(dir=existing, prefix=".hweval-write-check-"):
                pass
        except OSError as exc:
            raise RunSettingError(f"{what} {folder} cannot be created or written to ({exc.strerror or exc}); expected "
                                  f"a directory this user can write ({flag})") from None


# A DuckDB database file starts with an 8-byte checksum, then these 4 bytes (DuckDB's storage format, every version)
DUCKDB_MAGIC, DUCKDB_MAGIC_AT = b"DUCK", 8


def is_duckdb_file(path: Path) -> bool:
    """Whether the file at `path` starts as a DuckDB database does (an unreadable one is left for DuckDB to name)."""
    try:
        with path.open("rb") as f:
            head = f.read(DUCKDB_MAGIC_AT + len(DUCKDB_MAGIC))
    except OSError:
        return True
    return head[DUCKDB_MAGIC_AT:] == DUCKDB_MAGIC


def _not_a_folder(folder: Path) -> Path | None:
    """The first of `folder` and its parents that exists yet is no directory (a file, a dangling link), else None."""
    for path in (folder, *folder.absolute().parents):
        if path.is_dir():
            return None
        if path.exists() or path.is_symlink():
            return path
    return None
