"""The SQL marts on given rows, against expected rows worked out by hand."""

import datetime as dt
from contextlib import closing

import pytest
from builders import aws_page, aws_product, land, landed_training_row, mlperf_inference_result, module_warehouse

from flows import transform
from flows.sources import aws_pricing, aws_spot, mlperf_inference
from flows.warehouse import fetch_dicts

AS_OF = dt.date(2026, 11, 30)
RUN = "run-marts"






@pytest.fixture(scope="module")
def built_file(tmp_path_factory, empty_warehouse, catalog):
    path, con = module_warehouse(tmp_path_factory, empty_warehouse, "marts")
    with closing(con):
        prices = aws_pricing.rows_from_pages([("p", aws_page(
            aws_product("p5.48xlarge", "55.0400000000", sku="A000000000000001"),
            aws_product("p5en.48xlarge", "63.2960000000", sku="A000000000000002"),
            aws_product("p5.4xlarge", "6.8800000000", sku="A000000000000003", gpu="1"),
            aws_product("p5.48xlarge", "58.8928000000", region="eu-north-1", sku="A000000000000004"),
            aws_product("g6e.12xlarge", "10.4926400000", sku="A000000000000005", gpu="4"),
        ))])
        land_rows(con, catalog, "aws_pricing", prices)
        land_rows(con, catalog, "mlperf_training", [
            landed_training_row("Eos", "NVIDIA H100-SXM5-80GB", 8, 1, "llama2_70b_lora", 28.16),
            landed_training_row("Slower", "NVIDIA H100-SXM5-80GB", 8, 1, "llama2_70b_lora", 30.0),
            landed_training_row("H200", "NVIDIA H200-SXM5-141GB", 8, 1, "llama2_70b_lora", 24.69),
            landed_training_row("Eos_n64", "NVIDIA H100-SXM5-80GB", 512, 64, "gpt3", 50.73),
        ])
        land_rows(con, catalog, "mlperf_inference", mlperf_inference.result_rows([
            mlperf_inference_result("hpe", "NVIDIA H100-SXM-80GB", "llama2-70b-99", "Offline", 24528.3),
            mlperf_inference_result("hpe", "NVIDIA H100-SXM-80GB", "llama2-70b-99.9", "Offline", 24424.7),
            mlperf_inference_result("fujitsu", "NVIDIA L40S", "llama2-70b-99", "Offline", 3717.74),
            mlperf_inference_result("hpe", "NVIDIA H100-SXM-80GB", "llama2-70b-99", "Server", 23132.8),
        ], "s.json"))
        transform.build_models(con, RUN, AS_OF)
    return path


@pytest.fixture
def built(copy_of, built_file):
    """This test's own copy of the warehouse `built_file` landed and built once for the module."""
    return copy_of(built_file)


def rows(con, query, params=None):
    return fetch_dicts(con, query, params)


def test_offers_grain_and_chip_hour_price(built):
    offers = {r["offer_id"]: r for r in rows(built, "select * from marts.offers")}
    assert set(offers) == {
        "aws:us-east-1:p5.48xlarge:on_demand", "aws:us-east-1:p5en.48xlarge:on_demand",
        "aws:us-east-1:p5.4xlarge:on_demand", "aws:eu-north-1:p5.48xlarge:on_demand",
        "aws:us-east-1:g6e.12xlarge:on_demand",
    }
    # 63.296 / 8 = 7.912; 10.49264 / 4 = 2.62316
    assert offers["aws:us-east-1:p5en.48xlarge:on_demand"]["usd_per_chip_hour"] == pytest.approx(7.912)
    assert offers["aws:us-east-1:g6e.12xlarge:on_demand"]["usd_per_chip_hour"] == pytest.approx(2.62316)
    assert {r["run_id"] for r in offers.values()} == {RUN}


