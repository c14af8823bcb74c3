-- raw.aws_spot: one row per ec2.describe_spot_price_history price point, as landed.
create table if not exists raw.aws_spot (
    run_id varchar not null,
    as_of date not null,              -- the run's as-of date
    source_id varchar not null,       -- sources.yaml id
    data_as_of date not null,         -- the file's or response's own as-of date
    row_no integer not null,          -- position among this source's rows in this run
    source_ref varchar not null,      -- file or request and SpotPriceHistory item the row came from
    region varchar,
    availability_zone varchar,
    availability_zone_id varchar,
    instance_type varchar,
    product_description varchar,      -- Linux/UNIX | Windows | SUSE Linux | Red Hat Enterprise Linux ...
    price_text varchar,               -- SpotPrice as published (a string)
    price_usd double,                 -- USD per instance-hour
    price_timestamp varchar           -- when this price took effect (ISO 8601, UTC)
);
