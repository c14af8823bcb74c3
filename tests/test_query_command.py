"""`hweval query` (flows/query_command.py): an analyst's SQL on the warehouse, read-only (queries only, no file but
the warehouse) and bounded (rows, time); its errors in one line."""

import json
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from flows.cli import main

# the command's threads (the Ctrl-C watcher, the deadline's timer) fail no test quietly: an interrupt sent to a
# connection already closed showed only as a warning
pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")


def test_query_without_a_warehouse_says_how_to_make_one(tmp_path, capsys, python_sigint):
    import signal

    assert main(["query", "select 1", "--warehouse", str(tmp_path / "none.duckdb")]) == 1
    assert "run `hweval run` first" in capsys.readouterr().err
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # given back on the way out, as after a query


def test_query_prints_a_sql_error_as_one_line_with_its_position_and_exits_2(tmp_path, capsys):
    path = tmp_path / "q.duckdb"
    duckdb.connect(str(path)).close()
    assert main(["query", "select a,, b from t", "--warehouse", str(path)]) == 2
    # the second comma is the 10th character of the line
    assert capsys.readouterr().err == 'hweval query: Parser Error: syntax error at or near "," (line 1, column 10)\n'
    assert main(["query", "select 1 from t\n  where limit 3", "--warehouse", str(path)]) == 2
    # "limit" starts at the 9th character of the second line ("  where " is 8 characters)
    assert capsys.readouterr().err == ('hweval query: Parser Error: syntax error at or near "limit" '
                                       '(line 2, column 9)\n')
    assert main(["query", "select * from nope", "--warehouse", str(path)]) == 2
    assert capsys.readouterr().err.startswith("hweval query: Catalog Error: Table with name nope does not exist!")


def test_query_writes_every_row_as_csv_or_json(tmp_path, capsys):
    path = tmp_path / "q.duckdb"
    con = duckdb.connect(str(path))
    con.execute("create table t as select * from (values (1, 'a,b', date '2026-11-30'), (2, null, null)) v(n, s, d)")
    con.close()
    assert main(["query", "select * from t order by n", "--format", "csv", "--warehouse", str(path)]) == 0
    assert capsys.readouterr().out == 'n,s,d\n1,"a,b",2026-11-30\n2,,\n'
    assert main(["query", "select * from t order by n", "--format", "json", "--warehouse", str(path)]) == 0
    assert json.loads(capsys.readouterr().out) == [{"n": 1, "s": "a,b", "d": "2026-11-30"},
                                                  {"n": 2, "s": None, "d": None}]


@pytest.fixture
def small_warehouse(tmp_path) -> Path:
    """A closed DuckDB file with one table, t(n): 1 to 5."""
    path = tmp_path / "w.duckdb"
    con = duckdb.connect(str(path))
    con.execute("create table t as select range + 1 as n from range(5)")
    con.close()
    return path


@pytest.mark.parametrize(("sql", "refused"), [
    ("copy (select 'x') to '{warehouse}' (format csv)", "COPY"),  # it overwrote the warehouse with a CSV
    ("attach '{tmp}/other.duckdb' as o (read_write); create table o.main.t as select 1", "ATTACH, CREATE"),
    ("install httpfs from '{tmp}/repo'", "LOAD"),
    ("set enable_external_access = true", "SET"),
    ("select 1; drop table t", "DROP"),  # a write behind a query: nothing runs
    ("export database '{tmp}/out'", "EXPORT"),
    # EXPLAIN ANALYZE runs the statement it explains: it wrote x.csv (in the DuckLake, over the lake's parquet files)
    ("explain analyze copy (select 42) to '{tmp}/x.csv'", "EXPLAIN ANALYZE"),
    ("/* a */ EXPLAIN -- b\n AnAlYsE copy (select 42) to '{tmp}/x.csv'", "EXPLAIN ANALYZE"),
    ("explain (format json, analyze) copy (select 42) to '{tmp}/x.csv'", "EXPLAIN ANALYZE"),
    ("explain (analyze false) select * from t", "EXPLAIN ANALYZE"),  # DuckDB analyzes it all the same
    ("explain copy (select 42) to '{tmp}/x.csv'", "EXPLAIN COPY"),  # the explain of no query
    ("explain insert into t values (6)", "EXPLAIN INSERT"),
])
def test_query_runs_queries_only(small_warehouse, capsys, sql, refused):
    tmp = small_warehouse.parent
    before = small_warehouse.read_bytes()
    assert main(["query", sql.format(warehouse=small_warehouse, tmp=tmp), "--warehouse", str(small_warehouse)]) == 2
    assert capsys.readouterr().err == (
        f"hweval query: {refused} refused: hweval query runs queries only (select, with, from, describe, show, "
        "summarize, pragma, explain of one of these without analyze) and reads the warehouse only\n")
    assert small_warehouse.read_bytes() == before
    assert sorted(p.name for p in tmp.iterdir()) == ["w.duckdb"]


