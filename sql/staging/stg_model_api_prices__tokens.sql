-- Grain: one row per cloud x region x API model x direction (input | output): the on-demand price per million
-- tokens of a hosted model API, and the catalog model it serves (null when models.yaml api_names does not name it).
-- Where one model has several meters for a direction in a region (a global and a data-zone deployment), the
-- cheapest is kept and named. Only on-demand prices come in to be ranked: azure_model_prices lands no volume tier
-- (tierMinimumUnits above 0) and vertex_model_prices a SKU's first tier only, so a cheaper price from a volume of
-- usage on is never taken for the on-demand one (the sources' logs count the tiers not landed).
with source as (
    -- this run's rows, or a stale source's last good ones
    select * from raw.model_api_prices
    semi join staging.stg_ops__source_runs_used using (source_id, run_id)
),

api_names as (
    select * from catalog.model_api_names
),

on_demand as (
    select *
    from source
    where direction in ('input', 'output')
        and usd_per_million_tokens > 0
        -- Bedrock's on-demand feature, an Azure Consumption meter, a Vertex on-demand SKU (null: not said)
        and coalesce(feature, 'On-demand Inference') in ('On-demand Inference', 'Consumption', 'OnDemand')
        and coalesce(term_type, 'OnDemand') = 'OnDemand'
),

final as (
    select
        on_demand.source_id,
        on_demand.data_as_of,
        on_demand.row_no,
        on_demand.source_ref,
        on_demand.cloud,
        on_demand.region,
        on_demand.api_model,
        api_names.model_id,
        on_demand.direction,
        on_demand.usd_per_million_tokens,
        on_demand.unit,
        on_demand.price_usd,
        on_demand.sku,
        on_demand.offer_detail
    from on_demand
    left join api_names on api_names.api_name_key = lower(trim(on_demand.api_model))
    qualify row_number() over (
        partition by on_demand.cloud, on_demand.region, on_demand.api_model, on_demand.direction
        order by on_demand.usd_per_million_tokens, on_demand.source_ref
    ) = 1
)

select * from final
