-- Grain: one row per phase (serving, training) x accelerator family x band kind. How far an outcome cost built on
-- an estimate has been from the measured one: the smallest and the largest cost ratio of the back-test
-- (int_estimate_backtest: what the outcome really cost per dollar the estimate said). Kind `calibrated` (for
-- calibrated and scaled rows): the leave-one-out calibrated predictions that had other measurements to fit on;
-- kind `uncalibrated` (for estimated rows): the uncalibrated estimates. A family with fewer than
-- BAND_MIN_COMPARISONS = 2 comparisons of a kind borrows the spread of every family of the phase (scope `phase`);
-- a phase with none has no band.
with backtest as (
    -- a doubtful declared precision makes a comparison of another setup than the estimate's: left out
    select * from intermediate.int_estimate_backtest where not precision_doubtful
),

ratios as (
    select phase, family, 'calibrated' as band_kind, loo_cost_ratio as cost_ratio
    from backtest
    where loo_measurements > 0
    union all
    select phase, family, 'uncalibrated' as band_kind, cost_ratio
    from backtest
),

by_family as (
    select phase, family, band_kind, min(cost_ratio) as low_ratio, max(cost_ratio) as high_ratio,
        count(*) as comparisons
    from ratios
    group by phase, family, band_kind
),

by_phase as (
    select phase, band_kind, min(cost_ratio) as low_ratio, max(cost_ratio) as high_ratio, count(*) as comparisons
    from ratios
    group by phase, band_kind
),

grid as (
    select phases.phase, defaults.family, kinds.band_kind
    from (values ('serving'), ('training')) as phases (phase)
    cross join catalog.family_defaults as defaults
    cross join (values ('calibrated'), ('uncalibrated')) as kinds (band_kind)
),

final as (
    select
        grid.phase,
        grid.family,
        grid.band_kind,
        case when by_family.comparisons >= 2 then by_family.low_ratio else by_phase.low_ratio end as low_ratio,
        case when by_family.comparisons >= 2 then by_family.high_ratio else by_phase.high_ratio end as high_ratio,
        case when by_family.comparisons >= 2 then by_family.comparisons else by_phase.comparisons end as comparisons,
        case when by_family.comparisons >= 2 then 'family' else 'phase' end as scope
    from grid
    left join by_family using (phase, family, band_kind)
    left join by_phase using (phase, band_kind)
    where coalesce(by_family.comparisons, 0) >= 2 or by_phase.comparisons >= 2
)

select * from final
