"""The CPU baseline (issue 14): CPU parts whose model lives in host memory, CPU offers, and a baseline row on every
workload page with its reason."""

import datetime as dt
import shutil

import pytest
import yaml
from builders import aws_page, aws_product

from flows import reports, transform, warehouse
from flows.catalog import CatalogError, load_catalog
from flows.land import land_batch
from flows.paths import PROJECT_ROOT
from flows.source_batches import SourceBatch
from flows.sources import _aws, aws_offer_file, aws_pricing

AS_OF = dt.date(2026, 11, 30)
CATALOGS = PROJECT_ROOT / "catalogs"
CPU_PARTS = {"xeon-6975p-c", "epyc-9r45", "graviton4", "xeon-8581c", "epyc-9004-genoa", "cobalt-100"}

HBM_PART = """
  hbm-part-768:
    name: An HBM part with a host-sized memory figure
    family: gpu
    vendor: Test
    peak_tflops: {bf16: {value: 100, source: declared-assumption}}
    memory_gb: {value: 768, source: declared-assumption}
    memory_bandwidth_tbps: {value: 1.0, source: declared-assumption}
    tdp_w: {value: 500, source: declared-assumption}
"""
CPU_PART = HBM_PART.replace("hbm-part-768", "cpu-part-768").replace("family: gpu", "family: cpu")

# 8B in bf16 with 100 + 100 tokens a request: one service whose TPOT objective a CPU meets, one it cannot
WORKLOADS = {"workloads": {
    "chat-8b": {"kind": "inference", "title": "Chat 8B", "description": "An easy objective.",
                "model": "llama-3.1-8b", "input_tokens": 100, "output_tokens": 100, "precisions": ["bf16"],
                "slo": {"ttft_ms": 2000, "tpot_ms": 200},
                "traffic": {"mean_requests_per_s": 0.01, "peak_factor": 1}},
    "fast-8b": {"kind": "inference", "title": "Fast 8B", "description": "A tight objective.",
                "model": "llama-3.1-8b", "input_tokens": 100, "output_tokens": 100, "precisions": ["bf16"],
                "slo": {"ttft_ms": 2000, "tpot_ms": 20},
                "traffic": {"mean_requests_per_s": 0.01, "peak_factor": 1}},
    "energy-8b": {"kind": "inference", "title": "Chat 8B by energy", "description": "Ranked by kWh.",
                  "model": "llama-3.1-8b", "input_tokens": 100, "output_tokens": 100, "precisions": ["bf16"],
                  "slo": {"ttft_ms": 2000, "tpot_ms": 200}, "objective": "energy",
                  "traffic": {"mean_requests_per_s": 0.01, "peak_factor": 1}},
}}


def cpu_product(instance_type: str, usd: str) -> str:
    return aws_product(instance_type, usd, vcpu="96", gpu=None).replace('"GPU instance"', '"Compute optimized"')


@pytest.fixture(scope="module")
def small_catalog(tmp_path_factory):
    """The real catalog with two 8B services as its only workloads."""
    catalog_dir = tmp_path_factory.mktemp("cpu-baseline") / "catalogs"
    shutil.copytree(CATALOGS, catalog_dir)
    (catalog_dir / "workloads.yaml").write_text(yaml.safe_dump(WORKLOADS))
    return load_catalog(catalog_dir)