def test_training_costs_from_measured_time_to_train(built):
    got = {(r["workload_id"], r["offer_id"]): r for r in rows(
        built, "select * from marts.training_costs where basis = 'measured'")}
    assert set(got) == {
        ("llama2-70b-lora-finetune", "aws:us-east-1:p5.48xlarge:on_demand"),
        ("llama2-70b-lora-finetune", "aws:eu-north-1:p5.48xlarge:on_demand"),
        ("llama2-70b-lora-finetune", "aws:us-east-1:p5en.48xlarge:on_demand"),
        ("gpt3-175b-pretrain", "aws:us-east-1:p5.48xlarge:on_demand"),
        ("gpt3-175b-pretrain", "aws:eu-north-1:p5.48xlarge:on_demand"),
    }  # p5.4xlarge (1 chip) cannot hold the 8 chips per node the results were measured on
    lora_p5 = got[("llama2-70b-lora-finetune", "aws:us-east-1:p5.48xlarge:on_demand")]
    # the faster of two H100 results (28.16 < 30.0): 28.16 / 60 x 1 x 55.04 = 25.832107
    assert (lora_p5["time_to_train_minutes"], lora_p5["instances"]) == (28.16, 1)
    assert lora_p5["completed_run_usd"] == pytest.approx(25.832107, abs=1e-6)
    # 24.69 / 60 x 63.296 = 26.046304
    assert got[("llama2-70b-lora-finetune", "aws:us-east-1:p5en.48xlarge:on_demand")]["completed_run_usd"] == \
        pytest.approx(26.046304, abs=1e-6)
    gpt3 = got[("gpt3-175b-pretrain", "aws:us-east-1:p5.48xlarge:on_demand")]
    # 512 chips / 8 = 64 instances; 50.73 / 60 x 64 x 55.04 = 0.8455 x 3522.56 = 2978.32448
    assert (gpt3["chips"], gpt3["instances"]) == (512, 64)
    assert gpt3["completed_run_usd"] == pytest.approx(2978.32448, abs=1e-5)
    assert {r["basis"] for r in got.values()} == {"measured"}


def test_inference_costs_per_million_tokens(built):
    got = rows(built, "select * from marts.inference_costs where workload_id = 'llama2-70b-batch' "
                      "and basis = 'measured'")
    # L40S was measured on 8 per node; g6e.12xlarge has 4: no measured candidate. H100 on p5 (2 regions).
    assert sorted(r["offer_id"] for r in got) == ["aws:eu-north-1:p5.48xlarge:on_demand",
                                                  "aws:us-east-1:p5.48xlarge:on_demand"]
    p5 = next(r for r in got if r["region"] == "us-east-1")
    # best of -99 (24528.3) and -99.9 (24424.7): 24528.3 tokens/s; per chip 24528.3 / 8 = 3066.0375
    assert p5["replica_tokens_per_s"] == 24528.3
    assert p5["tokens_per_s_per_chip"] == pytest.approx(3066.0375)
    # 55.04 / (24528.3 x 3600) x 1e6 = 55.04 / 88,301,880 x 1e6 = 0.6233163
    assert p5["usd_per_million_tokens"] == pytest.approx(0.6233163, abs=1e-7)
    server = rows(built, "select * from marts.inference_costs where workload_id = 'llama2-70b-chat' "
                         "and region = 'us-east-1' and basis = 'measured'")
    # the chat workload takes the Server result: 55.04 / (23132.8 x 3600) x 1e6 = 55.04 / 83,278,080 x 1e6 = 0.6609182
    assert server[0]["usd_per_million_tokens"] == pytest.approx(0.6609182, abs=1e-7)


