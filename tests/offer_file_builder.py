"""Synthetic AWS EC2 bulk offer files (`index.csv`) and the equivalent `pricing.get_products` pages.

Written for the tests from the published layout (not copied from a sample): 5 metadata lines
(`"FormatVersion","v1.0"`, Disclaimer, Publication Date, Version, OfferCode), a header line with the real
column names (a subset, in an order of our own: the reader must go by name), then one fully quoted line per
price dimension, empty fields left unquoted as AWS writes them.

The same product list feeds `write_offer_file` and `api_pages`, so a test can check that both sources give the
same prices. `products()` interleaves accelerated instances (GPU instance / Machine Learning ASIC Instances,
Compute Instance) with many more rows the offer-file reader must skip: ordinary instances, storage, data
transfer, and GPU Dedicated Hosts (instance family "GPU instance" but product family "Dedicated Host").
"""

from __future__ import annotations

import csv
import hashlib
import json
import random
from collections.abc import Iterable, Iterator
from pathlib import Path

PUBLICATION_DATE = "2026-09-10T19:55:14Z"
VERSION = "20260910195514"
DISCLAIMER = ("This pricing list is for informational purposes only. All prices are subject to the additional terms "
              "included in the pricing pages on http://aws.amazon.com. All Free Tier prices are also subject to the "
              "terms included at https://aws.amazon.com/free/")

# A subset of the real header, shuffled on purpose: price columns are not first, and the product
# attributes the reader needs are scattered among ones it ignores.
COLUMNS = [
    "Instance Type", "Product Family", "SKU", "serviceCode", "GPU Memory", "Location", "usageType", "RateCode",
    "Currency", "Operating System", "EffectiveDate", "Pre Installed S/W", "TermType", "Location Type", "vCPU",
    "Unit", "StartingRange", "EndingRange", "Instance Family", "PricePerUnit", "Memory", "OfferTermCode",
    "LeaseContractLength", "Physical Processor", "Tenancy", "PriceDescription", "License Model", "operation",
    "PurchaseOption", "CapacityStatus", "OfferingClass", "GPU", "Network Performance", "MarketOption",
    "Region Code", "Transfer Type", "Volume API Name", "Current Generation", "RelatedTo", "serviceName",
]

# offer-file column -> get_products attribute key (the ones aws_pricing reads, plus a few it ignores)
API_ATTRIBUTES = {
    "Instance Type": "instanceType", "Region Code": "regionCode", "Location": "location",
    "Instance Family": "instanceFamily", "Operating System": "operatingSystem", "License Model": "licenseModel",
    "Pre Installed S/W": "preInstalledSw", "Tenancy": "tenancy", "CapacityStatus": "capacitystatus",
    "MarketOption": "marketoption", "usageType": "usagetype", "vCPU": "vcpu", "GPU": "gpu",
    "GPU Memory": "gpuMemory", "Memory": "memory", "Physical Processor": "physicalProcessor",
    "Network Performance": "networkPerformance", "operation": "operation", "Location Type": "locationType",
    "Current Generation": "currentGeneration", "serviceCode": "servicecode", "serviceName": "servicename",
}

ACCELERATED_FAMILIES = ("GPU instance", "Machine Learning ASIC Instances")
ON_DEMAND_CODE = "JRTCKXETXF"
HOURLY_RATE = "6YS6EN2CT7"
UPFRONT_RATE = "2TG2D8R56U"
# (lease, purchase option, offering class) -> offer term code, as in the real files
RESERVED_TERMS = {
    ("1yr", "No Upfront", "standard"): "4NA7Y494T4", ("1yr", "Partial Upfront", "standard"): "HU7G6KETJZ",
    ("1yr", "All Upfront", "standard"): "6QCMYABX3D", ("3yr", "No Upfront", "standard"): "BPH4J8HBKS",
    ("3yr", "Partial Upfront", "standard"): "38NPMPTW36", ("3yr", "All Upfront", "standard"): "NQ3QZPMQV9",
    ("1yr", "No Upfront", "convertible"): "7NE97W5U4E", ("1yr", "Partial Upfront", "convertible"): "CUZHX8X6JH",
    ("1yr", "All Upfront", "convertible"): "VJWZNREJX2", ("3yr", "No Upfront", "convertible"): "Z2E3P23VKM",
    ("3yr", "Partial Upfront", "convertible"): "R5XV2EPZQZ", ("3yr", "All Upfront", "convertible"): "MZU6U2429S",
}

