"""A recurring evaluation: what changed since the previous run, Prefect artifacts, runs that fail when data is stale
past its limit, and the notification that says so."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import shutil
import signal
import time
from pathlib import Path

import duckdb
import pytest
from builders import gone, proc_file
from conftest import AS_OF, CATALOGS

from flows.analytics import load_contract
from flows.cli import main
from flows.run_command import EXIT_FAILED_AFTER_PUBLISH, EXIT_STALE_PAST_LIMIT
from flows.warehouse import fetch_dicts

DAY_2 = dt.date(2026, 12, 2)
SNAPSHOT = CATALOGS / "snapshot"
# 1,583 tokens/s per chip is MFU 0.40 by 6 x N (6 x 8e9 x 1,583 / 190e12 = 0.39992), the figure the run uses: on
# trn1.32xlarge spot the pre-training then costs more than day 1's pick, so no best offer moves for it
NEW_RESULT = ('training,trainium1,,32,llama-3.1-8b,bf16,,,,,,,,,,,,,1583,0.40,8192,'
              '"Neuron on trn1 x 32 (a result new on day 2)",\n')


def day_two_files(folder: Path) -> dict[str, list[str]]:
    """Day 2's sources: the p5.48xlarge us-east-1 spot price x2.5 in both zones, a new inf2.xlarge spot offer, no
    eu-north-1 spot file (its p5.48xlarge spot offer is withdrawn), one new benchmark row."""
    spot = json.loads((SNAPSHOT / "aws_spot" / "us-east-1.json").read_text())
    for row in spot["SpotPriceHistory"]:
        if row["InstanceType"] == "p5.48xlarge":  # 10.24 -> 25.60 (us-east-1a), 21.15 -> 52.875 (us-east-1b)
            row["SpotPrice"] = f"{float(row['SpotPrice']) * 2.5:.6f}"
    spot["SpotPriceHistory"].append({"AvailabilityZone": "us-east-1a", "InstanceType": "inf2.xlarge",
                                     "ProductDescription": "Linux/UNIX", "SpotPrice": "0.230000",
                                     "Timestamp": "2026-12-01T06:00:00Z"})
    (folder / "us-east-1.json").write_text(json.dumps(spot))
    runs = (SNAPSHOT / "benchmark_runs" / "published_training.csv").read_text() + NEW_RESULT
    (folder / "published_training.csv").write_text(runs)
    return {"aws_spot": [f"{folder / 'us-east-1.json'}@2026-12-01",
                         f"{SNAPSHOT / 'aws_spot' / 'us-east-2.json'}@2026-11-20"],
            "published_benchmarks": [f"{folder / 'published_training.csv'}@2026-12-01"]}


def copy_of_day_one(flow_run, root: Path) -> tuple[Path, Path]:
    """The session's day-1 run (the embedded snapshot, as of AS_OF), copied so this module can add days to it."""
    warehouse, reports = root / "warehouse" / "hweval.duckdb", root / "reports"
    warehouse.parent.mkdir(parents=True)
    shutil.copy2(flow_run.warehouse, warehouse)
    shutil.copytree(flow_run.reports.parent, reports)
    return warehouse, reports


def run_day_two(flow_run, root: Path):
    """A copy of the session's run (day 1), then day 2 with the changes of `day_two_files` on top."""
    from flows.nightly import nightly

    warehouse, reports = copy_of_day_one(flow_run, root)
    files = root / "day-2"
    files.mkdir()
    return nightly(as_of=DAY_2, source_files=day_two_files(files), run_id="day-2", catalog_dir=str(CATALOGS),
                   warehouse_file=str(warehouse), reports_dir=str(reports))


@pytest.fixture(scope="module")
def two_days(flow_run, prefect_server, tmp_path_factory):
    """Day 1 on the embedded snapshot, day 2 with the changes of `day_two_files`, then a backfill between them."""
    from flows.nightly import nightly

    day_2 = run_day_two(flow_run, tmp_path_factory.mktemp("two-days"))
    backfill = nightly(as_of=DAY_2 - dt.timedelta(days=1), run_id="backfill", catalog_dir=str(CATALOGS),
                       warehouse_file=str(day_2.warehouse), reports_dir=str(day_2.reports.parent))
    return day_2, backfill


def changes(warehouse: Path, as_of: dt.date) -> dict[tuple[str, str], dict]:
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return {(c["change_kind"], c["subject"]): c
                for c in fetch_dicts(con, "select * from marts.changes where as_of = ?", [as_of])}
    finally:
        con.close()


@pytest.mark.slow  # a second whole run (the day-two fixture): make test-slow and CI
def test_changes_list_the_moved_added_and_removed_offers_and_the_new_result(two_days):
    day_2, _ = two_days
    found = changes(day_2.warehouse, DAY_2)
    moved = found["price_moved", "aws:us-east-1:p5.48xlarge:spot"]
    # spot is the lowest latest zone price: us-east-1a 10.24 before, 10.24 x 2.5 = 25.60 after
    assert (moved["before_value"], moved["after_value"], moved["ratio"]) == pytest.approx((10.24, 25.60, 2.5))
    assert found["offer_added", "aws:us-east-1:inf2.xlarge:spot"]["after_value"] == pytest.approx(0.23)
    assert found["offer_removed", "aws:eu-north-1:p5.48xlarge:spot"]["before_value"] == pytest.approx(28.32)
    [added] = [c for (kind, _), c in found.items() if kind == "benchmark_added"]
    assert added["subject"].startswith("published_benchmarks|training|trainium1||32|llama-3.1-8b|bf16")
    assert "published_training.csv" in added["label"]
    assert {c["previous_as_of"] for c in found.values()} == {AS_OF}
    # nothing else moved: the other 42 offers and every other result are as on day 1
    assert sorted(kind for kind, _ in found) == sorted([
        "price_moved", "offer_added", "offer_removed", "benchmark_added",
        "best_offer_changed", "best_offer_changed"])


@pytest.mark.slow  # a second whole run (the day-two fixture): make test-slow and CI
def test_best_offer_changes_name_the_new_pick_the_reason_and_the_money(two_days):
    day_2, _ = two_days
    found = changes(day_2.warehouse, DAY_2)
    lora = found["best_offer_changed", "llama2-70b-lora-finetune"]
    # MLPerf Training llama2_70b_lora: Eos (8 x H100) 28.1627831 min, H200 (8 x H200) 24.6891646 min; spot on one
    # instance redoes 1 x 0.2 reclaims a month / 730 x (half the run, shorter than its hourly checkpoint interval, +
    # 0.25 h restart) of the run: Eos 0.000273973 x (0.234690 + 0.25) = 0.000132793, H200 0.000273973 x (0.205743 +
    # 0.25) = 0.000124861.
    # Day 1: p5.48xlarge spot 28.1627831 / 60 x 10.24 x 1.000132793 = 4.80709 USD.
    # Day 2: p5.48xlarge 28.1627831 / 60 x 25.60 x 1.000132793 = 12.0177; p5en.48xlarge 24.6891646 / 60 x 16.56
    # x 1.000124861 = 6.81506.
    assert (lora["previous_offer_id"], lora["offer_id"]) == ("aws:us-east-1:p5.48xlarge:spot",
                                                             "aws:us-east-1:p5en.48xlarge:spot")
    eos_rework, h200_rework = 1 + 0.2 / 730 * (28.1627831 / 120 + 0.25), 1 + 0.2 / 730 * (24.6891646 / 120 + 0.25)
    assert lora["before_value"] == pytest.approx(28.1627831 / 60 * 10.24 * eos_rework, rel=1e-6)
    assert lora["after_value"] == pytest.approx(24.6891646 / 60 * 16.56 * h200_rework, rel=1e-6)
    assert lora["previous_pick_now_value"] == pytest.approx(28.1627831 / 60 * 25.60 * eos_rework, rel=1e-6)
    assert lora["delta_value"] == pytest.approx(6.81506 - 4.80709, abs=1e-4)
    assert (lora["reason"], lora["reason_detail"]) == (
        "price move", "aws p5.48xlarge us-east-1 spot price rose 2.50x (10.24 to 25.60 USD per hour)")

    batch = found["best_offer_changed", "llama2-70b-batch"]
    # USD per million output tokens = USD per hour / (tokens/s x 3600) x 1e6: the measured p5.48xlarge throughput is the
    # same on both days, so its cost moves with its price, x2.5; the new pick's price (13.03, spot) did not move.
    assert batch["previous_offer_id"] == "aws:us-east-1:p5.48xlarge:spot"
    assert batch["offer_id"] == "aws:us-east-1:p6-b200.48xlarge:spot"
    assert batch["previous_pick_now_value"] == pytest.approx(batch["before_value"] * 2.5, rel=1e-9)
    assert batch["reason"] == "price move"

    index = (day_2.reports / "index.md").read_text()
    assert index.index("## What changed since 2026-11-30") < index.index("## Workloads")
    assert ("- **Best for llama2-70b-lora-finetune is now aws p5en.48xlarge us-east-1 spot (was aws p5.48xlarge "
            "us-east-1 spot): aws p5.48xlarge us-east-1 spot price rose 2.50x (10.24 to 25.60 USD per hour); "
            "completed-run USD 6.815 instead of 4.807 USD (aws p5.48xlarge us-east-1 spot would now cost 12.02).**"
            in index)
    assert "- Prices that moved: aws p5.48xlarge us-east-1 spot rose 2.50x (10.24 to 25.60 USD per hour)." in index
    # the README's example is this run's index, line for line (the new result's file is named where the run found it)
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    block = readme.split("```text\n## What changed since 2026-11-30\n", 1)[1].split("```", 1)[0]
    shown = [line for line in block.splitlines() if line and not line.startswith("- New benchmark results")]
    assert len(shown) == 6 and [line for line in shown if line not in index.splitlines()] == []
    assert "- New offers: aws inf2.xlarge us-east-1 spot: 0.230 USD per hour." in index
    assert "- Offers withdrawn: aws p5.48xlarge eu-north-1 spot (was 28.32 USD per hour)." in index
    assert ("- New benchmark results: training run of llama-3.1-8b bf16 on 32 x trainium1 "
            f"({day_2.reports.parents[1] / 'day-2' / 'published_training.csv'}: row 7).") in index
    page = (day_2.reports / "llama2-70b-lora-finetune.md").read_text()
    # under the title, the run the page comes from, then what changed
    assert page.splitlines()[2:5] == ["_Run `day-2`, as of 2026-12-02._", "", "## What changed since 2026-11-30"]
    assert "Best for llama2-70b-lora-finetune is now aws p5en.48xlarge" in page
    unchanged = (day_2.reports / "llama31-8b-chat-small.md").read_text()
    assert "The best offer is the same as on 2026-11-30." in unchanged