def test_an_offer_ranked_from_a_measurement_is_not_also_excluded_for_its_estimate(built):
    """Tighter objectives than the estimates meet, where a measurement still prices the offer: the chat service's TPOT
    SLO at 1 ms (70B bf16 streams its 140 GB of weights per step: several ms on 8 H100s), and a 1 h deadline for GPT-3
    (estimated 1.73 h on 512 H100s, "needs 2 h"; measured 50.73 min = 0.8455 h). An MLPerf Server result meets its
    scenario whatever the workload's SLO, and the measured run is within the deadline: both p5.48xlarge offers are
    ranked from their measurements and not listed as excluded for the estimates of the same offer (and precision)."""
    built.execute("update catalog.workloads set slo_tpot_ms = 1 where workload_id = 'llama2-70b-chat'")
    built.execute("update catalog.workloads set deadline_hours = 1 where workload_id = 'gpt3-175b-pretrain'")
    transform.build_models(built, RUN, AS_OF)
    p5 = ("aws:us-east-1:p5.48xlarge:on_demand", "aws:eu-north-1:p5.48xlarge:on_demand")
    ranked = {(r["workload_id"], r["offer_id"], r["basis"]) for r in rows(
        built, "select * from marts.rankings where workload_id in ('llama2-70b-chat', 'gpt3-175b-pretrain')")}
    assert ranked == {(w, o, "measured") for w in ("llama2-70b-chat", "gpt3-175b-pretrain") for o in p5}
    excluded = {(r["workload_id"], r["offer_id"], r["precision"]) for r in rows(
        built, "select * from marts.excluded_candidates where instance_type = 'p5.48xlarge' "
               "and workload_id in ('llama2-70b-chat', 'gpt3-175b-pretrain')")}
    # only the chat service's precisions no measurement covers: fp8 (TPOT) and int8 (not among its precisions)
    assert excluded == {("llama2-70b-chat", o, p) for o in p5 for p in ("fp8", "int8")}


def test_a_spot_offer_takes_the_lowest_latest_price_among_its_zones(fresh_db, catalog):
    def point(zone, price, hour):
        return {"AvailabilityZone": zone, "InstanceType": "p5.48xlarge", "ProductDescription": "Linux/UNIX",
                "SpotPrice": price, "Timestamp": f"2026-11-20T{hour:02d}:00:00Z"}

    page = {"SpotPriceHistory": [point("us-east-1a", "12.500000", 6), point("us-east-1a", "9.000000", 2),
                                 point("us-east-1b", "10.240000", 5), point("us-east-1c", "14.000000", 6)]}
    land_rows(fresh_db, catalog, "aws_spot", aws_spot.rows_from_pages([("spot page 1", page, None)]))
    transform.build_models(fresh_db, RUN, AS_OF)
    [offer] = rows(fresh_db, "select * from marts.offers where pricing_term = 'spot'")
    # latest a zone: 1a 12.50 (its 9.00 at 02:00 is older), 1b 10.24, 1c 14.00 -> the lowest, 10.24 USD/h in 1b;
    # 10.24 / 8 chips = 1.28 USD per chip-hour
    assert (offer["offer_id"], offer["usd_per_hour"], offer["usd_per_chip_hour"]) == (
        "aws:us-east-1:p5.48xlarge:spot", 10.24, pytest.approx(1.28))
    assert offer["price_note"] == ("lowest latest price of 3 zone(s): us-east-1b at 2026-11-20T05:00:00Z "
                                   "(highest 14.0)")


def _lora_on_spot(con, catalog, dearest_zone_usd):
    """llama2-70b-lora-finetune measured on p5 (two zones: 10.24 and `dearest_zone_usd` USD/h) and p5en (one zone,
    16.56), both spot in us-east-1."""
    def point(instance_type, zone, price):
        return {"AvailabilityZone": zone, "InstanceType": instance_type, "ProductDescription": "Linux/UNIX",
                "SpotPrice": price, "Timestamp": "2026-11-20T05:00:00Z"}

    page = {"SpotPriceHistory": [point("p5.48xlarge", "us-east-1a", "10.240000"),
                                 point("p5.48xlarge", "us-east-1b", f"{dearest_zone_usd:.6f}"),
                                 point("p5en.48xlarge", "us-east-1a", "16.560000")]}
    land_rows(con, catalog, "aws_spot", aws_spot.rows_from_pages([("spot page 1", page, None)]))
    land_rows(con, catalog, "mlperf_training", [
        landed_training_row("Eos", "NVIDIA H100-SXM5-80GB", 8, 1, "llama2_70b_lora", 28.16),
        landed_training_row("H200", "NVIDIA H200-SXM5-141GB", 8, 1, "llama2_70b_lora", 24.69),
    ])
    transform.build_models(con, RUN, AS_OF)


