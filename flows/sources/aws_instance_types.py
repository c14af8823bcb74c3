"""EC2 `describe_instance_types` pages -> rows of raw.instance_types, one per device group of each instance type.

A region's response lists the types offered there; each GpuInfo.Gpus[], NeuronInfo.NeuronDevices[] and
InferenceAcceleratorInfo.Accelerators[] entry is a device group, with its count and memory per device as listed.
inf2 lists its Inferentia2 chips twice (NeuronInfo and InferenceAcceleratorInfo): they are counted once, from
NeuronInfo (whose entry has no Manufacturer: the one InferenceAcceleratorInfo names is taken). A type with none of
these is one CPU-only row. Wrong listings stay as listed (trn2: 524,288 MiB per Trainium2; L4: 22,888 MiB).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from flows.sources import _aws
from flows.sources._common import (
    DEFAULT_LIMITS,
    SourceFormatError,
    SourceLimits,
    excerpt,
    load_json,
    name_list,
    require,
)
from flows.sources._concurrency import CloudSlots
from flows.sources._hardware import count_text, hardware_row, items_of, number, object_at, text_at

TABLE = "instance_types"
SPLIT_BY = "regions"  # the live options list whose items are fetched independently: a fan-out task each
CLOUD = "aws"  # whose fetch_concurrency slots its regions hold
LIVE_OPTIONS = {"regions", "instance_types"}
WHAT = "aws_instance_types live options"  # how its live options' errors begin
LISTING = "describe_instance_types"


def _device(kind: str, entry: Any, where: str, manufacturer: str | None = None) -> dict:
    if not isinstance(entry, dict):
        raise SourceFormatError(f"{where}: expected an object, got {type(entry).__name__} {excerpt(entry)}")
    count = entry.get("Count")
    memory = object_at(entry, "MemoryInfo", where).get("SizeInMiB")
    return {"device_kind": kind, "device_name": text_at(entry, "Name", where),
            "device_manufacturer": text_at(entry, "Manufacturer", where) or manufacturer,
            "device_count_text": count_text(count), "device_count": number(count, f"{where}.Count"),
            "device_memory_mib": number(memory, f"{where}.MemoryInfo.SizeInMiB"), "source_ref": where}


def _devices(item: dict, where: str) -> list[dict]:
    """The item's device groups: GPUs, Neuron devices, and inference accelerators not already listed as Neuron."""
    gpu_where, neuron_where = f"{where}.GpuInfo", f"{where}.NeuronInfo"
    inference_where = f"{where}.InferenceAcceleratorInfo"
    gpus = items_of(object_at(item, "GpuInfo", where), "Gpus", gpu_where, required=False)
    neurons = items_of(object_at(item, "NeuronInfo", where), "NeuronDevices", neuron_where, required=False)
    inference = items_of(object_at(item, "InferenceAcceleratorInfo", where), "Accelerators", inference_where,
                         required=False)
    devices = [_device("gpu", gpu, f"{gpu_where}.Gpus[{j}]") for j, gpu in enumerate(gpus)]
    neuron_devices = [_device("neuron", d, f"{neuron_where}.NeuronDevices[{j}]") for j, d in enumerate(neurons)]
    listed_as_neuron = {(d["device_name"] or "").casefold(): d for d in neuron_devices}
    for j, entry in enumerate(inference):
        device = _device("inference", entry, f"{inference_where}.Accelerators[{j}]")
        twin = listed_as_neuron.get((device["device_name"] or "").casefold())
        if twin is not None:  # inf2: the same chips as its NeuronInfo entry
            twin["device_manufacturer"] = twin["device_manufacturer"] or device["device_manufacturer"]
        else:
            devices.append(device)
    return devices + neuron_devices


def instance_rows(item: Any, where: str, region: str | None) -> list[dict]:
    """The rows of one InstanceTypes[] item: one per device group, or one CPU-only row."""
    instance_type = require(item, "InstanceType", where, str)
    vcpus = object_at(item, "VCpuInfo", where).get("DefaultVCpus")
    memory = object_at(item, "MemoryInfo", where).get("SizeInMiB")
    processor = object_at(item, "ProcessorInfo", where)
    architectures = items_of(processor, "SupportedArchitectures", f"{where}.ProcessorInfo", required=False)
    host = {"cloud": "aws", "listing": LISTING, "region": region, "instance_type": instance_type,
            "vcpu_text": count_text(vcpus), "vcpu": number(vcpus, f"{where}.VCpuInfo.DefaultVCpus"),
            "memory_mib": number(memory, f"{where}.MemoryInfo.SizeInMiB"),
            "cpu_manufacturer": text_at(processor, "Manufacturer", f"{where}.ProcessorInfo"),
            "cpu_architecture": ",".join(str(a) for a in architectures) or None}
    devices = _devices(item, where)
    if not devices:
        return [hardware_row(**host, source_ref=where)]
    return [hardware_row(**host, **device) for device in devices]


def hardware_rows(page: Any, where: str, region: str | None) -> Iterator[dict]:
    for i, item in enumerate(require(page, "InstanceTypes", where, list)):
        yield from instance_rows(item, f"{where}: InstanceTypes[{i}]", region)


def rows_from_pages(pages: Iterable[tuple[str, Any, str | None]]) -> list[dict]:
    return [row for where, page, region in pages for row in hardware_rows(page, where, region)]


def _query(options: dict) -> dict:
    """describe_instance_types arguments: the `instance_types` names or patterns (p5.*, trn*) as a filter."""
    patterns = name_list(options, "instance_types", WHAT)
    return {"Filters": [{"Name": "instance-type", "Values": list(patterns)}]} if patterns else {}


def region_pages(client, region: str, query: dict, *, sleep=time.sleep,
                 limits: SourceLimits = DEFAULT_LIMITS) -> Iterator[tuple[str, dict, str]]:
    """One region's describe_instance_types pages, through that region's EC2 client."""
    what = f"ec2.describe_instance_types {region}"
    for n, page in enumerate(_aws.pages(client, "describe_instance_types", what, sleep=sleep, limits=limits,
                                        **query), start=1):
        yield f"{what} page {n}", page, region


def check_live_options(options: dict) -> None:
    """SourceFormatError for a `live:` block this source cannot use (also run by `hweval check`)."""
    _aws.check_options(options, LIVE_OPTIONS, {"regions"}, "aws_instance_types")
    name_list(options, "regions", WHAT, required=True)
    name_list(options, "instance_types", WHAT, hint=" (names or patterns such as p5.*; leave it out for every type)")


def fetch_live(options: dict, *, limits: SourceLimits = DEFAULT_LIMITS, session=None, sleep=time.sleep,
               slots: CloudSlots | None = None) -> list[dict]:
    """Instance hardware for `regions` (required); `instance_types` (names or patterns) narrows the call. With
    `slots`, regions are fetched side by side, each holding one of AWS's slots; rows come in region order."""
    check_live_options(options)
    query = _query(options)
    regions = name_list(options, "regions", WHAT, required=True)
    return _aws.rows_by_region("ec2", regions, session, slots, lambda client, region: rows_from_pages(
        region_pages(client, region, query, sleep=sleep, limits=limits)))


def read_file(path: Path, label: str, region: str | None = None, *,
              limits: SourceLimits = DEFAULT_LIMITS) -> list[dict]:
    """A saved describe_instance_types response for one region (`region:` in sources.yaml: items do not say it)."""
    page = load_json(path, label, limits)
    if not isinstance(page, dict):
        raise SourceFormatError(f"{label}: expected a describe_instance_types response object, "
                                f"got {type(page).__name__}")
    return rows_from_pages([(label, page, region)])