@pytest.mark.slow  # a second whole run (the day-two fixture): make test-slow and CI
def test_a_workload_page_does_not_count_again_the_market_change_its_best_offer_line_names(two_days):
    day_2, _ = two_days
    # day 2's 4 market changes: the p5.48xlarge us-east-1 spot price, inf2.xlarge added, eu-north-1 p5.48xlarge
    # withdrawn, one new result. The LoRA page's line names the price (its reason): 4 - 1 = 3 left to the index
    lora = (day_2.reports / "llama2-70b-lora-finetune.md").read_text()
    assert "p5.48xlarge us-east-1 spot price rose 2.50x" in lora
    assert "3 other market changes since 2026-11-30: see the [index](index.md)." in lora
    # a page whose best offer did not move names none of them: all 4
    unchanged = (day_2.reports / "llama31-8b-chat-small.md").read_text()
    assert "4 other market changes since 2026-11-30: see the [index](index.md)." in unchanged
    found = changes(day_2.warehouse, DAY_2)
    assert found["best_offer_changed", "llama2-70b-lora-finetune"]["reason_subjects"] == [P5_SPOT]
    assert found["price_moved", P5_SPOT]["reason_subjects"] is None


@pytest.mark.slow  # a whole run (or several): make test-slow and CI
def test_a_workload_page_whose_only_market_change_its_best_offer_line_names_says_nothing_more(
        flow_run, prefect_server, tmp_path):
    """Day 2 moves one price alone, p5.48xlarge us-east-1 spot x2.5 (`day_two_files`' move): the LoRA and batch
    workloads' best offers move by it, and their pages say it once, in that line."""
    from flows.nightly import nightly

    warehouse, reports = copy_of_day_one(flow_run, tmp_path)
    spot = json.loads((SNAPSHOT / "aws_spot" / "us-east-1.json").read_text())
    for row in spot["SpotPriceHistory"]:
        if row["InstanceType"] == "p5.48xlarge":
            row["SpotPrice"] = f"{float(row['SpotPrice']) * 2.5:.6f}"
    (tmp_path / "us-east-1.json").write_text(json.dumps(spot))
    result = nightly(as_of=DAY_2, run_id="one-move", catalog_dir=str(CATALOGS), warehouse_file=str(warehouse),
                     reports_dir=str(reports),
                     source_files={"aws_spot": [f"{tmp_path / 'us-east-1.json'}@2026-12-01",
                                                f"{SNAPSHOT / 'aws_spot' / 'us-east-2.json'}@2026-11-20",
                                                f"{SNAPSHOT / 'aws_spot' / 'eu-north-1.json'}@2026-11-20"]})
    assert sorted(changes(result.warehouse, DAY_2)) == [
        ("best_offer_changed", "llama2-70b-batch"), ("best_offer_changed", "llama2-70b-lora-finetune"),
        ("price_moved", P5_SPOT)]
    for workload_id in ("llama2-70b-lora-finetune", "llama2-70b-batch"):
        page = (result.reports / f"{workload_id}.md").read_text()
        section = page.split("## What changed since 2026-11-30\n", 1)[1].split("\n## ", 1)[0]
        # the line names the offer with the pick's precision (batch's: fp16)
        assert "us-east-1 spot" in section and "price rose 2.50x (10.24 to 25.60 USD per hour)" in section
        assert "other market change" not in section, workload_id
    # a page whose best offer stayed still counts the move, once
    unchanged = (result.reports / "llama31-8b-chat-small.md").read_text()
    assert "1 other market change since 2026-11-30: see the [index](index.md)." in unchanged


def test_the_first_run_has_nothing_to_compare_with(flow_run):
    index = (flow_run.reports / "index.md").read_text()
    assert "## What changed\n\nNo earlier run in this warehouse to compare with.\n" in index
    assert changes(flow_run.warehouse, AS_OF) == {}


@pytest.mark.slow  # a second whole run (the day-two fixture): make test-slow and CI
def test_a_backfill_compares_with_the_run_before_its_date_and_keeps_latest(two_days):
    day_2, backfill = two_days
    # the backfill (2026-12-01, snapshot prices) is compared with 2026-11-30 (same prices), not with day 2
    assert changes(backfill.warehouse, backfill.as_of) == {}
    assert "Nothing changed since 2026-11-30" in (backfill.reports / "index.md").read_text()
    assert not backfill.latest_updated
    assert "as of 2026-12-02" in (backfill.reports.parent / "latest" / "index.md").read_text()
    assert len(changes(day_2.warehouse, DAY_2)) == 6  # day 2's changes are not rewritten by the backfill


@pytest.mark.slow  # a second whole run (the day-two fixture): make test-slow and CI
def test_each_days_data_docs_link_only_to_files_in_their_own_folder(two_days):
    """Day 2 validated the two sources it changed and kept the pages of the others (reused.html beside GX's site);
    the backfill validated again what day 2 had changed and kept the rest: every data-docs folder published, the
    three dates and latest, is whole (tests/test_flow.py says why it was not)."""
    from builders import site_links

    day_2, backfill = two_days
    reports = day_2.reports.parent
    assert (reports / DAY_2.isoformat() / "data-docs" / "reused.html").is_file()
    for folder in (AS_OF.isoformat(), backfill.as_of.isoformat(), DAY_2.isoformat(), "latest"):
        links, unresolved = site_links(reports / folder / "data-docs")
        assert unresolved == [] and links > 0, folder


@pytest.mark.slow  # a second whole run (the day-two fixture): make test-slow and CI
def test_history_marts_keep_every_run(two_days):
    day_2, _ = two_days
    con = duckdb.connect(str(day_2.warehouse), read_only=True)
    try:
        prices = con.execute("select as_of, usd_per_hour from marts.price_history "
                             "where offer_id = 'aws:us-east-1:p5.48xlarge:spot' order by as_of").fetchall()
        picks = con.execute("select as_of, offer_id from marts.rank_history where is_pick "
                            "and workload_id = 'llama2-70b-lora-finetune' order by as_of").fetchall()
    finally:
        con.close()
    assert prices == [(AS_OF, 10.24), (dt.date(2026, 12, 1), 10.24), (DAY_2, 25.6)]
    assert picks == [(AS_OF, "aws:us-east-1:p5.48xlarge:spot"), (dt.date(2026, 12, 1), "aws:us-east-1:p5.48xlarge:spot"),
                     (DAY_2, "aws:us-east-1:p5en.48xlarge:spot")]


@pytest.mark.slow  # a second whole run (the day-two fixture): make test-slow and CI
def test_the_first_run_of_a_month_compacts_the_month_before(two_days):
    _, backfill = two_days  # 2026-11-30, then 2026-12-02 (the first run of December), then the backfill of 2026-12-01
    path = backfill.warehouse
    [day_2_run] = _query(path, "select run_id from ops.runs where as_of = ?", [DAY_2])
    # the marts stored as tables (rank_history is a view of rankings: nothing of its own to compact)
    tables = {r["table_name"] for r in _query(path, "select table_name from information_schema.tables where "
                                                    "table_schema = 'marts' and table_type = 'BASE TABLE'")}
    marts = set(load_contract()["models"]) & tables
    assert "rankings" in marts and "rank_history" not in marts
    november = {}
    for mart in marts:
        [found] = _query(path, f"select count(*) as n from marts.{mart} where as_of = ?", [AS_OF])
        if found["n"]:
            november[mart] = found["n"]
    compacted = _query(path, "select table_name, month, rows, run_id from ops.compacted_months")
    assert {c["table_name"]: c["rows"] for c in compacted if c["rows"]} == november
    assert {c["table_name"] for c in compacted} == marts  # none in November: 0, recorded
    assert {(c["month"], c["run_id"]) for c in compacted} == {(dt.date(2026, 11, 1), day_2_run["run_id"])}
    stored = [r["candidate_id"] for r in _query(path, "select candidate_id from marts.rankings where as_of = ? "
                                                       "order by rowid", [AS_OF])]
    assert len(stored) > 100 and stored == sorted(stored)  # in grain order on disk


def _query(path: Path, sql: str, params: list | None = None) -> list[dict]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return fetch_dicts(con, sql, params)
    finally:
        con.close()


@pytest.mark.slow  # a second whole run (the day-two fixture): make test-slow and CI
def test_the_latest_views_hold_the_newest_runs_rows_and_a_backfill_does_not_replace_them(two_days):
    _, backfill = two_days  # runs as of 2026-11-30, 2026-12-02, then the backfill of 2026-12-01
    runs = _query(backfill.warehouse, "select as_of from ops.runs order by finished_at")
    assert [r["as_of"] for r in runs] == [AS_OF, DAY_2, DAY_2 - dt.timedelta(days=1)]
    for name, view in load_contract()["views"].items():
        dates = _query(backfill.warehouse, f"select as_of, count(*) as n from analytics.{name} group by as_of")
        [newest] = _query(backfill.warehouse, f"select count(*) as n from marts.{view['mart']} where as_of = ?",
                         [DAY_2])
        assert dates == [{"as_of": DAY_2, "n": newest["n"]}], name
    # day 2's six changes (tests/test_changes.py), not the backfill's none
    assert len(_query(backfill.warehouse, "select * from analytics.latest_changes")) == 6


