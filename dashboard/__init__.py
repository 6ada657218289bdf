"""The review dashboard (HTMX): workspaces, the inbox and decisions, the memory browser."""
