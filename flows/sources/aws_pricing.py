"""AWS Price List API (`pricing.get_products` for AmazonEC2) pages -> rows of raw.aws_pricing."""

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
    parse_json,
    require,
    to_float,
)
from flows.sources._concurrency import CloudSlots, in_order

TABLE = "aws_pricing"
SPLIT_BY = "regions"  # the live options list whose items are fetched independently: a fan-out task each
CLOUD = "aws"  # whose fetch_concurrency slots its regions hold

_ATTRIBUTES = {
    "instance_type": "instanceType",
    "region_code": "regionCode",
    "location": "location",
    "instance_family": "instanceFamily",
    "operating_system": "operatingSystem",
    "license_model": "licenseModel",
    "pre_installed_sw": "preInstalledSw",
    "tenancy": "tenancy",
    "capacity_status": "capacitystatus",
    "market_option": "marketoption",
    "usage_type": "usagetype",
    "vcpu": "vcpu",
    "gpu": "gpu",
}


def price_rows(page: Any, where: str) -> Iterator[dict]:
    """One row per price dimension of every term of every product on one get_products page."""
    price_list = require(page, "PriceList", where, list)
    for i, item in enumerate(price_list):
        item_where = f"{where}: PriceList[{i}]"
        if isinstance(item, str):  # the real API returns each product as a JSON string
            item = parse_json(item, item_where)
        product = require(item, "product", item_where, dict)
        attrs = require(product, "attributes", f"{item_where}.product", dict)
        base = {col: attrs.get(key) for col, key in _ATTRIBUTES.items()}
        base["source_ref"] = item_where
        base["sku"] = product.get("sku")
        base["publication_date"] = item.get("publicationDate")
        terms = require(item, "terms", item_where, dict)
        for term_type in terms:
            for term_code, term in require(terms, term_type, f"{item_where}.terms", dict).items():
                term_where = f"{item_where}.terms.{term_type}.{term_code}"
                dims = require(term, "priceDimensions", term_where, dict)  # first: it also says a term is an object
                term_attrs = term.get("termAttributes") or {}
                if not isinstance(term_attrs, dict):
                    raise SourceFormatError(f"{term_where}.termAttributes: expected an object of name: value, got "
                                            f"{type(term_attrs).__name__} {excerpt(term_attrs)}")
                for rate_code, dim in dims.items():
                    currency, price_text = _price(require(dim, "pricePerUnit", f"{term_where}.{rate_code}", dict))
                    yield base | {
                        "term_type": term_type,
                        "offer_term_code": term.get("offerTermCode"),
                        "lease_contract_length": term_attrs.get("LeaseContractLength"),
                        "purchase_option": term_attrs.get("PurchaseOption"),
                        "offering_class": term_attrs.get("OfferingClass"),
                        "rate_code": rate_code,
                        "unit": dim.get("unit"),
                        "price_text": price_text,
                        "currency": currency,
                        "price_usd": to_float(price_text),
                        "description": dim.get("description"),
                    }


def _price(per_unit: dict) -> tuple[str | None, Any]:
    """(currency, price text) of a pricePerUnit: its USD figure, else the one it gives (the China regions' are in CNY),
    which keeps its currency and figure and is quarantined by the suite (currency_usd), never read as USD; an empty
    one is (None, None): quarantined too (currency_present, price_usd_present), not a failed source. bedrock_pricing
    reads its Price List dimensions with it too (model_api_prices: currency_usd, currency_present,
    usd_per_million_tokens_present)."""
    if "USD" in per_unit:
        return "USD", per_unit["USD"]
    for currency, text in sorted(per_unit.items()):
        return currency, text
    return None, None


def rows_from_pages(pages: Iterable[tuple[str, Any]]) -> list[dict]:
    """Rows from (where, page) pairs; `where` names the file or request each page came from."""
    return [row for where, page in pages for row in price_rows(page, where)]


ACCELERATED_FAMILIES = ("GPU instance", "Machine Learning ASIC Instances")
LIVE_OPTIONS = {"regions", "endpoint_region", "instance_families", "cpu_instance_types"}
WHAT = "aws_pricing live options"  # how its live options' errors begin


