-- Grain: one row per training workload x offer x chip count that can run it: measured candidates (MLPerf task
-- workloads), and for offers no measurement covers, the eligible scaled / estimated candidates of workloads
-- that declare a token count. Measured beats scaled beats estimated on the same offer.
with measured as (
    select * from intermediate.int_training_measured
),

estimates as (
    select * from intermediate.int_training_estimates_computed
    where exclusion_reason is null
),

final as (
    select * exclude (chips_per_node) from measured
    union all by name
    select * exclude (exclusion_reason, scaling, state_chips)
    from estimates
    anti join measured using (workload_id, offer_id)
)

select * from final