@pytest.mark.parametrize(("sql", "refused"), [
    ("select * from read_csv('/etc/passwd')", 'file "/etc/passwd"'),
    ("select * from read_parquet('{tmp}/*.parquet')", 'file "{tmp}/*.parquet"'),
])
def test_query_can_read_no_file_other_than_the_warehouse(small_warehouse, capsys, sql, refused):
    # a query (SELECT) that reads a file: DuckDB's file access is off and locked
    tmp = small_warehouse.parent
    assert main(["query", sql.format(tmp=tmp), "--warehouse", str(small_warehouse)]) == 2
    expected = (f"hweval query: Permission Error: Cannot access {refused.format(tmp=tmp)} - file system operations "
                "are disabled by configuration; hweval query reads the warehouse only: files, ATTACH, COPY and "
                "extensions are off\n")
    assert capsys.readouterr().err == expected


def test_query_reads_describe_show_summarize_pragma_and_explain(small_warehouse, capsys):
    for sql in ["describe t", "show tables", "summarize t", "pragma table_info('t')", "explain select * from t",
                "explain (format json) select * from t", "explain describe t", "from t",
                "with x as (select n from t) select sum(n) from x"]:
        assert main(["query", sql, "--format", "csv", "--warehouse", str(small_warehouse)]) == 0, sql
    assert capsys.readouterr().out.splitlines()[-1] == "15"  # 1 + 2 + 3 + 4 + 5


def test_query_reads_every_schema_of_a_built_warehouse(snapshot_warehouse, tmp_path, capsys):
    """Locked down, the analysts' reading still works: marts, their analytics views, the other schemas, macros."""
    path = tmp_path / "w.duckdb"
    path.write_bytes(snapshot_warehouse.read_bytes())
    sql = ("select (select count(*) from marts.rankings) as marts, (select count(*) from analytics.rankings) as "
           "analytics, (select count(*) from intermediate.int_offers_priced) as intermediate, (select count(*) "
           "from raw.aws_pricing) as raw, (select count(*) from catalog.accelerators) as catalog, (select count(*) "
           "from ops.source_loads) as ops, term_hours(12) as macro")
    assert main(["query", sql, "--format", "csv", "--warehouse", str(path)]) == 0
    # the snapshot's 356 rankings (as a whole-flow run's; 357 before TPU v5p's int8 MLPerf runs were estimated at
    # int8: its on-demand tpu-v5p-8 now needs 2,365 h of llama31-70b-pretrain-15t's 2,160), 22 AWS rows landed, 31
    # accelerators, 11 sources' loads
    assert capsys.readouterr() == ("marts,analytics,intermediate,raw,catalog,ops,macro\n356,356,57,22,31,11,8760.0\n",
                                   "")


@pytest.mark.slow  # a sort past 256 MiB: 4-7 s on a 2-core machine
def test_query_spills_to_the_warehouse_temp_folder_with_file_access_off(small_warehouse, monkeypatch, capsys):
    """DuckDB's own temp folder (`<warehouse>.tmp`, removed when the query ends) is not a file access the lock-down
    refuses: a sort past HWEVAL_DUCKDB_MEMORY_LIMIT spills there and finishes."""
    import threading

    temp_folder, spilled, done = small_warehouse.with_name("w.duckdb.tmp"), [], threading.Event()

    def watch():
        while not done.wait(0.02):
            if temp_folder.is_dir() and any(temp_folder.iterdir()):
                spilled.append(True)

    monkeypatch.setenv("HWEVAL_DUCKDB_MEMORY_LIMIT", "256MiB")
    sql = ("select count(*) as n from (select s from (select md5(i::varchar) || md5((i + 1)::varchar) as s "
           "from range(2000000) t(i)) order by s offset 1)")
    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        assert main(["query", sql, "--format", "csv", "--timeout", "600", "--warehouse", str(small_warehouse)]) == 0
    finally:
        done.set()
        watcher.join()
    assert capsys.readouterr().out == "n\n1999999\n"
    assert spilled


