"""CPU baseline offers on every cloud: GCP C4 composed from its core and RAM SKUs, Azure D-series sizes on demand
and spot, and the workload pages' CPU baseline choosing among the three clouds."""

import datetime as dt

import pytest
from builders import discard, open_copy

from flows import warehouse
from flows.sources import gcp_billing, gcp_machine_types

AS_OF = dt.date(2026, 11, 30)


@pytest.fixture(scope="module")
def snapshot_db(tmp_path_factory, snapshot_warehouse):
    """Every source of the embedded snapshot landed (each one: gcp_billing and azure_retail among them) and every
    model built, without Prefect: the module's copy of conftest's `snapshot_warehouse`."""
    con = open_copy(snapshot_warehouse, tmp_path_factory.mktemp("cpu-offers") / "hweval.duckdb")
    yield con
    discard(con)


def offer(con, offer_id):
    rows = warehouse.fetch_dicts(con, "select * from marts.offers where offer_id = ?", [offer_id])
    assert len(rows) == 1, offer_id
    return rows[0]


# ---------------------------------------------------------------- catalog and sources
def test_each_cloud_has_a_cpu_baseline_instance(catalog):
    accelerators = catalog.accelerators.accelerators
    cpu = {(i.cloud, i.instance_type): (i.accelerator, i.accelerator_count, i.vcpu, i.memory_gib)
           for i in catalog.instances.instances if i.accelerator and accelerators[i.accelerator].family == "cpu"}
    assert {cloud for cloud, _ in cpu} == {"aws", "gcp", "azure"}
    assert cpu[("gcp", "c4-standard-96")] == ("xeon-8581c", 1, 96, 360)
    assert cpu[("azure", "Standard_D96as_v6")] == ("epyc-9004-genoa", 1, 96, 384)
    assert cpu[("azure", "Standard_D64ps_v6")] == ("cobalt-100", 1, 64, 256)
    # 8 channels x 5,600 MT/s x 8 B = 358.4 GB/s; 12 x 4,800 x 8 = 460.8 GB/s; half of 12 x 5,600 x 8 = 268.8 GB/s
    assert accelerators["xeon-8581c"].memory_bandwidth_tbps.value == pytest.approx(8 * 5600e6 * 8 / 1e12)
    assert accelerators["epyc-9004-genoa"].memory_bandwidth_tbps.value == pytest.approx(12 * 4800e6 * 8 / 1e12)
    assert accelerators["cobalt-100"].memory_bandwidth_tbps.value == pytest.approx(12 * 5600e6 * 8 / 1e12 / 2)


def test_the_live_sources_ask_for_the_cpu_baseline_prices(catalog):
    sources = catalog.sources.sources
    assert {"C4 Instance Core", "C4 Instance Ram"} <= set(sources["gcp_billing"].live["description_contains"])
    assert {"Standard_D96as_v6", "Standard_D64ps_v6"} <= set(sources["azure_retail"].live["arm_sku_names"])


def test_the_c4_skus_split_the_skypilot_price_exactly(catalog):
    rows = gcp_billing.read_file(catalog.root / "snapshot/gcp_billing/compute-engine.skus.c4.json", "c4 skus")
    assert {(r["description"], r["usage_unit"], r["price_usd"]) for r in rows} == {
        ("C4 Instance Core running in Iowa", "h", 0.03465),
        ("C4 Instance Ram running in Iowa", "GiBy.h", 0.003938)}
    assert {r["region"] for r in rows} == {"us-central1"}


def test_the_machine_types_listing_agrees_with_360_gib(catalog):
    rows = gcp_machine_types.read_file(catalog.root / "snapshot/gcp_machine_types/machine-types.json", "machine types")
    c4 = [r for r in rows if r["instance_type"] == "c4-standard-96"]
    assert c4 and {(r["vcpu"], r["memory_mib"]) for r in c4} == {(96, 360 * 1024)}


# ---------------------------------------------------------------- offers
def test_the_c4_offer_is_96_cores_plus_360_gib(snapshot_db):
    row = offer(snapshot_db, "gcp:us-central1:c4-standard-96:on_demand")
    # 96 x 0.03465 + 360 x 0.003938 = 3.3264 + 1.41768 = 4.74408 USD/h, SkyPilot's c4-standard-96 price
    assert row["usd_per_hour"] == pytest.approx(96 * 0.03465 + 360 * 0.003938)
    assert row["usd_per_hour"] == pytest.approx(4.74408)
    assert (row["accelerator_id"], row["accelerator_count"], row["hardware_basis"]) == ("xeon-8581c", 1, "listed, part from instances.yaml")
    assert row["price_ref"].count("compute-engine.skus.c4.json") == 2
    # no Spot SKUs: the spot total 2.25864 has no unique split into a core and a RAM rate
    assert not warehouse.fetch_dicts(snapshot_db, "select 1 from marts.offers where offer_id = ?",
                                     ["gcp:us-central1:c4-standard-96:spot"])