REGION = ("us-east-1", "US East (N. Virginia)", "USE1")

# instance type -> (family, vCPU, GPU, GPU memory, memory, processor, on-demand Linux $/h)
ACCELERATED = {
    "p5.48xlarge": ("GPU instance", "192", "8", "640 GB HBM3", "2048 GiB", "AMD EPYC 7R13 Processor", 55.04),
    "p5e.48xlarge": ("GPU instance", "192", "8", "1128 GB HBM3e", "2048 GiB", "AMD EPYC 7R13 Processor", 60.0),
    "p4d.24xlarge": ("GPU instance", "96", "8", "320 GB HBM2", "1152 GiB", "Intel Xeon Platinum 8275L", 21.957642),
    "p4de.24xlarge": ("GPU instance", "96", "8", "640 GB HBM2e", "1152 GiB", "Intel Xeon Platinum 8275L", 27.44705),
    "g6.2xlarge": ("GPU instance", "8", "1", "22 GiB", "32 GiB", "AMD EPYC 7R13 Processor", 0.9776),
    "g6e.12xlarge": ("GPU instance", "48", "4", "192 GiB", "384 GiB", "AMD EPYC 7R13 Processor", 10.49264),
    "g5.xlarge": ("GPU instance", "4", "1", "24 GB", "16 GiB", "AMD EPYC 7R32", 1.006),
    "trn1.32xlarge": ("Machine Learning ASIC Instances", "128", "", "", "512 GiB", "Intel Xeon Platinum 8375C",
                      21.5),
    "trn2.48xlarge": ("Machine Learning ASIC Instances", "192", "", "", "2048 GiB", "Intel Xeon Platinum 8488C",
                      44.7),
    "inf2.xlarge": ("Machine Learning ASIC Instances", "4", "", "", "16 GiB", "AMD EPYC 7R13 Processor", 0.7582),
    "inf2.48xlarge": ("Machine Learning ASIC Instances", "192", "", "", "768 GiB", "AMD EPYC 7R13 Processor",
                      12.98127),
}
CAPACITY_BLOCK_TYPES = ("p5.48xlarge", "p5e.48xlarge", "p4d.24xlarge", "trn1.32xlarge")

# (family prefix, instance family, processor, $/vCPU-hour) for the rows the reader must skip
ORDINARY = [
    ("c5", "Compute optimized", "Intel Xeon Platinum 8124M", 0.0425), ("c6i", "Compute optimized",
                                                                        "Intel Xeon 8375C (Ice Lake)", 0.0425),
    ("c7g", "Compute optimized", "AWS Graviton3 Processor", 0.03625), ("m5", "General purpose",
                                                                        "Intel Xeon Platinum 8175", 0.048),
    ("m6i", "General purpose", "Intel Xeon 8375C (Ice Lake)", 0.048), ("m7g", "General purpose",
                                                                       "AWS Graviton3 Processor", 0.0408),
    ("r6i", "Memory optimized", "Intel Xeon 8375C (Ice Lake)", 0.063), ("r7g", "Memory optimized",
                                                                        "AWS Graviton3 Processor", 0.05355),
    ("i4i", "Storage optimized", "Intel Xeon 8375C (Ice Lake)", 0.0858), ("t3", "General purpose",
                                                                          "Intel Skylake E5 2686 v5", 0.0208),
]
SIZES = {"large": 2, "xlarge": 4, "2xlarge": 8, "4xlarge": 16, "8xlarge": 32, "12xlarge": 48, "16xlarge": 64,
         "24xlarge": 96, "32xlarge": 128}

# (operating system, pre-installed software, license model, on-demand multiplier)
PLATFORMS = [
    ("Linux", "NA", "No License required", 1.0), ("Windows", "NA", "No License required", 1.184),
    ("Windows", "SQL Web", "No License required", 1.31), ("Linux", "SQL Std", "No License required", 1.62),
    ("RHEL", "NA", "No License required", 1.05),
]
TENANCIES = {"Shared": 1.0, "Dedicated": 1.1}
CAPACITY_STATUSES = ("Used", "UnusedCapacityReservation", "AllocatedCapacityReservation")

