-- Grain: one row per region x availability zone x instance type x product description: the latest spot price
-- landed this run, with its timestamp. Only Linux/UNIX prices are plain Linux; other descriptions stay visible.
with source as (
    -- this run's rows, or a stale source's last good ones
    select * from raw.aws_spot
    semi join staging.stg_ops__source_runs_used using (source_id, run_id)
),

latest as (
    select
        *,
        row_number() over (
            partition by source_id, region, availability_zone, instance_type, product_description
            order by price_timestamp desc, row_no
        ) as recency
    from source
),

final as (
    select
        source_id,
        data_as_of,
        row_no,
        source_ref,
        'aws' as cloud,
        region,
        availability_zone,
        instance_type,
        'spot' as pricing_term,
        product_description in ('Linux/UNIX', 'Linux/UNIX (Amazon VPC)') as is_plain_linux,
        price_usd,
        price_timestamp
    from latest
    where recency = 1
)

select * from final
