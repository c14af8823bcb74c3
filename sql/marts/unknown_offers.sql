-- marts.unknown_offers — grain: one row per run x cloud x region x instance type (or GCP SKU) x pricing term
-- that a price source lists and catalogs/instances.yaml does not know: add them to the catalog to rank them.
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
        price_source_id,
        price_as_of,
        price_ref
    from unknown
)

select * from final
