-- Grain: one row per inference workload x offer x precision class where a measurement met the workload's scenario or
-- SLO but not its request shape, replica rules or latency objective (int_serving_results_matched.unused_reason):
-- the closest in shape. The fallback estimate's label, or its exclusion, says why it is not measured.
with matched as (
    select * from intermediate.int_serving_results_matched
    where unused_reason is not null
),

final as (
    select workload_id, offer_id, precision_class, unused_reason
    from matched
    qualify row_number() over (
        partition by workload_id, offer_id, precision_class order by shape_gap nulls last, benchmark_ref
    ) = 1
)

select * from final
