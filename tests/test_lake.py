"""The DuckLake warehouse mode (flows/lake.py) against real services: a PostgreSQL catalog and moto's S3 server,
started by flows/services.py (or, in CI, by .ci/run, named by HWEVAL_TEST_SERVICES).

Where PostgreSQL or moto cannot start, the service tests are skipped, unless HWEVAL_REQUIRE_SERVICES=1 (as .ci/run
sets), which makes that a failure. `make test` runs the settings tests; every test that needs the services is marked
slow (`make test-slow`, which CI runs with the services required): `make test` stays within its 3 minutes.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import boto3
import duckdb
import pytest
from conftest import AS_OF, CATALOGS, RUN_ID
from test_migrations import stored_as_before

from flows import lake, services, transform, warehouse
from flows.cli import main
from flows.paths import PROJECT_ROOT

# columns that name the run, not the data (as in tests/test_incremental.py)
RUN_IDENTITY = ("run_id", "used_run_id", "reused_from", "started_at", "finished_at", "catalog_dir")
SCHEMAS = ("raw", "ops", "staging", "intermediate", "marts", "catalog")


# ---------------------------------------------------------------------------------------------- settings (no services)

@pytest.mark.parametrize(("environ", "problem"), [
    ({"HWEVAL_LAKE": "postgres:dbname=h host=db user=u password=hunter2", "HWEVAL_LAKE_DATA_PATH": "s3://b/p/"},
     "HWEVAL_LAKE: has a password; give it through PGPASSWORD or ~/.pgpass"),
    ({"HWEVAL_LAKE": "postgres:postgresql://hweval:hunter2@db.internal/h", "HWEVAL_LAKE_DATA_PATH": "s3://b/p/"},
     "HWEVAL_LAKE: has a password"),
    ({"HWEVAL_LAKE": "postgres:dbname=h sslpassword=hunter2", "HWEVAL_LAKE_DATA_PATH": "s3://b/p/"},
     "HWEVAL_LAKE: has a password"),
    # libpq decodes %-escapes in a URI's parameter names: pass%77ord is password
    ({"HWEVAL_LAKE": "postgres:postgresql://hweval@db/h?pass%77ord=hunter2", "HWEVAL_LAKE_DATA_PATH": "s3://b/p/"},
     "HWEVAL_LAKE: has a password"),
    ({"HWEVAL_LAKE": "mysql:db=h", "HWEVAL_LAKE_DATA_PATH": "s3://b/p/"},
     "HWEVAL_LAKE='mysql:db=h': expected a PostgreSQL catalog"),
    ({"HWEVAL_LAKE": "postgres:dbname=h"}, "HWEVAL_LAKE is set but HWEVAL_LAKE_DATA_PATH is not"),
    ({"HWEVAL_LAKE_DATA_PATH": "s3://b/p/"}, "HWEVAL_LAKE_DATA_PATH is set but HWEVAL_LAKE is not"),
    ({"HWEVAL_LAKE": "postgres:dbname=h", "HWEVAL_LAKE_DATA_PATH": "lake/data"},
     "HWEVAL_LAKE_DATA_PATH='lake/data': expected s3://bucket/prefix/ or an absolute folder"),
    ({"HWEVAL_LAKE": "postgres:dbname=h", "HWEVAL_LAKE_DATA_PATH": "s3:///p"}, "expected s3://bucket/prefix/"),
    ({"HWEVAL_LAKE": "postgres:dbname='h'", "HWEVAL_LAKE_DATA_PATH": "s3://b/p/"}, "must not contain a quote"),
    # libpq allows spaces around a keyword's '='
    ({"HWEVAL_LAKE": "postgres:dbname=h password = hunter2", "HWEVAL_LAKE_DATA_PATH": "s3://b/p/"},
     "HWEVAL_LAKE: has a password"),
    ({"HWEVAL_LAKE": "postgres:dbname=h\nhost=x", "HWEVAL_LAKE_DATA_PATH": "s3://b/p/"},
     "HWEVAL_LAKE: must not contain a quote or a line break"),
    # "postgres:dbname=" (16 characters) + 985 = 1,001 characters, one past MAX_SETTING_CHARS
    ({"HWEVAL_LAKE": "postgres:dbname=" + "h" * 985, "HWEVAL_LAKE_DATA_PATH": "s3://b/p/"},
     "HWEVAL_LAKE: 1001 characters, at most 1000"),
    ({"HWEVAL_LAKE": "postgres:dbname=h", "HWEVAL_LAKE_DATA_PATH": "s3://b/p/", "HWEVAL_LAKE_COMMIT_ATTEMPTS": "0"},
     "HWEVAL_LAKE_COMMIT_ATTEMPTS='0': expected a whole number from 1 to 20"),
    ({"HWEVAL_LAKE": "postgres:dbname=h", "HWEVAL_LAKE_DATA_PATH": "s3://b/p/", "HWEVAL_LAKE_COMMIT_ATTEMPTS": "21"},
     "HWEVAL_LAKE_COMMIT_ATTEMPTS='21': expected a whole number from 1 to 20"),
])
def test_a_lake_setting_that_cannot_work_names_the_variable(environ, problem):
    with pytest.raises(lake.LakeError) as error:
        lake.configured(environ)
    assert problem in str(error.value)


def test_the_default_is_the_duckdb_file_and_a_setting_is_normalised():
    assert lake.configured({}) is None
    config = lake.configured({"HWEVAL_LAKE": "ducklake:postgres:dbname=h host=db user=u",
                              "HWEVAL_LAKE_DATA_PATH": "s3://bucket/lake"})
    assert config == lake.LakeConfig("postgres:dbname=h host=db user=u", "s3://bucket/lake/", 5)
    assert config.describe() == "DuckLake dbname=h host=db, data s3://bucket/lake/"
    # a URI without a password is accepted; a log line names its database, host and port, not the user
    uri = lake.configured({"HWEVAL_LAKE": "postgres:postgresql://hweval@db.internal:5433/lakedb",
                           "HWEVAL_LAKE_DATA_PATH": "/srv/lake"})
    assert uri.describe() == "DuckLake dbname=lakedb host=db.internal port=5433, data /srv/lake/"
    # the bounds themselves are accepted: a 1,000-character setting ("postgres:dbname=" + 984) and 20 attempts
    longest = lake.configured({"HWEVAL_LAKE": "postgres:dbname=" + "h" * 984, "HWEVAL_LAKE_DATA_PATH": "/srv/lake",
                               "HWEVAL_LAKE_COMMIT_ATTEMPTS": "20"})
    assert (len(longest.catalog), longest.commit_attempts) == (1000, 20)


def test_a_lake_error_names_the_variable_not_the_setting_it_quotes():
    # DuckDB's attach errors quote the whole setting (twice, when PostgreSQL cannot be reached); the message a run
    # logs and notifies names the variable, and describe() says where the lake is
    setting = "postgres:dbname=h host=db user=ops sslkey=/home/ops/key.pem"
    error = duckdb.IOException(f"IO Error: Unable to connect to Postgres at {setting}: connection refused "
                               f"(ATTACH 'ducklake:{setting}')")
    assert lake._first_line(error, setting) == ("IO Error: Unable to connect to Postgres at <HWEVAL_LAKE>: connection "
                                               "refused (ATTACH 'ducklake:<HWEVAL_LAKE>')")


def test_run_with_a_bad_lake_setting_exits_2_before_a_prefect_server_starts(monkeypatch, capsys):
    monkeypatch.setenv("HWEVAL_LAKE", "sqlite:meta.db")
    monkeypatch.setenv("HWEVAL_LAKE_DATA_PATH", "/tmp/lake/")
    assert main(["run", "--as-of", "2026-11-30"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hweval: HWEVAL_LAKE='sqlite:meta.db': expected a PostgreSQL catalog")
    assert len(err.strip().splitlines()) == 1 and "PREFECT_API_URL" not in err


def test_query_run_needs_the_lake(monkeypatch, capsys):
    monkeypatch.delenv("HWEVAL_LAKE", raising=False)
    monkeypatch.delenv("HWEVAL_LAKE_DATA_PATH", raising=False)
    assert main(["query", "select 1", "--run", "r1"]) == 2
    assert "--run reads a past snapshot of the DuckLake warehouse" in capsys.readouterr().err


def test_the_extensions_load_from_their_packages_for_this_duckdb():
    import duckdb

    for name in ("ducklake", "postgres_scanner", "httpfs"):
        path = lake.extension_file(name)
        assert path.parent.name == f"v{duckdb.__version__}" and path.name == f"{name}.duckdb_extension"


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("runuser") is None, reason="needs root and runuser, as the "
                    "cluster does (flows/services.py starts it as the postgres user then)")
def test_a_cluster_run_as_postgres_lives_in_a_temporary_directory_that_user_can_write_in(tmp_path, monkeypatch):
    """Run as root, flows/services.py starts PostgreSQL as `postgres`, in a new folder that user can write in, asked
    of the system as that user: in TMPDIR, else in /tmp. make test's scratch folder is 700, and under make test-slow
    the lake tests were skipped ("could not access directory"). A folder others may pass (o+x) is not enough when the
    postgres user is of its group, which may not (the group's bits then apply, not the others')."""
    import grp
    import tempfile

    try:
        grp.getgrnam("postgres")
    except KeyError:
        pytest.skip("no postgres group")
    prefix = services._as_cluster_user()
    private = tmp_path / "private"
    (private / "open").mkdir(parents=True)
    private.chmod(0o700)
    (private / "open").chmod(0o777)
    reachable = Path(tempfile.mkdtemp(prefix="hweval-test-reachable-", dir="/tmp"))
    grouped = Path(tempfile.mkdtemp(prefix="hweval-test-grouped-", dir="/tmp"))
    shutil.chown(grouped, group="postgres")
    (grouped / "open").mkdir(mode=0o777)
    made = []
    try:
        reachable.chmod(0o711)  # others may pass, not list
        grouped.chmod(0o701)  # others may pass; its group, postgres, may not
        for tempdir, parent in [(private / "open", Path("/tmp")), (grouped / "open", Path("/tmp")),
                                (reachable, reachable)]:
            monkeypatch.setattr(tempfile, "tempdir", str(tempdir))
            made.append(folder := services.cluster_folder(prefix))
            assert (folder.parent, folder.owner()) == (parent, "postgres"), tempdir
            assert sorted(p.name for p in tempdir.iterdir()) == (
                [folder.name] if parent == tempdir else []), "a folder the user could not reach is left behind"
    finally:
        for folder in made:
            folder.rmdir()
        reachable.rmdir()
        shutil.rmtree(grouped)


# ------------------------------------------------------------------------------------------------------ the services

@pytest.fixture(scope="session")
def running_services(tmp_path_factory):
    """PostgreSQL and moto's S3 server: the ones .ci/run started (HWEVAL_TEST_SERVICES), or started here."""
    given = os.environ.get("HWEVAL_TEST_SERVICES")
    if given:
        yield services.read_state(Path(given))
        return
    folder = tmp_path_factory.mktemp("services")
    try:
        state = services.start(folder)
    except services.ServiceError as exc:
        if os.environ.get("HWEVAL_REQUIRE_SERVICES") == "1":
            pytest.fail(f"HWEVAL_REQUIRE_SERVICES=1 but the services cannot start: {exc}")
        pytest.skip(f"the lake's services cannot start here: {exc}")
    yield state
    services.stop(folder)


