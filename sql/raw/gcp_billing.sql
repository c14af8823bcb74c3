-- raw.gcp_billing: one row per Billing Catalog SKU x service region x tiered rate, as landed.
create table if not exists raw.gcp_billing (
    run_id varchar not null,
    as_of date not null,
    source_id varchar not null,
    data_as_of date not null,
    row_no integer not null,
    source_ref varchar not null,
    sku_id varchar,
    description varchar,
    resource_family varchar,
    resource_group varchar,           -- GPU | CPU | RAM | TPU ...
    usage_type varchar,               -- OnDemand | Preemptible | Commit1Yr ...
    region varchar,
    usage_unit varchar,
    start_usage_amount double,
    currency_code varchar,
    units varchar,
    nanos bigint,
    price_usd double,                 -- units + nanos / 1e9
    effective_time varchar
);
