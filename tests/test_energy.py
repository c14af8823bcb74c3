"""Energy per outcome and perf per watt (issue 17): measured power from MLPerf, TDP where nothing is measured, an
on-prem system's own power at its own price, and what reclaimable capacity costs a service; worked by hand."""

import datetime as dt

import pytest
from builders import aws_page, aws_product, land, landed_training_row, mlperf_inference_result
from conftest import CATALOGS

from flows import transform, warehouse
from flows.sources import aws_pricing, aws_spot, mlperf_inference, price_sheet
from flows.warehouse import fetch_dicts

AS_OF = dt.date(2026, 11, 30)
RUN = "run-energy"
P5 = aws_product("p5.48xlarge", "55.0400000000", sku="A000000000000001")
P5EN = aws_product("p5en.48xlarge", "63.2960000000", sku="A000000000000002")


def prices(con, catalog, *products):
    land(con, catalog, "aws_pricing", aws_pricing.rows_from_pages([("p", aws_page(*products))]), RUN, AS_OF)


def costs(con, where):
    return fetch_dicts(con, f"select * from marts.inference_costs where {where}")


@pytest.fixture(scope="module")
def built(tmp_path_factory, catalog):
    """H100, H200 and Trainium offers and one MLPerf power result of the H200, built once (read, never changed)."""
    con = warehouse.connect(tmp_path_factory.mktemp("energy") / "built.duckdb")
    warehouse.apply_ddl(con)
    warehouse.load_catalog_tables(con, catalog)
    prices(con, catalog, P5, P5EN, aws_product("trn1.32xlarge", "21.5000000000", sku="A000000000000003", gpu="0"))
    # NVIDIA's v4.1 H200 MaxQ result: 25,262.1 tokens/s at 6,152.98 W for the whole 8-GPU system
    power_row = mlperf_inference_result("maxq", "NVIDIA H200-SXM-141GB", "llama2-70b-99", "Offline", 25262.1) | {
        "has_power": True, "Power_Result": 6152.9844351733, "Power_Units": "Watts"}
    land(con, catalog, "mlperf_inference", mlperf_inference.result_rows([power_row], "p.json"), RUN, AS_OF)
    transform.build_models(con, RUN, AS_OF)
    yield con
    con.close()


def test_energy_per_million_tokens_from_an_mlperf_power_result(built):
    [row] = costs(built, "workload_id = 'llama2-70b-batch' and instance_type = 'p5en.48xlarge' "
                         "and precision_class = 'bf16'")
    # 6,152.98 W / 25,262.1 tokens/s = 0.243566 J a token; x 1e6 / 3.6e6 J a kWh = 0.0676572 kWh per million tokens at
    # the wall; x the GPU family's PUE 1.2 = 0.0811886. Perf per watt: 25,262.1 / 6,152.98 = 4.10566 tokens/s a watt
    assert row["energy_basis"] == "measured"
    assert row["kwh_per_million_tokens"] == pytest.approx(0.0811886, abs=1e-7)
    assert row["tokens_per_s_per_watt"] == pytest.approx(4.10566, abs=1e-5)
    assert row["energy_label"] == ("MLPerf Inference v4.1 llama2-70b-99 Offline power: Test Test system (8x NVIDIA "
                                   "H200-SXM-141GB), 6,153 W at 25,262.1 tokens/s, x PUE 1.2")
    # on a cloud the energy is in the hourly price: no separate energy cost
    assert row["energy_usd_per_million_tokens"] is None