def test_artifacts_are_published_under_stable_keys_and_runs_carry_the_as_of(flow_run):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey, FlowRunFilter, FlowRunFilterName

    keys = ["hweval-index", "hweval-llama31-8b-chat-small", "hweval-llama31-8b-chat-small-top"]
    with get_client(sync_client=True) as client:
        artifacts = client.read_artifacts(artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=keys)))
        runs = client.read_flow_runs(flow_run_filter=FlowRunFilter(name=FlowRunFilterName(any_=["hweval-2026-11-30"])))
    by_key: dict[str, list] = {}
    for artifact in artifacts:
        by_key.setdefault(artifact.key, []).append(artifact)
    assert sorted(by_key) == sorted(keys)
    # made side by side on threads (flows/after_publish.py publish_artifacts), each still tied to its run's task
    assert all(a.flow_run_id is not None and a.task_run_id is not None for a in artifacts)
    index = (flow_run.reports / "index.md").read_text()
    assert any(a.type == "markdown" and a.data == index for a in by_key["hweval-index"])
    page = (flow_run.reports / "llama31-8b-chat-small.md").read_text()
    assert any(a.data == page for a in by_key["hweval-llama31-8b-chat-small"])
    tables = [json.loads(a.data) if isinstance(a.data, str) else a.data
              for a in by_key["hweval-llama31-8b-chat-small-top"]]
    # the golden index: the best for llama31-8b-chat-small is aws inf2.xlarge on demand, 212.74 USD per M requests
    assert any(t[0]["instance_type"] == "inf2.xlarge" and t[0]["outcome_value"] == pytest.approx(212.74, abs=0.005)
               and len(t) == 10 for t in tables)
    assert runs and all(r.name == "hweval-2026-11-30" for r in runs)


@pytest.mark.slow  # a whole run (or several): make test-slow and CI
def test_a_source_stale_past_its_limit_publishes_fails_and_notifies(flow_run, prefect_server, tmp_path, webhook,
                                                                    monkeypatch, capsys, caplog):
    """Day 1 landed aws_spot as of 2026-11-30; on 2026-12-05 its file is garbage: stale for 5 days, limit 2."""
    from flows.nightly import StalePastLimit, nightly

    warehouse, reports = copy_of_day_one(flow_run, tmp_path)
    garbage = tmp_path / "spot.json"
    garbage.write_text("{not json")
    monkeypatch.setenv("HWEVAL_NOTIFY_URL", webhook.url())
    as_of = dt.date(2026, 12, 5)
    args = ["run", "--as-of", as_of.isoformat(), "--catalog", str(CATALOGS), "--warehouse", str(warehouse),
            "--reports", str(reports), "--source", f"aws_spot={garbage}"]
    assert main(args) == EXIT_STALE_PAST_LIMIT == 3
    err = capsys.readouterr().err
    line = "aws_spot stale for 5 days, last loaded by the run of 2026-11-30 (limit 2 days)"  # 12-05 - 11-30 = 5
    assert f"STALE PAST ITS LIMIT: {line}" in err
    # Prefect's own log of the exception the flow ended on: one line, no traceback
    [ended] = [r for r in caplog.records if r.getMessage().startswith("Encountered exception during execution")]
    assert "StalePastLimit(" in ended.getMessage() and ended.exc_info is None and "Traceback" not in caplog.text
    index = (reports / "latest" / "index.md").read_text()
    assert "as of 2026-12-05" in index  # published all the same, with the banner at the top
    banner = ("> **Warning: data stale past its limit.** The run is marked failed: the figures below use the last "
              f"good data of sources it could not refresh for longer than their limit. Not refreshed: {line}: ")
    assert index.splitlines()[2].startswith(banner)
    # every page, each also published on its own: the workload pages, offers and estimates
    for page in ("gpt3-175b-pretrain.md", "llama2-70b-batch.md", "offers.md", "estimates.md"):
        assert banner in (reports / "latest" / page).read_text(), page
    # the batch workload's pick is an AWS spot price, carried from the last good load: said on its decision and
    # beside the price wherever it is listed (its data's own date, 2026-11-20, stays the as-of shown)
    batch = (reports / "latest" / "llama2-70b-batch.md").read_text()
    assert ("**Its price is not fresh**: this run could not refresh aws_spot, so the price is from its last good "
            "load, by the run of 2026-11-30.") in batch
    assert "aws_spot (2026-11-20), STALE: not refreshed this run |" in batch
    # and under the history chart, whose caption gives the pick's price (day 1 and this run: two runs)
    assert ("That price is not fresh: this run could not refresh aws_spot, so it is from its last good load, by the "
            "run of 2026-11-30._") in batch
    offers = (reports / "latest" / "offers.md").read_text()  # the page that lists every price with its source
    assert "spot: aws_spot (2026-11-20), STALE: not refreshed this run |" in offers
    assert "aws_pricing (2026-09-10), STALE" not in offers  # a source this run refreshed is not marked
    [message] = webhook.requests
    body = json.loads(message["body"])
    # the run is marked failed, and says so to a channel that follows failures (a review's finding: one listing only
    # run_failed heard nothing of a run whose exit status and Prefect state were Failed)
    assert body["title"] == "hweval 2026-12-05: run failed; 1 source stale past its limit"
    assert line in body["message"]
    assert ("marked failed: 1 source stale past its limit (aws_spot); the reports are published, every page warning "
            "that they use the last good data of that source") in body["message"]
    assert f"Report: {reports / '2026-12-05' / 'index.md'}" in body["message"]

    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        [(status, past_limit)] = con.execute("select status, stale_past_limit from ops.runs where as_of = ?",
                                             [as_of]).fetchall()
    finally:
        con.close()
    assert status == "failed: sources stale past their limit: aws_spot"
    assert past_limit.startswith("aws_spot stale for 5 days")

    # the same run through Prefect: the flow run's state is Failed, its message names the source
    state = nightly(as_of=as_of, catalog_dir=str(CATALOGS), warehouse_file=str(warehouse), reports_dir=str(reports),
                    source_files={"aws_spot": [str(garbage)]}, return_state=True)
    assert state.is_failed()
    assert "aws_spot stale for 5 days" in state.message
    assert isinstance(state.result(raise_on_failure=False), StalePastLimit)


@pytest.mark.slow  # a whole run (or several): make test-slow and CI
def test_a_run_whose_prefect_api_fails_after_its_publish_says_it_published_and_exits_5(flow_run, prefect_server,
                                                                                        tmp_path, monkeypatch, capsys):
    """A review's finding: the temporary Prefect server killed as the run set its final state made `hweval run` exit
    1 with httpx's traceback and nothing on stdout, as if the warehouse and reports were the last good run's, while
    the run had published. The flow body's outcome is kept as it ends (nightly.FINISHED): an engine error after it is
    a step after the publish (exit 5), with the run's summary."""
    import httpx

    from flows import nightly as nightly_module

    real = nightly_module.nightly

    def published_then_the_api_fails(**kwargs):
        real(**kwargs)  # the whole run, published
        raise httpx.ConnectError("[Errno 111] Connection refused")  # what Prefect's set_state raised

    monkeypatch.setattr(nightly_module, "nightly", published_then_the_api_fails)
    warehouse, reports = copy_of_day_one(flow_run, tmp_path)
    args = ["run", "--as-of", "2026-12-02", "--catalog", str(CATALOGS), "--warehouse", str(warehouse),
            "--reports", str(reports)]
    assert main(args) == EXIT_FAILED_AFTER_PUBLISH == 5
    out, err = capsys.readouterr()
    assert f"reports:   {reports / '2026-12-02'}/index.md (also {reports / 'latest'}/)" in out
    assert ("hweval: AFTER THE PUBLISH: Prefect could not record the run's end (ConnectError: [Errno 111] Connection "
            "refused); its flow run may show Running until the next run on this warehouse marks it Failed") in err
    assert json.loads((reports / "latest.json").read_text())["as_of"] == "2026-12-02"
    # its run file, left for that next run (tests/test_killed_runs.py marks one): what it ended on and its flow run
    from flows import killed_runs, run_files

    [left] = run_files.left_by_killed(warehouse)
    assert left["ended"] == ("published, but Prefect could not record the run's end (ConnectError: [Errno 111] "
                             "Connection refused)")
    assert left["step"] == killed_runs.ENDED and left["as_of"] == "2026-12-02" and left["flow_run_id"]
    assert left["warehouse"] == str(warehouse)
    # an engine error before any flow body ended is raised as it was: nothing was published
    def fails_at_once(**kwargs):
        raise httpx.ConnectError("[Errno 111] Connection refused")

    monkeypatch.setattr(nightly_module, "nightly", fails_at_once)
    with pytest.raises(httpx.ConnectError):
        main(args)


@pytest.mark.slow  # a whole run (or several): make test-slow and CI
def test_a_stale_source_within_its_limit_is_not_a_failure(flow_run, prefect_server, tmp_path, capsys):
    warehouse, reports = copy_of_day_one(flow_run, tmp_path)
    garbage = tmp_path / "spot.json"
    garbage.write_text("{not json")
    args = ["run", "--as-of", "2026-12-02", "--catalog", str(CATALOGS), "--warehouse", str(warehouse),
            "--reports", str(reports), "--source", f"aws_spot={garbage}"]
    assert main(args) == 0  # stale for 2 days, limit 2 days
    out = capsys.readouterr().out
    assert "aws_spot: STALE" in out
    assert "Warning: data stale past its limit" not in (reports / "latest" / "index.md").read_text()


@pytest.mark.slow  # a whole run (or several): make test-slow and CI
def test_a_failed_run_notifies_and_leaves_the_last_good_state(flow_run, prefect_server, tmp_path, webhook,
                                                              monkeypatch):
    from flows import transform
    from flows.nightly import nightly

    warehouse, reports = copy_of_day_one(flow_run, tmp_path)
    before = warehouse.read_bytes()

    def crash(*args, **kwargs):
        raise RuntimeError("injected crash in the model build")

    monkeypatch.setattr(transform, "build_models", crash)
    monkeypatch.setenv("HWEVAL_NOTIFY_URL", webhook.url())
    state = nightly(as_of=dt.date(2026, 12, 3), catalog_dir=str(CATALOGS), warehouse_file=str(warehouse),
                    reports_dir=str(reports), return_state=True)
    assert state.is_failed() and "injected crash in the model build" in state.message
    [message] = webhook.requests
    body = json.loads(message["body"])
    assert body["title"] == "hweval 2026-12-03: run failed"
    assert body["message"].splitlines()[0] == "RuntimeError: injected crash in the model build"
    assert warehouse.read_bytes() == before and not (reports / "2026-12-03").exists()
    # the link goes to the reports the last good run published, not to the folder this run never wrote
    assert f"Report: {reports / 'latest' / 'index.md'}" in body["message"].splitlines()
    assert (reports / "latest" / "index.md").exists()


