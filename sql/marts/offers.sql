-- marts.offers — grain: one row per run x offer (cloud x region x instance type x pricing term).
-- The whole-instance hourly price (reserved terms amortised), the accelerators it carries, and the price per
-- accelerator-hour. On-demand, spot, reserved, private and owned terms side by side.
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
        term_months,
        accelerator_id,
        accelerator_count,
        recurring_usd_per_hour,
        upfront_usd,
        usd_per_hour,
        usd_per_chip_hour,
        price_note,
        price_source_id,
        price_as_of,
        price_ref,
        hardware_basis,
        hardware_note,
        price_unverified
    from offers
)

select * from final
