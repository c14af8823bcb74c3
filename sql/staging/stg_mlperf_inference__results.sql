-- Grain: one row per MLPerf Inference result landed this run, with the catalog accelerator id (through the
-- declared aliases), total accelerators (`a#` is per node), the task without its accuracy suffix and the target.
-- `precision_doubtful` cross-checks the declared weight precision against this run's other results: the same chip
-- on the same task and scenario in another round (the same submitter's first, then any: systems of one chip vendor
-- share its software) at fewer bytes per value and a near-equal per-chip throughput, or a 16-bit declaration faster
-- than any lower-precision result of the chip; `precision_note` names the evidence.
with source as (
    -- this run's rows, or a stale source's last good ones
    select * from raw.mlperf_inference
    semi join staging.stg_ops__source_runs_used using (source_id, run_id)
),

aliases as (
    select * from catalog.accelerator_aliases
),

tolerance as (
    -- PRECISION_THROUGHPUT_TOLERANCE = 1.15: per-chip throughputs within 15% either way count as the same run
    select 1.15::double as ratio
),

results as (
    select
        source.source_id,
        source.data_as_of,
        source.row_no,
        source.source_ref,
        source.result_id,
        source.version,
        source.submitter,
        source.system,
        source.division,
        source.suite,
        source.availability,
        source.model,
        -- later rounds publish interactive results as model `<task>-interactive-99` under scenario Server
        regexp_replace(regexp_replace(source.model, '-99(\.9)?$', ''), '-interactive$', '') as task,
        case
            when source.model like '%-99.9' then 99.9::double
            else 99.0::double  -- `-99`, or a benchmark with a single target (llama3.1-8b: 99% of the reference)
        end as accuracy_target_pct,
        source.scenario,
        case when source.model like '%-interactive-%' then 'Interactive' else source.scenario end
            as scenario_normalised,
        aliases.accelerator_id,
        source.accelerator as accelerator_raw,
        source.accelerators_per_node,
        source.nodes,
        source.accelerators_per_node * source.nodes as accelerators_total,
        -- rows landed before the parser named the precision: weight_data_types, lower case, as they were read then
        coalesce(source.precision, lower(source.weight_data_types)) as precision,
        source.performance_result,
        source.performance_units,
        source.has_power,
        source.power_result,
        source.power_units
    from source
    inner join aliases on aliases.alias_key = source.accelerator_key
),

comparable as (
    -- the per-chip throughput and bytes per value each cross-check compares
    select
        source_id,
        row_no,
        version,
        submitter,
        accelerator_id,
        task,
        scenario_normalised,
        precision,
        performance_units,
        bytes_per_value(precision) as bytes_per_value,
        performance_result / nullif(accelerators_total, 0) as throughput_per_chip
    from results
),

lower_precision_alike as (
    -- the chip in another round, at fewer bytes per value and within the tolerance: the same submitter's first,
    -- then the closest
    select
        declared.source_id,
        declared.row_no,
        'declared ' || declared.precision || ', but ' || evidence.submitter || '''s ' || evidence.version || ' '
            || evidence.precision || ' result on ' || declared.accelerator_id || ' runs at '
            || format('{:,.1f}', evidence.throughput_per_chip) || ' ' || lower(declared.performance_units)
            || ' per chip, within ' || format('{:.0f}', (tolerance.ratio - 1) * 100) || '% of this row''s '
            || format('{:,.1f}', declared.throughput_per_chip) || ': likely ' || evidence.precision as note
    from comparable as declared
    cross join tolerance
    inner join comparable as evidence
        on evidence.accelerator_id = declared.accelerator_id
        and evidence.task = declared.task
        and evidence.scenario_normalised = declared.scenario_normalised
        and evidence.performance_units = declared.performance_units
        and evidence.version <> declared.version
        and evidence.bytes_per_value < declared.bytes_per_value
        and evidence.throughput_per_chip / declared.throughput_per_chip between 1 / tolerance.ratio and tolerance.ratio
    qualify row_number() over (
        partition by declared.source_id, declared.row_no
        order by evidence.submitter = declared.submitter desc,
            abs(ln(evidence.throughput_per_chip / declared.throughput_per_chip)), evidence.version desc,
            evidence.source_id, evidence.row_no
    ) = 1
),

faster_than_lower_precision as (
    -- a 16-bit declaration faster, beyond the tolerance, than the chip's best lower-precision result (any submitter)
    select
        declared.source_id,
        declared.row_no,
        'declared ' || declared.precision || ', but this row''s ' || format('{:,.1f}', declared.throughput_per_chip)
            || ' ' || lower(declared.performance_units) || ' per chip is more than '
            || format('{:.0f}', (tolerance.ratio - 1) * 100) || '% above ' || evidence.submitter || '''s '
            || evidence.version || ' ' || evidence.precision || ' result on ' || declared.accelerator_id
            || ' (' || format('{:,.1f}', evidence.throughput_per_chip)
            || '), the best at a lower precision: likely ' || evidence.precision || ' or lower' as note
    from comparable as declared
    cross join tolerance
    inner join comparable as evidence
        on evidence.accelerator_id = declared.accelerator_id
        and evidence.task = declared.task
        and evidence.scenario_normalised = declared.scenario_normalised
        and evidence.performance_units = declared.performance_units
        and evidence.bytes_per_value < declared.bytes_per_value
    where declared.bytes_per_value = 2
    qualify row_number() over (
        partition by declared.source_id, declared.row_no
        order by evidence.throughput_per_chip desc, evidence.version desc, evidence.source_id, evidence.row_no
    ) = 1
        and declared.throughput_per_chip > evidence.throughput_per_chip * tolerance.ratio
),

final as (
    select
        results.*,
        -- the two checks cannot both hold: a row within the tolerance of one lower-precision result cannot exceed
        -- the chip's best lower-precision result by more than it
        coalesce(lower_precision_alike.note, faster_than_lower_precision.note) is not null
            as precision_doubtful,
        coalesce(lower_precision_alike.note, faster_than_lower_precision.note) as precision_note
    from results
    left join lower_precision_alike using (source_id, row_no)
    left join faster_than_lower_precision using (source_id, row_no)
)

select * from final
