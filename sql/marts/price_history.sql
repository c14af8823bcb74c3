-- marts.price_history — grain: one row per run x offer (cloud x region x instance type x pricing term): the price
-- the run used, with its source and that source's own as-of date. A slim history of the offers mart, for trends.
with offers as (
    select * from intermediate.int_offers_priced
),

final as (
    select
        getvariable('run_id') as run_id,
        cast(getvariable('as_of') as date) as as_of,
        offer_id,
        cloud,
        region,
        instance_type,
        pricing_term,
        term_detail,
        accelerator_id,
        accelerator_count,
        usd_per_hour,
        usd_per_chip_hour,
        price_source_id,
        price_as_of,
        price_ref
    from offers
)

select * from final