STOPPED_IN_THE_FETCH = """
def fetch_for_ever(*args, **kwargs):  # a fetch that hangs: the worker, or its infrastructure, stops the run
    os.write(1, b"waiting\\n")
    time.sleep(600)

flow_module.fetch_all = fetch_for_ever
"""
# the run fails on its own and tells its channel, then is stopped as it ends: one message, and tagged as told
STOPPED_AFTER_TELLING = """
def boom(*args, **kwargs):
    raise RuntimeError("boom")

tell = flow_module.crash_notice.CrashNotice.tell

def told_then_hang(notice, *args):
    tell(notice, *args)
    os.write(1, b"waiting\\n")
    time.sleep(600)

flow_module._evaluate = boom
flow_module.crash_notice.CrashNotice.tell = told_then_hang
"""
# the run fails on its own, and is stopped while it tells its second channel (the first took its message): its hook
# tells the second of the crash
STOPPED_WHILE_TELLING = """
def boom(*args, **kwargs):
    raise RuntimeError("boom")

send_to_channel = flow_module.notify._send_to_channel

def second_hangs(channel_id, *args, **kwargs):
    if channel_id == "oncall" and not os.environ.get("STOPPED"):
        os.environ["STOPPED"] = "1"
        os.write(1, b"waiting\\n")
        time.sleep(600)
    return send_to_channel(channel_id, *args, **kwargs)

flow_module._evaluate = boom
flow_module.notify._send_to_channel = second_hangs
"""
# the build ends in a DuckDB query that runs until the run is stopped: the signal lands in DuckDB, not in Python.
# One thread: then the main thread runs the query's tasks itself and checks for signals between their parts (with
# more, it can wait for a worker thread's task without checking, and the signal waits for the query)
STOPPED_IN_A_QUERY = """
build = flow_module.pipeline.build

def build_then_query_for_ever(con, *args, **kwargs):
    import threading

    yield from build(con, *args, **kwargs)
    con.execute("set threads = 1")
    con.execute("set enable_progress_bar = true; set enable_progress_bar_print = false")  # query_progress()

    def running():  # "waiting" once DuckDB runs the query (its progress 0 or more, -1 before)
        while con.query_progress() < 0:
            time.sleep(0.01)
        os.write(1, b"waiting\\n")

    threading.Thread(target=running, daemon=True).start()
    con.execute("select count(*) from range(1000000000000) t(i) where i % 7 = 3").fetchall()

flow_module.pipeline.build = build_then_query_for_ever
"""
NIGHTLY_RUN = """
flow_module.nightly(as_of=dt.date.fromisoformat(sys.argv[1]), catalog_dir={catalogs!r}, warehouse_file=sys.argv[2],
                    reports_dir=sys.argv[3], run_id="stopped")
"""
CLI_RUN = """
sys.exit(cli.main(["run", "--as-of", sys.argv[1], "--warehouse", sys.argv[2], "--reports", sys.argv[3]]))
"""


def stopped_run(patch: str, run: str, as_of: str, root: Path, webhook, stop, prefect_api: bool = True,
                catalogs: Path = CATALOGS, env: dict | None = None):
    """A run in a process of its own (and a process group of its own), with `patch` (Python) run first, stopped by
    `stop(process)` once it writes "waiting"; (exit status, stderr, the channel's first lines, the process's children
    named uvicorn as it was stopped)."""
    import subprocess
    import sys
    import tempfile

    from prefect.settings import PREFECT_API_URL

    script = ("import datetime as dt, os, sys, time\nfrom flows import cli, nightly as flow_module\n" + patch
              + run.format(catalogs=str(catalogs)))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API")} | {
        "HWEVAL_NOTIFY_URL": webhook.url()} | (env or {})
    if prefect_api:
        env["PREFECT_API_URL"] = PREFECT_API_URL.value()
    # stderr to a file (outside `root`, whose files the tests compare): a pipe nobody reads before "waiting" would hold
    # the run once its log passed the pipe's 64 KiB
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen([sys.executable, "-c", script, as_of, str(root / "w" / "hweval.duckdb"),
                                 str(root / "reports")], env=env, stdout=subprocess.PIPE, stderr=err, text=True,
                                start_new_session=True)
        try:
            if proc.stdout.readline() != "waiting\n":
                os.killpg(proc.pid, signal.SIGKILL)  # before its stderr is read: the patch may sleep for 10 minutes
                proc.wait()
                err.seek(0)
                pytest.fail(f"the run did not reach the point it is stopped at:\n{err.read()[-3000:]}")
            servers = [pid for pid in children(proc.pid) if b"uvicorn" in proc_file(pid, "cmdline").encode()]
            stop(proc)
            proc.communicate(timeout=120)  # its stdout drained as it ends
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        err.seek(0)
        stderr = err.read()
    lines = [json.loads(r["body"])["message"].splitlines()[0] for r in webhook.requests]
    return proc.returncode, stderr, lines, servers


def children(pid: int) -> list[int]:
    """`pid`'s child processes, from each of its threads' /proc children list. A thread may end between the listing
    and the read (Prefect's and anyio's worker threads come and go; CI once caught one gone): it has no children then."""
    return [int(child) for task in Path(f"/proc/{pid}/task").iterdir()
            for child in proc_file(f"{pid}/task/{task.name}", "children").split()]



def marks(run) -> set[str]:
    """The marks (crash_notice.TOLD_TAG, TELLING_TAG) the crashed `run` carries for the attempt that crashed."""
    from prefect.client.orchestration import get_client

    from flows import crash_notice

    with get_client(sync_client=True) as client:
        attempt = crash_notice.attempt_of(client.read_flow_run_states(run.id), run.state)
    return {kind for kind in (crash_notice.TOLD_TAG, crash_notice.TELLING_TAG)
            if crash_notice.mark(kind, attempt) in run.tags}


