"""Catalog integrity: the shipped catalogs load, and broken ones fail naming file, entry and key."""

import os

import pytest
import yaml

from flows.catalog import CatalogError, load_catalog

FACTS_ACCELERATORS = {
    "h100-sxm-80gb", "h200-sxm-141gb", "b200-sxm-180gb", "a100-sxm-40gb", "a100-sxm-80gb", "l4-24gb",
    "l40s-48gb", "a10g-24gb", "mi300x-192gb", "tpu-v4", "tpu-v5e", "tpu-v5p", "tpu-v6e", "trainium1",
    "trainium2", "inferentia2",
}


def edit(path, change):
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def test_shipped_catalog_has_every_reference_accelerator_and_all_four_families(catalog):
    accs = catalog.accelerators.accelerators
    assert set(accs) >= FACTS_ACCELERATORS
    assert {a.family for a in accs.values()} >= {"gpu", "tpu", "trainium", "inferentia"}


def test_unknown_figures_stay_null_never_invented(catalog):
    a10g = catalog.accelerators.accelerators["a10g-24gb"]
    assert a10g.peak_tflops["bf16"].value is None
    assert a10g.memory_gb.value == 24
    assert catalog.accelerators.accelerators["trainium2"].tdp_w.value is None


def test_gcp_tpu_slice_names_count_tensorcores_for_v5p(catalog):
    by_type = {i.instance_type: i for i in catalog.instances.instances}
    # tpu-v5p-8 counts TensorCores: 8 / 2 = 4 chips; tpu-v5litepod-8 counts chips: 8
    assert by_type["tpu-v5p-8"].accelerator_count == 4
    assert by_type["tpu-v5litepod-8"].accelerator_count == 8
    assert sum(c.quantity for c in by_type["a3-highgpu-8g"].price_components if "GPU" in c.sku_description_prefix) == 8


def test_workloads_required_by_the_skeleton_exist(catalog):
    assert {"llama2-70b-lora-finetune", "gpt3-175b-pretrain", "llama2-70b-chat", "llama2-70b-batch"} <= set(
        catalog.workloads.workloads)


def test_unknown_key_is_rejected_with_file_entry_and_key(catalog_copy):
    edit(catalog_copy / "accelerators.yaml",
         lambda d: d["accelerators"]["h100-sxm-80gb"].update({"memroy_gb": 80}))
    with pytest.raises(CatalogError) as err:
        load_catalog(catalog_copy)
    assert str(err.value) == (
        "accelerators.yaml: accelerators.h100-sxm-80gb.memroy_gb: unknown key (not part of the accelerators.yaml schema)"
    )


def test_dangling_accelerator_reference_names_instance_and_key(catalog_copy):
    def change(d):
        d["instances"][0]["accelerator"] = "h900-imaginary"
    edit(catalog_copy / "instances.yaml", change)
    with pytest.raises(CatalogError) as err:
        load_catalog(catalog_copy)
    assert "instances.yaml: instances[0] (aws:p5.48xlarge).accelerator: unknown accelerator 'h900-imaginary'" in str(err.value)


def test_dangling_model_reference_in_a_workload(catalog_copy):
    edit(catalog_copy / "workloads.yaml", lambda d: d["workloads"]["llama2-70b-chat"].update({"model": "llama-9"}))
    with pytest.raises(CatalogError, match=r"workloads.yaml: workloads.llama2-70b-chat.model: unknown model 'llama-9'"):
        load_catalog(catalog_copy)


def test_alias_claimed_by_two_accelerators_is_rejected(catalog_copy):
    edit(catalog_copy / "accelerators.yaml",
         lambda d: d["accelerators"]["h200-sxm-141gb"]["aliases"].append("nvidia h100-sxm-80gb"))
    with pytest.raises(CatalogError, match=r"accelerators.h200-sxm-141gb.aliases: 'nvidia h100-sxm-80gb' is already "
                                           r"an alias of 'h100-sxm-80gb'"):
        load_catalog(catalog_copy)


def test_wrong_type_names_key_and_value(catalog_copy):
    edit(catalog_copy / "instances.yaml", lambda d: d["instances"][1].update({"accelerator_count": "eight"}))
    with pytest.raises(CatalogError, match=r"instances.yaml: instances\[1\] \(aws:p5.4xlarge\).accelerator_count: "
                                           r".*integer.* \(got 'eight'\)"):
        load_catalog(catalog_copy)


def test_snapshot_file_that_does_not_exist(catalog_copy):
    edit(catalog_copy / "sources.yaml",
         lambda d: d["sources"]["aws_pricing"]["files"][0].update({"path": "snapshot/missing.json"}))
    with pytest.raises(CatalogError, match=r"sources.yaml: sources.aws_pricing.files\[0\].path: no such file "
                                           r"'snapshot/missing.json'"):
        load_catalog(catalog_copy)