@pytest.mark.parametrize("output", ["csv", "json"])
def test_query_prints_at_most_max_rows_in_csv_and_json_and_says_it_cut(small_warehouse, capsys, output):
    assert main(["query", "select n from t order by n", "--format", output, "--max-rows", "3",
                 "--warehouse", str(small_warehouse)]) == 0
    out, err = capsys.readouterr()
    assert out == {"csv": "n\n1\n2\n3\n",
                   "json": '[\n {\n  "n": 1\n },\n {\n  "n": 2\n },\n {\n  "n": 3\n }\n]\n'}[output]
    assert err == ("hweval query: output cut at 3 rows; the query returned more (--max-rows N prints up to N, at "
                   "most 1000000)\n")
    assert main(["query", "select n from t order by n", "--format", output, "--max-rows", "5",
                 "--warehouse", str(small_warehouse)]) == 0
    assert capsys.readouterr().err == ""  # every row printed: nothing cut


CUT_AT = "hweval query: output cut at {} rows; the query returned more (--max-rows N prints up to N, at most 1000000)\n"


@pytest.mark.parametrize(("max_rows", "out", "err"), [
    # DuckDB's own cut drew up to --max-rows + 3 rows whole, without a footer: all 5 rows here, nothing on stderr
    (2, "┌───────┐\n│   n   │\n│ int64 │\n├───────┤\n│     1 │\n│     2 │\n└───────┘\n\n", CUT_AT.format(2)),
    # the columns only, without the "0 rows" DuckDB writes under an empty table: the query had 5
    (0, "┌────────┐\n│   n    │\n│ int64  │\n└────────┘\n\n", CUT_AT.format(0)),
    (5, "┌───────┐\n│   n   │\n│ int64 │\n├───────┤\n│     1 │\n│     2 │\n│     3 │\n│     4 │\n│     5 │\n"
        "└───────┘\n\n", ""),  # every row printed: nothing cut
    (1, "┌───────┐\n│   n   │\n│ int64 │\n├───────┤\n│     1 │\n└───────┘\n\n",
     CUT_AT.format(1).replace("1 rows", "1 row")),
])
def test_query_prints_at_most_max_rows_in_the_table_and_says_it_cut(small_warehouse, capsys, max_rows, out, err):
    assert main(["query", "select n from t order by n", "--max-rows", str(max_rows),
                 "--warehouse", str(small_warehouse)]) == 0
    assert capsys.readouterr() == (out, err)
    # a query of no rows: DuckDB's "0 rows" is true, and stays
    assert main(["query", "select n from t where n > 99", "--max-rows", str(max_rows),
                 "--warehouse", str(small_warehouse)]) == 0
    assert capsys.readouterr() == ("┌────────┐\n│   n    │\n│ int64  │\n└────────┘\n  0 rows\n\n", "")


def test_query_draws_the_table_with_the_querys_own_column_names_and_types(small_warehouse, capsys):
    # the rows are drawn from a copy of the first ones (through Arrow): two columns named alike stay so, an ENUM (which
    # Arrow brings back as VARCHAR) and a BIT (which it brought back as a BLOB) keep their types and their text
    sql = "select 1 as n, 2 as n, 'b'::enum('a', 'b') as e, bit '101' as b"
    assert main(["query", sql, "--warehouse", str(small_warehouse)]) == 0
    assert capsys.readouterr() == ("┌───────┬───────┬────────────────┬─────┐\n"
                                   "│   n   │   n   │       e        │  b  │\n"
                                   "│ int32 │ int32 │ enum('a', 'b') │ bit │\n"
                                   "├───────┼───────┼────────────────┼─────┤\n"
                                   "│     1 │     2 │ b              │ 101 │\n"
                                   "└───────┴───────┴────────────────┴─────┘\n\n", "")


@pytest.mark.parametrize(("sql", "held"), [
    ("", "no statement (it is empty, or comments only)"),  # a traceback, exit 1
    ("   \n ", "no statement (it is empty, or comments only)"),
    ("-- c", "no statement (it is empty, or comments only)"),
    ("select 1; select 2", "2 statements"),  # it printed the last one's rows only
    ("select 1;; from t; select 3;", "3 statements"),
])
def test_query_runs_exactly_one_statement(small_warehouse, capsys, sql, held):
    assert main(["query", sql, "--format", "csv", "--warehouse", str(small_warehouse)]) == 2
    assert capsys.readouterr() == ("", f"hweval query: the SQL holds {held}; expected one query\n")
    assert main(["query", "select 1 as n;", "--format", "csv", "--warehouse", str(small_warehouse)]) == 0
    assert capsys.readouterr().out == "n\n1\n"


