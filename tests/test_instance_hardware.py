"""int_instance_hardware: each instance type's hardware from the clouds' instance-type listings (aws_instance_types,
azure_skus, gcp_machine_types), matched to accelerators.yaml through `api_names` (memory within 10% tells two parts
sharing a name apart), with instances.yaml on top; through int_offers_priced / int_offers_unknown to marts.offers,
marts.unknown_offers, marts.rankings and the reports. Listings are written here in the APIs' shapes; no network."""

from __future__ import annotations

import datetime as dt
import shutil

import polars as pl
import pytest
import yaml
from builders import aws_page, aws_product, azure_item, azure_page, discard, open_copy
from conftest import CATALOGS
from test_source_instance_types import az_sku, ec2_type

from flows import checks, reports, transform, warehouse
from flows.catalog import CatalogError, load_catalog
from flows.land import land_all
from flows.source_batches import SourceBatch
from flows.sources import aws_instance_types, aws_pricing, azure_retail, azure_skus

AS_OF = dt.date(2026, 11, 30)
RUN = "2026-11-30-hardware"
ND_H100 = "Standard_ND96isr_H100_v5"
NC_T4 = "Standard_NC4as_T4_v3"

# one small serving workload: 8B in bf16 fits every part listed below (the smallest, a100-sxm-40gb, has 40 GB)
WORKLOADS = {"workloads": {
    "chat-8b": {"kind": "inference", "title": "Chat 8B", "description": "An easy objective.",
                "model": "llama-3.1-8b", "input_tokens": 100, "output_tokens": 100, "precisions": ["bf16"],
                "slo": {"ttft_ms": 2000, "tpot_ms": 200},
                "traffic": {"mean_requests_per_s": 0.01, "peak_factor": 1}},
}}


# ---------------------------------------------------------------- helpers
def batch(source_id: str, table: str, rows: list[dict]) -> SourceBatch:
    return SourceBatch.of_rows(source_id, source_id, table, ["test"], AS_OF,
                       [r | {"row_no": i, "source_id": source_id, "data_as_of": AS_OF}
                        for i, r in enumerate(rows)])


def ec2_batch(*pages: tuple[str, list[dict], str]) -> SourceBatch:
    """DescribeInstanceTypes pages as (label, InstanceTypes items, region)."""
    rows = aws_instance_types.rows_from_pages([(label, {"InstanceTypes": items}, region)
                                               for label, items, region in pages])
    return batch("aws_instance_types", "instance_types", rows)


def price_list_batch(*products: str) -> SourceBatch:
    return batch("aws_pricing", "aws_pricing", aws_pricing.rows_from_pages([("price-list page 1", aws_page(*products))]))


def sku(n: int) -> str:
    return f"HWTESTSKU{n:07d}"


def a100_type(name: str, memory_mib: int) -> dict:
    return ec2_type(name, 96, 1179648, gpus=[("A100", "NVIDIA", 8, memory_mib)])


def l4_type(name: str, count: int) -> dict:
    return ec2_type(name, 8 * count, 32768 * count, cpu="AMD", gpus=[("L4", "NVIDIA", count, 22888)])


def hardware(con, cloud: str, instance_type: str) -> dict:
    [row] = warehouse.fetch_dicts(con, "select * from intermediate.int_instance_hardware "
                                       "where cloud = ? and instance_type = ?", [cloud, instance_type])
    return row


def offers(con, instance_type: str) -> list[dict]:
    return warehouse.fetch_dicts(con, "select * from marts.offers where instance_type = ? order by offer_id",
                                 [instance_type])


def unknown(con, instance_type: str) -> list[dict]:
    return warehouse.fetch_dicts(con, "select * from marts.unknown_offers where instance_type = ?", [instance_type])


def quarantined(con) -> list[tuple]:
    return con.execute("select source_id, row_no, expectation, column_name, unexpected_value from ops.quarantine "
                       "order by source_id, row_no, expectation").fetchall()


# one region lists two kinds of GPU in one instance type (no price: it only has to be resolved)
MIXED = ec2_type("g5x.test-mixed", 16, 65536, gpus=[("L4", "NVIDIA", 1, 22888), ("A10G", "NVIDIA", 1, 22888)])


