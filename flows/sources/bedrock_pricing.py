"""AWS Price List API (`pricing.get_products` for AmazonBedrock) pages -> token prices in raw.model_api_prices.

The item shape is the Price List's (each PriceList entry a JSON string; `product.attributes` with `model`,
`inferenceType`, `feature`, `regionCode`, `usagetype`, `provider`; `terms.OnDemand.*.priceDimensions` with `unit` and
`pricePerUnit.USD`), as a real AmazonBedrock item shows it (aws/aws-cli issue 9567: Claude 2.0, "Input tokens",
"On-demand Inference", unit "1K tokens", 2025-06-18). A price in another currency (the China regions' are in CNY) or
an empty `pricePerUnit` is read as aws_pricing reads it, landed with its currency (or none) and quarantined by the
suite; the page's other prices land. `model` is a display name ("Claude 2.0"), not a model id:
catalogs/models.yaml `api_names` maps it. The unit is usually "1K tokens", on newer SKUs "1M tokens"; any other unit
is rejected with the reason. Not known: whether Meta models' `model` attribute carries "Instruct", and the items
of models sold under the other offer codes (AmazonBedrockService, AmazonBedrockFoundationModels), which `service_code`
can name but whose attributes are unverified.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from flows.sources import _aws, aws_pricing
from flows.sources._common import (
    DEFAULT_LIMITS,
    SourceFormatError,
    SourceLimits,
    excerpt,
    load_json,
    name_list,
    parse_json,
    require,
)
from flows.sources._concurrency import CloudSlots, in_order
from flows.sources._model_api import TABLE as _TABLE
from flows.sources._model_api import token_price_row

TABLE = _TABLE  # raw.model_api_prices, shared with azure_model_prices and vertex_model_prices
SPLIT_BY = "regions"  # the live options list whose items are fetched independently: a fan-out task each
CLOUD = "aws"  # whose fetch_concurrency slots its regions hold
SERVICE_CODE = "AmazonBedrock"
ON_DEMAND_FEATURE = "On-demand Inference"
INFERENCE_TYPES = {"Input tokens": "input", "Output tokens": "output"}
TOKEN_UNITS = {"1K tokens": 1_000.0, "1M tokens": 1_000_000.0}
LIVE_OPTIONS = {"regions", "endpoint_region", "service_code", "models"}
WHAT = "bedrock_pricing live options"  # how its live options' errors begin


def price_rows(page: Any, where: str) -> Iterator[dict]:
    """One row per price dimension of every term of every product on one get_products page."""
    price_list = require(page, "PriceList", where, list)
    for i, item in enumerate(price_list):
        item_where = f"{where}: PriceList[{i}]"
        if isinstance(item, str):  # the real API returns each product as a JSON string
            item = parse_json(item, item_where)
        product = require(item, "product", item_where, dict)
        attrs = require(product, "attributes", f"{item_where}.product", dict)
        inference_type = attrs.get("inferenceType")
        if inference_type is not None and not isinstance(inference_type, str):  # looked up in INFERENCE_TYPES
            raise SourceFormatError(f"{item_where}.product.attributes.inferenceType: expected str, got "
                                    f"{type(inference_type).__name__} {excerpt(inference_type)}")
        terms = require(item, "terms", item_where, dict)
        for term_type in terms:
            for term_code, term in require(terms, term_type, f"{item_where}.terms", dict).items():
                term_where = f"{item_where}.terms.{term_type}.{term_code}"
                for rate_code, dim in require(term, "priceDimensions", term_where, dict).items():
                    dim_where = f"{term_where}.{rate_code}"
                    # as aws_pricing reads it: a price in another currency (CNY) keeps its currency and figure and
                    # an empty pricePerUnit is (None, None); the suite quarantines either (currency_usd,
                    # currency_present) and the page's other prices land
                    currency, price_text = aws_pricing._price(require(dim, "pricePerUnit", dim_where, dict))
                    yield token_price_row(
                        units=TOKEN_UNITS, unit=dim.get("unit"), price_text=price_text,
                        source_ref=item_where, cloud="aws", region=attrs.get("regionCode"),
                        api_model=attrs.get("model"), direction=INFERENCE_TYPES.get(inference_type),
                        inference_type=inference_type, sku=product.get("sku"), rate_code=rate_code,
                        offer_detail=attrs.get("usagetype"), product=attrs.get("provider"),
                        feature=attrs.get("feature"), term_type=term_type, currency_code=currency,
                        effective_at=term.get("effectiveDate"))


def rows_from_pages(pages: Iterable[tuple[str, Any]]) -> list[dict]:
    """Rows from (where, page) pairs; `where` names the file or request each page came from."""
    return [row for where, page in pages for row in price_rows(page, where)]


def read_file(path: Path, label: str, region: str | None = None, *,
              limits: SourceLimits = DEFAULT_LIMITS) -> list[dict]:
    """One snapshot page on disk, read exactly as a live `get_products` response."""
    return rows_from_pages([(label, load_json(path, label, limits))])


# ---------------------------------------------------------------- live fetch (boto3's standard credential chain)
def check_live_options(options: dict) -> None:
    """SourceFormatError for a `live:` block this source cannot use (also run by `hweval check`)."""
    _aws.check_options(options, LIVE_OPTIONS, {"regions"}, "bedrock_pricing")
    name_list(options, "regions", WHAT, required=True)
    name_list(options, "models", WHAT, hint=" (leave it out for every model)")
    endpoint = options.get("endpoint_region", "us-east-1")
    if endpoint not in aws_pricing.PRICE_LIST_ENDPOINTS:
        raise SourceFormatError(f"bedrock_pricing: live option endpoint_region {endpoint!r}: the Price List API is "
                                f"served from {', '.join(aws_pricing.PRICE_LIST_ENDPOINTS)}")
    code = options.get("service_code", SERVICE_CODE)
    if not isinstance(code, str) or not code.strip():
        raise SourceFormatError(f"bedrock_pricing: live option service_code: expected a Price List service code "
                                f"such as {SERVICE_CODE!r}, got {excerpt(code)}")


def region_pages(client, region: str, *, service_code: str = SERVICE_CODE, models: list[str] | None = None,
                 sleep=time.sleep, limits: SourceLimits = DEFAULT_LIMITS) -> Iterator[tuple[str, dict]]:
    """`get_products` pages of on-demand input and output token prices in one region (optionally of some models)."""
    for model in models or [None]:
        for inference_type in INFERENCE_TYPES:
            filters = [{"Type": "TERM_MATCH", "Field": "regionCode", "Value": region},
                       {"Type": "TERM_MATCH", "Field": "feature", "Value": ON_DEMAND_FEATURE},
                       {"Type": "TERM_MATCH", "Field": "inferenceType", "Value": inference_type}]
            if model:
                filters.append({"Type": "TERM_MATCH", "Field": "model", "Value": model})
            what = f"pricing.get_products {service_code} {region} {inference_type!r}" + (f" {model!r}" if model else "")
            for n, page in enumerate(_aws.pages(client, "get_products", what, sleep=sleep, limits=limits,
                                                ServiceCode=service_code, Filters=filters), start=1):
                yield f"{what} page {n}", page


def fetch_live(options: dict, *, limits: SourceLimits = DEFAULT_LIMITS, session=None, sleep=time.sleep,
               slots: CloudSlots | None = None) -> list[dict]:
    """Rows for the regions in `options` from the Price List API (credentials from boto3's standard chain).

    Options: `regions` (required), `endpoint_region` (default us-east-1), `service_code` (default AmazonBedrock),
    `models` (the `model` attribute's display names; default every model).
    """
    check_live_options(options)
    client = _aws.client("pricing", options.get("endpoint_region", "us-east-1"), session)
    code, models = options.get("service_code", SERVICE_CODE), name_list(options, "models", WHAT)

    def region_rows(region: str) -> list[dict]:
        return rows_from_pages(region_pages(client, region, service_code=code, models=models, sleep=sleep,
                                            limits=limits))

    return [row for rows in in_order(region_rows, name_list(options, "regions", WHAT, required=True), slots)
            for row in rows]