@pytest.mark.parametrize(("flag", "value", "error"), [
    ("--max-rows", "-5", "'-5': expected a whole number from 0 to 1000000"),
    ("--max-rows", "1000001", "'1000001': expected a whole number from 0 to 1000000"),
    ("--max-rows", "many", "'many': expected a whole number from 0 to 1000000"),
    # DuckDB draws a table 80 characters wide at the least: a smaller --max-width was ignored, and 0 meant 120
    *(("--max-width", width, f"'{width}': expected a whole number from 80 to 100000 (DuckDB's table is never "
                             "narrower than 80 characters)") for width in ("-1", "0", "17", "79")),
    ("--timeout", "0", "'0': expected a number of seconds above 0 and at most 3600"),
    ("--timeout", "nan", "'nan': expected a number of seconds above 0 and at most 3600"),
    ("--timeout", "3601", "'3601': expected a number of seconds above 0 and at most 3600"),
])
def test_query_refuses_a_bound_out_of_its_range(small_warehouse, capsys, flag, value, error):
    with pytest.raises(SystemExit) as exited:
        main(["query", "select 1", flag, value, "--warehouse", str(small_warehouse)])
    assert exited.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"hweval query: error: argument {flag}: {error}"


def test_query_draws_the_table_at_max_width_from_80(small_warehouse, capfd):
    sql = "select repeat('x', 200) as a, repeat('y', 200) as b"
    assert main(["query", sql, "--max-width", "80", "--warehouse", str(small_warehouse)]) == 0
    lines = capfd.readouterr().out.splitlines()  # DuckDB prints the table itself, past Python's sys.stdout
    assert max(len(line) for line in lines) == 80


@pytest.mark.parametrize("output", ["table", "csv"])
def test_query_stops_at_its_timeout(small_warehouse, capsys, output):
    assert main(["query", "select count(*) from range(10000000000)", "--format", output, "--timeout", "0.3",
                 "--warehouse", str(small_warehouse)]) == 2
    assert capsys.readouterr() == ("", "hweval: query stopped after 0.3 s (--timeout)\n")


def test_query_refuses_sql_that_is_not_utf8_in_one_line(small_warehouse, capsys):
    sql = b"select '\xff'".decode("utf-8", "surrogateescape")  # as Python gives a command line's byte 0xff
    assert main(["query", sql, "--warehouse", str(small_warehouse)]) == 2
    assert capsys.readouterr().err == ("hweval query: the SQL is not UTF-8 text (byte 0xff at character 9); "
                                       "expected UTF-8\n")


