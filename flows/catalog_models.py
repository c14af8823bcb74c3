"""Typed catalogs: the pydantic models of the YAML files under catalogs/, and `Catalog`, which checks their
cross-references. Reading the files into them: flows/catalog.py."""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    StringConstraints,
    Tag,
    field_validator,
    model_validator,
)

from flows.names import normalise_alias
from flows.paths import iso_date
from flows.safe_yaml import MAX_QUOTED_CHARS, cut, quoted
from flows.sources import LIVE_KINDS, SAME_SKU_KINDS, SOURCE_KINDS
from flows.sources._common import SourceFormatError

# Limits on what a catalog may say. Past them a value is a typo or a unit slip, and the run could not hold what it
# derives from it (chip and instance counts are DuckDB INTEGERs); each is 10-1000x the largest real value.
MAX_ID_CHARS = 100  # an id (slug) is a short name
MAX_WAREHOUSE_INTEGER = 2**31 - 1  # DuckDB INTEGER: every whole number in a catalog lands in one
MAX_CHIPS = 1_000_000  # chips in one instance, or in one training run (the largest clusters hold ~100,000)
MAX_INSTANCES_PER_REPLICA = 1_024  # instances one inference replica may span
MAX_MODEL_PARAMS = 1e14  # parameters of one model (the largest published have ~2e12)
MAX_MODEL_DIMENSION = 1_048_576  # hidden size (the largest published: 16,384 - 25,600)
MAX_LAYERS = 1_024  # transformer layers (the largest published: ~130)
MAX_HEADS = 1_024  # attention heads and KV heads (the largest published: 128)
MAX_HEAD_DIM = 1_024  # values per head (the largest published: 256)
MAX_SEQUENCE_TOKENS = 10_000_000  # tokens in one request or training sequence (the longest contexts: ~10M)
MAX_TRAINING_TOKENS = 1e15  # tokens one training run trains on (the largest published: ~3.6e13)
MAX_STATE_BYTES_PER_PARAM = 64  # training state per parameter (bf16 weights + grads + fp32 Adam: 16)
MAX_REQUESTS_PER_S = 1e6  # a service's mean load
MAX_PEAK_FACTOR = 100.0  # peak load / mean load
MAX_NETWORK_GBPS = 1e6  # an instance's network, Gbit/s (the largest published: 6,400)
DEFAULT_GLOBAL_BATCH_TOKENS = 4_194_304  # tokens per optimizer step (GPT-3: 3.2M; Llama 3 70B: 4M-16M)
MAX_CHECKPOINT_INTERVAL_HOURS = 8_760.0  # a year between checkpoints: in effect none
MAX_GCO2E_PER_KWH = 2_000.0  # a grid's carbon intensity (the dirtiest national grids: ~1,000)
MAX_GRID_REGIONS = 1_000  # grid_intensity entries in instances.yaml
MIN_USABLE_MEMORY_FRACTION = 0.01  # chip memory left for weights and KV cache; below it, chips-to-hold overflows
MAX_FIGURE_VALUE = 1e6  # a published per-chip figure in its unit (TFLOPS, GB, TB/s, W, GB/s; the largest: 15,000)
MAX_PUE = 3.0  # a data centre's power usage effectiveness (the hyperscalers': ~1.1; an old machine room: ~2)
MAX_MEMORY_GIB = 1_048_576  # memory of one instance or device, GiB (the largest instances: 32,768)
MAX_PRICE_COMPONENT_QUANTITY = 1_048_576  # units of one SKU in one VM: chips, vCPUs or GiB (the largest: ~3,000 GiB)
MAX_FLOPS_PER_PARAM_TOKEN = 100.0  # training FLOPs per parameter and token (dense: 6; with recomputation: 8)
MAX_TRAINED_AT = 1_000  # declared training precisions of one MLPerf task's submissions (submitter x accelerator)
MAX_LATENCY_MS = 3_600_000.0  # a latency bound: an hour
MAX_SERVICE_MONTHS = 1_200  # months a service runs (a century: in effect for ever)
MAX_DEADLINE_HOURS = 876_000.0  # a training run's deadline (a century: in effect none)
MAX_PRICE_CHANGE_FACTOR = 1_000.0  # a price move, up or down, past which a source is stale (the shipped one: 3)
MAX_PRICE_MOVE_SHARE = 100.0  # a price move worth listing as a change (the default: 0.05)
MAX_STALE_DAYS_LIMIT = 3_650  # days a source may stay stale before a run fails (ten years: in effect never)
MAX_PAGES_LIMIT = 1_000_000  # pages of one live listing (the default: 2,000)
MAX_FILE_BYTES_LIMIT = 2**40  # one file or API response (1 TiB; the largest default: 8 GiB, aws_offer_file's)
MAX_LINE_BYTES_LIMIT = 2**30  # one CSV line or record (1 GiB; the default: 1 MiB)
MAX_FETCH_S_LIMIT = 86_400.0  # seconds one live fetch may take (a day: a nightly run's whole period; default 3,600)

Slug = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9._-]*$", max_length=MAX_ID_CHARS)]
WholeNumber = Annotated[int, Field(ge=-MAX_WAREHOUSE_INTEGER, le=MAX_WAREHOUSE_INTEGER)]
Number = Annotated[float, Field(ge=-MAX_WAREHOUSE_INTEGER, le=MAX_WAREHOUSE_INTEGER)]  # as WholeNumber, not whole


def _date_text(value: Any) -> Any:
    """A date written as text, quoted (`"2026-11-30"`, as yaml.safe_dump writes a str), is that date; nothing else
    becomes one (a number is no date: lax pydantic took `as_of: 0` for 1970-01-01)."""
    if isinstance(value, str):
        try:
            return iso_date(value)
        except ValueError:  # 2026-02-30, or 20261130: the strict date refuses the text as it is
            return value
    return value