def test_yaml_syntax_error_names_the_file(catalog_copy):
    (catalog_copy / "models.yaml").write_text("models:\n  llama: [unclosed\n")
    with pytest.raises(CatalogError, match=r"^models.yaml: not valid YAML"):
        load_catalog(catalog_copy)


def test_unknown_key_in_a_list_entry_names_the_entry(catalog_copy):
    edit(catalog_copy / "instances.yaml", lambda d: d["instances"][0].update({"memroy_gib": 2048}))
    with pytest.raises(CatalogError) as err:
        load_catalog(catalog_copy)
    assert str(err.value) == ("instances.yaml: instances[0] (aws:p5.48xlarge).memroy_gib: unknown key "
                              "(not part of the instances.yaml schema)")


def test_workload_without_a_kind(catalog_copy):
    edit(catalog_copy / "workloads.yaml", lambda d: d["workloads"]["llama2-70b-chat"].pop("kind"))
    with pytest.raises(CatalogError) as err:
        load_catalog(catalog_copy)
    assert str(err.value) == ("workloads.yaml: workloads.llama2-70b-chat.kind: missing or unknown kind "
                              "(expected 'training' or 'inference')")


def test_a_key_given_twice_is_an_error_not_a_silent_overwrite(catalog_copy):
    path = catalog_copy / "workloads.yaml"
    path.write_text(path.read_text() + "  llama2-70b-batch:\n    kind: inference\n")
    with pytest.raises(CatalogError, match=r"^workloads.yaml: not valid YAML: .*key 'llama2-70b-batch' appears twice "
                                           r"\(first on line \d+\)"):
        load_catalog(catalog_copy)


def test_the_same_alias_twice_in_one_accelerator_is_rejected(catalog_copy):
    edit(catalog_copy / "accelerators.yaml",
         lambda d: d["accelerators"]["h100-sxm-80gb"]["aliases"].append("NVIDIA  h100-SXM-80GB"))
    with pytest.raises(CatalogError, match=r"accelerators.h100-sxm-80gb.aliases: 'NVIDIA  h100-SXM-80GB' is already an "
                                           r"alias of this accelerator"):
        load_catalog(catalog_copy)


def test_a_live_block_with_a_typo_is_named_by_hweval_check(catalog_copy):
    edit(catalog_copy / "sources.yaml",
         lambda d: d["sources"]["aws_spot"]["live"].update({"region": ["us-east-1"]}))
    with pytest.raises(CatalogError, match=r"sources.yaml: sources.aws_spot.live: aws_spot: unknown live option\(s\) "
                                           r"region \(expected: instance_types, lookback_hours"):
        load_catalog(catalog_copy)


def test_a_live_list_of_a_plain_string_or_past_its_bound_is_named_by_hweval_check(catalog_copy):
    """A review's finding: `regions: "us-east-1"` passed the check and was read a character at a time (18 Price List
    calls for the regions 'u', 's', '-', ...), and 501 regions passed it to fail every live source's fan-out on Dask
    at once (flows/fanout.py's MAX_PARTS), or to be fetched one after another in threads."""
    from flows.sources._common import MAX_LIVE_LIST_ITEMS

    regions = [f"r-{n}" for n in range(MAX_LIVE_LIST_ITEMS + 1)]
    edit(catalog_copy / "sources.yaml", lambda d: (d["sources"]["aws_pricing"]["live"].update({"regions": regions}),
                                                   d["sources"]["aws_spot"]["live"].update({"regions": "us-east-1"})))
    with pytest.raises(CatalogError) as err:
        load_catalog(catalog_copy)
    assert [line for line in str(err.value).splitlines() if ".live:" in line] == [
        "sources.yaml: sources.aws_pricing.live: aws_pricing live options: 'regions': 501 items, more than the 500 a "
        "live option's list may hold (MAX_LIVE_LIST_ITEMS)",
        "sources.yaml: sources.aws_spot.live: aws_spot live options: 'regions': expected a non-empty list of names, got "
        "'us-east-1'"]


def test_the_l4_named_by_form_factor_and_memory_is_the_catalogs_l4(catalog):
    from flows.names import normalise_alias

    assert catalog.alias_map()[normalise_alias("NVIDIA L4-PCIe-24GB")] == "l4-24gb"
    assert catalog.alias_map()[normalise_alias("NVIDIA L4")] == "l4-24gb"


