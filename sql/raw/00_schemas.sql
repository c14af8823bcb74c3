-- Schemas of the warehouse (the analysts' contract is in README.md, "Warehouse").
create schema if not exists raw;
create schema if not exists catalog;
create schema if not exists staging;
create schema if not exists intermediate;
create schema if not exists marts;
create schema if not exists ops;
