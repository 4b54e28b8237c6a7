-- KYC documents' bytes, on PostgreSQL: several hosts behind a load balancer share the database, not
-- a data folder, so a document uploaded to one host is read from any other. Written in the same
-- transaction as its kyc_documents row (a row never exists without its bytes); the row's sha256 is
-- the bytes' SHA-256. On PGlite (one host) the data folder keeps the bytes and this table is empty.
-- `kosh documents migrate` moves files stored before this table into it.
CREATE TABLE kyc_document_contents (
  storage_name text PRIMARY KEY REFERENCES kyc_documents (storage_name),
  content bytea NOT NULL CHECK (octet_length(content) > 0),
  created_at timestamptz NOT NULL DEFAULT now()
);