# The whole market's shape, for `make bench` (`products(market=True)`): a regional file's every column, and one SKU per
# instance type x operating system and pre-installed software (9) x licence model (2) x tenancy (3) x capacity status
# (3), 162 a type, each with an on-demand rate and the 12 reserved terms' rates. The tests' files keep the smaller
# shape above (30 SKUs a type, reserved terms on the plain ones): their figures are worked out by hand.
MARKET_SYSTEMS = [
    ("Linux", "NA", 1.0), ("Windows", "NA", 1.184), ("Windows", "SQL Web", 1.31), ("Windows", "SQL Std", 1.62),
    ("Windows", "SQL Ent", 2.4), ("RHEL", "NA", 1.05), ("SUSE", "NA", 1.09),
    ("Red Hat Enterprise Linux with HA", "NA", 1.12), ("Ubuntu Pro", "NA", 1.02),
]
MARKET_LICENCES = {"No License required": 1.0, "Bring your own license": 0.93}
MARKET_PLATFORMS = [(os_name, sw, licence, factor * licence_factor) for os_name, sw, factor in MARKET_SYSTEMS
                    for licence, licence_factor in MARKET_LICENCES.items()]
MARKET_TENANCIES = {"Shared": 1.0, "Dedicated": 1.1, "Host": 1.21}
# the regional file's other columns (91 in all), empty in these rows as in most of the real ones
MARKET_COLUMNS = COLUMNS + [
    "Clock Speed", "Storage", "Processor Architecture", "Storage Media", "Volume Type", "Max Volume Size",
    "Max IOPS/volume", "Max IOPS Burst Performance", "Max throughput/volume", "Provisioned", "EBS Optimized", "Group",
    "Group Description", "From Location", "From Location Type", "To Location", "To Location Type",
    "AvailabilityZone", "ClassicNetworkingSupport", "Dedicated EBS Throughput", "ECU", "Elastic Graphics Type",
    "Enhanced Networking Supported", "From Region Code", "Instance", "Instance Capacity - 10xlarge",
    "Instance Capacity - 12xlarge", "Instance Capacity - 16xlarge", "Instance Capacity - 18xlarge",
    "Instance Capacity - 24xlarge", "Instance Capacity - 2xlarge", "Instance Capacity - 32xlarge",
    "Instance Capacity - 4xlarge", "Instance Capacity - 8xlarge", "Instance Capacity - 9xlarge",
    "Instance Capacity - large", "Instance Capacity - medium", "Instance Capacity - metal",
    "Instance Capacity - xlarge", "instanceSKU", "Intel AVX2 Available", "Intel AVX Available",
    "Intel Turbo Available", "Normalization Size Factor", "Physical Cores", "Processor Features", "Product Type",
    "Resource Type", "SnapshotArchiveFeeType", "To Region Code", "VPCNetworkingSupport",
]
# the CPU baseline types the offer-file source keeps by name (flows/sources/_aws.py CPU_BASELINE_INSTANCE_TYPES)
MARKET_CPU_BASELINES = {
    "c8i.96xlarge": ("384", "768 GiB", "Intel Xeon 6", 16.9344),
    "c8i.metal-48xl": ("192", "384 GiB", "Intel Xeon 6", 8.4672),
    "c8a.48xlarge": ("192", "384 GiB", "AMD EPYC 9R45", 9.8726),
    "c8g.metal-24xl": ("96", "192 GiB", "AWS Graviton4 Processor", 3.82848),
}


def _sku(*parts: object) -> str:
    """A stable 16-character SKU made from the product's defining attributes."""
    digest = hashlib.sha1("|".join(map(str, parts)).encode()).digest()
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
    return "".join(alphabet[b % len(alphabet)] for b in digest[:16])


def _money(value: float) -> str:
    return f"{value:.10f}"