def crashed_runs(as_of: str, since: dt.datetime) -> list:
    """The flow runs of the nightly flow as of `as_of`, created `since`, that Prefect recorded as Crashed (the session's
    server may hold another module's crashed run of that date)."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        FlowRunFilter,
        FlowRunFilterName,
        FlowRunFilterState,
        FlowRunFilterStateType,
    )

    with get_client(sync_client=True) as client:
        return [run for run in client.read_flow_runs(flow_run_filter=FlowRunFilter(
            name=FlowRunFilterName(any_=[f"hweval-{as_of}"]),
            state=FlowRunFilterState(type=FlowRunFilterStateType(any_=["CRASHED"])))) if run.created >= since]


@pytest.mark.slow  # a run in a process of its own: make test-slow and CI
def test_a_run_stopped_by_sigterm_is_crashed_and_tells_the_channel(prefect_server, tmp_path, webhook):
    """A worker cancelling the infrastructure, a node drained, a timeout outside Prefect: SIGTERM. Prefect marks the
    run Crashed, which no `except Exception` sees; the on_crashed hook tells the channel what a failed run tells it."""
    from flows.crash_notice import TELLING_TAG, TOLD_TAG

    since = dt.datetime.now(dt.UTC)
    status, stderr, lines, _ = stopped_run(STOPPED_IN_THE_FETCH, NIGHTLY_RUN, "2026-12-03", tmp_path, webhook,
                                           lambda proc: proc.send_signal(signal.SIGTERM))
    assert status != 0 and "Crash detected! Execution was aborted by a termination signal" in stderr
    assert "An error was encountered while running hook" not in stderr  # its log lines: no run context any more
    assert lines == [("flow run hweval-2026-12-03 crashed before it finished (Crashed: Execution was aborted by a "
                      "termination signal.)")]
    [sent] = webhook.requests
    body = json.loads(sent["body"])
    assert body["title"] == "hweval 2026-12-03: run failed"
    assert f"Report: {tmp_path / 'reports' / 'latest' / 'index.md'}" in body["message"].splitlines()  # none from it
    assert not (tmp_path / "w" / "hweval.duckdb").exists()
    # tagged as told, so that the crash-notice deployment (triggered by the same Crashed state) says nothing again
    [crashed] = crashed_runs("2026-12-03", since)
    assert marks(crashed) == {TELLING_TAG, TOLD_TAG}


@pytest.mark.slow  # a run in a process of its own: make test-slow and CI
def test_a_run_stopped_after_it_told_its_channel_tells_it_once(prefect_server, tmp_path, webhook):
    """The run failed and told its channel, then was stopped as it ended: no second message from its hook, and the
    run is tagged as told, so that the crash-notice deployment says nothing either."""
    from flows.crash_notice import TOLD_TAG

    since = dt.datetime.now(dt.UTC)
    status, _, lines, _ = stopped_run(STOPPED_AFTER_TELLING, NIGHTLY_RUN, "2026-12-04", tmp_path, webhook,
                                      lambda proc: proc.send_signal(signal.SIGTERM))
    assert status != 0 and lines == ["RuntimeError: boom"]
    [crashed] = crashed_runs("2026-12-04", since)
    assert marks(crashed) == {TOLD_TAG}


@pytest.mark.slow  # a run in a process of its own: make test-slow and CI
def test_a_run_stopped_while_it_tells_is_told_of_to_the_channels_it_had_not_told(prefect_server, tmp_path, webhook):
    """Two channels; the run failed, `team` took its message, and the run was stopped while `oncall` was sent it. The
    hook tells `oncall` of the crash, and not `team` again; no deployment need exist (`hweval run`'s own server has
    none)."""
    catalogs = tmp_path / "catalogs"
    shutil.copytree(CATALOGS, catalogs)
    with (catalogs / "notifications.yaml").open("a") as extra:
        extra.write("  oncall:\n    url_env: HWEVAL_NOTIFY_ONCALL\n    events: [run_failed]\n")
    status, _, _, _ = stopped_run(STOPPED_WHILE_TELLING, NIGHTLY_RUN, "2026-12-07", tmp_path, webhook,
                                  lambda proc: proc.send_signal(signal.SIGTERM), catalogs=catalogs,
                                  env={"HWEVAL_NOTIFY_URL": webhook.url("/team"),
                                       "HWEVAL_NOTIFY_ONCALL": webhook.url("/oncall")})
    told = [(r["path"], json.loads(r["body"])["message"].splitlines()[0]) for r in webhook.requests]
    assert status != 0 and told == [
        ("/team", "RuntimeError: boom"),
        ("/oncall", ("flow run hweval-2026-12-07 crashed before it finished (Crashed: Execution was aborted by a "
                     "termination signal.)"))]


@pytest.mark.slow  # `hweval run` in a process of its own, with its own temporary server: make test-slow and CI
def test_ctrl_c_at_the_terminal_tells_the_channel_and_stops_the_runs_own_server(prefect_server, tmp_path, webhook):
    """A terminal's Ctrl-C goes to the run's whole process group. The temporary server was in it, died first, and the
    run could record no Crashed state: no hook ran, no one was told. The server now has a session of its own, and is
    stopped with the run."""
    status, stderr, lines, [server] = stopped_run(STOPPED_IN_THE_FETCH, CLI_RUN, "2026-12-05", tmp_path, webhook,
                                                  lambda proc: os.killpg(proc.pid, signal.SIGINT), prefect_api=False)
    assert "Crash detected! Execution was aborted by an interrupt signal" in stderr and status != 0
    assert lines == [("flow run hweval-2026-12-05 crashed before it finished (Crashed: Execution was aborted by an "
                      "interrupt signal.)")]
    assert gone(server, within_s=60)  # uvicorn's graceful end; a loaded machine may take a while


@pytest.mark.slow  # `hweval run` in a process of its own, with its own temporary server: make test-slow and CI
def test_the_runs_own_server_ends_when_the_run_is_killed_outright(prefect_server, tmp_path, webhook):
    """SIGKILL runs no atexit: the kernel stops the server (PR_SET_PDEATHSIG), or it would outlive the run."""
    status, _, lines, [server] = stopped_run(STOPPED_IN_THE_FETCH, CLI_RUN, "2026-12-06", tmp_path, webhook,
                                             lambda proc: proc.kill(), prefect_api=False)
    assert status == -signal.SIGKILL and lines == []
    assert gone(server, within_s=60)  # PDEATHSIG's SIGTERM, then uvicorn's graceful end


@pytest.mark.slow  # `hweval run` in a process of its own, after a whole run: make test-slow and CI
@pytest.mark.parametrize(("sig", "as_of", "how"), [
    (signal.SIGTERM, "2026-12-08", "a termination signal"),  # a worker, a node drained, `kill`
    (signal.SIGINT, "2026-12-09", "an interrupt signal"),  # Ctrl-C at the terminal, to the whole process group
])
def test_a_run_stopped_in_a_duckdb_query_is_crashed_not_failed(flow_run, prefect_server, tmp_path, webhook, sig,
                                                               as_of, how):
    """DuckDB checks for signals as a query runs: the exception Prefect's SIGTERM handler raises (or Ctrl-C's)
    interrupts the query, and DuckDB raises RuntimeError("Query interrupted") from it. The run ended Failed, exit
    status 1, its channel told "RuntimeError: Query interrupted"; stopped anywhere else, it is Crashed and its hook
    tells of the signal. It is now, and the warehouse and reports stay the last good run's."""
    from test_fault_injection import published

    copy_of_day_one(flow_run, tmp_path)
    (tmp_path / "warehouse").rename(tmp_path / "w")  # where stopped_run points the run
    before = published(tmp_path)

    def stop(proc) -> None:  # the query is under way: "waiting" is written once DuckDB runs it (a fixed 1 s after
        # it was written just before the query let a loaded machine's signal land in Python, not in DuckDB)
        os.killpg(proc.pid, sig) if sig == signal.SIGINT else proc.send_signal(sig)

    since = dt.datetime.now(dt.UTC)
    status, stderr, lines, _ = stopped_run(STOPPED_IN_A_QUERY, CLI_RUN, as_of, tmp_path, webhook, stop)
    assert "RuntimeError: Query interrupted" in stderr  # the signal landed in DuckDB: the build task failed of it
    # Prefect's handler sends SIGTERM again once the run is Crashed; an unhandled KeyboardInterrupt ends Python so too
    assert status == -sig, stderr[-3000:]
    [crashed] = crashed_runs(as_of, since)
    assert crashed.state.message == f"Execution was aborted by {how}."
    assert lines == [f"flow run hweval-{as_of} crashed before it finished (Crashed: Execution was aborted by {how}.)"]
    assert json.loads(webhook.requests[0]["body"])["title"] == f"hweval {as_of}: run failed"
    assert published(tmp_path) == before and not (tmp_path / "reports" / as_of).exists()


def test_a_signal_behind_an_interrupted_duckdb_query_is_raised_again_and_an_interrupt_is_not():
    """The exception a signal's handler raised as a DuckDB query ran is behind DuckDB's RuntimeError; the run raises
    it again (a crash). A query interrupted by `con.interrupt()` has no signal behind it: an error, the run fails."""
    import _thread
    import threading

    from prefect.exceptions import TerminationSignal
    from prefect.utilities.engine import _prefect_sigterm_handler

    from flows.after_publish import step
    from flows.crash_notice import raise_the_signal_behind

    def interrupted_query(interrupt) -> BaseException:
        """The error of an endless query that `interrupt(con)` stopped, called once DuckDB runs it (its progress is
        then 0 or more, -1 before). A fixed 0.3 s delay let a loaded machine call it before the query began: a
        `con.interrupt()` then had nothing to stop, and the query ran on (a worker hung for minutes). A query still
        running 60 s later, or never seen running in 60 s, is stopped with `con.interrupt()`: the test fails, it
        does not hang."""
        con = duckdb.connect(config={"threads": 1})  # the main thread runs the query, and checks for signals
        con.execute("set enable_progress_bar = true; set enable_progress_bar_print = false")  # query_progress()
        finished = threading.Event()

        def stop() -> None:
            unseen_until = time.monotonic() + 60
            while con.query_progress() < 0:
                if finished.wait(0.01):
                    return
                if time.monotonic() > unseen_until:  # never reported running: stopped all the same
                    con.interrupt()
                    return
            interrupt(con)
            if not finished.wait(60):
                con.interrupt()

        watcher = threading.Thread(target=stop, daemon=True)
        try:
            watcher.start()
            con.execute("select count(*) from range(1000000000000) t(i) where i % 7 = 3").fetchall()
        except BaseException as exc:  # noqa: BLE001 (DuckDB's error, whatever it is)
            return exc
        finally:
            finished.set()
            watcher.join()
            con.close()
        raise AssertionError("the query was not interrupted")

    interrupted = interrupted_query(lambda con: con.interrupt())
    assert isinstance(interrupted, duckdb.InterruptException)
    assert raise_the_signal_behind(interrupted) is None  # nothing raised

    # the signal is simulated in this process (interrupt_main calls its Python handler; no signal is sent)
    previous = signal.signal(signal.SIGTERM, _prefect_sigterm_handler)
    try:
        interrupted = interrupted_query(lambda con: _thread.interrupt_main(signal.SIGTERM))
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert type(interrupted) is RuntimeError and str(interrupted) == "Query interrupted"
    with pytest.raises(TerminationSignal) as raised:
        raise_the_signal_behind(interrupted)
    assert raised.value.signal == signal.SIGTERM and raised.value.__cause__ is interrupted
    # a step after the publish records its failure and the run goes on; stopped by a signal, the run stops (a crash)

    def step_stopped():
        raise interrupted

    failed: list[str] = []
    with pytest.raises(TerminationSignal):
        step("reading the run's changes", step_stopped, failed)
    assert failed == []

    # Python's own handler, set here: interrupt_main does nothing to a signal whose handler is SIG_IGN or SIG_DFL, as
    # an earlier test in the worker can leave SIGINT's (the query ran on, a worker hung for minutes)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        interrupted = interrupted_query(lambda con: _thread.interrupt_main(signal.SIGINT))
    finally:
        signal.signal(signal.SIGINT, previous)
    assert type(interrupted) is RuntimeError and str(interrupted) == "Query interrupted"
    with pytest.raises(KeyboardInterrupt):
        raise_the_signal_behind(interrupted)