# ---------------------------------------------------------------- one small warehouse from listings and prices
@pytest.fixture(scope="module")
def listed(tmp_path_factory):
    """The real catalog with one serving workload; EC2 and Azure listings of instance types instances.yaml mostly
    does not know, their prices, built and rendered: (connection, rendered pages)."""
    root = tmp_path_factory.mktemp("hardware")
    catalog_dir = root / "catalogs"
    shutil.copytree(CATALOGS, catalog_dir)
    (catalog_dir / "workloads.yaml").write_text(yaml.safe_dump(WORKLOADS))
    catalog = load_catalog(catalog_dir)
    con = warehouse.connect(root / "hardware.duckdb")
    warehouse.apply_ddl(con)
    warehouse.load_catalog_tables(con, catalog)
    ec2 = ec2_batch(
        ("east", [ec2_type("g6e.24xlarge", 96, 786432, cpu="AMD", gpus=[("L40S", "NVIDIA", 4, 45776)]),
                  a100_type("p4x.test-40", 40960), a100_type("p4x.test-80", 81920), a100_type("p4x.test-60", 61440),
                  ec2_type("trn2.48xlarge", 192, 2097152, neuron=[("Trainium2", 16, 524288)]),
                  l4_type("g6x.test", 4), MIXED], "us-east-1"),
        ("west", [l4_type("g6x.test", 8)], "us-west-2"))  # us-west-2 lists 8 GPUs where us-east-1 lists 4
    aws_prices = price_list_batch(
        aws_product("g6e.24xlarge", "15.06559", gpu="4", vcpu="96", sku=sku(1)),
        aws_product("p4x.test-40", "20.0", vcpu="96", sku=sku(2)),
        aws_product("p4x.test-80", "32.0", vcpu="96", sku=sku(3)),
        aws_product("p4x.test-60", "28.0", vcpu="96", sku=sku(4)),
        aws_product("trn2.48xlarge", "44.7", gpu=None, sku=sku(5)),  # ML ASIC: no gpu attribute
        aws_product("g6x.test", "6.4", gpu="8", vcpu="64", sku=sku(6)))
    skus = batch("azure_skus", "instance_types", azure_skus.rows_from_pages([("eastus skus", {"value": [
        az_sku(ND_H100, "standardNDSH100v5Family", vcpus="96", memory_gb="1900", gpus="12"),
        az_sku(NC_T4, "standardNCASv3_T4Family", vcpus="4", memory_gb="28", gpus="1")]})], "eastus"))
    azure_prices = batch("azure_retail", "azure_retail", azure_retail.rows_from_pages([("eastus page 1", azure_page(
        azure_item(ND_H100, 98.32, product="Virtual Machines NDsr H100 v5 Series", meter="ND96isr H100 v5"),
        azure_item(NC_T4, 0.526, product="Virtual Machines NCasT4_v3 Series", meter="NC4as T4 v3")))]))
    loads = land_all(con, catalog, [ec2, aws_prices, skus, azure_prices], RUN, AS_OF)
    assert [(ld.source_id, ld.status, ld.rows_quarantined) for ld in loads] == [
        ("aws_instance_types", "landed", 0), ("aws_pricing", "landed", 0), ("azure_skus", "landed", 0),
        ("azure_retail", "landed", 0)]
    transform.build_models(con, RUN, AS_OF)
    yield con, reports.render(con, AS_OF)
    con.close()