def test_a_grid_intensity_twice_or_without_a_source_names_the_entry(catalog_copy):
    def change(d):
        d["grid_intensity"].append({"cloud": "gcp", "region": "us-central1", "gco2e_per_kwh": 1.0, "source": "nobody"})
    edit(catalog_copy / "instances.yaml", change)
    with pytest.raises(CatalogError) as err:
        load_catalog(catalog_copy)
    assert str(err.value).splitlines() == [
        "instances.yaml: grid_intensity[2] (gcp:us-central1).source: unknown source 'nobody'",
        "instances.yaml: grid_intensity[2] (gcp:us-central1): declared twice (one figure per cloud and region)",
    ]


def test_an_objective_other_than_cost_energy_or_emissions_is_refused(catalog_copy):
    edit(catalog_copy / "workloads.yaml", lambda d: d["workloads"]["llama2-70b-batch"].update(objective="speed"))
    with pytest.raises(CatalogError, match=r"workloads.yaml: workloads.llama2-70b-batch.*objective.*'cost', "
                                           r"'energy' or 'emissions'"):
        load_catalog(catalog_copy)


@pytest.mark.parametrize(("precisions", "message"), [
    (["bf16", "fp8", "fp16"], "fp16 and bf16 are one 16-bit class .*: list one of them"),
    (["fp8", "bf16", "fp8"], "fp8 is listed twice: list it once"),
])
def test_a_precision_class_is_listed_once(catalog_copy, precisions, message):
    # the SQL matches results and estimates by class (fp16 counts as bf16): listing a class twice would count each
    # 16-bit result and estimate twice
    edit(catalog_copy / "workloads.yaml", lambda d: d["workloads"]["llama2-70b-batch"].update(precisions=precisions))
    with pytest.raises(CatalogError, match=rf"workloads.yaml: workloads.llama2-70b-batch.*precisions.*{message}"):
        load_catalog(catalog_copy)


def test_a_catalog_loaded_ahead_is_taken_once_and_only_while_its_files_are_unchanged(catalog_copy, tmp_path):
    """`hweval run` loads the catalog while Prefect's server starts; the flow takes that one instead of loading again."""
    from flows.catalog import load_catalog_ahead, take_catalog_loaded_ahead

    loaded = load_catalog_ahead(catalog_copy)
    assert take_catalog_loaded_ahead(catalog_copy) is loaded
    assert take_catalog_loaded_ahead(catalog_copy) is None  # once

    load_catalog_ahead(catalog_copy)
    assert take_catalog_loaded_ahead(tmp_path) is None  # another folder: not this catalog
    assert take_catalog_loaded_ahead(catalog_copy) is None  # and the one kept is gone: a take is the only one

    load_catalog_ahead(catalog_copy)
    with (catalog_copy / "workloads.yaml").open("a") as f:
        f.write("# edited after the load\n")
    assert take_catalog_loaded_ahead(catalog_copy) is None  # loaded again by the flow, with the edit

    load_catalog_ahead(catalog_copy)
    workloads = catalog_copy / "workloads.yaml"
    text = workloads.read_text()
    workloads.write_text(text.replace("# edited after the load", "# EDITED after the load"))  # the same size
    os.utime(workloads, ns=(workloads.stat().st_atime_ns, workloads.stat().st_mtime_ns + 1_000_000))
    assert take_catalog_loaded_ahead(catalog_copy) is None

    load_catalog_ahead(catalog_copy)
    (catalog_copy / "expectations" / "notes.txt").write_text("a file added under the folder")
    assert take_catalog_loaded_ahead(catalog_copy) is None

    (catalog_copy / "workloads.yaml").write_text("workloads: [\n")  # not YAML: raises, and nothing is kept
    with pytest.raises(CatalogError, match="workloads.yaml"):
        load_catalog_ahead(catalog_copy)
    assert take_catalog_loaded_ahead(catalog_copy) is None


def test_a_workload_cannot_take_the_name_of_a_page_of_the_report(catalog_copy):
    # its page would be reports/offers.md and its ranking offers.csv: the offers page's own files
    edit(catalog_copy / "workloads.yaml",
         lambda d: d["workloads"].update(offers=d["workloads"].pop("llama2-70b-batch")))
    with pytest.raises(CatalogError, match=r"workloads.yaml: workloads: .*'offers' is the name of a page of the "
                                           r"report \(offers.md\): a workload cannot take it \(reserved: index, "
                                           r"offers, estimates\)"):
        load_catalog(catalog_copy)


