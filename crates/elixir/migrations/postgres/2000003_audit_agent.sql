-- One agent's recent calls (Account → Agents → the agent's page).
CREATE INDEX audit_agent ON audit (agent_id, created_at);
