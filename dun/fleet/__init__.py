"""Several loops at once: git worktrees for them, what they share per agent account, and `dun fleet status`."""
