-- Merchant onboarding through the api-portal: business catalogue, merchant profiles, bank
-- accounts, KYC documents and UPI VPAs. A merchant is a row of `accounts` (kind 'merchant');
-- `accounts.status` is its onboarding status. Every row here carries the merchant's account id,
-- the owning partner and the mode the partner onboarded it in.

CREATE TABLE business_categories (
  code text PRIMARY KEY CHECK (code ~ '^[a-z][a-z0-9_]{1,49}$'),
  name text NOT NULL,
  position integer NOT NULL
);

CREATE TABLE business_subcategories (
  category_code text NOT NULL REFERENCES business_categories (code),
  code text NOT NULL CHECK (code ~ '^[a-z][a-z0-9_]{1,49}$'),
  name text NOT NULL,
  position integer NOT NULL,
  PRIMARY KEY (category_code, code)
);

INSERT INTO business_categories (code, name, position) VALUES
  ('ecommerce', 'E-commerce', 1),
  ('education', 'Education', 2),
  ('food', 'Food and beverage', 3),
  ('healthcare', 'Healthcare', 4),
  ('services', 'Services', 5),
  ('it_and_software', 'IT and software', 6),
  ('financial_services', 'Financial services', 7),
  ('travel', 'Travel and hospitality', 8),
  ('utilities', 'Utilities', 9),
  ('others', 'Others', 10);

INSERT INTO business_subcategories (category_code, code, name, position) VALUES
  ('ecommerce', 'fashion_and_lifestyle', 'Fashion and lifestyle', 1),
  ('ecommerce', 'electronics', 'Electronics', 2),
  ('ecommerce', 'grocery', 'Grocery', 3),
  ('ecommerce', 'home_and_furniture', 'Home and furniture', 4),
  ('ecommerce', 'books_and_stationery', 'Books and stationery', 5),
  ('ecommerce', 'marketplace', 'Marketplace', 6),
  ('education', 'schools', 'Schools', 1),
  ('education', 'colleges', 'Colleges and universities', 2),
  ('education', 'coaching', 'Coaching and tuition', 3),
  ('education', 'online_courses', 'Online courses', 4),
  ('food', 'restaurants', 'Restaurants', 1),
  ('food', 'cloud_kitchens', 'Cloud kitchens', 2),
  ('food', 'caterers', 'Caterers', 3),
  ('food', 'food_delivery', 'Food delivery', 4),
  ('healthcare', 'hospitals', 'Hospitals', 1),
  ('healthcare', 'clinics', 'Clinics', 2),
  ('healthcare', 'pharmacy', 'Pharmacy', 3),
  ('healthcare', 'diagnostics', 'Diagnostics and labs', 4),
  ('services', 'consulting', 'Consulting', 1),
  ('services', 'repair_and_maintenance', 'Repair and maintenance', 2),
  ('services', 'salons_and_spas', 'Salons and spas', 3),
  ('services', 'event_management', 'Event management', 4),
  ('services', 'logistics', 'Logistics and courier', 5),
  ('it_and_software', 'saas', 'SaaS', 1),
  ('it_and_software', 'web_development', 'Web development', 2),
  ('it_and_software', 'app_development', 'App development', 3),
  ('it_and_software', 'hosting', 'Hosting and cloud', 4),
  ('financial_services', 'insurance', 'Insurance', 1),
  ('financial_services', 'mutual_funds', 'Mutual funds', 2),
  ('financial_services', 'lending', 'Lending', 3),
  ('financial_services', 'accounting', 'Accounting and tax', 4),
  ('travel', 'travel_agency', 'Travel agency', 1),
  ('travel', 'hotels', 'Hotels and stays', 2),
  ('travel', 'airlines', 'Airlines', 3),
  ('travel', 'transport', 'Buses, cabs and transport', 4),
  ('utilities', 'electricity', 'Electricity', 1),
  ('utilities', 'gas', 'Gas', 2),
  ('utilities', 'water', 'Water', 3),
  ('utilities', 'telecom', 'Telecom and broadband', 4),
  ('utilities', 'dth', 'DTH and cable', 5),
  ('others', 'housing_society', 'Housing society', 1),
  ('others', 'religious', 'Religious organisation', 2),
  ('others', 'charity', 'Charity and donations', 3),
  ('others', 'other', 'Other', 4);

CREATE TABLE merchant_profiles (
  account_id text PRIMARY KEY REFERENCES accounts (id),
  partner_id text NOT NULL REFERENCES accounts (id),
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  legal_name text NOT NULL,
  email text NOT NULL,
  contact text NOT NULL,
  business_type text NOT NULL,
  business_category text NOT NULL,
  business_subcategory text NOT NULL,
  website text,
  address jsonb NOT NULL,
  pan text NOT NULL,
  gstin text,
  -- What the reviewer asked for when moving the merchant to needs_clarification.
  review_note text,
  activated_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (business_category, business_subcategory)
    REFERENCES business_subcategories (category_code, code)
);
-- The partner's merchant list, newest first (merchant ids sort by creation time).
CREATE INDEX merchant_profiles_partner_idx ON merchant_profiles (partner_id, mode, account_id DESC);

-- One settlement bank account per merchant. The only place a full account number is kept.
CREATE TABLE merchant_bank_accounts (
  account_id text PRIMARY KEY REFERENCES merchant_profiles (account_id),
  partner_id text NOT NULL REFERENCES accounts (id),
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  account_number text NOT NULL CHECK (account_number ~ '^[0-9]{9,18}$'),
  ifsc text NOT NULL,
  bank_name text NOT NULL,
  beneficiary_name text NOT NULL,
  account_type text NOT NULL CHECK (account_type IN ('savings', 'current')),
  status text NOT NULL CHECK (status IN ('pending', 'verified', 'failed')),
  failure_reason text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE kyc_documents (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES merchant_profiles (account_id),
  partner_id text NOT NULL REFERENCES accounts (id),
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  document_type text NOT NULL,
  status text NOT NULL CHECK (status IN ('uploaded', 'verified', 'rejected')),
  file_name text,
  mime_type text NOT NULL CHECK (mime_type IN ('application/pdf', 'image/png', 'image/jpeg')),
  size_bytes integer NOT NULL CHECK (size_bytes > 0),
  sha256 text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  storage_name text NOT NULL UNIQUE CHECK (storage_name ~ '^[0-9a-f]{32}$'),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX kyc_documents_account_idx ON kyc_documents (account_id, mode, id DESC);

CREATE TABLE merchant_vpas (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES merchant_profiles (account_id),
  partner_id text NOT NULL REFERENCES accounts (id),
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  address text NOT NULL,
  descriptor text NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'active', 'suspended')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
-- A VPA is globally unique (across merchants, partners and modes): the database decides races.
CREATE UNIQUE INDEX merchant_vpas_address_key ON merchant_vpas (address);
CREATE INDEX merchant_vpas_account_idx ON merchant_vpas (account_id, mode, id DESC);
