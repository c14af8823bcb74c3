-- Grain: one row per cloud x region x instance type (or GCP accelerator SKU) x pricing term that a price source
-- lists but whose hardware is not known (int_instance_hardware: no instance-type API lists it and instances.yaml
-- does not declare it, or its accelerator is not in accelerators.yaml), with the reason. They are landed, not dropped, and the reports list them so
-- the catalog can be extended. AWS rows are accelerated instances already (the fetch asks for GPU and ML ASIC
-- families); Azure rows count when they are N-series (GPU) sizes; GCP SKUs when they are GPUs or TPUs.
with aws as (
    select * from staging.stg_aws_pricing__prices
    where is_plain_linux and unit = 'Hrs' and pricing_term = 'on_demand'
),

aws_spot as (
    select * from staging.stg_aws_spot__prices where is_plain_linux
),

azure as (
    select * from staging.stg_azure_retail__prices
    where operating_system = 'Linux' and pricing_term in ('on_demand', 'spot') and instance_type like 'Standard_N%'
),

gcp as (
    select * from staging.stg_gcp_billing__skus
    where pricing_term in ('on_demand', 'spot') and start_usage_amount = 0
        and (resource_group = 'GPU' or description ilike '%tpu%')
),

sheet as (
    -- a quote that gives its own hardware is an offer (int_offers_priced), not an unknown one
    select * from staging.stg_price_sheet__entries
    where entry_kind = 'quote' and (accelerator_id is null or accelerator_count is null)
),

instances as (
    select * from intermediate.int_instance_hardware
    where unknown_reason is null
),

components as (
    select * from catalog.instance_price_components
),

listed as (
    select cloud, region, instance_type, pricing_term, price_usd as usd_per_hour, 'USD per instance-hour' as unit,
           'gpu attribute: ' || coalesce(gpu, 'not given') as accelerators_listed,
           source_id, data_as_of, source_ref
    from aws
    union all
    select cloud, region, instance_type, pricing_term, min(price_usd), 'USD per instance-hour',
           null, min(source_id), min(data_as_of), arg_min(source_ref, price_usd)
    from aws_spot
    group by cloud, region, instance_type, pricing_term
    union all
    select cloud, region, instance_type, pricing_term, price_usd, 'USD per instance-hour', null,
           source_id, data_as_of, source_ref
    from azure
    union all
    select 'gcp', region, sku_prefix, pricing_term, price_usd, 'USD per ' || usage_unit, null,
           source_id, data_as_of, source_ref
    from gcp
    where not exists (select 1 from components where components.sku_description_prefix = gcp.sku_prefix)
    union all
    select cloud, region, instance_type, pricing_term, usd_per_hour, 'USD per instance-hour',
           'accelerator_count: ' || coalesce(accelerator_count::varchar, 'not given'),
           source_id, data_as_of, source_ref
    from sheet
),

final as (
    select
        listed.cloud,
        listed.region,
        listed.instance_type,
        listed.pricing_term,
        listed.usd_per_hour,
        listed.unit,
        coalesce(listed.accelerators_listed, hardware.listed_hardware) as accelerators_listed,
        case
            when listed.cloud = 'gcp' and listed.unit <> 'USD per instance-hour'
                then 'a GCP SKU that no instances.yaml entry composes into an instance price'
            else coalesce(hardware.unknown_reason,
                          'no instance-type source lists it and instances.yaml does not declare it')
        end as unknown_reason,
        listed.source_id as price_source_id,
        listed.data_as_of as price_as_of,
        listed.source_ref as price_ref
    from listed
    left join intermediate.int_instance_hardware as hardware
        on hardware.cloud = listed.cloud and hardware.instance_type = listed.instance_type
    where listed.cloud = 'gcp'
        or not exists (
            select 1 from instances
            where instances.cloud = listed.cloud and instances.instance_type = listed.instance_type
        )
)

select * from final
