-- marts.excluded_candidates — grain: one row per run x workload x offer x precision (or chip count) that cannot
-- run the workload, with the reason: below the accuracy floor, a precision the chip lacks, a model that does not
-- fit, an SLO it cannot meet, a deadline it cannot make.
with excluded as (
    select * from intermediate.int_candidates_excluded
),

final as (
    select
        getvariable('run_id') as run_id,
        cast(getvariable('as_of') as date) as as_of,
        workload_id,
        offer_id,
        cloud,
        region,
        instance_type,
        pricing_term,
        accelerator_id,
        accelerator_count,
        precision,
        chips,
        exclusion_reason
    from excluded
)

select * from final