Date = Annotated[dt.date, BeforeValidator(_date_text)]  # a date as YAML reads it, or its ISO text
Family = Literal["gpu", "tpu", "trainium", "inferentia", "cpu"]
Cloud = Literal["aws", "azure", "gcp", "onprem"]
Precision = Literal["fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4", "int4"]

CATALOG_FILES = ("accelerators.yaml", "instances.yaml", "models.yaml", "workloads.yaml", "sources.yaml")
OPTIONAL_CATALOG_FILES = ("notifications.yaml",)  # absent: its model's defaults (no channels, nothing sent)


class CatalogError(ValueError):
    """A catalog file is missing, malformed, or refers to something that does not exist."""


class Strict(BaseModel):
    # inf and nan are never a figure, a count or a price: they would reach the SQL as a number. Strict: a value is of
    # its key's type as YAML read it (`yes` is no count, "700" no figure, 1 no `true`); a whole number is a figure
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, strict=True)


# ---------------------------------------------------------------- accelerators.yaml
class SourceRef(Strict):
    title: str
    url: str | None = None
    as_of: Date | None = None


class Figure(Strict):
    """One published figure; `value: null` means nobody published it, never a guess."""

    value: float | None = Field(gt=0, le=MAX_FIGURE_VALUE)
    source: str
    unverified: bool = False
    note: str | None = None


class ApiName(Strict):
    """How one cloud's instance-type API names this part (EC2 GpuInfo/NeuronInfo Name, GCP guestAcceleratorType,
    Azure's SKU family, since Azure's capabilities name no GPU model)."""

    cloud: Literal["aws", "azure", "gcp"]
    name: str = Field(min_length=1, max_length=200)
    memory_mib: int | None = Field(
        None, gt=0, le=MAX_MEMORY_GIB * 1024,
        description="memory per device as the API lists it; where two parts share a name, the listing within 10% of it "
                    "is this part")


# The precisions whose peaks the SQL models read (catalog.accelerators peak_tflops_<precision>): an fp32 or tf32 figure
# is documentation only
PEAK_TFLOPS_PRECISIONS = ("bf16", "fp16", "fp8", "int8", "fp4", "int4")


class Accelerator(Strict):
    name: str
    family: Family
    vendor: str
    aliases: list[str] = Field(default_factory=list, description="raw benchmark strings that mean this chip")
    api_names: list[ApiName] = Field(default_factory=list,
                                     description="names the clouds' instance-type APIs give this part")
    memory_type: str | None = None
    interconnect: str | None = None
    peak_tflops: dict[Precision, Figure] = Field(default_factory=dict)
    memory_gb: Figure
    memory_bandwidth_tbps: Figure
    tdp_w: Figure
    link_gb_per_s: Figure | None = Field(
        None, description="intra-node link bandwidth per chip, both directions together as vendors publish it "
                          "(NVLink, ICI, NeuronLink, PCIe); absent: no figure, splits pay the flat declared loss")

    def modelled_peaks(self) -> dict[str, float]:
        """Precision -> peak TFLOP/s as the models take them (int_accelerator_precisions_listed): the published figures
        at PEAK_TFLOPS_PRECISIONS, and for fp16 without one of its own, the bf16 figure."""
        listed = {p: self.peak_tflops[p].value for p in PEAK_TFLOPS_PRECISIONS
                  if p in self.peak_tflops and self.peak_tflops[p].value is not None}
        if "fp16" not in listed and "bf16" in listed:
            listed["fp16"] = listed["bf16"]
        return listed


class FamilyDefaults(Strict):
    """Declared assumptions for the estimated basis, per family; each names where it comes from."""

    training_mfu: float = Field(gt=0, le=1, description="model FLOPs utilization of a training run")
    bandwidth_efficiency: float = Field(gt=0, le=1, description="share of peak memory bandwidth a decode step reaches")
    compute_efficiency: float = Field(gt=0, le=1, description="share of peak FLOPS a decode step reaches")
    usable_memory_fraction: float = Field(ge=MIN_USABLE_MEMORY_FRACTION, le=1,
                                          description="share of chip memory for weights and KV cache")
    scaling_efficiency_per_doubling: float = Field(gt=0, le=1, description="throughput kept per doubling of instances")
    pue: float = Field(ge=1, le=MAX_PUE, description="data-centre power usage effectiveness for energy")
    allreduce_overlap: float = Field(0.5, ge=0, le=1, description="share of a training step's gradient all-reduce "
                                                                  "hidden behind its compute")
    serving_load_factor: float = Field(0.7, gt=0, le=1, description="share of TDP a serving chip draws, where no "
                                                                   "measured power exists")
    can_train: bool = Field(True, description="false for inference-only parts (e.g. Inferentia)")
    source: str


class AcceleratorsFile(Strict):
    sources: dict[Slug, SourceRef]
    family_defaults: dict[Family, FamilyDefaults] = Field(min_length=1)
    accelerators: dict[Slug, Accelerator] = Field(min_length=1)


# ---------------------------------------------------------------- instances.yaml
class PriceComponent(Strict):
    """GCP prices a VM as SKUs (per GPU, per vCPU, per GiB, per TPU chip); the offer is their sum."""

    sku_description_prefix: str = Field(description="matches the SKU description up to ' running in <place>'")
    quantity: float = Field(gt=0, le=MAX_PRICE_COMPONENT_QUANTITY)


class Instance(Strict):
    """What no instance-type API describes (GCP's SKU composition, TPU slices), or a correction of a listing: a
    field set here wins over the API's, and `correction` says why (the reports show it)."""

    cloud: Cloud
    instance_type: str
    accelerator: Slug | None = Field(None, description="default: the part the API listing names")
    accelerator_count: int | None = Field(None, gt=0, le=MAX_CHIPS, description="default: the API listing's count")
    vcpu: int | None = Field(None, gt=0, le=MAX_WAREHOUSE_INTEGER)
    memory_gib: float | None = Field(None, gt=0, le=MAX_MEMORY_GIB, description="host memory, GiB")
    network_gbps: float | None = Field(None, gt=0, le=MAX_NETWORK_GBPS,
                                       description="network bandwidth between instances, Gbit/s each way, as the "
                                                   "cloud publishes it (EFA, InfiniBand); what a split across "
                                                   "instances communicates over")
    note: str | None = None
    correction: str | None = Field(None, min_length=1, max_length=500,
                                   description="why this entry overrides what the instance-type API lists")
    source: str
    price_components: list[PriceComponent] = Field(default_factory=list)

    @property
    def offer_key(self) -> str:
        return f"{self.cloud}:{self.instance_type}"