@pytest.fixture
def lake_env(running_services, monkeypatch) -> dict[str, str]:
    """A lake of this test's own (a new PostgreSQL database, a new S3 prefix), set in the environment."""
    env = services.settings(running_services)
    name = f"lake_{uuid.uuid4().hex[:12]}"
    subprocess.run([services.postgres_bin("createdb"), "-h", "127.0.0.1", "-p",
                    str(running_services["postgres_port"]), "-U", "postgres", name], check=True, capture_output=True)
    env["HWEVAL_LAKE"] = env["HWEVAL_LAKE"].replace(f"dbname={services.DATABASE}", f"dbname={name}")
    env["HWEVAL_LAKE_DATA_PATH"] = f"s3://{services.LAKE_BUCKET}/{name}/"
    env.pop("HWEVAL_REPORTS_S3")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return env


def table_digests(path: Path) -> dict[str, str]:
    """Content digest of every table of a warehouse file (order-free), run identity aside."""
    con = warehouse.connect_read_only(path)
    try:
        tables = [f"{s}.{t}" for s, t in con.execute(
            "select schema_name, table_name from duckdb_tables() where schema_name in (select unnest(?)) "
            "order by 1, 2", [list(SCHEMAS)]).fetchall()]
        return {table: transform.content_digest(con, table, exclude=RUN_IDENTITY) for table in tables}
    finally:
        con.close()