def _instance_product(instance_type: str, family: str, vcpu: str, gpu: str, gpu_memory: str, memory: str,
                      processor: str, hourly: float, platform: tuple, tenancy: str, capacity: str,
                      market: str = "OnDemand", whole_market: bool = False) -> dict:
    """One Compute Instance product: an on-demand term, and the 12 reserved terms when it is a plain 'Used' one (any,
    in the `whole_market` shape)."""
    os_name, sw, license_model, os_factor = platform
    region, location, prefix = REGION
    tenancy_factor = (MARKET_TENANCIES if whole_market else TENANCIES)[tenancy]
    usage = {"Shared": "BoxUsage", "Dedicated": "DedicatedUsage", "Host": "HostBoxUsage"}[tenancy]
    if capacity != "Used":
        usage = {"UnusedCapacityReservation": "UnusedBox", "AllocatedCapacityReservation": "Reservation"}[capacity]
    sku = _sku(instance_type, os_name, sw, tenancy, capacity, market,
               *((license_model,) if license_model != "No License required" else ()))
    attrs = {
        "Instance Type": instance_type, "Region Code": region, "Location": location, "Instance Family": family,
        "Operating System": os_name, "License Model": license_model, "Pre Installed S/W": sw, "Tenancy": tenancy,
        "CapacityStatus": capacity, "MarketOption": market, "usageType": f"{prefix}-{usage}:{instance_type}",
        "vCPU": vcpu, "GPU": gpu, "GPU Memory": gpu_memory, "Memory": memory, "Physical Processor": processor,
        "Network Performance": "Up to 12500 Megabit", "operation": "RunInstances" + ("" if os_name == "Linux" else
                                                                                    ":0002"),
        "Location Type": "AWS Region", "Current Generation": "Yes", "serviceCode": "AmazonEC2",
        "serviceName": "Amazon Elastic Compute Cloud",
    }
    od_price = 0.0 if market == "CapacityBlock" else round(hourly * os_factor * tenancy_factor, 6)
    kind = "Capacity Block" if market == "CapacityBlock" else "On Demand"
    terms = [{"term_type": "OnDemand", "code": ON_DEMAND_CODE, "attrs": {}, "dims": [
        {"rate": HOURLY_RATE, "unit": "Hrs", "price": _money(od_price), "begin": "0", "end": "Inf",
         "description": f"${od_price:.2f} per {kind} {os_name} {instance_type} Instance Hour"}]}]
    if (capacity == "Used" or whole_market) and market == "OnDemand":
        for (lease, option, offering), code in RESERVED_TERMS.items():
            years = int(lease[0])
            discount = (0.62 if years == 1 else 0.42) * (1.0 if offering == "standard" else 1.12)
            effective = od_price * discount
            hours = 8760 * years
            if option == "No Upfront":
                hourly_part, upfront = effective * 1.05, None
            elif option == "Partial Upfront":
                hourly_part, upfront = effective / 2, round(effective / 2 * hours)
            else:
                hourly_part, upfront = 0.0, round(effective * 0.98 * hours)
            dims = [{"rate": HOURLY_RATE, "unit": "Hrs", "price": _money(hourly_part), "begin": "0", "end": "Inf",
                     "description": f"{os_name}/UNIX ({sw}), {instance_type} reserved instance applied"}]
            if upfront is not None:
                dims.append({"rate": UPFRONT_RATE, "unit": "Quantity", "price": str(upfront), "begin": "",
                             "end": "", "description": "Upfront Fee"})
            terms.append({"term_type": "Reserved", "code": code, "dims": dims, "attrs": {
                "LeaseContractLength": lease, "PurchaseOption": option, "OfferingClass": offering}})
    return {"sku": sku, "product_family": "Compute Instance", "attrs": attrs, "terms": terms}


def accelerated_products(market: bool = False) -> list[dict]:
    """Every accelerated Compute Instance product: platforms x tenancies x capacity statuses, plus Capacity Blocks;
    in the whole `market`'s shape, also the CPU baseline types (kept by name)."""
    out = []
    platforms, tenancies = (MARKET_PLATFORMS, MARKET_TENANCIES) if market else (PLATFORMS, TENANCIES)
    types = dict(ACCELERATED)
    if market:
        types |= {t: ("Compute optimized", vcpu, "", "", memory, cpu, hourly)
                  for t, (vcpu, memory, cpu, hourly) in MARKET_CPU_BASELINES.items()}
    for instance_type, (family, vcpu, gpu, gpu_mem, memory, cpu, hourly) in types.items():
        for platform in platforms:
            for tenancy in tenancies:
                for capacity in CAPACITY_STATUSES:
                    out.append(_instance_product(instance_type, family, vcpu, gpu, gpu_mem, memory, cpu, hourly,
                                                 platform, tenancy, capacity, whole_market=market))
        if instance_type in CAPACITY_BLOCK_TYPES:
            out.append(_instance_product(instance_type, family, vcpu, gpu, gpu_mem, memory, cpu, hourly,
                                         PLATFORMS[0], "Shared", "Used", market="CapacityBlock"))
    return out