PricingTermName = Literal["on_demand", "spot", "reserved", "capacity_block", "dev_test", "low_priority", "private",
                          "owned"]
PAY_AS_YOU_GO_TERMS = ["on_demand", "spot", "capacity_block", "low_priority", "private", "owned"]
RECLAIMABLE_TERMS = {"spot", "low_priority"}  # the cloud can take the capacity back at short notice


class ReclaimRate(Strict):
    """How often a cloud takes reclaimable capacity back: reclaims per instance and month, with its source."""

    value: float = Field(ge=0, le=1000)
    source: str
    note: str | None = None


class PricingTerm(Strict):
    interruption_overhead: float = Field(
        ge=0, le=1,
        description="share of a training run redone after interruptions: the fallback, where the term has no "
                    "interruption rate for the offer's cloud")
    interruptions_per_instance_month: dict[Cloud, ReclaimRate] = Field(
        default_factory=dict,
        description="per cloud: reclaims per instance and month (0.2: one instance in five is reclaimed a month)")
    restart_hours: float = Field(0.25, ge=0, le=1000,
                                 description="hours from a reclaim to running again from the last checkpoint")
    source: str


class GridIntensity(Strict):
    """The carbon intensity of the grid a region draws from, for a workload whose objective is emissions."""

    cloud: Slug = Field(description="the offer's cloud as the offers name it: aws, azure, gcp, on_prem (a price "
                                    "sheet's on-prem system, its site the region) or a quote's provider slug")
    region: str = Field(min_length=1, max_length=MAX_ID_CHARS)
    gco2e_per_kwh: float = Field(ge=0, le=MAX_GCO2E_PER_KWH, description="grams of CO2-equivalent per kWh drawn")
    source: str


class InstancesFile(Strict):
    pricing_terms: dict[PricingTermName, PricingTerm] = Field(min_length=1)
    instances: list[Instance] = Field(min_length=1)
    grid_intensity: list[GridIntensity] = Field(default_factory=list, max_length=MAX_GRID_REGIONS)


# ---------------------------------------------------------------- models.yaml
class Model(Strict):
    name: str
    params: float = Field(gt=0, le=MAX_MODEL_PARAMS)
    active_params: float | None = Field(None, gt=0, le=MAX_MODEL_PARAMS)
    layers: int = Field(gt=0, le=MAX_LAYERS)
    hidden: int = Field(gt=0, le=MAX_MODEL_DIMENSION)
    heads: int = Field(gt=0, le=MAX_HEADS)
    kv_heads: int = Field(gt=0, le=MAX_HEADS)
    head_dim: int = Field(gt=0, le=MAX_HEAD_DIM)
    source: str
    api_names: list[Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]] = Field(
        default_factory=list,
        description="names hosted model APIs give the model (a Price List `model`, a Bedrock model id, a meter's model)")

    @model_validator(mode="after")
    def _shapes_agree(self) -> Model:
        if self.kv_heads > self.heads:
            raise ValueError(f"kv_heads: {self.kv_heads} is more than heads ({self.heads}); KV heads are shared by "
                             f"query heads, never more")
        if self.active_params is not None and self.active_params > self.params:
            raise ValueError(f"active_params: {self.active_params:g} is more than params ({self.params:g})")
        return self


class MlperfTrainedAt(Strict):
    """The precision one submitter's results of a task trained at, on one accelerator, where its submission's code
    says it: MLPerf Training summaries declare none, and without this the back-test estimates a result at its chip's
    fastest bf16 or fp8 peak (an int8-trained result then reads as twice the MFU it achieved)."""

    submitter: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)] = Field(
        description="as the summary's `submitter` column writes it (compared without case or surrounding spaces)")
    accelerator: Slug
    precision: Precision
    source: str = Field(description="a key of accelerators.yaml `sources`: where the submission says so")


class MlperfTrainingTask(Strict):
    """What an MLPerf Training task trains, and, for a task that calibrates the MFU, how to turn its results into
    achieved FLOP/s (the tokens per counted sample). A task that gives only its model (fine-tuning: LoRA does not
    fit 6ND) is declared so that a workload naming it must rank the same model; its results calibrate nothing.
    `trained_at`: the precisions submissions trained at where their code says (the back-test estimates them there)."""

    model: Slug
    sequence_length: int | None = Field(None, gt=0, le=MAX_SEQUENCE_TOKENS,
                                        description="tokens in one training sequence of the benchmark")
    tokens_per_sample: float | None = Field(None, gt=0, le=MAX_SEQUENCE_TOKENS,
                                            description="samples_to_converge x this = tokens trained")
    flops_per_token: float | None = Field(None, gt=0, le=MAX_FLOPS_PER_PARAM_TOKEN,
                                          description="training FLOPs per parameter and token (unset: 6, dense)")
    note: str | None = None
    trained_at: list[MlperfTrainedAt] = Field(default_factory=list, max_length=MAX_TRAINED_AT)

    @model_validator(mode="after")
    def _calibrates_with_all_or_none(self) -> MlperfTrainingTask:
        given = {key: getattr(self, key) is not None for key in ("sequence_length", "tokens_per_sample")}
        if any(given.values()) and not all(given.values()):
            missing = ", ".join(key for key, present in given.items() if not present)
            raise ValueError(f"{missing} missing: a task that calibrates the MFU gives sequence_length and "
                             "tokens_per_sample; one that only names its model gives neither")
        if not any(given.values()) and self.flops_per_token is not None:
            raise ValueError("flops_per_token without sequence_length and tokens_per_sample: a task that only names "
                             "its model calibrates nothing")
        if not any(given.values()) and self.trained_at:
            raise ValueError("trained_at without sequence_length and tokens_per_sample: a task that only names its "
                             "model calibrates nothing, so no precision is estimated for its results")
        seen: set[tuple[str, str]] = set()
        for n, declared in enumerate(self.trained_at):
            key = (declared.submitter.casefold(), declared.accelerator)
            if key in seen:
                raise ValueError(f"trained_at[{n}]: {declared.submitter} on {declared.accelerator} declared twice (one "
                                 "precision a submitter and accelerator)")
            seen.add(key)
        return self


