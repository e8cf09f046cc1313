"""Agent adapters, one module per CLI; each module is an ordinary dun plugin (hook `dun_agents`)."""
