-- Grain: one row per entry of the user's price sheet landed this run: quotes, discounts and on-prem systems.
-- An on-prem system's hourly cost is worked out here: capex over its life, power at the declared rate and PUE,
-- and operating cost (730 hours a month). An accelerator is named by its catalog id or one of its aliases.
with source as (
    -- this run's rows, or a stale source's last good ones
    select * from raw.price_sheet
    semi join staging.stg_ops__source_runs_used using (source_id, run_id)
),

accelerators as (
    select * from catalog.accelerators
),

aliases as (
    select * from catalog.accelerator_aliases
),

final as (
    select
        source_id,
        data_as_of,
        row_no,
        source_ref,
        entry_kind,
        cloud,
        region,
        instance_type,
        pricing_term,
        applies_to,
        coalesce(accelerators.accelerator_id, aliases.accelerator_id, source.accelerator) as accelerator_id,
        cast(accelerator_count as integer) as accelerator_count,
        quoted_source,
        note,
        usd_per_hour,
        upfront_usd,
        cast(term_months as integer) as term_months,
        percent_off,
        power_kw,
        usd_per_kwh,
        pue,
        case when entry_kind = 'on_prem' then
            on_prem_usd_per_hour(capex_usd, life_months, power_kw, pue, usd_per_kwh, opex_usd_per_month)
        end as on_prem_usd_per_hour
    from source
    left join accelerators on accelerators.accelerator_id = source.accelerator_key
    left join aliases on aliases.alias_key = source.accelerator_key
)

select * from final