@pytest.mark.parametrize(("dearest_zone_usd", "outcome_at_dearest", "pick_leads"), [
    # 28.16 / 60 = 0.469333 h x 21.15 = 9.92640 x 1.000132785 (the rework) = 9.92772: above the runner-up's 6.81529
    (21.15, 9.92772, False),
    # 0.469333 x 12.00 = 5.63200 x 1.000132785 = 5.63275: still below it
    (12.0, 5.63275, True),
])
def test_a_decision_on_a_spot_price_gives_the_outcome_at_the_dearest_zone(fresh_db, catalog, dearest_zone_usd,
                                                                         outcome_at_dearest, pick_leads):
    _lora_on_spot(fresh_db, catalog, dearest_zone_usd)
    [p5] = rows(fresh_db, "select * from marts.rankings where offer_id = 'aws:us-east-1:p5.48xlarge:spot' "
                     "and workload_id = 'llama2-70b-lora-finetune'")
    assert (p5["price_zone"], p5["price_zones"], p5["highest_zone_usd_per_hour"]) == (
        "us-east-1a", 2, dearest_zone_usd)
    [d] = rows(fresh_db, "select * from marts.decisions where workload_id = 'llama2-70b-lora-finetune'")
    # one instance on spot: a run shorter than its hourly checkpoint interval redoes half of itself a reclaim, so p5
    # redoes 1 x 0.2 / 730 x (0.469333 h / 2 + 0.25 h) = 0.000132785 of the run: 0.469333 h x 10.24 = 4.80597 x
    # 1.000132785 = 4.80661 USD; the runner-up p5en (one zone, nothing to say): 24.69 / 60 = 0.4115 h, redoing
    # 0.2 / 730 x (0.20575 + 0.25) = 0.000124863: 0.4115 x 16.56 = 6.81444 x 1.000124863 = 6.81529
    assert (d["pick_offer_id"], d["runner_up_offer_id"]) == (
        "aws:us-east-1:p5.48xlarge:spot", "aws:us-east-1:p5en.48xlarge:spot")
    assert (d["pick_outcome_value"], d["runner_up_outcome_value"]) == (
        pytest.approx(4.80661, abs=1e-5), pytest.approx(6.81529, abs=1e-5))
    assert (d["pick_price_zone"], d["pick_price_zones"], d["pick_highest_zone_usd_per_hour"]) == (
        "us-east-1a", 2, dearest_zone_usd)
    assert d["pick_outcome_at_highest_zone"] == pytest.approx(outcome_at_dearest, abs=1e-5)
    assert d["pick_leads_at_highest_zone"] is pick_leads
    assert (d["runner_up_price_zones"], d["runner_up_outcome_at_highest_zone"]) == (1, None)