@pytest.fixture(scope="module")
def built(tmp_path_factory, small_catalog):
    """A warehouse priced from three AWS offers (an L4, 8 x H100 and one Graviton4 socket), built and rendered once
    for the module's tests, which only read it."""
    con = warehouse.connect(tmp_path_factory.mktemp("cpu-baseline-warehouse") / "cpu.duckdb")
    warehouse.apply_ddl(con)
    warehouse.load_catalog_tables(con, small_catalog)
    page = aws_page(aws_product("g6.2xlarge", "0.9776", gpu="1", sku="SKU0000000000001"),
                    aws_product("p5.48xlarge", "55.04", sku="SKU0000000000002"),
                    cpu_product("c8g.metal-24xl", "3.82848").replace("SKU0000000000001", "SKU0000000000003"))
    rows = aws_pricing.rows_from_pages([("test page", page)])
    batch = SourceBatch.of_rows("aws_pricing", "aws_pricing", "aws_pricing", ["test"], AS_OF,
                        [r | {"row_no": i, "source_id": "aws_pricing", "data_as_of": AS_OF}
                         for i, r in enumerate(rows)])
    land_batch(con, batch, "run-1", AS_OF, small_catalog)
    transform.build_models(con, "run-1", AS_OF)
    yield con, reports.render(con, AS_OF)
    con.close()


def baseline(con, workload_id):
    return warehouse.fetch_dicts(con, "select * from marts.cpu_baselines where workload_id = ?", [workload_id])[0]


# ---------------------------------------------------------------- catalog
def test_the_catalog_has_cpu_parts_per_socket_with_host_memory(catalog):
    accelerators = catalog.accelerators.accelerators
    assert {a for a, acc in accelerators.items() if acc.family == "cpu"} == CPU_PARTS
    for part in CPU_PARTS:
        assert accelerators[part].memory_gb.value is None  # held in the instance's host memory
        assert accelerators[part].memory_bandwidth_tbps.source == "declared-assumption"
    # 12 channels x 7,200 MT/s x 8 B = 691.2 GB/s per socket
    assert accelerators["xeon-6975p-c"].memory_bandwidth_tbps.value == pytest.approx(12 * 7200e6 * 8 / 1e12)
    c8i = next(i for i in catalog.instances.instances if i.instance_type == "c8i.96xlarge")
    assert (c8i.accelerator, c8i.accelerator_count, c8i.memory_gib) == ("xeon-6975p-c", 2, 768)


def test_a_cpu_may_hold_768_gib_while_an_hbm_part_past_the_bound_is_refused(catalog_copy):
    accelerators = catalog_copy / "accelerators.yaml"
    original = accelerators.read_text()
    accelerators.write_text(original + CPU_PART + HBM_PART)
    with pytest.raises(CatalogError) as refused:
        load_catalog(catalog_copy)
    assert "accelerators.hbm-part-768.memory_gb: 768 fails memory_per_chip_plausible" in str(refused.value)
    assert "cpu-part-768" not in str(refused.value)
    accelerators.write_text(original + CPU_PART)
    assert load_catalog(catalog_copy).accelerators.accelerators["cpu-part-768"].memory_gb.value == 768


# ---------------------------------------------------------------- sources
def test_the_snapshot_and_the_live_sources_keep_the_cpu_baseline_types(catalog):
    cpu_types = {i.instance_type for i in catalog.instances.instances
                 if i.cloud == "aws" and catalog.accelerators.accelerators[i.accelerator].family == "cpu"}
    assert set(_aws.CPU_BASELINE_INSTANCE_TYPES) == cpu_types
    assert catalog.sources.sources["aws_pricing"].live["cpu_instance_types"] == list(_aws.CPU_BASELINE_INSTANCE_TYPES)
    rows = aws_pricing.read_file(catalog.root / "snapshot/aws_pricing/us-east-1.cpu.page-1.json", "cpu page")
    assert {r["instance_type"]: r["price_usd"] for r in rows} == {
        "c8i.96xlarge": 17.99232, "c8i.metal-48xl": 8.99616, "c8a.48xlarge": 10.34592, "c8g.metal-24xl": 3.82848}