@pytest.mark.parametrize(("workload", "task"), [
    ("llama2-70b-chat", "mlperf_inference_tasks.llama2-70b"),  # Llama-2-70B measurements ranked for an 8B model
    ("gpt3-175b-pretrain", "mlperf_training_tasks.gpt3"),
    ("llama2-70b-lora-finetune", "mlperf_training_tasks.llama2_70b_lora"),  # declared for its model only
])
def test_a_workload_must_serve_the_model_its_benchmark_task_measures(catalog_copy, workload, task):
    measured = {"llama2-70b-chat": "llama-2-70b", "gpt3-175b-pretrain": "gpt-3-175b",
                "llama2-70b-lora-finetune": "llama-2-70b"}[workload]
    benchmark_task = task.split(".", 1)[1]
    edit(catalog_copy / "workloads.yaml", lambda d: d["workloads"][workload].update(model="llama-3.1-8b"))
    with pytest.raises(CatalogError) as err:
        load_catalog(catalog_copy)
    assert str(err.value) == (f"workloads.yaml: workloads.{workload}.model: 'llama-3.1-8b', but its benchmark task "
                              f"'{benchmark_task}' measures '{measured}' (models.yaml: {task}.model); expected the "
                              f"task's model, whose measurements the workload ranks by")


def test_a_benchmark_task_models_yaml_does_not_declare_leaves_the_model_unchecked(catalog_copy):
    edit(catalog_copy / "models.yaml", lambda d: d["mlperf_training_tasks"].pop("llama2_70b_lora"))
    edit(catalog_copy / "workloads.yaml", lambda d: d["workloads"]["llama2-70b-lora-finetune"].update(
        model="llama-3.1-8b"))
    assert load_catalog(catalog_copy).workloads.workloads["llama2-70b-lora-finetune"].model == "llama-3.1-8b"


@pytest.mark.parametrize(("task", "error"), [
    ({"model": "llama-2-70b", "sequence_length": 8192},
     ("tokens_per_sample missing: a task that calibrates the MFU gives sequence_length and tokens_per_sample; one "
      "that only names its model gives neither")),
    ({"model": "llama-2-70b", "flops_per_token": 4},
     ("flops_per_token without sequence_length and tokens_per_sample: a task that only names its model calibrates "
      "nothing")),
])
def test_a_training_task_calibrates_with_its_sequence_and_tokens_or_only_names_its_model(catalog_copy, task, error):
    edit(catalog_copy / "models.yaml", lambda d: d["mlperf_training_tasks"].update(llama2_70b_lora=task))
    with pytest.raises(CatalogError) as err:
        load_catalog(catalog_copy)
    assert f"models.yaml: mlperf_training_tasks.llama2_70b_lora: Value error, {error}" in str(err.value)


GOOGLE_V5P = {"submitter": "Google", "accelerator": "tpu-v5p", "precision": "int8",
              "source": "mlperf-training-v4.0-google-gpt3"}


@pytest.mark.parametrize(("trained_at", "error"), [
    # a precision the chip lists no peak at: its results could not be estimated there
    ([GOOGLE_V5P | {"precision": "fp4"}],
     "models.yaml: mlperf_training_tasks.gpt3.trained_at[0].precision: fp4 has no peak_tflops for tpu-v5p in "
     "accelerators.yaml: its results cannot be estimated there"),
    ([GOOGLE_V5P | {"accelerator": "tpu-v9"}],
     "models.yaml: mlperf_training_tasks.gpt3.trained_at[0].accelerator: unknown accelerator 'tpu-v9'"),
    ([GOOGLE_V5P | {"source": "a-blog"}],
     "models.yaml: mlperf_training_tasks.gpt3.trained_at[0].source: unknown source 'a-blog'"),
    # one precision a submitter and chip, whatever the case of the submitter's name (the join ignores it)
    ([GOOGLE_V5P, GOOGLE_V5P | {"submitter": "GOOGLE", "precision": "bf16"}],
     "models.yaml: mlperf_training_tasks.gpt3: Value error, trained_at[1]: GOOGLE on tpu-v5p declared twice (one "
     "precision a submitter and accelerator)"),
    # nor with spaces around it (stripped, as the join trims the landed submitter)
    ([GOOGLE_V5P, GOOGLE_V5P | {"submitter": " Google ", "precision": "bf16"}],
     "models.yaml: mlperf_training_tasks.gpt3: Value error, trained_at[1]: Google on tpu-v5p declared twice"),
    ([GOOGLE_V5P | {"submitter": "  "}], "models.yaml: mlperf_training_tasks.gpt3.trained_at.0.submitter: String "
                                         "should have at least 1 character"),
    ([GOOGLE_V5P | {"precision": "int3"}], "models.yaml: mlperf_training_tasks.gpt3.trained_at.0.precision: Input "
                                           "should be"),
])
def test_a_declared_training_precision_names_a_known_chip_a_peak_it_lists_and_its_source(catalog_copy, trained_at,
                                                                                        error):
    edit(catalog_copy / "models.yaml", lambda d: d["mlperf_training_tasks"]["gpt3"].update(trained_at=trained_at))
    with pytest.raises(CatalogError) as err:
        load_catalog(catalog_copy)
    assert error in str(err.value)


