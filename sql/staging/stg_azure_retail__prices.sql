-- Grain: one row per Azure Retail Prices item landed this run. Linux and Windows share a meter and differ only
-- in productName; Spot and Low Priority are Consumption rows marked in skuName / meterName.
with source as (
    -- this run's rows, or a stale source's last good ones
    select * from raw.azure_retail
    semi join staging.stg_ops__source_runs_used using (source_id, run_id)
),

final as (
    select
        source_id,
        data_as_of,
        row_no,
        source_ref,
        'azure' as cloud,
        arm_region_name as region,
        arm_sku_name as instance_type,
        case
            when price_type = 'Reservation' then 'reserved'
            when price_type = 'DevTestConsumption' then 'dev_test'
            when coalesce(sku_name, meter_name) like '% Spot' or meter_name like '% Spot' then 'spot'
            when coalesce(sku_name, meter_name) like '% Low Priority' or meter_name like '% Low Priority' then 'low_priority'
            when price_type = 'Consumption' then 'on_demand'
            else 'other'
        end as pricing_term,
        case when product_name like '% Windows' then 'Windows' else 'Linux' end as operating_system,
        unit_of_measure,
        coalesce(retail_price, unit_price) as price_usd,  -- for a Reservation: the total for the whole term
        reservation_term,
        case when price_type = 'Reservation' then reservation_term end as term_detail,
        case reservation_term when '1 Year' then 12 when '3 Years' then 36 when '5 Years' then 60 end as term_months
    from source
)

select * from final
