-- The cost formulas (../shared DESIGN "Cost model"), as DuckDB macros so marts and analysts call the same functions.
-- Units are in the names: usd, hours, minutes, seconds, tokens, chips.

-- An instance's hourly price shared by its accelerators.
create or replace macro usd_per_chip_hour(usd_per_hour, chips_per_instance) as
    usd_per_hour / chips_per_instance;

-- Whole instances needed to hold `chips` accelerators at `chips_per_instance` each.
create or replace macro instances_needed(chips, chips_per_instance) as
    cast(ceil(chips / chips_per_instance) as integer);

-- Cost of one completed training run measured at `minutes` on `instances` instances.
create or replace macro completed_run_usd(minutes, instances, usd_per_hour) as
    minutes / 60.0 * instances * usd_per_hour;

-- A serving replica of `replica_chips` chips: instances it spans (1 when it fits in one instance).
create or replace macro replica_instances(replica_chips, chips_per_instance) as
    case when replica_chips <= chips_per_instance then 1
         else instances_needed(replica_chips, chips_per_instance) end;

-- Replicas of `replica_chips` chips that one instance holds (1 when a replica spans instances).
create or replace macro replicas_per_instance(replica_chips, chips_per_instance) as
    case when replica_chips <= chips_per_instance
         then cast(floor(chips_per_instance / replica_chips) as integer)
         else 1 end;

-- USD per million tokens for a deployment that costs `usd_per_hour` and produces `tokens_per_s`.
create or replace macro usd_per_million_tokens(usd_per_hour, tokens_per_s) as
    usd_per_hour / (tokens_per_s * 3600.0) * 1e6;

-- Reserved terms amortise their upfront fee over the term (1yr = 8760 h, 3yr = 26280 h).
create or replace macro effective_usd_per_hour(hourly_usd, upfront_usd, term_hours) as
    hourly_usd + coalesce(upfront_usd, 0) / term_hours;