def pages_from_api(client, regions: list[str], service_code: str = "AmazonEC2",
                   families: tuple[str, ...] = ACCELERATED_FAMILIES, sleep=time.sleep,
                   limits: SourceLimits = DEFAULT_LIMITS,
                   cpu_instance_types: tuple[str, ...] = ()) -> Iterator[tuple[str, dict]]:
    """`get_products` pages for accelerated instances in `regions`, through boto3's paginator.

    Every term comes back (OnDemand and Reserved, all operating systems): staging classifies them, so a Capacity
    Block, a Windows or a licence-included row is landed as what it is and never poses as Linux on-demand.
    """
    for region in regions:
        yield from region_pages(client, region, service_code, families, sleep=sleep, limits=limits,
                                cpu_instance_types=cpu_instance_types)


def region_pages(client, region: str, service_code: str = "AmazonEC2",
                 families: tuple[str, ...] = ACCELERATED_FAMILIES, sleep=time.sleep,
                 limits: SourceLimits = DEFAULT_LIMITS,
                 cpu_instance_types: tuple[str, ...] = ()) -> Iterator[tuple[str, dict]]:
    """`get_products` pages for one region: each accelerated instance family, then each CPU baseline type."""
    listings = [("instanceFamily", family) for family in families]
    listings += [("instanceType", instance_type) for instance_type in cpu_instance_types]
    for field, value in listings:
        what = f"pricing.get_products {region} {value!r}"
        filters = [
            {"Type": "TERM_MATCH", "Field": "regionCode", "Value": region},
            {"Type": "TERM_MATCH", "Field": field, "Value": value},
        ]
        for n, page in enumerate(_aws.pages(client, "get_products", what, sleep=sleep, limits=limits,
                                            ServiceCode=service_code, Filters=filters), start=1):
            yield f"{what} page {n}", page


def fetch_live(options: dict, *, limits: SourceLimits = DEFAULT_LIMITS, session=None, sleep=time.sleep,
               slots: CloudSlots | None = None) -> list[dict]:
    """Rows for the regions in `options` from the Price List API (credentials from boto3's standard chain).

    Options: `regions` (required), `endpoint_region` (us-east-1, eu-central-1 or ap-south-1; default us-east-1),
    `instance_families` (default: GPU instance, Machine Learning ASIC Instances), `cpu_instance_types` (the CPU
    baseline types, fetched one by one; sources.yaml lists _aws.CPU_BASELINE_INSTANCE_TYPES; default none). With
    `slots`, regions are fetched side by side, each holding one of AWS's slots; rows come in region order either way.
    """
    check_live_options(options)
    endpoint = options.get("endpoint_region", "us-east-1")
    client = _aws.client("pricing", endpoint, session)  # one client, made here: boto3 clients are thread-safe
    families = tuple(name_list(options, "instance_families", WHAT) or ACCELERATED_FAMILIES)
    cpu_types = tuple(name_list(options, "cpu_instance_types", WHAT, empty_ok=True) or ())

    def region_rows(region: str) -> list[dict]:
        return rows_from_pages(region_pages(client, region, families=families, sleep=sleep, limits=limits,
                                            cpu_instance_types=cpu_types))

    return [row for rows in in_order(region_rows, name_list(options, "regions", WHAT, required=True), slots)
            for row in rows]


PRICE_LIST_ENDPOINTS = ("us-east-1", "eu-central-1", "ap-south-1")


def check_live_options(options: dict) -> None:
    """SourceFormatError for a `live:` block this source cannot use (also run by `hweval check`)."""
    _aws.check_options(options, LIVE_OPTIONS, {"regions"}, "aws_pricing")
    endpoint = options.get("endpoint_region", "us-east-1")
    if endpoint not in PRICE_LIST_ENDPOINTS:
        raise SourceFormatError(f"aws_pricing: live option endpoint_region {endpoint!r}: the Price List API is served "
                                f"from {', '.join(PRICE_LIST_ENDPOINTS)}")
    name_list(options, "regions", WHAT, required=True)
    name_list(options, "instance_families", WHAT, hint=f" (leave it out for {', '.join(ACCELERATED_FAMILIES)})")
    name_list(options, "cpu_instance_types", WHAT, empty_ok=True, hint=" (instance types, e.g. [c8i.96xlarge], or [] "
                                                                        "for none)")


def read_file(path: Path, label: str, region: str | None = None, *,
              limits: SourceLimits = DEFAULT_LIMITS) -> list[dict]:
    """One snapshot page on disk, read exactly as a live `get_products` response."""
    return rows_from_pages([(label, load_json(path, label, limits))])
