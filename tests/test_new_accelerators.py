"""The newest accelerators (issue 14): sourced per-chip figures, and MLPerf rows that name them land."""

import csv
import datetime as dt

import pytest
import yaml
from builders import TRAINING_HEADER, land, mlperf_inference_result, training_csv_row

from flows.catalog import CatalogError, load_catalog
from flows.sources import mlperf_inference, mlperf_training

AS_OF = dt.date(2026, 11, 30)

NEW_ACCELERATORS = {"gb200-186gb", "gb300-288gb", "b300-sxm-270gb", "h200-nvl-141gb", "mi325x-256gb",
                    "mi355x-288gb", "tpu7x", "trainium3"}

# accelerator_model_name strings as MLPerf Inference v5.1 submitters' system JSON write them (v6.x for B300)
INFERENCE_STRINGS = {
    "NVIDIA GB200": "gb200-186gb",
    "NVIDIA GB300": "gb300-288gb",
    "NVIDIA H200-NVL-141GB": "h200-nvl-141gb",
    "AMD Instinct MI325X 256GB HBM3e": "mi325x-256gb",
    "AMD Instinct MI355X 288GB HBM3e": "mi355x-288gb",
    "NVIDIA B300-SXM-270GB": "b300-sxm-270gb",
}


def figures(catalog, acc_id):
    acc = catalog.accelerators.accelerators[acc_id]
    return ({p: f.value for p, f in acc.peak_tflops.items()},
            acc.memory_gb.value, acc.memory_bandwidth_tbps.value, acc.tdp_w.value)


def test_the_catalog_loads_with_every_new_accelerator(catalog):
    assert set(catalog.accelerators.accelerators) >= NEW_ACCELERATORS
    assert catalog.accelerators.accelerators["tpu7x"].family == "tpu"
    assert catalog.accelerators.accelerators["trainium3"].family == "trainium"


def test_gb200_figures_are_per_gpu_not_per_rack(catalog):
    # FACTS-2 (a) KLOCK-B200, the GB200 variant at 1,200 W; memory GPUHUNT "GB200 memory=186"
    assert figures(catalog, "gb200-186gb") == (
        {"bf16": 2500, "fp8": 5000, "int8": None, "fp4": 10000}, 186, 8.0, 1200)


def test_gb300_figures(catalog):
    # FACTS-2 (a) VERDA, "performance numbers without sparsity"
    assert figures(catalog, "gb300-288gb") == (
        {"bf16": 2500, "fp8": 5000, "int8": None, "fp4": 15000}, 279, 8.0, 1400)


def test_b300_leaves_unverified_fp4_and_tdp_null(catalog):
    # FACTS-2 (a) KLOCK-B300 (BF16, FP8, bandwidth), GPUHUNT 270 usable; FP4 and TDP: sources conflict
    assert figures(catalog, "b300-sxm-270gb") == (
        {"bf16": 2250, "fp8": 4500, "int8": None, "fp4": None}, 270, 8.0, None)
    b300 = catalog.accelerators.accelerators["b300-sxm-270gb"]
    assert (b300.tdp_w.source, b300.peak_tflops["fp4"].source) == ("unverified-in-reference",) * 2


def test_h200_nvl_has_memory_and_power_but_no_peak(catalog):
    # FACTS-2 (a) AIW-H200 (141 GB, 4.8 TB/s), SAUL (600 W PCIe); NVL TFLOPS unverified
    assert figures(catalog, "h200-nvl-141gb") == ({"bf16": None, "fp8": None, "int8": None}, 141, 4.8, 600)


def test_amd_mi325x_and_mi355x(catalog):
    # FACTS-2 (a) AA-325: 256 GB, 6.0 TB/s, 1,307.4 BF16, 2,614.9 FP8, 1,000 W
    assert figures(catalog, "mi325x-256gb") == ({"bf16": 1307.4, "fp8": 2614.9, "int8": None}, 256, 6.0, 1000)
    # FACTS-2 (a) TOMS: 288 GB, 8.0 TB/s, 1,400 W; FP8 ~5,000 from an ISSCC report; BF16 and FP4 unverified
    assert figures(catalog, "mi355x-288gb") == (
        {"bf16": None, "fp8": 5000, "int8": None, "fp4": None}, 288, 8.0, 1400)


def test_tpu7x_and_trainium3(catalog):
    # FACTS-2 (a) G-TPU7X: 192 GiB (192 x 1.073741824 = 206.16 GB), 7,380 GB/s, 2,307 BF16, 4,614 FP8; TDP unverified
    assert figures(catalog, "tpu7x") == ({"bf16": 2307, "fp8": 4614, "int8": None}, 206.16, 7.38, None)
    # FACTS-2 (a) N-TRN3: 144 GiB (144 x 1.073741824 = 154.62 GB), 671 BF16, 2,517 MXFP8 and MXFP4; bandwidth 4.9 vs
    # 4.7 -> null
    assert figures(catalog, "trainium3") == (
        {"bf16": 671, "fp8": 2517, "int8": None, "fp4": 2517}, 154.62, None, None)


