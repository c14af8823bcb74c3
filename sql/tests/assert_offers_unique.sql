-- Fails when an offer (cloud x region x instance type x term) has more than one price this run:
-- a duplicate in a source, or two plain-Linux rows the staging rules could not tell apart.
select offer_id, count(*) as prices
from intermediate.int_offers_priced
group by offer_id
having count(*) > 1