def test_a_listed_type_instances_yaml_does_not_know_is_priced_and_ranked(listed):
    con, _ = listed
    row = hardware(con, "aws", "g6e.24xlarge")
    assert (row["accelerator_id"], row["accelerator_count"], row["vcpu"], row["memory_gib"]) == ("l40s-48gb", 4, 96, 768)
    assert (row["hardware_basis"], row["unknown_reason"], row["correction_note"]) == ("listed", None, None)
    assert row["listed_hardware"] == "4 x L40S (45,776 MiB) 96 vCPU 786,432 MiB in us-east-1"
    [offer] = offers(con, "g6e.24xlarge")
    # 15.06559 USD/h over 4 x L40S = 3.7663975 USD per chip-hour
    assert (offer["offer_id"], offer["accelerator_id"], offer["accelerator_count"]) == (
        "aws:us-east-1:g6e.24xlarge:on_demand", "l40s-48gb", 4)
    assert offer["usd_per_chip_hour"] == pytest.approx(15.06559 / 4) == pytest.approx(3.7663975)
    assert (offer["hardware_basis"], offer["hardware_note"]) == ("listed", None)
    [ranked] = warehouse.fetch_dicts(con, "select * from marts.rankings where workload_id = 'chat-8b' "
                                          "and offer_id = 'aws:us-east-1:g6e.24xlarge:on_demand'")
    assert (ranked["accelerator_id"], ranked["family"], ranked["precision"], ranked["instances"]) == (
        "l40s-48gb", "gpu", "bf16", 1)
    # one instance serves 0.01 requests/s = 36 an hour: 15.06559 / 36 x 1e6 = 418,488.61 USD per million requests,
    # the lowest instance-hour of the five ranked (15.07 < 20 < 32 < 44.7 < 98.32), though third per chip-hour
    # (2.5 p4x.test-40 < 2.79375 trn2 < 3.7663975 < 4.0 p4x.test-80 < 12.29 ND H100)
    assert ranked["outcome_value"] == pytest.approx(15.06559 / 36 * 1e6) == pytest.approx(418488.61)
    assert (ranked["outcome_rank"], ranked["chip_hour_rank"]) == (1, 3)


def test_a_listing_instances_yaml_corrects_says_what_and_why(listed):
    con, pages = listed
    [offer] = offers(con, ND_H100)
    # Resource SKUs lists 12 GPUs; instances.yaml's 8 wins: 98.32 / 8 = 12.29 USD per chip-hour (not 98.32 / 12 = 8.19)
    assert (offer["accelerator_id"], offer["accelerator_count"]) == ("h100-sxm-80gb", 8)
    assert offer["usd_per_chip_hour"] == pytest.approx(98.32 / 8) == pytest.approx(12.29)
    assert offer["hardware_basis"] == "listed, corrected in instances.yaml"
    reason = ("Resource SKUs lists 12 GPUs for this size; the ND H100 v5 series has 8 H100 GPUs per VM "
              "(Azure's ND H100 v5 size documentation)")
    assert offer["hardware_note"] == f"accelerator count listed as 12, corrected to 8: {reason}"
    page = pages["offers.md"]
    corrections = page[page.index("Corrections and listings overridden:"):page.index("## Offers whose hardware")]
    assert f"| azure | {ND_H100} | accelerator count listed as 12, corrected to 8: {reason} |" in corrections
    # the summary counts instance types priced per basis: this one corrected, g6e.24xlarge and friends as listed
    assert "| listed, corrected in instances.yaml | 1 |" in page


def test_a_device_no_api_name_knows_is_an_unknown_offer(listed):
    con, pages = listed
    assert offers(con, NC_T4) == []
    [row] = unknown(con, NC_T4)
    reason = "the listed device standardNCASv3_T4Family is not among the api_names in accelerators.yaml"
    assert (row["cloud"], row["region"], row["pricing_term"], row["usd_per_hour"]) == (
        "azure", "eastus", "on_demand", 0.526)
    assert row["unknown_reason"] == reason
    assert row["accelerators_listed"] == "1 x standardNCASv3_T4Family 4 vCPU 28,672 MiB in eastus"  # 28 GB x 1024, separated
    assert reason in pages["offers.md"]


@pytest.mark.parametrize(("instance_type", "accelerator_id", "usd_per_chip_hour"), [
    ("p4x.test-40", "a100-sxm-40gb", 20.0 / 8),  # 40,960 MiB = the 40 GB part's memory_mib exactly
    ("p4x.test-80", "a100-sxm-80gb", 32.0 / 8),  # 81,920 MiB = the 80 GB part's
])
def test_listed_memory_tells_two_parts_sharing_a_name_apart(listed, instance_type, accelerator_id, usd_per_chip_hour):
    con, _ = listed
    row = hardware(con, "aws", instance_type)
    assert (row["accelerator_id"], row["accelerator_count"], row["hardware_basis"], row["unknown_reason"]) == (
        accelerator_id, 8, "listed", None)
    [offer] = offers(con, instance_type)
    assert (offer["accelerator_id"], offer["usd_per_chip_hour"]) == (accelerator_id, pytest.approx(usd_per_chip_hour))


