"""Incremental re-runs (issue 15 item 3): a source whose batch is unchanged since its last landed load is not validated
or landed again, models none of whose inputs changed are not built again, and the warehouse ends up as a cold run's
(table digests equal, run identity aside)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from conftest import CATALOGS

from flows import analytics, pipeline, transform, warehouse
from flows.catalog import load_catalog
from flows.land import land_all
from flows.source_batches import fetch_source

AS_OF = dt.date(2026, 11, 30)
# columns that say which run did the work, not what the warehouse holds
RUN_IDENTITY = ("run_id", "used_run_id", "reused_from", "started_at", "finished_at", "catalog_dir")
BEDROCK = Path("snapshot/bedrock_pricing/us-east-1.json")


def run(path: Path, catalog, run_id: str, as_of: dt.date = AS_OF):
    """One run without Prefect: fetch every source, land, build, record the run."""
    con = warehouse.connect(path)
    try:
        batches = [fetch_source(catalog, source_id) for source_id in pipeline.sources_to_run(catalog)]
        loads = land_all(con, catalog, batches, run_id, as_of)
        built = pipeline.build(con, run_id, as_of, catalog)
        pipeline.record_run(con, run_id, as_of, dt.datetime(2026, 11, 30, 1), catalog, loads)
    finally:
        con.close()
    return {load.source_id: load for load in loads}, {f"{m.layer}.{m.name}": m for m in built}


def digests(path: Path) -> dict[str, str]:
    """Content digest of every table the runs write (ops.model_builds is bookkeeping of the build itself), and of
    schema analytics."""
    con = warehouse.connect_read_only(path)
    try:
        tables = [f"{schema}.{name}" for schema, name in con.execute(
            "select table_schema, table_name from information_schema.tables where table_type = 'BASE TABLE' "
            "and table_schema in ('raw', 'ops', 'staging', 'intermediate', 'marts') order by 1, 2").fetchall()
            if (schema, name) != ("ops", "model_builds")]
        return {table: transform.content_digest(con, table, exclude=RUN_IDENTITY) for table in tables} | {
            "analytics (its views' SQL and comments)": analytics._state(con)}
    finally:
        con.close()


def change_bedrock_price(catalogs: Path) -> None:
    """Price Llama 3.1 8B input at 0.30 instead of 0.22 USD per million tokens (0.0003 per 1K) in the Bedrock
    snapshot of a catalog copy: a change within max_price_change, so it lands (the serving workloads compare 8B)."""
    path = catalogs / BEDROCK
    text = path.read_text()
    assert text.count('\\"USD\\": \\"0.0002200000\\"') == 2
    path.write_text(text.replace('\\"USD\\": \\"0.0002200000\\"', '\\"USD\\": \\"0.0003000000\\"', 1))


@pytest.mark.slow  # two or three whole runs each (make test-slow, CI)
def test_an_unchanged_re_run_reuses_every_source_and_model_and_equals_a_cold_run(tmp_path, catalog):
    rerun, cold = tmp_path / "rerun.duckdb", tmp_path / "cold.duckdb"
    first_loads, first_built = run(rerun, catalog, "first")
    assert not any(load.reused_from for load in first_loads.values())
    assert not any(model.reused for model in first_built.values())

    loads, built = run(rerun, catalog, "second")
    # nothing validated or landed again: each source reads the rows the first run landed, and its quarantined rows
    # are recorded for this run too
    assert {load.reused_from for load in loads.values()} == {"first"}
    assert {s: (ld.rows_in, ld.rows_landed, ld.rows_quarantined) for s, ld in loads.items()} == {
        s: (ld.rows_in, ld.rows_landed, ld.rows_quarantined) for s, ld in first_loads.items()}
    # built again: the models that read the run history (ops.*), and the changes since the run before, which read
    # them (this run's id is in them); everything else is reused
    rebuilt = {name for name, model in built.items() if not model.reused and not model.view}
    assert rebuilt == {"staging.stg_ops__source_runs_used", "intermediate.int_runs_compared",
                       "intermediate.int_source_loads_compared", "marts.changes"}
    # defined again (no rows); schema analytics kept: its statements and the marts' columns are unchanged
    assert {name for name, model in built.items() if model.view} == {"marts.rank_history", "analytics.*"}
    assert not first_built["analytics.*"].reused and built["analytics.*"].reused
    assert built["marts.rankings"].reused and built["marts.rankings"].rows == first_built["marts.rankings"].rows

    run(cold, catalog, "second")
    assert digests(rerun) == digests(cold)
    con = warehouse.connect_read_only(rerun)
    try:  # the reused marts rows carry this run's id, as a cold run's would
        assert con.execute("select distinct run_id from marts.rankings where as_of = ?", [AS_OF]).fetchall() == [
            ("second",)]
        assert con.execute("select count(*) from raw.aws_pricing").fetchall() == [(22,)]  # landed once, not twice
        # each run keeps the digest of the SQL it built with (marts.changes tells a release by it)
        assert con.execute("select distinct models_digest from ops.runs").fetchall() == [(transform.models_digest(),)]
    finally:
        con.close()


@pytest.mark.slow  # two or three whole runs each (make test-slow, CI)
def test_a_changed_source_lands_alone_and_rebuilds_only_what_reads_it(tmp_path, catalog_copy):
    rerun, cold = tmp_path / "rerun.duckdb", tmp_path / "cold.duckdb"
    run(rerun, load_catalog(catalog_copy), "first")
    change_bedrock_price(catalog_copy)
    changed = load_catalog(catalog_copy)
    loads, built = run(rerun, changed, "second")
    assert [s for s, load in loads.items() if not load.reused_from] == ["bedrock_pricing"]
    assert loads["bedrock_pricing"].rows_landed == 4
    assert not built["staging.stg_model_api_prices__tokens"].reused
    assert not built["intermediate.int_api_costs_computed"].reused
    assert not built["marts.api_comparisons"].reused
    assert built["staging.stg_aws_pricing__prices"].reused and built["marts.rankings"].reused
    con = warehouse.connect_read_only(rerun)
    try:  # 0.30 for input, 0.22 for output as before
        assert con.execute("select distinct usd_per_million_input_tokens from marts.api_comparisons "
                           "where as_of = ?", [AS_OF]).fetchall() == [(0.30,)]
    finally:
        con.close()

    run(cold, changed, "second")
    assert digests(rerun) == digests(cold)


def edited(catalog, part: str, items: str, key, **fields):
    """`catalog` with `fields` of one entry of `catalog.<part>.<items>` (a dict's key, or a list's index) replaced."""
    file = getattr(catalog, part)
    entries = getattr(file, items)
    entries = ({**entries, key: entries[key].model_copy(update=fields)} if isinstance(entries, dict)
               else [e.model_copy(update=fields) if n == key else e for n, e in enumerate(entries)])
    return catalog.model_copy(update={part: file.model_copy(update={items: entries})})


def test_a_batchs_input_digest_reads_only_the_catalog_that_validating_its_table_reads(catalog):
    """checks.catalog_inputs, which the input digests take, by table: the parameters its suite names (ids, aliases,
    instance types, workload ids) and what its row checks compare with (accelerator counts, models' active
    parameters, peaks, training workloads' FLOPs). An edit re-validates the tables that read it, and only those."""
    import json

    from flows.checks import catalog_inputs

    suites = {path.stem: json.loads(path.read_text()) for path in sorted((catalog.root / "expectations").glob("*.json"))
              if path.stem != "catalog_accelerators"}
    base = {table: catalog_inputs(catalog, table, suite) for table, suite in suites.items()}
    counted = next(n for n, i in enumerate(catalog.instances.instances)
                   if i.accelerator_count is not None and i.accelerator in catalog.accelerators.accelerators)
    serving = next(w for w, wl in catalog.workloads.workloads.items() if wl.kind == "inference")
    chip = catalog.instances.instances[counted].accelerator
    workloads = catalog.workloads.workloads
    expected = {
        "a training workload's description and deadline": (edited(
            catalog, "workloads", "workloads", "llama31-8b-pretrain-1t", description="edited", deadline_hours=360),
            set()),
        "a serving workload's output length": (edited(
            catalog, "workloads", "workloads", serving, output_tokens=workloads[serving].output_tokens + 1), set()),
        "a model's layers": (edited(catalog, "models", "models", "llama-3.1-8b", layers=33), set()),
        "an instance's network": (edited(catalog, "instances", "instances", counted, network_gbps=123.0), set()),
        "an accelerator's name": (edited(catalog, "accelerators", "accelerators", chip, name="renamed"), set()),
        # own runs: the MFU a training run's time implies, 6 x N x tokens
        "a training workload's tokens": (edited(catalog, "workloads", "workloads", "llama31-8b-pretrain-1t",
                                                tokens=2.0e12), {"benchmark_runs"}),
        "a model's parameters": (edited(catalog, "models", "models", "llama-3.1-8b", params=9.0e9),
                                 {"benchmark_runs"}),
        # the Price List's count is checked against the catalog's count of that kind of chip
        "an accelerator's family": (edited(catalog, "accelerators", "accelerators", chip, family="trainium"),
                                    {"aws_pricing"}),
        "an instance's accelerator count": (edited(catalog, "instances", "instances", counted, accelerator_count=
                                                   catalog.instances.instances[counted].accelerator_count + 1),
                                            {"aws_pricing", "price_sheet"}),
        "an accelerator's aliases": (edited(catalog, "accelerators", "accelerators", chip, aliases=[
            *catalog.accelerators.accelerators[chip].aliases, "a new benchmark name"]),
            {"mlperf_inference", "mlperf_training", "price_sheet"}),
        "a workload removed": (catalog.model_copy(update={"workloads": catalog.workloads.model_copy(update={
            "workloads": {w: wl for w, wl in workloads.items() if w != serving}})}), {"benchmark_runs"}),
    }
    changed = {what: {table for table, suite in suites.items() if catalog_inputs(c, table, suite) != base[table]}
               for what, (c, _) in expected.items()}
    assert changed == {what: tables for what, (_, tables) in expected.items()}
    # Great Expectations reads " accelerator_alias_keys" as accelerator_alias_keys: a name that is not exactly one
    # takes every parameter (else the alias added would reuse the MLPerf load a cold run validates anew)
    padded = json.loads(json.dumps(suites["mlperf_inference"]).replace('"accelerator_alias_keys"',
                                                                       '" accelerator_alias_keys"'))
    assert padded != suites["mlperf_inference"]
    alias_added = expected["an accelerator's aliases"][0]
    assert catalog_inputs(alias_added, "mlperf_inference", padded) != catalog_inputs(catalog, "mlperf_inference", padded)


@pytest.mark.slow  # two or three whole runs each (make test-slow, CI)
def test_a_catalog_edit_a_tables_validation_reads_validates_that_tables_batches_again(tmp_path, catalog_copy):
    path = tmp_path / "w.duckdb"
    run(path, load_catalog(catalog_copy), "first")  # the same files, read from the same folder, as the second run
    workloads = catalog_copy / "workloads.yaml"
    text = workloads.read_text()
    assert text.count("    tokens: 1.0e+12\n") == 1
    workloads.write_text(text.replace("    tokens: 1.0e+12\n", "    tokens: 2.0e+12\n"))
    loads, built = run(path, load_catalog(catalog_copy), "second")
    # the own-run check reads a training workload's FLOPs (6 x N x tokens): the own runs are validated again; no
    # other table's suite or checks read them, so the other sources reuse their loads
    landed = {s_id: load for s_id, load in loads.items() if load.status == "landed"}
    assert {s_id for s_id, load in landed.items() if not load.reused_from} == {"published_benchmarks"}
    assert len(landed) > 5
    assert not built["marts.rankings"].reused  # catalog.workloads changed


@pytest.mark.slow  # three whole runs (make test-slow, CI)
def test_a_workload_added_validates_own_runs_again_and_reuses_every_price_source(tmp_path, catalog_copy):
    """A serving workload added (a copy of one under another id): the own-run suite names the workload ids, so the
    own runs are validated again; no price source's suite or checks read workloads, so each reuses its load; the
    warehouse is a cold run's on the edited catalog."""
    rerun, cold = tmp_path / "rerun.duckdb", tmp_path / "cold.duckdb"
    run(rerun, load_catalog(catalog_copy), "first")
    workloads = catalog_copy / "workloads.yaml"
    text = workloads.read_text()
    start = text.index("  llama2-70b-chat:\n")
    end = text.index("\n\n", start)
    workloads.write_text(text + "\n" + text[start:end].replace("  llama2-70b-chat:", "  llama2-70b-chat-copy:", 1)
                         + "\n")
    changed = load_catalog(catalog_copy)
    assert "llama2-70b-chat-copy" in changed.workloads.workloads
    loads, _ = run(rerun, changed, "second")
    landed = {s_id: load for s_id, load in loads.items() if load.status == "landed"}
    assert {s_id for s_id, load in landed.items() if not load.reused_from} == {"published_benchmarks"}
    assert {"aws_pricing", "aws_spot", "azure_retail", "gcp_billing"} <= {
        s_id for s_id, load in landed.items() if load.reused_from == "first"}
    run(cold, changed, "second")
    assert digests(rerun) == digests(cold)


@pytest.mark.slow  # three whole runs (make test-slow, CI)
def test_a_catalog_edit_validation_does_not_read_reuses_every_source_and_equals_a_cold_run(tmp_path, catalog_copy):
    """A training workload's deadline halved and its description edited: nothing validation reads, so every source
    reuses its load; the rankings, which read the deadline, are built again, as a cold run on the edited catalog
    builds them (every table's digest equal)."""
    rerun, cold = tmp_path / "rerun.duckdb", tmp_path / "cold.duckdb"
    run(rerun, load_catalog(catalog_copy), "first")
    workloads = catalog_copy / "workloads.yaml"
    text = workloads.read_text()
    assert text.count("    deadline_hours: 720\n") == 1
    workloads.write_text(text.replace("    deadline_hours: 720\n", "    deadline_hours: 360\n")
                         .replace("description:", "description: (edited)", 1))
    changed = load_catalog(catalog_copy)
    loads, built = run(rerun, changed, "second")
    assert {s_id: load.reused_from for s_id, load in loads.items() if load.status == "landed"} == {
        s_id: "first" for s_id, load in loads.items() if load.status == "landed"}
    assert not built["marts.rankings"].reused
    run(cold, changed, "second")
    assert digests(rerun) == digests(cold)


@pytest.mark.slow  # three landings of every source, ~5 s (make test-slow, CI)
def test_a_same_date_re_run_on_an_offer_file_that_lands_leaves_no_price_list_rows_of_that_date(tmp_path, catalog):
    """`--source aws_offer_file=FILE` replaces aws_pricing for the run (its fallback if the file fails, so its rows of
    the date stay until the file lands). A re-run of a date whose first run landed the Price List, on an offer file
    that lands: the Price List's rows of that date go with its load, as a cold run on the file never had them (they
    stayed in raw.aws_pricing, read by no load)."""
    import offer_file_builder as ofb

    offer = tmp_path / "index.csv"
    ofb.write_offer_file(offer, [p for p in ofb.accelerated_products() if p["attrs"]["Instance Type"] == "p5.48xlarge"])
    given = {"aws_offer_file": [str(offer)]}
    on_the_file, fallbacks = pipeline.with_source_files(catalog, given, AS_OF), pipeline.replaced_sources(catalog, given)
    assert fallbacks == {"aws_offer_file": ["aws_pricing"]}

    def land(path: Path, catalog, run_id: str, fallbacks=None) -> None:
        con = warehouse.connect(path)
        try:
            land_all(con, catalog, [fetch_source(catalog, s_id) for s_id in pipeline.sources_to_run(catalog)], run_id,
                     AS_OF, fallbacks=fallbacks)
        finally:
            con.close()

    def price_rows(path: Path) -> list[tuple]:
        con = warehouse.connect_read_only(path)
        try:
            return con.execute("select source_id, run_id, count(*) from raw.aws_pricing group by all order by all"
                               ).fetchall()
        finally:
            con.close()

    rerun, cold = tmp_path / "rerun.duckdb", tmp_path / "cold.duckdb"
    land(rerun, catalog, "first")
    assert [(s_id, run_id) for s_id, run_id, _ in price_rows(rerun)] == [("aws_pricing", "first")]
    land(rerun, on_the_file, "second", fallbacks)
    land(cold, on_the_file, "second", fallbacks)
    assert price_rows(rerun) == price_rows(cold) and [s_id for s_id, _, _ in price_rows(cold)] == ["aws_offer_file"]
    assert digests(rerun) == digests(cold)


@pytest.mark.slow  # five landings of every source (make test-slow, CI)
def test_a_same_date_re_run_whose_offer_file_fails_checks_spot_prices_as_a_cold_run_would(tmp_path, catalog):
    """The offer file landed three days before; the date's first run landed the Price List; its re-run on an offer
    file that fails runs on the file's own last good rows, so it never falls back on the Price List, whose rows of
    the date go at once: the spot check, with no Price List batch to read, reads the warehouse's last on-demand
    prices, the offer file's, as a cold run does (it read the Price List's rows of the date, then cleared them: the
    spot source's input digest differed from a cold run's)."""
    import offer_file_builder as ofb

    from flows.source_batches import failed_batch

    offer = tmp_path / "index.csv"
    ofb.write_offer_file(offer, [p for p in ofb.accelerated_products() if p["attrs"]["Instance Type"] == "p5.48xlarge"])
    given = {"aws_offer_file": [str(offer)]}
    earlier = AS_OF - dt.timedelta(days=3)
    on_the_file = {day: pipeline.with_source_files(catalog, given, day) for day in (earlier, AS_OF)}
    fallbacks = pipeline.replaced_sources(catalog, given)

    def land(path: Path, catalog, run_id: str, as_of: dt.date, fail: str | None = None) -> None:
        con = warehouse.connect(path)
        try:
            batches = [failed_batch(catalog, s_id, OSError("the file cannot be read")) if s_id == fail
                       else fetch_source(catalog, s_id) for s_id in pipeline.sources_to_run(catalog)]
            land_all(con, catalog, batches, run_id, as_of, fallbacks=fallbacks)
        finally:
            con.close()

    rerun, cold = tmp_path / "rerun.duckdb", tmp_path / "cold.duckdb"
    for path in (rerun, cold):
        land(path, on_the_file[earlier], "file", earlier)
    land(rerun, catalog, "first", AS_OF)
    for path in (rerun, cold):
        land(path, on_the_file[AS_OF], "second", AS_OF, fail="aws_offer_file")
    assert load_record(rerun, "aws_offer_file")[2:] == (0, 0, None)  # stale: no rows of its own this run
    assert digests(rerun) == digests(cold)


def load_record(path: Path, source_id: str) -> tuple:
    con = warehouse.connect_read_only(path)
    try:
        return con.execute("select files, data_as_of, rows_landed, rows_quarantined, reused_from from ops.source_loads "
                           "where source_id = ? and as_of = ?", [source_id, AS_OF]).fetchone()
    finally:
        con.close()


@pytest.mark.slow  # two or three whole runs each (make test-slow, CI)
def test_a_declared_file_that_adds_no_row_reuses_the_rows_and_records_the_batchs_own_files_and_date(
        tmp_path, catalog_copy):
    """An empty page declared beside azure_retail's six, dated after them: the rows (and so the input digest) are the
    same, so they are reused; but the load is of 7 files whose newest is dated 2026-11-15, as a cold run records it
    (it recorded the previous load's 6 files and 2026-09-27)."""
    rerun, cold = tmp_path / "rerun.duckdb", tmp_path / "cold.duckdb"
    run(rerun, load_catalog(catalog_copy), "first")
    assert load_record(rerun, "azure_retail")[:2] == (6, dt.date(2026, 9, 27))
    (catalog_copy / "snapshot" / "azure_retail" / "eastus.page-empty.json").write_text(
        '{"BillingCurrency": "USD", "CustomerEntityId": "Default", "CustomerEntityType": "Retail", "Items": [], '
        '"NextPageLink": null, "Count": 0}\n')
    sources = catalog_copy / "sources.yaml"
    text = sources.read_text()
    declared = "    files:\n      - path: snapshot/azure_retail/eastus.page-1.json\n"
    assert text.count(declared) == 1
    sources.write_text(text.replace(declared, "    files:\n      - path: snapshot/azure_retail/eastus.page-empty.json\n"
                                    "        as_of: 2026-11-15\n        region: eastus\n        source: an empty page\n"
                                    "      - path: snapshot/azure_retail/eastus.page-1.json\n"))
    changed = load_catalog(catalog_copy)
    loads, _ = run(rerun, changed, "second")
    assert loads["azure_retail"].reused_from == "first"  # the same rows: not validated or landed again
    assert load_record(rerun, "azure_retail") == (7, dt.date(2026, 11, 15), 15, 0, "first")

    run(cold, changed, "second")
    assert load_record(cold, "azure_retail") == (7, dt.date(2026, 11, 15), 15, 0, None)
    assert digests(rerun) == digests(cold)


@pytest.mark.slow  # two or three whole runs each (make test-slow, CI)
def test_a_same_date_re_run_without_the_price_list_checks_spot_prices_as_a_cold_run_would(tmp_path, catalog_copy):
    """A spot price of 60 USD an hour for p5.48xlarge in us-east-1b, above its on-demand 55.04: the first run
    quarantines it (spot_below_on_demand). The same date run again with aws_pricing disabled: the run clears that
    date's aws_pricing rows, so a cold run has no on-demand price to check the spot price against, and lands all 22.
    The re-run used to check them against the earlier run's aws_pricing rows, read before it cleared them, and
    quarantined the row (its warehouse then differed from the cold run's in 15 tables)."""
    spot = catalog_copy / "snapshot" / "aws_spot" / "us-east-1.json"
    text = spot.read_text()
    second_row = '"AvailabilityZone": "us-east-1b",\n   "InstanceType": "p5.48xlarge",\n   ' \
                 '"ProductDescription": "Linux/UNIX",\n   "SpotPrice": "21.150000"'
    assert text.count(second_row) == 1
    spot.write_text(text.replace(second_row, second_row.replace("21.150000", "60.000000")))
    rerun, cold = tmp_path / "rerun.duckdb", tmp_path / "cold.duckdb"
    run(rerun, load_catalog(catalog_copy), "first")
    assert load_record(rerun, "aws_spot")[2:4] == (21, 1)
    sources = catalog_copy / "sources.yaml"
    text = sources.read_text()
    assert text.count("  aws_pricing:\n    kind: aws_pricing\n") == 1
    sources.write_text(text.replace("  aws_pricing:\n    kind: aws_pricing\n",
                                    "  aws_pricing:\n    kind: aws_pricing\n    enabled: false\n"))
    changed = load_catalog(catalog_copy)
    loads, _ = run(rerun, changed, "second")
    assert "aws_pricing" not in loads
    assert (loads["aws_spot"].rows_landed, loads["aws_spot"].rows_quarantined) == (22, 0)

    run(cold, changed, "second")
    assert digests(rerun) == digests(cold)


# ---------------------------------------------------------------- reuse at the edges
def prices(usd: str):
    """A Price List batch of one p5.48xlarge on-demand price (one SKU), `usd` an hour."""
    from test_instance_hardware import aws_product, price_list_batch, sku

    return price_list_batch(aws_product("p5.48xlarge", usd, sku=sku(1)))


def test_a_changed_price_list_is_checked_against_the_listing_it_reuses(fresh_db, catalog):
    """The Price List's gpu count is checked against the same run's EC2 listing: when the listing is unchanged (and
    reused, not validated again), the changed Price List is still checked against it, as a cold run would."""
    from test_instance_hardware import aws_product, ec2_batch, l4_type, price_list_batch, quarantined, sku

    def listing():
        return ec2_batch(("east", [l4_type("g9x.test", 8)], "us-east-1"))

    first = land_all(fresh_db, catalog, [listing(), price_list_batch(
        aws_product("g9x.test", "9.6", gpu="8", vcpu="64", sku=sku(7)))], "d1", AS_OF)
    assert [(ld.source_id, ld.rows_landed, ld.reused_from) for ld in first] == [
        ("aws_instance_types", 1, None), ("aws_pricing", 1, None)]
    second = land_all(fresh_db, catalog, [listing(), price_list_batch(
        aws_product("g9x.test", "9.6", gpu="4", vcpu="64", sku=sku(7)))], "d2", AS_OF + dt.timedelta(days=1))
    assert [(ld.source_id, ld.rows_landed, ld.rows_quarantined, ld.reused_from) for ld in second] == [
        ("aws_instance_types", 1, 0, "d1"), ("aws_pricing", 0, 1, None)]
    assert quarantined(fresh_db) == [("aws_pricing", 0, "accelerator_count_matches_catalog", "gpu",
                                      "4 (check_catalog_accelerator_count: 8)")]


def test_a_batch_that_is_its_sources_last_landed_batch_again_is_not_compared_with_it(fresh_db, catalog, monkeypatch):
    """The table-level checks compare a batch with its source's last landed load (row count, prices). A batch that is
    that load's batch again (the same input digest) is not compared with itself; a changed one still is, and an
    empty one is still refused."""
    from flows import land
    from test_instance_hardware import batch

    land_all(fresh_db, catalog, [prices("55.04")], "d1", AS_OF)
    compared = []
    monkeypatch.setattr(land, "price_change_problem", lambda con, b, factor, as_of: compared.append(b.source_id))
    [load] = land_all(fresh_db, catalog, [prices("55.04")], "d2", AS_OF + dt.timedelta(days=1))
    assert (load.reused_from, compared) == ("d1", [])
    [load] = land_all(fresh_db, catalog, [prices("54.99")], "d3", AS_OF + dt.timedelta(days=2))
    assert (load.status, load.reused_from, compared) == ("landed", None, ["aws_pricing"])
    [load] = land_all(fresh_db, catalog, [batch("aws_pricing", "aws_pricing", [])], "d4", AS_OF + dt.timedelta(days=3))
    assert (load.status, load.error) == ("stale", "no rows: the source returned nothing")
    # an empty batch landed once with --accept-changes is refused the next time, though it is that batch again
    land_all(fresh_db, catalog, [batch("aws_pricing", "aws_pricing", [])], "d5", AS_OF + dt.timedelta(days=4),
             accept_changes=frozenset({"aws_pricing"}))
    [load] = land_all(fresh_db, catalog, [batch("aws_pricing", "aws_pricing", [])], "d6", AS_OF + dt.timedelta(days=5))
    assert (load.status, load.error) == ("stale", "no rows: the source returned nothing")


def test_an_empty_batch_landed_with_accept_changes_lands_nothing_and_says_so(fresh_db, catalog):
    from test_instance_hardware import batch

    [load] = land_all(fresh_db, catalog, [batch("aws_pricing", "aws_pricing", [])], "r1", AS_OF,
                      accept_changes=frozenset({"aws_pricing"}))
    assert (load.status, load.rows_in, load.rows_landed, load.rows_quarantined) == ("landed", 0, 0, 0)


def test_a_date_re_run_keeps_its_rows_that_a_later_date_reuses_and_replaces_the_rest(fresh_db, catalog):
    """D1 lands W, D2 reuses W (the same batch), D1 is re-run on X: X lands anew, and D1's earlier rows (W) stay,
    since D2 reads them. D1 re-run on a batch equal to a later load of D2 lands it anew (see the next test)."""
    d1, d2 = AS_OF, AS_OF + dt.timedelta(days=1)
    land_all(fresh_db, catalog, [prices("55.04")], "w-d1", d1)
    [load] = land_all(fresh_db, catalog, [prices("55.04")], "w-d2", d2)
    assert load.reused_from == "w-d1"
    [load] = land_all(fresh_db, catalog, [prices("54.99")], "x-d1", d1)
    assert load.reused_from is None
    assert fresh_db.execute("select run_id, as_of, price_usd from raw.aws_pricing order by run_id").fetchall() == [
        ("w-d1", d1, 55.04), ("x-d1", d1, 54.99)]
    # D2 lands Z; D1 re-run on Z lands it anew: a load of a later date is never reused (its checks' baseline is D1's)
    [load] = land_all(fresh_db, catalog, [prices("54.90")], "z-d2", d2)
    assert load.reused_from is None
    [load] = land_all(fresh_db, catalog, [prices("54.90")], "z-d1", d1)
    assert (load.status, load.reused_from) == ("landed", None)
    assert fresh_db.execute("select used_run_id from ops.source_loads where as_of = ?", [d1]).fetchall() == [
        ("z-d1",)]


def test_a_backfill_equal_to_a_later_dates_accepted_load_is_checked_against_its_own_dates_prices(fresh_db, catalog):
    """D1 lands 55.04 an hour; D3 lands 275.20 (5x, past max_price_change 3) with --accept-changes; D2, a backfill
    of the same 275.20 without it, is judged as a cold run judges it, against D1 (the last good load dated D2 or
    earlier): stale, on D1's prices. It used to reuse D3's load, equal to its batch, and skip the check."""
    d1, d2, d3 = AS_OF, AS_OF + dt.timedelta(days=1), AS_OF + dt.timedelta(days=2)
    land_all(fresh_db, catalog, [prices("55.04")], "a-d1", d1)
    [load] = land_all(fresh_db, catalog, [prices("275.20")], "b-d3", d3, accept_changes=frozenset({"aws_pricing"}))
    assert (load.status, load.rows_landed) == ("landed", 1)
    [load] = land_all(fresh_db, catalog, [prices("275.20")], "c-d2", d2)
    assert (load.status, load.reused_from) == ("stale", None)
    assert "prices moved 5x" in load.error  # 275.20 / 55.04 = 5.0
    assert fresh_db.execute("select used_run_id from ops.source_loads where run_id = 'c-d2'").fetchall() == [
        ("a-d1",)]


def test_a_reused_build_digests_each_staging_and_intermediate_table_once(snapshot_warehouse, copy_of, monkeypatch):
    """A build whose inputs are unchanged reuses every table model; it digests a staging or intermediate table once:
    to check that it still holds what it was built with, and a later model that reads it takes that digest (it
    took two before: the check, then the reader's own). A mart is digested again for a reader: the check covers the
    mart's rows of the run's date, a reader reads every date's."""
    con = copy_of(snapshot_warehouse)
    taken: list[str] = []
    digest = transform.content_digest

    def counted(con, relation, *args, **kwargs):
        taken.append(relation)
        return digest(con, relation, *args, **kwargs)

    monkeypatch.setattr(transform, "content_digest", counted)
    built = transform.build_models(con, "snapshot", AS_OF)  # the same run built again: its loads are the same
    tables = [f"{m.layer}.{m.name}" for m in built if not m.view]
    # every table model but those built every run (they read ops.*: the run history) is reused
    assert {f"{m.layer}.{m.name}" for m in built if not m.view and not m.reused} == {
        "staging.stg_ops__source_runs_used", "intermediate.int_runs_compared", "intermediate.int_source_loads_compared",
        "marts.changes"}
    non_marts = [t for t in tables if not t.startswith("marts.")]
    reused_non_marts = [t for t in non_marts if any(f"{m.layer}.{m.name}" == t and m.reused for m in built)]
    assert reused_non_marts and all(taken.count(t) == 1 for t in reused_non_marts), {
        t: taken.count(t) for t in reused_non_marts if taken.count(t) != 1}
    # marts.rankings: checked for its date's rows, then digested whole for the marts that read it
    assert taken.count("marts.rankings") == 2
    # each model's rows (of the date, for a mart), as the digest counted them or as counted for a model built every run
    for m in built:
        where = "where as_of = ?" if m.layer == "marts" else ""
        assert (m.rows,) == con.execute(f"select count(*) from {m.layer}.{m.name} {where}",
                                        [AS_OF] if where else []).fetchone(), f"{m.layer}.{m.name}"
    assert sum(m.rows for m in built if m.layer == "marts" and m.name == "rankings") > 0


# ---------------------------------------------------------------- a model's columns renamed or retyped
def models(folder: Path, **sql: str) -> Path:
    """An sql/ folder of `layer__name=SQL` models (no macros), for build_models."""
    folder.mkdir()
    (folder / "macros.sql").write_text("")
    for key, text in sql.items():
        layer, name = key.split("__")
        (folder / layer).mkdir(parents=True, exist_ok=True)
        (folder / layer / f"{name}.sql").write_text(text)
    return folder


def test_a_digest_tells_renamed_and_retyped_columns_apart():
    """DuckDB's row hash reads neither column names nor integer types apart: `select 1 as a` and `select 1 as b`, or
    1 as INTEGER and as BIGINT, hash alike. The digest names the columns and their types too."""
    import duckdb

    con = duckdb.connect()
    con.execute("create table a as select 1 as a; create table b as select 1 as b; create table c as select 1::bigint a")
    assert con.execute("select hash(r) from a r").fetchone() == con.execute("select hash(r) from b r").fetchone()
    assert len({transform.content_digest(con, table) for table in ("a", "b", "c")}) == 3
    assert transform.digest_rows(transform.content_digest(con, "a")) == 1


def test_a_model_that_only_swapped_two_column_names_rebuilds_the_models_reading_it(fresh_db, tmp_path):
    """Re-run after `select 1 as x, 2 as y` became `select 1 as y, 2 as x` (the same values, the names swapped): the
    rows hash alike, and b (reading x) was reused with x = 1 where a cold build gives 2."""
    sql = models(tmp_path / "sql", intermediate__a="select 1 as x, 2 as y", intermediate__b="select x from intermediate.a")
    transform.build_models(fresh_db, "run-1", AS_OF, sql)
    assert fresh_db.execute("select x from intermediate.b").fetchall() == [(1,)]
    (sql / "intermediate" / "a.sql").write_text("select 1 as y, 2 as x")
    built = {m.name: m.reused for m in transform.build_models(fresh_db, "run-2", AS_OF, sql)}
    assert built == {"a": False, "b": False}
    assert fresh_db.execute("select x from intermediate.b").fetchall() == [(2,)]


def test_the_models_digest_moves_with_a_models_sql_not_with_the_raw_ddl(fresh_db, tmp_path):
    """ops.runs.models_digest (what marts.changes tells a release by) is the text of the files a build reads, the
    models and macros: a model edited moves it; the raw DDL, a SQL test or a file beside the layers does not; a build
    sets it for int_runs_compared and the run's record."""
    sql = models(tmp_path / "sql", intermediate__a="select 1 as x", raw__ops="create table if not exists t (x int);")
    before = transform.models_digest(sql)
    (sql / "raw" / "ops.sql").write_text("create table if not exists t (x int, y int);")
    (sql / "tests").mkdir()
    (sql / "tests" / "a_is_one.sql").write_text("select * from intermediate.a where x <> 1")
    (sql / "scratch.sql").write_text("select 2")
    assert transform.models_digest(sql) == before
    (sql / "intermediate" / "a.sql").write_text("select 1 as x -- worded otherwise")
    assert transform.models_digest(sql) != before
    transform.build_models(fresh_db, "run-1", AS_OF, sql)
    assert fresh_db.execute("select getvariable('models_digest')").fetchone() == (transform.models_digest(sql),)


def test_each_model_keeps_one_build_record_and_a_failed_build_records_none(fresh_db, tmp_path):
    """ops.model_builds holds one row a model (a mart: one an as-of date), written once the build is done: a model
    rebuilt replaces its row, a reused one keeps the run that built it. A build that fails part way records nothing,
    so a model it rebuilt before the failure is built again by the next build (its record is the older build's),
    never reused on a fingerprint it was not recorded with."""
    sql = models(tmp_path / "sql", intermediate__a="select 1 as x", intermediate__b="select x from intermediate.a",
                 marts__m="select getvariable('as_of')::date as as_of, getvariable('run_id') as run_id, "
                          "x from intermediate.b")
    records = "select model, as_of, run_id from ops.model_builds order by model, as_of"
    transform.build_models(fresh_db, "run-1", AS_OF, sql)
    (sql / "intermediate" / "b.sql").write_text("select x + 1 as x from intermediate.a")
    built = {m.name: m.reused for m in transform.build_models(fresh_db, "run-2", AS_OF, sql)}
    assert built == {"a": True, "b": False, "m": False}
    assert fresh_db.execute(records).fetchall() == [
        ("intermediate.a", None, "run-1"), ("intermediate.b", None, "run-2"), ("marts.m", AS_OF, "run-2")]
    # a rebuilt (2), then b fails: nothing recorded, a's row is still run-1's (its `select 1`)
    (sql / "intermediate" / "a.sql").write_text("select 2 as x")
    (sql / "intermediate" / "b.sql").write_text("select nope from intermediate.a")
    with pytest.raises(transform.ModelError, match=r"^sql/intermediate/b\.sql: "):
        transform.build_models(fresh_db, "run-3", AS_OF, sql)
    assert fresh_db.execute(records).fetchall() == [
        ("intermediate.a", None, "run-1"), ("intermediate.b", None, "run-2"), ("marts.m", AS_OF, "run-2")]
    (sql / "intermediate" / "b.sql").write_text("select x + 1 as x from intermediate.a")
    built = {m.name: m.reused for m in transform.build_models(fresh_db, "run-4", AS_OF, sql)}
    assert built == {"a": False, "b": False, "m": False}
    assert fresh_db.execute("select x from marts.m where as_of = ?", [AS_OF]).fetchall() == [(3,)]  # 2 + 1
    assert fresh_db.execute(records).fetchall() == [
        ("intermediate.a", None, "run-4"), ("intermediate.b", None, "run-4"), ("marts.m", AS_OF, "run-4")]


def test_a_mart_column_whose_type_changed_is_widened_or_refused_never_cast_down(fresh_db, tmp_path):
    """A mart keeps every date's rows; a model whose column became DOUBLE (8 / 16 = 0.5) had its new rows cast to the
    table's BIGINT (0.5 stored as 0). Now the column is widened when the older rows cast to the new type unchanged,
    kept when the new rows fit the old type, and the build refused (naming both types) when neither holds."""
    day1, day2, day3 = AS_OF, AS_OF + dt.timedelta(days=1), AS_OF + dt.timedelta(days=2)
    mart = "select getvariable('as_of')::date as as_of, {} as n"
    sql = models(tmp_path / "sql", marts__m=mart.format("8::bigint"))
    transform.build_models(fresh_db, "run-1", day1, sql)
    (sql / "marts" / "m.sql").write_text(mart.format("8 / 16"))  # 0.5, a DOUBLE
    transform.build_models(fresh_db, "run-2", day2, sql)
    assert fresh_db.execute("select as_of, n, typeof(n) from marts.m order by as_of").fetchall() == [
        (day1, 8.0, "DOUBLE"), (day2, 0.5, "DOUBLE")]
    (sql / "marts" / "m.sql").write_text(mart.format("3::integer"))  # fits the DOUBLE column: kept as it is
    transform.build_models(fresh_db, "run-3", day3, sql)
    assert fresh_db.execute("select n, typeof(n) from marts.m where as_of = ?", [day3]).fetchall() == [(3.0, "DOUBLE")]
    (sql / "marts" / "m.sql").write_text(mart.format("date '2026-12-01'"))  # neither casts to the other
    with pytest.raises(transform.ModelError, match=r"^sql/marts/m\.sql: marts\.m\.n is DATE in the model and DOUBLE in "
                                                   r"the warehouse, and the rows it holds do not cast to DATE"):
        transform.build_models(fresh_db, "run-4", day3, sql)


def test_a_reused_sources_validation_page_is_kept_from_the_run_that_validated_it(tmp_path):
    """A re-run that reuses a source does not validate it, so GX builds no page of it. Its page is copied from the
    Data Docs the validating run published (its static files too), found by that run's id. Before, a same-date
    re-run replaced the date's reports and the pages were lost, or the date's old site was kept whole though its
    pages were of another run than the one whose rows were reused (here: bedrock's 11-30 page of run-1, where run-3
    reuses run-2's rows, validated and published under 12-01)."""
    from flows import data_docs

    reports = tmp_path / "reports"

    def published(date: str, run: str, source: str, text: str) -> None:
        site = reports / date / "data-docs"
        page = site / "validations" / f"{source}.suite" / run / "20261130T010000.000000Z" / f"{source}.html"
        page.parent.mkdir(parents=True)
        page.write_text(f'<link href="../../../../static/styles/x.css"><p>{text}</p>')
        (site / "static" / "styles").mkdir(parents=True, exist_ok=True)
        (site / "static" / "styles" / "x.css").write_text(f"css of {date}")

    published("2026-11-30", "run-1", "bedrock_pricing", "old price, validated by run-1")
    published("2026-12-01", "run-2", "bedrock_pricing", "new price, validated by run-2")
    published("2026-11-30", "run-1", "aws_pricing", "aws, validated by run-1")
    reused = [("bedrock_pricing", "run-2"), ("aws_pricing", "run-1"), ("azure_retail", "run-0")]
    site = reports / ".2026-11-30.rendering-1-docs"
    index = data_docs.write_reused_index(site, "run-3", reused, reports).read_text()
    bedrock = "validations/bedrock_pricing.suite/run-2/20261130T010000.000000Z/bedrock_pricing.html"
    assert "new price, validated by run-2" in (site / bedrock).read_text()
    assert (site / "static" / "styles" / "x.css").read_text() == "css of 2026-12-01"  # the page's own site's
    assert f'bedrock_pricing: validated by run run-2: <a href="{bedrock}">its validation page</a>' in index
    assert "aws_pricing: validated by run run-1: <a href=\"validations/aws_pricing.suite/run-1/" in index
    assert "azure_retail: validated by run run-0: its validation page is no longer published" in index
    assert (site / data_docs.REUSED_PAGE).read_text() == index
    # beside a site GX built of what a run did validate: the same list, as reused.html
    other = tmp_path / "validated-site"
    other.mkdir()
    page = data_docs.write_reused_page(other, "run-4", [("aws_pricing", "run-1")], reports).read_text()
    assert "Sources run run-4 did not validate again" in page and "aws, validated by run-1" in (
        next(other.glob("validations/*/run-1/*/aws_pricing.html")).read_text())


def test_the_data_docs_of_a_run_that_validated_nothing_are_written_in_a_thread_and_taken_before_the_render(
        tmp_path, monkeypatch):
    """A run whose every source was unchanged writes its Data Docs (the list of the pages it kept: write_reused_index)
    in a thread of its own while it builds (data_docs.begin_reused_index, from the land step); finish_site, called
    before the reports are rendered, takes its index once, and raises the error it met rather than losing it."""
    import threading

    from flows import data_docs

    writers = []
    write = data_docs.write_reused_index

    def recorded(*args):
        writers.append(threading.current_thread().name)
        return write(*args)

    monkeypatch.setattr(data_docs, "write_reused_index", recorded)
    reports, site = tmp_path / "reports", tmp_path / "site"
    reports.mkdir()
    data_docs.begin_reused_index(site, "run-2", [("aws_pricing", "run-1")], reports)
    index = data_docs.finish_site()
    assert index == site / "index.html"
    assert "aws_pricing: validated by run run-1: its validation page is no longer published" in index.read_text()
    assert writers == ["hweval-reused-data-docs"]
    assert data_docs.finish_site() is None  # taken once
    (tmp_path / "a-file").write_text("")
    data_docs.begin_reused_index(tmp_path / "a-file" / "site", "run-3", [], reports)
    with pytest.raises(NotADirectoryError):
        data_docs.finish_site()
    # a run that fails (or is cancelled) before its render waits for the thread before its folder is removed
    import time

    def slow(*args):
        time.sleep(0.3)
        return write(*args)

    monkeypatch.setattr(data_docs, "write_reused_index", slow)
    data_docs.begin_reused_index(tmp_path / "abandoned", "run-4", [], reports)
    data_docs.abandon_site()
    assert (tmp_path / "abandoned" / "index.html").is_file()
    assert data_docs.finish_site() is None


def test_a_ctrl_c_while_the_render_waits_for_the_data_docs_leaves_them_for_abandon_site(monkeypatch):
    """finish_site takes the site only once it is done: interrupted as it waits, the run's clean-up (abandon_site)
    still waits for it before the folder it writes into is removed."""
    from flows import data_docs

    class Interrupted:
        def __init__(self):
            self.asked = 0

        def result(self):
            self.asked += 1
            if self.asked == 1:
                raise KeyboardInterrupt
            return None

    pending = Interrupted()
    monkeypatch.setattr(data_docs, "_building", (pending, None))
    with pytest.raises(KeyboardInterrupt):
        data_docs.finish_site()
    data_docs.abandon_site()
    assert pending.asked == 2 and data_docs._building is None
