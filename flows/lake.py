"""The DuckLake warehouse mode: one warehouse that runs and analysts on many machines share.

With `HWEVAL_LAKE` set, the warehouse of record is a DuckLake: its catalog in PostgreSQL, its data as Parquet under
`HWEVAL_LAKE_DATA_PATH` (an S3 prefix, or a folder every machine mounts). A run still builds in a private DuckDB
file, as in the default mode, but it starts from the lake's newest snapshot (`pull`) instead of the local file, and
its result becomes the lake's next snapshot in one DuckLake transaction (`commit`): every table of the warehouse is
replaced together, so a reader never sees half a run. If another run committed after this one pulled, the commit is
refused (`LakeConflict`: the snapshot moved, or DuckLake's own conflict check at commit) and the run builds again on
top of the other run's snapshot, up to `commit_attempts` times: two runs never lose each other's work.

Analysts `ATTACH 'ducklake:<catalog>' AS lake (READ_ONLY, DATA_PATH ...)` from any machine and see committed runs
only; a snapshot's commit message names the run (`run_snapshots`), and `ATTACH ... (SNAPSHOT_VERSION n)` or
`AT (VERSION => n)` reads the warehouse as that run left it (`hweval query --run RUN_ID`).

The extensions come from Python packages (`duckdb-extension-ducklake`, `-postgres-scanner`, `-httpfs`), loaded from
the files they install, so nothing is downloaded at run time. S3 credentials, region and endpoint come from boto3's
chains (`AWS_ENDPOINT_URL_S3` for an S3-compatible server), the PostgreSQL password from libpq's (`PGPASSWORD`,
`~/.pgpass`): neither is ever in the setting itself.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import importlib.util
import json
import logging
import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

import duckdb

from flows import analytics, duckdb_settings, transform, warehouse
from flows.analytics import quoted
from flows.redaction import redact_text

log = logging.getLogger(__name__)

LAKE_ENV = "HWEVAL_LAKE"  # the DuckLake catalog, e.g. "postgres:dbname=hweval host=db.internal user=hweval"
DATA_ENV = "HWEVAL_LAKE_DATA_PATH"  # where its Parquet files go: s3://bucket/prefix/ or an absolute folder
ATTEMPTS_ENV = "HWEVAL_LAKE_COMMIT_ATTEMPTS"
DEFAULT_COMMIT_ATTEMPTS = 5  # builds of one run before it gives up on a lake other runs keep committing to
MAX_COMMIT_ATTEMPTS = 20
MAX_TABLES = 1_000  # tables a pull or a commit copies; the warehouse has about 80
MAX_SETTING_CHARS = 1_000
INIT_ATTEMPTS = 5  # attaches of a lake another run is creating at the same moment
ALIAS = "lake"
# The schemas of the warehouse, copied whole; `analytics` (views over marts) is re-created in the lake.
SCHEMAS = ("catalog", "raw", "ops", "staging", "intermediate", "marts")
# At most this many PostgreSQL connections a process: by default the extension opens one more whenever its pool is
# busy, and a commit of every table held ~85 in one transaction (PostgreSQL allows 100 in all).
PG_POOL = {"pg_pool_max_connections": 4, "pg_pool_acquire_mode": "'wait'", "pg_pool_wait_timeout_millis": 120_000}
EXTENSIONS = {"ducklake": "duckdb_extension_ducklake", "postgres_scanner": "duckdb_extension_postgres_scanner",
              "httpfs": "duckdb_extension_httpfs"}


class LakeError(ValueError):
    """A lake setting that cannot work (exit 2, one line), or an extension that is not installed."""


class LakeUnavailable(RuntimeError):
    """The lake cannot be reached or read or written (PostgreSQL or the data path down, a refused query): the run
    fails (exit 1) having changed nothing in the lake."""


class LakeConflict(RuntimeError):
    """Another run committed to the lake after this one pulled: build again on its snapshot."""


@dataclass(frozen=True)
class LakeConfig:
    catalog: str  # what follows "ducklake:" in ATTACH: "postgres:<libpq keywords>" (or a local .ducklake file)
    data_path: str  # s3://bucket/prefix/ or an absolute folder, ending in "/"
    commit_attempts: int = DEFAULT_COMMIT_ATTEMPTS

    @property
    def on_s3(self) -> bool:
        return self.data_path.startswith("s3://")

    def describe(self) -> str:
        """The lake for a log line: the catalog's database, host and port only (never the whole setting, whatever
        it holds), and the data path."""
        if self.catalog.endswith(".ducklake"):
            where = self.catalog
        else:
            keys = dict(re.findall(r"(\w+)=(\S+)", self.catalog))
            uri = urlsplit(self.catalog.removeprefix("postgres:")) if "://" in self.catalog else None
            if uri is not None:
                keys = {"dbname": uri.path.lstrip("/"), "host": uri.hostname or "", "port": str(uri.port or "")}
            where = " ".join(f"{k}={keys[k]}" for k in ("dbname", "host", "port") if keys.get(k)) or "PostgreSQL"
        return f"DuckLake {where}, data {self.data_path}"


def configured(environ: dict[str, str] | None = None) -> LakeConfig | None:
    """The lake named by HWEVAL_LAKE and HWEVAL_LAKE_DATA_PATH, or None (the default: the single DuckDB file).

    Raises LakeError, naming the variable and what was expected, for a setting that cannot work; `hweval run` checks
    it before a Prefect server starts.
    """
    env = os.environ if environ is None else environ
    catalog = env.get(LAKE_ENV, "").strip()
    data_path = env.get(DATA_ENV, "").strip()
    if not catalog:
        if data_path:
            raise LakeError(f"{DATA_ENV} is set but {LAKE_ENV} is not: set both for the DuckLake warehouse, or "
                            "neither for the single DuckDB file")
        return None
    for name, value in ((LAKE_ENV, catalog), (DATA_ENV, data_path)):
        if len(value) > MAX_SETTING_CHARS:
            raise LakeError(f"{name}: {len(value)} characters, at most {MAX_SETTING_CHARS}")
        if "'" in value or "\n" in value:
            raise LakeError(f"{name}: must not contain a quote or a line break")
    catalog = catalog.removeprefix("ducklake:")
    # libpq decodes %-escapes in a URI's parameter names and values (pass%77ord=): checked as libpq reads it too
    if any(re.search(r"password\s*=", text, re.IGNORECASE) or re.search(r"://[^/@]*:[^/@]*@", text)
           for text in (catalog, unquote(catalog))):
        # a keyword (password=, sslpassword=) or a URI's user:password@: never in a setting that is logged
        raise LakeError(f"{LAKE_ENV}: has a password; give it through PGPASSWORD or ~/.pgpass (libpq's chain), "
                        "never in the setting")
    if not (catalog.startswith("postgres:") or catalog.endswith(".ducklake")):
        raise LakeError(f"{LAKE_ENV}={catalog!r}: expected a PostgreSQL catalog, e.g. "
                        "'postgres:dbname=hweval host=db.internal user=hweval' (or a local file ending in .ducklake, "
                        "for one machine)")
    if not data_path:
        raise LakeError(f"{LAKE_ENV} is set but {DATA_ENV} is not: expected where the lake's Parquet files go "
                        "(s3://bucket/prefix/ or an absolute folder)")
    if data_path.startswith("s3://"):
        if not urlsplit(data_path).netloc:
            raise LakeError(f"{DATA_ENV}={data_path!r}: expected s3://bucket/prefix/")
    elif not Path(data_path).is_absolute():
        raise LakeError(f"{DATA_ENV}={data_path!r}: expected s3://bucket/prefix/ or an absolute folder")
    attempts_text = env.get(ATTEMPTS_ENV, str(DEFAULT_COMMIT_ATTEMPTS))
    try:
        attempts = int(attempts_text)
    except ValueError:
        attempts = 0
    if not 1 <= attempts <= MAX_COMMIT_ATTEMPTS:
        raise LakeError(f"{ATTEMPTS_ENV}={attempts_text!r}: expected a whole number from 1 to {MAX_COMMIT_ATTEMPTS}")
    return LakeConfig(catalog, data_path.rstrip("/") + "/", attempts)


def extension_file(name: str) -> Path:
    """The extension file a `duckdb-extension-*` package installed for this DuckDB version."""
    package = EXTENSIONS[name]
    spec = importlib.util.find_spec(package)
    version = duckdb.__version__
    if spec is None or not spec.submodule_search_locations:
        raise LakeError(f"the DuckLake mode needs the Python package {package.replace('_', '-')}=={version} "
                        "(in uv.lock: run `make run` or `uv sync --locked`)")
    path = Path(next(iter(spec.submodule_search_locations))) / "extensions" / f"v{version}" / f"{name}.duckdb_extension"
    if not path.exists():
        raise LakeError(f"{path}: missing; the package {package.replace('_', '-')} is not built for DuckDB {version}")
    return path


def _s3_secret_sql() -> str:
    """A temporary DuckDB S3 secret from boto3's chains: credentials, region and endpoint (AWS_ENDPOINT_URL_S3)."""
    import boto3

    session = boto3.session.Session()
    credentials = session.get_credentials()
    if credentials is None:
        raise LakeError(f"{DATA_ENV} is on S3 but boto3 finds no credentials (environment, ~/.aws, instance role)")
    frozen = credentials.get_frozen_credentials()
    client = session.client("s3")  # resolves the endpoint as every boto3 call does (AWS_ENDPOINT_URL_S3 included)
    region = client.meta.region_name or "us-east-1"
    options = {"KEY_ID": frozen.access_key, "SECRET": frozen.secret_key, "REGION": region}
    if frozen.token:
        options["SESSION_TOKEN"] = frozen.token
    endpoint = urlsplit(client.meta.endpoint_url)
    if not endpoint.netloc.endswith("amazonaws.com"):  # an S3-compatible server: host:port, path-style
        options |= {"ENDPOINT": endpoint.netloc, "URL_STYLE": "path"}
        options["USE_SSL"] = "true" if endpoint.scheme == "https" else "false"
    body = ", ".join(f"{key} {value if key == 'USE_SSL' else quoted(value)}" for key, value in options.items())
    return f"create or replace temporary secret hweval_lake_s3 (type s3, {body})"


