-- Grain: one row per source read by this run or by the run it is compared with: its status in each.
with runs as (
    select * from intermediate.int_runs_compared
),

now as (
    select source_id, status, error, stale_since
    from ops.source_loads
    where run_id = getvariable('run_id')
),

before as (
    select loads.source_id, loads.status
    from ops.source_loads as loads
    inner join runs on loads.run_id = runs.previous_run_id
),

final as (
    select
        coalesce(now.source_id, before.source_id) as source_id,
        now.status as status,
        before.status as previous_status,
        now.error,
        now.stale_since
    from now
    full outer join before using (source_id)
)

select * from final
