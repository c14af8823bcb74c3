"""HWEVAL_DUCKDB_MEMORY_LIMIT and HWEVAL_DUCKDB_THREADS: DuckDB's memory limit and threads for every connection hweval
opens, checked before a run starts."""

from __future__ import annotations

import duckdb
import pytest

from flows import duckdb_settings, warehouse
from flows.cli import main
from flows.duckdb_settings import MemoryLimitError, ThreadsError, memory_limit, threads

ENV = "HWEVAL_DUCKDB_MEMORY_LIMIT"
THREADS = "HWEVAL_DUCKDB_THREADS"


@pytest.fixture(autouse=True)
def _threads_unset(monkeypatch):
    """`make test` sets HWEVAL_DUCKDB_THREADS=1 for its workers; these tests set it where they mean to."""
    monkeypatch.delenv(THREADS, raising=False)


def test_a_memory_limit_is_a_size_in_duckdbs_units_of_at_least_256_mib():
    assert memory_limit({}) is None and memory_limit({ENV: "  "}) is None  # unset: DuckDB's own (80% of memory)
    for good in ("2GB", "1.5GiB", "512 mb", "256MiB"):
        assert memory_limit({ENV: f" {good} "}) == good
    # the floor is 256 MiB = 268,435,456 bytes: 0.27 GB = 270,000,000 is above it, 0.26 GB = 260,000,000 below
    assert memory_limit({ENV: "0.27GB"}) == "0.27GB"
    for low in ("0.26GB", "255MiB", "128MB"):
        with pytest.raises(MemoryLimitError, match=rf"^{ENV}='{low}': at least 256 MiB"):
            memory_limit({ENV: low})
    for bad in ("80%", "abc", "2", "1PB", "GB", "-1GB", "1e9B"):
        with pytest.raises(MemoryLimitError, match=rf"^{ENV}='{bad}': expected a size such as 2GB"):
            memory_limit({ENV: bad})


def refused_run(monkeypatch, capsys, tmp_path, env: str, value: str) -> str:
    """`hweval run` with `env` set to `value`: refused before it starts (exit 2, no warehouse made); its stderr."""
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")  # no temporary server: the check comes first
    monkeypatch.setenv(env, value)
    assert main(["run", "--as-of", "2026-11-30", "--warehouse", str(tmp_path / "w.duckdb")]) == 2
    assert not (tmp_path / "w.duckdb").exists()
    return capsys.readouterr().err


def settings_of(path, setting: str) -> list[tuple]:
    """`setting` as the warehouse's connection and its read-only connection have it."""
    values = []
    for connect in (warehouse.connect, warehouse.connect_read_only):
        con = connect(path)
        try:
            values.append(con.execute(f"select current_setting('{setting}')").fetchall()[0][0])
        finally:
            con.close()
    return values


def test_threads_are_a_whole_number_from_1_to_1024():
    assert threads({}) is None and threads({THREADS: " "}) is None  # unset: DuckDB's own (the machine's cores)
    for good, count in (("1", 1), (" 4 ", 4), ("1024", 1024), ("0016", 16)):
        assert threads({THREADS: good}) == count
    for bad in ("0", "1025", "-1", "2.5", "two", "\u0663", "9" * 5000):
        with pytest.raises(ThreadsError, match=rf"^{THREADS}='.{{1,40}}': expected a whole number of threads from 1 "
                                               r"to 1024 \(unset, DuckDB takes the machine's cores\)$"):
            threads({THREADS: bad})


def test_the_warehouse_connections_take_the_threads(monkeypatch, tmp_path):
    monkeypatch.setenv(THREADS, "3")
    assert settings_of(tmp_path / "w.duckdb", "threads") == [3, 3]
    monkeypatch.setenv(ENV, "1GB")
    assert duckdb_settings.config(preserve_insertion_order=True) == {"preserve_insertion_order": True,
                                                                     "memory_limit": "1GB", "threads": 3}


def test_threads_that_are_no_number_stop_the_run_before_it_starts_and_a_query(monkeypatch, capsys, tmp_path):
    assert refused_run(monkeypatch, capsys, tmp_path, THREADS, "all").startswith(
        f"hweval: {THREADS}='all': expected a whole number of threads")
    monkeypatch.delenv(THREADS)
    warehouse.connect(tmp_path / "w.duckdb").close()
    monkeypatch.setenv(THREADS, "0")
    assert main(["query", "select 1", "--warehouse", str(tmp_path / "w.duckdb")]) == 2
    assert capsys.readouterr().err.startswith(f"hweval: {THREADS}='0': expected a whole number of threads from 1")


def test_the_warehouse_connections_take_the_limit(monkeypatch, tmp_path):
    path = tmp_path / "w.duckdb"
    default = warehouse.connect(path)
    # DuckDB's default is 80% of the machine's memory: more than the 300 MiB set below on any machine that runs this
    default_limit = default.execute("select current_setting('memory_limit')").fetchall()[0][0]
    default.close()
    monkeypatch.setenv(ENV, "300MiB")
    assert settings_of(path, "memory_limit") == ["300.0 MiB", "300.0 MiB"]
    assert default_limit != "300.0 MiB"
    # 1 GB in DuckDB's 1000^3 units is 953.6 MiB
    monkeypatch.setenv(ENV, "1GB")
    assert duckdb_settings.config(preserve_insertion_order=True) == {"preserve_insertion_order": True,
                                                                     "memory_limit": "1GB"}
    with duckdb.connect(config=duckdb_settings.config()) as scratch:
        assert scratch.execute("select current_setting('memory_limit')").fetchall() == [("953.6 MiB",)]


