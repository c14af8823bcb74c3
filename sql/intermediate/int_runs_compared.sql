-- Grain: one row: this run and the run it is compared with, the latest committed run with an earlier as-of date
-- (a backfill compares with the run before its own date; the first run has none), with both catalog digests and
-- both models digests (transform.models_digest; an older run recorded none).
with runs as (
    select * from ops.runs
),

this_run as (
    select
        getvariable('run_id') as run_id,
        cast(getvariable('as_of') as date) as as_of,
        getvariable('catalog_digest') as catalog_digest,  -- pipeline.catalog_digest: accelerators, instances, ...
        getvariable('models_digest') as models_digest  -- transform.models_digest: the SQL it builds with
),

previous as (
    select runs.run_id, runs.as_of, runs.catalog_digest, runs.models_digest
    from runs
    where runs.as_of < cast(getvariable('as_of') as date)
    order by runs.as_of desc, runs.finished_at desc
    limit 1
),

final as (
    select
        this_run.run_id,
        this_run.as_of,
        this_run.catalog_digest,
        previous.run_id as previous_run_id,
        previous.as_of as previous_as_of,
        previous.catalog_digest as previous_catalog_digest,
        this_run.models_digest,
        previous.models_digest as previous_models_digest,
        settings.price_move_threshold
    from this_run
    left join previous on true
    cross join catalog.settings as settings
)

select * from final
