-- Grain: one row per offer = cloud x region x instance type x pricing term, priced this run, for instances in
-- the catalog. AWS and Azure price an instance per hour; GCP composes it from SKUs (GPUs or TPU chips, vCPUs,
-- RAM) and an offer exists only where every component has a price in that region.
with aws as (
    select * from staging.stg_aws_pricing__prices
),

azure as (
    select * from staging.stg_azure_retail__prices
),

gcp as (
    select * from staging.stg_gcp_billing__skus
),

instances as (
    select * from catalog.instances
),

components as (
    select * from catalog.instance_price_components
),

aws_offers as (
    select
        cloud, region, instance_type, pricing_term,
        price_usd as usd_per_hour,
        source_id as price_source_id,
        data_as_of as price_as_of,
        source_ref as price_ref
    from aws
    where is_plain_linux and unit = 'Hrs' and pricing_term = 'on_demand'
),

azure_offers as (
    select
        cloud, region, instance_type, pricing_term,
        price_usd as usd_per_hour,
        source_id as price_source_id,
        data_as_of as price_as_of,
        source_ref as price_ref
    from azure
    where operating_system = 'Linux' and unit_of_measure = '1 Hour' and pricing_term in ('on_demand', 'spot')
),

component_counts as (
    select cloud, instance_type, count(*) as components_required
    from components
    group by all
),

gcp_component_prices as (
    select
        components.cloud,
        components.instance_type,
        gcp.region,
        gcp.pricing_term,
        components.quantity * gcp.price_usd as component_usd_per_hour,
        gcp.source_id,
        gcp.data_as_of,
        gcp.source_ref
    from components
    inner join gcp on gcp.sku_prefix = components.sku_description_prefix
    where components.cloud = 'gcp'
        and gcp.pricing_term in ('on_demand', 'spot')
        and gcp.start_usage_amount = 0  -- the list price; later tiers are volume discounts
),

gcp_offers as (
    select
        prices.cloud, prices.region, prices.instance_type, prices.pricing_term,
        sum(prices.component_usd_per_hour) as usd_per_hour,
        min(prices.source_id) as price_source_id,
        min(prices.data_as_of) as price_as_of,
        string_agg(prices.source_ref, '; ' order by prices.source_ref) as price_ref
    from gcp_component_prices as prices
    inner join component_counts using (cloud, instance_type)
    group by prices.cloud, prices.region, prices.instance_type, prices.pricing_term, component_counts.components_required
    having count(*) = component_counts.components_required
),

priced as (
    select * from aws_offers
    union all by name
    select * from azure_offers
    union all by name
    select * from gcp_offers
),

final as (
    select
        priced.cloud || ':' || priced.region || ':' || priced.instance_type || ':' || priced.pricing_term as offer_id,
        priced.cloud,
        priced.region,
        priced.instance_type,
        priced.pricing_term,
        instances.accelerator_id,
        instances.accelerator_count,
        priced.usd_per_hour,
        usd_per_chip_hour(priced.usd_per_hour, instances.accelerator_count) as usd_per_chip_hour,
        priced.price_source_id,
        priced.price_as_of,
        priced.price_ref
    from priced
    inner join instances
        on instances.cloud = priced.cloud and instances.instance_type = priced.instance_type
)

select * from final
