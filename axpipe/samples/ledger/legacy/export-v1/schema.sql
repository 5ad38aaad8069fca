-- Legacy ledger, export v1 (2019). Amounts are integer cents; rates are decimal strings.
CREATE TABLE invoices (
    id            INTEGER PRIMARY KEY,
    customer      TEXT NOT NULL,
    net_cents     INTEGER NOT NULL,
    tax_rate      TEXT NOT NULL,        -- e.g. '0.23'
    total_cents   INTEGER NOT NULL      -- net + tax, rounded half up to the cent
);
CREATE TABLE payments (
    id            INTEGER PRIMARY KEY,
    invoice_id    INTEGER NOT NULL REFERENCES invoices (id),
    amount_cents  INTEGER NOT NULL,     -- in the payment's currency
    currency      TEXT NOT NULL,        -- EUR, USD, GBP
    eur_cents     INTEGER NOT NULL      -- converted with the export's fixed rates, rounded half even
);
CREATE TABLE credit_notes (
    id            INTEGER PRIMARY KEY,
    invoice_id    INTEGER NOT NULL REFERENCES invoices (id),
    amount_cents  INTEGER NOT NULL,
    signed_cents  INTEGER NOT NULL      -- sign convention owned by finance (undocumented)
);