class ScenarioLatency(Strict):
    """The latency bounds an MLPerf Inference scenario imposes (p99 time to first token, p99 time per output token)."""

    ttft_ms: float = Field(gt=0, le=MAX_LATENCY_MS)
    tpot_ms: float = Field(gt=0, le=MAX_LATENCY_MS)


class MlperfInferenceTask(Strict):
    """What an MLPerf Inference LLM task serves: the model, the mean request shape and each scenario's latency bounds.

    The back-test estimates a result of this task with this shape, so the estimate and the measurement serve the same
    requests; a scenario without bounds (Offline) has no latency objective."""

    model: Slug
    input_tokens: int = Field(gt=0, le=MAX_SEQUENCE_TOKENS, description="mean prompt tokens of the task's dataset")
    output_tokens: int = Field(gt=0, le=MAX_SEQUENCE_TOKENS, description="mean output tokens of the task's dataset")
    latency: dict[Literal["Server", "Interactive"], ScenarioLatency] = Field(default_factory=dict)
    source: str = Field(min_length=1, max_length=2000, description="where the shape and bounds come from")


class ModelsFile(Strict):
    models: dict[Slug, Model] = Field(min_length=1)
    mlperf_training_tasks: dict[str, MlperfTrainingTask] = Field(default_factory=dict)
    mlperf_inference_tasks: dict[str, MlperfInferenceTask] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _api_names_name_one_model(self) -> ModelsFile:
        owner: dict[str, str] = {}
        for model_id, model in self.models.items():
            for name in model.api_names:
                other = owner.setdefault(name.lower(), model_id)
                if other != model_id:
                    raise ValueError(f"models.{model_id}.api_names: {name!r} already names {other}: an API's model "
                                     f"name maps to one catalog model")
        return self


# ---------------------------------------------------------------- workloads.yaml
class TrainingBenchmark(Strict):
    suite: Literal["mlperf_training"]
    task: str = Field(description="MLPerf Training benchmark name, e.g. gpt3, llama2_70b_lora")
    divisions: list[str] = Field(["closed"], description="result divisions the workload accepts")
    availabilities: list[str] = Field(
        ["available", "available cloud", "available on-premise", "cloud", "onprem"],
        description="availability categories the workload accepts (compared case-insensitively; the summarizer "
                    "writes both 'Available cloud' and 'cloud'); preview and research results are left out")


class InferenceBenchmark(Strict):
    suite: Literal["mlperf_inference"]
    task: str = Field(description="MLPerf model name without the accuracy suffix, e.g. llama2-70b")
    scenario: Literal["Server", "Offline", "Interactive"]
    divisions: list[str] = Field(["closed"], description="result divisions (MLPerf `Category`) the workload accepts")
    suites: list[str] = Field(["datacenter"], description="MLPerf suites the workload accepts")
    availabilities: list[str] = Field(["available"], description="availability categories the workload accepts")


Objective = Literal["cost", "energy", "emissions"]
OBJECTIVE_DESCRIPTION = ("what the ranking orders by: cost (USD per outcome), energy (kWh per outcome; candidates "
                         "whose chip publishes no power are excluded, with that reason) or emissions (kg CO2e per "
                         "outcome: energy x the grid_intensity instances.yaml declares for the offer's region)")


class Slo(Strict):
    ttft_ms: float | None = Field(None, gt=0, le=MAX_LATENCY_MS, description="p99 time to first token bound")
    tpot_ms: float | None = Field(None, gt=0, le=MAX_LATENCY_MS, description="p99 time per output token bound")


def _slo_kind(value: Any) -> str:
    """Which form of `slo` a value is, so that an error names that form's key alone (not each form's)."""
    return "offline" if isinstance(value, str) else "bounds"


# latency bounds, or `offline` (a batch job: no latency objective); the tags are no keys (flows/catalog.py drops them)
SLO_TAGS = ("bounds", "offline")
SloOrOffline = Annotated[Annotated[Slo, Tag("bounds")] | Annotated[Literal["offline"], Tag("offline")],
                         Discriminator(_slo_kind)]