def test_listed_memory_within_ten_percent_of_neither_part_is_unknown(listed):
    con, _ = listed
    # 61,440 MiB is 20,480 from both: more than 10% of 40,960 (4,096) and of 81,920 (8,192)
    row = hardware(con, "aws", "p4x.test-60")
    reason = "the listed device A100 (61,440 MiB) is not among the api_names in accelerators.yaml"
    assert (row["accelerator_id"], row["unknown_reason"]) == (None, reason)
    assert offers(con, "p4x.test-60") == []
    [priced] = unknown(con, "p4x.test-60")
    assert (priced["usd_per_hour"], priced["unknown_reason"]) == (28.0, reason)


def test_trn2s_listed_memory_per_device_is_noted_and_the_catalogs_is_used(listed):
    con, _ = listed
    row = hardware(con, "aws", "trn2.48xlarge")
    # 524,288 MiB / 1,024 = 512.0 GiB = 549.76 GB, far more than 15% from the 96 GiB = 96 x 1.073741824 = 103.08 GB
    # per chip
    note = "the listing gives 512.0 GiB per device; accelerators.yaml's 103.08 GB per chip is used"
    assert (row["accelerator_id"], row["accelerator_count"], row["listing_memory_note"]) == ("trainium2", 16, note)
    # instances.yaml gives the listing's 16 chips, 192 vCPUs and 2,048 GiB (2,097,152 MiB): no correction
    assert (row["hardware_basis"], row["correction_note"]) == ("listed, instances.yaml agrees", None)
    [offer] = offers(con, "trn2.48xlarge")
    assert (offer["hardware_note"], offer["usd_per_chip_hour"]) == (note, pytest.approx(44.7 / 16))
    assert con.execute("select memory_gb from catalog.accelerators where accelerator_id = 'trainium2'").fetchone() == (
        103.08,)
    per_chip = con.execute("select distinct memory_gb_per_chip from intermediate.int_inference_estimates_computed "
                           "where instance_type = 'trn2.48xlarge'").fetchall()
    assert per_chip == [(103.08,)]


def test_regions_listing_different_hardware_leave_it_unknown(listed):
    con, _ = listed
    row = hardware(con, "aws", "g6x.test")
    # 4 x L4 with 4 x 8 vCPUs and 4 x 32,768 MiB in us-east-1; 8 x L4, 64 vCPUs, 262,144 MiB in us-west-2
    reason = ("regions list different hardware: 4 x L4 (22,888 MiB) 32 vCPU 131,072 MiB in us-east-1; "
              "8 x L4 (22,888 MiB) 64 vCPU 262,144 MiB in us-west-2")
    assert (row["accelerator_id"], row["unknown_reason"]) == (None, reason)
    assert offers(con, "g6x.test") == []
    [priced] = unknown(con, "g6x.test")
    assert (priced["usd_per_hour"], priced["unknown_reason"]) == (6.4, reason)


def test_one_region_listing_two_kinds_of_device_is_not_called_a_region_disagreement(listed):
    con, _ = listed
    staged = con.execute("select distinct hardware_variants, regions from staging.stg_instance_types__hardware "
                         "where instance_type = 'g5x.test-mixed'").fetchall()
    assert staged == [(1, ["us-east-1"])]  # one region, one listing: staging sees no disagreement
    row = hardware(con, "aws", "g5x.test-mixed")
    assert row["accelerator_id"] is None  # two kinds of GPU: no single part, rightly unknown
    assert row["unknown_reason"] == ("the listing names more than one kind of device: "
                                     + row["listed_hardware"])


