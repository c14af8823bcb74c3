"""Guards around the edges of a run: secrets redacted from any message, values typed to their columns, a suite
that names a column no row has, metadata keys, --source in live mode, --accept-changes."""

from __future__ import annotations

import datetime as dt
import json
import time

import pyarrow as pa
import pytest
from builders import aws_page, aws_product
from conftest import AS_OF, CATALOGS

from flows import pipeline, warehouse
from flows.land import land_all
from flows.redaction import redact_text
from flows.source_batches import SourceBatch
from flows.sources import aws_pricing, benchmark_runs
from flows.sources._common import SourceFormatError
from flows.validate import BatchDataError, SuiteError, validate_rows


@pytest.mark.parametrize("text, shown", [
    ("GET https://cloudbilling.googleapis.com/v1/skus?pageSize=5&key=AIzaSyREAL&x=1",
     "GET https://cloudbilling.googleapis.com/v1/skus?pageSize=5&key=***&x=1"),
    ("https://bucket.s3.amazonaws.com/index.csv?X-Amz-Credential=AKIA1/x&X-Amz-Signature=f00d",
     "https://bucket.s3.amazonaws.com/index.csv?X-Amz-Credential=***&X-Amz-Signature=***"),
    ("https://mirror:hunter2@files.example.com/index.csv", "https://mirror:***@files.example.com/index.csv"),
    ("User: arn:aws:iam::123456789012:user/ci is not authorized", "User: arn:aws:iam::***:user/ci is not authorized"),
    ("prices moved 100x (median over 3 prices)", "prices moved 100x (median over 3 prices)"),  # nothing to hide
    ("GET https://prices.azure.com/api/retail/prices?currencyCode='USD'&$filter=x",  # not a secret: left as is
     "GET https://prices.azure.com/api/retail/prices?currencyCode='USD'&$filter=x"),
    ("https://login.example.com/cb?code=s3cr3t&state=1", "https://login.example.com/cb?code=***&state=1"),
    # a request quoted back in an error (AWS's canonical request, a web server echoing the headers)
    ("x-amz-security-token:IQoJb3JpZ2luX2Vj//FAKE\nhost:x", "x-amz-security-token:***\nhost:x"),
    ("authorization:AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20261130, Signature=f00d\nx",
     "authorization:***\nx"),
    ("<p>Authorization: Bearer ya29.a0AfH6SMBx</p>", "<p>Authorization: ***"),  # the whole line's rest goes
    ("sent bearer ya29.a0AfH6SMBx then", "sent bearer *** then"),
    ("Bearer authentication failed", "Bearer authentication failed"),  # a word, no token: nothing to hide
    ("The X-Amz-Security-Token header: 'FwoGZXIvYXdzEBYaDFAKE' was rejected",
     "The X-Amz-Security-Token header: '***' was rejected"),
    ('{"api_key": "sk-0123456789abcdef"}', '{"api_key": "***"}'),
    ("key id AKIAIOSFODNN7EXAMPLE denied", "key id *** denied"),
    # a message saying what to set: short words after a secret's name are no secret, and stay
    ("set AZURE_ACCESS_TOKEN: a bearer token for Azure", "set AZURE_ACCESS_TOKEN: a bearer token for Azure"),
    ("page 3's NextToken repeats page 1's", "page 3's NextToken repeats page 1's"),
])
def test_secrets_in_any_message_are_redacted(text, shown):
    assert redact_text(text) == shown