def test_a_pick_that_ties_the_runner_up_at_its_dearest_zone_does_not_lead_there(fresh_db, catalog):
    """A tie is no lead: p5 spot in us-east-1 at 10.24 and 14.00 USD/h (its dearest zone) against p5 spot in us-west-2
    at 14.00 in its one zone. Same chips, same measured run, same reclaim rate: priced at its dearest zone the pick
    costs exactly what the runner-up costs, so it does not lead there (outcomes compared to 12 digits)."""
    def point(zone, price):
        return {"AvailabilityZone": zone, "InstanceType": "p5.48xlarge", "ProductDescription": "Linux/UNIX",
                "SpotPrice": price, "Timestamp": "2026-11-20T05:00:00Z"}

    page = {"SpotPriceHistory": [point("us-east-1a", "10.240000"), point("us-east-1b", "14.000000"),
                                 point("us-west-2a", "14.000000")]}
    land_rows(fresh_db, catalog, "aws_spot", aws_spot.rows_from_pages([("spot page 1", page, None)]))
    land_rows(fresh_db, catalog, "mlperf_training", [
        landed_training_row("Eos", "NVIDIA H100-SXM5-80GB", 8, 1, "llama2_70b_lora", 28.16)])
    transform.build_models(fresh_db, RUN, AS_OF)
    [d] = rows(fresh_db, "select * from marts.decisions where workload_id = 'llama2-70b-lora-finetune'")
    assert (d["pick_offer_id"], d["runner_up_offer_id"]) == (
        "aws:us-east-1:p5.48xlarge:spot", "aws:us-west-2:p5.48xlarge:spot")
    # 28.16 / 60 = 0.469333 h x 14.00 = 6.57067 x 1.000132785 (the rework, as above) = 6.57154, both ways
    assert d["pick_outcome_at_highest_zone"] == pytest.approx(6.57154, abs=1e-5)
    assert d["runner_up_outcome_value"] == pytest.approx(6.57154, abs=1e-5)
    assert d["pick_leads_at_highest_zone"] is False


def test_a_spot_training_pick_carries_its_reclaims_its_rework_and_the_rate_they_rest_on(fresh_db, catalog):
    _lora_on_spot(fresh_db, catalog, 21.15)
    [p5] = rows(fresh_db, "select * from marts.rankings where offer_id = 'aws:us-east-1:p5.48xlarge:spot' "
                          "and workload_id = 'llama2-70b-lora-finetune'")
    # one instance, 0.2 reclaims an instance-month (AWS's Spot Instance Advisor), checkpoints every hour, 0.25 h to
    # restart; the 28.16-minute run writes no checkpoint before it ends, so a reclaim redoes half of it:
    # 1 x 0.2 / 730 x (0.469333 / 2 + 0.25) = 0.000132785 of the run redone; the run's wall clock with it:
    # 28.16 x 1.000132785 = 28.163739 min; reclaims over the run: 1 x 0.2 / 730 x 28.16 / 60 h = 0.000128584
    assert p5["interruption_overhead"] == pytest.approx(0.000132785, abs=1e-9)
    assert p5["time_to_train_with_rework_minutes"] == pytest.approx(28.163739, abs=1e-6)
    assert p5["time_to_train_minutes"] == 28.16
    assert p5["expected_interruptions"] == pytest.approx(0.000128584, abs=1e-9)
    assert (p5["reclaims_per_instance_month"], p5["reclaim_rate_source"], p5["reclaim_rate_note"]) == (
        0.2, "aws-spot-instance-advisor", "lower edge of the advisor's top band, >20%")
    [d] = rows(fresh_db, "select * from marts.decisions where workload_id = 'llama2-70b-lora-finetune'")
    assert (d["pick_interruption_overhead"], d["pick_expected_interruptions"], d["pick_reclaim_rate_source"]) == (
        pytest.approx(0.000132785, abs=1e-9), pytest.approx(0.000128584, abs=1e-9), "aws-spot-instance-advisor")
    assert (d["pick_spare_deployments"], d["pick_reclaim_loss"]) == (None, None)


def test_rankings_flag_a_reversal_against_usd_per_chip_hour(built):
    ranking = {r["offer_id"]: r for r in rows(
        built, "select * from marts.rankings where workload_id = 'llama2-70b-lora-finetune'")}
    # outcome: p5 us-east-1 25.83 < p5en 26.05 < p5 eu-north-1 (28.16 / 60 x 58.8928 = 0.469333 x 58.8928 = 27.640354) ...
    assert {k: v["outcome_rank"] for k, v in ranking.items()} == {
        "aws:us-east-1:p5.48xlarge:on_demand": 1,
        "aws:us-east-1:p5en.48xlarge:on_demand": 2,
        "aws:eu-north-1:p5.48xlarge:on_demand": 3,
    }
    # ... while per chip-hour p5en (7.912) is dearer than eu-north-1 p5 (58.8928 / 8 = 7.3616)
    assert {k: v["chip_hour_rank"] for k, v in ranking.items()} == {
        "aws:us-east-1:p5.48xlarge:on_demand": 1,
        "aws:eu-north-1:p5.48xlarge:on_demand": 2,
        "aws:us-east-1:p5en.48xlarge:on_demand": 3,
    }
    assert {k: (v["reversals"], v["is_reversal"]) for k, v in ranking.items()} == {
        "aws:us-east-1:p5.48xlarge:on_demand": (0, False),
        "aws:us-east-1:p5en.48xlarge:on_demand": (1, True),
        "aws:eu-north-1:p5.48xlarge:on_demand": (0, False),
    }
    assert ranking["aws:eu-north-1:p5.48xlarge:on_demand"]["outcome_value"] == pytest.approx(27.640354, abs=1e-6)


