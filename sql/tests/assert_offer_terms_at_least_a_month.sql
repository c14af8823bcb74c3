-- Fails when an offer's term lasts less than a month: its upfront fee would be amortised over 0 hours (an inf price)
-- or fewer than a month's. The suites quarantine such terms at the door (AWS `lease_contract_length_known`, Azure
-- `reservation_term_known`, the price sheet's `term_months_positive`); a row here means a source's term escaped them.
select offer_id, term_months, price_ref
from intermediate.int_offers_priced
where term_months < 1