def test_the_price_list_fetch_asks_for_each_cpu_type_after_the_families():
    """A real pricing client, its Stubber answering each listing in the order asked: the two accelerated families,
    then the CPU baseline type by name."""
    import boto3
    from botocore.stub import Stubber

    client = boto3.client("pricing", region_name="us-east-1", aws_access_key_id="AKIAFAKEFAKEFAKE0001",
                          aws_secret_access_key="fake")
    region = {"Type": "TERM_MATCH", "Field": "regionCode", "Value": "us-east-1"}
    with Stubber(client) as stubber:
        for field, value in (("instanceFamily", "GPU instance"), ("instanceFamily", "Machine Learning ASIC Instances"),
                             ("instanceType", "c8g.metal-24xl")):
            stubber.add_response("get_products", {"FormatVersion": "aws_v1", "PriceList": []}, {
                "ServiceCode": "AmazonEC2", "Filters": [region, {"Type": "TERM_MATCH", "Field": field, "Value": value}]})
        pages = list(aws_pricing.region_pages(client, "us-east-1", cpu_instance_types=("c8g.metal-24xl",)))
        stubber.assert_no_pending_responses()
    assert [where for where, _ in pages] == [
        "pricing.get_products us-east-1 'GPU instance' page 1",
        "pricing.get_products us-east-1 'Machine Learning ASIC Instances' page 1",
        "pricing.get_products us-east-1 'c8g.metal-24xl' page 1"]


def test_the_offer_file_keeps_cpu_baseline_rows_and_drops_other_cpus(tmp_path):
    header = ["SKU", "OfferTermCode", "RateCode", "TermType", "PriceDescription", "Unit", "PricePerUnit", "Currency",
              "LeaseContractLength", "PurchaseOption", "OfferingClass", "Product Family", "Instance Type",
              "Region Code", "Location", "Instance Family", "Operating System", "License Model", "Pre Installed S/W",
              "Tenancy", "CapacityStatus", "MarketOption", "usageType", "vCPU", "GPU"]

    def line(sku, instance_type, family, price, product_family="Compute Instance"):
        values = {"SKU": sku, "OfferTermCode": "JRTCKXETXF", "RateCode": sku + ".R", "TermType": "OnDemand",
                  "Unit": "Hrs", "PricePerUnit": price, "Currency": "USD", "Product Family": product_family,
                  "Instance Type": instance_type, "Region Code": "us-east-1", "Instance Family": family,
                  "Operating System": "Linux"}
        return ",".join(f'"{values.get(c, "")}"' for c in header)

    path = tmp_path / "index.csv"
    path.write_text("\n".join([
        '"FormatVersion","v1.0"', '"Disclaimer","test"', '"Publication Date","2026-09-10T19:55:14Z"',
        '"Version","20260910195514"', '"OfferCode","AmazonEC2"', ",".join(f'"{c}"' for c in header),
        line("A", "p5.48xlarge", "GPU instance", "55.04"),
        # a bare-metal type has its own product family in the real files
        line("B", "c8g.metal-24xl", "Compute optimized", "3.82848", "Compute Instance (bare metal)"),
        line("C", "c7g.large", "Compute optimized", "0.0725"),
        line("D", "c8i.96xlarge", "Compute optimized", "17.99232", "Storage Instance")]) + "\n")
    rows = aws_offer_file.read_file(path, "index.csv")
    assert [r["instance_type"] for r in rows] == ["p5.48xlarge", "c8g.metal-24xl"]