# ---------------------------------------------------------------- the catalog and the Price List count check
def test_the_catalog_refuses_two_parts_sharing_an_api_name_without_memory(catalog_copy):
    path = catalog_copy / "accelerators.yaml"
    text = path.read_text()
    # l4-24gb's EC2 name "L4" given to l40s-48gb too, neither with memory_mib: a listing of L4 could be either
    path.write_text(text.replace("      - {cloud: aws, name: L40S}\n", "      - {cloud: aws, name: L4}\n", 1))
    with pytest.raises(CatalogError) as refused:
        load_catalog(catalog_copy)
    message = str(refused.value)
    assert ("accelerators.yaml: accelerators.l40s-48gb.api_names: aws name 'l4' is also an api_name of 'l4-24gb'; "
            "two parts may share a name only when both give memory_mib more than 20% apart") in message


def test_the_price_lists_gpu_count_is_checked_against_the_same_runs_listing(fresh_db, catalog):
    # g9x.test is not in instances.yaml: the count to check against is the listing's 8, landed in the same run
    price = aws_product("g9x.test", "9.6", gpu="4", vcpu="64", sku=sku(7))
    assert checks.listed_counts([pl.from_arrow(ec2_batch(("east", [l4_type("g9x.test", 8)], "us-east-1")).data)]) == {
        ("aws", "g9x.test"): (8, "gpu")}
    loads = land_all(fresh_db, catalog, [ec2_batch(("east", [l4_type("g9x.test", 8)], "us-east-1")),
                                         price_list_batch(price)], RUN, AS_OF)
    assert [(ld.source_id, ld.rows_in, ld.rows_landed, ld.rows_quarantined) for ld in loads] == [
        ("aws_instance_types", 1, 1, 0), ("aws_pricing", 1, 0, 1)]
    assert quarantined(fresh_db) == [("aws_pricing", 0, "accelerator_count_matches_catalog", "gpu",
                                      "4 (check_catalog_accelerator_count: 8)")]


def test_instances_yaml_corrects_the_same_runs_listing_when_the_gpu_count_is_checked(fresh_db, catalog):
    # instances.yaml gives g6e.12xlarge 4 L40S; a listing of 8 and a Price List row agreeing with it (8) do not
    # outvote the catalog: the row is quarantined against 4
    price = aws_product("g6e.12xlarge", "10.49264", gpu="8", vcpu="48", sku=sku(8))
    loads = land_all(fresh_db, catalog, [ec2_batch(("east", [ec2_type("g6e.12xlarge", 48, 393216, cpu="AMD",
                                                                      gpus=[("L40S", "NVIDIA", 8, 45776)])],
                                                    "us-east-1")),
                                         price_list_batch(price)], RUN, AS_OF)
    assert [(ld.source_id, ld.rows_in, ld.rows_landed, ld.rows_quarantined) for ld in loads] == [
        ("aws_instance_types", 1, 1, 0), ("aws_pricing", 1, 0, 1)]
    assert quarantined(fresh_db) == [("aws_pricing", 0, "accelerator_count_matches_catalog", "gpu",
                                      "8 (check_catalog_accelerator_count: 4)")]


def test_without_a_listing_in_the_run_the_gpu_count_of_an_unlisted_type_is_not_checked(fresh_db, catalog):
    loads = land_all(fresh_db, catalog, [price_list_batch(
        aws_product("g9x.test", "9.6", gpu="4", vcpu="64", sku=sku(7)))], RUN, AS_OF)
    assert [(ld.source_id, ld.rows_landed, ld.rows_quarantined) for ld in loads] == [("aws_pricing", 1, 0)]


# ---------------------------------------------------------------- the embedded snapshot
@pytest.fixture(scope="module")
def snapshot(tmp_path_factory, snapshot_warehouse):
    """Every enabled source read from the embedded snapshot, landed and built (conftest's `snapshot_warehouse`,
    copied), and rendered once (no Prefect)."""
    con = open_copy(snapshot_warehouse, tmp_path_factory.mktemp("snapshot") / "snapshot.duckdb")
    yield con, reports.render(con, AS_OF)
    discard(con)