def test_energy_from_tdp_where_nothing_is_measured(built):
    [row] = costs(built, "workload_id = 'llama2-70b-batch' and instance_type = 'p5.48xlarge' and precision = 'bf16'")
    # the TP 4 replica of tests/test_communication.py: 2,775.74 tokens/s on 4 H100 at 700 W x 0.7 (declared load):
    # 4 x 490 W / 2,775.74 = 0.706119 J a token; / 3.6 x 1.2 = 0.235373 kWh per million tokens; 1 / 0.706119 = 1.41619
    assert (row["replica_chips"], row["energy_basis"]) == (4, "tdp")
    assert row["kwh_per_million_tokens"] == pytest.approx(0.235373, abs=1e-6)
    assert row["tokens_per_s_per_watt"] == pytest.approx(1.41619, abs=1e-5)
    assert row["energy_label"] == "TDP 700 W x 0.7 load (declared) x 4 chips x PUE 1.2"
    # a replica of one chip (the 8B model fits one H100): "1 chip", as chips_text writes a count
    labels = {r["energy_label"] for r in costs(built, "workload_id = 'llama31-8b-chat-small' and "
                                                      "instance_type = 'p5.48xlarge' and replica_chips = 1")}
    assert labels == {"TDP 700 W x 0.7 load (declared) x 1 chip x PUE 1.2"}


def test_a_chip_without_published_power_says_so(built):
    rows = costs(built, "workload_id = 'llama2-70b-batch' and instance_type = 'trn1.32xlarge'")
    assert rows and all(r["energy_basis"] is None and r["kwh_per_million_tokens"] is None for r in rows)
    assert {r["energy_label"] for r in rows} == {"no published power for trainium1: no energy figure"}


def test_an_on_prem_system_prices_its_energy_at_its_own_rate(fresh_db, catalog):
    sheet = [r for r in price_sheet.read_file(CATALOGS / "price_sheet.example.yaml", "price_sheet.example.yaml")
             if r["entry_kind"] == "on_prem"]
    land(fresh_db, catalog, "price_sheet", sheet, RUN, AS_OF)
    land(fresh_db, catalog, "mlperf_training", [
        landed_training_row("A", "NVIDIA H100-SXM5-80GB", 8, 1, "llama2_70b_lora", 60.0)], RUN, AS_OF)
    transform.build_models(fresh_db, RUN, AS_OF)
    [row] = fetch_dicts(fresh_db, "select * from marts.training_costs where workload_id = 'llama2-70b-lora-finetune'")
    # dgx-h100-01: 10.2 kW x PUE 1.35 for the 1 h run on its 1 instance = 13.77 kWh, at 0.11 USD/kWh = 1.5147 USD of
    # the run's 13.3868 USD (320,000 / (48 x 730) + 1.5147 + 2,000 / 730; tests/test_price_sheet.py)
    assert row["pricing_term"] == "owned"
    assert row["energy_kwh"] == pytest.approx(13.77)
    assert row["energy_usd"] == pytest.approx(1.5147)
    assert row["completed_run_usd"] == pytest.approx(13.386846, abs=1e-6)
    assert row["energy_label"] == "declared site power: 10.2 kW an instance x PUE 1.35 at 0.11 USD/kWh"


def test_an_on_prem_system_is_ranked_by_emissions_at_its_sites_grid(catalog_copy, fresh_db):
    from flows.catalog import load_catalog
    from flows.warehouse import load_catalog_tables

    # the offers name an on-prem system's cloud on_prem and its site the region: the catalog takes that spelling
    path = catalog_copy / "instances.yaml"
    path.write_text(path.read_text().replace("grid_intensity:\n", "grid_intensity:\n  - {cloud: on_prem, region: "
                                             "home-dc, gco2e_per_kwh: 400, source: declared-assumption}\n", 1))
    copy = load_catalog(catalog_copy)
    load_catalog_tables(fresh_db, copy)
    sheet = [r for r in price_sheet.read_file(CATALOGS / "price_sheet.example.yaml", "price_sheet.example.yaml")
             if r["entry_kind"] == "on_prem"]
    land(fresh_db, copy, "price_sheet", sheet, RUN, AS_OF)
    land(fresh_db, copy, "mlperf_training", [
        landed_training_row("A", "NVIDIA H100-SXM5-80GB", 8, 1, "llama2_70b_lora", 60.0)], RUN, AS_OF)
    fresh_db.execute("update catalog.workloads set objective = 'emissions' where workload_id = 'llama2-70b-lora-finetune'")
    transform.build_models(fresh_db, RUN, AS_OF)
    [row] = fetch_dicts(fresh_db, "select * from marts.training_costs where workload_id = 'llama2-70b-lora-finetune'")
    # 13.77 kWh (above) x 400 g / 1000 = 5.508 kg CO2e a completed run
    assert (row["cloud"], row["region"]) == ("on_prem", "home-dc")
    assert row["kgco2e"] == pytest.approx(5.508)


