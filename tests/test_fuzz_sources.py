"""Fuzz every source kind's parser: whatever the bytes, a file parses into rows or fails with a SourceFormatError
that names it, in bounded time and memory. `make test` runs a few examples per kind, the same ones every run
(Hypothesis derandomized: a CI run's verdict does not hang on a new draw); `pytest -m fuzz` (`make fuzz`) draws many,
new each run: a failure it finds is kept as a test of its own (as `make test`'s finds have been)."""

from __future__ import annotations

import csv
import datetime as dt
import functools
import io
import json
import tempfile
import tracemalloc
from pathlib import Path

import offer_file_builder as ofb
import pytest
import yaml
from conftest import AS_OF, CATALOGS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flows import pipeline
from flows.source_batches import fetch_source
from flows.sources._common import SourceFormatError

# Hypothesis warns when the global `random` state changes while st.data() draws (hypothesis/control.py compares it
# before and after each draw). Nothing drawn here uses `random`, but in `make test` Prefect's client runs in this
# process (the session's test server is a subprocess), and its threads draw jitter from it (task and service loops:
# prefect/utilities/math.py, services.py; Dask's and websockets' reconnects too), so a draw that overlaps one is
# reported now and then: a false alarm of another thread's, not of these strategies.
pytestmark = pytest.mark.filterwarnings(
    "ignore:Do not use the `random` module inside strategies:hypothesis.errors.HypothesisDeprecationWarning")

EXAMPLES = 12  # per kind and strategy in `make test`
FUZZ_EXAMPLES = 400  # per kind and strategy under `pytest -m fuzz`
DEADLINE_MS = 3000  # one file of a few kilobytes, parsed
PEAK_BYTES = 64 * 2**20  # Python allocations while parsing one such file

# source id in catalogs/sources.yaml -> a file of the embedded snapshot, whose shape the structured fuzz mutates
SHAPES = {
    "aws_pricing": "snapshot/aws_pricing/us-east-1.page-1.json",
    "aws_spot": "snapshot/aws_spot/us-east-1.json",
    "azure_retail": "snapshot/azure_retail/eastus.page-1.json",
    "gcp_billing": "snapshot/gcp_billing/compute-engine.skus.page-1.json",
    "mlperf_inference_snapshot": "snapshot/mlperf_inference/v5.1.summary_results.json",
    "mlperf_training_snapshot": "snapshot/mlperf_training/v5.0.summary.json",
    "mlperf_training_csv": "snapshot/mlperf_training/v4.0.summary_detailed.csv",
    "published_benchmarks": "snapshot/benchmark_runs/published_training.csv",
    "price_sheet": "price_sheet.example.yaml",
    "aws_offer_file": "index.csv",  # no snapshot file: a small offer file from tests/offer_file_builder.py
    "aws_instance_types": "snapshot/aws_instance_types/us-east-1.json",
    "azure_skus": "snapshot/azure_skus/eastus.json",
    "gcp_machine_types": "snapshot/gcp_machine_types/machine-types.json",
    "bedrock_pricing": "snapshot/bedrock_pricing/us-east-1.json",
}
SOURCE_OF = {"mlperf_training_csv": "mlperf_training_snapshot"}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20)
    | st.integers(min_value=-(10**400), max_value=10**400),  # past a float's range: a 400-digit price
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=30)


def parse(catalog, shape: str, tmp_path: Path, content: bytes) -> None:
    """Read `content` as the source's only file; anything but rows or a SourceFormatError naming it fails."""
    path = tmp_path / f"fuzzed{Path(SHAPES[shape]).suffix}"
    path.write_bytes(content)
    source_id = SOURCE_OF.get(shape, shape)
    catalog = pipeline.with_source_files(catalog, {source_id: [str(path)]}, AS_OF)
    tracemalloc.start()
    try:
        batch = fetch_source(catalog, source_id)
    except SourceFormatError as exc:
        assert path.name in str(exc), f"the error does not name the file: {exc}"
        assert len(str(exc)) < 2000, "an error message quotes at most a few hundred characters of data"
    else:
        assert batch.error is None or batch.rejected_by == "landing_rejected", batch.error
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert peak < PEAK_BYTES


def _mutate(document, draw_value, paths: list[int]):
    """Replace values along the document at positions chosen by `paths` with drawn values."""
    if not paths or not isinstance(document, dict | list) or not document:
        return draw_value()
    keys = list(document) if isinstance(document, dict) else list(range(len(document)))
    key = keys[paths[0] % len(keys)]
    copy = dict(document) if isinstance(document, dict) else list(document)
    copy[key] = _mutate(copy[key], draw_value, paths[1:])
    return copy