# ---------------------------------------------------------------- the estimate and the baseline row
def test_a_cpu_serving_estimate_by_hand(built):
    con, _ = built
    row = warehouse.fetch_dicts(con, """
        select * from intermediate.int_inference_estimates_computed
        where workload_id = 'fast-8b' and instance_type = 'c8g.metal-24xl' and fastest_tpot_ms is not null""")[0]
    # host memory: 192 GiB x 1.073741824 = 206.16 GB on the one socket (the model is held in host memory)
    assert row["memory_gb_per_chip"] == pytest.approx(192 * 1.073741824)
    # weights 8e9 x 2 B = 16 GB; KV cache 2 x 32 layers x 8 heads x 128 x 2 B = 131,072 B a token, and while decoding
    # the mean context is 100 + 100 / 2 = 150 tokens: 0.0196608 GB. Decode step at batch 1 = bytes per step /
    # (bandwidth x efficiency) = 16.0196608e9 / (0.5376e12 x 0.6) = 0.049665 s (the compute side, 2 x 8e9 /
    # (33.2e12 x 0.3) = 0.0016 s, is shorter). Prefill: 2 x 8e9 x 100 / (33.2e12 x 0.3) = 0.160643 s, spread over
    # 100 output tokens: 1.606 ms a token. TPOT = 49.665 + 1.606 = 51.27 ms, above the 20 ms objective.
    step_s = 16.0196608e9 / (0.5376e12 * 0.6)
    prefill_s = 2 * 8e9 * 100 / (33.2e12 * 0.3)
    assert row["fastest_tpot_ms"] == pytest.approx((step_s + prefill_s / 100) * 1000)
    assert row["fastest_tpot_ms"] == pytest.approx(51.27, abs=0.01)
    assert row["fastest_prefill_ms"] == pytest.approx(160.643, abs=0.001)
    assert row["exclusion_kind"] == "tpot"


def test_a_cpu_that_meets_the_objective_shows_its_cost_as_a_multiple_of_the_best(built):
    con, pages = built
    row = baseline(con, "chat-8b")
    # one instance of each serves 0.01 requests/s, so the cost per request is the hourly price's:
    # 3.82848 / 0.9776 = 3.916 (c8g.metal-24xl against g6.2xlarge, the best)
    assert (row["cpu_status"], row["cpu_instance_type"], row["best_instance_type"]) == (
        "ranked", "c8g.metal-24xl", "g6.2xlarge")
    assert row["cpu_cost_ratio"] == pytest.approx(3.82848 / 0.9776)
    # below the L4, above 8 x H100: at 0.01 requests/s the p5.48xlarge's 55.04 USD/h is mostly idle
    assert (row["cpu_outcome_rank"], row["ranked_candidates"]) == (2, 3)
    page = pages["chat-8b.md"]
    assert "## CPU baseline" in page
    assert "| aws c8g.metal-24xl | on\\_demand |" not in page  # cells are escaped, not mangled
    # one socket on the one instance the 0.01 requests/s keep
    assert "| aws c8g.metal-24xl | on_demand | 1 x graviton4 (1 instance) | bf16 |" in page
    assert "A CPU meets this traffic at 3.92x the cost of the best offer" in page


def test_a_cpu_that_cannot_meet_the_objective_says_by_how_much(built):
    con, pages = built
    row = baseline(con, "fast-8b")
    assert (row["cpu_status"], row["cpu_exclusion_kind"], row["cpu_instance_type"]) == (
        "excluded", "tpot", "c8g.metal-24xl")
    assert row["cpu_outcome_value"] is None and row["cpu_cost_ratio"] is None
    page = pages["fast-8b.md"]
    assert "No CPU instance meets the 20 ms TPOT objective: best 51 ms, one sequence alone on c8g.metal-24xl (bf16)." \
        in page
    assert "cannot meet the TPOT SLO of 20 ms even at batch 1" in page