def built_copy(flow_run, folder: Path, name: str) -> Path:
    """A copy of the session's built warehouse (the embedded snapshot's run) to commit as a run's build."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / name
    shutil.copy(flow_run.warehouse, target)
    return target


def add_run(path: Path, run_id: str, as_of: dt.date) -> None:
    """Stand in for a second run's build: one more ops.runs row in a built copy."""
    con = warehouse.connect(path)
    try:
        con.execute("insert into ops.runs by name select * replace (? as run_id, ? as as_of) from ops.runs "
                    "where run_id = ?", [run_id, as_of, RUN_ID])
    finally:
        con.close()


def runs_in(con) -> list[str]:
    return [r[0] for r in con.execute(f"select run_id from {lake.ALIAS}.ops.runs order by as_of").fetchall()]


@pytest.mark.slow
def test_a_commit_lands_every_table_as_parquet_on_s3_and_a_pull_gives_it_back(lake_env, flow_run, tmp_path):
    config = lake.configured()
    assert lake.pull(config, tmp_path / "first.duckdb") == 0  # a new lake: snapshot 0, nothing in it
    built = built_copy(flow_run, tmp_path, "built.duckdb")
    snapshot = lake.commit(config, built, 0, RUN_ID, AS_OF)
    assert snapshot == 1
    assert lake.pull(config, tmp_path / "pulled.duckdb") == 1
    before, after = table_digests(built), table_digests(tmp_path / "pulled.duckdb")
    assert after == before and len(before) > 60
    assert before["marts.rankings"].split(":")[0] != "0"
    # the data is Parquet under the lake's prefix on the S3 server
    keys = [o["Key"] for o in boto3.client("s3").list_objects_v2(
        Bucket=services.LAKE_BUCKET, Prefix=lake_env["HWEVAL_LAKE_DATA_PATH"].split("/", 3)[3])["Contents"]]
    assert any(k.endswith(".parquet") and "/marts/rankings/" in k for k in keys)
    # the snapshot names the run; the analysts' views are in the lake
    [committed] = lake.run_snapshots(config)
    assert {k: committed[k] for k in ("snapshot_id", "commit_message", "run_id", "as_of")} == {
        "snapshot_id": 1, "commit_message": f"hweval run {RUN_ID} as of {AS_OF}", "run_id": RUN_ID,
        "as_of": AS_OF.isoformat()}
    with lake.reading(config) as con:
        assert con.execute("select count(*) from analytics.latest_rankings").fetchone() == \
            con.execute("select count(*) from marts.rankings").fetchone()
        # a view model is a view in the lake too, over the lake's rankings: not copied as a table
        assert con.execute(f"select table_type from information_schema.tables where table_catalog = '{lake.ALIAS}' "
                           "and table_schema = 'marts' and table_name = 'rank_history'").fetchall() == [("VIEW",)]
        # the snapshot's 356 rankings (tests/test_query_command.py says why not 357 since stop 55), 9 picks
        picked = "select count(*), count(*) filter (where is_pick) from {}"
        assert con.execute(picked.format("analytics.rank_history")).fetchone() == \
            con.execute(picked.format("marts.rankings")).fetchone() == (356, 9)