def test_query_says_in_one_line_that_another_process_is_writing_the_warehouse(small_warehouse, capsys):
    code = "import duckdb, sys, time; con = duckdb.connect(sys.argv[1]); print('open', flush=True); time.sleep(60)"
    writer = subprocess.Popen([sys.executable, "-c", code, str(small_warehouse)], stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline() == "open\n"
        assert main(["query", "select 1", "--warehouse", str(small_warehouse)]) == 1
    finally:
        writer.kill()
        writer.wait()
    assert re.fullmatch(re.escape(f"hweval: {small_warehouse}: another process has it open for writing (a run?); "
                                  f'try again when it has finished (IO Error: Could not set lock on file '
                                  f'"{small_warehouse}": Conflicting lock is held in ') + r".+\n",
                        capsys.readouterr().err)


@pytest.mark.parametrize("command", ["query", "sources"])
def test_query_and_sources_say_in_one_line_that_a_file_is_no_duckdb_warehouse(tmp_path, capsys, command):
    text_file = tmp_path / "hostname"
    text_file.write_text("a-host\n")
    for path, error in ((text_file, f'The file "{text_file}" exists, but it is not a valid DuckDB database file!'),
                        (tmp_path, f'Could not read from file "{tmp_path}": Is a directory')):
        assert main([command, *(["select 1"] if command == "query" else []), "--warehouse", str(path)]) == 2
        assert capsys.readouterr().err == f"hweval: {path}: not a DuckDB warehouse (IO Error: {error})\n"
    assert text_file.read_text() == "a-host\n"


def test_query_writes_json_that_is_json_and_blobs_as_hex(small_warehouse, capsys):
    sql = ("select 1.5::double as x, 'inf'::double as inf, '-inf'::float as neg, 'nan'::double as nan, "
           "'\\xAB\\x01'::blob as b, ['nan'::double, 2.0] as l, {'k': 'a'::blob} as s")
    assert main(["query", sql, "--format", "json", "--warehouse", str(small_warehouse)]) == 0
    out = capsys.readouterr().out

    def refuse(constant):
        raise AssertionError(f"not JSON: {constant}")

    assert json.loads(out, parse_constant=refuse) == [
        {"x": 1.5, "inf": None, "neg": None, "nan": None, "b": "ab01", "l": [None, 2.0], "s": {"k": "61"}}]
    assert main(["query", "select 'ab'::blob as b, 'nan'::double as nan", "--format", "csv",
                 "--warehouse", str(small_warehouse)]) == 0
    assert capsys.readouterr().out == "b,nan\n6162,nan\n"


def test_query_refuses_json_of_two_columns_of_one_name_that_table_and_csv_print(small_warehouse, capsys):
    # two runs' outcome_value side by side: a JSON object kept the second only, and said nothing
    sql = "select 1 as v, 2 as v, 3 as V, 4 as w, 5 as w"
    assert main(["query", sql, "--format", "json", "--warehouse", str(small_warehouse)]) == 2
    assert capsys.readouterr() == ("", "hweval query: the query returns more than one column named 'v', 'w'; a JSON "
                                       "object holds one value a name: give each its own name (`... as name`), or "
                                       "use --format table or csv\n")
    assert main(["query", sql, "--format", "csv", "--warehouse", str(small_warehouse)]) == 0
    assert capsys.readouterr().out == "v,v,V,w,w\n1,2,3,4,5\n"
    # names that differ in case are two keys to JSON
    assert main(["query", "select 1 as v, 3 as V", "--format", "json", "--warehouse", str(small_warehouse)]) == 0
    assert json.loads(capsys.readouterr().out) == [{"v": 1, "V": 3}]


def test_query_writes_decimals_in_json_as_numbers(small_warehouse, capsys):
    sql = ("select 1.5 as b, sum(n) * 1.25 as s, 12345678901234567890::decimal(38, 0) as big, 0.00::decimal(4, 2) as "
           "z, [2.25, null] as l, {'k': -0.5} as r from t")
    assert main(["query", sql, "--format", "json", "--warehouse", str(small_warehouse)]) == 0
    out = capsys.readouterr().out
    # 1 + 2 + 3 + 4 + 5 = 15, x 1.25 = 18.75; each a JSON number, not the text "1.5" it was
    assert json.loads(out) == [{"b": 1.5, "s": 18.75, "big": 12345678901234567890, "z": 0, "l": [2.25, None],
                                "r": {"k": -0.5}}]
    assert '"b": 1.5,' in out and '"big": 12345678901234567890,' in out
    # a decimal no float holds exactly is its exact text, not a float that changed it (1.2345678901234568e+16)
    assert main(["query", "select 12345678901234567.89::decimal(38, 2) as x", "--format", "json", "--warehouse",
                 str(small_warehouse)]) == 0
    assert json.loads(capsys.readouterr().out) == [{"x": "12345678901234567.89"}]


def test_query_writes_an_empty_string_in_csv_as_two_quotes_and_null_as_nothing(small_warehouse, capsys):
    sql = "select null as a, '' as b, 'x' as c, 'a,b' as d, 'say \"hi\"' as e, e'l\\nm' as f, ' s' as g"
    assert main(["query", sql, "--format", "csv", "--warehouse", str(small_warehouse)]) == 0
    # NULL and '' were both written as nothing (`,,`); the rest is quoted as Python's csv quotes it
    assert capsys.readouterr().out == 'a,b,c,d,e,f,g\n,"",x,"a,b","say ""hi""","l\nm", s\n'


def test_query_writes_control_characters_from_data_as_seen_in_csv_and_in_an_error(small_warehouse, capsys):
    """A review's finding: a source's text holding an escape sequence (`ESC]0;owned BEL ESC[2J`: a terminal's title
    set and its screen cleared) reached the terminal raw in CSV and in a conversion error; JSON escapes them itself."""
    sql = "select chr(27) || ']0;owned' || chr(7) || chr(27) || '[2J' as name"
    assert main(["query", sql, "--format", "csv", "--warehouse", str(small_warehouse)]) == 0
    assert capsys.readouterr().out == "name\n{U+001B}]0;owned{U+0007}{U+001B}[2J\n"
    assert main(["query", f"select cast(({sql}) as integer)", "--warehouse", str(small_warehouse)]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err and "'{U+001B}]0;owned{U+0007}{U+001B}[2J'" in err
    assert main(["query", sql, "--format", "json", "--warehouse", str(small_warehouse)]) == 0
    assert json.loads(capsys.readouterr().out) == [{"name": "\x1b]0;owned\x07\x1b[2J"}]  # escaped in the JSON text


@pytest.mark.parametrize("output", ["csv", "json"])
def test_query_refuses_a_value_past_max_cell_chars_naming_its_row_and_column(small_warehouse, capsys, output):
    """A review's finding: --max-width bounded the table only; one CSV cell of 50,000,000 characters, or a JSON list
    of 3,000,000 numbers, went to the terminal whole. A value's text past --max-cell-chars (10,000) is refused."""
    sql = "select n, repeat('x', 10000 + n - 2) as a from t order by n"  # row 1: 9,999 x's; row 2: 10,000; row 3: 10,001
    assert main(["query", sql, "--format", output, "--warehouse", str(small_warehouse)]) == 2
    out, err = capsys.readouterr()
    # in JSON a string's text is quoted: row 1's 9,999 x's are 10,001 characters of JSON, past the bound already
    row, length = (3, 10_001) if output == "csv" else (1, 10_001)
    assert out == "" and err == (
        f"hweval query: row {row}, column 'a': a value of {length:,} characters, past --max-cell-chars (10,000); "
        "select part of it (left(x, 100), len(x)) or raise --max-cell-chars (at most 100,000,000)\n")
    assert main(["query", sql, "--format", output, "--max-cell-chars", "20000", "--warehouse",
                 str(small_warehouse)]) == 0
    capsys.readouterr()


def test_query_refuses_ducklakes_functions_that_write_under_the_lakes_data_folder(small_warehouse, capsys):
    """A review's finding: in DuckLake mode, `select * from ducklake_flush_inlined_data('lake')` wrote 30 Parquet
    files under the lake's data folder from a read-only attachment. Refused by name, before it runs."""
    assert main(["query", "select * from DuckLake_Flush_Inlined_Data('lake')", "--warehouse",
                 str(small_warehouse)]) == 2
    assert capsys.readouterr().err == ("hweval query: DuckLake's functions (ducklake_...) refused: some write under "
                                       "the lake's data folder; hweval query reads the warehouse only\n")


def _as_a_terminals_sigint() -> None:
    """In the child, before it runs: SIGINT as a terminal's command has it (default action, not blocked), whatever
    the test process inherited (a shell's background job ignores it; a blocked signal would wait)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@pytest.mark.slow  # a process of its own, interrupted as a terminal's Ctrl-C does (4 s)
def test_query_interrupted_by_ctrl_c_says_so_in_one_line_and_exits_130(small_warehouse):
    """A review's finding: Ctrl-C ended `hweval query` with a traceback (RuntimeError: Query interrupted), exit 1."""
    import signal
    import time

    process = subprocess.Popen([sys.executable, "-m", "flows.cli", "query", "--warehouse", str(small_warehouse),
                                "--timeout", "60", "select count(*) from range(100000000000000)"],
                               stderr=subprocess.PIPE, text=True, cwd=Path(__file__).parent.parent,
                               preexec_fn=_as_a_terminals_sigint)
    time.sleep(3)  # imported, connected, the query under way
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=50)
    # its status 130, and then its process ended by SIGINT, as any command Ctrl-C ended (a shell's $? is 130)
    assert (process.returncode, err) == (-signal.SIGINT, "hweval query: interrupted (Ctrl-C)\n")


@pytest.fixture
def python_sigint():
    """SIGINT handled by Python's own handler (KeyboardInterrupt), as in a terminal's command, whatever this worker
    inherited (a shell's background job starts with it ignored) or an earlier test left; given back after."""
    import signal
    import threading

    assert threading.current_thread() is threading.main_thread()  # (the only thread that sets a signal's handler)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_a_ctrl_c_while_the_query_runs_is_noted_not_raised_and_sigints_handler_is_given_back(small_warehouse,
                                                                                           python_sigint):
    """CI's finding: the watcher's interrupt made DuckDB raise InterruptException, and Python's KeyboardInterrupt for
    the same Ctrl-C then came inside its handling: a traceback and exit -2 (7 of 40 tries under load). While the
    command runs, SIGINT's handler notes it and the watcher interrupts the query; the handler is given back after."""
    import os
    import signal
    import time

    from flows.query_command import _Stopper

    wakeup_fd = signal.set_wakeup_fd(-1)  # (whatever this worker has: given back below)
    signal.set_wakeup_fd(wakeup_fd)
    con = duckdb.connect(str(small_warehouse), read_only=True)
    stopper = _Stopper(timeout_s=60).listen()
    stopper.start(con)
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.2)  # the handler runs here: Python's own raised KeyboardInterrupt
    except KeyboardInterrupt:
        pytest.fail("SIGINT raised KeyboardInterrupt while the query ran")
    finally:
        stopper.end()
        con.close()
    assert stopper.ctrl_c and not stopper.timed_out.is_set()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert signal.set_wakeup_fd(wakeup_fd) == wakeup_fd  # not the closed pipe's, whose number a later file reuses


