"""Hostile catalogs and price sheets: alias bombs, deep nesting and huge values fail fast with short messages, and
what `hweval check` passes `hweval run` can load."""

from __future__ import annotations

import datetime as dt
import time
import tracemalloc

import pytest
import yaml

from flows import catalog_models, safe_yaml, warehouse
from flows.catalog import MAX_ERROR_LINES, CatalogError, load_catalog
from flows.cli import main as hweval
from flows.sources import price_sheet
from flows.sources._common import SourceFormatError


def edit(path, change):
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def billion_laughs(key: str = "lol", levels: int = 9, fan: int = 9) -> str:
    """A YAML mapping whose 9 levels of 9-fold aliased lists expand to 9**9 (387 million) strings."""
    lines = [f"{key}0: &{key}0 [" + ", ".join(['"lol"'] * fan) + "]"]
    lines += [f"{key}{i}: &{key}{i} [" + ", ".join([f"*{key}{i - 1}"] * fan) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- alias expansion and nesting
BOMB_REFUSED_WITHIN_S = 30.0  # far below what expanding a billion-laughs document takes, far above a refusal's cost

def refused_fast(catalog_copy) -> str:
    """The message load_catalog refuses the catalog with, within BOMB_REFUSED_WITHIN_S."""
    started = time.perf_counter()
    with pytest.raises(CatalogError) as refused:
        load_catalog(catalog_copy)
    assert time.perf_counter() - started < BOMB_REFUSED_WITHIN_S
    return str(refused.value)


def test_a_billion_laughs_catalog_is_refused_fast_naming_the_file(catalog_copy):
    path = catalog_copy / "accelerators.yaml"
    path.write_text(path.read_text() + billion_laughs())
    # refused before any expansion: expanding 387 million strings would take minutes and gigabytes (the memory bound is
    # the test below); the time allows a slow, busy machine (the whole catalog load took 1.02 s on one in CI)
    message = refused_fast(catalog_copy)
    assert message.startswith("accelerators.yaml: refused: its aliases (*name) would expand its ")
    assert "MAX_YAML_ALIAS_NODES" in message and len(message) < 400


def test_a_billion_laughs_document_is_refused_before_it_is_built():
    tracemalloc.start()
    try:
        with pytest.raises(safe_yaml.YamlLimitError, match=r"at most 100,000 more than written"):
            safe_yaml.load(billion_laughs())
        _, peak_bytes = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak_bytes < 5_000_000


def test_a_billion_laughs_price_sheet_is_a_format_error_naming_the_file(tmp_path):
    path = tmp_path / "sheet.yaml"
    path.write_text(billion_laughs() + "entries: [*lol8]\n")
    started = time.perf_counter()
    with pytest.raises(SourceFormatError, match=r"^s.yaml: refused: its aliases \(\*name\) would expand"):
        price_sheet.read_file(path, "s.yaml")
    assert time.perf_counter() - started < BOMB_REFUSED_WITHIN_S


def test_a_block_reused_by_anchor_and_merge_key_still_loads(tmp_path):
    path = tmp_path / "sheet.yaml"
    path.write_text("defaults: &aws {kind: quote, cloud: aws, region: us-east-1, source: invoice 7}\n"
                    "entries:\n"
                    "  - {<<: *aws, instance_type: p5.48xlarge, usd_per_hour: 40}\n"
                    "  - {<<: *aws, instance_type: p5.4xlarge, usd_per_hour: 5}\n")
    rows = price_sheet.read_file(path, "s.yaml")
    assert [(r["cloud"], r["instance_type"], r["usd_per_hour"]) for r in rows] == [
        ("aws", "p5.48xlarge", 40.0), ("aws", "p5.4xlarge", 5.0)]


def test_a_catalog_aliasing_one_long_string_99000_times_is_refused_fast_naming_the_file(catalog_copy):
    # 99,000 aliases add 99,000 nodes, under MAX_YAML_ALIAS_NODES, but 990 million characters: load_catalog passed it,
    # and the catalog's digest() then took 15 s and 4 GB
    path = catalog_copy / "workloads.yaml"
    path.write_text(path.read_text().replace(
        "benchmark: {suite: mlperf_training, task: gpt3}",
        "benchmark: {suite: mlperf_training, task: gpt3, divisions: [&big " + "x" * 10_000 + ", "
        + ", ".join(["*big"] * 99_000) + "]}", 1))
    message = refused_fast(catalog_copy)
    assert message.startswith("workloads.yaml: refused: its aliases (*name) would expand its ")
    assert message.endswith(" (at most 10,000,000 more than written: MAX_YAML_ALIAS_CHARS in flows/safe_yaml.py)")


def test_aliases_may_add_up_to_max_yaml_alias_chars_characters_and_no_more():
    def aliases(count: int) -> str:
        return "a: [&s " + "x" * 10_000 + ", " + ", ".join(["*s"] * count) + "]\n"

    # written: "a" and the 10,000 x's, 10,001 characters; 1,000 aliases add 10,000,000, the bound itself
    assert len(safe_yaml.load(aliases(1_000))["a"]) == 1_001
    with pytest.raises(safe_yaml.YamlLimitError) as refused:
        safe_yaml.load(aliases(1_001))  # 10,010,000 added
    assert str(refused.value) == ("refused: its aliases (*name) would expand its 10,001 characters of values and keys "
                                  "to more than 10,010,001 (at most 10,000,000 more than written: "
                                  "MAX_YAML_ALIAS_CHARS in flows/safe_yaml.py)")


def test_an_alias_inside_its_own_anchor_is_refused():
    with pytest.raises(safe_yaml.YamlLimitError, match=r"an alias refers to a node that contains it"):
        safe_yaml.load("entries: &loop [1, *loop]\n")


def test_nesting_past_the_depth_limit_is_refused_not_a_recursion_error(catalog_copy):
    (catalog_copy / "models.yaml").write_text("models: " + "[" * 50_000 + "]" * 50_000 + "\n")
    with pytest.raises(CatalogError, match=r"^models.yaml: refused: nested deeper than 100 levels \(MAX_YAML_DEPTH"):
        load_catalog(catalog_copy)


# ---------------------------------------------------------------- error messages quote data briefly
# ---------------------------------------------------------------- libyaml's parser under the bounded loader
def test_the_catalogs_read_on_libyaml_are_what_pyyaml_alone_reads(catalog):
    # the parse is libyaml's (C) when PyYAML has it: the wheels this project locks do
    assert yaml.__with_libyaml__
    for path in sorted(catalog.root.glob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        assert safe_yaml.load(text, safe_yaml.UniqueKeyLoader) == yaml.load(
            text, Loader=safe_yaml.UniqueKeyLoader), path.name
    assert issubclass(safe_yaml._FAST[safe_yaml.UniqueKeyLoader], yaml.cyaml.CParser)


def test_nesting_past_the_depth_limit_is_refused_on_libyaml_too():
    # the depth bound is the Python composer's (BoundedSafeLoader.compose_node), kept above libyaml's parser: 101
    # nested lists are refused, 100 load
    nested = safe_yaml.load("[" * 100 + "]" * 100)
    depth = 0
    while nested:
        nested, depth = nested[0], depth + 1
    assert depth == 99  # the outermost list and 99 inside it: 100 levels
    with pytest.raises(safe_yaml.YamlLimitError, match=r"^refused: nested deeper than 100 levels"):
        safe_yaml.load("[" * 101 + "]" * 101)


def test_a_document_libyaml_refuses_and_pyyaml_reads_is_read(monkeypatch):
    # PyYAML is the reference: should libyaml refuse a document PyYAML reads, the document is read
    class Refusing:  # in place of the libyaml loader
        def __init__(self, stream):
            raise yaml.parser.ParserError("libyaml refused it")

    monkeypatch.setitem(safe_yaml._FAST, safe_yaml.BoundedSafeLoader, Refusing)
    assert safe_yaml.load("entries: [1, 2]\n") == {"entries": [1, 2]}


@pytest.mark.parametrize("text", ["a:\t1\n", "a: 1\t\n", "- x\t\n", "a:\n  - 1\t\n  - 2\n"])
def test_a_tab_libyaml_would_take_as_a_separator_is_refused_as_pyyaml_refuses_it(text):
    # libyaml reads each of these; PyYAML, the reference, refuses them, and so does the loader, in PyYAML's words
    assert yaml.load(text, Loader=yaml.CSafeLoader) is not None
    with pytest.raises(yaml.scanner.ScannerError) as pyyaml:
        yaml.load(text, Loader=safe_yaml.BoundedSafeLoader)
    with pytest.raises(yaml.scanner.ScannerError) as refused:
        safe_yaml.load(text)
    assert str(refused.value) == str(pyyaml.value)


@pytest.mark.parametrize(("text", "kind", "pyyaml_says"), [
    # libyaml says "found character that cannot start any token": PyYAML names the character
    ("\t- x\n", yaml.scanner.ScannerError, "found character '\\t' that cannot start any token"),
    # libyaml's marks carry no snippet: PyYAML quotes the line, with a caret under the second key
    ("a: 1\na: 2\n", yaml.constructor.ConstructorError, "key 'a' appears twice (first on line 1)"),
])
def test_a_refused_document_raises_pyyamls_own_message(text, kind, pyyaml_says):
    with pytest.raises(kind) as refused:
        safe_yaml.load(text, safe_yaml.UniqueKeyLoader)
    assert pyyaml_says in str(refused.value)
    assert str(refused.value).endswith("^")  # the snippet under PyYAML's mark


def test_a_megabyte_value_is_quoted_in_a_few_hundred_characters(catalog_copy):
    edit(catalog_copy / "accelerators.yaml", lambda d: d["accelerators"]["h100-sxm-80gb"].update(family="x" * 1_000_000))
    with pytest.raises(CatalogError) as refused:
        load_catalog(catalog_copy)
    message = str(refused.value)
    assert message.startswith("accelerators.yaml: accelerators.h100-sxm-80gb.family: Input should be 'gpu'")
    assert message.endswith("(1,000,000 characters))") and len(message) < 600


def test_a_megabyte_reference_and_a_megabyte_key_are_cut(catalog_copy):
    edit(catalog_copy / "instances.yaml", lambda d: d["instances"][0].update(source="s" * 1_000_000))
    edit(catalog_copy / "models.yaml", lambda d: d["mlperf_training_tasks"].update(
        {"t" * 1_000_000: {"model": "missing", "sequence_length": 1, "tokens_per_sample": 1}}))
    with pytest.raises(CatalogError) as refused:
        load_catalog(catalog_copy)
    lines = str(refused.value).splitlines()
    assert lines[0].startswith("instances.yaml: instances[0] (aws:p5.48xlarge).source: unknown source 'sssss")
    assert lines[1].startswith("models.yaml: mlperf_training_tasks.tttt")
    assert all(len(line) < 700 for line in lines)


def test_a_five_thousand_digit_number_is_refused_with_its_line(catalog_copy):
    path = catalog_copy / "models.yaml"
    text = path.read_text()
    path.write_text(text.replace("layers: 80\n", f"layers: {'9' * 5000}\n", 1))
    line = text[:text.index("layers: 80\n")].count("\n") + 1
    with pytest.raises(CatalogError) as refused:
        load_catalog(catalog_copy)
    assert str(refused.value) == (f"models.yaml: refused: a whole number of 5,000 digits at line {line}, past the "
                                  f"4,300 Python reads")


def test_a_four_hundred_digit_number_is_quoted_cut(catalog_copy):
    path = catalog_copy / "models.yaml"
    path.write_text(path.read_text().replace("layers: 80\n", f"layers: {'9' * 400}\n", 1))
    with pytest.raises(CatalogError) as refused:
        load_catalog(catalog_copy)
    assert str(refused.value) == ("models.yaml: models.llama-2-70b.layers: Input should be less than or equal to 1024 "
                                  "(got <an integer of about 400 digits>)")


# ---------------------------------------------------------------- bytes of a YAML file
def padded(text: str, size: int) -> str:
    """`text` with a comment line after it that makes it `size` bytes (ASCII): YAML that parses in a moment."""
    return text + "#" + "x" * (size - len(text) - 2) + "\n"


def test_a_price_sheet_past_max_yaml_file_bytes_is_refused_before_parsing_and_one_at_it_is_read(tmp_path):
    """A YAML price sheet shared max_file_bytes (256 MiB) with the CSV files: a 20 MB sheet took 48 s and 1.6 GB to
    parse. MAX_YAML_FILE_BYTES = 4 MiB = 4,194,304 bytes is refused by its size, before any of it is read."""
    sheet = ("entries:\n  - {kind: quote, cloud: aws, region: us-east-1, instance_type: p5.48xlarge, "
             "usd_per_hour: 30, source: q}\n")
    path = tmp_path / "sheet.yaml"
    path.write_text(padded(sheet, 4_194_304))
    assert [r["instance_type"] for r in price_sheet.read_file(path, "s.yaml")] == ["p5.48xlarge"]
    path.write_text(padded(sheet, 4_194_305))
    with pytest.raises(SourceFormatError) as refused:
        price_sheet.read_file(path, "s.yaml")
    assert str(refused.value) == (
        "s.yaml: refused before parsing: the file has 4,194,305 bytes, more than the 4,194,304 bytes (4 MiB) a YAML "
        "file may have (MAX_YAML_FILE_BYTES in flows/safe_yaml.py); a longer price sheet can be a CSV, read line by "
        "line")
    assert safe_yaml.MAX_YAML_FILE_BYTES == 4 * 1024 * 1024 == 4_194_304


def test_a_yaml_file_that_never_ends_is_refused_after_reading_no_more_than_the_limit(tmp_path):
    # /dev/zero says it has 0 bytes and never ends: read at most MAX_YAML_FILE_BYTES + 1 bytes, then refused
    endless = tmp_path / "endless.yaml"
    endless.symlink_to("/dev/zero")
    with pytest.raises(SourceFormatError, match=r"^s.yaml: refused before parsing: the file has more than 4,194,304 "
                                                r"bytes \(read as it grew\), more than the 4,194,304 bytes"):
        price_sheet.read_file(endless, "s.yaml")


def test_a_catalog_file_past_max_yaml_file_bytes_is_refused_before_parsing_naming_it(catalog_copy):
    """A 5 MB models.yaml took 33 s and 1 GB before the catalog model refused it; past 4 MiB it is refused unread."""
    path = catalog_copy / "models.yaml"
    path.write_text(padded(path.read_text(), 4_194_305))
    started = time.perf_counter()
    message = refused_fast(catalog_copy)
    assert time.perf_counter() - started < 5.0  # the comment alone parses in about 0.1 s; the catalog loads in ~1 s
    assert message == ("models.yaml: refused before parsing: the file has 4,194,305 bytes, more than the 4,194,304 "
                       "bytes (4 MiB) a YAML file may have (MAX_YAML_FILE_BYTES in flows/safe_yaml.py)")


def test_a_five_thousand_digit_price_is_a_format_error_naming_the_file(tmp_path):
    path = tmp_path / "sheet.yaml"
    path.write_text("entries:\n  - {kind: quote, usd_per_hour: " + "9" * 5000 + "}\n")
    with pytest.raises(SourceFormatError, match=r"^s.yaml: refused: a whole number of 5,000 digits at line 2"):
        price_sheet.read_file(path, "s.yaml")


def test_a_price_sheet_quotes_a_huge_value_briefly(tmp_path):
    path = tmp_path / "sheet.yaml"
    path.write_text("entries:\n  - {kind: quote, usd_per_hour: " + "x" * 1_000_000 + "}\n")
    with pytest.raises(SourceFormatError) as refused:
        price_sheet.read_file(path, "s.yaml")
    assert str(refused.value).startswith("s.yaml: entries[0].usd_per_hour: 'xxx")
    assert len(str(refused.value)) < 400


@pytest.mark.slow  # a whole run (or several): make test-slow and CI
def test_ten_thousand_errors_are_cut_to_a_count(catalog_copy):
    edit(catalog_copy / "instances.yaml", lambda d: d.update(instances=[
        {**d["instances"][0], "instance_type": f"t{i}", "accelerator": "nope"} for i in range(10_000)]))
    with pytest.raises(CatalogError) as refused:
        load_catalog(catalog_copy)
    lines = str(refused.value).splitlines()
    assert len(lines) == MAX_ERROR_LINES + 1 and lines[-1] == f"... and {10_000 - MAX_ERROR_LINES:,} more"


# ---------------------------------------------------------------- what `hweval check` passes, `hweval run` can load
def first_inference(d):
    return next(w for w in d["workloads"].values() if w["kind"] == "inference")


def first_training(d):
    return next(w for w in d["workloads"].values() if w["kind"] == "training")


@pytest.mark.parametrize(("file_name", "change", "message"), [
    # each passed `hweval check` and then failed `hweval run` with a traceback or a SQL error
    ("models.yaml", lambda d: d["models"]["llama-2-70b"].update(layers=10**20),
     "models.yaml: models.llama-2-70b.layers: Input should be less than or equal to 1024 (got 100000000000000000000)"),
    ("instances.yaml", lambda d: d["instances"][0].update(vcpu=10**20),
     "instances.yaml: instances[0] (aws:p5.48xlarge).vcpu: Input should be less than or equal to 2147483647"),
    ("workloads.yaml", lambda d: first_training(d).update(chips=2**40),
     "workloads.yaml: workloads.llama2-70b-lora-finetune.chips: Input should be less than or equal to 1000000"),
    ("models.yaml", lambda d: d["models"]["llama-2-70b"].update(params=1e30),
     "models.yaml: models.llama-2-70b.params: Input should be less than or equal to 100000000000000 (got 1e+30)"),
    ("accelerators.yaml", lambda d: d["accelerators"]["h100-sxm-80gb"]["memory_gb"].update(value=float("inf")),
     "accelerators.yaml: accelerators.h100-sxm-80gb.memory_gb.value: Input should be a finite number (got inf)"),
    ("accelerators.yaml", lambda d: d["accelerators"]["h100-sxm-80gb"]["memory_gb"].update(value=640),
     "accelerators.yaml: accelerators.h100-sxm-80gb.memory_gb: 640 fails memory_per_chip_plausible"),
    ("workloads.yaml", lambda d: d.update(workloads={}),
     "workloads.yaml: workloads: Dictionary should have at least 1 item after validation, not 0 (got {})"),
    ("sources.yaml", lambda d: d.update(sources={}),
     "sources.yaml: sources: Dictionary should have at least 1 item after validation, not 0 (got {})"),
    ("instances.yaml", lambda d: d["pricing_terms"].pop("spot"),
     ("workloads.yaml: workloads.llama2-70b-lora-finetune.pricing_terms: spot not declared under pricing_terms in "
      "instances.yaml")),
    ("accelerators.yaml", lambda d: d["accelerators"]["l4-24gb"]["aliases"].append("  "),
     "accelerators.yaml: accelerators.l4-24gb.aliases: '  ' is empty"),
    ("models.yaml", lambda d: d["models"]["llama-2-70b"].update(kv_heads=128),
     "models.yaml: models.llama-2-70b: Value error, kv_heads: 128 is more than heads (64)"),
    ("sources.yaml", lambda d: d["sources"]["aws_spot"]["files"][0].update(path="x" * 5000),
     "sources.yaml: sources.aws_spot.files[0].path: no such file 'xxxx"),
], ids=["int-past-duckdb", "vcpu-past-integer", "chips-past-integer", "params-overflow-chip-count", "inf-figure",
        "implausible-figure", "no-workloads", "no-sources", "undeclared-pricing-term", "empty-alias",
        "more-kv-heads-than-heads", "path-too-long"])
def test_what_run_would_reject_check_rejects_naming_file_entry_and_key(catalog_copy, file_name, change, message):
    edit(catalog_copy / file_name, change)
    with pytest.raises(CatalogError) as refused:
        load_catalog(catalog_copy)
    assert str(refused.value).startswith(message)


def a3_highgpu(d):
    return next(i for i in d["instances"] if i["instance_type"] == "a3-highgpu-8g")  # instances[21]


@pytest.mark.parametrize(("file_name", "change", "message"), [
    # each had no upper bound (or none at all): quantity 1e308 made the offer's usd_per_hour inf in marts.offers
    ("instances.yaml", lambda d: a3_highgpu(d)["price_components"][0].update(quantity=1.0e308),
     "instances.yaml: instances[21] (gcp:a3-highgpu-8g).price_components.0.quantity: Input should be less than or "
     "equal to 1048576 (got 1e+308)"),
    ("instances.yaml", lambda d: a3_highgpu(d).update(memory_gib=-1),
     "instances.yaml: instances[21] (gcp:a3-highgpu-8g).memory_gib: Input should be greater than 0 (got -1)"),
    ("instances.yaml", lambda d: a3_highgpu(d).update(memory_gib=1.0e300),
     "instances.yaml: instances[21] (gcp:a3-highgpu-8g).memory_gib: Input should be less than or equal to 1048576 "
     "(got 1e+300)"),
    ("instances.yaml", lambda d: d["pricing_terms"]["spot"].update(interruption_overhead=1.5),
     "instances.yaml: pricing_terms.spot.interruption_overhead: Input should be less than or equal to 1 (got 1.5)"),
    ("accelerators.yaml", lambda d: d["family_defaults"]["gpu"].update(pue=1.0e300),
     "accelerators.yaml: family_defaults.gpu.pue: Input should be less than or equal to 3 (got 1e+300)"),
    ("accelerators.yaml", lambda d: d["accelerators"]["h100-sxm-80gb"]["peak_tflops"]["fp8"].update(value=-1979),
     "accelerators.yaml: accelerators.h100-sxm-80gb.peak_tflops.fp8.value: Input should be greater than 0 (got -1979)"),
    ("accelerators.yaml", lambda d: d["accelerators"]["h100-sxm-80gb"]["peak_tflops"]["fp8"].update(value=1e300),
     "accelerators.yaml: accelerators.h100-sxm-80gb.peak_tflops.fp8.value: Input should be less than or equal to "
     "1000000 (got 1e+300)"),
    ("accelerators.yaml", lambda d: d["accelerators"]["h100-sxm-80gb"]["api_names"][0].update(memory_mib=2**40),
     "accelerators.yaml: accelerators.h100-sxm-80gb.api_names.0.memory_mib: Input should be less than or equal to "
     "1073741824 (got 1099511627776)"),
    ("workloads.yaml", lambda d: first_inference(d).update(months=1.0e300),
     "workloads.yaml: workloads.llama2-70b-chat.months: Input should be less than or equal to 1200 (got 1e+300)"),
    ("workloads.yaml", lambda d: d["workloads"]["llama31-8b-pretrain-1t"].update(deadline_hours=1.0e300),
     "workloads.yaml: workloads.llama31-8b-pretrain-1t.deadline_hours: Input should be less than or equal to 876000 "
     "(got 1e+300)"),
    ("models.yaml", lambda d: d["mlperf_training_tasks"]["gpt3"].update(flops_per_token=1.0e300),
     "models.yaml: mlperf_training_tasks.gpt3.flops_per_token: Input should be less than or equal to 100 (got 1e+300)"),
    ("models.yaml", lambda d: d["mlperf_training_tasks"]["gpt3"].update(tokens_per_sample=1.0e300),
     "models.yaml: mlperf_training_tasks.gpt3.tokens_per_sample: Input should be less than or equal to 10000000 "
     "(got 1e+300)"),
    ("sources.yaml", lambda d: d["sources"]["aws_pricing"].update(max_price_change=1.0e300),
     "sources.yaml: sources.aws_pricing.max_price_change: Input should be less than or equal to 1000 (got 1e+300)"),
    ("sources.yaml", lambda d: d.update(price_move_threshold=1.0e300),
     "sources.yaml: price_move_threshold: Input should be less than or equal to 100 (got 1e+300)"),
    ("sources.yaml", lambda d: d["sources"]["aws_pricing"].update(max_stale_days=10**9),
     "sources.yaml: sources.aws_pricing.max_stale_days: Input should be less than or equal to 3650 (got 1000000000)"),
    ("sources.yaml", lambda d: d["sources"]["aws_pricing"].update(max_pages=10**9),
     "sources.yaml: sources.aws_pricing.max_pages: Input should be less than or equal to 1000000 (got 1000000000)"),
    ("sources.yaml", lambda d: d["sources"]["aws_pricing"].update(max_file_bytes=2**41),
     "sources.yaml: sources.aws_pricing.max_file_bytes: Input should be less than or equal to 1099511627776 "
     "(got 2199023255552)"),
    ("sources.yaml", lambda d: d["sources"]["aws_pricing"].update(max_line_bytes=2**31),
     "sources.yaml: sources.aws_pricing.max_line_bytes: Input should be less than or equal to 1073741824 "
     "(got 2147483648)"),
], ids=["quantity", "memory-gib-negative", "memory-gib", "interruption-overhead", "pue", "figure-negative", "figure",
        "api-memory-mib", "months", "deadline-hours", "flops-per-token", "tokens-per-sample", "max-price-change",
        "price-move-threshold", "max-stale-days", "max-pages", "max-file-bytes", "max-line-bytes"])
def test_a_number_past_its_declared_bound_is_refused_naming_file_entry_and_key(catalog_copy, file_name, change,
                                                                              message):
    assert refusal(catalog_copy, file_name, change) == message


def refusal(catalog_copy, file_name: str, change) -> str:
    """The CatalogError loading the copied catalog gives once `change` is made to `file_name`."""
    edit(catalog_copy / file_name, change)
    with pytest.raises(CatalogError) as refused:
        load_catalog(catalog_copy)
    return str(refused.value)


def test_a_number_in_a_files_metadata_is_bounded_as_a_whole_number_is(catalog_copy):
    edit(catalog_copy / "sources.yaml", lambda d: d["sources"]["published_benchmarks"]["files"][0].update(
        metadata={"concurrency": 1.0e300}))
    with pytest.raises(CatalogError) as refused:
        load_catalog(catalog_copy)
    # one line, the float's: it said so three times, once per form a metadata value may take (text, whole, figure)
    assert str(refused.value) == (
        "sources.yaml: sources.published_benchmarks.files.0.metadata.concurrency: Input should be less than or equal "
        "to 2147483647 (got 1e+300)")


# ---------------------------------------------------------------- a value is of its key's type as YAML read it
@pytest.mark.parametrize(("file_name", "change", "message"), [
    # `accelerator_count: yes` is YAML's true: it loaded as a count of 1
    ("instances.yaml", lambda d: d["instances"][0].update(accelerator_count=True),
     "instances.yaml: instances[0] (aws:p5.48xlarge).accelerator_count: Input should be a valid integer (got True)"),
    ("instances.yaml", lambda d: d["instances"][0].update(accelerator_count="8"),
     "instances.yaml: instances[0] (aws:p5.48xlarge).accelerator_count: Input should be a valid integer (got '8', "
     "which YAML reads as text: write 8)"),
    ("accelerators.yaml", lambda d: d["accelerators"]["h100-sxm-80gb"]["tdp_w"].update(value="700"),
     "accelerators.yaml: accelerators.h100-sxm-80gb.tdp_w.value: Input should be a valid number (got '700', which "
     "YAML reads as text: write 700.0)"),
    # YAML's floats need a dot and a signed exponent: 70e9 is text, 70 000 000 000 written as a float is 70000000000.0
    ("models.yaml", lambda d: d["models"]["llama-2-70b"].update(params="70e9"),
     "models.yaml: models.llama-2-70b.params: Input should be a valid number (got '70e9', which YAML reads as text: "
     "write 70000000000.0)"),
    ("workloads.yaml", lambda d: first_inference(d)["traffic"].update(peak_factor=True),
     "workloads.yaml: workloads.llama2-70b-chat.traffic.peak_factor: Input should be a valid number (got True)"),
    ("sources.yaml", lambda d: d["sources"]["aws_pricing"].update(max_file_bytes="10"),
     "sources.yaml: sources.aws_pricing.max_file_bytes: Input should be a valid integer (got '10', which YAML reads "
     "as text: write 10)"),
    # the text "false" was true's opposite, and 0 the date 1970-01-01
    ("sources.yaml", lambda d: d["sources"]["aws_pricing"].update(enabled="false"),
     "sources.yaml: sources.aws_pricing.enabled: Input should be a valid boolean (got 'false')"),
    ("sources.yaml", lambda d: d["sources"]["aws_pricing"]["files"][0].update(as_of=0),
     "sources.yaml: sources.aws_pricing.files.0.as_of: Input should be a valid date (got 0)"),
    ("sources.yaml", lambda d: d["sources"]["published_benchmarks"]["files"][0].update(metadata={"chips": True}),
     "sources.yaml: sources.published_benchmarks.files.0.metadata.chips: expected text or a number (got True)"),
    ("notifications.yaml", lambda d: d["channels"]["team"].update(max_lines="5"),
     "notifications.yaml: channels.team.max_lines: Input should be a valid integer (got '5', which YAML reads as "
     "text: write 5)"),
], ids=["count-yes", "count-text", "figure-text", "params-exponent-text", "peak-factor-true", "max-file-bytes-text",
        "enabled-text", "as-of-number", "metadata-true", "max-lines-text"])
def test_a_bool_or_text_where_a_number_goes_is_refused_naming_file_entry_and_key(catalog_copy, file_name, change,
                                                                                  message):
    assert refusal(catalog_copy, file_name, change) == message


def test_a_whole_number_is_a_figure_and_a_quoted_date_is_that_date(catalog_copy):
    edit(catalog_copy / "accelerators.yaml", lambda d: d["accelerators"]["h100-sxm-80gb"]["tdp_w"].update(value=700))
    # yaml.safe_dump writes the str quoted ('2026-11-20'), as a person who quotes a date does
    edit(catalog_copy / "sources.yaml", lambda d: d["sources"]["aws_pricing"]["files"][0].update(as_of="2026-11-20"))
    catalog = load_catalog(catalog_copy)
    tdp_w = catalog.accelerators.accelerators["h100-sxm-80gb"].tdp_w.value
    assert (tdp_w, type(tdp_w)) == (700.0, float)
    assert catalog.sources.sources["aws_pricing"].files[0].as_of == dt.date(2026, 11, 20)


# ---------------------------------------------------------------- a date that does not exist
@pytest.mark.parametrize(("text", "message"), [
    ("sources:\n  a:\n    files:\n      - {path: p, as_of: 2026-11-31}\n",
     "sources.a.files[0].as_of: 2026-11-31 is not a date (day is out of range for month), at line 4 column 26"),
    ("- 2026-02-29\n", "[0]: 2026-02-29 is not a date (day is out of range for month), at line 1 column 3"),
    ("a: 2026-01-01 25:00:00\n",
     "a: 2026-01-01 25:00:00 is not a date and time (hour must be in 0..23), at line 1 column 4"),
    # a tab: read by PyYAML alone, not libyaml
    ("a: [1, 2026-04-31]  # a\ttab\n",
     "a[1]: 2026-04-31 is not a date (day is out of range for month), at line 1 column 8"),
], ids=["nested", "in-a-list", "hour-25", "pyyaml-alone"])
def test_a_date_that_does_not_exist_is_refused_naming_key_line_and_column(text, message):
    # it raised the ValueError of PyYAML's timestamp constructor, which no caller caught
    with pytest.raises(safe_yaml.YamlValueError) as refused:
        safe_yaml.load(text, safe_yaml.UniqueKeyLoader)
    assert str(refused.value) == message


def test_hweval_check_names_a_date_that_does_not_exist_and_exits_2(catalog_copy, capsys):
    path = catalog_copy / "sources.yaml"
    text = path.read_text()
    written = "        as_of: 2026-11-01\n"
    line = text[:text.index(written)].count("\n") + 1
    path.write_text(text.replace(written, "        as_of: 2026-11-31\n", 1))
    assert hweval(["check", "--catalog", str(catalog_copy)]) == 2
    # column 16: eight spaces and "as_of: " before it
    assert capsys.readouterr().err == (
        f"hweval: sources.yaml: sources.published_benchmarks.files[0].as_of: 2026-11-31 is not a date (day is out of "
        f"range for month), at line {line} column 16\n")


# ---------------------------------------------------------------- a number YAML 1.1 reads other than as decimal
@pytest.mark.parametrize(("text", "message"), [
    ("a: 030\n", ('a: 030 is read by YAML 1.1 as octal 24, not 30: write 30 for the number, or "030" for text, at '
                  'line 1 column 4')),
    ("- 0x1F\n", ('[0]: 0x1F is read by YAML 1.1 as hexadecimal 31: write 31 for the number, or "0x1F" for text, at '
                  'line 1 column 3')),
    ("a: -0b101\n", ('a: -0b101 is read by YAML 1.1 as binary -5: write -5 for the number, or "-0b101" for text, at '
                     'line 1 column 4')),
    ("a: {b: 1:30}\n", ('a.b: 1:30 is read by YAML 1.1 as sexagesimal (base 60) 90: write 90 for the number, or '
                        '"1:30" for text, at line 1 column 8')),
    ("a: 1:30.5\n", ('a: 1:30.5 is read by YAML 1.1 as sexagesimal (base 60) 90.5: write 90.5 for the number, or '
                     '"1:30.5" for text, at line 1 column 4')),
    ("a: 1_200\n", ('a: 1_200 is read by YAML 1.1 as 1200, its _ dropped: write 1200 for the number, or "1_200" for '
                    'text, at line 1 column 4')),
    ("a: 1_000.25\n", ('a: 1_000.25 is read by YAML 1.1 as 1000.25, its _ dropped: write 1000.25 for the number, or '
                       '"1_000.25" for text, at line 1 column 4')),
    # a tab: read by PyYAML alone, not libyaml
    ("a: [1, 012]  # a\ttab\n", ('a[1]: 012 is read by YAML 1.1 as octal 10, not 12: write 12 for the number, or '
                                 '"012" for text, at line 1 column 8')),
], ids=["octal", "hexadecimal", "binary", "sexagesimal", "sexagesimal-float", "underscore", "underscore-float",
        "pyyaml-alone"])
def test_a_number_yaml_1_1_reads_other_than_as_decimal_is_refused_naming_key_line_and_column(text, message):
    with pytest.raises(safe_yaml.YamlNumberFormError) as refused:
        safe_yaml.load(text, safe_yaml.UniqueKeyLoader)
    assert str(refused.value) == message


def test_decimal_numbers_and_what_yaml_1_1_reads_as_text_load_as_before():
    # 030.5 is a float, read as decimal; 1.5e3 (no dot), 018 (no octal) and 0o17 (YAML 1.2's octal) are text
    text = "[30, -1, +7, 0, 19.92, 030.5, .5, 1.0e+3, .inf, 1.5e3, 018, 0o17, '030']\n"
    assert safe_yaml.load(text, safe_yaml.UniqueKeyLoader) == [
        30, -1, 7, 0, 19.92, 30.5, 0.5, 1000.0, float("inf"), "1.5e3", "018", "0o17", "030"]


def test_hweval_check_names_an_octal_number_in_a_catalog_and_exits_2(catalog_copy, capsys):
    path = catalog_copy / "instances.yaml"
    text = path.read_text()
    written = "instance_type: p5.4xlarge, accelerator: h100-sxm-80gb, accelerator_count: 1, vcpu: 16,"
    at = text.index(written) + len(written) - len("16,")
    line, column = text[:at].count("\n") + 1, at - text.rindex("\n", 0, at)
    entry = [i["instance_type"] for i in yaml.safe_load(text)["instances"]].index("p5.4xlarge")
    path.write_text(text.replace(written, written.replace("vcpu: 16,", "vcpu: 016,"), 1))
    assert hweval(["check", "--catalog", str(catalog_copy)]) == 2
    # it was read as 14 vCPUs
    assert capsys.readouterr().err == (
        f'hweval: instances.yaml: instances[{entry}].vcpu: 016 is read by YAML 1.1 as octal 14, not 16: write 16 for '
        f'the number, or "016" for text, at line {line} column {column}\n')


def test_hweval_check_exits_2_with_the_message(catalog_copy, capsys):
    edit(catalog_copy / "workloads.yaml", lambda d: first_inference(d).update(max_instances_per_replica=10**20))
    assert hweval(["check", "--catalog", str(catalog_copy)]) == 2
    assert capsys.readouterr().err.startswith(
        "hweval: workloads.yaml: workloads.llama2-70b-chat.max_instances_per_replica: Input should be less than or "
        "equal to 1024")


def test_a_catalog_at_every_limit_loads_into_the_warehouse(catalog_copy, tmp_path):
    c = catalog_models

    def models(d):
        for m in d["models"].values():
            m.update(params=c.MAX_MODEL_PARAMS, active_params=None, layers=c.MAX_LAYERS, hidden=c.MAX_MODEL_DIMENSION,
                     heads=c.MAX_HEADS, kv_heads=c.MAX_HEADS, head_dim=c.MAX_HEAD_DIM)
        for task in d["mlperf_training_tasks"].values():
            if "tokens_per_sample" in task:  # a task that calibrates (a model-only one gives no figures)
                task.update(sequence_length=c.MAX_SEQUENCE_TOKENS, tokens_per_sample=c.MAX_SEQUENCE_TOKENS)

    def workloads(d):
        for w in d["workloads"].values():
            if w["kind"] == "training":
                w.update(tokens=c.MAX_TRAINING_TOKENS, state_bytes_per_param=c.MAX_STATE_BYTES_PER_PARAM,
                         chips=c.MAX_CHIPS)
            else:
                w.update(input_tokens=c.MAX_SEQUENCE_TOKENS, output_tokens=c.MAX_SEQUENCE_TOKENS,
                         max_instances_per_replica=c.MAX_INSTANCES_PER_REPLICA, months=c.MAX_SERVICE_MONTHS)

    edit(catalog_copy / "models.yaml", models)
    edit(catalog_copy / "workloads.yaml", workloads)
    def instances(d):
        for i in d["instances"]:
            i.update(accelerator_count=c.MAX_CHIPS, vcpu=c.MAX_WAREHOUSE_INTEGER, memory_gib=c.MAX_MEMORY_GIB)
            for component in i.get("price_components", []):
                component.update(quantity=c.MAX_PRICE_COMPONENT_QUANTITY)
        for term in d["pricing_terms"].values():
            term.update(interruption_overhead=1)

    edit(catalog_copy / "instances.yaml", instances)
    edit(catalog_copy / "accelerators.yaml", lambda d: [f.update(usable_memory_fraction=c.MIN_USABLE_MEMORY_FRACTION,
                                                                 pue=c.MAX_PUE)
                                                        for f in d["family_defaults"].values()])
    con = warehouse.connect(tmp_path / "w.duckdb")
    warehouse.apply_ddl(con)
    warehouse.load_catalog_tables(con, load_catalog(catalog_copy))
    assert con.execute("select max(layers), max(head_dim) from catalog.models").fetchone() == (1024, 1024)
    con.close()


def test_a_catalog_whose_sources_are_all_live_only_loads_into_the_warehouse(catalog_copy, tmp_path):
    """Every source with a `live:` block and no files is a valid setup: the catalog tables still build."""
    def live_only(d):
        d["sources"] = {s_id: {k: v for k, v in s.items() if k != "files"}
                        for s_id, s in d["sources"].items() if s.get("live")}

    edit(catalog_copy / "sources.yaml", live_only)
    catalog = load_catalog(catalog_copy)
    assert catalog.sources.sources and all(not s.files for s in catalog.sources.sources.values())
    con = warehouse.connect(tmp_path / "w.duckdb")
    warehouse.apply_ddl(con)
    warehouse.load_catalog_tables(con, catalog)
    assert con.execute("select count(*) from catalog.sources").fetchone() == (0,)
    con.close()