@pytest.mark.slow  # a whole run (or several): make test-slow and CI
def test_a_step_after_the_publish_that_fails_still_tells_the_runs_events_and_exits_5(
        flow_run, prefect_server, tmp_path, webhook, monkeypatch, capsys):
    """Day 2's changes (two best offers move) are published, then the Prefect artifacts fail; a second run of the
    day makes them but no channel takes its message. Neither may pass for a success, nor for "nothing changed"."""
    from flows import after_publish

    warehouse, reports = copy_of_day_one(flow_run, tmp_path)
    files = tmp_path / "day-2"
    files.mkdir()
    args = ["run", "--as-of", DAY_2.isoformat(), "--catalog", str(CATALOGS), "--warehouse", str(warehouse),
            "--reports", str(reports)]
    for source_id, paths in day_two_files(files).items():
        args += [arg for path in paths for arg in ("--source", f"{source_id}={path}")]
    monkeypatch.setenv("HWEVAL_NOTIFY_URL", webhook.url())
    real_artifact = after_publish.create_markdown_artifact

    def refused(*args, **kwargs):
        raise RuntimeError("the Prefect API refused the artifact")

    monkeypatch.setattr(after_publish, "create_markdown_artifact", refused)
    assert main(args) == EXIT_FAILED_AFTER_PUBLISH == 5
    err = capsys.readouterr().err
    assert ("AFTER THE PUBLISH: making the Prefect artifacts failed: RuntimeError: the Prefect API refused the "
            "artifact") in err
    assert "as of 2026-12-02" in (reports / "latest" / "index.md").read_text()  # published
    [message] = webhook.requests
    lines = json.loads(message["body"])["message"].splitlines()
    # the run's own events, and what failed after the publish; the link is this run's report
    assert "published, but making the Prefect artifacts failed: RuntimeError: the Prefect API refused the artifact" \
        in lines
    assert sum(line.startswith("Best for ") for line in lines) == 2
    assert f"Report: {reports / '2026-12-02' / 'index.md'}" in lines

    # the same day again, artifacts made, the channel answering 500: the events were not delivered
    monkeypatch.setattr(after_publish, "create_markdown_artifact", real_artifact)
    webhook.status = 500
    assert main(args) == EXIT_FAILED_AFTER_PUBLISH
    err = capsys.readouterr().err
    assert "AFTER THE PUBLISH: notifying channel(s) team failed (the run's events were not delivered" in err
    assert len(webhook.requests) == 2
    # kept beside the warehouse for the next run to send again (tests/test_notify.py: the re-send)
    box = warehouse.parent / "notifications-outbox"
    assert f"apprise's log says which; kept in {box} to be sent again by the next run)" in err
    [kept] = (box / "team").glob("*.json")
    assert json.loads(kept.read_text())["body"] == json.loads(webhook.requests[1]["body"])["message"]


@pytest.mark.slow  # a whole run (or several): make test-slow and CI
def test_a_catalog_edit_is_the_reason_when_nothing_else_moved(flow_run, prefect_server, tmp_path, catalog_copy):
    """The LoRA workload stops accepting spot: its pick moves from p5.48xlarge spot to the best on-demand offer. The
    large chat service starts accepting spot: its new pick was no candidate the night before (not a new result)."""
    from flows.nightly import nightly

    warehouse, reports = copy_of_day_one(flow_run, tmp_path)
    workloads = catalog_copy / "workloads.yaml"
    workloads.write_text(workloads.read_text().replace(
        "    benchmark: {suite: mlperf_training, task: llama2_70b_lora}\n",
        "    benchmark: {suite: mlperf_training, task: llama2_70b_lora}\n    pricing_terms: [on_demand]\n", 1).replace(
        "    traffic: {mean_requests_per_s: 2000, peak_factor: 1.5}\n",
        "    traffic: {mean_requests_per_s: 2000, peak_factor: 1.5}\n    pricing_terms: [on_demand, spot]\n", 1))
    result = nightly(as_of=dt.date(2026, 12, 1), catalog_dir=str(catalog_copy), warehouse_file=str(warehouse),
                     reports_dir=str(reports))
    found = changes(result.warehouse, result.as_of)
    assert sorted(found) == [("best_offer_changed", "llama2-70b-lora-finetune"),
                             ("best_offer_changed", "llama31-8b-chat-large"), ("catalog_changed", "catalog")]
    lora = found["best_offer_changed", "llama2-70b-lora-finetune"]
    assert (lora["reason"], lora["previous_offer_id"]) == ("catalog edit", "aws:us-east-1:p5.48xlarge:spot")
    assert lora["offer_id"].endswith(":on_demand") and lora["previous_pick_now_value"] is None
    chat = found["best_offer_changed", "llama31-8b-chat-large"]
    assert chat["offer_id"].endswith(":spot")
    assert (chat["reason"], chat["reason_detail"]) == ("catalog edit", "the catalogs changed since the previous run")


# A hand-made history for marts.changes alone (its real SQL and that of the two intermediates it reads, on given
# rows, ~0.1 s): runs day-1 (2026-11-30) and day-2 (2026-12-01) committed, day-3 (2026-12-02) compared with day-2.
HAND_MADE_AS_OF = dt.date(2026, 12, 2)
P5_SPOT, P5EN_SPOT = "aws:us-east-1:p5.48xlarge:spot", "aws:us-east-1:p5en.48xlarge:spot"
P5_EU_SPOT, B200_SPOT = "aws:eu-north-1:p5.48xlarge:spot", "aws:us-east-1:p6-b200.48xlarge:spot"
P5_ON_DEMAND, TRN1_ON_DEMAND = "aws:us-east-1:p5.48xlarge:on_demand", "aws:us-east-1:trn1.32xlarge:on_demand"
INF2_ON_DEMAND, G6E_ON_DEMAND = "aws:us-east-1:inf2.48xlarge:on_demand", "aws:us-east-1:g6e.12xlarge:on_demand"
# USD per hour on 2026-12-01 and 2026-12-02 (None: not offered that day); the p5.48xlarge spot price falls to
# 10.24 x 0.4 = 4.096, eu-north-1 p5.48xlarge spot is withdrawn, the others do not move
HAND_MADE_PRICES = {P5_SPOT: (10.24, 4.096), P5EN_SPOT: (16.56, 16.56), P5_EU_SPOT: (28.32, None),
                    B200_SPOT: (13.03, 13.03), P5_ON_DEMAND: (55.04, 55.04), TRN1_ON_DEMAND: (21.50, 21.50),
                    INF2_ON_DEMAND: (12.98, 12.98), G6E_ON_DEMAND: (10.49, 10.49)}
# (workload, offer, precision, outcome metric, value on 2026-12-01, value on 2026-12-02; None: not ranked that day)
HAND_MADE_RANKS = [
    # a run of 0.5 h on p5.48xlarge spot, 0.25 h on p5en: 10.24 x 0.5 = 5.12 and 16.56 x 0.25 = 4.14 (p5en the pick);
    # then 4.096 x 0.5 = 2.048: p5.48xlarge the pick, by its own price's fall
    ("lora", P5_SPOT, None, "completed_run_usd", 5.12, 2.048),
    ("lora", P5EN_SPOT, None, "completed_run_usd", 4.14, 4.14),
    # the pick's offer withdrawn: the runner-up, unchanged, is the pick
    ("batch", P5_EU_SPOT, "fp8", "usd_per_million_tokens", 1.00, None),
    ("batch", B200_SPOT, "fp8", "usd_per_million_tokens", 1.10, 1.10),
    # ranked by USD, then by kWh (the workload's objective edited): another offer is the pick
    ("pretrain", P5_ON_DEMAND, None, "completed_run_usd", 4807.44, None),
    ("pretrain", TRN1_ON_DEMAND, None, "completed_run_usd", 5210.00, None),
    ("pretrain", P5_ON_DEMAND, None, "kwh_per_completed_run", None, 1300.0),
    ("pretrain", TRN1_ON_DEMAND, None, "kwh_per_completed_run", None, 1200.5),
    # g6e.12xlarge (offered on both days) ranked for the first time, and the pick
    ("chat", INF2_ON_DEMAND, "fp8", "usd_per_million_successful_requests", 50.0, 50.0),
    ("chat", G6E_ON_DEMAND, "fp8", "usd_per_million_successful_requests", None, 45.0),
    # no candidate any more; no candidate the run before
    ("gone", INF2_ON_DEMAND, "bf16", "usd_per_million_tokens", 2.0, None),
    ("arrived", G6E_ON_DEMAND, "bf16", "usd_per_million_tokens", None, 3.0),
]
# (source, status on 2026-12-01, status on 2026-12-02; None: not read that day): aws_spot stale on day 2 and landed
# on day 3, gcp_billing read for the first time on day 3 and stale
HAND_MADE_SOURCES = [("aws_spot", "stale", "landed"), ("aws_pricing", "landed", "landed"),
                     ("gcp_billing", None, "stale")]


# a ranked row's figure unless a test says otherwise: (basis, benchmark_ref, benchmark_label, benchmark_source_id)
HAND_MADE_FIGURE = ("measured", "r1", "a result", "mlperf")