def test_a_ctrl_c_before_duckdb_executes_the_query_is_sent_again_until_it_is_taken(small_warehouse, python_sigint,
                                                                                  monkeypatch):
    """The helper's finding: DuckDB drops an interrupt that comes before a query executes (or between two of its
    calls); a Ctrl-C there was lost, and the query ran on until the grace's end ended the process with "still
    planning it". The interrupt is sent again until the query ends: this sum of 1e10 numbers (1e9 took 1.3 s here),
    begun 0.3 s after the Ctrl-C, stops at once."""
    import os
    import signal
    import time

    from flows import query_command

    monkeypatch.setattr(query_command, "QUERY_INTERRUPT_GRACE_S", 120.0)  # (the process is the test's: not ended)
    con = duckdb.connect(str(small_warehouse), read_only=True)
    stopper = query_command._Stopper(timeout_s=600).listen()
    stopper.start(con)
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.3)  # the watcher's first interrupt, with no query running: dropped
        started = time.monotonic()
        with pytest.raises(duckdb.InterruptException):
            con.sql("select sum(range) from range(10000000000)").fetchall()
        assert time.monotonic() - started < 5  # (uninterrupted: 13 s)
    finally:
        stopper.end()
        con.close()


def test_a_ctrl_c_as_the_command_starts_runs_nothing_and_exits_130(small_warehouse, python_sigint, capsys,
                                                                   monkeypatch):
    """The helper's finding: a Ctrl-C before the query's watch began (importing, connecting) ended the command with
    a traceback. It is noted from the command's start; once connected, the command runs nothing. Here it comes as
    the warehouse is opened, for a query that would otherwise run to its --timeout (exit 2)."""
    import os
    import signal
    import time

    from flows import query_command

    opened, used = query_command.open_warehouse_read_only, []

    class Connection:  # the connection opened, each of its methods the command calls noted
        def __init__(self, con):
            self.con = con

        def __getattr__(self, name):
            used.append(name)
            return getattr(self.con, name)

    def opened_after_a_ctrl_c(path):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.2)
        return Connection(opened(path))

    monkeypatch.setattr(query_command, "open_warehouse_read_only", opened_after_a_ctrl_c)
    assert main(["query", "select sum(range) from range(100000000000000)", "--timeout", "3", "--warehouse",
                 str(small_warehouse)]) == 130
    assert capsys.readouterr().err == "hweval query: interrupted (Ctrl-C)\n"
    assert "sql" not in used and "extract_statements" not in used  # nothing run: the connection interrupted, closed


