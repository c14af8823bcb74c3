-- raw.model_api_prices: one row per token price of a hosted model API (bedrock_pricing, azure_model_prices,
-- vertex_model_prices), as landed: the price as listed, and per million tokens where its unit is a token unit.
create table if not exists raw.model_api_prices (
    run_id varchar not null,
    as_of date not null,
    source_id varchar not null,
    data_as_of date not null,
    row_no integer not null,
    source_ref varchar not null,      -- file and item (PriceList entry, Items entry, SKU) the row came from
    cloud varchar,                    -- aws | azure | gcp
    region varchar,                   -- regionCode | armRegionName | service region
    api_model varchar,                -- the API's name for the model (Price List `model`, meter or SKU model part)
    direction varchar,                -- input | output
    inference_type varchar,           -- Bedrock inferenceType as listed
    sku varchar,
    rate_code varchar,                -- Bedrock rate code; Azure meterId|type|tier; Vertex tier
    offer_detail varchar,             -- Bedrock usagetype; Azure meterName; Vertex SKU description
    product varchar,                  -- Bedrock provider; Azure productName; Vertex resourceGroup
    feature varchar,                  -- Bedrock feature; Azure type; Vertex usageType
    term_type varchar,                -- Bedrock term type (OnDemand)
    currency_code varchar,
    effective_at varchar,
    unit varchar,                     -- as listed: 1K tokens | 1M tokens | 1K | 1M | count ...
    tokens_per_unit double,           -- null when the unit is not a token unit
    unit_problem varchar,             -- why the unit cannot be priced per token (the row is quarantined)
    price_text varchar,
    price_usd double,                 -- per unit, as listed
    usd_per_million_tokens double     -- price_usd x 1e6 / tokens_per_unit
);