@pytest.mark.slow
def test_a_lake_an_older_version_wrote_gets_rank_history_as_a_view_at_the_next_commit(lake_env, flow_run, tmp_path,
                                                                                    monkeypatch):
    config = lake.configured()
    older = built_copy(flow_run, tmp_path, "older.duckdb")
    con = warehouse.connect(older)
    try:
        stored_as_before(con)  # marts.rank_history a table, as hweval stored it before it became a view
    finally:
        con.close()
    with monkeypatch.context() as older_version:  # which made no view models, and views of its own columns
        older_version.setattr(lake, "_create_view_models", lambda con: None)
        older_version.setattr(lake, "_create_analytics_views", lambda con: None)
        lake.commit(config, older, lake.pull(config, tmp_path / "p.duckdb"), RUN_ID, AS_OF)
    pulled = tmp_path / "pulled.duckdb"
    lake.pull(config, pulled)  # the next run starts from the table; its build moves it (tests/test_migrations.py)
    assert "marts.rank_history" in table_digests(pulled)
    lake.commit(config, built_copy(flow_run, tmp_path, "newer.duckdb"), 1, "run-2", AS_OF)
    with lake.reading(config) as con:
        assert con.execute(f"select table_type from information_schema.tables where table_catalog = '{lake.ALIAS}' "
                           "and table_schema = 'marts' and table_name = 'rank_history'").fetchall() == [("VIEW",)]
        assert con.execute("select count(*) filter (where is_pick) from marts.rank_history").fetchone() == (9,)