def test_values_take_their_columns_types_or_fail_naming_the_column(fresh_db):
    fresh_db.execute("create table main.t (name varchar, n integer, x double)")
    # a number or a flag where text belongs is kept as its text; a JSON object as JSON
    warehouse.insert_rows(fresh_db, "main.t", [{"name": 12, "n": 3, "x": 1.5}, {"name": {"a": 1}, "n": 4.0}])
    assert fresh_db.execute("select * from main.t order by n").fetchall() == [("12", 3, 1.5), ('{"a": 1}', 4, None)]
    with pytest.raises(pa.ArrowInvalid, match=r"main.t.n: 8.5 is not a whole number"):  # never truncated to 8
        warehouse.insert_rows(fresh_db, "main.t", [{"n": 8.5}])
    with pytest.raises(pa.ArrowInvalid, match=r"main.t.x: a value is not a DOUBLE"):
        warehouse.insert_rows(fresh_db, "main.t", [{"x": "a lot"}])
    with pytest.raises(KeyError, match="main.t: no column"):
        warehouse.insert_rows(fresh_db, "main.t", [{"nmae": "typo"}])


def test_the_raw_schema_is_built_once_when_the_fetch_tasks_ask_for_it_at_once(monkeypatch):
    """Each fetch task types its batch as its raw table (warehouse.raw_column_types), all at once in their threads:
    the scratch schema that declares them is built by the first, once, and the others wait for it."""
    import threading
    from functools import lru_cache

    built = []
    build = warehouse._raw_schema.__wrapped__

    @lru_cache(maxsize=1)
    def slow_raw_schema():
        built.append(threading.current_thread().name)
        time.sleep(1.0)  # long enough that the other threads ask meanwhile, on a loaded machine too
        return build()

    monkeypatch.setattr(warehouse, "_raw_schema", slow_raw_schema)
    start = threading.Barrier(8)
    found = {}

    def ask(n):
        start.wait()
        found[n] = warehouse.raw_column_types("aws_pricing")

    threads = [threading.Thread(target=ask, args=(n,), name=f"fetch-{n}") for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(built) == 1
    assert len(found) == 8 and all(types == found[0] for types in found.values())
    assert found[0]["instance_type"] == "VARCHAR"


def test_a_suite_naming_a_column_no_row_has_is_a_suite_error():
    suite = {"name": "s", "expectations": [
        {"type": "expect_column_values_to_not_be_null", "kwargs": {"column": "prcie_usd"}, "meta": {"name": "typo"}}]}
    with pytest.raises(SuiteError, match=r"suite 's': column\(s\) prcie_usd are not in the rows of this table"):
        validate_rows([{"row_no": 0, "price_usd": 1.0}], suite)


def test_an_expectation_whose_metric_raised_fails_the_batch_with_gx_s_message(monkeypatch):
    """GX 1.x keeps the error of a metric that raised under the metric's id in `exception_info`, not at its top:
    a string among the prices meets `min_value: 0`. The batch fails after the first pass, with GX's own message."""
    passes = counting_passes(monkeypatch)
    suite = {"name": "s", "expectations": [
        {"type": "expect_column_values_to_be_between", "kwargs": {"column": "price_usd", "min_value": 0},
         "meta": {"name": "not negative"}}]}
    for counts, first_pass in ((True, "BASIC"), (False, "BOOLEAN_ONLY")):  # with the counts or without, the same
        with pytest.raises(BatchDataError, match=r"^suite 's': not negative could not be evaluated on this batch: "
                                                 r"Column values, min_value, and max_value must either be None or of "
                                                 r"the same type\.$"):
            validate_rows([{"row_no": 0, "price_usd": 1.0}, {"row_no": 1, "price_usd": "a"}], suite, counts=counts)
        # not validated again COMPLETE: the error is known from the first pass
        assert [result_format for result_format, _ in passes] == [first_pass]
        passes.clear()


TWO_PASS_SUITE = {"name": "s", "expectations": [
    {"type": "expect_column_values_to_not_be_null", "kwargs": {"column": "price_usd"}, "meta": {"name": "priced"}},
    {"type": "expect_column_values_to_be_between", "kwargs": {"column": "price_usd", "min_value": 0},
     "meta": {"name": "not negative"}},
    {"type": "expect_column_values_to_be_in_set", "kwargs": {"column": "kind", "value_set": {"$PARAMETER": "kinds"}},
     "meta": {"name": "known kind"}},
    {"type": "expect_column_values_to_match_regex", "kwargs": {"column": "kind", "regex": "^[a-z]+$"},
     "meta": {"name": "lower case"}}]}
TWO_PASS_ROWS = [{"row_no": 10, "price_usd": 1.0, "kind": "gpu"}, {"row_no": 11, "price_usd": -2.0, "kind": "gpu"},
                 {"row_no": 12, "price_usd": None, "kind": "tpu"}, {"row_no": 13, "price_usd": 3.0, "kind": "fpga"}]


def counting_passes(monkeypatch) -> list[tuple[str, int]]:
    """Each GX validation from now on, as (result format, expectations validated), in order."""
    from great_expectations.datasource.fluent.interfaces import Batch

    formats = []
    real_validate = Batch.validate
    monkeypatch.setattr(Batch, "validate", lambda self, suite, **kw: formats.append(
        (kw["result_format"]["result_format"], len(suite.expectations))) or real_validate(self, suite, **kw))
    return formats


def validated_counting_passes(monkeypatch) -> tuple:
    """TWO_PASS_ROWS through TWO_PASS_SUITE, and each GX validation's (result format, expectations)."""
    import flows.validate as validate

    formats = counting_passes(monkeypatch)
    return validate.validate_rows(TWO_PASS_ROWS, TWO_PASS_SUITE, {"kinds": ["gpu", "tpu"]}), formats


def test_failing_expectations_are_validated_again_complete_and_the_passing_ones_stay_basic(monkeypatch):
    """GX validates every expectation with BASIC results (cheaper), then only the failing ones with COMPLETE results,
    whose failing row ids quarantine needs; one result per expectation."""
    outcome, formats = validated_counting_passes(monkeypatch)
    # 4 expectations BASIC; 3 failed (row 12 null, row 11 negative, row 13 fpga): those 3 again, COMPLETE
    assert formats == [("BASIC", 4), ("COMPLETE", 3)]
    assert sorted((f.row_no, f.expectation, f.value) for f in outcome.failures) == [
        (11, "not negative", -2.0), (12, "priced", None), (13, "known kind", "fpga")]
    assert [r["row_no"] for r in outcome.passed] == [10]
    by_name = {res.expectation_config.meta["name"]: res for res in outcome.result.results}
    assert sorted(by_name) == ["known kind", "lower case", "not negative", "priced"]  # one result each
    assert by_name["lower case"].success and "unexpected_index_list" not in by_name["lower case"].result  # BASIC
    assert by_name["known kind"].result["unexpected_index_list"] == [{"row_no": 13, "kind": "fpga"}]  # COMPLETE
    assert outcome.result.statistics["unsuccessful_expectations"] == 3


def test_a_validation_whose_result_nobody_shows_checks_each_expectation_boolean_only_with_the_same_outcome(
        monkeypatch):
    """Without counts (a batch GX's process does not keep for the Data Docs, a catalog check): the first pass is
    BOOLEAN_ONLY, each expectation's outcome without its counts; the failing ones are validated again COMPLETE, as
    with counts. The same rows pass and fail, for the same expectations and values."""
    import flows.validate as validate

    counted, formats = validated_counting_passes(monkeypatch)
    formats.clear()
    uncounted = validate.validate_rows(TWO_PASS_ROWS, TWO_PASS_SUITE, {"kinds": ["gpu", "tpu"]}, counts=False)
    assert formats == [("BOOLEAN_ONLY", 4), ("COMPLETE", 3)]

    def failures(outcome):
        return sorted((f.row_no, f.expectation, f.expectation_type, f.column, f.value, f.reason)
                      for f in outcome.failures)

    assert failures(uncounted) == failures(counted) == [
        (11, "not negative", "expect_column_values_to_be_between", "price_usd", -2.0, None),
        (12, "priced", "expect_column_values_to_not_be_null", "price_usd", None, None),
        (13, "known kind", "expect_column_values_to_be_in_set", "kind", "fpga", None)]
    assert uncounted.passed == counted.passed == [TWO_PASS_ROWS[0]]
    assert uncounted.failed_row_nos == counted.failed_row_nos == {11, 12, 13}
    # the passing expectation: its counts with them (4 rows, none unexpected), its outcome alone without
    [counted_pass] = [res for res in counted.result.results if res.success]
    [uncounted_pass] = [res for res in uncounted.result.results if res.success]
    assert (counted_pass.result["element_count"], counted_pass.result["unexpected_count"]) == (4, 0)
    assert uncounted_pass.result == {}


def test_a_second_pass_that_does_not_match_the_first_validates_the_whole_suite_complete(monkeypatch, caplog):
    """Should GX give back a failed expectation's configuration changed, the batch is validated again whole with
    COMPLETE results (as before the two passes), with a warning: the same failures, never a mismatched result."""
    import itertools

    import flows.validate as validate

    n = itertools.count()
    monkeypatch.setattr(validate, "_config_key", lambda res: f"{res.expectation_config.type} #{next(n)}")  # all differ
    outcome, formats = validated_counting_passes(monkeypatch)
    assert formats == [("BASIC", 4), ("COMPLETE", 3), ("COMPLETE", 4)]
    assert sorted((f.row_no, f.expectation, f.value) for f in outcome.failures) == [
        (11, "not negative", -2.0), (12, "priced", None), (13, "known kind", "fpga")]
    assert "the second pass did not match the first" in caplog.text


def test_batches_of_one_suite_validated_in_turn_are_each_judged_on_their_own_rows():
    """A suite's batch definition is made once a process (flows/validate.py:_whole_frame) and each batch comes to it
    as a parameter: no batch is judged on the rows of the one before."""
    import flows.validate as validate

    suite = {"name": "one suite, in turn", "expectations": [
        {"type": "expect_column_values_to_not_be_null", "kwargs": {"column": "price"}, "meta": {"name": "priced"}}]}
    whole = [{"row_no": 1, "price": 1.0}, {"row_no": 2, "price": None}, {"row_no": 3, "price": 3.0}]
    made = validate._whole_frame.cache_info().misses
    # whole: row 2 has no price; then rows 1 and 3 alone: none fails; then row 2 alone: it fails
    assert [validate_rows(rows, suite).failed_row_nos for rows in (whole, whole[::2], whole[1:2])] == [{2}, set(), {2}]
    assert validate._whole_frame.cache_info().misses - made <= 1  # made at most once, for the first batch


def test_batches_validated_from_threads_at_once_are_each_judged_on_their_own_rows():
    """Validations share GX's context, data source and engine caches (flows/validate.py), and each clears those
    caches when it ends: they run one at a time (_ONE_AT_A_TIME), so threads that validate at once still get each
    batch judged on its own rows, and a suite's asset is made once."""
    from concurrent.futures import ThreadPoolExecutor

    import flows.validate as validate

    suite = {"name": "from threads", "expectations": [
        {"type": "expect_column_values_to_not_be_null", "kwargs": {"column": "price"}, "meta": {"name": "priced"}}]}
    # batch k: rows 10k+1..10k+20, each row whose number is divisible by k+2 without a price
    batches = [[{"row_no": 10 * k + i, "price": None if (10 * k + i) % (k + 2) == 0 else 1.0} for i in range(1, 21)]
               for k in range(8)]
    expected = [{r["row_no"] for r in rows if r["price"] is None} for rows in batches]
    made = validate._whole_frame.cache_info().misses
    with ThreadPoolExecutor(max_workers=8) as pool:
        got = list(pool.map(lambda rows: validate_rows(rows, suite).failed_row_nos, batches))
    assert got == expected
    assert expected[0] == {2, 4, 6, 8, 10, 12, 14, 16, 18, 20}  # batch 0: rows 1-20, the even ones
    assert validate._whole_frame.cache_info().misses - made == 1


def test_gx_lets_go_of_a_validated_batch():
    """The data source is kept for the process (flows/validate.py), and with it GX's execution engine, which keeps
    each batch's frame and its metrics: they are let go of after each validation, or a run would hold every batch
    it validated (a whole offer file's) until it ends."""
    import gc
    import weakref

    import pandas as pd

    import flows.validate as validate

    suite = {"name": "let go", "expectations": [
        {"type": "expect_column_values_to_not_be_null", "kwargs": {"column": "price"}, "meta": {"name": "priced"}}]}
    frame = pd.DataFrame({"row_no": [1, 2, 3], "price": [1.0, None, 3.0]})
    kept = weakref.ref(frame)
    assert validate.validate_frame(frame, suite).failed_row_nos == {2}
    del frame
    gc.collect()
    assert kept() is None


def test_unknown_metadata_keys_of_a_benchmark_file_are_named(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("accelerator,chips,model,precision,concurrency,input_tokens,output_tokens,request_throughput,"
                    "output_tokens_per_s,ttft_p99_ms,tpot_p99_ms,completed,failed,source,date\n"
                    "inferentia2,1,llama-3.1-8b,bf16,32,1024,256,3.5,900,400,30,100,0,,\n")
    with pytest.raises(SourceFormatError, match=r"runs.csv: metadata key\(s\) notes unknown \(expected some of: kind"):
        benchmark_runs.read_file(path, "runs.csv", metadata={"notes": "x"})
    [row] = benchmark_runs.read_file(path, "runs.csv", metadata={"source": "our run", "date": "2026-11-20"})
    assert (row["run_source"], row["run_date"]) == ("our run", "2026-11-20")


def test_a_source_file_given_in_live_mode_keeps_the_run_live(catalog):
    live = pipeline.with_mode(catalog, "live")
    run = pipeline.with_source_files(live, {"mlperf_inference_snapshot": [str(
        CATALOGS / "snapshot/mlperf_inference/v4.1.summary_results.json")]}, AS_OF)
    assert run.sources.mode == "live"
    assert run.sources.sources["aws_pricing"].reads_live(run.sources.mode)


def aws_pricing_batch(prices: dict[str, str], as_of: dt.date) -> SourceBatch:
    """aws_pricing's batch of one on-demand price an instance type (p5.48xlarge, g6.2xlarge)."""
    gpus = {"p5.48xlarge": "8", "g6.2xlarge": "1"}
    rows = aws_pricing.rows_from_pages([("page", aws_page(
        *(aws_product(t, usd, sku=f"SKU-{t}", gpu=gpus[t]) for t, usd in prices.items())))])
    rows = [r | {"row_no": i, "source_id": "aws_pricing", "data_as_of": as_of} for i, r in enumerate(rows)]
    return SourceBatch.of_rows("aws_pricing", "aws_pricing", "aws_pricing", ["page"], as_of, rows)


def test_accept_changes_lands_a_source_a_table_level_check_would_hold_back(fresh_db, catalog):
    batch = aws_pricing_batch
    land_all(fresh_db, catalog, [batch({"p5.48xlarge": "55.04", "g6.2xlarge": "0.9776"},
                                       dt.date(2026, 11, 29))], "run-1", dt.date(2026, 11, 29))
    doubled_thrice = {"p5.48xlarge": "440.32", "g6.2xlarge": "7.8208"}  # x8: past max_price_change 3
    [held] = land_all(fresh_db, catalog, [batch(doubled_thrice, AS_OF)], "run-2", AS_OF)
    assert (held.status, held.rows_in, held.rows_quarantined) == ("stale", 2, 2)  # kept, with the check's name
    assert fresh_db.execute("select distinct expectation from ops.quarantine where run_id = 'run-2'").fetchall() == [
        ("price_change",)]
    [accepted] = land_all(fresh_db, catalog, [batch(doubled_thrice, AS_OF)], "run-3", AS_OF,
                          accept_changes=frozenset({"aws_pricing"}))
    assert (accepted.status, accepted.rows_landed) == ("landed", 2)


def test_accept_changes_names_a_source_that_does_not_exist(prefect_server, tmp_path):
    from flows.catalog import CatalogError
    from flows.nightly import nightly

    with pytest.raises(CatalogError, match=r"--accept-changes aws_pricnig: no such source in sources.yaml"):
        nightly(as_of=AS_OF, catalog_dir=str(CATALOGS), warehouse_file=str(tmp_path / "w.duckdb"),
                reports_dir=str(tmp_path / "r"), accept_changes=["aws_pricnig"])


def test_a_connection_handed_on_is_taken_once(tmp_path):
    """The land task hands its connection to the build (warehouse.hand_on): the next connect_handed_on takes that
    one, the one after opens its own; a second hand-on before the first was taken is a bug, and says so."""
    path = tmp_path / "w.duckdb"
    con = warehouse.connect(path)
    con.execute("create table landed as select 1 as a")  # uncommitted nowhere: autocommit, not checkpointed
    warehouse.hand_on(path, con)
    with pytest.raises(RuntimeError, match="already handed on and not taken"):
        warehouse.hand_on(path, con)
    taken = warehouse.connect_handed_on(path)
    assert taken is con
    assert taken.execute("select a from landed").fetchall() == [(1,)]
    other = warehouse.connect_handed_on(path)
    assert other is not con
    other.close()
    con.close()


def test_a_connection_a_failed_step_left_is_closed_with_its_building_copy(tmp_path):
    """A run that fails after its landing handed the connection on (the build never took it): the building copy's
    end closes it, then removes the file."""
    import duckdb

    from flows import publishing

    with pytest.raises(ZeroDivisionError), publishing.building_copy(tmp_path / "w.duckdb") as building:
        con = warehouse.connect(building)
        warehouse.hand_on(building, con)
        1 / 0  # noqa: B018 - the step after the landing fails
    with pytest.raises(duckdb.ConnectionException):
        con.execute("select 1")
    assert not building.exists()


def test_a_batch_whose_every_row_is_quarantined_leaves_its_source_stale_on_its_last_good_rows(fresh_db, catalog):
    # day 1 lands two on-demand prices; on day 2 both read 0 USD an hour, which the price suite quarantines. Landed
    # with no rows, the source would have dropped both offers from the rankings and passed for a good load
    day_1 = dt.date(2026, 11, 29)
    [good] = land_all(fresh_db, catalog, [aws_pricing_batch({"p5.48xlarge": "55.04", "g6.2xlarge": "0.9776"}, day_1)],
                      "run-1", day_1)
    assert (good.status, good.rows_landed) == ("landed", 2)
    zero = {"p5.48xlarge": "0.0000000000", "g6.2xlarge": "0.0000000000"}
    [held] = land_all(fresh_db, catalog, [aws_pricing_batch(zero, AS_OF)], "run-2", AS_OF)
    assert (held.status, held.rows_in, held.rows_landed, held.rows_quarantined, held.stale_since) == (
        "stale", 2, 0, 2, day_1)
    assert held.error == ("every one of its 2 rows was quarantined (on_demand_hourly_price_positive: 2): nothing of it "
                          "can be ranked")
    # the run uses day 1's rows, and says so; each row is quarantined with the check it failed, not the load's reason
    assert fresh_db.execute("select status, used_run_id, rows_in, rows_quarantined from ops.source_loads "
                            "where run_id = 'run-2'").fetchall() == [("stale", "run-1", 2, 2)]
    assert fresh_db.execute("select expectation, column_name, unexpected_value, count(*) from ops.quarantine "
                            "where run_id = 'run-2' group by all").fetchall() == [
        ("on_demand_hourly_price_positive", "price_usd", "0.0", 2)]
    assert fresh_db.execute("select count(*) from raw.aws_pricing where run_id = 'run-2'").fetchall() == [(0,)]
    # one good row is enough to land: the other is quarantined as before
    [landed] = land_all(fresh_db, catalog, [aws_pricing_batch(zero | {"g6.2xlarge": "0.9776"}, AS_OF)], "run-3", AS_OF)
    assert (landed.status, landed.rows_landed, landed.rows_quarantined) == ("landed", 1, 1)


def test_a_backfill_whose_source_fails_runs_on_the_last_good_rows_before_its_date_not_after(fresh_db, catalog):
    # prices land on 11-28 (55.04) and 11-30 (60.00); a backfill of 11-29 whose fetch fails runs on 11-28's rows,
    # stale since 11-28 (1 day), never on a later date's prices (stale "since" 11-30 would be -1 days)
    from flows.source_batches import failed_batch

    day_1, backfill = dt.date(2026, 11, 28), dt.date(2026, 11, 29)
    land_all(fresh_db, catalog, [aws_pricing_batch({"p5.48xlarge": "55.04"}, day_1)], "run-1128", day_1)
    land_all(fresh_db, catalog, [aws_pricing_batch({"p5.48xlarge": "60.00"}, AS_OF)], "run-1130", AS_OF)
    [held] = land_all(fresh_db, catalog, [failed_batch(catalog, "aws_pricing", ConnectionError("no route"))],
                      "run-1129", backfill)
    assert (held.status, held.stale_since) == ("stale", day_1)
    assert fresh_db.execute("select used_run_id from ops.source_loads where run_id = 'run-1129'").fetchall() == [
        ("run-1128",)]
    # a backfill before any good load has no rows to run on, not the later ones
    [none] = land_all(fresh_db, catalog, [failed_batch(catalog, "aws_pricing", ConnectionError("no route"))],
                      "run-1127", dt.date(2026, 11, 27))
    assert (none.status, none.stale_since) == ("stale", None)
    assert fresh_db.execute("select used_run_id from ops.source_loads where run_id = 'run-1127'").fetchall() == [
        (None,)]


def test_a_regex_with_a_group_validates_as_written_without_a_warning_and_the_shipped_suites_have_none():
    """GX matches with pandas' str.contains, which warns (UserWarning) of every capturing group: six lines of noise in
    every run's log. The shipped suites write `(?:...)`; a user's suite with a group validates the same, silently."""
    import re
    import warnings

    suite = {"name": "s", "expectations": [
        {"type": "expect_column_values_to_match_regex", "kwargs": {"column": "count", "regex": "^[0-9]+(\\.0+)?$"},
         "meta": {"name": "whole"}}]}
    rows = [{"row_no": 0, "count": "8"}]
    validate_rows(rows, suite)  # GX imported first: its import routes warnings to logging (captureWarnings), which
    with warnings.catch_warnings(record=True) as caught:  # would take them from this record
        warnings.simplefilter("always")
        outcome = validate_rows([{"row_no": 0, "count": "8"}, {"row_no": 1, "count": "8.00"},
                                 {"row_no": 2, "count": "8.5"}], suite)
    assert outcome.failed_row_nos == {2}  # 8 and 8.00 match; 8.5 does not
    assert [str(w.message) for w in caught if "match groups" in str(w.message)] == []
    grouped = [(path.name, e["kwargs"]["regex"]) for path in sorted((CATALOGS / "expectations").glob("*.json"))
               for e in json.loads(path.read_text())["expectations"]
               if "regex" in e.get("kwargs", {}) and re.compile(e["kwargs"]["regex"]).groups]
    assert grouped == []