def test_a_service_on_spot_carries_a_spare_unit_and_offline_work_loses_its_restarts(fresh_db, catalog):
    prices(fresh_db, catalog, aws_product("p5.4xlarge", "6.8800000000", sku="A000000000000001", gpu="1"))
    land(fresh_db, catalog, "aws_spot", aws_spot.rows_from_pages([("s", {"SpotPriceHistory": [{
        "AvailabilityZone": "us-east-1a", "InstanceType": "p5.4xlarge", "ProductDescription": "Linux/UNIX",
        "SpotPrice": "2.000000", "Timestamp": "2026-11-29T12:00:00+00:00"}]}, None)]), RUN, AS_OF)
    # the small chat service accepts spot here (its default leaves reclaimable capacity out)
    fresh_db.execute("update catalog.workloads set pricing_terms = list_append(pricing_terms, 'spot') "
                     "where workload_id = 'llama31-8b-chat-small'")
    transform.build_models(fresh_db, RUN, AS_OF)
    by_term = {r["pricing_term"]: r for r in costs(
        fresh_db, "workload_id = 'llama31-8b-chat-small' and precision = 'bf16'")}
    # the peak (2 x 3 = 6 requests/s) fits one p5.4xlarge (18.23 requests/s, tests/test_cost_model.py); on spot a
    # second one stands by: 2 units, 2 x 2.00 x 730 = 2,920 USD a month, utilization 2 / (2 x 18.23) = 5.49%
    on_demand, spot = by_term["on_demand"], by_term["spot"]
    assert (on_demand["deployments"], on_demand["spare_deployments"]) == (1, None)
    assert (spot["deployments"], spot["spare_deployments"], spot["instances"]) == (2, 1, 2)
    assert spot["monthly_usd"] == pytest.approx(2920.0)
    assert spot["utilization"] == pytest.approx(on_demand["utilization"] / 2)
    assert spot["interruption_basis"] == "reclaimable: one spare deployment unit keeps the peak's capacity through a reclaim"
    # offline on spot: 1 instance x 0.2 reclaims a month / 730 x 0.25 h restart = 6.84932e-5 of the hours lost
    [batch] = costs(fresh_db, "workload_id = 'llama2-70b-batch' and pricing_term = 'spot' and precision = 'fp8'")
    assert batch["reclaim_loss"] == pytest.approx(6.849315e-5, abs=1e-11)
    full = 2.0 / (batch["deployment_tokens_per_s"] * 3600) * 1e6
    assert batch["usd_per_million_tokens"] == pytest.approx(full / (1 - 6.849315e-5), rel=1e-12)