class TrainingWorkload(Strict):
    """A training run: an MLPerf task (measured basis) and/or a model trained on a token count (scaled/estimated)."""

    kind: Literal["training"]
    title: str
    description: str
    model: Slug
    benchmark: TrainingBenchmark | None = None
    tokens: float | None = Field(None, gt=0, le=MAX_TRAINING_TOKENS,
                                 description="tokens to train on, for a model + tokens workload")
    precision: Precision = "bf16"
    state_bytes_per_param: float = Field(16, gt=0, le=MAX_STATE_BYTES_PER_PARAM,
                                         description="16 = bf16 weights and grads + fp32 Adam states")
    chips: int | None = Field(None, gt=0, le=MAX_CHIPS,
                              description="chips to train on; default: the fewest that hold the state")
    deadline_hours: float | None = Field(None, gt=0, le=MAX_DEADLINE_HOURS,
                                         description="offers that cannot finish in time are excluded")
    global_batch_tokens: float = Field(
        DEFAULT_GLOBAL_BATCH_TOKENS, gt=0, le=MAX_TRAINING_TOKENS,
        description="tokens in one optimizer step across all chips: one gradient all-reduce per step")
    checkpoint_interval_hours: float = Field(
        1.0, gt=0, le=MAX_CHECKPOINT_INTERVAL_HOURS,
        description="hours between checkpoints: an interruption redoes half of one on average")
    mfu: float | None = Field(None, gt=0, le=1, description="overrides published and default MFU")
    objective: Objective = Field("cost", description=OBJECTIVE_DESCRIPTION)
    pricing_terms: list[PricingTermName] = Field(
        default_factory=lambda: list(PAY_AS_YOU_GO_TERMS),
        description="pricing terms the run may be bought on (a reserved term commits for a year or more: not per run)")

    @model_validator(mode="after")
    def _defined(self) -> TrainingWorkload:
        if "reserved" in self.pricing_terms:
            raise ValueError("pricing_terms: a training run is priced per run; a reserved term commits for a year or "
                             "more (list it on the inference workloads that run that long)")
        if self.benchmark is None and self.tokens is None:
            raise ValueError("give `benchmark` (an MLPerf task), `tokens` (a model + token count), or both "
                             "(measured where the benchmark ran, estimated elsewhere)")
        return self


class Traffic(Strict):
    mean_requests_per_s: float = Field(gt=0, le=MAX_REQUESTS_PER_S)
    peak_factor: float = Field(1.0, ge=1, le=MAX_PEAK_FACTOR,
                               description="peak load / mean load; instances are sized for the peak")


