"""Verify, don't trust: every claim of the agent is checked against the checks and git, and every case where
its word and reality differ is recorded as a discrepancy with a `kind`."""
