-- Fails when a candidate's cost or price is not a positive finite number: a zero price slipped past validation, or a
-- figure divided into inf or NaN (which compare neither <= 0 nor as null) would be ranked and published as "inf".
select candidate_id, outcome_metric, outcome_value, usd_per_chip_hour
from marts.rankings
where as_of = cast(getvariable('as_of') as date)
    and (outcome_value is null or outcome_value <= 0 or not isfinite(outcome_value)
         or usd_per_chip_hour is null or usd_per_chip_hour <= 0 or not isfinite(usd_per_chip_hour))
