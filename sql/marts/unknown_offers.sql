-- marts.unknown_offers — grain: one row per run x cloud x region x instance type (or GCP SKU) x pricing term
-- that a price source lists and whose hardware is not known, with the reason: add the accelerator (or its api_names)
-- to accelerators.yaml, or the instance to instances.yaml, to rank them.
with unknown as (
    select * from intermediate.int_offers_unknown
),

final as (
    select
        getvariable('run_id') as run_id,
        cast(getvariable('as_of') as date) as as_of,
        cloud,
        region,
        instance_type,
        pricing_term,
        usd_per_hour,
        unit,
        accelerators_listed,
        unknown_reason,
        price_source_id,
        price_as_of,
        price_ref
    from unknown
)

select * from final
