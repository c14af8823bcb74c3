-- raw.price_sheet: one row per entry of the user's price sheet (quotes, discounts, on-prem systems), as landed.
create table if not exists raw.price_sheet (
    run_id varchar not null,
    as_of date not null,
    source_id varchar not null,
    data_as_of date not null,
    row_no integer not null,
    source_ref varchar not null,      -- file and entry (or line)
    entry_kind varchar,               -- quote | discount | on_prem
    cloud varchar,                    -- aws | azure | gcp | on_prem
    region varchar,                   -- for on_prem: the site
    instance_type varchar,            -- for on_prem: the system's name; for a discount: a type or *
    pricing_term varchar,             -- quote: private (the default, and the only term a quote takes); on_prem: owned
    applies_to varchar,               -- discount: the public pricing term it takes a share off
    accelerator varchar,              -- on_prem, or a quote for an unlisted instance type: accelerator id or alias
    accelerator_key varchar,          -- accelerator as aliases are matched (case and spaces folded)
    quoted_source varchar,            -- who quoted it / which invoice
    note varchar,
    usd_per_hour double,
    upfront_usd double,
    term_months double,
    accelerator_count double,
    percent_off double,
    capex_usd double,
    life_months double,
    power_kw double,
    usd_per_kwh double,
    pue double,
    opex_usd_per_month double
);
