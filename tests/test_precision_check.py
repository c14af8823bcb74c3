"""The MLPerf Inference precision cross-check: a declared precision the submitter's or the chip's other results
contradict is marked doubtful, with the evidence in words, and the label of a measured candidate says so."""

import datetime as dt
from contextlib import closing

import pytest
from builders import aws_page, aws_product, land, mlperf_inference_result, module_warehouse

from flows import transform
from flows.sources import aws_pricing, mlperf_inference
from flows.warehouse import fetch_dicts

AS_OF = dt.date(2026, 11, 30)
RUN = "run-precision"
H200 = "NVIDIA H200-SXM-141GB"
H100 = "NVIDIA H100-SXM-80GB"


def result(result_id, accelerator, scenario, tokens_per_s_per_chip, *, submitter, version, precision):
    """One llama2-70b-99 result of an 8-chip system, given per chip."""
    return mlperf_inference_result(result_id, accelerator, "llama2-70b-99", scenario, 8 * tokens_per_s_per_chip,
                                   precision=precision) | {"Submitter": submitter, "version": version}


@pytest.fixture(scope="module")
def built_file(tmp_path_factory, empty_warehouse, catalog):
    path, con = module_warehouse(tmp_path_factory, empty_warehouse, "precision")
    with closing(con):
        land(con, catalog, "aws_pricing", aws_pricing.rows_from_pages([("p", aws_page(
            aws_product("p5en.48xlarge", "63.2960000000", sku="A000000000000001"),
        ))]), RUN, AS_OF)
        land(con, catalog, "mlperf_inference", mlperf_inference.result_rows([
            # H200 Offline, one submitter: v5.1 fp8 4,400 / v4.1 fp16 4,000 = 1.10 <= 1.15 -> the fp16 row is doubtful
            result("acme-41", H200, "Offline", 4000.0, submitter="Acme", version="v4.1", precision="fp16"),
            result("acme-51", H200, "Offline", 4400.0, submitter="Acme", version="v5.1", precision="fp8"),
            # H100 Offline, one submitter: 5,200 / 4,000 = 1.30 > 1.15 -> not doubtful (what fp8 is expected to gain)
            result("beta-41", H100, "Offline", 4000.0, submitter="Beta", version="v4.1", precision="fp16"),
            result("beta-51", H100, "Offline", 5200.0, submitter="Beta", version="v5.1", precision="fp8"),
            # H100 Server, two submitters: fp16 4,000 > the chip's best fp8 3,000 x 1.15 = 3,450 -> doubtful
            result("gamma-41", H100, "Server", 4000.0, submitter="Gamma", version="v4.1", precision="fp16"),
            result("delta-51", H100, "Server", 3000.0, submitter="Delta", version="v5.1", precision="fp8"),
            # H200 Server, two submitters near-equal: 4,300 / 4,000 = 1.075 <= 1.15 -> doubtful (one vendor's software)
            result("epsilon-41", H200, "Server", 4000.0, submitter="Epsilon", version="v4.1", precision="fp16"),
            result("zeta-51", H200, "Server", 4300.0, submitter="Zeta", version="v5.1", precision="fp8"),
        ], "s.json"), RUN, AS_OF)
        transform.build_models(con, RUN, AS_OF)
        transform.run_sql_tests(con)
    return path


@pytest.fixture
def built(copy_of, built_file):
    """This test's own copy of the warehouse `built_file` landed and built once for the module."""
    return copy_of(built_file)


def staged(con):
    return {r["result_id"]: r for r in fetch_dicts(
        con, "select result_id, precision_doubtful, precision_note from staging.stg_mlperf_inference__results")}


def test_a_declaration_the_same_submitters_lower_precision_round_matches_is_doubtful(built):
    got = staged(built)
    assert got["acme-41"] == {
        "result_id": "acme-41", "precision_doubtful": True,
        "precision_note": "declared fp16, but Acme's v5.1 fp8 result on h200-sxm-141gb runs at 4,400.0 tokens/s per "
                          "chip, within 15% of this row's 4,000.0: likely fp8",
    }
    # the fp8 row has no lower-precision result to be compared with
    assert (got["acme-51"]["precision_doubtful"], got["acme-51"]["precision_note"]) == (False, None)


def test_a_lower_precision_round_well_ahead_leaves_the_declaration_alone(built):
    got = staged(built)
    # 5,200 / 4,000 = 1.30, outside 1 / 1.15 .. 1.15
    assert (got["beta-41"]["precision_doubtful"], got["beta-41"]["precision_note"]) == (False, None)


def test_another_submitters_lower_precision_round_near_equal_makes_it_doubtful(built):
    # systems of one chip vendor share its software: Zeta's v5.1 fp8 4,300 / Epsilon's v4.1 fp16 4,000 = 1.075
    assert staged(built)["epsilon-41"]["precision_note"] == (
        "declared fp16, but Zeta's v5.1 fp8 result on h200-sxm-141gb runs at 4,300.0 tokens/s per chip, within 15% "
        "of this row's 4,000.0: likely fp8")


def test_a_16_bit_declaration_faster_than_the_chips_best_lower_precision_is_doubtful(built):
    # 4,000 > 3,000 x 1.15 = 3,450
    assert staged(built)["gamma-41"] == {
        "result_id": "gamma-41", "precision_doubtful": True,
        "precision_note": "declared fp16, but this row's 4,000.0 tokens/s per chip is more than 15% above Delta's "
                          "v5.1 fp8 result on h100-sxm-80gb (3,000.0), the best at a lower precision: likely fp8 or "
                          "lower",
    }


def test_precision_doubtful_is_never_null(built):
    assert built.execute("select count(*) from staging.stg_mlperf_inference__results "
                         "where precision_doubtful is null").fetchall() == [(0,)]


def test_the_ranking_label_carries_the_note(built):
    got = {r["precision"]: r for r in fetch_dicts(
        built, "select precision, benchmark_label, precision_doubtful from marts.rankings "
               "where workload_id = 'llama2-70b-batch' and offer_id = 'aws:us-east-1:p5en.48xlarge:on_demand'")}
    assert got["fp16"] == {
        "precision": "fp16", "precision_doubtful": True,
        "benchmark_label": "MLPerf Inference v4.1 llama2-70b-99 Offline: Acme Test system (8x NVIDIA H200-SXM-141GB); "
                           "precision doubtful: declared fp16, but Acme's v5.1 fp8 result on h200-sxm-141gb runs at "
                           "4,400.0 tokens/s per chip, within 15% of this row's 4,000.0: likely fp8",
    }
    assert got["fp8"] == {
        "precision": "fp8", "precision_doubtful": False,
        "benchmark_label": "MLPerf Inference v5.1 llama2-70b-99 Offline: Acme Test system (8x NVIDIA H200-SXM-141GB)",
    }
    costs = fetch_dicts(built, "select precision, precision_doubtful from marts.inference_costs "
                               "where workload_id = 'llama2-70b-batch' order by precision")
    assert costs == [{"precision": "fp16", "precision_doubtful": True}, {"precision": "fp8", "precision_doubtful": False}]
    # training candidates' precision is not cross-checked: false, never null
    assert built.execute("select count(*) from marts.rankings where precision_doubtful is null").fetchall() == [(0,)]