def hand_made_changes(catalog_digest: str = "c", extra_ranks: tuple = (), figures: dict | None = None,
                      sources: list = HAND_MADE_SOURCES, models_digests: tuple = ("m", "m"),
                      results: tuple = ()) -> list[dict]:
    """marts.changes of the run of 2026-12-02 on the hand-made history, in the order the reports read it; the run's
    catalogs are the earlier runs' ("c") unless `catalog_digest` says otherwise (a catalog edit). `extra_ranks` are
    rows of HAND_MADE_RANKS' shape ranked besides them, and `figures` a row's figure on a day, {(workload, offer,
    day 0 or 1): (basis, benchmark_ref, benchmark_label, benchmark_source_id)}, where it is not HAND_MADE_FIGURE;
    `sources` the sources' statuses, in HAND_MADE_SOURCES' shape; `models_digests` the SQL models' digests of day-2
    and day-3 (a release between them, or None: a run that recorded none); `results` the benchmark results the runs
    read, (day 0 or 1, result_key, source_id, result_label, source_ref) each (none unless a test gives them)."""
    from flows.paths import SQL_DIR

    con = duckdb.connect()
    try:
        for schema in ("ops", "catalog", "intermediate", "marts"):
            con.execute(f"create schema {schema}")
        con.execute("create table catalog.settings as select 0.05 as price_move_threshold")  # sources.yaml's default
        con.execute("create table ops.runs (run_id varchar, as_of date, catalog_digest varchar, finished_at timestamp, "
                    "models_digest varchar)")
        # day-1 left no history here: the run compared with is the latest committed before 2026-12-02, day-2
        con.execute("insert into ops.runs values ('day-1', '2026-11-30', 'c', '2026-11-30 06:00', 'm'), "
                    "('day-2', '2026-12-01', 'c', '2026-12-01 06:00', ?)", [models_digests[0]])
        con.execute("create table ops.source_loads (run_id varchar, source_id varchar, status varchar, "
                    "error varchar, stale_since varchar)")
        for source_id, before, now in sources:
            for run_id, status in (("day-2", before), ("day-3", now)):
                if status:
                    con.execute("insert into ops.source_loads values (?, ?, ?, ?, null)",
                                [run_id, source_id, status, "HTTP 503" if status == "stale" else None])
        con.execute("create table marts.price_history (as_of date, offer_id varchar, cloud varchar, region varchar, "
                    "instance_type varchar, pricing_term varchar, term_detail varchar, usd_per_hour double)")
        for offer_id, prices in HAND_MADE_PRICES.items():
            cloud, region, instance_type, term = offer_id.split(":")
            for as_of, usd in zip((HAND_MADE_AS_OF - dt.timedelta(days=1), HAND_MADE_AS_OF), prices, strict=True):
                if usd is not None:
                    con.execute("insert into marts.price_history values (?, ?, ?, ?, ?, ?, null, ?)",
                                [as_of, offer_id, cloud, region, instance_type, term, usd])
        con.execute("create table marts.rank_history (as_of date, workload_id varchar, candidate_id varchar, "
                    "offer_id varchar, cloud varchar, region varchar, instance_type varchar, pricing_term varchar, "
                    "precision varchar, is_pick boolean, outcome_metric varchar, outcome_value double, "
                    "basis varchar, benchmark_ref varchar, benchmark_label varchar, price_source_id varchar, "
                    "benchmark_source_id varchar)")
        for as_of, day in ((HAND_MADE_AS_OF - dt.timedelta(days=1), 0), (HAND_MADE_AS_OF, 1)):
            ranked = [(w, offer_id, precision, metric, values[day])
                      for w, offer_id, precision, metric, *values in (*HAND_MADE_RANKS, *extra_ranks)
                      if values[day] is not None]
            best = {w: min(r[4] for r in ranked if r[0] == w) for w, *_ in ranked}
            for workload_id, offer_id, precision, metric, value in ranked:
                cloud, region, instance_type, term = offer_id.split(":")
                basis, ref, label, benchmark_source = (figures or {}).get((workload_id, offer_id, day),
                                                                          HAND_MADE_FIGURE)
                con.execute("insert into marts.rank_history values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            [as_of, workload_id, f"{workload_id}|{offer_id}|{precision}", offer_id, cloud, region,
                             instance_type, term, precision, value == best[workload_id], metric, value, basis, ref,
                             label, "aws_spot" if term == "spot" else "aws_pricing", benchmark_source])
        con.execute("create table marts.benchmark_results (as_of date, result_key varchar, source_id varchar, "
                    "result_label varchar, source_ref varchar)")
        for day, *result in results:
            con.execute("insert into marts.benchmark_results values (?, ?, ?, ?, ?)",
                        [HAND_MADE_AS_OF - dt.timedelta(days=1 - day), *result])
        con.execute((SQL_DIR / "macros.sql").read_text())  # its multiples are written as the pages write them
        con.execute("set variable run_id = 'day-3'")
        con.execute(f"set variable as_of = '{HAND_MADE_AS_OF}'")
        con.execute("set variable catalog_digest = ?", [catalog_digest])
        con.execute("set variable models_digest = ?", [models_digests[1]])
        # built as the pipeline builds them, as tables: a view would read the variables, which a cursor has not
        for model in ("intermediate/int_runs_compared", "intermediate/int_source_loads_compared", "marts/changes"):
            con.execute(f"create table {model.replace('/', '.')} as {(SQL_DIR / f'{model}.sql').read_text()}")
        return fetch_dicts(con, "select * from marts.changes order by change_kind, workload_id, subject")
    finally:
        con.close()


def test_changes_of_hand_made_days_name_each_reason_a_fall_in_price_and_sources_stale_or_fresh():
    found = {(c["change_kind"], c["subject"]): c for c in hand_made_changes()}
    workloads = ("arrived", "batch", "chat", "gone", "lora", "pretrain")
    assert sorted(found) == [("best_offer_changed", w) for w in workloads] + [
        ("offer_removed", P5_EU_SPOT), ("price_moved", P5_SPOT), ("source_fresh", "aws_spot"),
        ("source_stale", "gcp_billing")]
    # a fall is a move too: 4.096 / 10.24 = 0.40, |0.40 - 1| = 0.60 > 0.05; written to three figures, 0.400x
    moved = found["price_moved", P5_SPOT]
    assert (moved["before_value"], moved["after_value"], moved["ratio"]) == pytest.approx((10.24, 4.096, 0.40))
    # the pick by its own price's fall: 4.096 x 0.5 h = 2.048 against p5en's 16.56 x 0.25 h = 4.14, unchanged
    lora = found["best_offer_changed", "lora"]
    assert (lora["previous_offer_id"], lora["offer_id"]) == (P5EN_SPOT, P5_SPOT)
    assert (lora["before_value"], lora["after_value"], lora["previous_pick_now_value"]) == pytest.approx(
        (4.14, 2.048, 4.14))
    assert (lora["reason"], lora["reason_detail"]) == (
        "price move", "aws p5.48xlarge us-east-1 spot price fell to 0.400x (10.24 to 4.096 USD per hour)")  # as the pages write money
    # the previous pick's offer withdrawn: the runner-up of 1.10 (1.00 before) is the pick
    batch = found["best_offer_changed", "batch"]
    assert (batch["previous_offer_id"], batch["offer_id"]) == (P5_EU_SPOT, B200_SPOT)
    assert (batch["reason"], batch["reason_detail"]) == (
        "offer withdrawn", "aws p5.48xlarge eu-north-1 spot fp8 is no longer offered")
    assert batch["previous_pick_now_value"] is None
    # ranked by kWh now, by USD before: no value before in the new unit, so neither ratio nor difference
    pretrain = found["best_offer_changed", "pretrain"]
    assert (pretrain["reason"], pretrain["reason_detail"]) == (
        "objective changed", "the workload is now ranked by kwh_per_completed_run (was completed_run_usd)")
    assert (pretrain["unit"], pretrain["after_value"]) == ("kwh_per_completed_run", 1200.5)
    assert (pretrain["before_value"], pretrain["ratio"], pretrain["delta_value"]) == (None, None, None)
    # g6e.12xlarge was offered the day before but ranked for no workload: nothing else moved for it
    chat = found["best_offer_changed", "chat"]
    assert (chat["reason"], chat["reason_detail"]) == (
        "new candidate", "aws g6e.12xlarge us-east-1 on_demand fp8 was not a candidate in the previous run")
    assert (found["best_offer_changed", "gone"]["reason"], found["best_offer_changed", "arrived"]["reason"]) == (
        "no candidate", "new candidate")
    # stale the day before, landed now; stale on the first run that read it (nothing read the day before)
    assert found["source_fresh", "aws_spot"]["label"] == "aws_spot is fresh again"
    # the other changes each reason names (a page does not count them again): the fallen price, the withdrawn offer;
    # none for a new candidate, a changed objective or no candidate, nor on the other changes themselves
    assert {w: found["best_offer_changed", w]["reason_subjects"] for w in workloads} == {
        "lora": [P5_SPOT], "batch": [P5_EU_SPOT], "chat": None, "pretrain": None, "gone": None, "arrived": None}
    assert {c["reason_subjects"] for kind, c in found.items() if kind[0] != "best_offer_changed"} == {None}
    assert found["source_stale", "gcp_billing"]["label"] == "gcp_billing is stale (HTTP 503); no earlier data"


def picks_moved_to_inf2(figures: dict, catalog_digest: str = "c", sources: list = HAND_MADE_SOURCES,
                        models_digests: tuple = ("m", "m"), results: tuple = ()) -> dict:
    """marts.changes on the hand-made days with a workload for each key of `figures` ({workload: (inf2's figure on
    day 2, on day 3)}) whose pick moves from trn1.32xlarge (10.0 both days) to inf2.48xlarge (12.0, then 9.0), both
    ranked the day before at prices that did not move (21.50 and 12.98 USD per hour): its best-offer change."""
    ranks = tuple((w, offer, None, "usd_per_million_tokens", *values) for w in figures
                  for offer, values in ((TRN1_ON_DEMAND, (10.0, 10.0)), (INF2_ON_DEMAND, (12.0, 9.0))))
    by_day = {(w, INF2_ON_DEMAND, day): figure for w, days in figures.items() for day, figure in enumerate(days)}
    changes = hand_made_changes(catalog_digest, extra_ranks=ranks, figures=by_day, sources=sources,
                                models_digests=models_digests, results=results)
    found = {(c["change_kind"], c["subject"]): c for c in changes}
    assert len(found) == len(changes), "a change listed twice"
    assert {(found["best_offer_changed", w]["previous_offer_id"], found["best_offer_changed", w]["offer_id"])
            for w in figures} == {(TRN1_ON_DEMAND, INF2_ON_DEMAND)}
    return {w: found["best_offer_changed", w] for w in figures}


