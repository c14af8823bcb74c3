-- Grain: one row per source of this run: the run whose landed rows the models read. A source that landed
-- reads its own rows; a stale source (it could not be read) reads the rows of its last good run.
with loads as (
    select * from ops.source_loads where run_id = getvariable('run_id')
),

final as (
    select source_id, used_run_id as run_id, status, stale_since
    from loads
    where used_run_id is not null
)

select * from final
