-- Fails when a candidate's cost or price is not a positive number: a zero price slipped past validation.
select candidate_id, outcome_metric, outcome_value, usd_per_chip_hour
from marts.rankings
where as_of = cast(getvariable('as_of') as date)
    and (outcome_value is null or outcome_value <= 0 or usd_per_chip_hour is null or usd_per_chip_hour <= 0)