@pytest.mark.slow
def test_a_reader_sees_the_old_snapshot_through_a_commit_then_the_new(lake_env, flow_run, tmp_path, monkeypatch):
    config = lake.configured()
    lake.commit(config, built_copy(flow_run, tmp_path, "one.duckdb"), lake.pull(config, tmp_path / "p.duckdb"),
                RUN_ID, AS_OF)
    second = built_copy(flow_run, tmp_path, "two.duckdb")
    add_run(second, "run-2", AS_OF + dt.timedelta(days=1))
    analyst = lake.connect(config, read_only=True)
    seen_mid_commit = []
    create_views = lake._create_analytics_views

    def views_then_look(con):  # every table is replaced by now, the commit not yet made
        create_views(con)
        seen_mid_commit.append(runs_in(analyst))

    monkeypatch.setattr(lake, "_create_analytics_views", views_then_look)
    try:
        assert runs_in(analyst) == [RUN_ID]
        lake.commit(config, second, 1, "run-2", AS_OF + dt.timedelta(days=1))
        assert seen_mid_commit == [[RUN_ID]]
        assert runs_in(analyst) == [RUN_ID, "run-2"]  # the next statement sees the new snapshot
        with pytest.raises(Exception, match="read-only|read only"):
            analyst.execute(f"delete from {lake.ALIAS}.ops.runs")
    finally:
        analyst.close()