def test_a_query_interrupted_by_ctrl_c_in_the_same_process_says_so_and_returns_130(small_warehouse, python_sigint,
                                                                                   capsys):
    """The same, through the command: a Ctrl-C half a second into a query that would run for hours ends it with one
    line and 130, not DuckDB's error ("INTERRUPT Error: Interrupted!", 2) nor a KeyboardInterrupt."""
    import os
    import signal
    import threading

    threading.Timer(0.5, os.kill, args=(os.getpid(), signal.SIGINT)).start()
    assert main(["query", "select count(*) from range(100000000000000)", "--warehouse", str(small_warehouse)]) == 130
    assert capsys.readouterr().err == "hweval query: interrupted (Ctrl-C)\n"


def test_a_ctrl_c_while_the_query_ended_ends_the_command_with_130(small_warehouse, python_sigint, capsys,
                                                                  monkeypatch):
    """A Ctrl-C that comes as the query ends, its handler still the command's, ends the command as Python's own did:
    one line and 130, nothing printed (here it comes as the stopper is ended, after the rows were fetched)."""
    import os
    import signal
    import time

    from flows.query_command import _Stopper

    end = _Stopper.end

    def end_after_a_ctrl_c(stopper):
        if not stopper.ended.is_set():  # (end's second call, the command's last, finds it ended)
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.2)
        end(stopper)

    monkeypatch.setattr(_Stopper, "end", end_after_a_ctrl_c)
    assert main(["query", "select n from t", "--format", "csv", "--warehouse", str(small_warehouse)]) == 130
    assert capsys.readouterr() == ("", "hweval query: interrupted (Ctrl-C)\n")


