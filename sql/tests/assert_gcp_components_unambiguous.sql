-- Fails when one GCP price component matches more than one SKU in a region and term (and commitment length):
-- the offer's sum
-- would double-count.
select components.instance_type, components.sku_description_prefix, skus.region, skus.pricing_term,
    skus.term_detail, count(*) as skus
from catalog.instance_price_components as components
inner join staging.stg_gcp_billing__skus as skus on skus.sku_prefix = components.sku_description_prefix
where skus.start_usage_amount = 0
group by all
having count(*) > 1