@functools.cache
@functools.lru_cache(maxsize=1)
def _offer_file_text() -> str:
    """An offer file of six accelerated products (46 rate lines) in the real layout: preamble, header, rows. Built
    once a process: the builder draws from `random`, which Hypothesis warns of inside a strategy (`_load` is one)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "index.csv"
        ofb.write_offer_file(path, ofb.accelerated_products()[:6])
        return path.read_text()


def _load(shape: str):
    text = _offer_file_text() if shape == "aws_offer_file" else (CATALOGS / SHAPES[shape]).read_text()
    suffix = Path(SHAPES[shape]).suffix
    if suffix == ".json":
        return json.loads(text)
    if suffix == ".yaml":
        return yaml.safe_load(text)
    return list(csv.reader(io.StringIO(text)))


def _dump(shape: str, document) -> bytes:
    suffix = Path(SHAPES[shape]).suffix
    if suffix == ".json":
        return json.dumps(document, default=str).encode()
    if suffix == ".yaml":
        return yaml.safe_dump(document).encode()
    out = io.StringIO()
    csv.writer(out).writerows([[str(cell) for cell in row] if isinstance(row, list) else [str(row)]
                               for row in (document if isinstance(document, list) else [document])])
    return out.getvalue().encode()


def _fuzz(examples: int, strategy, to_bytes, derandomize: bool):
    """A Hypothesis test of `examples` files drawn from `strategy`, each parsed as the source's only file; the same
    files every run where `derandomize`."""
    def run(catalog, shape: str, tmp_path: Path) -> None:
        if shape == "aws_offer_file":
            _offer_file_text()  # built once, before Hypothesis draws: the builder uses its own seeded random
        @settings(max_examples=examples, deadline=dt.timedelta(milliseconds=DEADLINE_MS),
                  suppress_health_check=[HealthCheck.too_slow], database=None, derandomize=derandomize)
        @given(drawn=strategy)
        def check(drawn):
            parse(catalog, shape, tmp_path, to_bytes(shape, drawn))
        check()
    return run


def _mutated_file(shape: str, data) -> bytes:
    """The shape's snapshot file with values along a few drawn paths replaced by arbitrary JSON values."""
    paths = data.draw(st.lists(st.integers(min_value=0, max_value=50), max_size=6))
    return _dump(shape, _mutate(_load(shape), lambda: data.draw(json_values), paths))


any_bytes = _fuzz(EXAMPLES, st.binary(max_size=4096), lambda shape, content: content, derandomize=True)
any_values = _fuzz(EXAMPLES, st.data(), _mutated_file, derandomize=True)
many_bytes = _fuzz(FUZZ_EXAMPLES, st.binary(max_size=4096), lambda shape, content: content, derandomize=False)
many_values = _fuzz(FUZZ_EXAMPLES, st.data(), _mutated_file, derandomize=False)


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_arbitrary_bytes_parse_or_fail_naming_the_file(catalog, shape, tmp_path):
    any_bytes(catalog, shape, tmp_path)


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_real_file_with_arbitrary_values_parses_or_fails_naming_the_file(catalog, shape, tmp_path):
    any_values(catalog, shape, tmp_path)


def test_make_tests_examples_are_the_same_every_run_and_make_fuzzs_are_drawn_anew(catalog, tmp_path):
    drawn: list[list[bytes]] = []

    def recorded(shape: str, content: bytes) -> bytes:
        drawn[-1].append(content)
        return content

    for derandomize in (True, True, False, False):
        drawn.append([])
        _fuzz(EXAMPLES, st.binary(max_size=4096), recorded, derandomize)(catalog, "azure_skus", tmp_path)
    assert len(drawn[0]) >= EXAMPLES and drawn[0] == drawn[1]  # the same files, in the same order
    assert drawn[2] != drawn[3]  # two draws of 12 files of up to 4 KiB: the same twice is a seeded draw


@pytest.mark.fuzz
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_fuzz_bytes_at_length(catalog, shape, tmp_path):
    many_bytes(catalog, shape, tmp_path)


@pytest.mark.fuzz
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_fuzz_structures_at_length(catalog, shape, tmp_path):
    many_values(catalog, shape, tmp_path)