def test_a_catalog_edit_that_moves_a_figure_in_a_picks_label_is_no_new_result_a_row_measured_anew_is():
    """A pick's label quotes figures of the catalog (a family default, a peak) besides its results'. On a night whose
    catalogs changed, a label that moved is the edit's doing ('catalog edit'; it was 'new result', the labels being
    compared first), unless the figure's basis moved, or its benchmark source (an estimate's source is the catalog's:
    it moves with an edit). Without an edit, a label that moved is a new result (an own run measured anew in its row:
    no new row, no benchmark_added), a source that turned stale that night notwithstanding (it reads its last good
    rows: no label moves of it); a reference that moved alone (its file read from another folder, a row inserted
    above) is none."""
    own, moved_own = "catalogs/runs.csv: row 3", "/tmp/copy/catalogs/runs.csv: row 3"
    run_on = "own run of llama31-8b at fp8 on 1 x inferentia2: 9,100 tokens/s, run on {}"
    measured = {day: ("measured", own, run_on.format(day), "benchmark_runs") for day in ("2026-11-20", "2026-12-01")}
    calibrated = ("calibrated", "fitted from catalogs/runs.csv: row 2",
                  "calibrated MFU 0.450 (family default 0.45 x {})", "marts.estimate_backtest")
    roofline = ("estimated", "catalogs/accelerators.yaml: family_defaults.inferentia", "roofline, MFU {}")
    edited = picks_moved_to_inf2({
        "edited": (calibrated[:2] + (calibrated[2].format("1.17"), calibrated[3]),
                   ("calibrated", "fitted from /tmp/copy/catalogs/runs.csv: row 2", calibrated[2].format("1.20"),
                    calibrated[3])),
        "recalibrated": ((*roofline[:2], roofline[2].format("0.45"), "declared-assumption"),
                         calibrated[:2] + (calibrated[2].format("1.20"), calibrated[3])),
        "resourced": (("measured", "v4.1.json: [4]", "MLPerf: 9,000 tokens/s", "mlperf"), measured["2026-12-01"]),
        "rescaled": (("scaled", own, "scaled from " + run_on.format("2026-11-20"), "benchmark_runs"),
                     measured["2026-11-20"]),
        "redeclared": ((*roofline[:2], roofline[2].format("0.45"), "declared-assumption"),
                       (*roofline[:2], roofline[2].format("0.50"), "workloads.yaml")),
    }, catalog_digest="d")
    assert {w: (c["reason"], c["reason_subjects"]) for w, c in edited.items()} == {
        "edited": ("catalog edit", ["catalog"]), "recalibrated": ("new result", None),
        "resourced": ("new result", None), "rescaled": ("new result", None),
        "redeclared": ("catalog edit", ["catalog"])}
    assert edited["recalibrated"]["reason_detail"] == (
        "aws inf2.48xlarge us-east-1 on_demand is now calibrated: calibrated MFU 0.450 (family default 0.45 x 1.20)")
    unedited = picks_moved_to_inf2({
        "remeasured": (measured["2026-11-20"], measured["2026-12-01"]),
        "shifted": (measured["2026-11-20"], ("measured", moved_own, run_on.format("2026-11-20"), "benchmark_runs")),
    })
    assert (unedited["remeasured"]["reason"], unedited["remeasured"]["reason_detail"]) == (
        "new result", f"aws inf2.48xlarge us-east-1 on_demand is now measured: {run_on.format('2026-12-01')}")
    assert (unedited["shifted"]["reason"], unedited["shifted"]["reason_detail"]) == (
        "smaller moves", "prices or results moved by less than the threshold each")
    # aws_pricing (the inf2 and trn1 on-demand prices) turns stale on day 3: it explains a pick whose figure did not
    # move, not one whose label did
    stale = [(s, before, "stale" if s == "aws_pricing" else now) for s, before, now in HAND_MADE_SOURCES]
    on_stale_night = picks_moved_to_inf2({"remeasured": (measured["2026-11-20"], measured["2026-12-01"]),
                                          "unmoved": (measured["2026-11-20"], measured["2026-11-20"])}, sources=stale)
    assert {w: (c["reason"], c["reason_detail"], c["reason_subjects"]) for w, c in on_stale_night.items()} == {
        "remeasured": ("new result", unedited["remeasured"]["reason_detail"], None),
        "unmoved": ("stale source", "stale: aws_pricing", ["aws_pricing"])}


def test_a_pick_measured_by_a_result_new_tonight_names_that_result_matched_on_its_source_and_reference():
    """inf2.48xlarge becomes the pick (12.0 then 9.0 against trn1's 10.0) on a result new tonight: MLPerf's
    'v5.0.json: [7]'. The reason names that result, matched on its source and its reference as columns of
    marts.benchmark_results, not on the label's text: another new result of the same source (another reference), and
    one of another source with the same reference, each of a key that sorts first, are not named. Of two that match,
    the first key's label and key are named, both of that one result."""
    figures = {"remeasured": (("measured", "v4.1.json: [4]", "MLPerf: 9,000 tokens/s", "mlperf"),
                              ("measured", "v5.0.json: [7]", "MLPerf: 12,000 tokens/s", "mlperf"))}
    # (day, result_key, source_id, result_label, source_ref)
    results = ((0, "mlperf|old", "mlperf", "inf2 system (an older round)", "v4.1.json: [4]"),
               (1, "mlperf|old", "mlperf", "inf2 system (an older round)", "v4.1.json: [4]"),
               (1, "mlperf|new-1", "mlperf", "inf2 system, llama", "v5.0.json: [7]"),
               (1, "mlperf|new-2", "mlperf", "a later key of that result", "v5.0.json: [7]"),
               (1, "mlperf|new-0", "mlperf", "another system", "v5.0.json: [8]"),
               (1, "benchmark_runs|a", "benchmark_runs", "own run", "v5.0.json: [7]"))
    [moved] = picks_moved_to_inf2(figures, results=results).values()
    assert (moved["reason"], moved["reason_detail"], moved["reason_subjects"]) == (
        "new result", "a new benchmark result: inf2 system, llama (v5.0.json: [7])", ["mlperf|new-1"])


def test_a_label_that_a_release_words_otherwise_is_no_new_result():
    """A release that changed the SQL models (their digest, recorded with each run) may word a label otherwise with
    nothing else moved: on such a night a moved label is 'models changed', and a run that recorded no digest (one
    before this column) counts as another release. A figure whose basis moved is a new result all the same."""
    run_on = "own run of llama31-8b at fp8 on 1 x inferentia2: 9,100 tokens/s, run on 2026-11-20"
    fitted = ("calibrated", "fitted from runs.csv: row 2")
    figures = {"worded": ((*fitted, "efficiencies x 3.609", "marts.estimate_backtest"),
                          (*fitted, "efficiencies x 3.61", "marts.estimate_backtest")),
               "measured": (("scaled", "runs.csv: row 3", "scaled from " + run_on, "benchmark_runs"),
                            ("measured", "runs.csv: row 3", run_on, "benchmark_runs"))}
    for digests in (("m", "n"), (None, "n")):
        found = picks_moved_to_inf2(figures, models_digests=digests)
        assert (found["worded"]["reason"], found["worded"]["reason_detail"], found["worded"]["reason_subjects"]) == (
            "models changed", ("hweval's models changed since the previous run (a new release): aws inf2.48xlarge "
                               "us-east-1 on_demand is calibrated: efficiencies x 3.61"), None), digests
        assert found["measured"]["reason"] == "new result", digests
    # the same digest both nights: the moved label is a new result (a factor fitted anew)
    assert picks_moved_to_inf2(figures)["worded"]["reason"] == "new result"


def test_a_workload_new_to_the_run_leaves_no_change_out_of_its_pages_count():
    """Its best-offer line says only "the previous run had no candidate", no reason's detail: a catalog edit (or a stale
    source) the run also made is not named there, so it names no change for the page to leave out of its count."""
    found = {(c["change_kind"], c["subject"]): c for c in hand_made_changes(catalog_digest="d")}
    assert any(kind == "catalog_changed" for kind, _ in found)  # the edit is a change of its own, on the index
    arrived = found["best_offer_changed", "arrived"]
    assert (arrived["previous_offer_id"], arrived["reason_subjects"]) == (None, None)


def test_what_changed_on_hand_made_days_says_each_change_in_words():
    from flows import reports

    found = hand_made_changes()
    best = [c for c in found if c["change_kind"] == "best_offer_changed"]
    others = [c for c in found if c["change_kind"] != "best_offer_changed"]
    section = reports.MARKDOWN.get_template("_changes.md.j2").module.what_changed(
        best, others, HAND_MADE_AS_OF - dt.timedelta(days=1), None, True, reports.CHANGES_LISTED)
    # the values of the test above, by the usd filter: 3 decimals below 10, 2 from 10 up
    assert str(section).splitlines() == [
        "## What changed since 2026-12-01",
        "",
        "- **Best for arrived is aws g6e.12xlarge us-east-1 on_demand bf16; the previous run had no candidate.**",
        "- **Best for batch is now aws p6-b200.48xlarge us-east-1 spot fp8 (was aws p5.48xlarge eu-north-1 spot fp8): "
        "aws p5.48xlarge eu-north-1 spot fp8 is no longer offered; USD per million output tokens 1.100 instead of "
        "1.000 USD.**",
        "- **Best for chat is now aws g6e.12xlarge us-east-1 on_demand fp8 (was aws inf2.48xlarge us-east-1 on_demand "
        "fp8): aws g6e.12xlarge us-east-1 on_demand fp8 was not a candidate in the previous run; USD per million "
        "successful requests 45.00 instead of 50.00 USD (aws inf2.48xlarge us-east-1 on_demand fp8 would now cost "
        "50.00).**",
        "- **No candidate for gone in this run (was aws inf2.48xlarge us-east-1 on_demand bf16): no candidate can run "
        "it in this run.**",
        "- **Best for lora is now aws p5.48xlarge us-east-1 spot (was aws p5en.48xlarge us-east-1 spot): aws "
        "p5.48xlarge us-east-1 spot price fell to 0.400x (10.24 to 4.096 USD per hour); completed-run USD 2.048 "
        "instead of 4.140 USD (aws p5en.48xlarge us-east-1 spot would now cost 4.140).**",
        "- **Best for pretrain is now aws trn1.32xlarge us-east-1 on_demand (was aws p5.48xlarge us-east-1 "
        "on_demand): the workload is now ranked by kwh_per_completed_run (was completed_run_usd); kWh per completed "
        "run 1,200.50 kWh (aws p5.48xlarge us-east-1 on_demand would now come to 1,300.00).**",
        "",
        "Market changes:",
        "",
        "- Offers withdrawn: aws p5.48xlarge eu-north-1 spot (was 28.32 USD per hour).",
        "- Prices that moved: aws p5.48xlarge us-east-1 spot fell to 0.400x (10.24 to 4.096 USD per hour).",
        "- Sources that turned stale: gcp_billing is stale (HTTP 503); no earlier data.",
        "- Sources fresh again: aws_spot is fresh again.",
    ]


def test_a_thread_or_process_ended_since_it_was_listed_has_no_children():
    """stopped_run lists the run's threads, then reads each one's children: a thread that ended in between (CI caught
    one: FileNotFoundError on /proc/<pid>/task/<tid>/children) has none, and the listing goes on."""
    import subprocess

    assert proc_file(f"{os.getpid()}/task/999999999", "children") == ""
    assert proc_file(999999999, "cmdline") == ""
    child = subprocess.Popen(["sleep", "60"])
    try:
        assert child.pid in children(os.getpid())
    finally:
        child.kill()
        child.wait()