def test_a_declared_fp16_stands_on_the_bf16_peak_as_the_models_take_it(catalog_copy):
    # int_accelerator_precisions_listed gives a chip without an fp16 figure its bf16 one: the H100 lists none
    edit(catalog_copy / "models.yaml", lambda d: d["mlperf_training_tasks"]["gpt3"].update(
        trained_at=[GOOGLE_V5P | {"accelerator": "h100-sxm-80gb", "precision": "fp16"}]))
    [declared] = load_catalog(catalog_copy).models.mlperf_training_tasks["gpt3"].trained_at
    assert (declared.accelerator, declared.precision) == ("h100-sxm-80gb", "fp16")


def test_a_task_that_only_names_its_model_declares_no_training_precision(catalog_copy):
    edit(catalog_copy / "models.yaml", lambda d: d["mlperf_training_tasks"]["llama2_70b_lora"].update(
        trained_at=[GOOGLE_V5P]))
    with pytest.raises(CatalogError) as err:
        load_catalog(catalog_copy)
    assert ("models.yaml: mlperf_training_tasks.llama2_70b_lora: Value error, trained_at without sequence_length and "
            "tokens_per_sample: a task that only names its model calibrates nothing") in str(err.value)


@pytest.mark.parametrize("change", [
    lambda tasks: tasks["gpt3"].pop("flops_per_token"),  # unset: 6 (dense), as its description says
    # no precision declared: the table keeps its columns and the back-test assumes every result's
    lambda tasks: tasks["gpt3"].pop("trained_at"),
    # only the model-only LoRA task left: its figures are NULL in every row (a second build: make test-slow)
    pytest.param(lambda tasks: tasks.pop("gpt3"), marks=pytest.mark.slow),
])
def test_training_task_figures_left_unset_are_typed_and_the_models_build(catalog_copy, fresh_db, change):
    import datetime as dt

    from flows import transform, warehouse

    edit(catalog_copy / "models.yaml", lambda d: change(d["mlperf_training_tasks"]))
    warehouse.load_catalog_tables(fresh_db, load_catalog(catalog_copy))
    types = dict(fresh_db.execute("select column_name, data_type from information_schema.columns where table_schema "
                                  "= 'catalog' and table_name = 'mlperf_training_tasks'").fetchall())
    # an all-NULL column would be typed VARCHAR, and int_training_backtest.sql's arithmetic on it fail to bind
    assert (types["sequence_length"], types["tokens_per_sample"], types["flops_per_token"]) == (
        "BIGINT", "DOUBLE", "DOUBLE")
    transform.build_models(fresh_db, "run-1", dt.date(2026, 11, 30))


@pytest.mark.parametrize(("key", "value", "error"), [
    ("ttft_ms", -5, "Input should be greater than 0 (got -5)"),
    ("tpot_ms", 0, "Input should be greater than 0 (got 0)"),
    ("ttft_ms", 3_600_001, "Input should be less than or equal to 3600000 (got 3600001)"),
])
def test_a_workload_slo_is_a_positive_latency_of_at_most_an_hour(catalog_copy, key, value, error):
    edit(catalog_copy / "workloads.yaml", lambda d: d["workloads"]["llama2-70b-chat"]["slo"].update({key: value}))
    with pytest.raises(CatalogError) as err:
        load_catalog(catalog_copy)
    assert str(err.value) == f"workloads.yaml: workloads.llama2-70b-chat.slo.{key}: {error}"


@pytest.mark.parametrize(("text", "shown"), [
    ('"a string"\n', "'a string' (str)"),
    ("- models\n- mlperf_training_tasks\n", "['models', 'mlperf_training_tasks'] (list)"),
    ("42\n", "42 (int)"),
])
def test_a_catalog_file_that_is_not_a_mapping_says_so(catalog_copy, text, shown):
    (catalog_copy / "models.yaml").write_text(text)
    with pytest.raises(CatalogError) as err:
        load_catalog(catalog_copy)
    # it said "models.yaml: : Input should be a valid dictionary ...", with an empty key
    assert str(err.value) == (f"models.yaml: the file holds {shown}, not a mapping; expected a mapping of keys at its "
                              f"top (models, mlperf_training_tasks, mlperf_inference_tasks)")