@pytest.mark.parametrize(("instance_type", "on_demand", "spot", "part"), [
    ("Standard_D96as_v6", 4.358, 0.913437, "epyc-9004-genoa"),
    ("Standard_D64ps_v6", 2.246, 0.70165, "cobalt-100"),
])
def test_the_azure_d_series_lands_on_demand_and_spot(snapshot_db, instance_type, on_demand, spot, part):
    for term, usd in (("on_demand", on_demand), ("spot", spot)):
        row = offer(snapshot_db, f"azure:eastus:{instance_type}:{term}")
        assert (row["usd_per_hour"], row["accelerator_id"], row["accelerator_count"]) == (usd, part, 1)
        assert "eastus.page-cpu.json" in row["price_ref"]
    assert not warehouse.fetch_dicts(snapshot_db, "select 1 from marts.unknown_offers where instance_type = ?",
                                     [instance_type])


# ---------------------------------------------------------------- the baseline row
def batch_usd_per_million_tokens(usd_per_hour, host_gib, sockets, bandwidth_tbps, bf16_tflops):
    """Llama-2-70B in bf16, 1,024 in + 300 out, offline (batch up to what memory holds), the estimator by hand."""
    weights_gb = 69e9 * 2 / 1e9                          # 138 GB
    kv_bytes_per_token = 2 * 80 * 8 * 128 * 2            # 327,680 B
    usable_gb = host_gib * 1.073741824 * 0.8             # cpu family: a fifth of host memory kept back
    batch = int((usable_gb - weights_gb) * 1e9 / kv_bytes_per_token // (1024 + 300))
    kv_gb_per_sequence = (1024 + 300 / 2) * kv_bytes_per_token / 1e9
    step_s = max((weights_gb + batch * kv_gb_per_sequence) * 1e9 / (sockets * bandwidth_tbps * 1e12 * 0.6),
                 2 * 69e9 * batch / (sockets * bf16_tflops * 1e12 * 0.3))
    prefill_s = 2 * 69e9 * 1024 / (sockets * bf16_tflops * 1e12 * 0.3)
    tokens_per_s = batch * 300 / (300 * step_s + batch * prefill_s)
    return usd_per_hour / (tokens_per_s * 3600) * 1e6


def test_the_batch_baseline_names_the_cheapest_cpu_of_the_three_clouds(snapshot_db):
    # by hand, the best CPU of each cloud for llama2-70b-batch:
    # gcp c4-standard-96: 360 GiB -> batch 394, decode step 289.57 GB / 215.04 GB/s = 1.3466 s (memory-bound),
    #   prefill 3.0908 s, 72.88 tokens/s -> 4.74408 / (72.88 x 3600) x 1e6 = 18.08 USD per million tokens
    # aws c8i.metal-48xl: batch 442, 130.73 tokens/s -> 19.12 (c8i.96xlarge, twice of everything, ties)
    # azure Standard_D64ps_v6 spot: batch 188, 6.85 tokens/s -> 28.466; spot loses the 0.25 h restart of each of its
    # 0.2 reclaims a month: 0.2 / 730 x 0.25 = 6.849e-5 of its hours, 28.466 / (1 - 6.849e-5) = 28.468
    c4 = batch_usd_per_million_tokens(4.74408, 360, 1, 0.3584, 152.4)
    c8i = batch_usd_per_million_tokens(8.99616, 384, 1, 0.6912, 265.4)
    cobalt_spot = batch_usd_per_million_tokens(0.70165, 256, 1, 0.2688, 13.9) / (1 - 0.2 / 730 * 0.25)
    assert (c4, c8i, cobalt_spot) == pytest.approx((18.0808, 19.1152, 28.4680), abs=0.0001)
    best_per_cloud = {r["cloud"]: (r["instance_type"], r["pricing_term"], r["outcome_value"])
                      for r in warehouse.fetch_dicts(snapshot_db, """
        select cloud, instance_type, pricing_term, outcome_value
        from marts.rankings
        where workload_id = 'llama2-70b-batch' and family = 'cpu'
        qualify row_number() over (partition by cloud order by outcome_value, candidate_id) = 1""")}
    aws_type, _, aws_usd = best_per_cloud.pop("aws")
    assert aws_type in {"c8i.96xlarge", "c8i.metal-48xl"} and aws_usd == pytest.approx(c8i)
    assert best_per_cloud == {"gcp": ("c4-standard-96", "on_demand", pytest.approx(c4)),
                              "azure": ("Standard_D64ps_v6", "spot", pytest.approx(cobalt_spot))}
    [row] = warehouse.fetch_dicts(snapshot_db, "select * from marts.cpu_baselines where workload_id = ?",
                                  ["llama2-70b-batch"])
    assert (row["cpu_status"], row["cpu_cloud"], row["cpu_instance_type"], row["cpu_precision"]) == (
        "ranked", "gcp", "c4-standard-96", "bf16")
    assert row["cpu_outcome_value"] == pytest.approx(c4)
