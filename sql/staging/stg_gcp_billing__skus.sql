-- Grain: one row per GCP SKU x service region x tier landed this run. `sku_prefix` is the description without
-- " running in <place>" and without the "Spot Preemptible " marker: what instances.yaml price components match.
-- `start_usage_amount` > 0 marks a volume tier; offers are priced at the first tier (0).
with source as (
    -- this run's rows, or a stale source's last good ones
    select * from raw.gcp_billing
    semi join staging.stg_ops__source_runs_used using (source_id, run_id)
),

final as (
    select
        source_id,
        data_as_of,
        row_no,
        source_ref,
        sku_id,
        description,
        regexp_replace(regexp_replace(description, ' running in .*$', ''), '^Spot Preemptible ', '') as sku_prefix,
        resource_group,
        case usage_type
            when 'OnDemand' then 'on_demand'
            when 'Preemptible' then 'spot'
            else lower(usage_type)
        end as pricing_term,
        region,
        usage_unit,
        start_usage_amount,
        price_usd
    from source
)

select * from final