class InferenceWorkload(Strict):
    kind: Literal["inference"]
    title: str
    description: str
    model: Slug
    benchmark: InferenceBenchmark | None = None
    precisions: list[Precision] = Field(
        min_length=1, description="precisions whose accuracy the workload accepts (its accuracy floor)")
    accuracy_target_pct: Literal[99.0, 99.9] = Field(
        99.0, description="MLPerf accuracy target a measured result must meet: -99.9 results also meet 99"
    )
    input_tokens: int = Field(gt=0, le=MAX_SEQUENCE_TOKENS)
    output_tokens: int = Field(gt=0, le=MAX_SEQUENCE_TOKENS)
    slo: SloOrOffline
    traffic: Traffic | None = Field(None, description="required unless slo is offline")
    success_rate: float = Field(1.0, gt=0, le=1, description="share of requests that succeed")
    months: float = Field(12, gt=0, le=MAX_SERVICE_MONTHS, description="months in service, for the lifetime cost")
    trained_by: Slug | None = Field(None, description="training workload whose cost adds to the lifetime cost")
    shape_tolerance: float = Field(
        0.25, gt=0, le=10,
        description="how far a measurement's mean input and output lengths may be from the workload's (0.25: within "
                    "25% each) for it to price this workload; further, it is not used and the row says why")
    max_instances_per_replica: int = Field(1, ge=1, le=MAX_INSTANCES_PER_REPLICA,
                                           description="a replica may span this many instances")
    objective: Objective = Field("cost", description=OBJECTIVE_DESCRIPTION)
    pricing_terms: list[PricingTermName] = Field(
        description="pricing terms the workload may be bought on; a reserved term counts where `months` covers it. "
                    "Default: a latency-bound service does not run on capacity that can be reclaimed (no spot or "
                    "low priority); an offline batch job may")

    @field_validator("precisions")
    @classmethod
    def _one_entry_a_class(cls, precisions: list[str]) -> list[str]:
        # the SQL compares precisions in classes (the precision_class macro): fp16 and bf16 are one 16-bit class, so
        # listing both, or one twice, would match each 16-bit result and estimate twice
        seen: dict[str, str] = {}
        for precision in precisions:
            klass = "bf16" if precision in ("fp16", "bf16") else precision
            if klass in seen and seen[klass] == precision:
                raise ValueError(f"{precision} is listed twice: list it once")
            if klass in seen:
                raise ValueError(f"{precision} and {seen[klass]} are one 16-bit class (an fp16 result counts where bf16 "
                                 "is accepted, and the reverse): list one of them")
            seen[klass] = precision
        return precisions

    @model_validator(mode="after")
    def _traffic_for_services(self) -> InferenceWorkload:
        if self.slo != "offline" and self.traffic is None:
            raise ValueError("a latency-bound service needs `traffic` (mean_requests_per_s, peak_factor)")
        return self

    @model_validator(mode="before")
    @classmethod
    def _default_pricing_terms(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("pricing_terms") is None:
            terms = [*PAY_AS_YOU_GO_TERMS, "reserved"]
            if data.get("slo") != "offline":
                terms = [t for t in terms if t not in RECLAIMABLE_TERMS]
            data = {**data, "pricing_terms": terms}
        return data


Workload = Annotated[TrainingWorkload | InferenceWorkload, Field(discriminator="kind")]


# a workload's page is reports/<id>.md, beside <id>.csv: these are the report's own pages
RESERVED_WORKLOAD_IDS = ("index", "offers", "estimates")


class WorkloadsFile(Strict):
    workloads: dict[Slug, Workload] = Field(min_length=1)

    @field_validator("workloads")
    @classmethod
    def _no_page_of_the_report(cls, workloads: dict) -> dict:
        for workload_id in workloads:
            if workload_id in RESERVED_WORKLOAD_IDS:
                raise ValueError(f"{workload_id!r} is the name of a page of the report ({workload_id}.md): a workload "
                                 f"cannot take it (reserved: {', '.join(RESERVED_WORKLOAD_IDS)})")
        return workloads


# ---------------------------------------------------------------- sources.yaml
SourceKind = Literal[tuple(SOURCE_KINDS)]  # the registry's kinds, in its order (a wrong kind's error lists them so)


def _metadata_form(value: Any) -> str | None:
    """Which form a metadata value is, by its exact YAML type: a bool (no 1) or a date is none of them."""
    return {str: "text", int: "whole", float: "figure"}.get(type(value))


# the tags are no keys (flows/catalog.py drops them from an error's location)
METADATA_TAGS = ("text", "whole", "figure")
MetadataValue = Annotated[
    Annotated[str, Tag("text")] | Annotated[WholeNumber, Tag("whole")] | Annotated[Number, Tag("figure")],
    Discriminator(_metadata_form, custom_error_type="metadata_value",
                  custom_error_message="expected text or a number")]


class SnapshotFile(Strict):
    path: str = Field(description="relative to catalogs/")
    as_of: Date
    source: str = Field(description="where the figures come from")
    region: str | None = Field(None, description="region a price page was fetched for, where the format does not say")
    unverified: bool = Field(
        False, description="its prices are unverified (no price catalog confirms them, or the sources conflict): every "
                           "offer priced from it says so")
    metadata: dict[str, MetadataValue] | None = Field(
        None, description="what the file itself does not say, e.g. a vLLM result's accelerator, chips, model, precision")


# Price feeds go stale within days (spot moves hourly); benchmark rounds and price sheets change a few times a year.
DEFAULT_MAX_STALE_DAYS = {"aws_pricing": 2, "aws_offer_file": 2, "aws_spot": 2, "azure_retail": 2, "gcp_billing": 2,
                          "bedrock_pricing": 7, "azure_model_prices": 7, "vertex_model_prices": 7}


class Source(Strict):
    kind: SourceKind
    enabled: bool = True
    description: str
    files: list[SnapshotFile] = Field(default_factory=list, description="the embedded snapshot (or the user's files)")
    live: dict[str, Any] | None = Field(
        None, description="options of the kind's API fetch (regions, filters, endpoint); used by `hweval run --live`")
    max_row_drop: float = Field(
        0.5, ge=0, le=1,
        description="a run reading more than this share fewer rows than the source's last good run marks it stale")
    max_price_change: float | None = Field(
        None, gt=1, le=MAX_PRICE_CHANGE_FACTOR,
        description="a price source whose median price per offer moved by more than this factor since its last good "
                    "run (up or down) is stale: e.g. 3 means a price tripled or fell to a third overnight")
    max_stale_days: int | None = Field(
        None, ge=0, le=MAX_STALE_DAYS_LIMIT,
        description="a source stale (unreadable) for more days than this fails the run after its reports are "
                    "published (exit status 3); default: 2 for price feeds, 30 for benchmarks and price sheets")
    max_pages: int | None = Field(
        None, ge=1, le=MAX_PAGES_LIMIT,
        description="most pages a live fetch follows in one listing (a region, service or filter); past it, or when "
                    "a page token repeats an earlier one, the source is stale; default: 2,000")
    max_file_bytes: int | None = Field(
        None, ge=1, le=MAX_FILE_BYTES_LIMIT,
        description="largest file or API response read, in bytes; a larger one is refused unread and the source is "
                    "stale; default: 268,435,456 (256 MiB), 8,589,934,592 (8 GiB) for aws_offer_file, whose "
                    "region files DuckDB scans without loading them")
    max_line_bytes: int | None = Field(
        None, ge=1, le=MAX_LINE_BYTES_LIMIT,
        description="longest line of a CSV file (or CSV record, when a quoted field spans lines) read, in bytes; "
                    "a longer one is refused without reading it whole and the source is stale; default: 1,048,576 "
                    "(1 MiB)")
    max_fetch_s: float | None = Field(
        None, gt=0, le=MAX_FETCH_S_LIMIT,
        description="seconds one live fetch (a region or service when fanned out, else the whole source) may take "
                    "from its start, retries and their waits included; past it the source is stale; default: 3,600")

    @property
    def stale_limit_days(self) -> int:
        """The declared max_stale_days, or its kind's default."""
        if self.max_stale_days is not None:
            return self.max_stale_days
        return DEFAULT_MAX_STALE_DAYS.get(self.kind, 30)

    def reads_live(self, mode: str) -> bool:
        return mode == "live" and self.live is not None


# Past this many requests at once, a public price API answers with throttling, whatever the machine could do.
MAX_FETCH_CONCURRENCY = 64


class FetchConcurrency(Strict):
    """The most fetches in flight at once to each cloud, shared by every source of that cloud in a run: each region
    (or service) of a live source holds one while it is fetched, and so does each source read from files."""

    aws: int = Field(4, ge=1, le=MAX_FETCH_CONCURRENCY,
                     description="Price List, EC2 spot price history and offer-file downloads, one region each")
    azure: int = Field(2, ge=1, le=MAX_FETCH_CONCURRENCY, description="Azure Retail Prices listings, one region each")
    gcp: int = Field(2, ge=1, le=MAX_FETCH_CONCURRENCY,
                     description="Cloud Billing Catalog listings, one service each")
    default: int = Field(4, ge=1, le=MAX_FETCH_CONCURRENCY,
                         description="sources of no cloud (benchmark results, price sheets), one source each")


class SourcesFile(Strict):
    mode: Literal["snapshot", "live"] = Field(
        "snapshot", description="snapshot: read `files`; live: fetch every source with a `live:` block from its API")
    price_move_threshold: float = Field(
        0.05, gt=0, le=MAX_PRICE_MOVE_SHARE,
        description="a price per offer and term that moved by more than this share since the previous run is listed "
                    "in marts.changes and the reports' What changed")
    fetch_concurrency: FetchConcurrency = Field(
        default_factory=FetchConcurrency,
        description="fetches in flight at once per cloud (default aws 4, azure 2, gcp 2, default 4); sources are "
                    "fetched side by side, and so are the regions of a live source")
    sources: dict[Slug, Source] = Field(min_length=1)


# ---------------------------------------------------------------- notifications.yaml
NotificationEvent = Literal["best_offer_changed", "source_stale_past_limit", "run_failed"]
EnvVarName = Annotated[str, StringConstraints(pattern=r"^[A-Z_][A-Z0-9_]*$")]


class Channel(Strict):
    """Where one message per run goes: an apprise URL read from the environment, never from this file."""

    url_env: EnvVarName = Field(description="environment variable holding the channel's apprise URL (a secret)")
    events: list[NotificationEvent] = Field(min_length=1, description="events the channel is told about")
    max_lines: int = Field(10, ge=1, le=100, description="event lines in one message; the rest are counted")

    @field_validator("events")
    @classmethod
    def _events_once(cls, events: list[str]) -> list[str]:
        repeated = sorted({e for e in events if events.count(e) > 1})
        if repeated:
            raise ValueError(f"{', '.join(repeated)} listed more than once")
        return events


class NotificationsFile(Strict):
    report_url: str | None = Field(
        None, description="base URL where reports/ is served; messages link <report_url>/<as_of>/index.md")
    channels: dict[Slug, Channel] = Field(default_factory=dict)


# ---------------------------------------------------------------- the whole catalog
def _api_name_conflicts(accelerators: dict[str, Accelerator]) -> list[str]:
    """Two parts may share an API name (EC2 lists A100 40GB and 80GB both as "A100") only when each gives the memory
    that tells them apart, more than 20% apart: otherwise an instance listing that name could be either."""
    by_name: dict[tuple[str, str], list[tuple[str, int | None]]] = {}
    for acc_id, acc in accelerators.items():
        for n in acc.api_names:
            by_name.setdefault((n.cloud, n.name.casefold()), []).append((acc_id, n.memory_mib))
    errors = []
    for (cloud, name), parts in sorted(by_name.items()):
        for i, (a_id, a_mib) in enumerate(parts):
            for b_id, b_mib in parts[i + 1:]:
                if a_mib is None or b_mib is None or abs(a_mib - b_mib) <= 0.2 * max(a_mib, b_mib):
                    errors.append(f"accelerators.yaml: accelerators.{b_id}.api_names: {cloud} name {quoted(name)} is "
                                  f"also an api_name of {a_id!r}; two parts may share a name only when both give "
                                  f"memory_mib more than 20% apart")
    return errors


class Catalog(Strict):
    root: Path
    accelerators: AcceleratorsFile
    instances: InstancesFile
    models: ModelsFile
    workloads: WorkloadsFile
    sources: SourcesFile
    notifications: NotificationsFile = Field(default_factory=NotificationsFile)

    def digest(self) -> str:
        """A digest of the catalog the rankings rest on (accelerators, instances, models, workloads), recorded with
        each run (ops.runs.catalog_digest) to tell a catalog edit. A batch's input digest takes only what validating
        its table reads (checks.catalog_inputs)."""
        parts = [part.model_dump_json() for part in (self.accelerators, self.instances, self.models, self.workloads)]
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()

    @model_validator(mode="after")
    def _cross_references(self) -> Catalog:
        errors: list[str] = []
        known_sources = self.accelerators.sources
        seen_alias: dict[str, str] = {}
        for acc_id, acc in self.accelerators.accelerators.items():
            figures = {f"peak_tflops.{p}": f for p, f in acc.peak_tflops.items()}
            figures |= {"memory_gb": acc.memory_gb, "memory_bandwidth_tbps": acc.memory_bandwidth_tbps, "tdp_w": acc.tdp_w}
            if acc.link_gb_per_s is not None:
                figures["link_gb_per_s"] = acc.link_gb_per_s
            for key, fig in figures.items():
                if fig.source not in known_sources:
                    errors.append(
                        f"accelerators.yaml: accelerators.{acc_id}.{key}.source: unknown source "
                        f"{quoted(fig.source)} (expected one of the ids under 'sources:')"
                    )
            for alias in acc.aliases:
                norm = normalise_alias(alias)
                if not norm:
                    errors.append(f"accelerators.yaml: accelerators.{acc_id}.aliases: {quoted(alias)} is empty (it "
                                  f"would match every benchmark row that names no accelerator)")
                    continue
                if norm in seen_alias:
                    owner = "this accelerator" if seen_alias[norm] == acc_id else repr(seen_alias[norm])
                    errors.append(
                        f"accelerators.yaml: accelerators.{acc_id}.aliases: {quoted(alias)} is already an alias of "
                        f"{owner} (an alias must name one accelerator, once)"
                    )
                seen_alias[norm] = acc_id
        errors += _api_name_conflicts(self.accelerators.accelerators)
        seen_offer: set[str] = set()
        for i, inst in enumerate(self.instances.instances):
            where = f"instances.yaml: instances[{i}] ({cut(inst.offer_key)})"
            if inst.accelerator is not None and inst.accelerator not in self.accelerators.accelerators:
                errors.append(f"{where}.accelerator: unknown accelerator {quoted(inst.accelerator)} (not in accelerators.yaml)")
            if inst.accelerator is None and inst.cloud == "onprem":
                errors.append(f"{where}.accelerator: required for an on-prem system (no API lists its hardware)")
            if inst.source not in known_sources:
                errors.append(f"{where}.source: unknown source {quoted(inst.source)} (not under 'sources:' in accelerators.yaml)")
            if inst.offer_key in seen_offer:
                errors.append(f"{where}: duplicate instance type (each cloud:instance_type appears once)")
            seen_offer.add(inst.offer_key)
            if inst.cloud == "gcp" and not inst.price_components:
                errors.append(f"{where}.price_components: a GCP instance needs the SKUs its price is made of")
        for family, defaults in self.accelerators.family_defaults.items():
            if defaults.source not in known_sources:
                errors.append(f"accelerators.yaml: family_defaults.{family}.source: unknown source {quoted(defaults.source)}")
        missing_families = {a.family for a in self.accelerators.accelerators.values()} - set(
            self.accelerators.family_defaults)
        for family in sorted(missing_families):
            errors.append(f"accelerators.yaml: family_defaults.{family}: missing (accelerators of this family need "
                          f"declared defaults for the estimated basis)")
        for term, declared in self.instances.pricing_terms.items():
            if declared.source not in known_sources:
                errors.append(f"instances.yaml: pricing_terms.{term}.source: unknown source {quoted(declared.source)}")
            for cloud, rate in declared.interruptions_per_instance_month.items():
                if rate.source not in known_sources:
                    errors.append(f"instances.yaml: pricing_terms.{term}.interruptions_per_instance_month.{cloud}.source: "
                                  f"unknown source {quoted(rate.source)}")
        seen_regions: set[tuple[str, str]] = set()
        for i, grid in enumerate(self.instances.grid_intensity):
            where = f"instances.yaml: grid_intensity[{i}] ({grid.cloud}:{grid.region})"
            if grid.source not in known_sources:
                errors.append(f"{where}.source: unknown source {quoted(grid.source)}")
            if (grid.cloud, grid.region) in seen_regions:
                errors.append(f"{where}: declared twice (one figure per cloud and region)")
            seen_regions.add((grid.cloud, grid.region))
        for model_id, model in self.models.models.items():
            if model.source not in known_sources:
                errors.append(f"models.yaml: models.{model_id}.source: unknown source {quoted(model.source)}")
        for task, declared in self.models.mlperf_training_tasks.items():
            if declared.model not in self.models.models:
                errors.append(f"models.yaml: mlperf_training_tasks.{cut(task)}.model: unknown model "
                              f"{quoted(declared.model)}")
            for n, trained in enumerate(declared.trained_at):
                where = f"models.yaml: mlperf_training_tasks.{cut(task)}.trained_at[{n}]"
                if trained.source not in known_sources:
                    errors.append(f"{where}.source: unknown source {quoted(trained.source)}")
                chip = self.accelerators.accelerators.get(trained.accelerator)
                if chip is None:
                    errors.append(f"{where}.accelerator: unknown accelerator {quoted(trained.accelerator)}")
                elif trained.precision not in chip.modelled_peaks():
                    errors.append(f"{where}.precision: {trained.precision} has no peak_tflops for "
                                  f"{trained.accelerator} in accelerators.yaml: its results cannot be estimated there")
        for task, serving in self.models.mlperf_inference_tasks.items():
            if serving.model not in self.models.models:
                errors.append(f"models.yaml: mlperf_inference_tasks.{cut(task)}.model: unknown model "
                              f"{quoted(serving.model)}")
        for wl_id, wl in self.workloads.workloads.items():
            if wl.model not in self.models.models:
                errors.append(f"workloads.yaml: workloads.{wl_id}.model: unknown model {quoted(wl.model)} (not in models.yaml)")
            if wl.benchmark is not None:
                tasks_key = f"{wl.benchmark.suite}_tasks"  # mlperf_training_tasks or mlperf_inference_tasks
                task = getattr(self.models, tasks_key).get(wl.benchmark.task)
                if task is not None and task.model != wl.model:
                    errors.append(f"workloads.yaml: workloads.{wl_id}.model: {quoted(wl.model)}, but its benchmark "
                                  f"task {quoted(wl.benchmark.task)} measures {quoted(task.model)} (models.yaml: "
                                  f"{tasks_key}.{cut(wl.benchmark.task)}.model); expected the task's model, whose "
                                  f"measurements the workload ranks by")
            undeclared = [t for t in wl.pricing_terms if t not in self.instances.pricing_terms]
            if undeclared:
                errors.append(f"workloads.yaml: workloads.{wl_id}.pricing_terms: {', '.join(undeclared)} not declared "
                              f"under pricing_terms in instances.yaml (offers on them would be dropped unseen)")
            trained_by = getattr(wl, "trained_by", None)
            if trained_by is not None:
                other = self.workloads.workloads.get(trained_by)
                if other is None or other.kind != "training":
                    errors.append(f"workloads.yaml: workloads.{wl_id}.trained_by: {quoted(trained_by)} is not a training "
                                  f"workload in workloads.yaml")
        aws_price_sources = [s_id for s_id, s in self.sources.sources.items()
                             if s.enabled and s.kind in SAME_SKU_KINDS]
        if len(aws_price_sources) > 1:
            errors.append(f"sources.yaml: sources {', '.join(aws_price_sources)} are all enabled, and each lands the "
                          f"same AWS SKUs in raw.aws_pricing (expected one: set enabled: false on the others)")
        for src_id, src in self.sources.sources.items():
            if not src.files and src.live is None:
                errors.append(f"sources.yaml: sources.{src_id}: needs `files` (a snapshot or your own files) or "
                              f"`live` (options of its API fetch), or both")
            if src.live is not None and src.kind not in LIVE_KINDS:
                errors.append(f"sources.yaml: sources.{src_id}.live: kind {src.kind!r} has no live fetch "
                              f"(live kinds: {', '.join(sorted(LIVE_KINDS))})")
            elif src.live is not None:
                try:
                    SOURCE_KINDS[src.kind].check_live_options(dict(src.live))
                except SourceFormatError as exc:
                    errors.append(f"sources.yaml: sources.{src_id}.live: {cut(str(exc), 4 * MAX_QUOTED_CHARS)}")
            for j, f in enumerate(src.files):
                if f.metadata and src.kind != "benchmark_runs":
                    errors.append(f"sources.yaml: sources.{src_id}.files[{j}].metadata: only benchmark_runs files take "
                                  f"metadata (the other formats say what they measured)")
                if not _is_file(self.root / f.path):
                    errors.append(f"sources.yaml: sources.{src_id}.files[{j}].path: no such file {quoted(f.path)} "
                                  f"under {self.root}")
        if errors:
            raise CatalogError("\n".join(errors))
        return self

    def alias_map(self) -> dict[str, str]:
        """Normalised raw accelerator string -> accelerator id."""
        return {
            normalise_alias(a): acc_id
            for acc_id, acc in self.accelerators.accelerators.items()
            for a in acc.aliases
        }


def _is_file(path: Path) -> bool:
    """Whether `path` is a readable file's; a name the system refuses (too long, a NUL byte) is not."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False