@pytest.mark.parametrize(("offer_id", "basis", "usd_per_hour", "usd_per_chip_hour"), [
    # 48.00 USD/h over 8 x MI300X = 6.00
    ("azure:eastus:Standard_ND96isr_MI300X_v5:on_demand", "listed", 48.0, 6.0),
    # 84.80 USD/h over 8 x H200 = 10.60
    ("azure:eastus2:Standard_ND96isr_H200_v5:on_demand", "listed", 84.8, 10.6),
    # 8 x 9.31174 + 224 x 0.0293 + 2952 x 0.001931843 = 74.49392 + 6.5632 + 5.702800536 = 86.759920536 USD/h; / 8
    ("gcp:us-central1:a3-ultragpu-8g:on_demand", "listed, instances.yaml agrees", 86.759920536, 86.759920536 / 8),
])
def test_snapshot_offers_whose_hardware_only_a_listing_gives_are_ranked(snapshot, offer_id, basis, usd_per_hour,
                                                                        usd_per_chip_hour):
    con, _ = snapshot
    [offer] = warehouse.fetch_dicts(con, "select * from marts.offers where offer_id = ?", [offer_id])
    expected_part = "mi300x-192gb" if "MI300X" in offer_id else "h200-sxm-141gb"
    assert (offer["accelerator_id"], offer["accelerator_count"], offer["hardware_basis"]) == (expected_part, 8, basis)
    assert offer["usd_per_hour"] == pytest.approx(usd_per_hour)
    assert offer["usd_per_chip_hour"] == pytest.approx(usd_per_chip_hour)
    assert con.execute("select count(*) from marts.rankings where offer_id = ?", [offer_id]).fetchone()[0] > 0


def test_snapshot_gb200_mlperf_rows_land_as_benchmark_results(snapshot):
    con, _ = snapshot
    rows = con.execute("select accelerator_id, result_label from marts.benchmark_results "
                       "where source_ref like '%5.1-0008%' order by result_label").fetchall()
    assert rows == [("gb200-186gb", "ND_GB200_v6 (Azure), llama2-70b-99 Offline"),
                    ("gb200-186gb", "ND_GB200_v6 (Azure), llama2-70b-99 Server")]
    assert con.execute("select count(*) from ops.quarantine where source_ref like '%5.1-0008%'").fetchone() == (0,)


def test_every_snapshot_benchmark_result_has_a_label_even_without_a_chip_count(snapshot):
    con, _ = snapshot
    assert con.execute("select count(*) from marts.benchmark_results where result_label is null").fetchone() == (0,)
    # published_training.csv row 6: Megatron-Core's per-GPU figure on H100, which gives no chip count (its label was
    # null: text || null is null)
    rows = con.execute("select result_label from marts.benchmark_results "
                       "where source_ref like '%published_training.csv: row 6'").fetchall()
    assert rows == [("training run of gpt-3-175b bf16 on h100-sxm-80gb (chip count not given)",)]


def test_snapshot_index_covers_every_family_on_every_cloud_that_sells_it(snapshot):
    con, pages = snapshot
    sold = set(con.execute("select distinct accelerators.family, offers.cloud from marts.offers as offers "
                           "inner join catalog.accelerators as accelerators using (accelerator_id)").fetchall())
    assert sold == {("cpu", "aws"), ("cpu", "azure"), ("cpu", "gcp"), ("gpu", "aws"), ("gpu", "azure"),
                    ("gpu", "gcp"), ("inferentia", "aws"), ("tpu", "gcp"), ("trainium", "aws")}
    coverage = reports._offer_coverage(con, AS_OF)
    assert {(family, cloud) for family, cloud, ranked, _, _ in coverage
            if family != "unknown" and int(ranked) > 0} == sold  # each family ranked on every cloud that sells it
    index = pages["index.md"]
    table = index[index.index("| family | cloud | ranked | excluded | unknown |"):index.index("## Sources")]
    for family, cloud, ranked, excluded, unknown_count in coverage:
        assert f"| {family} | {cloud} | {ranked} | {excluded} | {unknown_count} |" in table
    # the snapshot's one unknown listing: Azure's NC4as T4 v3 (standardNCASv3_T4Family has no api_names entry)
    assert [r for r in coverage if r[0] == "unknown"] == [["unknown", "azure", "0", "0", "1"]]
    [(instance_type, reason)] = con.execute("select instance_type, unknown_reason from marts.unknown_offers").fetchall()
    assert (instance_type, reason) == (
        NC_T4, "the listed device standardNCASv3_T4Family is not among the api_names in accelerators.yaml")

