-- Grain: one row per inference workload x offer x precision class (16-bit results count as bf16). Basis
-- `measured`: of the points int_serving_results_matched matched and marked as candidates (MLPerf Inference results
-- of the workload's task and scenario, the levels of the user's own runs that meet its SLO, each within the
-- workload's shape tolerance and replica limit), the one closest in request shape (in steps of 5%), then with the
-- most output tokens per instance-hour, with an own run's measured success rate. A result whose declared precision the
-- staging cross-check doubts says so in its label and `precision_doubtful` (an own run: false).
with matched as (
    select * from intermediate.int_serving_results_matched
    where is_candidate
),

final as (
    select
        * exclude (is_candidate, is_scenario_or_slo_met, is_own_run, run_kind, is_offline, load_point, tokens_per_s_per_user,
                   tokens_per_s_per_user_basis, tpot_p99_ms, ttft_p99_ms, meets_slo, measured_input_tokens,
                   measured_output_tokens, shape_gap, shape_matches, replica_fits, unused_reason),
        'measured' as basis,
        null::integer as batch
    from matched
    qualify row_number() over (
        partition by workload_id, offer_id, precision_class
        -- the closest request shape first, in steps of 5% (one setup's concurrency levels differ a little in their
        -- measured mean lengths: among them the fastest wins), then the most tokens per instance-hour
        order by floor(shape_gap / 0.05), replicas_per_instance * replica_tokens_per_s / instances_per_replica desc,
            benchmark_ref
    ) = 1
)

select * from final
