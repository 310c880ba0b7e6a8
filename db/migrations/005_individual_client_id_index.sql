-- The fee checks name an individual by its clientID (`clientId` in the body); the ownership policy
-- looks its owner up by it (gateway/ownership/owners.ts, loadClientOwner).
CREATE INDEX individual_onboardings_client_id_idx ON individual_onboardings (client_id) WHERE provisioning = 'complete';
