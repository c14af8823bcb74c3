-- Grain: one row per AWS price dimension landed this run. Classifies each row's pricing term and whether it
-- is a plain Linux price (a Capacity Block, Windows, licence-included or dedicated row never poses as one).
with source as (
    -- this run's rows, or a stale source's last good ones
    select * from raw.aws_pricing
    semi join staging.stg_ops__source_runs_used using (source_id, run_id)
),

final as (
    select
        source_id,
        data_as_of,
        row_no,
        source_ref,
        'aws' as cloud,
        region_code as region,
        instance_type,
        case
            when term_type = 'OnDemand' and market_option = 'OnDemand' then 'on_demand'
            when term_type = 'OnDemand' and market_option = 'CapacityBlock' then 'capacity_block'
            when term_type = 'Reserved' then 'reserved'
            else 'other'
        end as pricing_term,
        coalesce(
            operating_system = 'Linux'
            and license_model = 'No License required'
            and pre_installed_sw = 'NA'
            and tenancy = 'Shared'
            and capacity_status = 'Used',
            false
        ) as is_plain_linux,
        operating_system,
        gpu,
        unit,
        price_usd,
        lease_contract_length,
        purchase_option,
        offering_class,
        case when term_type = 'Reserved' then
            concat_ws(' ', lease_contract_length, purchase_option, offering_class)
        end as term_detail,
        try_cast(nullif(regexp_extract(lease_contract_length, '^(\d+)\s*yr', 1), '') as integer) * 12 as term_months,
        offer_term_code,
        sku
    from source
)

select * from final