def test_the_closest_cpu_is_the_one_with_the_lowest_tpot(tmp_path, small_catalog):
    """Two CPU sockets both miss fast-8b's 20 ms TPOT: the baseline names the nearer, the Xeon at 38.83 ms, not the
    Graviton4 at 51.27 ms (test_a_cpu_serving_estimate_by_hand)."""
    con = warehouse.connect(tmp_path / "cpu.duckdb")
    warehouse.apply_ddl(con)
    warehouse.load_catalog_tables(con, small_catalog)
    page = aws_page(aws_product("g6.2xlarge", "0.9776", gpu="1", sku="SKU0000000000001"),
                    cpu_product("c8g.metal-24xl", "3.82848").replace("SKU0000000000001", "SKU0000000000003"),
                    aws_product("c8i.metal-48xl", "9.0", vcpu="192", gpu=None, sku="SKU0000000000004")
                    .replace('"GPU instance"', '"Compute optimized"'))
    rows = aws_pricing.rows_from_pages([("test page", page)])
    batch = SourceBatch.of_rows("aws_pricing", "aws_pricing", "aws_pricing", ["test"], AS_OF,
                                [r | {"row_no": i, "source_id": "aws_pricing", "data_as_of": AS_OF}
                                 for i, r in enumerate(rows)])
    assert land_batch(con, batch, "run-1", AS_OF, small_catalog).rows_landed == 3
    transform.build_models(con, "run-1", AS_OF)
    row = baseline(con, "fast-8b")
    # one Xeon 6975P-C socket: decode step 16.0196608e9 B / (0.6912e12 x 0.6) = 38.627 ms (compute 2 x 8e9 /
    # (265.4e12 x 0.3) = 0.2 ms is shorter); prefill 2 x 8e9 x 100 / (265.4e12 x 0.3) = 20.095 ms over 100 tokens:
    # 0.201 ms a token. TPOT 38.627 + 0.201 = 38.83 ms < Graviton4's 51.27 ms
    assert (row["cpu_status"], row["cpu_exclusion_kind"], row["cpu_instance_type"]) == (
        "excluded", "tpot", "c8i.metal-48xl")
    step_s = 16.0196608e9 / (0.6912e12 * 0.6)
    prefill_s = 2 * 8e9 * 100 / (265.4e12 * 0.3)
    assert row["cpu_fastest_tpot_ms"] == pytest.approx((step_s + prefill_s / 100) * 1000)
    assert row["cpu_fastest_tpot_ms"] == pytest.approx(38.83, abs=0.01)
    con.close()


def test_a_cpu_without_a_figure_in_the_workloads_objective_says_so(built):
    con, _ = built
    # ranked by energy: Graviton4 publishes no TDP (accelerators.yaml), so the socket that serves chat-8b has no kWh
    # figure here; the baseline names that, not "no CPU offer" (it is priced and estimated)
    row = baseline(con, "energy-8b")
    assert (row["cpu_status"], row["cpu_exclusion_kind"], row["cpu_instance_type"]) == (
        "excluded", "objective", "c8g.metal-24xl")
    assert row["cpu_exclusion_reason"] == "no published power for graviton4: the workload is ranked by energy"
    # a ranked CPU carries its own figures only, never the closest excluded one's
    assert baseline(con, "chat-8b")["cpu_host_memory_gb"] is None


def test_the_mart_columns_are_the_documented_ones(built):
    con, _ = built
    documented = yaml.safe_load((warehouse.SQL_DIR / "marts" / "marts.yaml").read_text())["models"]["cpu_baselines"]
    assert [r[0] for r in con.execute("describe marts.cpu_baselines").fetchall()] == list(documented["columns"])


def test_a_cpu_past_a_deadline_of_a_fraction_of_an_hour_is_written_as_the_deadline_reasons_write_it(flow_run, tmp_path):
    """llama31-8b-pretrain-1t's closest CPU, 256 sockets of c8i.96xlarge, needs 1,367.66 h (the page's "1,368 h"). With
    a deadline of 1,367.5 h (the catalog accepts any) the sentence said "makes the 1,368 h deadline: best 1,368 h";
    now the deadline as declared, as the deadline reasons write it: "the 1,367.5 h deadline: best 1,368 h" (1,368 >
    1,367.5: no decimal more is needed)."""
    from builders import discard, open_copy
    from conftest import AS_OF

    from flows.paths import SQL_DIR

    con = open_copy(flow_run.warehouse, tmp_path / "w.duckdb")
    try:
        con.execute("update catalog.workloads set deadline_hours = 1367.5 where workload_id = 'llama31-8b-pretrain-1t'")
        con.execute("set variable as_of = ?", [AS_OF.isoformat()])
        con.execute("delete from marts.cpu_baselines where as_of = ?", [AS_OF])
        con.execute(f"insert into marts.cpu_baselines by name {(SQL_DIR / 'marts' / 'cpu_baselines.sql').read_text()}")
        [row] = con.execute("select cpu_run_hours, deadline_text, cpu_run_hours_text from marts.cpu_baselines "
                            "where workload_id = 'llama31-8b-pretrain-1t'").fetchall()
        page = reports.render(con, AS_OF)["llama31-8b-pretrain-1t.md"]
    finally:
        discard(con)
    assert row[0] == pytest.approx(1367.66, abs=0.005)
    assert row[1:] == ("1,367.5", "1,368")
    assert "No CPU instance makes the 1,367.5 h deadline: best 1,368 h on 256 sockets of c8i.96xlarge." in page


