-- Grain: one row per training workload x offer x chip count that can run it: the measured candidates of MLPerf
-- task workloads and the eligible scaled / estimated candidates of model + tokens workloads.
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
    select * exclude (exclusion_reason, scaling) from estimates
)

select * from final
