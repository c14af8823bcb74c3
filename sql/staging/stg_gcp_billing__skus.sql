-- Grain: one row per GCP SKU x service region x tier landed this run. `sku_prefix` is the description without
-- " running in <place>" and without the "Spot Preemptible " marker: what instances.yaml price components match.
-- `start_usage_amount` > 0 marks a volume tier; offers are priced at the first tier (0). Commitment SKUs
-- ("Commitment v1: ...") are reserved terms; their description prefix is matched without the commitment marker.
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
        regexp_replace(
            regexp_replace(description, ' running in .*$', ''),
            '^(Spot Preemptible |Preemptible |Commitment v1: |Commitment: )', ''
        ) as sku_prefix,
        resource_group,
        case
            when usage_type = 'OnDemand' then 'on_demand'
            when usage_type = 'Preemptible' then 'spot'
            when usage_type like 'Commit%' then 'reserved'  -- committed use discounts: an hourly rate for the term
            else lower(usage_type)  -- e.g. dws (Dynamic Workload Scheduler): kept, never mixed into on-demand
        end as pricing_term,
        case usage_type
            when 'Commit1Yr' then '1yr commitment'
            when 'Commit3Yr' then '3yr commitment'
        end as term_detail,
        case usage_type when 'Commit1Yr' then 12 when 'Commit3Yr' then 36 end as term_months,
        region,
        usage_unit,
        start_usage_amount,
        price_usd
    from source
)

select * from final