def _lora_tie(con, catalog, *more_products) -> dict[str, dict]:
    """The llama2-70b-lora-finetune ranking, by offer, of the tie below: H100 p5.48xlarge measured at 24.00 min for
    20.02 USD/h, H200 p5en.48xlarge at 20.02 min for 24.00 USD/h (both 8.008 USD a run), and `more_products` priced
    beside them; landed and built."""
    land_rows(con, catalog, "aws_pricing", aws_pricing.rows_from_pages([("p", aws_page(
        aws_product("p5.48xlarge", "20.0200000000", sku="A000000000000001"),
        aws_product("p5en.48xlarge", "24.0000000000", sku="A000000000000002"),
        *more_products,
    ))]))
    land_rows(con, catalog, "mlperf_training", [
        landed_training_row("H100", "NVIDIA H100-SXM5-80GB", 8, 1, "llama2_70b_lora", 24.0),
        landed_training_row("H200", "NVIDIA H200-SXM5-141GB", 8, 1, "llama2_70b_lora", 20.02),
    ])
    transform.build_models(con, RUN, AS_OF)
    return {r["offer_id"]: r for r in rows(
        con, "select * from marts.rankings where workload_id = 'llama2-70b-lora-finetune'")}


def test_costs_equal_but_for_the_last_bits_tie_on_rank_pick_and_reversals(fresh_db, catalog):
    """Two candidates whose costs are one figure computed in two orders: H100 p5.48xlarge measured at 24.00 min for
    20.02 USD/h, H200 p5en.48xlarge at 20.02 min for 24.00 USD/h. By hand both cost 24 x 20.02 / 60 = 480.48 / 60 =
    8.008 USD; as doubles (t / 60) x p is 24.0 / 60 x 20.02 = 8.008000000000001 and 20.02 / 60 x 24.0 = 8.008. Equal to
    12 significant digits, they share rank 1; the pick is the cheaper chip-hour, p5 (20.02 / 8 = 2.5025 USD against
    24.00 / 8 = 3.00), and neither beats the other (the last bit once ranked p5en first and counted it a reversal)."""
    assert 24.0 / 60 * 20.02 == 8.008000000000001 and 20.02 / 60 * 24.0 == 8.008  # the doubles the SQL computes
    ranking = _lora_tie(fresh_db, catalog)
    p5, p5en = ranking["aws:us-east-1:p5.48xlarge:on_demand"], ranking["aws:us-east-1:p5en.48xlarge:on_demand"]
    assert (p5["outcome_value"], p5en["outcome_value"]) == (8.008000000000001, 8.008)
    assert (p5["outcome_rank"], p5["is_pick"], p5["reversals"]) == (1, True, 0)
    assert (p5en["outcome_rank"], p5en["is_pick"], p5en["reversals"]) == (1, False, 0)
    [d] = rows(fresh_db, "select * from marts.decisions where workload_id = 'llama2-70b-lora-finetune'")
    assert (d["pick_offer_id"], d["runner_up_offer_id"]) == (
        "aws:us-east-1:p5.48xlarge:on_demand", "aws:us-east-1:p5en.48xlarge:on_demand")
    # the cheapest chip-hour is the pick itself: nothing more to pay
    assert (d["chip_hour_pick_offer_id"], d["chip_hour_pick_extra_usd"]) == ("aws:us-east-1:p5.48xlarge:on_demand", 0)