def test_checked_entries_keep_their_figures(catalog):
    # FACTS-2 (a) checks: Trainium2 N-TRN2 / N-TRN2-NKI (96 GiB = 96 x 1.073741824 = 103.08 GB); MI300X JW-300 and
    # AA-325
    assert figures(catalog, "trainium2") == ({"bf16": 667, "fp8": 1299, "int8": None}, 103.08, 2.9, None)
    assert figures(catalog, "mi300x-192gb") == ({"bf16": 1307.4, "fp8": 2614.9, "int8": 2614.9}, 192, 5.3, 750)


def test_every_new_figure_names_a_source(catalog):
    known = set(catalog.accelerators.sources)
    for acc_id in NEW_ACCELERATORS:
        acc = catalog.accelerators.accelerators[acc_id]
        for figure in [*acc.peak_tflops.values(), acc.memory_gb, acc.memory_bandwidth_tbps, acc.tdp_w]:
            assert figure.source in known, acc_id


def test_a_rack_figure_for_gb200_fails_the_per_chip_suite(catalog_copy):
    path = catalog_copy / "accelerators.yaml"
    data = yaml.safe_load(path.read_text())
    data["accelerators"]["gb200-186gb"]["peak_tflops"]["bf16"]["value"] = 180000  # 72 GPUs x 2,500: the NVL72 rack
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(CatalogError, match=r"accelerators.gb200-186gb.peak_tflops.bf16: 180000 fails "
                                           r"peak_bf16_per_chip_plausible"):
        load_catalog(catalog_copy)


@pytest.mark.parametrize(("raw", "acc_id"), INFERENCE_STRINGS.items())
def test_the_mlperf_string_is_an_alias_of_the_new_chip(catalog, raw, acc_id):
    assert catalog.alias_map()[" ".join(raw.split()).casefold()] == acc_id


def test_mlperf_inference_rows_naming_the_new_chips_land(fresh_db, catalog):
    results = [mlperf_inference_result(f"5.1-{n:04d}", raw, "llama2-70b-99", "Offline", 10000.0 + n,
                                       per_node=4.0 if raw.startswith("NVIDIA GB") else 8.0)
               for n, raw in enumerate(INFERENCE_STRINGS)]
    rows = mlperf_inference.result_rows(results, "v5.1.json")
    load = land(fresh_db, catalog, "mlperf_inference", rows, "run-1", AS_OF)
    assert (load.rows_in, load.rows_landed, load.rows_quarantined) == (6, 6, 0)
    assert fresh_db.execute("select count(*) from ops.quarantine").fetchall() == [(0,)]
    landed = dict(fresh_db.execute(
        "select r.accelerator, a.accelerator_id from raw.mlperf_inference r "
        "join catalog.accelerator_aliases a on a.alias_key = r.accelerator_key").fetchall())
    assert landed == INFERENCE_STRINGS


def test_a_different_part_is_still_quarantined(fresh_db, catalog):
    rows = mlperf_inference.result_rows([
        mlperf_inference_result("a", "NVIDIA GB200", "llama2-70b-99", "Offline", 50000.0, per_node=4.0),
        mlperf_inference_result("b", "AMD Instinct MI350X 288GB HBM3e", "llama2-70b-99", "Offline", 40000.0),
    ], "v5.1.json")
    load = land(fresh_db, catalog, "mlperf_inference", rows, "run-1", AS_OF)
    assert (load.rows_landed, load.rows_quarantined) == (1, 1)
    assert fresh_db.execute("select expectation, unexpected_value from ops.quarantine").fetchall() == [
        ("accelerator_has_alias", "amd instinct mi350x 288gb hbm3e")]


def test_mlperf_training_rows_naming_gb200_and_mi325x_land(tmp_path, fresh_db, catalog):
    path = tmp_path / "detailed.csv"
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=TRAINING_HEADER)
        writer.writeheader()
        writer.writerows([
            training_csv_row("gb200-n18", "NVIDIA Blackwell GPU (GB200)", 72, 18, lora="1.9"),
            training_csv_row("mi325x-dlc", "AMD Instinct MI325X 256GB HBM3E DLC", 8, 1, lora="20.5"),
            training_csv_row("mi325x", "AMD Instinct MI325X 256GB HBM3e", 8, 1, lora="21.3"),
            training_csv_row("h200-nvl", "NVIDIA H200-NVL-141GB", 8, 1, lora="40.1"),
        ])
    rows = mlperf_training.read_file(path, "v5.0.csv")
    load = land(fresh_db, catalog, "mlperf_training", rows, "run-1", AS_OF)
    assert (load.rows_in, load.rows_landed, load.rows_quarantined) == (4, 4, 0)