def test_a_memory_limit_that_is_no_size_stops_the_run_before_it_starts(monkeypatch, capsys, tmp_path):
    assert refused_run(monkeypatch, capsys, tmp_path, ENV, "80%").startswith(
        f"hweval: {ENV}='80%': expected a size such as 2GB, 1.5GiB or 512MB")


def test_a_query_runs_under_the_limit_and_a_bad_one_exits_2(monkeypatch, capsys, tmp_path):
    path = tmp_path / "w.duckdb"
    warehouse.connect(path).close()
    monkeypatch.setenv(ENV, "512MiB")
    assert main(["query", "select current_setting('memory_limit') as limit_", "--warehouse", str(path),
                 "--format", "csv"]) == 0
    assert capsys.readouterr().out == "limit_\n512.0 MiB\n"
    monkeypatch.setenv(ENV, "lots")
    assert main(["query", "select 1", "--warehouse", str(path)]) == 2
    assert capsys.readouterr().err.startswith(f"hweval: {ENV}='lots': expected a size")


def test_a_size_duckdb_cannot_count_is_refused_before_the_run():
    # 999,999,999 TB passes the pattern and the floor; DuckDB's own reading refuses it
    with pytest.raises(MemoryLimitError, match=rf"^{ENV}='999999999TB': DuckDB refuses it: .*out of range"):
        memory_limit({ENV: "999999999TB"})


class _Opened(Exception):
    """Raised by the recording duckdb.connect once it has seen the config: the caller goes no further."""


@pytest.fixture
def recorded_configs(monkeypatch):
    """duckdb.connect replaced by one that records the config it is given, then stops the caller."""
    configs = []

    def connect(*args, **kwargs):
        configs.append(kwargs.get("config"))
        raise _Opened

    monkeypatch.setenv(ENV, "700MiB")
    monkeypatch.setenv(THREADS, "2")
    assert memory_limit() == "700MiB"  # DuckDB's reading of it, kept for the process, before connect is replaced
    monkeypatch.setattr(duckdb, "connect", connect)
    return configs


def test_the_lake_the_offer_file_scan_and_hweval_sources_take_the_limit(recorded_configs, tmp_path, monkeypatch):
    import offer_file_builder as ofb

    from flows import lake
    from flows.sources import aws_offer_file

    with pytest.raises(_Opened):
        lake.connect(lake.LakeConfig(catalog="unused.ducklake", data_path=f"{tmp_path}/"))
    offer_file = tmp_path / "index.csv"
    ofb.write_offer_file(offer_file, ofb.products(min_rows=10, other=0))
    with pytest.raises(_Opened):
        aws_offer_file.read_file(offer_file, "index.csv")
    (tmp_path / "w.duckdb").touch()
    with pytest.raises(_Opened):
        main(["sources", "--warehouse", str(tmp_path / "w.duckdb")])
    # each with its own settings, and the limit
    assert recorded_configs == [
        {"autoinstall_known_extensions": False, "autoload_known_extensions": False, "memory_limit": "700MiB",
         "threads": 2},
        {"preserve_insertion_order": True, "memory_limit": "700MiB", "threads": 2},
        # hweval sources opens the warehouse as hweval query does: reading it only, no other file (and Arrow
        # conversions keep each column's type: the query's table travels through Arrow)
        {"enable_external_access": False, "lock_configuration": True, "arrow_lossless_conversion": True,
         "memory_limit": "700MiB", "threads": 2},
    ]


def test_an_offer_file_scan_past_the_limit_names_the_setting_not_the_file(monkeypatch, tmp_path):
    import offer_file_builder as ofb

    from flows.sources import aws_offer_file

    offer_file = tmp_path / "index.csv"
    ofb.write_offer_file(offer_file, ofb.products(min_rows=10, other=0))
    monkeypatch.setenv(ENV, "256MiB")
    # a list of 100 million integers (800 MB) cannot be spilled: past 256 MiB DuckDB stops the query
    monkeypatch.setattr(aws_offer_file, "_scan_query", lambda *args: "select list(i) from range(100000000) t(i)")
    with pytest.raises(duckdb_settings.OutOfMemory,
                       match=rf"^index.csv: scanning the offer file: DuckDB ran out of memory \(Out of Memory Error: "
                             rf".*\); {ENV}=256MiB allows too little: raise it, or unset it$"):
        aws_offer_file.read_file(offer_file, "index.csv")


def test_a_deployments_run_checks_both_settings_itself_before_it_fetches(prefect_server, monkeypatch, tmp_path):
    """A deployment's run does not pass through `hweval run`'s check (`run_command.check_run_settings`): the flow checks the
    two settings itself (`nightly._evaluate`), before any source is fetched. Without that check a bad value stopped
    the run later, at its first DuckDB connection: after every source had been fetched."""
    from conftest import AS_OF, CATALOGS

    from flows import nightly

    def fetch_all(*args, **kwargs):
        raise AssertionError("sources fetched before HWEVAL_DUCKDB_MEMORY_LIMIT and HWEVAL_DUCKDB_THREADS were checked")

    monkeypatch.setattr(nightly, "fetch_all", fetch_all)
    for env, value, error, message in ((ENV, "lots", MemoryLimitError, "expected a size such as 2GB"),
                                       (THREADS, "0", ThreadsError, "expected a whole number of threads from 1 to 1024")):
        monkeypatch.setenv(env, value)
        with pytest.raises(error, match=rf"^{env}='{value}': {message}"):
            nightly.nightly(as_of=AS_OF, catalog_dir=str(CATALOGS), warehouse_file=str(tmp_path / "w.duckdb"),
                            reports_dir=str(tmp_path / "reports"), run_id=f"bad-{env.lower()}")
        monkeypatch.delenv(env)
    assert not (tmp_path / "w.duckdb").exists() and not any((tmp_path / "reports").glob("*/index.md"))