def test_costs_equal_but_for_the_last_bits_tie_in_the_cpu_baseline_pick_and_the_reversal_pairs(fresh_db, catalog):
    """The tie above, where the CPU baseline's row names the pick and where the pages pair each reversal with the
    candidate it beats. p5 (20.02 / 8 = 2.5025 USD a chip-hour) and p5en (24.00 / 8 = 3.00) cost 8.008 USD each,
    p5 in the last bit more (8.008000000000001); p5 in eu-north-1 (22.00 / 8 = 2.75), at the H100's 24.0 min, costs
    24 / 60 x 22.00 = 8.80 USD. The pick is p5 in us-east-1, as marts.decisions has it. p5en is dearer per chip-hour
    than eu-north-1's p5 and cheaper per run: a reversal, paired with it, the cheapest per chip-hour of those it beats;
    it does not beat us-east-1's p5 (a tie), though that one's last bit once made it the pair's worse (the cheaper
    chip-hour, 2.5025 < 2.75). us-east-1's p5 is the cheapest chip-hour: it beats nothing dearer."""
    from flows.reports import reversal_pairs

    east, north, en = ("aws:us-east-1:p5.48xlarge:on_demand", "aws:eu-north-1:p5.48xlarge:on_demand",
                       "aws:us-east-1:p5en.48xlarge:on_demand")
    ranking = _lora_tie(fresh_db, catalog, aws_product("p5.48xlarge", "22.0000000000", region="eu-north-1",
                                                       sku="A000000000000003"))
    assert {k: round(v["outcome_value"], 9) for k, v in ranking.items()} == {east: 8.008, en: 8.008, north: 8.8}
    assert {k: v["is_reversal"] for k, v in ranking.items()} == {east: False, en: True, north: False}
    [baseline] = rows(fresh_db, "select * from marts.cpu_baselines where workload_id = 'llama2-70b-lora-finetune'")
    assert baseline["best_candidate_id"] == ranking[east]["candidate_id"]
    [pair] = reversal_pairs(fresh_db, AS_OF)["llama2-70b-lora-finetune"]
    assert (pair["better"]["offer_id"], pair["worse"]["offer_id"]) == (en, north)
    assert pair["hour_ratio"] == pytest.approx(3.00 / 2.75) and pair["outcome_ratio"] == pytest.approx(8.008 / 8.8)


def test_rebuilding_the_same_as_of_replaces_mart_rows(built):
    before = built.execute("select count(*) from marts.rankings").fetchall()[0][0]
    transform.build_models(built, RUN, AS_OF)
    assert built.execute("select count(*) from marts.rankings").fetchall()[0][0] == before


def test_sql_invariants_pass_on_clean_rows(built):
    from flows.paths import SQL_DIR

    # each sql/tests query returns its offending rows: none on these rows (read at the run's as_of, as the build sets
    # it: unset, assert_costs_positive reads no row and could not fail) ...
    built.execute("set variable as_of = ?", [AS_OF.isoformat()])
    offending = {p.name: built.sql(p.read_text()).fetchall() for p in sorted((SQL_DIR / "tests").glob("*.sql"))}
    assert {"assert_costs_positive.sql", "assert_gcp_components_unambiguous.sql", "assert_offers_unique.sql",
            "assert_offer_terms_at_least_a_month.sql"} <= set(offending)
    assert offending == dict.fromkeys(offending, [])
    assert transform.run_sql_tests(built) is None
    # ... which are there to check: the 5 offers landed, each priced once, and rankings of that date
    assert built.execute("select count(*), count(distinct offer_id) from intermediate.int_offers_priced").fetchall() \
        == [(5, 5)]
    assert built.execute("select count(*) > 0 from marts.rankings where as_of = ?", [AS_OF]).fetchone() == (True,)