def test_the_cpu_baselines_sockets_are_the_rows_over_all_its_instances_on_every_page(flow_run, tmp_path):
    """The sockets column counts a row's sockets over all its instances, as a training page counts chips; a service's
    was one replica's ("2 x xeon-6975p-c" for 263 instances), a training run's the whole run's."""
    from builders import discard, open_copy

    con = open_copy(flow_run.warehouse, tmp_path / "w.duckdb")
    try:
        rows = {r["workload_id"]: r for r in warehouse.fetch_dicts(
            con, "select workload_id, cpu_chips, cpu_sockets, cpu_instances from marts.cpu_baselines where as_of = ?",
            [AS_OF])}
    finally:
        discard(con)
    page = {name: (flow_run.reports / f"{name}.md").read_text() for name in (
        "llama2-70b-chat", "gpt3-175b-pretrain", "llama31-70b-pretrain-15t", "llama31-405b-chat")}
    # llama2-70b-chat: c8i.96xlarge (2 sockets, a replica of TP 2 on each), 263 instances for the peak (the Full
    # ranking's instances): 263 x 2 = 526 sockets; cpu_chips stays the replica's 2, as rankings.chips
    chat = rows["llama2-70b-chat"]
    assert (chat["cpu_sockets"], chat["cpu_instances"], chat["cpu_chips"]) == (526, 263, 2)
    assert "| aws c8i.96xlarge | on_demand | 526 x xeon-6975p-c (263 instances) | bf16 |" in page["llama2-70b-chat"]
    # gpt3-175b-pretrain: 512 sockets, 2 an instance: 512 / 2 = 256 instances, as its Full ranking's "512 (256 ...)"
    assert "| aws c8i.96xlarge | on_demand | 512 x xeon-6975p-c (256 instances) | bf16 |" in page["gpt3-175b-pretrain"]
    # past the deadline: 4,096 sockets / 2 = 2,048 instances, thousands separated in the table and the sentence
    assert "| aws c8i.96xlarge | on_demand | 4,096 x xeon-6975p-c (2,048 instances) | bf16 |" in page[
        "llama31-70b-pretrain-15t"]
    assert "best 17,246 h on 4,096 sockets of c8i.96xlarge." in page["llama31-70b-pretrain-15t"]
    # the row's reason counts in sockets too, as its column (it said "on 4,096 chips" beside "4,096 x xeon")
    assert ("| aws c8i.96xlarge | on_demand | 4,096 x xeon-6975p-c (2,048 instances) | bf16 | needs 17,246 h on 4,096 "
            "sockets; the deadline is 2,160 h |") in page["llama31-70b-pretrain-15t"]
    # the 405B's weights fit no c8i.96xlarge: the one instance it was tried on, its 2 sockets; 811 GB / (412.32 GB x
    # 80% usable) = 2.46 -> 3 sockets
    assert ("| aws c8i.96xlarge | on_demand | 2 x xeon-6975p-c (1 instance) | bf16 | 811 GB of bf16 weights + KV cache "
            "need 3 sockets of 412.32 GB (80% usable); c8i.96xlarge has 2 |") in page["llama31-405b-chat"]