@pytest.mark.slow
def test_runs_creating_a_new_lake_at_the_same_moment_all_attach_it(lake_env, tmp_path):
    """DuckLake creates its catalog tables on the first attach; three processes doing it at once collide in
    PostgreSQL, and the losers attach again and find the lake the winner created."""
    # each process, imports done, waits for the same moment to attach
    script = ("import sys, time; from pathlib import Path; from flows import lake; config = lake.configured(); "
              "time.sleep(max(0.0, float(sys.argv[2]) - time.time())); print(lake.pull(config, Path(sys.argv[1])))")
    at = time.time() + 6
    processes = [subprocess.Popen([sys.executable, "-c", script, str(tmp_path / f"{n}.duckdb"), str(at)],
                                  cwd=PROJECT_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for n in range(3)]
    results = [process.communicate(timeout=120) for process in processes]
    assert [(process.returncode, out.strip()) for process, (out, _) in zip(processes, results, strict=True)] == \
        [(0, "0")] * 3, [err[-500:] for _, err in results]


@pytest.mark.slow
def test_a_run_that_pulled_before_another_committed_is_refused_and_changes_nothing(lake_env, flow_run, tmp_path):
    config = lake.configured()
    base = lake.pull(config, tmp_path / "p.duckdb")
    first, second = built_copy(flow_run, tmp_path, "a.duckdb"), built_copy(flow_run, tmp_path, "b.duckdb")
    add_run(second, "run-b", AS_OF + dt.timedelta(days=1))
    assert lake.commit(config, first, base, RUN_ID, AS_OF) == base + 1
    with pytest.raises(lake.LakeConflict, match=r"the lake moved from snapshot 0 to 1 while this run built"):
        lake.commit(config, second, base, "run-b", AS_OF + dt.timedelta(days=1))
    with lake.reading(config) as con:
        assert runs_in(con) == [RUN_ID]
        assert con.execute(f"select max(snapshot_id) from {lake.ALIAS}.snapshots()").fetchone() == (1,)


@pytest.mark.slow
def test_ducklake_refuses_a_commit_racing_another_past_the_head_check(lake_env, flow_run, tmp_path, monkeypatch):
    """Run b passed its head check (the lake still at its base), then run a committed before b did: DuckLake's own
    conflict check at commit refuses b, and the lake holds a's run only."""
    config = lake.configured()
    base = lake.pull(config, tmp_path / "p.duckdb")
    first, second = built_copy(flow_run, tmp_path, "a.duckdb"), built_copy(flow_run, tmp_path, "b.duckdb")
    add_run(second, "run-b", AS_OF + dt.timedelta(days=1))
    create_views = lake._create_analytics_views
    raced = []

    def other_run_commits_first(con):
        create_views(con)
        monkeypatch.setattr(lake, "_create_analytics_views", create_views)  # run a's commit is a plain one
        raced.append(lake.commit(config, first, base, RUN_ID, AS_OF))

    monkeypatch.setattr(lake, "_create_analytics_views", other_run_commits_first)
    with pytest.raises(lake.LakeConflict, match="DuckLake refused the commit"):
        lake.commit(config, second, base, "run-b", AS_OF + dt.timedelta(days=1))
    assert raced == [1]
    with lake.reading(config) as con:
        assert runs_in(con) == [RUN_ID]


@pytest.mark.slow
def test_time_travel_reads_the_warehouse_as_a_past_run_committed_it(lake_env, flow_run, tmp_path, capsys):
    config = lake.configured()
    lake.commit(config, built_copy(flow_run, tmp_path, "one.duckdb"), lake.pull(config, tmp_path / "p.duckdb"),
                RUN_ID, AS_OF)
    second = built_copy(flow_run, tmp_path, "two.duckdb")
    add_run(second, "run-2", AS_OF + dt.timedelta(days=1))
    lake.commit(config, second, 1, "run-2", AS_OF + dt.timedelta(days=1))
    assert lake.snapshot_of_run(config, RUN_ID) == 1 and lake.snapshot_of_run(config, "run-2") == 2
    with lake.reading(config, snapshot=1) as con:
        assert runs_in(con) == [RUN_ID]
    assert main(["query", "select run_id from ops.runs order by as_of", "--format", "csv", "--run", RUN_ID]) == 0
    assert capsys.readouterr().out == f"run_id\n{RUN_ID}\n"
    assert main(["query", "select run_id from ops.runs order by as_of", "--format", "csv"]) == 0
    assert capsys.readouterr().out == f"run_id\n{RUN_ID}\nrun-2\n"
    with pytest.raises(lake.LakeError, match="run 'nope' committed no snapshot to the lake"):
        lake.snapshot_of_run(config, "nope")


# ------------------------------------------------------------------------------------------- whole runs (slow)

class ScriptedLake:
    """lake.pull and lake.commit stood in for by a script of answers, to drive the flow's retry loop exactly: each
    pull gives an empty warehouse at the next snapshot number; commits are refused `refusals` times."""

    def __init__(self, refusals: int):
        self.refusals, self.pulls, self.commits = refusals, [], []

    def pull(self, config, target: Path) -> int:
        con = warehouse.connect(target)
        try:
            warehouse.apply_ddl(con)
        finally:
            con.close()
        self.pulls.append(target.name)
        return len(self.pulls) - 1

    def commit(self, config, building: Path, base: int, run_id: str, as_of: dt.date) -> int:
        self.commits.append(base)
        if len(self.commits) <= self.refusals:
            raise lake.LakeConflict(f"the lake moved from snapshot {base} to {base + 1} while this run built")
        return base + 1


def test_an_attach_that_meets_a_lake_another_run_is_creating_is_tried_again(monkeypatch):
    """Two runs creating a new lake at once collide in PostgreSQL and the loser's initialisation is rolled back: its
    attach is tried again (after 0.2 s, then 0.4 s ...) and finds the lake the other made; at most INIT_ATTEMPTS times,
    and any other error at once."""
    sleeps = []
    monkeypatch.setattr(lake.time, "sleep", sleeps.append)

    class Attaching:
        def __init__(self, failures: int, error: str = "Failed to initialize DuckLake: duplicate key value"):
            self.failures, self.error, self.calls = failures, error, 0

        def execute(self, statement):
            self.calls += 1
            if self.calls <= self.failures:
                raise duckdb.CatalogException(self.error)

    con = Attaching(failures=2)
    lake._attach(con, "attach 'ducklake:x' as lake", "x")
    assert con.calls == 3 and sleeps == [0.2, 0.4]
    con = Attaching(failures=lake.INIT_ATTEMPTS)
    with pytest.raises(duckdb.CatalogException, match="Failed to initialize DuckLake"):
        lake._attach(con, "attach 'ducklake:x' as lake", "x")
    assert con.calls == lake.INIT_ATTEMPTS == 5
    con = Attaching(failures=1, error="Permission denied")
    with pytest.raises(duckdb.CatalogException, match="Permission denied"):
        lake._attach(con, "attach 'ducklake:x' as lake", "x")
    assert con.calls == 1


def scripted(monkeypatch, refusals: int, attempts: int) -> ScriptedLake:
    script = ScriptedLake(refusals)
    config = lake.LakeConfig("postgres:dbname=scripted", "/nowhere/", attempts)
    monkeypatch.setattr(lake, "configured", lambda: config)
    monkeypatch.setattr(lake, "pull", script.pull)
    monkeypatch.setattr(lake, "commit", script.commit)
    return script


@pytest.mark.slow
def test_a_refused_commit_builds_again_on_the_newer_snapshot_then_publishes(prefect_server, tmp_path, monkeypatch):
    from flows.nightly import nightly

    script = scripted(monkeypatch, refusals=1, attempts=3)
    result = nightly(as_of=AS_OF, catalog_dir=str(CATALOGS), warehouse_file=str(tmp_path / "w" / "hweval.duckdb"),
                     reports_dir=str(tmp_path / "reports"), run_id="retried")
    # pulled snapshot 0, refused; pulled snapshot 1, committed on top of it; published once
    assert script.commits == [0, 1] and len(script.pulls) == 2
    assert json.loads((tmp_path / "reports" / "latest.json").read_text())["run_id"] == "retried"
    assert result.latest_updated and (tmp_path / "w" / "hweval.duckdb").exists()


@pytest.mark.slow
def test_a_run_that_keeps_being_refused_gives_up_and_publishes_nothing(prefect_server, tmp_path, monkeypatch):
    from flows.nightly import nightly

    script = scripted(monkeypatch, refusals=5, attempts=2)
    with pytest.raises(lake.LakeConflict, match=r"gave up after 2 builds \(HWEVAL_LAKE_COMMIT_ATTEMPTS\)"):
        nightly(as_of=AS_OF, catalog_dir=str(CATALOGS), warehouse_file=str(tmp_path / "w" / "hweval.duckdb"),
                reports_dir=str(tmp_path / "reports"), run_id="refused")
    assert script.commits == [0, 1]
    # the local warehouse and reports are as the last good run left them: here, none
    assert not (tmp_path / "w" / "hweval.duckdb").exists() and not (tmp_path / "reports" / "latest.json").exists()
    assert not [p for p in (tmp_path / "w").iterdir()]  # no build file left behind


@pytest.mark.slow
def test_a_run_id_another_date_has_in_the_lake_is_refused_before_landing(flow_run, prefect_server, tmp_path,
                                                                         monkeypatch):
    """Under a lake the local file is no record of the runs (here there is none): the run checks its id on the
    snapshot it pulled, before landing anything; it commits and publishes nothing."""
    from flows import pipeline
    from flows.nightly import nightly

    script = scripted(monkeypatch, refusals=0, attempts=1)
    monkeypatch.setattr(lake, "pull", lambda config, target: shutil.copy2(flow_run.warehouse, target) and 7)
    with pytest.raises(pipeline.RunSettingError, match=rf"^run_id '{RUN_ID}' is already the run as of {AS_OF} in "
                                                        r"the warehouse this run builds on; expected"):
        nightly(as_of=AS_OF + dt.timedelta(days=1), catalog_dir=str(CATALOGS), run_id=RUN_ID,
                warehouse_file=str(tmp_path / "w" / "hweval.duckdb"), reports_dir=str(tmp_path / "reports"))
    assert script.commits == [] and not (tmp_path / "w" / "hweval.duckdb").exists()
    assert not (tmp_path / "reports" / "latest.json").exists()


def _rankings(con, database: str = "") -> list[tuple]:
    prefix = f"{database}." if database else ""
    return con.execute(f"select as_of, workload_id, candidate_id, outcome_rank, round(outcome_value, 9) "
                       f"from {prefix}marts.rankings order by all").fetchall()


@pytest.mark.slow
def test_two_runs_from_two_processes_commit_to_one_lake_and_rank_as_one_machine_does(lake_env, prefect_server,
                                                                                      tmp_path):
    """Two `hweval run` processes (two dates, two local folders: two machines) started together on one lake: both
    runs are in the lake afterwards, and its rankings are those of the same two runs made one after the other in
    the default single-file mode."""
    from flows.nightly import nightly

    days = [dt.date(2026, 11, 30), dt.date(2026, 12, 1)]
    env = dict(os.environ) | {"HWEVAL_LOCK_WAIT_S": "600"}
    env.pop("PREFECT_API_URL", None)  # each process starts its own temporary server, as on two machines
    processes = [subprocess.Popen(
        [sys.executable, "-m", "flows.cli", "run", "--as-of", day.isoformat(), "--warehouse",
         str(tmp_path / f"machine-{i}" / "hweval.duckdb"), "--reports", str(tmp_path / f"machine-{i}" / "reports")],
        cwd=PROJECT_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for i, day in enumerate(days)]
    outputs = [process.communicate(timeout=300)[0] for process in processes]
    assert [process.returncode for process in processes] == [0, 0], "\n".join(o[-3000:] for o in outputs)
    config = lake.configured()
    with lake.reading(config) as con:
        runs = con.execute("select as_of from ops.runs order by as_of").fetchall()
        lake_rankings = _rankings(con)
        snapshots = con.execute(f"select count(*) from {lake.ALIAS}.snapshots() where author = 'hweval'").fetchone()
    assert [r[0] for r in runs] == days
    assert snapshots == (2,)  # one commit each; a run refused once built again and committed on top
    for key in ("HWEVAL_LAKE", "HWEVAL_LAKE_DATA_PATH"):
        os.environ.pop(key)  # lake_env's monkeypatch restores them
    single = tmp_path / "one-machine"
    for day in days:
        nightly(as_of=day, catalog_dir=str(CATALOGS), warehouse_file=str(single / "hweval.duckdb"),
                reports_dir=str(single / "reports"), run_id=f"single-{day}")
    con = warehouse.connect_read_only(single / "hweval.duckdb")
    try:
        assert lake_rankings == _rankings(con) and len(lake_rankings) > 100
    finally:
        con.close()
    # each machine's own copy is the lake's snapshot its run committed; the reports are published locally
    assert json.loads((tmp_path / "machine-1" / "reports" / "latest.json").read_text())["as_of"] == "2026-12-01"