def connect(config: LakeConfig, *, read_only: bool = False, snapshot: int | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with the lake attached as `lake` (read-only, or at a past snapshot)."""
    con = duckdb.connect(config=duckdb_settings.config(autoinstall_known_extensions=False,
                                                       autoload_known_extensions=False))
    try:
        for name in ("ducklake", "postgres_scanner") + (("httpfs",) if config.on_s3 else ()):
            con.execute(f"load {quoted(str(extension_file(name)))}")
        if config.on_s3:
            con.execute(_s3_secret_sql())
        for setting, value in PG_POOL.items():
            con.execute(f"set {setting} = {value}")
        options = [f"data_path {quoted(config.data_path)}"]
        if read_only:
            options.append("read_only")
        if snapshot is not None:
            options.append(f"snapshot_version {int(snapshot)}")
        _attach(con, f"attach {quoted('ducklake:' + config.catalog)} as {ALIAS} ({', '.join(options)})",
                config.catalog)
    except duckdb.Error as exc:
        con.close()
        raise LakeUnavailable(f"cannot attach the lake ({config.describe()}): {_first_line(exc, config.catalog)}") from None
    except BaseException:
        con.close()
        raise
    return con


def _attach(con: duckdb.DuckDBPyConnection, statement: str, setting: str, attempts: int = INIT_ATTEMPTS) -> None:
    """ATTACH the lake. Two runs creating a new lake at once collide in PostgreSQL (DuckLake's initialisation is one
    transaction: the loser's is rolled back whole), so an attach that fails initialising is tried again, and then
    finds the lake the other run created."""
    for attempt in range(1, attempts + 1):
        try:
            con.execute(statement)
            return
        except duckdb.Error as exc:
            if "Failed to initialize DuckLake" not in str(exc) or attempt == attempts:
                raise
            log.info("the lake was being created by another run (%s); attaching again", _first_line(exc, setting))
            time.sleep(0.2 * attempt)


def _first_line(exc: BaseException, setting: str | None = None) -> str:
    """The error's first line for a message: the lake's setting, which DuckDB's errors quote whole, as its variable's
    name (describe() says where the lake is), and any secret the text still holds redacted."""
    line = next((line for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
    if setting:
        line = line.replace(setting, f"<{LAKE_ENV}>")
    return redact_text(line)


def head(con: duckdb.DuckDBPyConnection) -> int:
    """The lake's newest snapshot id (in a transaction: the one it started from)."""
    return int(con.execute(f"select id from {ALIAS}.current_snapshot()").fetchone()[0])


def _tables(con: duckdb.DuckDBPyConnection, database: str) -> list[tuple[str, str]]:
    rows = con.execute("select schema_name, table_name from duckdb_tables() where database_name = ? "
                       "and schema_name in (select unnest(?)) order by 1, 2", [database, list(SCHEMAS)]).fetchall()
    if len(rows) > MAX_TABLES:
        raise LakeError(f"{database}: {len(rows)} tables, more than the {MAX_TABLES} a lake copy takes")
    return rows


def pull(config: LakeConfig, target: Path) -> int:
    """Make `target` (a fresh DuckDB file) the lake's newest snapshot: the warehouse's own tables and constraints
    (sql/ DDL), then every lake table's rows. Returns the snapshot id, which `commit` expects to still be the head.

    An empty lake (the first run) gives an empty warehouse.
    """
    for leftover in (target, target.with_name(target.name + ".wal")):
        leftover.unlink(missing_ok=True)
    local = warehouse.connect(target)
    try:
        warehouse.apply_ddl(local)
        local.execute("checkpoint")
    finally:
        local.close()
    con = connect(config)  # not read-only: the first run's pull creates the lake
    try:
        con.execute(f"attach {quoted(str(target))} as building")
        con.begin()
        snapshot = head(con)
        declared = set(_tables(con, "building"))
        for schema, table in _tables(con, ALIAS):
            con.execute(f'create schema if not exists building."{schema}"')
            source = f'{ALIAS}."{schema}"."{table}"'
            if (schema, table) in declared:
                con.execute(f'insert into building."{schema}"."{table}" by name select * from {source}')
            else:
                con.execute(f'create table building."{schema}"."{table}" as select * from {source}')
        con.commit()
    except duckdb.Error as exc:
        raise LakeUnavailable(f"cannot read the lake ({config.describe()}): {_first_line(exc, config.catalog)}") from None
    finally:
        _close(con)
    return snapshot


def commit(config: LakeConfig, building: Path, base_snapshot: int, run_id: str, as_of: dt.date) -> int:
    """Replace every warehouse table in the lake with the built one, in one DuckLake transaction whose commit message
    names the run; re-create the `analytics` views. Returns the new snapshot id.

    Raises LakeConflict, having changed nothing, when the lake's head is no longer `base_snapshot` (another run
    committed since this one pulled) or DuckLake's commit finds a conflicting change.
    """
    con = connect(config)
    try:
        con.execute(f"attach {quoted(str(building))} as building (read_only)")
        return _commit_in(con, config, base_snapshot, run_id, as_of)
    finally:
        _close(con)


def _close(con: duckdb.DuckDBPyConnection) -> None:
    """Detach the build file before closing: a refused commit must not keep it attached in this process, where the
    next attempt builds in a file of the same name."""
    with contextlib.suppress(duckdb.Error):  # an error here means no transaction was open
        con.execute("rollback")
    try:
        con.execute("detach database if exists building")
    finally:
        con.close()


def _commit_in(con: duckdb.DuckDBPyConnection, config: LakeConfig, base_snapshot: int, run_id: str,
               as_of: dt.date) -> int:
    try:
        con.begin()
        moved_to = head(con)
        if moved_to != base_snapshot:
            con.rollback()
            raise LakeConflict(f"the lake moved from snapshot {base_snapshot} to {moved_to} while this run built")
        built = _tables(con, "building")
        for schema in SCHEMAS:
            con.execute(f'create schema if not exists {ALIAS}."{schema}"')
        for schema, table in sorted(set(_tables(con, ALIAS)) - set(built)):  # a model since removed
            con.execute(f'drop table {ALIAS}."{schema}"."{table}"')
        for schema, table in built:
            con.execute(f'create or replace table {ALIAS}."{schema}"."{table}" as '
                        f'select * from building."{schema}"."{table}"')
        _create_view_models(con)
        _create_analytics_views(con)
        message = f"hweval run {run_id} as of {as_of.isoformat()}"
        extra = json.dumps({"run_id": run_id, "as_of": as_of.isoformat(), "base_snapshot": base_snapshot})
        con.execute(f"call {ALIAS}.set_commit_message('hweval', ?, extra_info => ?)", [message, extra])
        try:
            con.commit()
        except duckdb.TransactionException as exc:
            raise LakeConflict(f"DuckLake refused the commit: {_first_line(exc, config.catalog)}") from None
        # this commit's snapshot (the head may already be a later run's)
        return int(con.execute(f"select max(snapshot_id) from {ALIAS}.snapshots() where author = 'hweval' and "
                               "commit_message = ?", [message]).fetchone()[0])
    except duckdb.Error as exc:
        raise LakeUnavailable(f"cannot write the lake ({config.describe()}): {_first_line(exc, config.catalog)}") from None


def _in_lake(select: str) -> str:
    """A query over the warehouse's schemas, naming the lake's tables: a view binds where it is read."""
    return re.sub(rf"\b({'|'.join(SCHEMAS)})\.", rf"{ALIAS}.\1.", select)


def _create_view_models(con: duckdb.DuckDBPyConnection) -> None:
    """The view models (sql/, `-- materialized: view`: marts.rank_history) over the lake's own tables."""
    for relation, select in transform.view_models().items():
        schema, name = relation.split(".")
        con.execute(f'create or replace view {ALIAS}."{schema}"."{name}" as {_in_lake(select)}')


def _create_analytics_views(con: duckdb.DuckDBPyConnection) -> None:
    """The analysts' views (flows/analytics.py) inside the lake, over its own marts, with their descriptions.

    DuckLake keeps a view's comment but not its columns' (they are on the marts' documentation, sql/marts/marts.yaml).
    """
    schema = f'{ALIAS}."{analytics.SCHEMA}"'
    con.execute(f"drop schema if exists {schema} cascade")
    con.execute(f"create schema {schema}")
    for name, (select, description, _columns) in analytics.view_definitions(analytics.load_contract()).items():
        # the view's body names lake tables explicitly: a view binds where it is read, not where it was made
        con.execute(f'create view {schema}."{name}" as {_in_lake(select)}')
        con.execute(f'comment on view {schema}."{name}" is {quoted(description)}')


def run_snapshots(config: LakeConfig) -> list[dict]:
    """The lake's snapshots that runs committed, oldest first: snapshot id, time, run id, as-of date."""
    con = connect(config, read_only=True)
    try:
        rows = warehouse.fetch_dicts(con, f"select snapshot_id, snapshot_time, commit_message, commit_extra_info "
                                          f"from {ALIAS}.snapshots() where author = 'hweval' order by snapshot_id")
    finally:
        con.close()
    for row in rows:
        extra = json.loads(row.pop("commit_extra_info") or "{}")
        row |= {"run_id": extra.get("run_id"), "as_of": extra.get("as_of")}
    return rows


def snapshot_of_run(config: LakeConfig, run_id: str) -> int:
    """The snapshot a run committed (its last, if it committed twice); LakeError if it never did."""
    found = [row["snapshot_id"] for row in run_snapshots(config) if row["run_id"] == run_id]
    if not found:
        raise LakeError(f"run {run_id!r} committed no snapshot to the lake ({config.describe()})")
    return int(found[-1])


@contextmanager
def reading(config: LakeConfig, snapshot: int | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection whose default database is the lake (at `snapshot`, or its newest)."""
    con = connect(config, read_only=True, snapshot=snapshot)
    try:
        con.execute(f"use {ALIAS}")
        yield con
    finally:
        con.close()