def _ordinary_products(market: bool = False) -> Iterator[dict]:
    """Non-accelerated instances, endlessly (a new generation suffix each round keeps SKUs unique)."""
    platforms, tenancies = (MARKET_PLATFORMS, MARKET_TENANCIES) if market else (PLATFORMS, TENANCIES)
    generation = 0
    while True:
        suffix = "" if generation == 0 else f"n{generation}"
        for prefix, family, cpu, per_vcpu in ORDINARY:
            for size, vcpus in SIZES.items():
                instance_type = f"{prefix}{suffix}.{size}"
                for platform in platforms:
                    for tenancy in tenancies:
                        for capacity in CAPACITY_STATUSES:
                            yield _instance_product(instance_type, family, str(vcpus), "", "", f"{vcpus * 4} GiB",
                                                    cpu, per_vcpu * vcpus, platform, tenancy, capacity,
                                                    whole_market=market)
        generation += 1


def _other_products(n: int) -> Iterator[dict]:
    """Storage, data transfer and GPU Dedicated Host products: rows the reader must skip."""
    region, location, prefix = REGION
    base = {"Region Code": region, "Location": location, "Location Type": "AWS Region", "serviceCode": "AmazonEC2",
            "serviceName": "Amazon Elastic Compute Cloud"}
    for i in range(n):
        kind = i % 3
        if kind == 0:
            volume = ("gp3", "gp2", "io2", "st1", "sc1")[i % 5]
            family, attrs = "Storage", base | {"Volume API Name": f"{volume}", "usageType": f"EBS:VolumeUsage.{volume}"}
            dims = [{"rate": HOURLY_RATE, "unit": "GB-Mo", "price": _money(0.08 + i % 7 / 100), "begin": "0",
                     "end": "Inf", "description": f"$0.08 per GB-month of {volume} provisioned storage"}]
        elif kind == 1:
            family, attrs = "Data Transfer", base | {"Transfer Type": "AWS Outbound",
                                                     "usageType": f"{prefix}-DataTransfer-Out-Bytes{i}"}
            tiers = [("0", "10240", 0.09), ("10240", "51200", 0.085), ("51200", "153600", 0.07),
                     ("153600", "Inf", 0.05)]
            dims = [{"rate": f"{t:02d}{HOURLY_RATE[2:]}", "unit": "GB", "price": _money(p), "begin": b, "end": e,
                     "description": f"${p} per GB - next tier data transfer out"} for t, (b, e, p) in enumerate(tiers)]
        else:  # the Dedicated Host of an accelerated family: right instance family, wrong product family
            instance_family = ("p5", "p4d", "g6", "trn1")[i % 4]
            family, attrs = "Dedicated Host", base | {
                "Instance Type": instance_family, "Tenancy": "Host",
                "Instance Family": "Machine Learning ASIC Instances" if instance_family == "trn1" else "GPU instance",
                "usageType": f"{prefix}-HostUsage:{instance_family}", "Operating System": "Linux",
                "Pre Installed S/W": "NA", "CapacityStatus": "Used", "MarketOption": "OnDemand"}
            dims = [{"rate": HOURLY_RATE, "unit": "Hrs", "price": _money(60.5 + i % 5), "begin": "0", "end": "Inf",
                     "description": f"On Demand Linux {instance_family} Dedicated Host Instance hour"}]
        sku = _sku("other", i)
        yield {"sku": sku, "product_family": family, "attrs": attrs,
               "terms": [{"term_type": "OnDemand", "code": ON_DEMAND_CODE, "attrs": {}, "dims": dims}]}


def row_count(products: Iterable[dict]) -> int:
    """How many CSV lines (price dimensions) these products make."""
    return sum(len(term["dims"]) for p in products for term in p["terms"])


def is_accelerated(product: dict) -> bool:
    """What the offer-file reader keeps: an accelerated instance family and the Compute Instance product family."""
    return (product["product_family"] == "Compute Instance"
            and product["attrs"].get("Instance Family") in ACCELERATED_FAMILIES)