def test_a_workload_ranked_by_energy(fresh_db, catalog):
    from flows.reports import MARKDOWN

    prices(fresh_db, catalog, P5, aws_product("trn1.32xlarge", "21.5000000000", sku="A000000000000003", gpu="0"))
    land(fresh_db, catalog, "mlperf_training", [
        landed_training_row("A", "NVIDIA H100-SXM5-80GB", 8, 1, "llama2_70b_lora", 60.0)], RUN, AS_OF)
    fresh_db.execute("update catalog.workloads set objective = 'energy' "
                     "where workload_id in ('llama2-70b-lora-finetune', 'llama2-70b-batch')")
    transform.build_models(fresh_db, RUN, AS_OF)
    [lora] = fetch_dicts(fresh_db, "select * from marts.rankings where workload_id = 'llama2-70b-lora-finetune'")
    # 1 h on 8 H100 at 700 W x PUE 1.2 = 6.72 kWh a completed run
    assert (lora["outcome_metric"], lora["outcome_value"]) == ("kwh_per_completed_run", pytest.approx(6.72))
    ranked = fetch_dicts(fresh_db, "select * from marts.rankings where workload_id = 'llama2-70b-batch' "
                                   "order by outcome_rank")
    # Trainium publishes no power: nothing to rank it by, so it is excluded with that reason, not ranked last
    assert {r["accelerator_id"] for r in ranked} == {"h100-sxm-80gb"}
    excluded = {r["exclusion_reason"] for r in fetch_dicts(
        fresh_db, "select exclusion_reason from marts.excluded_candidates where workload_id = 'llama2-70b-batch' "
                  "and instance_type = 'trn1.32xlarge'")}
    assert "no published power for trainium1: the workload is ranked by energy" in excluded
    # the bf16 TP 4 replica: 0.235373 kWh per million output tokens (test above); fp8 draws less per token
    by_precision = {r["precision"]: r for r in ranked}
    assert by_precision["bf16"]["outcome_metric"] == "kwh_per_million_tokens"
    assert by_precision["bf16"]["outcome_value"] == pytest.approx(0.235373, abs=1e-6)
    assert [r["outcome_value"] for r in ranked] == sorted(r["outcome_value"] for r in ranked)
    # the decision says kWh, not USD (with, as for any pick, where its price comes from and its benchmark's date)
    [decision] = fetch_dicts(fresh_db, "select * from marts.decisions where workload_id = 'llama2-70b-lora-finetune'")
    sentence = str(MARKDOWN.get_template("_sentences.j2").module.decision(decision))
    assert ": 6.720 kWh per completed run (price from aws_pricing as of " in sentence
    assert "USD per completed run" not in sentence


def test_a_workload_ranked_by_emissions(fresh_db, catalog):
    prices(fresh_db, catalog, P5, aws_product("p5.48xlarge", "60.0000000000", sku="A000000000000009",
                                              region="us-west-2"))
    land(fresh_db, catalog, "mlperf_training", [
        landed_training_row("A", "NVIDIA H100-SXM5-80GB", 8, 1, "llama2_70b_lora", 60.0)], RUN, AS_OF)
    fresh_db.execute("update catalog.workloads set objective = 'emissions' "
                     "where workload_id = 'llama2-70b-lora-finetune'")
    # a grid intensity for us-east-1 only (the snapshot's come from Google, for its own regions)
    fresh_db.execute("insert into catalog.grid_intensity values ('aws', 'us-east-1', 400, 'test')")
    transform.build_models(fresh_db, RUN, AS_OF)
    [row] = fetch_dicts(fresh_db, "select * from marts.rankings where workload_id = 'llama2-70b-lora-finetune'")
    # 6.72 kWh a completed run (1 h x 8 x 0.7 kW x PUE 1.2) x 400 g/kWh = 2,688 g = 2.688 kg CO2e
    assert (row["region"], row["outcome_metric"]) == ("us-east-1", "kgco2e_per_completed_run")
    assert row["outcome_value"] == pytest.approx(2.688)
    [excluded] = fetch_dicts(fresh_db, "select * from marts.excluded_candidates "
                                       "where workload_id = 'llama2-70b-lora-finetune'")
    assert (excluded["region"], excluded["exclusion_reason"]) == (
        "us-west-2", "no grid intensity declared for aws us-west-2 (instances.yaml grid_intensity): the workload is "
                     "ranked by emissions")


def test_the_snapshot_grid_intensities_are_googles_2024_figures(catalog):
    # GoogleCloudPlatform/region-carbon-info data/yearly/2024.csv: us-central1 (Iowa) 412.72, us-central2 (Oklahoma)
    # 372.23 gCO2eq/kWh
    assert {(g.cloud, g.region): g.gco2e_per_kwh for g in catalog.instances.grid_intensity} == {
        ("gcp", "us-central1"): 412.72, ("gcp", "us-central2"): 372.23}


def test_a_services_energy_per_outcome_is_per_million_successful_requests(built):
    rows = costs(built, "workload_id = 'llama2-70b-chat' and instance_type = 'p5.48xlarge'")
    assert rows
    for row in rows:
        # a request is 300 output tokens and 99% of requests succeed: a million successful requests are
        # 300 / 0.99 = 303.03 million output tokens' worth of work (idle capacity not counted)
        assert row["kwh_per_million_successful_requests"] == pytest.approx(
            row["kwh_per_million_tokens"] * 300 / 0.99, rel=1e-12)