def test_sql_invariant_reports_a_duplicate_offer(built):
    built.execute("insert into intermediate.int_offers_priced select * from intermediate.int_offers_priced limit 1")
    with pytest.raises(transform.ModelError, match=r"sql/tests/assert_offers_unique.sql: 1 offending row"):
        transform.run_sql_tests(built)


@pytest.mark.parametrize("value", ["'inf'::double", "'nan'::double"])
def test_sql_invariant_refuses_a_cost_that_is_not_finite(built, value):
    # a success rate of 0 once priced a request at monthly USD / 0 = inf: neither <= 0 nor null, so it was ranked and
    # published as "| inf |"; NaN compares as neither too
    built.execute(f"update marts.rankings set outcome_value = {value} "
                  "where candidate_id = (select min(candidate_id) from marts.rankings)")
    built.execute("set variable as_of = ?", [AS_OF.isoformat()])  # as the build sets it, which the test reads
    shown = {"'inf'::double": "inf", "'nan'::double": "nan"}[value]
    with pytest.raises(transform.ModelError, match=rf"^sql/tests/assert_costs_positive.sql: 1 offending row\(s\), "
                                                   rf"e.g. \('[^']+', '[a-z_]+', {shown}, [0-9.]+\)\. Fails when a "
                                                   r"candidate's cost or price is not a positive finite number"):
        transform.run_sql_tests(built)


def test_sql_invariant_reports_a_term_shorter_than_a_month(built):
    # a term of 0 months amortises its upfront fee over 0 hours: an inf price (AWS's LeaseContractLength "0yr" did)
    built.execute("update intermediate.int_offers_priced set term_months = 0 "
                  "where offer_id = (select min(offer_id) from intermediate.int_offers_priced)")
    with pytest.raises(transform.ModelError, match=r"sql/tests/assert_offer_terms_at_least_a_month.sql: "
                                                    r"1 offending row\(s\), e\.g\. \('aws:"):
        transform.run_sql_tests(built)


def test_a_column_added_to_a_mart_model_is_added_to_the_existing_table(built, tmp_path):
    sql_dir = tmp_path / "sql"
    import shutil

    from flows.paths import SQL_DIR

    shutil.copytree(SQL_DIR, sql_dir)
    offers = sql_dir / "marts" / "offers.sql"
    text = offers.read_text()
    assert "        price_unverified\n    from offers" in text  # the model's last column, which the new one follows
    offers.write_text(text.replace("        price_unverified\n", "        price_unverified,\n        'new' as added_column\n"))
    transform.build_models(built, RUN, AS_OF + dt.timedelta(days=1), sql_dir=sql_dir)
    by_date = built.execute("select as_of, count(*), count(added_column) from marts.offers group by 1 order by 1").fetchall()
    # the earlier date keeps its 5 rows with the new column null; the new date has it filled
    assert by_date == [(AS_OF, 5, 0), (AS_OF + dt.timedelta(days=1), 5, 5)]


def test_a_warehouse_from_an_older_version_gains_the_new_columns(tmp_path):
    from flows import warehouse

    con = warehouse.connect(tmp_path / "old.duckdb")
    con.execute("create schema ops")
    con.execute("create table ops.quarantine (run_id varchar, as_of date, source_id varchar, landed_table varchar, "
                "row_no integer, source_ref varchar, expectation varchar, column_name varchar, "
                "unexpected_value varchar, row_json varchar)")
    con.execute("insert into ops.quarantine (run_id, expectation) values ('old-run', 'expect_x')")
    warehouse.apply_ddl(con)
    columns = [r[0] for r in con.execute("select column_name from information_schema.columns where "
                                         "table_schema = 'ops' and table_name = 'quarantine'").fetchall()]
    assert {"expectation_type", "reason"} <= set(columns)
    assert con.execute("select run_id, expectation, reason from ops.quarantine").fetchall() == [
        ("old-run", "expect_x", None)]
    con.close()


def land_rows(con, catalog, kind, rows):
    return land(con, catalog, kind, rows, RUN, AS_OF)