def products(min_rows: int = 200_000, seed: int = 7, other: int = 3_000, market: bool = False) -> list[dict]:
    """All accelerated products, `other` storage/transfer/host products and enough ordinary instances to reach
    `min_rows` lines; shuffled (seeded) so accelerated rows are spread through the file, as in the real one. With
    `market`, in the whole market's shape (MARKET_*: make bench's file; write it with `columns=MARKET_COLUMNS`)."""
    out = accelerated_products(market) + list(_other_products(other))
    rows = row_count(out)
    ordinary = _ordinary_products(market)
    while rows < min_rows:
        product = next(ordinary)
        out.append(product)
        rows += row_count([product])
    random.Random(seed).shuffle(out)
    return out


def offer_rows(items: Iterable[dict]) -> Iterator[dict]:
    """One offer-file record (column name -> text) per price dimension."""
    for product in items:
        for term in product["terms"]:
            for dim in term["dims"]:
                yield product["attrs"] | term["attrs"] | {
                    "SKU": product["sku"], "Product Family": product["product_family"],
                    "OfferTermCode": term["code"], "RateCode": f"{product['sku']}.{term['code']}.{dim['rate']}",
                    "TermType": term["term_type"], "PriceDescription": dim["description"],
                    "EffectiveDate": "2026-09-01", "StartingRange": dim["begin"], "EndingRange": dim["end"],
                    "Unit": dim["unit"], "PricePerUnit": dim["price"], "Currency": "USD",
                }


class _QuoteAll:
    """Writes one CSV line like AWS: every non-empty field quoted, empty fields left bare (`,,`)."""

    def __init__(self, out):
        self.out = out

    def writerow(self, values: Iterable[str]) -> None:
        self.out.write(",".join('"' + v.replace('"', '""') + '"' if v else "" for v in values) + "\n")


def write_offer_file(path: Path, items: Iterable[dict], *, columns: list[str] = COLUMNS,
                     publication_date: str = PUBLICATION_DATE, metadata_lines: int = 5) -> int:
    """Stream an offer file to `path` (metadata, header, rows); returns the number of data lines written.

    `metadata_lines` < 5 writes a truncated preamble, for malformed-file tests.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with path.open("w", encoding="utf-8", newline="") as f:
        meta = csv.writer(f, quoting=csv.QUOTE_ALL, lineterminator="\n")
        preamble = [("FormatVersion", "v1.0"), ("Disclaimer", DISCLAIMER), ("Publication Date", publication_date),
                    ("Version", VERSION), ("OfferCode", "AmazonEC2")]
        meta.writerows(preamble[:metadata_lines])
        meta.writerow(columns)
        out = _QuoteAll(f)
        for record in offer_rows(items):
            out.writerow(record.get(c, "") for c in columns)
            n += 1
    return n


def api_item(product: dict, publication_date: str = PUBLICATION_DATE) -> str:
    """The product as one `get_products` PriceList item: a JSON string, empty attributes left out as the API does."""
    sku = product["sku"]
    attributes = {API_ATTRIBUTES[k]: v for k, v in product["attrs"].items() if k in API_ATTRIBUTES and v}
    terms: dict[str, dict] = {}
    for term in product["terms"]:
        dims = {}
        for dim in term["dims"]:
            rate_code = f"{sku}.{term['code']}.{dim['rate']}"
            dims[rate_code] = {"unit": dim["unit"], "endRange": dim["end"], "description": dim["description"],
                               "appliesTo": [], "rateCode": rate_code, "beginRange": dim["begin"],
                               "pricePerUnit": {"USD": dim["price"]}}
        terms.setdefault(term["term_type"], {})[f"{sku}.{term['code']}"] = {
            "priceDimensions": dims, "sku": sku, "effectiveDate": "2026-09-01T00:00:00Z",
            "offerTermCode": term["code"], "termAttributes": term["attrs"]}
    return json.dumps({"product": {"productFamily": product["product_family"], "attributes": attributes, "sku": sku},
                       "serviceCode": "AmazonEC2", "terms": terms, "version": VERSION,
                       "publicationDate": publication_date})


def api_pages(items: Iterable[dict], page_size: int = 100) -> list[tuple[str, dict]]:
    """(where, page) pairs as `aws_pricing.pages_from_api` yields them, for the accelerated products only."""
    selected = [api_item(p) for p in items if is_accelerated(p)]
    pages = []
    for n, start in enumerate(range(0, len(selected), page_size), start=1):
        page = {"FormatVersion": "aws_v1", "PriceList": selected[start:start + page_size]}
        if start + page_size < len(selected):
            page["NextToken"] = f"token-{n}"
        pages.append((f"pricing.get_products page {n}", page))
    return pages