def test_a_ctrl_c_as_the_rows_are_written_says_so_in_one_line_and_exits_130(small_warehouse, python_sigint, capsys,
                                                                           monkeypatch):
    """The review's finding: once the query has ended, SIGINT's handler is Python's own again, and a Ctrl-C as the
    rows were written (a million of them, or a pager that does not read) ended the command with a traceback."""
    import os
    import signal
    import time

    from flows import query_command

    cell = query_command._csv_cell

    def cell_then_a_ctrl_c(value):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.2)  # Python's handler raises KeyboardInterrupt here
        return cell(value)

    monkeypatch.setattr(query_command, "_csv_cell", cell_then_a_ctrl_c)
    try:
        status = main(["query", "select n from t", "--format", "csv", "--warehouse", str(small_warehouse)])
    except KeyboardInterrupt:
        pytest.fail("a Ctrl-C as the rows were written ended the command with a traceback")
    assert status == 130
    assert capsys.readouterr() == ("", "hweval query: interrupted (Ctrl-C)\n")


@pytest.mark.slow  # a process of its own, ended at its bound (3-5 s)
def test_a_ctrl_c_while_the_warehouse_does_not_answer_ends_the_command_within_its_grace(small_warehouse):
    """The review's finding: a Ctrl-C noted before the command is connected waited for the connection (a DuckLake's
    catalog that does not answer: minutes). Not connected QUERY_INTERRUPT_GRACE_S (2 s) later, the command ends,
    saying so. Here the warehouse takes 60 s to open."""
    import signal
    import time

    from flows.query_command import QUERY_INTERRUPT_GRACE_S

    script = ("import os, sys, time\nfrom flows import query_command\nfrom flows.cli import main\n"
              "def never_answers(path):\n    os.write(1, b'connecting\\n')\n    time.sleep(60)\n"
              "query_command.open_warehouse_read_only = never_answers\n"
              "sys.exit(main(['query', 'select 1', '--warehouse', sys.argv[1]]))\n")
    process = subprocess.Popen([sys.executable, "-c", script, str(small_warehouse)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, cwd=Path(__file__).parent.parent,
                               preexec_fn=_as_a_terminals_sigint)
    try:
        assert process.stdout.readline() == "connecting\n"
        started = time.monotonic()
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
    finally:
        process.kill()
    assert time.monotonic() - started < 30  # 2 s of grace, where the connection takes 60
    assert (process.returncode, err) == (130, "hweval query: interrupted (Ctrl-C); still connecting to the warehouse "
                                              f"{QUERY_INTERRUPT_GRACE_S:g} s later, so the command ended\n")


def _planned_for_minutes(links: int = 22) -> str:
    """A query DuckDB binds and plans for minutes, and GBs, before it executes anything: each of `links` chained CTEs
    (`not materialized`: inlined) joins the one before with itself, so the plan doubles at each (20 planned for 17 s
    and 2.4 GB on this project's 2-core machine; 22, four times that)."""
    ctes = ["c0 as not materialized (select 1 as x)"]
    ctes += [f"c{i} as not materialized (select a.x from c{i - 1} a, c{i - 1} b where a.x = b.x)"
             for i in range(1, links + 1)]
    return f"with {', '.join(ctes)} select count(*) from c{links}"


@pytest.mark.slow  # processes of their own, each ended at its bound (3-5 s each)
@pytest.mark.parametrize(("how", "status", "said"), [
    ("timeout", 2, "hweval: query stopped after 1 s (--timeout)"),
    ("ctrl-c", 130, "hweval query: interrupted (Ctrl-C)")])
def test_a_query_still_planned_at_its_timeout_or_ctrl_c_ends_with_its_process(small_warehouse, how, status, said):
    """A review's finding: DuckDB acts on an interrupt as it executes, not as it plans: a query still planned at its
    --timeout, or at a Ctrl-C, went on for as long as its plan took (here minutes, and GBs). The command gives it
    QUERY_INTERRUPT_GRACE_S (2 s) after the interrupt, then ends its process, saying so."""
    import signal
    import time

    from flows.query_command import QUERY_INTERRUPT_GRACE_S

    process = subprocess.Popen([sys.executable, "-m", "flows.cli", "query", "--warehouse", str(small_warehouse),
                                "--timeout", "1" if how == "timeout" else "600", _planned_for_minutes()],
                               stderr=subprocess.PIPE, text=True, cwd=Path(__file__).parent.parent,
                               preexec_fn=_as_a_terminals_sigint)
    started = time.monotonic()
    if how == "ctrl-c":
        time.sleep(3)  # imported, connected, the query being planned
        process.send_signal(signal.SIGINT)
    try:
        _, err = process.communicate(timeout=30)
    finally:
        process.kill()
    # started, 1 s (or 3 s) to its interrupt, 2 s of grace: well within 30 s, where its plan takes minutes
    assert time.monotonic() - started < 30
    assert (process.returncode, err) == (status, f"{said}; DuckDB, still planning it, took no interrupt within "
                                                 f"{QUERY_INTERRUPT_GRACE_S:g} s, so the command ended\n")
